package builtin

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent"
)

// benchLines is the size of the benchmark document.
const benchLines = 10_000

// benchDoc returns a Go-like source of benchLines lines, made of functions like
//
//	func handler7(ctx context.Context, req *Request) (*Response, error) {
//		acc := 0
//		value, err := compute(ctx, req.Field7, 49)
//		...
func benchDoc() string {
	var b strings.Builder
	b.WriteString("package bench\n\n")
	lines := 2
	for i := 0; lines < benchLines; i++ {
		fmt.Fprintf(&b, "// handler%d serves requests of kind %d.\n", i, i%13)
		fmt.Fprintf(&b, "func handler%d(ctx context.Context, req *Request) (*Response, error) {\n", i)
		b.WriteString("\tacc := 0\n")
		fmt.Fprintf(&b, "\tvalue, err := compute(ctx, req.Field%d, %d)\n", i%13, i*7)
		b.WriteString("\tif err != nil {\n")
		fmt.Fprintf(&b, "\t\treturn nil, fmt.Errorf(\"handler%d: %%w\", err)\n", i)
		b.WriteString("\t}\n")
		fmt.Fprintf(&b, "\tacc += value * %d\n", i*7+3)
		b.WriteString("\tresp.Name = req.Name\n")
		b.WriteString("\tresp.Code = req.Code\n")
		fmt.Fprintf(&b, "\tlog.Print(\"handler%d done\", acc)\n", i)
		b.WriteString("\treturn &Response{Total: acc}, nil\n")
		b.WriteString("}\n\n")
		lines += 14
	}
	return b.String()
}

// editAt returns the request after the user replaced old, found after the marker in doc, by nw.
func editAt(tb testing.TB, doc, marker, old, nw string) nesagent.Request {
	tb.Helper()
	m := strings.Index(doc, marker)
	if m < 0 {
		tb.Fatalf("no %q", marker)
	}
	i := strings.Index(doc[m:], old)
	if i < 0 {
		tb.Fatalf("no %q after %q", old, marker)
	}
	start := m + i
	text := doc[:start] + nw + doc[start+len(old):]
	e := nesagent.Edit{Start: start, Old: old, New: nw}
	e.OldLines, e.NewLines, e.LineStart = kitLines(text, e)
	return nesagent.Request{Text: text, Cursor: start + len(nw), Recent: []nesagent.Edit{e}}
}

type benchCase struct {
	name string
	req  nesagent.Request
	want int // suggestions
}

func benchCases(tb testing.TB) []benchCase {
	doc := benchDoc()
	const mid = "func handler357("
	deep := strings.Repeat("f(", 1000) + strings.Repeat(")", 1000)
	nested := strings.Repeat(deep+"\n", 30) + "f(x)\n" + strings.Repeat(deep+"\n", 30)
	return []benchCase{
		// acc is renamed in the middle function; it occurs in every function: the 20 nearest.
		{"rename/common", editAt(tb, doc, mid, "acc", "sum"), 20},
		// handler357 is renamed; it occurs twice more, in strings, so the whole document is searched.
		{"rename/rare", editAt(tb, doc, mid, "handler357", "handleOrder"), 3},
		// An argument is added to compute(…): the calls within 30 lines.
		{"repeat/argument", editAt(tb, doc, mid, ", 2499)", ", 2499, opts)"), 4},
		// log.Print → log.Printf.
		{"repeat/prefix", editAt(tb, doc, mid, "Print(", "Printf("), 4},
		// resp.Name = req.Name → resp.Name = strings.TrimSpace(req.Name): its copies, and the
		// analogous resp.Code lines.
		{"repeat/analogy", editAt(tb, doc, mid, "req.Name", "strings.TrimSpace(req.Name)"), 9},
		// A number changed: nothing is suggested, after looking at the 60 lines around.
		{"none", editAt(tb, doc, mid, "* 2502", "* 25020"), 0},
		// An argument added among 60 lines of 4,000 bytes of nested calls: the matching budget
		// keeps it cheap; the nearest line still gets its suggestion, the budget is spent before
		// the others.
		{"repeat/pathological", editAt(tb, nested, "f(x)", "f(x)", "f(x, y)"), 1},
	}
}

func TestBenchCases(t *testing.T) {
	if n := strings.Count(benchDoc(), "\n"); n < benchLines {
		t.Fatalf("benchmark document of %d lines", n)
	}
	for _, bc := range benchCases(t) {
		sugs, err := New().Suggest(context.Background(), bc.req)
		if err != nil {
			t.Fatal(err)
		}
		checkInvariants(t, bc.req, sugs)
		if len(sugs) != bc.want {
			t.Errorf("%s: %d suggestions, want %d", bc.name, len(sugs), bc.want)
			for _, s := range sugs {
				d := changedLines(t, bc.req.Text, s)
				t.Logf("  %s", d[:min(len(d), 120)])
			}
		}
	}
}

// BenchmarkSuggest measures one request per heuristic on a 10,000-line document.
func BenchmarkSuggest(b *testing.B) {
	eng := New()
	ctx := context.Background()
	for _, bc := range benchCases(b) {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.req.Text)))
			for b.Loop() {
				if _, err := eng.Suggest(ctx, bc.req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkBaseline is the unavoidable minimum to compare BenchmarkSuggest with: one
// strings.Index pass over the same document (for text it does not hold).
func BenchmarkBaseline(b *testing.B) {
	doc := benchDoc()
	b.ReportAllocs()
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		if strings.Index(doc, "handleOrder") >= 0 {
			b.Fatal("found")
		}
	}
}
