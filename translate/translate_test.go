package translate

import (
	"encoding/json"
	"strings"
	"testing"

	acp "github.com/coder/acp-go-sdk"
	"go.lsp.dev/protocol"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/document"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
)

func rng(l1, c1, l2, c2 int) encoding.Range {
	return encoding.Range{Start: encoding.Position{Line: l1, Character: c1}, End: encoding.Position{Line: l2, Character: c2}}
}

func TestChangesToACP(t *testing.T) {
	base := encoding.NewMapper("a𐐀b\r\n日本\n")
	// utf-16 editor changes: replace 𐐀 (1:3 in utf-16) with x, then insert at 1:2 of the result.
	r1, r2 := rng(0, 1, 0, 3), rng(1, 2, 1, 2)
	final, applied, err := document.Apply(base, []document.Change{{Range: &r1, Text: "x"}, {Range: &r2, Text: "語"}}, encoding.UTF16)
	if err != nil {
		t.Fatal(err)
	}
	if final.Text() != "axb\r\n日本語\n" {
		t.Fatalf("final %q", final.Text())
	}
	for _, tc := range []struct {
		agent encoding.Kind
		want  string
	}{
		{encoding.UTF8, `[{"range":{"end":{"character":5,"line":0},"start":{"character":1,"line":0}},"text":"x"},{"range":{"end":{"character":6,"line":1},"start":{"character":6,"line":1}},"text":"語"}]`},
		{encoding.UTF16, `[{"range":{"end":{"character":3,"line":0},"start":{"character":1,"line":0}},"text":"x"},{"range":{"end":{"character":2,"line":1},"start":{"character":2,"line":1}},"text":"語"}]`},
		{encoding.UTF32, `[{"range":{"end":{"character":2,"line":0},"start":{"character":1,"line":0}},"text":"x"},{"range":{"end":{"character":2,"line":1},"start":{"character":2,"line":1}},"text":"語"}]`},
	} {
		got, err := ChangesToACP(applied, final, tc.agent, false)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(got)
		if string(b) != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.agent, b, tc.want)
		}
	}
	full, _ := ChangesToACP(applied, final, encoding.UTF16, true)
	if b, _ := json.Marshal(full); string(b) != `[{"text":"axb\r\n日本語\n"}]` {
		t.Errorf("full sync: %s", b)
	}
	// A change without a range stays one.
	_, applied, _ = document.Apply(base, []document.Change{{Text: "new"}}, encoding.UTF16)
	whole, _ := ChangesToACP(applied, encoding.NewMapper("new"), encoding.UTF8, false)
	if b, _ := json.Marshal(whole); string(b) != `[{"text":"new"}]` {
		t.Errorf("whole-text change: %s", b)
	}
}

func edit(l1, c1, l2, c2 int, text string) acp.UnstableNesTextEdit {
	return acp.UnstableNesTextEdit{Range: acp.UnstableRange{
		Start: acp.UnstablePosition{Line: l1, Character: c1}, End: acp.UnstablePosition{Line: l2, Character: c2},
	}, NewText: text}
}

