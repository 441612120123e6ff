package document_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/document"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
)

var kinds = []encoding.Kind{encoding.UTF8, encoding.UTF16, encoding.UTF32}

func rng(l1, c1, l2, c2 int) *encoding.Range {
	return &encoding.Range{
		Start: encoding.Position{Line: l1, Character: c1},
		End:   encoding.Position{Line: l2, Character: c2},
	}
}

// checkMapper fails unless m indexes text exactly as a fresh mapper would.
func checkMapper(t *testing.T, m *encoding.Mapper, text string) {
	t.Helper()
	want := encoding.NewMapper(text)
	if m.Text() != text {
		t.Fatalf("text = %q; want %q", m.Text(), text)
	}
	if m.LineCount() != want.LineCount() {
		t.Fatalf("LineCount() = %d; want %d", m.LineCount(), want.LineCount())
	}
	for line := 0; line < want.LineCount(); line++ {
		if m.LineStart(line) != want.LineStart(line) {
			t.Fatalf("LineStart(%d) = %d; want %d", line, m.LineStart(line), want.LineStart(line))
		}
	}
}

func TestApply(t *testing.T) {
	// The same edits in each encoding: "𐐀" is 4 bytes, 2 utf-16 units, 1 code point.
	cols := map[encoding.Kind]int{encoding.UTF8: 4, encoding.UTF16: 2, encoding.UTF32: 1}
	for _, k := range kinds {
		c := cols[k]
		m := encoding.NewMapper("𐐀ab\r\n𐐀cd")
		changes := []document.Change{
			// Replace "a" on line 0.
			{Range: rng(0, c, 0, c+1), Text: "X"},
			// Refers to the text after the first change: "𐐀Xb\r\n𐐀cd". Join the lines.
			{Range: rng(0, c+2, 1, 0), Text: ""},
			// Now "𐐀Xb𐐀cd": insert a line break after the second 𐐀.
			{Range: rng(0, 2*c+2, 0, 2*c+2), Text: "\n"},
			// Now "𐐀Xb𐐀\ncd": append at the end, addressed as (lineCount, 0).
			{Range: rng(2, 0, 2, 0), Text: "!"},
		}
		got, applied, err := document.Apply(m, changes, k)
		if err != nil {
			t.Fatalf("%v: Apply: %v", k, err)
		}
		checkMapper(t, got, "𐐀Xb𐐀\ncd!")
		want := []struct{ start, end int }{{4, 5}, {6, 8}, {10, 10}, {13, 13}}
		if len(applied) != len(want) {
			t.Fatalf("%v: %d changes applied; want %d", k, len(applied), len(want))
		}
		for i, a := range applied {
			if a.Start != want[i].start || a.End != want[i].end || a.Text != changes[i].Text || a.Full {
				t.Errorf("%v: applied[%d] = [%d, %d) %q full=%v; want [%d, %d) %q", k, i, a.Start, a.End, a.Text, a.Full, want[i].start, want[i].end, changes[i].Text)
			}
		}
		if applied[0].Before != m || applied[1].Before.Text() != "𐐀Xb\r\n𐐀cd" {
			t.Errorf("%v: Before of the changes are not the texts they applied to", k)
		}
		checkMapper(t, m, "𐐀ab\r\n𐐀cd") // the original mapper is immutable
	}
}

func TestApplyFull(t *testing.T) {
	m := encoding.NewMapper("old\ntext")
	got, applied, err := document.Apply(m, []document.Change{
		{Range: rng(0, 0, 0, 3), Text: "new"},
		{Text: "replaced\r\nall"},
		{Range: rng(1, 0, 1, 0), Text: ">"},
	}, encoding.UTF16)
	if err != nil {
		t.Fatal(err)
	}
	checkMapper(t, got, "replaced\r\n>all")
	if a := applied[1]; !a.Full || a.Start != 0 || a.End != len("new\ntext") || a.Before.Text() != "new\ntext" {
		t.Errorf("full change applied as %+v", a)
	}
	if got, _, err := document.Apply(m, nil, encoding.UTF16); err != nil || got != m {
		t.Errorf("Apply with no changes = %v, %v; want the same mapper", got, err)
	}
}

