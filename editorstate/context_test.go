package editorstate

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/document"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
)

// busyHarness has something for every context key: two documents focused and edited, a
// diagnostic, and a definition in b of an identifier on a's cursor line.
func busyHarness(t *testing.T) (*harness, int) {
	h := newHarness(t, Limits{})
	b := h.open(uriB, "go", "package p\n\nfunc computeTotal(n int) int {\n\treturn n\n}\n")
	h.s.Focused(uriB, b.Mapper, 0, true, &LineRange{0, 4})
	a := h.open(uriA, "go", "package p\n\nvar x = computeTotal(1)\n")
	h.tick(time.Second)
	h.s.Focused(uriA, a.Mapper, 0, true, nil)
	h.typeAt(uriA, len(a.Text()), "// done\n")
	h.s.SetDiagnostics(uriA, []Diagnostic{{Range: encoding.Range{Start: encoding.Position{Line: 2, Character: 4}, End: encoding.Position{Line: 2, Character: 5}}, Severity: 2, Message: "unused"}})
	return h, strings.Index(h.text(uriA), "computeTotal") + 3
}

func TestContextKeysOnlyWhenWanted(t *testing.T) {
	for _, tc := range []struct {
		key  string
		want Want
	}{
		{"openFiles", Want{OpenFiles: true}},
		{"recentFiles", Want{RecentFiles: true}},
		{"editHistory", Want{EditHistory: true}},
		{"userActions", Want{UserActions: true}},
		{"diagnostics", Want{Diagnostics: true}},
		{"relatedSnippets", Want{RelatedSnippets: true}},
	} {
		t.Run(tc.key, func(t *testing.T) {
			h, cursor := busyHarness(t)
			ctx := h.context(tc.want, uriA, cursor)
			if got := jsonKeys(t, ctx); !slices.Equal(got, []string{tc.key}) {
				t.Fatalf("keys %v; want only %s", got, tc.key)
			}
		})
	}
	h, cursor := busyHarness(t)
	if ctx := h.context(Want{RecentMax: 5, HistoryMax: 5, ActionsMax: 5}, uriA, cursor); ctx != nil {
		t.Fatalf("no key wanted: %+v", ctx)
	}
	all := jsonKeys(t, h.context(allKeys, uriA, cursor))
	if want := []string{"diagnostics", "editHistory", "openFiles", "recentFiles", "relatedSnippets", "userActions"}; !slices.Equal(all, want) {
		t.Fatalf("every key wanted: %v", all)
	}

	// Keys that are wanted but empty: no context at all.
	h = newHarness(t, Limits{})
	h.open(uriA, "go", "x")
	if ctx := h.context(Want{RecentFiles: true, EditHistory: true, UserActions: true, Diagnostics: true, RelatedSnippets: true}, uriA, 0); ctx != nil {
		t.Fatalf("every wanted key is empty: %+v", ctx)
	}
}

func TestMaxCount(t *testing.T) {
	h := newHarness(t, Limits{})
	var uris []string
	for i := range 5 {
		uri := fmt.Sprintf("file:///w/%d.go", i)
		uris = append(uris, uri)
		h.open(uri, "go", "")
		h.tick(time.Second)
		h.replace(uri, 0, 0, itoa(i)) // an entry, an action, and recent
	}
	self := h.open("file:///w/self.go", "go", "")
	ctx := h.s.Context(Request{
		Want: Want{RecentFiles: true, EditHistory: true, UserActions: true, RecentMax: 2, HistoryMax: 2, ActionsMax: 3},
		Snap: self, Open: h.docs.All(), Agent: encoding.UTF16,
	})
	var recent, hist, acts []string
	for _, f := range ctx.RecentFiles {
		recent = append(recent, f.Uri)
	}
	for _, e := range ctx.EditHistory {
		hist = append(hist, e.Uri)
	}
	for _, a := range ctx.UserActions {
		acts = append(acts, a.Uri)
	}
	if want := []string{uris[4], uris[3]}; !slices.Equal(recent, want) {
		t.Errorf("recentFiles %v; want %v", recent, want)
	}
	if want := []string{uris[3], uris[4]}; !slices.Equal(hist, want) {
		t.Errorf("editHistory %v; want %v (oldest first)", hist, want)
	}
	if want := []string{uris[2], uris[3], uris[4]}; !slices.Equal(acts, want) {
		t.Errorf("userActions %v; want %v (oldest first)", acts, want)
	}
}

func TestMaxCountDefaults(t *testing.T) {
	for _, tc := range []struct {
		lim                   Limits
		recent, hist, actions int
	}{
		{Limits{}, 10, 16, 32},
		{Limits{Recent: 3, EditHistory: 4, UserActions: 5}, 3, 4, 5},
	} {
		h := newHarness(t, tc.lim)
		for i := range 40 {
			uri := fmt.Sprintf("file:///w/%d.go", i)
			h.open(uri, "go", "")
			h.replace(uri, 0, 0, "x")
		}
		self := h.open("file:///w/self.go", "go", "")
		ctx := h.s.Context(Request{Want: Want{RecentFiles: true, EditHistory: true, UserActions: true}, Snap: self, Open: h.docs.All()})
		if len(ctx.RecentFiles) != tc.recent || len(ctx.EditHistory) != tc.hist || len(ctx.UserActions) != tc.actions {
			t.Errorf("limits %+v: %d recent files, %d entries, %d actions; want %d, %d, %d", tc.lim,
				len(ctx.RecentFiles), len(ctx.EditHistory), len(ctx.UserActions), tc.recent, tc.hist, tc.actions)
		}
	}
}

