package editorstate

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/document"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
)

func TestLimitsDefaults(t *testing.T) {
	want := Limits{EditHistory: 64, UserActions: 256, Recent: 100, EntryBytes: 16384, GroupGap: 3 * time.Second,
		Diagnostics: 200, RecentFileBytes: 256 << 10, RecentFilesBytes: 1 << 20, SnippetBudget: 20 * time.Millisecond}
	if got := (Limits{}).withDefaults(); got != want {
		t.Fatalf("zero limits: %+v, want %+v", got, want)
	}
	if got := (Limits{EditHistory: -1, SnippetBudget: -time.Second}).withDefaults(); got != want {
		t.Fatalf("negative limits: %+v, want %+v", got, want)
	}
	if got := New(Limits{SnippetBudget: 0}).lim.SnippetBudget; got != 20*time.Millisecond {
		t.Fatalf("a budget of 0 is %v", got)
	}
	l := Limits{EditHistory: 1, UserActions: 2, Recent: 3, EntryBytes: 4, GroupGap: 5, Diagnostics: 6, RecentFileBytes: 7, RecentFilesBytes: 9, SnippetBudget: 8}
	if got := l.withDefaults(); got != l {
		t.Fatalf("set limits changed: %+v", got)
	}
}

func refs(uris ...string) []DocumentRef {
	out := make([]DocumentRef, len(uris))
	for i, u := range uris {
		out[i] = DocumentRef{URI: u, LanguageID: "go"}
	}
	return out
}

func TestRecency(t *testing.T) {
	h := newHarness(t, Limits{})
	a := h.open(uriA, "go", "a")
	b := h.open(uriB, "go", "b")
	// Opening makes a document recent (clients such as Helix send no focus), the last opened first.
	if got := h.s.Recent(0); !slices.Equal(got, refs(uriB, uriA)) {
		t.Fatalf("recent %v after opening", got)
	}
	if _, ok := h.s.Active(); ok {
		t.Fatal("active document before any focus")
	}
	h.s.Focused(uriA, a.Mapper, 0, false, nil)
	h.tick(time.Second)
	h.s.Focused(uriB, b.Mapper, 0, false, nil)
	if got := h.s.Recent(0); !slices.Equal(got, refs(uriB, uriA)) {
		t.Fatalf("recent %v", got)
	}
	if got, ok := h.s.Active(); !ok || got != refs(uriB)[0] {
		t.Fatalf("active %v", got)
	}
	h.tick(time.Second)
	h.replace(uriA, 0, 0, "x") // an edit makes a document the most recent, not the active one
	if got := h.s.Recent(0); !slices.Equal(got, refs(uriA, uriB)) {
		t.Fatalf("recent after an edit %v", got)
	}
	if got := h.s.Recent(1); !slices.Equal(got, refs(uriA)) {
		t.Fatalf("Recent(1) %v", got)
	}
	if got, _ := h.s.Active(); got.URI != uriB {
		t.Fatalf("active %v after an edit elsewhere", got)
	}
	if at, ok := h.s.LastFocused(uriA); !ok || !at.Equal(t0) {
		t.Fatalf("LastFocused(a) = %v, %v", at, ok)
	}

	h.s.Closed(uriB)
	if got, ok := h.s.Active(); !ok || got.URI != uriA {
		t.Fatalf("active %v, %v after closing the active document", got, ok)
	}
	if got := h.s.Recent(0); !slices.Equal(got, refs(uriA, uriB)) {
		t.Fatalf("closed documents must stay recent: %v", got)
	}
	if at, ok := h.s.LastFocused(uriB); !ok || !at.Equal(t0.Add(time.Second)) {
		t.Fatalf("LastFocused(b) = %v, %v after closing it", at, ok)
	}
	h.s.Closed(uriA)
	if got, ok := h.s.Active(); ok {
		t.Fatalf("active %v with nothing open", got)
	}
	if _, ok := h.s.LastFocused("file:///never"); ok {
		t.Fatal("LastFocused of an unknown document")
	}
}

