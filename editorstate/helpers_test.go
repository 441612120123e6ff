package editorstate

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/document"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
)

// t0 is the test clock's start: 2024-06-26T12:00:00Z.
var t0 = time.Date(2024, 6, 26, 12, 0, 0, 0, time.UTC)

// harness drives a State the way the bridge does: documents live in a document.Store, changes
// go through Store.Change (utf-16 positions) and then State.Changed.
type harness struct {
	t    testing.TB
	s    *State
	docs *document.Store
	now  time.Time
}

func newHarness(t testing.TB, l Limits) *harness {
	h := &harness{t: t, s: New(l), docs: document.NewStore(), now: t0}
	h.s.SetClock(func() time.Time { return h.now })
	return h
}

func (h *harness) tick(d time.Duration) { h.now = h.now.Add(d) }

func (h *harness) open(uri, lang, text string) *document.Snapshot {
	snap, _ := h.docs.Open(uri, lang, 0, text)
	h.s.Opened(snap)
	return snap
}

func (h *harness) snap(uri string) *document.Snapshot {
	snap, ok := h.docs.Get(uri)
	if !ok {
		h.t.Fatalf("%s is not open", uri)
	}
	return snap
}

func (h *harness) text(uri string) string { return h.snap(uri).Text() }

// change applies LSP changes to uri and records them.
func (h *harness) change(uri string, changes ...document.Change) {
	h.t.Helper()
	before, _ := h.docs.Get(uri)
	_, _, applied, err := h.docs.Change(uri, before.Version+1, changes, encoding.UTF16)
	if err != nil {
		h.t.Fatalf("change %s: %v", uri, err)
	}
	h.s.Changed(uri, applied)
}

// replace replaces the bytes [start, end) of uri's text by text.
func (h *harness) replace(uri string, start, end int, text string) {
	h.t.Helper()
	r, err := h.snap(uri).Mapper.OffsetsRange(start, end, encoding.UTF16)
	if err != nil {
		h.t.Fatalf("replace [%d, %d) in %s: %v", start, end, uri, err)
	}
	h.change(uri, document.Change{Range: &r, Text: text})
}

// full replaces uri's whole text, as an editor with full sync does.
func (h *harness) full(uri, text string) { h.change(uri, document.Change{Text: text}) }

// typeAt types text one character at a time at offset, 100ms apart, and returns the offset after it.
func (h *harness) typeAt(uri string, offset int, text string) int {
	h.t.Helper()
	for _, r := range text {
		h.tick(100 * time.Millisecond)
		h.replace(uri, offset, offset, string(r))
		offset += len(string(r))
	}
	return offset
}

// backspace deletes n characters before offset, 100ms apart, and returns the offset after it.
func (h *harness) backspace(uri string, offset, n int) int {
	h.t.Helper()
	for range n {
		h.tick(100 * time.Millisecond)
		t := h.text(uri)
		start := offset - 1
		for start > 0 && t[start]&0xC0 == 0x80 {
			start--
		}
		h.replace(uri, start, offset, "")
		offset = start
	}
	return offset
}

// context assembles a context for a request at cursor of uri, with every open document.
func (h *harness) context(w Want, uri string, cursor int) *acp.UnstableNesSuggestContext {
	return h.s.Context(Request{Want: w, Snap: h.snap(uri), Cursor: cursor, Open: h.docs.All(), Agent: encoding.UTF16, Editor: encoding.UTF16})
}

// diffs returns the editHistory diffs of the State, every entry.
func (h *harness) diffs() []string {
	ctx := h.s.Context(Request{Want: Want{EditHistory: true, HistoryMax: 1 << 20}, Agent: encoding.UTF16})
	if ctx == nil {
		return nil
	}
	var out []string
	for _, e := range ctx.EditHistory {
		out = append(out, e.Diff)
	}
	return out
}

var allKeys = Want{OpenFiles: true, RecentFiles: true, EditHistory: true, UserActions: true, Diagnostics: true, RelatedSnippets: true}

// jsonKeys returns the keys a context has on the wire.
func jsonKeys(t testing.TB, ctx *acp.UnstableNesSuggestContext) []string {
	if ctx == nil {
		return nil
	}
	b, err := json.Marshal(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// applyDiff applies a diff as State renders them (no context lines, one hunk) to text, checking
// that the lines it removes are there. Texts must not use lone "\r" line endings.
func applyDiff(text, diff string) (string, error) {
	lines := strings.SplitAfter(diff, "\n")
	if len(lines) < 3 || !strings.HasPrefix(lines[0], "--- a/") || !strings.HasPrefix(lines[1], "+++ b/") {
		return "", fmt.Errorf("bad header in %q", diff)
	}
	var a, b, c, d int
	if _, err := fmt.Sscanf(lines[2], "@@ -%d,%d +%d,%d @@\n", &a, &b, &c, &d); err != nil {
		return "", fmt.Errorf("bad hunk header %q: %v", lines[2], err)
	}
	var old, new []string
	body := lines[3:]
	for i := 0; i < len(body); i++ {
		l := body[i]
		if l == "" {
			continue
		}
		content := l[1:]
		if i+1 < len(body) && body[i+1] == "\\ No newline at end of file\n" {
			content = strings.TrimSuffix(content, "\n")
			i++
		}
		switch l[0] {
		case '-':
			old = append(old, content)
		case '+':
			new = append(new, content)
		default:
			return "", fmt.Errorf("bad line %q", l)
		}
	}
	if len(old) != b || len(new) != d {
		return "", fmt.Errorf("hunk %q has %d old and %d new lines", lines[2], len(old), len(new))
	}
	doc := strings.SplitAfter(text, "\n")
	if doc[len(doc)-1] == "" {
		doc = doc[:len(doc)-1]
	}
	at := a - 1
	if b == 0 {
		at = a
	}
	wantNew := c - 1
	if d == 0 {
		wantNew = c
	}
	if at != wantNew || at < 0 || at+b > len(doc) {
		return "", fmt.Errorf("hunk %q does not fit %d lines", lines[2], len(doc))
	}
	for i, l := range old {
		if doc[at+i] != l {
			return "", fmt.Errorf("hunk %q: line %d is %q, the diff removes %q", lines[2], at+i+1, doc[at+i], l)
		}
	}
	out := append(append(append([]string(nil), doc[:at]...), new...), doc[at+b:]...)
	return strings.Join(out, ""), nil
}

func ms(t time.Time) int { return int(t.UnixMilli()) }

func itoa(i int) string { return strconv.Itoa(i) }
