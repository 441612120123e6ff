package editorstate

import (
	"slices"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/document"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
)

// actionsIn returns the user actions of the State with positions in encoding k.
func actionsIn(h *harness, k encoding.Kind) []acp.UnstableNesUserAction {
	ctx := h.s.Context(Request{Want: Want{UserActions: true, ActionsMax: 1 << 20}, Agent: k})
	if ctx == nil {
		return nil
	}
	return ctx.UserActions
}

func TestUserActionClassification(t *testing.T) {
	type pos struct{ line, c8, c16, c32 int }
	for _, tc := range []struct {
		name       string
		text       string
		start, end int
		insert     string
		full       string // a full change instead of the replacement
		kind       string
		at         pos
	}{
		{name: "insert ascii after é", text: "hé\n", start: 3, end: 3, insert: "x", kind: "insertChar", at: pos{0, 4, 3, 3}},
		{name: "insert astral", text: "é", start: 2, end: 2, insert: "𐐀", kind: "insertChar", at: pos{0, 6, 3, 2}},
		{name: "insert combining mark", text: "e", start: 1, end: 1, insert: "\u0301", kind: "insertChar", at: pos{0, 3, 2, 2}},
		{name: "insert newline", text: "ab", start: 1, end: 1, insert: "\n", kind: "insertChar", at: pos{1, 0, 0, 0}},
		{name: "insert crlf", text: "a\r\nb", start: 1, end: 1, insert: "\r\n", kind: "insertChar", at: pos{1, 0, 0, 0}},
		{name: "insert lf after lone cr", text: "a\rb", start: 2, end: 2, insert: "\n", kind: "insertChar", at: pos{1, 0, 0, 0}},
		{name: "insert two runes", text: "x", start: 0, end: 0, insert: "日本", kind: "insertSelection", at: pos{0, 6, 2, 2}},
		{name: "insert lines", text: "x", start: 0, end: 0, insert: "a\nbé", kind: "insertSelection", at: pos{1, 3, 2, 2}},
		{name: "insert newline and indent", text: "{}", start: 1, end: 1, insert: "\n\t", kind: "insertSelection", at: pos{1, 1, 1, 1}},
		{name: "delete é", text: "aéb", start: 1, end: 3, kind: "deleteChar", at: pos{0, 1, 1, 1}},
		{name: "delete astral", text: "日𐐀", start: 3, end: 7, kind: "deleteChar", at: pos{0, 3, 1, 1}},
		{name: "delete crlf", text: "a\r\nb", start: 1, end: 3, kind: "deleteChar", at: pos{0, 1, 1, 1}},
		{name: "delete word", text: "日 word", start: 4, end: 8, kind: "deleteSelection", at: pos{0, 4, 2, 2}},
		{name: "delete lines", text: "a\nb\nc", start: 1, end: 4, kind: "deleteSelection", at: pos{0, 1, 1, 1}},
		{name: "replace", text: "abc", start: 1, end: 2, insert: "日本", kind: "replaceSelection", at: pos{0, 7, 3, 3}},
		{name: "replace one char by one", text: "abc", start: 1, end: 2, insert: "B", kind: "replaceSelection", at: pos{0, 2, 2, 2}},
		{name: "full", text: "a\nb\nc\n", full: "a\nb\nC\n", kind: "replaceSelection", at: pos{2, 0, 0, 0}},
		{name: "full append", text: "a\n", full: "a\nb\n", kind: "replaceSelection", at: pos{1, 0, 0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Limits{})
			h.open(uriA, "go", tc.text)
			h.tick(time.Second)
			if tc.full != "" {
				h.full(uriA, tc.full)
			} else {
				h.replace(uriA, tc.start, tc.end, tc.insert)
			}
			for k, want := range map[encoding.Kind]int{encoding.UTF8: tc.at.c8, encoding.UTF16: tc.at.c16, encoding.UTF32: tc.at.c32} {
				acts := actionsIn(h, k)
				if len(acts) != 1 {
					t.Fatalf("%d actions: %+v", len(acts), acts)
				}
				a := acts[0]
				if a.Action != tc.kind || a.Uri != uriA || a.TimestampMs != ms(t0.Add(time.Second)) {
					t.Errorf("action %+v; want %s", a, tc.kind)
				}
				if a.Position.Line != tc.at.line || a.Position.Character != want {
					t.Errorf("%v position %d:%d; want %d:%d", k, a.Position.Line, a.Position.Character, tc.at.line, want)
				}
			}
		})
	}
}

