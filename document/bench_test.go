package document_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/document"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
)

// sourceLike returns about size bytes of Go-like source, with a comment holding non-ASCII text
// every hundred lines so that utf-16 conversions cannot take the all-ASCII shortcut.
func sourceLike(size int) string {
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

// BenchmarkApplyOneCharChange measures what one keystroke costs: Store.Change with a one-character
// insertion (utf-16 positions) in the middle of a document.
func BenchmarkApplyOneCharChange(b *testing.B) {
	for _, size := range []struct {
		name  string
		bytes int
	}{
		{"100KB", 100 << 10},
		{"1MB", 1 << 20},
		{"10MB", 10 << 20},
	} {
		b.Run(size.name, func(b *testing.B) {
			const uri = "file:///bench.go"
			text := sourceLike(size.bytes)
			s := document.NewStore()
			snap, _ := s.Open(uri, "go", 0, text)
			line := snap.Mapper.LineCount() / 2
			change := []document.Change{{
				Range: &encoding.Range{
					Start: encoding.Position{Line: line, Character: 5},
					End:   encoding.Position{Line: line, Character: 5},
				},
				Text: "x",
			}}
			b.ReportAllocs()
			b.SetBytes(int64(len(text)))
			version := 0
			for b.Loop() {
				version++
				if version%4096 == 0 {
					// Keep the document near its nominal size; reopening is not measured.
					b.StopTimer()
					s.Open(uri, "go", version, text)
					b.StartTimer()
				}
				if _, _, _, err := s.Change(uri, version, change, encoding.UTF16); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