func TestApplyErrors(t *testing.T) {
	m := encoding.NewMapper("ab\ncd")
	for _, tc := range []struct {
		name    string
		changes []document.Change
	}{
		{"line beyond the end", []document.Change{{Range: rng(3, 0, 3, 0), Text: "x"}}},
		{"negative line", []document.Change{{Range: rng(-1, 0, 0, 0), Text: "x"}}},
		{"negative character", []document.Change{{Range: rng(0, -1, 0, 0), Text: "x"}}},
		{"start after end", []document.Change{{Range: rng(1, 0, 0, 0), Text: "x"}}},
		{"second change out of range", []document.Change{
			{Range: rng(0, 0, 0, 0), Text: "ok"},
			{Range: rng(0, 0, 5, 0), Text: "x"},
		}},
		{"out of range after a full replacement", []document.Change{
			{Text: "one line"},
			{Range: rng(2, 0, 2, 0), Text: "x"},
		}},
	} {
		for _, k := range kinds {
			got, applied, err := document.Apply(m, tc.changes, k)
			if !errors.Is(err, encoding.ErrOutOfRange) || got != nil || applied != nil {
				t.Errorf("%s, %v: Apply = %v, %v, %v; want ErrOutOfRange", tc.name, k, got, applied, err)
			}
		}
	}
}

func TestStore(t *testing.T) {
	s := document.NewStore()
	const uri = "file:///tmp/x%20y.go"
	if _, ok := s.Get(uri); ok {
		t.Fatal("Get on an empty store found a document")
	}

	// Change on a document that is not open.
	if _, _, _, err := s.Change(uri, 2, []document.Change{{Text: "x"}}, encoding.UTF16); !errors.Is(err, document.ErrNotOpen) {
		t.Fatalf("Change before Open: error = %v; want ErrNotOpen", err)
	}

	snap, reopened := s.Open(uri, "go", 1, "package x\n\nfunc 𐐀() {}\n")
	if reopened || snap.URI != uri || snap.LanguageID != "go" || snap.Version != 1 || snap.Text() != "package x\n\nfunc 𐐀() {}\n" {
		t.Fatalf("Open = %+v, %v", snap, reopened)
	}
	if got, ok := s.Get(uri); !ok || got != snap {
		t.Fatalf("Get after Open = %v, %v; want the opened snapshot", got, ok)
	}

	// Several changes in one notification, each relative to the previous result (utf-16 columns:
	// 𐐀 is two units).
	before, after, applied, err := s.Change(uri, 2, []document.Change{
		{Range: rng(2, 5, 2, 7), Text: "Name"},    // "func Name() {}"
		{Range: rng(2, 10, 2, 10), Text: "a int"}, // "func Name(a int) {}"
		{Range: rng(1, 0, 1, 0), Text: "// é\n"},
	}, encoding.UTF16)
	if err != nil {
		t.Fatalf("Change: %v", err)
	}
	wantText := "package x\n// é\n\nfunc Name(a int) {}\n"
	if before != snap || after.Version != 2 || after.URI != uri || after.LanguageID != "go" || len(applied) != 3 {
		t.Fatalf("Change = %+v, %+v, %d applied", before, after, len(applied))
	}
	checkMapper(t, after.Mapper, wantText)
	if snap.Text() != "package x\n\nfunc 𐐀() {}\n" {
		t.Fatalf("the old snapshot changed: %q", snap.Text())
	}
	if got, _ := s.Get(uri); got != after {
		t.Fatal("Get after Change does not return the new snapshot")
	}

	// A change without a range replaces everything.
	_, after, applied, err = s.Change(uri, 3, []document.Change{{Text: "all new"}}, encoding.UTF16)
	if err != nil || after.Text() != "all new" || !applied[0].Full {
		t.Fatalf("full Change = %+v, %+v, %v", after, applied, err)
	}

	// An out-of-range change fails and leaves the document as it was.
	cur := after
	before, after, applied, err = s.Change(uri, 4, []document.Change{
		{Range: rng(0, 0, 0, 0), Text: "applied first"},
		{Range: rng(5, 0, 5, 0), Text: "x"},
	}, encoding.UTF16)
	if !errors.Is(err, encoding.ErrOutOfRange) || after != nil || applied != nil {
		t.Fatalf("out-of-range Change = %v, %v, %v; want ErrOutOfRange", after, applied, err)
	}
	if before != cur {
		t.Errorf("out-of-range Change returned %v as before; want the current snapshot", before)
	}
	if got, _ := s.Get(uri); got != cur || got.Version != 3 || got.Text() != "all new" {
		t.Fatalf("after a failed Change the document is %+v", got)
	}

	// A second document, and All in URI order.
	s.Open("file:///a.txt", "plaintext", 7, "")
	all := s.All()
	if len(all) != 2 || all[0].URI != "file:///a.txt" || all[1].URI != uri {
		t.Fatalf("All = %v", all)
	}

	// Reopen replaces the document.
	snap, reopened = s.Open(uri, "go", 10, "reopened")
	if !reopened || snap.Version != 10 {
		t.Fatalf("second Open = %+v, %v; want reopened", snap, reopened)
	}
	if got, _ := s.Get(uri); got.Text() != "reopened" {
		t.Fatalf("after reopen the text is %q", got.Text())
	}

	// Close returns the last snapshot and forgets the document.
	closed, ok := s.Close(uri)
	if !ok || closed != snap {
		t.Fatalf("Close = %v, %v", closed, ok)
	}
	if _, ok := s.Get(uri); ok {
		t.Fatal("Get after Close found the document")
	}
	if _, ok := s.Close(uri); ok {
		t.Fatal("second Close found the document")
	}
	if _, _, _, err := s.Change(uri, 11, []document.Change{{Text: "x"}}, encoding.UTF16); !errors.Is(err, document.ErrNotOpen) {
		t.Fatalf("Change after Close: error = %v; want ErrNotOpen", err)
	}
	if all := s.All(); len(all) != 1 {
		t.Fatalf("All after Close = %v", all)
	}

	// Reopen after close is a fresh open.
	if _, reopened := s.Open(uri, "go", 1, "again"); reopened {
		t.Fatal("Open after Close reported reopened")
	}
}