func TestNoOpChangesRecordNothing(t *testing.T) {
	h := newHarness(t, Limits{})
	h.open(uriA, "go", "abc")
	h.open(uriB, "go", "")
	h.replace(uriA, 1, 1, "")
	h.replace(uriA, 0, 2, "ab")
	h.full(uriA, "abc")
	h.s.Changed(uriA, []document.Applied{{Before: nil, Text: "x"}, {Before: encoding.NewMapper("abc"), Start: 2, End: 9, Text: "x"}})
	if acts := actionsIn(h, encoding.UTF16); len(acts) != 0 {
		t.Fatalf("actions %+v", acts)
	}
	if got := h.s.Recent(0); !slices.Equal(got, refs(uriB, uriA)) {
		t.Fatalf("recent %v after no-ops in %s; want the order of opening", got, uriA)
	}
}

func TestCursorMovement(t *testing.T) {
	h := newHarness(t, Limits{})
	h.open(uriA, "go", "日本\nabc\n")
	h.open(uriB, "go", "x")
	m := func(uri string) *encoding.Mapper { return h.snap(uri).Mapper }

	h.s.Focused(uriA, m(uriA), 3, true, nil) // first cursor of the document: a movement
	h.s.Focused(uriA, m(uriA), 3, true, nil) // the same: nothing
	h.s.Focused(uriA, m(uriA), 0, false, nil)
	h.tick(time.Second)
	at := h.typeAt(uriA, 6, "x")   // at the end of 日本
	h.s.Cursor(uriA, m(uriA), at)  // where the change left it: nothing
	h.s.Cursor(uriA, m(uriA), 9)   // line 1, column 1: a movement
	h.s.Cursor(uriA, m(uriA), 9)   // nothing
	h.s.Cursor(uriA, m(uriA), 999) // clamped to the end
	if a, _ := h.s.Active(); a.URI != uriA {
		t.Fatalf("active %v", a)
	}
	h.s.Cursor(uriB, m(uriB), 1)
	if a, _ := h.s.Active(); a.URI != uriA {
		t.Fatalf("Cursor changed the focus to %v", a)
	}

	type want struct {
		kind      string
		uri       string
		line, c16 int
		c8        int
	}
	wants := []want{
		{"cursorMovement", uriA, 0, 1, 3},
		{"insertChar", uriA, 0, 3, 7},
		{"cursorMovement", uriA, 1, 1, 1},
		{"cursorMovement", uriA, 2, 0, 0},
		{"cursorMovement", uriB, 0, 1, 1},
	}
	acts16, acts8 := actionsIn(h, encoding.UTF16), actionsIn(h, encoding.UTF8)
	if len(acts16) != len(wants) {
		t.Fatalf("actions %+v", acts16)
	}
	for i, w := range wants {
		a, a8 := acts16[i], acts8[i]
		if a.Action != w.kind || a.Uri != w.uri || a.Position.Line != w.line || a.Position.Character != w.c16 || a8.Position.Character != w.c8 {
			t.Errorf("action %d: %+v (utf-8 column %d); want %+v", i, a, a8.Position.Character, w)
		}
	}
}

func TestPositionAtInsideCharacters(t *testing.T) {
	m := encoding.NewMapper("a日\r\nb")
	for _, tc := range []struct {
		off  int
		want position3
	}{
		{2, position3{0, 1, 1, 1}}, // inside 日: its start
		{5, position3{0, 4, 2, 2}}, // inside "\r\n": before it
		{99, position3{1, 1, 1, 1}},
		{-1, position3{0, 0, 0, 0}},
	} {
		if got := positionAt(m, tc.off, 0); got != tc.want {
			t.Errorf("positionAt(%d) = %+v, want %+v", tc.off, got, tc.want)
		}
	}
}
