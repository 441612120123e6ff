package eval

import (
	"strings"
	"testing"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
)

func TestVersionChange(t *testing.T) {
	for _, tc := range []struct {
		old, new string
		want     Change
	}{
		{"return su\n", "return sum\n", Change{9, 9, "m"}},
		{"count++\n", "nonBlank++\n", Change{0, 5, "nonBlank"}},
		{"a\nb\n", "a\n", Change{2, 4, ""}},
		{"", "x", Change{0, 0, "x"}},
		// "é" is c3 a9, "è" c3 a8: the change takes the whole character, not its last byte.
		{"café\n", "cafè\n", Change{3, 5, "è"}},
		// A common last byte of different characters is not split either.
		{"x日y", "x本y", Change{1, 4, "本"}},
		// Repeated text: the change is as small as the common start and end allow.
		{"aaa", "aaaa", Change{3, 3, "a"}},
	} {
		got := VersionChange(tc.old, tc.new)
		if got != tc.want {
			t.Errorf("VersionChange(%q, %q) = %+v, want %+v", tc.old, tc.new, got, tc.want)
		}
		if applied := tc.old[:got.Start] + got.Text + tc.old[got.End:]; applied != tc.new {
			t.Errorf("VersionChange(%q, %q) applies to %q", tc.old, tc.new, applied)
		}
	}
}

func TestChangeToACP(t *testing.T) {
	old, new := "x := \"𐐀\" + fo\n", "x := \"𐐀\" + foo\n"
	// The change is after "𐐀": 4 bytes in utf-8, 2 units in utf-16, 1 in utf-32.
	for k, ch := range map[encoding.Kind]int{encoding.UTF8: 16, encoding.UTF16: 14, encoding.UTF32: 13} {
		c, err := ChangeToACP(old, new, k, false)
		if err != nil {
			t.Fatal(err)
		}
		if c.Range == nil || c.Range.Start != (acp.UnstablePosition{Line: 0, Character: ch}) || c.Range.End != c.Range.Start || c.Text != "o" {
			t.Errorf("%v: %+v %+v", k, c.Range, c)
		}
	}
	c, err := ChangeToACP(old, new, encoding.UTF16, true)
	if err != nil || c.Range != nil || c.Text != new {
		t.Errorf("full: %+v %v", c, err)
	}
}

func TestApplyEdits(t *testing.T) {
	text := "fn a() {\n    let é = 1;\n    é\n}\n"
	at := func(line, ch int) acp.UnstablePosition { return acp.UnstablePosition{Line: line, Character: ch} }
	edit := func(l1, c1, l2, c2 int, s string) acp.UnstableNesTextEdit {
		return acp.UnstableNesTextEdit{Range: acp.UnstableRange{Start: at(l1, c1), End: at(l2, c2)}, NewText: s}
	}
	// Two edits at once, listed out of order, each range of the original text; utf-16 columns
	// ("é" is one unit).
	got, err := ApplyEdits(text, []acp.UnstableNesTextEdit{edit(2, 4, 2, 5, "x"), edit(1, 8, 1, 9, "x")}, encoding.UTF16)
	if err != nil {
		t.Fatal(err)
	}
	if want := "fn a() {\n    let x = 1;\n    x\n}\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	// utf-8 columns: "é" is two bytes.
	got, err = ApplyEdits(text, []acp.UnstableNesTextEdit{edit(1, 13, 1, 14, "2")}, encoding.UTF8)
	if err != nil || got != strings.Replace(text, "= 1", "= 2", 1) {
		t.Errorf("utf-8: %q %v", got, err)
	}
	// An insertion and a deletion of whole lines.
	got, err = ApplyEdits(text, []acp.UnstableNesTextEdit{edit(0, 0, 0, 0, "// doc\n"), edit(2, 0, 3, 0, "")}, encoding.UTF8)
	if err != nil || got != "// doc\nfn a() {\n    let é = 1;\n}\n" {
		t.Errorf("lines: %q %v", got, err)
	}
	for name, edits := range map[string][]acp.UnstableNesTextEdit{
		"overlap":      {edit(1, 4, 1, 9, "a"), edit(1, 6, 1, 12, "b")},
		"past the end": {edit(9, 0, 9, 1, "a")},
		"none":         {},
	} {
		if _, err := ApplyEdits(text, edits, encoding.UTF16); err == nil || !strings.Contains(err.Error(), "cannot be applied") {
			t.Errorf("%s: %v", name, err)
		}
	}
}