func TestStoreConcurrent(t *testing.T) {
	s := document.NewStore()
	var wg sync.WaitGroup
	for w := range 8 {
		uri := fmt.Sprintf("file:///%d", w)
		s.Open(uri, "text", 0, "")
		wg.Add(1)
		go func() {
			defer wg.Done()
			for v := 1; v <= 200; v++ {
				_, _, _, err := s.Change(uri, v, []document.Change{{Range: rng(v-1, 0, v-1, 0), Text: "x\n"}}, encoding.UTF16)
				if err != nil {
					t.Error(err)
					return
				}
				s.Get(uri)
				s.All()
			}
		}()
	}
	wg.Wait()
	for _, snap := range s.All() {
		if snap.Version != 200 || snap.Text() != strings.Repeat("x\n", 200) {
			t.Errorf("%s: version %d, %d bytes", snap.URI, snap.Version, len(snap.Text()))
		}
	}
}

// refLine is one line of the reference model: the byte offsets of its content.
type refLine struct{ start, end int }

// refLines splits text into lines by walking it one rune at a time.
func refLines(text string) []refLine {
	var lines []refLine
	start := 0
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		switch {
		case r == '\r' && i+1 < len(text) && text[i+1] == '\n':
			lines = append(lines, refLine{start, i})
			i += 2
			start = i
		case r == '\n' || r == '\r':
			lines = append(lines, refLine{start, i})
			i++
			start = i
		default:
			i += size
		}
	}
	return append(lines, refLine{start, len(text)})
}

// refWidth is the width of one decoded rune in encoding k.
func refWidth(r rune, size int, k encoding.Kind) int {
	switch k {
	case encoding.UTF8:
		return size
	case encoding.UTF16:
		if size == 4 { // only a valid supplementary-plane character takes four bytes
			return 2
		}
	}
	return 1
}

// refOffset converts a position the slow way, rune by rune.
func refOffset(text string, p encoding.Position, k encoding.Kind) (int, bool) {
	lines := refLines(text)
	switch {
	case p.Line < 0 || p.Character < 0 || p.Line > len(lines):
		return 0, false
	case p.Line == len(lines):
		return len(text), true
	}
	ln := lines[p.Line]
	units, off := 0, ln.start
	for off < ln.end {
		r, size := utf8.DecodeRuneInString(text[off:ln.end])
		w := refWidth(r, size, k)
		if units+w > p.Character {
			break
		}
		units += w
		off += size
	}
	return off, true
}

// refApply applies changes to text the slow way. It reports false when a change is out of range.
func refApply(text string, changes []document.Change, k encoding.Kind) (string, [][2]int, bool) {
	var offsets [][2]int
	for _, c := range changes {
		if c.Range == nil {
			offsets = append(offsets, [2]int{0, len(text)})
			text = c.Text
			continue
		}
		start, ok1 := refOffset(text, c.Range.Start, k)
		end, ok2 := refOffset(text, c.Range.End, k)
		if !ok1 || !ok2 || start > end {
			return "", nil, false
		}
		offsets = append(offsets, [2]int{start, end})
		text = text[:start] + c.Text + text[end:]
	}
	return text, offsets, true
}