func TestRecencyBound(t *testing.T) {
	h := newHarness(t, Limits{Recent: 3})
	uri := func(i int) string { return fmt.Sprintf("file:///w/%d.go", i) }
	focus := func(i int) {
		snap, ok := h.docs.Get(uri(i))
		if !ok {
			snap = h.open(uri(i), "go", "")
		}
		h.tick(time.Second)
		h.s.Focused(uri(i), snap.Mapper, 0, false, nil)
	}
	focus(1)
	focus(2)
	focus(3)
	h.s.Closed(uri(2))
	focus(4) // drops 2: closed, although 1 is older
	if got := h.s.Recent(0); !slices.Equal(got, refs(uri(4), uri(3), uri(1))) {
		t.Fatalf("recent %v", got)
	}
	if _, ok := h.s.docs[uri(2)]; ok {
		t.Fatal("a dropped closed document is still kept")
	}
	focus(5) // every one open: drops the least recent, 1, which stays open
	if got := h.s.Recent(0); !slices.Equal(got, refs(uri(5), uri(4), uri(3))) {
		t.Fatalf("recent %v", got)
	}
	if d, ok := h.s.docs[uri(1)]; !ok || !d.open {
		t.Fatal("an open document dropped from the recency list must stay known")
	}
	for i := 6; i < 200; i++ {
		focus(i)
		h.s.Closed(uri(i))
		h.docs.Close(uri(i))
	}
	if n := len(h.s.docs); n > 3+5 { // the recency list and the open documents
		t.Fatalf("%d documents kept", n)
	}
	if n := len(h.s.Recent(0)); n != 3 {
		t.Fatalf("%d recent documents", n)
	}
}

// TestOpenedIsRecentBelowFocusedAndEdited: a client that never sends focus (Helix, Kakoune)
// still makes the files its user opens recent, after those focused or edited, and opening keeps
// the bounds: it never pushes a document the user worked in out of a full list.
func TestOpenedIsRecentBelowFocusedAndEdited(t *testing.T) {
	h := newHarness(t, Limits{Recent: 3})
	uri := func(i int) string { return fmt.Sprintf("file:///w/%d.go", i) }
	h.open(uri(1), "go", "")
	h.tick(time.Second)
	h.open(uri(2), "go", "")
	h.replace(uri(1), 0, 0, "x")
	h.open(uri(3), "go", "")
	// Edited first, then the opened ones, the last opened first.
	if got := h.s.Recent(0); !slices.Equal(got, refs(uri(1), uri(3), uri(2))) {
		t.Fatalf("recent %v", got)
	}
	// A fourth file opened drops the least recent opened one, not the edited one.
	h.open(uri(4), "go", "")
	if got := h.s.Recent(0); !slices.Equal(got, refs(uri(1), uri(4), uri(3))) {
		t.Fatalf("recent %v after opening a fourth", got)
	}
	// Closed, an opened file stays recent (workspace/recent_documents lists closed ones).
	h.s.Closed(uri(4))
	h.docs.Close(uri(4))
	if got := h.s.Recent(0); !slices.Equal(got, refs(uri(1), uri(4), uri(3))) {
		t.Fatalf("recent %v after closing", got)
	}
	// When every document in the full list is open and was worked in, one only opened does not
	// enter it.
	for _, i := range []int{1, 2, 3} {
		h.replace(uri(i), 0, 0, "y")
	}
	h.open(uri(5), "go", "")
	if got := h.s.Recent(0); !slices.Equal(got, refs(uri(3), uri(2), uri(1))) {
		t.Fatalf("recent %v: opening pushed out a document the user edited", got)
	}
	if n := len(h.s.docs); n != 4 { // 1, 2, 3 and 5 open; 4 closed and dropped
		t.Fatalf("%d documents kept", n)
	}
}

