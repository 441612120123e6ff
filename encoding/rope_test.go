package encoding

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// tinyRope makes leaves of at most 3 bytes and nodes of at most 3 children until the test ends,
// so that short texts build deep ropes. Tests that call it must not run in parallel.
func tinyRope(t testing.TB) {
	leaf, nodes := leafMax, nodeMax
	leafMax, nodeMax = 3, 3
	t.Cleanup(func() { leafMax, nodeMax = leaf, nodes })
}

// checkRope fails unless the rope under root keeps its invariants: no empty leaf, no leaf boundary
// inside "\r\n", every child one lower than its parent, counts that add up, and no more than
// nodeMax children.
func checkRope(t testing.TB, root *node) {
	t.Helper()
	var leaves []string
	var walk func(n *node)
	walk = func(n *node) {
		if n.height == 0 {
			if n.chunk == "" {
				t.Fatalf("empty leaf")
			}
			if n.bytes != len(n.chunk) || n.breaks != countBreaks(n.chunk) || n.nonASCII != countNonASCII(n.chunk) || n.leaves != 1 {
				t.Fatalf("leaf %q: counts %d/%d/%d/%d", n.chunk, n.bytes, n.breaks, n.nonASCII, n.leaves)
			}
			leaves = append(leaves, n.chunk)
			return
		}
		if len(n.kids) > nodeMax {
			t.Fatalf("node with %d children, at most %d", len(n.kids), nodeMax)
		}
		want := newInner(n.height, n.kids)
		if n.bytes != want.bytes || n.breaks != want.breaks || n.nonASCII != want.nonASCII || n.leaves != want.leaves {
			t.Fatalf("node counts %d/%d/%d/%d, its children add up to %d/%d/%d/%d",
				n.bytes, n.breaks, n.nonASCII, n.leaves, want.bytes, want.breaks, want.nonASCII, want.leaves)
		}
		for _, k := range n.kids {
			if k.height != n.height-1 {
				t.Fatalf("child of height %d under a node of height %d", k.height, n.height)
			}
			walk(k)
		}
	}
	walk(root)
	for i := 1; i < len(leaves); i++ {
		if strings.HasSuffix(leaves[i-1], "\r") && strings.HasPrefix(leaves[i], "\n") {
			t.Fatalf("a leaf boundary splits \"\\r\\n\": %q | %q", leaves[i-1], leaves[i])
		}
	}
}

// TestRopeRandomEdits applies random edits, one after the other, to a deep rope and checks every
// version against a mapper built from scratch: text, line starts, LineOf, ByteAt, Slice. Earlier
// versions must not change.
func TestRopeRandomEdits(t *testing.T) {
	for _, tiny := range []bool{true, false} {
		if tiny {
			tinyRope(t)
		}
		rng := rand.New(rand.NewPCG(1, uint64(len(t.Name()))))
		pieces := []string{"a", "bc", "\n", "\r", "\r\n", "é", "日本", "😀", "\xff", "\xe6\x97", "line\n", "\n\n\r"}
		randText := func(n int) string {
			var b strings.Builder
			for range n {
				b.WriteString(pieces[rng.IntN(len(pieces))])
			}
			return b.String()
		}
		text := randText(40)
		m := NewMapper(text)
		type version struct {
			m    *Mapper
			text string
		}
		var versions []version
		for i := range 600 {
			start := rng.IntN(len(text) + 1)
			end := min(len(text), start+rng.IntN(8))
			if i%50 == 0 {
				end = min(len(text), start+rng.IntN(len(text)+1)) // now and then a large deletion
			}
			insert := randText(rng.IntN(4))
			if i%97 == 0 {
				insert = randText(60) // and a paste
			}
			m = m.Edit(start, end, insert)
			text = text[:start] + insert + text[end:]
			checkRope(t, m.root())
			if diff := sameMapper(m, text); diff != "" {
				t.Fatalf("tiny %v, edit %d (%d, %d, %q): %s", tiny, i, start, end, insert, diff)
			}
			checkQueries(t, m, text)
			versions = append(versions, version{m, text})
		}
		for i, v := range versions {
			if got := v.m.Text(); got != v.text {
				t.Fatalf("tiny %v: version %d changed after later edits: %q, want %q", tiny, i, got, v.text)
			}
		}
	}
}

// checkQueries compares LineOf, ByteAt, Slice and Equal on m with the answers for text.
func checkQueries(t *testing.T, m *Mapper, text string) {
	t.Helper()
	// A fresh mapper from the same edits, so that Text has not been joined and Slice walks leaves.
	r := fromRope(m.root())
	starts, _ := refStarts(text)
	line := 0
	for off := 0; off <= len(text); off++ {
		for line+1 < len(starts) && starts[line+1] <= off {
			line++
		}
		if got := r.LineOf(off); got != line {
			t.Fatalf("LineOf(%d) = %d, want %d in %q", off, got, line, text)
		}
		if off < len(text) && r.ByteAt(off) != text[off] {
			t.Fatalf("ByteAt(%d) = %q, want %q", off, r.ByteAt(off), text[off])
		}
		end := min(len(text), off+off%7)
		if got := r.Slice(off, end); got != text[off:end] {
			t.Fatalf("Slice(%d, %d) = %q, want %q", off, end, got, text[off:end])
		}
	}
	if !r.Equal(NewMapper(text)) || !NewMapper(text).Equal(r) {
		t.Fatalf("Equal: false for the same text %q", text)
	}
	if len(text) > 0 && r.Equal(NewMapper(text[1:]+"x")) {
		t.Fatalf("Equal: true for a different text")
	}
}

// TestRopeStaysShallow builds a large text one keystroke at a time and deletes it back in pieces:
// the rope must stay about as deep as one built at once.
func TestRopeStaysShallow(t *testing.T) {
	tinyRope(t)
	m := NewMapper("")
	var text strings.Builder
	rng := rand.New(rand.NewPCG(2, 3))
	for range 3000 {
		off := rng.IntN(m.Len() + 1)
		m = m.Edit(off, off, "ab\n")
		text.WriteString("ab\n")
	}
	fresh := NewMapper(m.Text())
	if m.root().height > fresh.root().height+2 {
		t.Errorf("after 3000 insertions the rope is %d deep; one built at once is %d", m.root().height, fresh.root().height)
	}
	for m.Len() > 0 {
		off := rng.IntN(m.Len())
		m = m.Edit(off, min(m.Len(), off+rng.IntN(40)+1), "")
		checkRope(t, m.root())
		if n := NewMapper(m.Text()); m.root().height > n.root().height+2 {
			t.Fatalf("after deletions down to %d bytes the rope is %d deep; one built at once is %d", m.Len(), m.root().height, n.root().height)
		}
	}
	if m.LineCount() != 1 || m.Text() != "" {
		t.Errorf("empty rope: %d lines, text %q", m.LineCount(), m.Text())
	}
}