func TestOpenFiles(t *testing.T) {
	h := newHarness(t, Limits{})
	a := h.open(uriA, "go", "1\n2\n3\n")
	h.open("file:///w/z.txt", "", "z")
	h.open("file:///w/c.go", "go", "c")
	b := h.open(uriB, "go", "b")
	h.s.Focused(uriA, a.Mapper, 0, false, &LineRange{1, 99})
	h.tick(time.Second)
	h.s.Focused(uriB, b.Mapper, 0, false, &LineRange{5, -2}) // reversed and out of the text
	h.tick(time.Second)
	h.s.Focused(uriA, a.Mapper, 0, false, nil) // keeps the visible range

	ctx := h.s.Context(Request{Want: Want{OpenFiles: true}, Snap: h.snap("file:///w/c.go"), Open: h.docs.All()})
	got := ctx.OpenFiles
	type view struct {
		uri, lang  string
		visible    string
		lastFocus  int
		hasFocused bool
	}
	var views []view
	for _, f := range got {
		v := view{uri: f.Uri, lang: f.LanguageId}
		if f.VisibleRange != nil {
			v.visible = fmt.Sprintf("%d:%d-%d:%d", f.VisibleRange.Start.Line, f.VisibleRange.Start.Character, f.VisibleRange.End.Line, f.VisibleRange.End.Character)
		}
		if f.LastFocusedMs != nil {
			v.lastFocus, v.hasFocused = *f.LastFocusedMs, true
		}
		views = append(views, v)
	}
	want := []view{
		{uriA, "go", "1:0-3:0", ms(t0.Add(2 * time.Second)), true},
		{uriB, "go", "0:0-0:0", ms(t0.Add(time.Second)), true},
		{"file:///w/c.go", "go", "", 0, false},
		{"file:///w/z.txt", "plaintext", "", 0, false},
	}
	if !slices.Equal(views, want) {
		t.Fatalf("openFiles\n%+v\nwant\n%+v", views, want)
	}

	// The request's document is listed even when the caller forgot it in Open.
	ctx = h.s.Context(Request{Want: Want{OpenFiles: true}, Snap: a, Open: []*document.Snapshot{b, b, nil}})
	if len(ctx.OpenFiles) != 2 || ctx.OpenFiles[0].Uri != uriA || ctx.OpenFiles[1].Uri != uriB {
		t.Fatalf("openFiles %+v", ctx.OpenFiles)
	}
}

func TestRecentFiles(t *testing.T) {
	h := newHarness(t, Limits{RecentFileBytes: 10})
	self := h.open(uriA, "go", "self")
	big := h.open("file:///w/big.go", "go", strings.Repeat("x", 11))
	small := h.open(uriB, "", "small")
	h.open("file:///w/opened.go", "go", "u")
	h.s.Focused(uriB, small.Mapper, 0, false, nil)
	h.tick(time.Second)
	h.s.Focused("file:///w/big.go", big.Mapper, 0, false, nil)
	h.tick(time.Second)
	h.s.Focused(uriA, self.Mapper, 0, false, nil)
	ctx := h.context(Want{RecentFiles: true}, uriA, 0)
	// Focused first, then the one only opened (big is too big).
	want := []acp.UnstableNesRecentFile{{Uri: uriB, LanguageId: "plaintext", Text: "small"}, {Uri: "file:///w/opened.go", LanguageId: "go", Text: "u"}}
	if !slices.Equal(ctx.RecentFiles, want) {
		t.Fatalf("recentFiles %+v; want %+v", ctx.RecentFiles, want)
	}
	// The text is the current one.
	h.replace(uriB, 0, 0, "!")
	if got := h.context(Want{RecentFiles: true}, uriA, 0).RecentFiles[0].Text; got != "!small" {
		t.Fatalf("text %q", got)
	}
}

// TestRecentFilesTotalBytes: an agent that asks for a hundred recent files gets as many as fit in
// Limits.RecentFilesBytes together, the most recent first, skipping one that does not fit for a
// smaller one that does.
func TestRecentFilesTotalBytes(t *testing.T) {
	h := newHarness(t, Limits{RecentFilesBytes: 1000})
	self := h.open(uriA, "go", "self")
	var want []string
	for i := range 40 {
		size := 300
		if i == 3 {
			size = 100 // fits after three of 300
		}
		u := fmt.Sprintf("file:///w/r%02d.go", i)
		snap := h.open(u, "go", strings.Repeat("x", size))
		h.s.Focused(u, snap.Mapper, 0, false, nil)
		h.tick(time.Second)
	}
	for _, i := range []int{39, 38, 37, 3} {
		want = append(want, fmt.Sprintf("file:///w/r%02d.go", i))
	}
	h.s.Focused(uriA, self.Mapper, 0, false, nil)
	ctx := h.context(Want{RecentFiles: true, RecentMax: 100}, uriA, 0)
	var got []string
	total := 0
	for _, f := range ctx.RecentFiles {
		got = append(got, f.Uri)
		total += len(f.Text)
	}
	if !slices.Equal(got, want) || total > 1000 {
		t.Fatalf("recentFiles %v (%d bytes); want %v", got, total, want)
	}
}

