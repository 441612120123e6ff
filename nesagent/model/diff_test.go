package model

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent"
)

func TestRegionEditsExamples(t *testing.T) {
	cases := []struct {
		name, old, new string
		want           []nesagent.TextEdit
	}{
		{"identical", "a\nb\n", "a\nb\n", nil},
		{"typed at the end of a word", "x := getUser(id)\n", "x := getUsers(id)\n", []nesagent.TextEdit{{Start: 12, End: 12, NewText: "s"}}},
		{"a digit", "n := 1\n", "n := 10\n", []nesagent.TextEdit{{Start: 6, End: 6, NewText: "0"}}},
		{"a word replaced keeps the word", "x := fooBar\n", "x := fooBaz\n", []nesagent.TextEdit{{Start: 5, End: 11, NewText: "fooBaz"}}},
		{"two words apart", "foo(a, b)\n", "bar(a, c)\n", []nesagent.TextEdit{{Start: 0, End: 3, NewText: "bar"}, {Start: 7, End: 8, NewText: "c"}}},
		{"a phrase rewritten is one edit", "\treturn a + b\n", "\tif x != nil { panic(x) }\n", []nesagent.TextEdit{{Start: 1, End: 13, NewText: "if x != nil { panic(x) }"}}},
		{"lines far apart", "a := 1\nq\nq\nq\nb := 2\n", "a := 10\nq\nq\nq\nb := 20\n", []nesagent.TextEdit{{Start: 6, End: 6, NewText: "0"}, {Start: 19, End: 19, NewText: "0"}}},
		{"a line inserted", "a\nb\n", "a\nnew\nb\n", []nesagent.TextEdit{{Start: 2, End: 2, NewText: "new\n"}}},
		{"a line deleted", "a\nold\nb\n", "a\nb\n", []nesagent.TextEdit{{Start: 2, End: 6, NewText: ""}}},
		{"line break kinds are equal", "a\r\nb\n", "a\nb\nc\n", []nesagent.TextEdit{{Start: 5, End: 5, NewText: "c\n"}}},
		{"a character of a CJK word", "s := \"日本\"\n", "s := \"日本語\"\n", []nesagent.TextEdit{{Start: 12, End: 12, NewText: "語"}}},
		{"a line break added at the end", "a", "a\n", []nesagent.TextEdit{{Start: 1, End: 1, NewText: "\n"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := regionEdits(c.old, c.new, 0)
			if !equalEdits(got, c.want) {
				t.Errorf("edits %+v, want %+v", got, c.want)
			}
		})
	}
	// The offset of the region in the document is added.
	if got := regionEdits("a b", "a c", 100); !equalEdits(got, []nesagent.TextEdit{{Start: 102, End: 103, NewText: "c"}}) {
		t.Errorf("edits %+v", got)
	}
}

// TestRegionEditsApply checks on random rewrites that the edits are in order, apart, on character
// boundaries, and turn the old text into the new one.
func TestRegionEditsApply(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"a", "b", "x", "_", "1", " ", "\t", "(", ")", ",", ".", "\n", "\n", "é", "日", "𐐀", "☕", "foo", "bar", "return "}
	random := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		return b.String()
	}
	mutate := func(s string) string {
		runes := []rune(s)
		for range 1 + r.IntN(4) {
			i := r.IntN(len(runes) + 1)
			switch r.IntN(3) {
			case 0:
				runes = append(runes[:i], append([]rune(random(1+r.IntN(4))), runes[i:]...)...)
			case 1:
				if i < len(runes) {
					runes = append(runes[:i], runes[min(i+1+r.IntN(4), len(runes)):]...)
				}
			default:
				if i < len(runes) {
					runes[i] = []rune(pieces[r.IntN(len(pieces))])[0]
				}
			}
		}
		return string(runes)
	}
	for n := range 3000 {
		old := random(r.IntN(40))
		var new string
		if n%5 == 0 {
			new = random(r.IntN(40))
		} else {
			new = mutate(old)
		}
		edits := regionEdits(old, new, 0)
		if (old == new) != (len(edits) == 0) {
			t.Fatalf("%q → %q: edits %+v", old, new, edits)
		}
		at := 0
		var b strings.Builder
		for _, e := range edits {
			if e.Start < at || (at > 0 && e.Start == at) || e.End < e.Start || e.End > len(old) ||
				!utf8.ValidString(old[:e.Start]) || !utf8.ValidString(old[e.Start:e.End]) || (e.Start == e.End && e.NewText == "") {
				t.Fatalf("%q → %q: bad edits %+v", old, new, edits)
			}
			b.WriteString(old[at:e.Start] + e.NewText)
			at = e.End
		}
		if got := b.String() + old[at:]; got != new {
			t.Fatalf("%q → %q: edits %+v give %q", old, new, edits, got)
		}
	}
}

func TestExtractRegion(t *testing.T) {
	cases := []struct {
		name, answer, want string
		ok                 bool
	}{
		{"plain", markStart + "\nx\n" + markEnd, "x\n", true},
		{"crlf after the marker", markStart + "\r\nx\r\n" + markEnd, "x\r\n", true},
		{"same line", markStart + "x" + markEnd, "x", true},
		{"chatter around", "Here:\n" + markStart + "\nx\n" + markEnd + "\nDone.", "x\n", true},
		{"marker named in prose, then the answer", "Between " + markStart + " and " + markEnd + ":\n" + markStart + "\ny\n" + markEnd, "y\n", true},
		{"answer, then prose naming the markers", markStart + "\ny\n" + markEnd + " — I kept " + markStart + " and " + markEnd + ".", "y\n", true},
		{"a repeated start marker", markStart + "\n" + markStart + "\nz\n" + markEnd, "z\n", true},
		{"thinking", "<think>" + markStart + "\nno\n" + markEnd + "</think>" + markStart + "\nyes\n" + markEnd, "yes\n", true},
		{"unclosed thinking", markStart + "\nyes\n" + markEnd + "<think>" + markStart + "\nno\n" + markEnd, "yes\n", true},
		{"no end", markStart + "\nx\n", "", false},
		{"no start", "x\n" + markEnd, "", false},
		{"nothing", "I cannot help with that.", "", false},
	}
	for _, c := range cases {
		got, ok := extractRegion(c.answer)
		if got != c.want || ok != c.ok {
			t.Errorf("%s: %q %v, want %q %v", c.name, got, ok, c.want, c.ok)
		}
	}
	// A region that is itself Markdown keeps its fences.
	rw := rewrite{region: "```go\nx\n```\n", fenced: true}
	if got, ok := rw.parse(marked("```go\ny\n```\n")); !ok || got != "```go\ny\n```\n" {
		t.Errorf("fenced region: %q %v", got, ok)
	}
}
