package editorstate

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/document"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
)

const uriA, uriB = "file:///w/a.go", "file:///w/b.go"

func hdr(path string) string { return "--- a/" + path + "\n+++ b/" + path + "\n" }

func checkDiffs(t *testing.T, h *harness, want ...string) {
	t.Helper()
	got := h.diffs()
	if !slices.Equal(got, want) {
		t.Fatalf("diffs:\n%s\nwant:\n%s", strings.Join(quoteAll(got), "\n"), strings.Join(quoteAll(want), "\n"))
	}
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

func TestTypingAWordIsOneEntry(t *testing.T) {
	h := newHarness(t, Limits{})
	h.open(uriA, "go", "a\nb\nc\n")
	h.typeAt(uriA, 2, "hello")
	checkDiffs(t, h, hdr("w/a.go")+"@@ -2,1 +2,1 @@\n-b\n+hellob\n")
}

func TestTypingBackspaceAndNextLineIsOneEntry(t *testing.T) {
	h := newHarness(t, Limits{})
	h.open(uriA, "go", "one\ntwo\n")
	at := h.typeAt(uriA, 3, "!!")
	at = h.backspace(uriA, at, 1)
	at = h.typeAt(uriA, at, "\n")
	h.typeAt(uriA, at, "next")
	if got, want := h.text(uriA), "one!\nnext\ntwo\n"; got != want {
		t.Fatalf("text %q, want %q", got, want)
	}
	checkDiffs(t, h, hdr("w/a.go")+"@@ -1,1 +1,2 @@\n-one\n+one!\n+next\n")
}

func TestTypingOnTheLineAboveJoins(t *testing.T) {
	h := newHarness(t, Limits{})
	h.open(uriA, "go", "a\nb\nc\n")
	h.typeAt(uriA, 4, "C")   // line 2
	h.typeAt(uriA, 2, "B")   // line 1: adjacent above
	h.typeAt(uriA, 1, "A")   // line 0: adjacent above
	h.typeAt(uriA, 8, "end") // after "Cc" on line 2
	checkDiffs(t, h, hdr("w/a.go")+"@@ -1,3 +1,3 @@\n-a\n-b\n-c\n+aA\n+Bb\n+Ccend\n")
}

func manyLines(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func TestFarEditStartsANewEntry(t *testing.T) {
	h := newHarness(t, Limits{})
	h.open(uriA, "go", manyLines(60))
	m := h.snap(uriA).Mapper
	h.typeAt(uriA, m.LineStart(2), "x")
	m = h.snap(uriA).Mapper
	h.typeAt(uriA, m.LineStart(52), "y")
	checkDiffs(t, h,
		hdr("w/a.go")+"@@ -3,1 +3,1 @@\n-line 2\n+xline 2\n",
		hdr("w/a.go")+"@@ -53,1 +53,1 @@\n-line 52\n+yline 52\n")
}

func TestOtherFileStartsANewEntry(t *testing.T) {
	h := newHarness(t, Limits{})
	h.open(uriA, "go", "a\n")
	h.open(uriB, "go", "b\n")
	h.typeAt(uriA, 1, "1")
	h.typeAt(uriB, 1, "2")
	h.typeAt(uriA, 2, "3")
	checkDiffs(t, h,
		hdr("w/a.go")+"@@ -1,1 +1,1 @@\n-a\n+a1\n",
		hdr("w/b.go")+"@@ -1,1 +1,1 @@\n-b\n+b2\n",
		hdr("w/a.go")+"@@ -1,1 +1,1 @@\n-a1\n+a13\n")
}

func TestFocusingAnotherFileClosesTheEntry(t *testing.T) {
	h := newHarness(t, Limits{})
	h.open(uriA, "go", "a\n")
	h.open(uriB, "go", "b\n")
	h.typeAt(uriA, 1, "1")
	h.s.Focused(uriA, h.snap(uriA).Mapper, 2, true, nil) // the same document: no effect
	h.typeAt(uriA, 2, "2")
	h.s.Focused(uriB, h.snap(uriB).Mapper, 0, true, nil)
	h.s.Focused(uriA, h.snap(uriA).Mapper, 3, true, nil)
	h.typeAt(uriA, 3, "3")
	checkDiffs(t, h,
		hdr("w/a.go")+"@@ -1,1 +1,1 @@\n-a\n+a12\n",
		hdr("w/a.go")+"@@ -1,1 +1,1 @@\n-a12\n+a123\n")
}

func TestPauseStartsANewEntry(t *testing.T) {
	h := newHarness(t, Limits{})
	h.open(uriA, "go", "x\n")
	at := h.typeAt(uriA, 0, "ab")
	h.tick(3*time.Second - 100*time.Millisecond) // typeAt waits 100ms more: exactly the gap, still the same entry
	at = h.typeAt(uriA, at, "c")
	h.tick(3*time.Second + time.Millisecond)
	h.typeAt(uriA, at, "d")
	checkDiffs(t, h,
		hdr("w/a.go")+"@@ -1,1 +1,1 @@\n-x\n+abcx\n",
		hdr("w/a.go")+"@@ -1,1 +1,1 @@\n-abcx\n+abcdx\n")
}

func TestTypedThenDeletedLeavesNoEntry(t *testing.T) {
	h := newHarness(t, Limits{})
	h.open(uriA, "go", "a\nb\n")
	at := h.typeAt(uriA, 2, "oops")
	h.backspace(uriA, at, 4)
	checkDiffs(t, h) // the open entry renders nothing
	h.open(uriB, "go", "")
	h.typeAt(uriB, 0, "k") // closes it: dropped
	checkDiffs(t, h, hdr("w/b.go")+"@@ -0,0 +1,1 @@\n+k\n\\ No newline at end of file\n")
	if n, _, _ := h.s.heldBytes(); n != 1 {
		t.Fatalf("%d entries held; want 1", n)
	}
}

func TestFullSyncGivesMinimalDiffs(t *testing.T) {
	h := newHarness(t, Limits{})
	text := manyLines(100)
	h.open(uriA, "go", text)
	text = strings.Replace(text, "line 49\n", "line 49 changed\n", 1)
	h.full(uriA, text)
	checkDiffs(t, h, hdr("w/a.go")+"@@ -50,1 +50,1 @@\n-line 49\n+line 49 changed\n")

	// Typing with full sync groups like incremental typing.
	h = newHarness(t, Limits{})
	text = manyLines(100)
	h.open(uriA, "go", text)
	at := strings.Index(text, "line 70\n") + len("line 70")
	for _, c := range "abc" {
		h.tick(100 * time.Millisecond)
		text = text[:at] + string(c) + text[at:]
		at++
		h.full(uriA, text)
	}
	h.full(uriA, text) // the same text again: nothing
	checkDiffs(t, h, hdr("w/a.go")+"@@ -71,1 +71,1 @@\n-line 70\n+line 70abc\n")
	acts := h.context(Want{UserActions: true}, uriA, 0).UserActions
	if len(acts) != 3 || acts[0].Action != "replaceSelection" || acts[0].Position.Line != 70 || acts[0].Position.Character != 0 {
		t.Fatalf("actions of full changes: %+v", acts)
	}
}

func TestDiffFormat(t *testing.T) {
	for _, tc := range []struct {
		name       string
		text       string
		start, end int
		insert     string
		want       string
	}{
		{"insert line", "a\nb\n", 2, 2, "x\n", "@@ -1,0 +2,1 @@\n+x\n"},
		{"insert line at start", "a\n", 0, 0, "x\n", "@@ -0,0 +1,1 @@\n+x\n"},
		{"insert into line", "a\nb\n", 3, 3, "c", "@@ -2,1 +2,1 @@\n-b\n+bc\n"},
		{"delete line", "a\nb\nc\n", 2, 4, "", "@@ -2,1 +1,0 @@\n-b\n"},
		{"delete first line", "a\nb\n", 0, 2, "", "@@ -1,1 +0,0 @@\n-a\n"},
		{"delete everything", "a\nb\n", 0, 4, "", "@@ -1,2 +0,0 @@\n-a\n-b\n"},
		{"replace", "a\nb\nc\n", 2, 3, "B", "@@ -2,1 +2,1 @@\n-b\n+B\n"},
		{"replace lines", "a\nb\nc\nd\n", 2, 5, "X\nY\nZ", "@@ -2,2 +2,3 @@\n-b\n-c\n+X\n+Y\n+Z\n"},
		{"no newline at end", "a\nb", 2, 3, "c", "@@ -2,1 +2,1 @@\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"},
		{"add newline at end", "a", 1, 1, "\n", "@@ -1,1 +1,1 @@\n-a\n\\ No newline at end of file\n+a\n"},
		{"remove newline at end", "a\n", 1, 2, "", "@@ -1,1 +1,1 @@\n-a\n+a\n\\ No newline at end of file\n"},
		{"append to last line", "a", 1, 1, "\nb", "@@ -1,1 +1,2 @@\n-a\n\\ No newline at end of file\n+a\n+b\n\\ No newline at end of file\n"},
		{"append line", "a\n", 2, 2, "b\n", "@@ -1,0 +2,1 @@\n+b\n"},
		{"empty text", "", 0, 0, "hi", "@@ -0,0 +1,1 @@\n+hi\n\\ No newline at end of file\n"},
		{"crlf replace", "a\r\nb\r\n", 3, 4, "c", "@@ -2,1 +2,1 @@\n-b\r\n+c\r\n"},
		{"crlf insert line", "a\r\nb\r\n", 3, 3, "x\r\n", "@@ -1,0 +2,1 @@\n+x\r\n"},
		{"crlf join lines", "a\r\nb\r\n", 1, 3, "", "@@ -1,2 +1,1 @@\n-a\r\n-b\r\n+ab\r\n"},
		{"lone cr", "a\rb\r", 2, 3, "c", "@@ -2,1 +2,1 @@\n-b\r\n+c\r\n"},
		{"multibyte", "é\n日本\n", 3, 6, "x", "@@ -2,1 +2,1 @@\n-日本\n+x本\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Limits{})
			h.open(uriA, "go", tc.text)
			h.replace(uriA, tc.start, tc.end, tc.insert)
			checkDiffs(t, h, hdr("w/a.go")+tc.want)
		})
	}
}

func TestDiffPaths(t *testing.T) {
	for _, tc := range []struct {
		uri  string
		path func(string) string
		want string
	}{
		{"file:///w/my%20file.go", nil, "w/my file.go"},
		{"untitled:Untitled-1", nil, "Untitled-1"},
		{"file:///w/x.go", func(uri string) string { return "x.go" }, "x.go"},
	} {
		h := newHarness(t, Limits{})
		h.open(tc.uri, "go", "")
		h.replace(tc.uri, 0, 0, "z")
		ctx := h.s.Context(Request{Want: Want{EditHistory: true}, Path: tc.path})
		if want := hdr(tc.want) + "@@ -0,0 +1,1 @@\n+z\n\\ No newline at end of file\n"; ctx.EditHistory[0].Diff != want || ctx.EditHistory[0].Uri != tc.uri {
			t.Errorf("%s: %+v, want diff %q", tc.uri, ctx.EditHistory[0], want)
		}
	}
}

func TestEntryBytes(t *testing.T) {
	t.Run("a growing entry is split", func(t *testing.T) {
		h := newHarness(t, Limits{EntryBytes: 32})
		h.open(uriA, "go", "x\n")
		h.typeAt(uriA, 0, strings.Repeat("ab\n", 15))
		d := h.diffs()
		if len(d) != 2 || strings.Contains(d[0]+d[1], "too large") {
			t.Fatalf("diffs %q; want 2", d)
		}
		checkRoundTrip(t, "x\n", h.text(uriA), d)
		entries, bytes, _ := h.s.heldBytes()
		if entries != 2 || bytes > 2*32 {
			t.Fatalf("%d entries of %d bytes", entries, bytes)
		}
	})
	t.Run("a large change is summarized", func(t *testing.T) {
		h := newHarness(t, Limits{EntryBytes: 64})
		h.open(uriA, "go", "a\nb\nc\n")
		h.replace(uriA, 2, 4, strings.Repeat("long line\n", 20))
		checkDiffs(t, h, hdr("w/a.go")+"# edit at line 2 too large to show: 1 line replaced by 20 lines\n")
		if _, bytes, _ := h.s.heldBytes(); bytes != 0 {
			t.Fatalf("a summary holds %d bytes", bytes)
		}
		// A small change in place afterwards starts an entry of its own.
		h.tick(time.Millisecond)
		h.replace(uriA, 2, 3, "L")
		checkDiffs(t, h,
			hdr("w/a.go")+"# edit at line 2 too large to show: 1 line replaced by 20 lines\n",
			hdr("w/a.go")+"@@ -2,1 +2,1 @@\n-long line\n+Long line\n")
	})
	t.Run("large changes in place share a summary", func(t *testing.T) {
		h := newHarness(t, Limits{EntryBytes: 64})
		long := strings.Repeat("z", 100)
		h.open(uriA, "go", "a\n"+long)
		h.typeAt(uriA, 5, "abc")
		checkDiffs(t, h, hdr("w/a.go")+"# edit at line 2 too large to show: 1 line replaced by 1 line\n")
	})
	t.Run("summary counts at the end of the text", func(t *testing.T) {
		h := newHarness(t, Limits{EntryBytes: 16})
		h.open(uriA, "go", "a\n")
		h.replace(uriA, 2, 2, strings.Repeat("x\n", 10))
		checkDiffs(t, h, hdr("w/a.go")+"# edit at line 2 too large to show: 0 lines replaced by 10 lines\n")
	})
}

// checkRoundTrip applies diffs to from and checks the result is to.
func checkRoundTrip(t testing.TB, from, to string, diffs []string) {
	t.Helper()
	text := from
	for i, d := range diffs {
		next, err := applyDiff(text, d)
		if err != nil {
			t.Fatalf("diff %d of %d %q does not apply to %q: %v", i, len(diffs), d, text, err)
		}
		text = next
	}
	if text != to {
		t.Fatalf("the diffs make %q from %q; the text is %q", text, from, to)
	}
}

// randomEdit makes one random edit of uri with the random source r: mostly typing and
// backspacing near the last edit, sometimes a jump, a paste, a deletion or a pause.
func randomEdit(h *harness, r *rand.Rand, uri string, at *int) {
	t := h.text(uri)
	*at = max(0, min(*at, len(t)))
	for *at > 0 && *at < len(t) && (t[*at]&0xC0 == 0x80 || t[*at-1] == '\r' && t[*at] == '\n') {
		*at-- // stay out of characters and "\r\n"
	}
	h.tick(time.Duration(r.IntN(400)) * time.Millisecond)
	pieces := []string{"a", "b", "é", "日", "𐐀", "\n", "\r\n", "  ", "func x() {\n", "}\n"}
	switch n := r.IntN(100); {
	case n < 60:
		s := pieces[r.IntN(len(pieces))]
		h.replace(uri, *at, *at, s)
		*at += len(s)
	case n < 80 && *at > 0:
		start := *at - 1
		for start > 0 && (t[start]&0xC0 == 0x80 || t[start] == '\n' && t[start-1] == '\r') {
			start--
		}
		h.replace(uri, start, *at, "")
		*at = start
	case n < 90:
		*at = r.IntN(len(t) + 1)
	case n < 95:
		end := min(len(t), *at+r.IntN(200))
		for end < len(t) && (t[end]&0xC0 == 0x80 || t[end] == '\n' && t[end-1] == '\r') {
			end++
		}
		s := strings.Repeat(pieces[r.IntN(len(pieces))], r.IntN(300))
		h.replace(uri, *at, end, s)
		*at += len(s)
	case n < 97:
		h.tick(5 * time.Second)
	default:
		mid := len(t) / 2
		if i := strings.IndexByte(t[mid:], '\n'); i >= 0 {
			mid += i + 1
		} else {
			mid = len(t)
		}
		h.full(uri, t[:mid]+"full\n"+t[mid:])
	}
}

func TestMemoryBounded(t *testing.T) {
	lim := Limits{EditHistory: 32, UserActions: 100, EntryBytes: 1024}
	h := newHarness(t, lim)
	r := rand.New(rand.NewPCG(1, 2))
	uris := []string{uriA, uriB, "file:///w/c.go"}
	for _, u := range uris {
		h.open(u, "go", manyLines(200))
	}
	ats := make([]int, len(uris))
	maxBytes := 0
	n := 100_000
	if testing.Short() {
		n = 5_000
	}
	for i := range n {
		k := 0
		if r.IntN(50) == 0 {
			k = r.IntN(len(uris))
		}
		randomEdit(h, r, uris[k], &ats[k])
		if len(h.text(uris[k])) > 16<<10 {
			h.full(uris[k], manyLines(200)) // keep the documents small: the mirror copies them per change
		}
		if i%1000 == 0 {
			entries, bytes, actions := h.s.heldBytes()
			maxBytes = max(maxBytes, bytes)
			if entries > lim.EditHistory || bytes > lim.EditHistory*lim.EntryBytes || actions > lim.UserActions {
				t.Fatalf("after %d edits: %d entries, %d bytes, %d actions", i, entries, bytes, actions)
			}
		}
	}
	entries, bytes, actions := h.s.heldBytes()
	if entries > lim.EditHistory || bytes > lim.EditHistory*lim.EntryBytes || actions > lim.UserActions {
		t.Fatalf("%d entries, %d bytes, %d actions", entries, bytes, actions)
	}
	for i := range h.s.history.len() {
		if g := h.s.history.at(i); g.size() > lim.EntryBytes {
			t.Fatalf("entry %d holds %d bytes", i, g.size())
		}
	}
	t.Logf("after 100000 edits: %d entries holding %d bytes (at most %d seen, limit %d), %d actions",
		entries, bytes, maxBytes, lim.EditHistory*lim.EntryBytes, actions)
	ctx := h.s.Context(Request{Want: allKeys, Snap: h.snap(uriA), Open: h.docs.All(), Agent: encoding.UTF8})
	if len(ctx.EditHistory) > defaultHistoryMax || len(ctx.UserActions) > defaultActionsMax {
		t.Fatalf("context of %d entries and %d actions", len(ctx.EditHistory), len(ctx.UserActions))
	}
}

// TestDiffsRoundTrip checks that the rendered history, applied in order to the first text, gives
// the last one, over random editing sessions.
func TestDiffsRoundTrip(t *testing.T) {
	for seed := range uint64(40) {
		h := newHarness(t, Limits{EditHistory: 1 << 16, EntryBytes: 1 << 30})
		r := rand.New(rand.NewPCG(seed, 7))
		initial := manyLines(30)
		if seed%2 == 1 {
			initial = strings.ReplaceAll(initial, "\n", "\r\n")
		}
		h.open(uriA, "go", initial)
		at := 0
		for range 300 {
			randomEdit(h, r, uriA, &at)
		}
		checkRoundTrip(t, initial, h.text(uriA), h.diffs())
	}
}

func TestEntryClosedByCloseAndReopen(t *testing.T) {
	h := newHarness(t, Limits{})
	h.open(uriA, "go", "a\n")
	h.typeAt(uriA, 1, "b")
	h.s.Closed(uriA)
	h.docs.Close(uriA)
	h.open(uriA, "go", "ab\n")
	h.typeAt(uriA, 2, "c")
	checkDiffs(t, h,
		hdr("w/a.go")+"@@ -1,1 +1,1 @@\n-a\n+ab\n",
		hdr("w/a.go")+"@@ -1,1 +1,1 @@\n-ab\n+abc\n")
}

// A change the State did not see (the caller skipped Changed) must not corrupt the entry.
func TestMissedChangeStartsANewEntry(t *testing.T) {
	h := newHarness(t, Limits{})
	h.open(uriA, "go", "a\nb\n")
	h.typeAt(uriA, 1, "1")
	snap := h.snap(uriA)
	r, _ := snap.Mapper.OffsetsRange(0, 0, encoding.UTF16)
	h.docs.Change(uriA, snap.Version+1, []document.Change{{Range: &r, Text: "0"}}, encoding.UTF16) // not recorded
	h.typeAt(uriA, 3, "2")
	checkDiffs(t, h,
		hdr("w/a.go")+"@@ -1,1 +1,1 @@\n-a\n+a1\n",
		hdr("w/a.go")+"@@ -1,1 +1,1 @@\n-0a1\n+0a12\n")
}

func TestCountBreaks(t *testing.T) {
	for _, tc := range []struct {
		pieces []string
		want   int
	}{
		{nil, 0},
		{[]string{"a\nb\r\nc\rd"}, 3},
		{[]string{"a\r", "\nb"}, 1},
		{[]string{"a\r", "", "\nb"}, 1},
		{[]string{"\r", "\r", "\n"}, 2},
	} {
		if got := countBreaks(tc.pieces...); got != tc.want {
			t.Errorf("countBreaks(%q) = %d, want %d", tc.pieces, got, tc.want)
		}
	}
}

func TestSplitLines(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"", nil},
		{"a", []string{"a"}},
		{"a\n", []string{"a\n"}},
		{"a\r\nb\rc\n\nd", []string{"a\r\n", "b\r", "c\n", "\n", "d"}},
	} {
		if got := splitLines(tc.text); !slices.Equal(got, tc.want) {
			t.Errorf("splitLines(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}
