package editorstate

import (
	"strings"
	"testing"
	"time"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/document"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
)

type byteReader struct{ b []byte }

func (r *byteReader) next() int {
	if len(r.b) == 0 {
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return int(v)
}

var fuzzFragments = []string{"", "a", "é", "𐐀", "\n", "\r\n", "\r", "日本\n", "x\ny\n", "  ", "func f() {\n", "}"}

func hasLoneCR(t string) bool { return strings.Count(t, "\r") != strings.Count(t, "\r\n") }

// FuzzChanged applies random changes through document.Apply and State.Changed, with focus
// changes, cursors and pauses in between, and checks that nothing panics, that everything stays
// within its limits, that the entry being built matches the text, and (when no entry was dropped
// or summarized) that the rendered history, applied to the first text, gives the last.
func FuzzChanged(f *testing.F) {
	f.Add("", []byte{})
	f.Add("hello\nworld\n", []byte{3, 0, 1, 2, 1, 0, 1, 2, 2, 1, 1, 3, 0, 0, 4, 4, 5, 0})
	f.Add("a\r\nb\r\nc", []byte{7, 1, 1, 0, 1, 1, 5, 2, 10, 3, 1, 12, 0, 2, 0, 2, 6})
	f.Add("日本語\n𐐀x\n", []byte{0, 0, 1, 1, 1, 1, 3, 11, 0, 0, 0, 0, 0, 0, 2, 13, 2, 2})
	f.Add(strings.Repeat("line\n", 40), []byte{1, 0, 20, 2, 20, 2, 9, 0, 20, 3, 20, 3, 9, 12, 0, 1, 1, 1, 1, 8})
	f.Fuzz(func(t *testing.T, initial string, script []byte) {
		r := &byteReader{b: script}
		lim := Limits{EditHistory: 64, UserActions: 32, EntryBytes: 32 << (r.next() % 8)}
		s := New(lim)
		now := t0
		s.SetClock(func() time.Time { return now })
		const uri, other = "file:///w/fuzz.txt", "file:///w/other.txt"
		m := encoding.NewMapper(initial)
		otherM := encoding.NewMapper("other\n")
		s.Opened(&document.Snapshot{URI: uri, Mapper: m})
		s.Opened(&document.Snapshot{URI: other, Mapper: otherM})
		loneCR := hasLoneCR(initial)
		pos := func() encoding.Position {
			return encoding.Position{Line: r.next() % (m.LineCount() + 1), Character: r.next() % 8}
		}
		for step := 0; len(r.b) > 0 && step < 64; step++ {
			now = now.Add(time.Duration(r.next()%8) * 200 * time.Millisecond)
			var changes []document.Change
			switch op := r.next() % 16; {
			case op < 10:
				for range 1 + r.next()%3 {
					a, b := pos(), pos()
					if b.Line < a.Line || b.Line == a.Line && b.Character < a.Character {
						a, b = b, a
					}
					text := fuzzFragments[r.next()%len(fuzzFragments)] + fuzzFragments[r.next()%len(fuzzFragments)]
					changes = append(changes, document.Change{Range: &encoding.Range{Start: a, End: b}, Text: text})
				}
			case op < 12:
				t := m.Text()
				at := r.next() * len(t) / 256
				changes = append(changes, document.Change{Text: t[:at] + fuzzFragments[r.next()%len(fuzzFragments)] + t[at:]})
			case op == 12:
				s.Focused(other, otherM, 0, true, &LineRange{0, r.next()})
				s.Focused(uri, m, r.next()*m.Len()/256, true, nil)
			case op == 13:
				s.Cursor(uri, m, r.next()*m.Len()/256)
			default:
				now = now.Add(time.Duration(r.next()) * 100 * time.Millisecond)
			}
			if len(changes) == 0 {
				continue
			}
			next, applied, err := document.Apply(m, changes, encoding.UTF16)
			if err != nil {
				continue
			}
			s.Changed(uri, applied)
			m = next
			loneCR = loneCR || hasLoneCR(m.Text())

			if g := s.open; g != nil && !g.large {
				end := g.start + g.newLines
				if end > m.LineCount() || m.Text()[m.LineStart(g.start):lineEnd(m, end)] != g.new {
					t.Fatalf("the open entry %+v does not match the text %q", *g, m.Text())
				}
			}
		}

		snap := &document.Snapshot{URI: uri, Mapper: m}
		for _, k := range []encoding.Kind{encoding.UTF8, encoding.UTF16, encoding.UTF32} {
			ctx := s.Context(Request{
				Want: allKeys, Snap: snap, Cursor: m.Len() / 2,
				Open: []*document.Snapshot{snap, {URI: other, Mapper: otherM}}, Agent: k, Editor: encoding.UTF16,
				Extra: []Diagnostic{{Range: encoding.Range{End: encoding.Position{Line: 1 << 20}}, Message: "all"}},
			})
			if ctx == nil {
				continue
			}
			if len(ctx.EditHistory) > defaultHistoryMax || len(ctx.UserActions) > defaultActionsMax {
				t.Fatalf("%d entries and %d actions in the context", len(ctx.EditHistory), len(ctx.UserActions))
			}
			for _, e := range ctx.EditHistory {
				if len(e.Diff) > 2*lim.EntryBytes+1024 {
					t.Fatalf("a diff of %d bytes with EntryBytes %d", len(e.Diff), lim.EntryBytes)
				}
			}
		}
		entries, bytes, actions := s.heldBytes()
		if entries > lim.EditHistory || bytes > lim.EditHistory*lim.EntryBytes || actions > lim.UserActions {
			t.Fatalf("%d entries, %d bytes, %d actions", entries, bytes, actions)
		}
		large := false
		for i := range s.history.len() {
			g := s.history.at(i)
			large = large || g.large
			if g.size() > lim.EntryBytes {
				t.Fatalf("an entry of %d bytes", g.size())
			}
		}
		if large || loneCR || entries == lim.EditHistory {
			return
		}
		ctx := s.Context(Request{Want: Want{EditHistory: true, HistoryMax: lim.EditHistory}})
		var diffs []string
		if ctx != nil {
			for _, e := range ctx.EditHistory {
				diffs = append(diffs, e.Diff)
			}
		}
		checkRoundTrip(t, initial, m.Text(), diffs)
	})
}
