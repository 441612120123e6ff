package editorstate

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/document"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/translate"
)

func TestIdentRuneMatchesTranslate(t *testing.T) {
	for r := rune(0); r <= 0x10FFFF; r++ {
		if r >= 0xD800 && r <= 0xDFFF {
			continue
		}
		s := string(r)
		_, _, ok := translate.IdentifierAt(s, 0)
		if ok != isIdentRune(r) {
			t.Fatalf("U+%04X: translate.IdentifierAt says %v, isIdentRune %v", r, ok, isIdentRune(r))
		}
	}
	if _, _, ok := translate.IdentifierAt("\xff", 0); ok != isIdentRune(utf8.RuneError) {
		t.Fatal("invalid UTF-8")
	}
}

func TestIsDefinition(t *testing.T) {
	for _, tc := range []struct {
		line string // the identifier is "name"
		want bool
	}{
		{"func name(x int) {", true},
		{"func (r *Recv) name(x int) {", true},
		{"func (r *Recv[K]) name() {", true},
		{"pub fn name() -> i32 {", true},
		{"def name(self):", true},
		{"class name(Base):", true},
		{"type name struct {", true},
		{"struct name {", true},
		{"interface name {", true},
		{"enum name {", true},
		{"trait name {", true},
		{"impl name for X {", true},
		{"let name = 1;", true},
		{"const name = 1", true},
		{"var name int", true},
		{"val name = 1", true},
		{"module name", true},
		{"package name", true},
		{"export function name() {", true},
		{"name := compute()", true},
		{"\tname = iota", true},
		{"name = 3", true},
		{"  name(a, b) {", true},
		{"x := name()", false},
		{"return name(x)", false},
		{"name == 3", false},
		{"name => 3", false},
		{"name(x)", false},
		{"if name {", false},
		{"let y = name", false},
		{"// func is name", false},
		{"func other() { name() }", false},
		{"x.name = 1", false},
		{"\tname string", false},
	} {
		col := strings.Index(tc.line, "name")
		if got := isDefinition(tc.line, col, "name"); got != tc.want {
			t.Errorf("isDefinition(%q) = %v, want %v", tc.line, got, tc.want)
		}
	}
}

func TestIdentifiersNear(t *testing.T) {
	text := "zero line\nalpha beta.gamma(x, y2, 42abc, _ok)\nfunc helper_日本 return\ncursor here: typingWord more\nlast1 last2\n"
	snap := &document.Snapshot{URI: uriA, Mapper: encoding.NewMapper(text)}
	cursor := strings.Index(text, "typingWord") + 3
	got := identifiersNear(snap, cursor)
	want := []string{"typingWord", "cursor", "here", "more", "helper_日本", "last1", "last2"}
	if !slices.Equal(got, want) {
		t.Fatalf("identifiers %q; want %q", got, want)
	}
	// Only within identWindow bytes of the cursor's column on a very long line, never a cut word.
	long := strings.Repeat("farword ", 1000) + "nearword " + strings.Repeat("x", 3000) + "tail"
	snap = &document.Snapshot{URI: uriA, Mapper: encoding.NewMapper(long)}
	got = identifiersNear(snap, strings.Index(long, "nearword"))
	if !slices.Equal(got, []string{"nearword", "farword"}) {
		t.Fatalf("identifiers of a long line %q", got)
	}
	huge := "x " + strings.Repeat("a", 3*identWindow) + " y"
	snap = &document.Snapshot{URI: uriA, Mapper: encoding.NewMapper(huge)}
	if got = identifiersNear(snap, len(huge)/2); len(got) != 0 {
		t.Fatalf("identifiers in a huge identifier %q", got)
	}
}

// open makes a snapshot of text.
func snapOf(uri, text string) *document.Snapshot {
	return &document.Snapshot{URI: uri, LanguageID: "go", Mapper: encoding.NewMapper(text)}
}

func never() bool { return false }

func TestRelatedSnippetsDefinitionFirst(t *testing.T) {
	self := snapOf(uriA, "package p\n\nfunc f() {\n\tx := computeTotal(items)\n}\n")
	cursor := strings.Index(self.Text(), "computeTotal")
	uses := snapOf("file:///w/uses.go", "package p\n\nfunc g() {\n\ty := computeTotal(nil)\n}\n")
	defs := snapOf("file:///w/defs.go", "package p\n\n// computeTotal adds.\nfunc computeTotal(items []int) int {\n\treturn 0\n}\n")
	unrelated := snapOf("file:///w/other.go", "package p\n")
	got := relatedSnippets(self, cursor, []*document.Snapshot{uses, unrelated, defs}, never)
	want := []acp.UnstableNesRelatedSnippet{
		{Uri: "file:///w/defs.go", Excerpts: []acp.UnstableNesExcerpt{{StartLine: 0, EndLine: 5, Text: defs.Text()[:len(defs.Text())-1]}}},
		{Uri: "file:///w/uses.go", Excerpts: []acp.UnstableNesExcerpt{{StartLine: 0, EndLine: 4, Text: "package p\n\nfunc g() {\n\ty := computeTotal(nil)\n}"}}},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("snippets\n%+v\nwant\n%+v", got, want)
	}
}