func diagAt(sl, sc, el, ec, sev int, msg string) Diagnostic {
	return Diagnostic{Range: encoding.Range{Start: encoding.Position{Line: sl, Character: sc}, End: encoding.Position{Line: el, Character: ec}}, Severity: sev, Message: msg}
}

func TestDiagnostics(t *testing.T) {
	h := newHarness(t, Limits{})
	// Line 1: "日本 𐐀x := y": 日本 is 6 bytes / 2 units, 𐐀 4 bytes / 2 utf-16 units / 1 code point.
	text := "first\n日本 𐐀x := y\nlast"
	h.open(uriA, "go", text)
	h.s.SetDiagnostics(uriA, []Diagnostic{
		diagAt(9, 0, 9, 1, 1, "start beyond the text: dropped"),
		diagAt(2, 0, 9, 0, 3, "end beyond the text: clamped"),
		diagAt(1, 3, 1, 6, 1, "undefined: 𐐀x"), // utf-16: 𐐀x
		diagAt(1, 5, 1, 3, 1, "reversed: dropped"),
		diagAt(0, 0, 0, 5, 0, "severity 0"),
		diagAt(0, 1, 0, 2, 4, "hint"),
		diagAt(1, 3, 1, 6, 1, "undefined: 𐐀x"), // a duplicate
		diagAt(-1, 0, 0, 0, 1, "negative: dropped"),
		diagAt(0, 0, -1, 0, 1, "negative end: dropped"),
	})
	cursor := strings.Index(text, "y") // line 1
	ctx := h.s.Context(Request{
		Want: Want{Diagnostics: true}, Snap: h.snap(uriA), Cursor: cursor, Open: h.docs.All(),
		Editor: encoding.UTF16, Agent: encoding.UTF8,
		Extra: []Diagnostic{diagAt(0, 1, 0, 2, 2, "extra"), diagAt(1, 3, 1, 6, 1, "undefined: 𐐀x")},
	})
	type d struct {
		rng string
		sev acp.UnstableNesDiagnosticSeverity
		msg string
	}
	var got []d
	for _, x := range ctx.Diagnostics {
		if x.Uri != uriA {
			t.Errorf("uri %s", x.Uri)
		}
		got = append(got, d{fmt.Sprintf("%d:%d-%d:%d", x.Range.Start.Line, x.Range.Start.Character, x.Range.End.Line, x.Range.End.Character), x.Severity, x.Message})
	}
	want := []d{
		{"0:1-0:2", "warning", "extra"},
		{"1:7-1:12", "error", "undefined: 𐐀x"}, // utf-8 columns; the stored duplicates are dropped
		{"2:0-2:4", "information", "end beyond the text: clamped"},
		{"0:0-0:5", "information", "severity 0"},
		{"0:1-0:2", "hint", "hint"},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("diagnostics\n%v\nwant\n%v", got, want)
	}

	// At most 50, the nearest to the cursor first.
	var many []Diagnostic
	var lines strings.Builder
	for i := range 200 {
		fmt.Fprintf(&lines, "line %d\n", i)
		many = append(many, diagAt(i, 0, i, 1, 1, fmt.Sprintf("d%d", i)))
	}
	h.open(uriB, "go", lines.String())
	h.s.SetDiagnostics(uriB, many)
	cursor = h.snap(uriB).Mapper.LineStart(100)
	ctx = h.s.Context(Request{Want: Want{Diagnostics: true}, Snap: h.snap(uriB), Cursor: cursor})
	if len(ctx.Diagnostics) != 50 || ctx.Diagnostics[0].Message != "d100" {
		t.Fatalf("%d diagnostics, the first %+v", len(ctx.Diagnostics), ctx.Diagnostics[0])
	}
	for _, x := range ctx.Diagnostics {
		if l := x.Range.Start.Line; l < 75 || l > 125 {
			t.Fatalf("diagnostic of line %d among the 50 nearest to line 100", l)
		}
	}
}

func TestContextWithoutADocument(t *testing.T) {
	h, _ := busyHarness(t)
	h.s.Focused(uriA, nil, 3, true, nil)
	h.s.Cursor(uriA, nil, 3)
	for _, snap := range []*document.Snapshot{nil, {URI: uriA}} {
		ctx := h.s.Context(Request{Want: allKeys, Snap: snap, Cursor: -5, Open: []*document.Snapshot{nil, {URI: "file:///w/nomapper"}}})
		if got := jsonKeys(t, ctx); !slices.Equal(got, []string{"editHistory", "userActions"}) {
			t.Fatalf("keys %v without a document", got)
		}
	}
}