func TestEditsToReplacement(t *testing.T) {
	m := encoding.NewMapper("let 𐐀 = foo(a);\nnext\n")
	for _, tc := range []struct {
		name  string
		enc   encoding.Kind
		edits []acp.UnstableNesTextEdit
		want  string // the text after applying, or the error's text
		err   bool
	}{
		{"one insertion, utf-32", encoding.UTF32, []acp.UnstableNesTextEdit{edit(0, 13, 0, 13, ", ctx")}, "let 𐐀 = foo(a, ctx);\nnext\n", false},
		{"two edits merged, given out of order, utf-16", encoding.UTF16,
			[]acp.UnstableNesTextEdit{edit(0, 14, 0, 14, ", ctx"), edit(0, 4, 0, 6, "x")}, "let x = foo(a, ctx);\nnext\n", false},
		{"multi-line edit, utf-8", encoding.UTF8, []acp.UnstableNesTextEdit{edit(0, 18, 1, 4, "\nNEXT")}, "let 𐐀 = foo(a);\nNEXT\n", false},
		{"column past the end of the line is its end", encoding.UTF16, []acp.UnstableNesTextEdit{edit(1, 99, 1, 99, "!")}, "let 𐐀 = foo(a);\nnext!\n", false},
		{"overlap", encoding.UTF16, []acp.UnstableNesTextEdit{edit(0, 0, 0, 3, "a"), edit(0, 2, 0, 8, "b")}, "overlap", true},
		{"line out of range", encoding.UTF16, []acp.UnstableNesTextEdit{edit(9, 0, 9, 1, "a")}, "out of range", true},
		{"reversed", encoding.UTF16, []acp.UnstableNesTextEdit{edit(0, 5, 0, 1, "a")}, "after its end", true},
		{"no edits", encoding.UTF16, nil, "no edits", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := EditsToReplacement(m, tc.edits, tc.enc)
			if tc.err {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("err %v, want one saying %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := r.Apply(m.Text()); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestFitsInline(t *testing.T) {
	m := encoding.NewMapper("abc def\nghi\n")
	for _, tc := range []struct {
		r      Replacement
		cursor int
		want   bool
	}{
		{Replacement{4, 7, "x"}, 7, true},   // ends at the cursor
		{Replacement{4, 7, "x"}, 4, true},   // starts at the cursor
		{Replacement{0, 3, "x"}, 7, false},  // before the cursor, not containing it
		{Replacement{4, 9, "x"}, 7, false},  // ends on the next line
		{Replacement{8, 8, "x"}, 8, true},   // insertion at the cursor on line 2
		{Replacement{7, 7, "\nx"}, 7, true}, // inserted text may span lines
	} {
		if got := FitsInline(m, tc.r, tc.cursor); got != tc.want {
			t.Errorf("FitsInline(%+v, %d) = %v, want %v", tc.r, tc.cursor, got, tc.want)
		}
	}
}

func TestReplacementToInlineItem(t *testing.T) {
	m := encoding.NewMapper("x = 😀 fo\n")
	r := Replacement{Start: len("x = 😀 "), End: len("x = 😀 fo"), Text: "foo()"}
	for _, tc := range []struct {
		enc  encoding.Kind
		want string
	}{
		{encoding.UTF8, `{"insertText":"foo()","range":{"start":{"line":0,"character":9},"end":{"line":0,"character":11}},"command":{"title":"Accept next edit","command":"acp-lsp-bridge.accept","arguments":["s1"]}}`},
		{encoding.UTF16, `{"insertText":"foo()","range":{"start":{"line":0,"character":7},"end":{"line":0,"character":9}},"command":{"title":"Accept next edit","command":"acp-lsp-bridge.accept","arguments":["s1"]}}`},
		{encoding.UTF32, `{"insertText":"foo()","range":{"start":{"line":0,"character":6},"end":{"line":0,"character":8}},"command":{"title":"Accept next edit","command":"acp-lsp-bridge.accept","arguments":["s1"]}}`},
	} {
		item, err := ReplacementToInlineItem(m, r, tc.enc, "acp-lsp-bridge.accept", "s1")
		if err != nil {
			t.Fatal(err)
		}
		b, err := protocol.Marshal(item)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.enc, b, tc.want)
		}
	}
}

// TestSpansTitle: the same replacement in several places is named once, with its count; any other
// edit by its merged replacement.
func TestSpansTitle(t *testing.T) {
	m := encoding.NewMapper("a := Total(1)\nb := Total(2) // 日本\nc := Total\n")
	at := func(line, col int) int {
		off, err := m.PositionOffset(encoding.Position{Line: line, Character: col}, encoding.UTF8)
		if err != nil {
			t.Fatal(err)
		}
		return off
	}
	rename := []Span{{at(0, 5), at(0, 10), "Sum"}, {at(1, 5), at(1, 10), "Sum"}, {at(2, 5), at(2, 10), "Sum"}}
	for _, c := range []struct {
		spans []Span
		file  string
		want  string
	}{
		{rename, "", "Next edit: `Total` → `Sum` (3 places from line 1)"},
		{rename, "main.go", "Next edit: `Total` → `Sum` (3 places from main.go:1)"},
		{rename[1:2], "", "Next edit: `Total` → `Sum` (line 2)"},
		{[]Span{{at(0, 5), at(0, 10), ""}, {at(2, 5), at(2, 10), ""}}, "", "Next edit: delete `Total` (2 places from line 1)"},
		{[]Span{{at(0, 5), at(0, 10), "Sum"}, {at(1, 5), at(1, 10), "Add"}}, "", "Next edit: `Total(1)⏎b := Total` → `Sum(1)⏎b := Add` (line 1)"},
		{[]Span{{at(0, 0), at(0, 0), "x"}, {at(1, 0), at(1, 0), "x"}}, "", "Next edit: insert `x` (2 places from line 1)"},
	} {
		if got := SpansTitle(m, c.spans, c.file); got != c.want {
			t.Errorf("SpansTitle(%v, %q) = %q, want %q", c.spans, c.file, got, c.want)
		}
	}
}