// numbered returns n lines "l<i>", with word on the lines of at.
func numbered(n int, word string, at ...int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "l%d", i)
		if slices.Contains(at, i) {
			b.WriteString(" " + word)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func TestRelatedSnippetsExcerpts(t *testing.T) {
	self := snapOf(uriA, "use(needle)\n")
	cursor := 5
	t.Run("merge and per-file limit", func(t *testing.T) {
		// Hits at 10 and 13 overlap ([7, 13] and [10, 16]); 17 touches them; 40, 60, 80 are apart.
		other := snapOf(uriB, numbered(100, "needle", 10, 13, 17, 40, 60, 80))
		got := relatedSnippets(self, cursor, []*document.Snapshot{other}, never)
		if len(got) != 1 {
			t.Fatalf("snippets %+v", got)
		}
		var ranges []string
		for _, e := range got[0].Excerpts {
			ranges = append(ranges, fmt.Sprintf("%d-%d", e.StartLine, e.EndLine))
			lines := strings.Split(e.Text, "\n")
			if len(lines) != e.EndLine-e.StartLine+1 || lines[0] != fmt.Sprintf("l%d", e.StartLine) && !strings.HasPrefix(lines[0], fmt.Sprintf("l%d ", e.StartLine)) {
				t.Errorf("excerpt %d-%d has text %q", e.StartLine, e.EndLine, e.Text)
			}
		}
		if want := []string{"7-20", "37-43", "57-63"}; !slices.Equal(ranges, want) {
			t.Fatalf("excerpts %v; want %v", ranges, want)
		}
	})
	t.Run("clamped to the document", func(t *testing.T) {
		other := snapOf(uriB, "needle\nb\nc\nd\ne\nf\nlast needle")
		got := relatedSnippets(self, cursor, []*document.Snapshot{other}, never)
		if len(got) != 1 || len(got[0].Excerpts) != 1 || got[0].Excerpts[0].StartLine != 0 || got[0].Excerpts[0].EndLine != 6 || got[0].Excerpts[0].Text != other.Text() {
			t.Fatalf("snippets %+v", got)
		}
	})
	t.Run("at most 5 files", func(t *testing.T) {
		var others []*document.Snapshot
		for i := range 8 {
			others = append(others, snapOf(fmt.Sprintf("file:///w/%d.go", i), "x needle\n"))
		}
		got := relatedSnippets(self, cursor, others, never)
		var uris []string
		for _, s := range got {
			uris = append(uris, s.Uri)
		}
		if want := []string{"file:///w/0.go", "file:///w/1.go", "file:///w/2.go", "file:///w/3.go", "file:///w/4.go"}; !slices.Equal(uris, want) {
			t.Fatalf("files %v; want %v (in recency order)", uris, want)
		}
	})
	t.Run("at most 8 KiB", func(t *testing.T) {
		var others []*document.Snapshot
		long := strings.Repeat("w", 1000)
		for i := range 5 {
			// Each hit's excerpt is 7 lines of about 1000 bytes: one fits, a second does not.
			var b strings.Builder
			for l := range 60 {
				b.WriteString(long)
				if l == 10 || l == 40 {
					b.WriteString(" needle")
				}
				b.WriteByte('\n')
			}
			others = append(others, snapOf(fmt.Sprintf("file:///w/%d.go", i), b.String()))
		}
		got := relatedSnippets(self, cursor, others, never)
		total := 0
		for _, s := range got {
			for _, e := range s.Excerpts {
				total += len(e.Text)
			}
		}
		if total > maxSnippetBytes || len(got) != 1 || len(got[0].Excerpts) != 1 {
			t.Fatalf("%d bytes in %d files", total, len(got))
		}
	})
}

func TestRelatedSnippetsThroughContext(t *testing.T) {
	h, cursor := busyHarness(t)
	ctx := h.context(Want{RelatedSnippets: true}, uriA, cursor)
	if len(ctx.RelatedSnippets) != 1 || ctx.RelatedSnippets[0].Uri != uriB || !strings.Contains(ctx.RelatedSnippets[0].Excerpts[0].Text, "func computeTotal(n int) int {") {
		t.Fatalf("snippets %+v", ctx.RelatedSnippets)
	}
}

// hugeSet returns count documents sharing one text of about size bytes where every line uses
// needle.
func hugeSet(count, size int) []*document.Snapshot {
	var b strings.Builder
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "\tv%d := needle(%d)\n", i, i)
	}
	m := encoding.NewMapper(b.String())
	out := make([]*document.Snapshot, count)
	for i := range out {
		out[i] = &document.Snapshot{URI: fmt.Sprintf("file:///w/%04d.go", i), Mapper: m}
	}
	return out
}

func TestRelatedSnippetsBudget(t *testing.T) {
	others := hugeSet(500, 1<<20)
	h := newHarness(t, Limits{SnippetBudget: 20 * time.Millisecond})
	self := h.open(uriA, "go", "x := needle(1)\n")
	start := time.Now()
	ctx := h.s.Context(Request{Want: Want{RelatedSnippets: true}, Snap: self, Cursor: 6, Open: append([]*document.Snapshot{self}, others...)})
	elapsed := time.Since(start)
	if elapsed > time.Second {
		t.Fatalf("the search took %v with a budget of 20ms", elapsed)
	}
	if ctx == nil || len(ctx.RelatedSnippets) == 0 {
		t.Fatal("nothing found within the budget")
	}
	t.Logf("searched for %v (budget 20ms) and found %d files", elapsed, len(ctx.RelatedSnippets))

	// Deterministically: the clock runs out after a few looks, and what was found is returned.
	looks := 0
	got := relatedSnippets(self, 6, others, func() bool { looks++; return looks > 3 })
	if len(got) != 1 || got[0].Uri != others[0].URI {
		t.Fatalf("partial result %+v", got)
	}
}