// fragments are the pieces inserted texts are made of.
var fragments = []string{"", "x", "yz", "\n", "\r", "\r\n", "𐐀", "é", "日本", "e\u0301", "👩\u200d💻", "\xff", "\xc3", "\xa9", "\ufffd", "\t  ", "\n\n"}

// fuzzReader hands out the bytes of a fuzz input, then zeros.
type fuzzReader struct{ b []byte }

func (r *fuzzReader) next() int {
	if len(r.b) == 0 {
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return int(v)
}

// position picks a position near the text: mostly inside it, sometimes past the end of a line or
// of the text, rarely negative.
func (r *fuzzReader) position(lineCount int) encoding.Position {
	line := r.next() % (lineCount + 2)
	char := r.next() % 12
	switch r.next() % 16 {
	case 0:
		line = -1
	case 1:
		char = -1
	case 2:
		char = 1 << 40
	}
	return encoding.Position{Line: line, Character: char}
}

// FuzzApply applies random change sequences, split into notifications, through a Store and
// against the rune-by-rune reference, in each encoding.
func FuzzApply(f *testing.F) {
	f.Add("", []byte{}, byte(0))
	f.Add("hello\nworld\n", []byte{1, 0, 2, 3, 1, 3, 5, 6, 1}, byte(1))
	f.Add("𐐀23\n𐐀45", []byte{0, 1, 5, 0, 1, 5, 7, 6, 0, 2, 1, 2, 3, 4}, byte(1))
	f.Add("a\r\nb\rc\n", []byte{1, 0, 9, 5, 1, 0, 5, 4, 2, 2, 0, 1, 0, 0, 7, 1}, byte(0))
	f.Add("日本語\ne\u0301\n👩\u200d💻\xff", []byte{9, 2, 2, 7, 2, 3, 7, 9, 0, 0, 4, 12, 1, 1, 3, 2, 2, 2}, byte(2))
	f.Add("x", []byte{3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3}, byte(1))
	f.Fuzz(func(t *testing.T, initial string, script []byte, kindByte byte) {
		k := kinds[int(kindByte)%len(kinds)]
		r := &fuzzReader{b: script}
		s := document.NewStore()
		const uri = "file:///fuzz"
		s.Open(uri, "text", 0, initial)
		text := initial
		for version := 1; len(r.b) > 0 && version <= 16; version++ {
			n := 1 + r.next()%4
			var changes []document.Change
			// The reference tracks the text within the notification to pick positions near it.
			cur := text
			for range n {
				var c document.Change
				frag := r.next()
				c.Text = fragments[frag%len(fragments)] + fragments[(frag/len(fragments))%len(fragments)]
				if r.next()%16 != 0 {
					lc := len(refLines(cur))
					start := r.position(lc)
					end := r.position(lc)
					if r.next()%4 != 0 && (end.Line < start.Line || end.Line == start.Line && end.Character < start.Character) {
						start, end = end, start
					}
					c.Range = &encoding.Range{Start: start, End: end}
				}
				changes = append(changes, c)
				if next, _, ok := refApply(cur, []document.Change{c}, k); ok {
					cur = next
				}
			}

			want, offsets, ok := refApply(text, changes, k)
			old, _ := s.Get(uri)
			before, after, applied, err := s.Change(uri, version, changes, k)
			if !ok {
				if err == nil {
					t.Fatalf("Change(%q, %+v, %v) succeeded with %q; the reference rejects it", text, changes, k, after.Text())
				}
				if got, _ := s.Get(uri); got != old || got.Text() != text {
					t.Fatalf("a failed Change altered the document")
				}
				continue
			}
			if err != nil {
				t.Fatalf("Change(%q, %+v, %v): %v; the reference gives %q", text, changes, k, err, want)
			}
			if before != old || after.Version != version {
				t.Fatalf("Change returned the wrong snapshots")
			}
			checkMapper(t, after.Mapper, want)
			if len(applied) != len(offsets) {
				t.Fatalf("%d changes applied; want %d", len(applied), len(offsets))
			}
			for i, a := range applied {
				if a.Start != offsets[i][0] || a.End != offsets[i][1] || a.Full != (changes[i].Range == nil) {
					t.Fatalf("Change(%q, %+v, %v): change %d applied at [%d, %d); the reference gives [%d, %d)",
						text, changes, k, i, a.Start, a.End, offsets[i][0], offsets[i][1])
				}
			}
			text = want
		}
	})
}