func TestClosedForgetsDocumentState(t *testing.T) {
	h := newHarness(t, Limits{})
	a := h.open(uriA, "go", "a\nb\n")
	h.s.Focused(uriA, a.Mapper, 2, true, &LineRange{0, 1})
	h.s.SetDiagnostics(uriA, []Diagnostic{{Range: encoding.Range{End: encoding.Position{Character: 1}}, Severity: 1, Message: "m"}})
	h.s.Closed(uriA)
	h.docs.Close(uriA)
	h.s.SetDiagnostics(uriA, []Diagnostic{{Message: "of a closed document"}})
	a = h.open(uriA, "go", "a\nb\n")
	ctx := h.context(Want{OpenFiles: true, Diagnostics: true}, uriA, 0)
	if len(ctx.Diagnostics) != 0 || ctx.OpenFiles[0].VisibleRange != nil {
		t.Fatalf("after close and reopen: %+v", ctx)
	}
	if ctx.OpenFiles[0].LastFocusedMs == nil {
		t.Fatal("the focus time of a recent document is forgotten")
	}
	// The cursor is forgotten too: the first cursor after reopening is a movement.
	h.s.Cursor(uriA, a.Mapper, 2)
	acts := actionsIn(h, encoding.UTF16)
	if len(acts) != 2 || acts[1].Action != "cursorMovement" {
		t.Fatalf("actions %+v", acts)
	}
}

func TestSetDiagnosticsKeepsTheFirst(t *testing.T) {
	h := newHarness(t, Limits{Diagnostics: 2})
	h.open(uriA, "go", "abc")
	diags := []Diagnostic{{Message: "1"}, {Message: "2"}, {Message: "3"}}
	h.s.SetDiagnostics(uriA, diags)
	diags[0].Message = "changed by the caller"
	ctx := h.context(Want{Diagnostics: true}, uriA, 0)
	if len(ctx.Diagnostics) != 2 || ctx.Diagnostics[0].Message != "1" || ctx.Diagnostics[1].Message != "2" {
		t.Fatalf("diagnostics %+v", ctx.Diagnostics)
	}
	h.s.SetDiagnostics(uriA, nil)
	if ctx := h.context(Want{Diagnostics: true}, uriA, 0); ctx != nil {
		t.Fatalf("diagnostics after clearing: %+v", ctx)
	}
}

// TestConcurrentUse runs every method at once, for the race detector.
func TestConcurrentUse(t *testing.T) {
	s := New(Limits{EditHistory: 8, UserActions: 16, Recent: 4})
	docs := document.NewStore()
	var wg sync.WaitGroup
	for g := range 4 {
		uri := fmt.Sprintf("file:///w/%d.go", g)
		snap, _ := docs.Open(uri, "go", 0, "package p\n\nfunc f() {}\n")
		s.Opened(snap)
		wg.Go(func() {
			for i := range 300 {
				cur, _ := docs.Get(uri)
				r, _ := cur.Mapper.OffsetsRange(0, 0, encoding.UTF16)
				_, after, applied, err := docs.Change(uri, cur.Version+1, []document.Change{{Range: &r, Text: "x"}}, encoding.UTF16)
				if err != nil {
					t.Error(err)
					return
				}
				s.Changed(uri, applied)
				switch i % 5 {
				case 0:
					s.Focused(uri, after.Mapper, 1, true, &LineRange{0, 3})
				case 1:
					s.Cursor(uri, after.Mapper, 0)
				case 2:
					s.SetDiagnostics(uri, []Diagnostic{{Severity: 1, Message: "m"}})
				case 3:
					s.Context(Request{Want: allKeys, Snap: after, Cursor: 1, Open: docs.All()})
					s.Recent(0)
					s.Active()
					s.LastFocused(uri)
				case 4:
					s.Closed(uri)
					s.Opened(after)
				}
			}
		})
	}
	wg.Wait()
}
