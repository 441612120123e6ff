package testutil

import (
	"fmt"
	"strings"
)

// SourceLike returns about size bytes of Go-like source for benchmarks, with a comment holding
// non-ASCII text every hundred lines so that utf-16 conversions cannot take the all-ASCII shortcut.
func SourceLike(size int) string {
	var b strings.Builder
	b.Grow(size + 128)
	b.WriteString("package bench\n\nimport \"context\"\n\n")
	for i := 0; b.Len() < size; i++ {
		switch {
		case i%100 == 0:
			fmt.Fprintf(&b, "// Section %d — naïve café, 日本.\n", i)
		case i%10 == 0:
			fmt.Fprintf(&b, "func handler%d(ctx context.Context, req *Request) (*Response, error) {\n", i)
		case i%10 == 8:
			b.WriteString("\treturn &Response{}, nil\n")
		case i%10 == 9:
			b.WriteString("}\n\n")
		default:
			fmt.Fprintf(&b, "\tvalue%d, err := compute(ctx, req.Field%d, %d)\n", i, i%13, i*7)
		}
	}
	return b.String()
}
