package encoding

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// The text of a Mapper is a rope: an immutable B+tree whose leaves hold the text in chunks. Every
// node knows its size in bytes, its line breaks and its non-ASCII bytes, so a position converts by
// walking down one path, and an edit builds a new path to new leaves while sharing every other node
// with the text before it. A keystroke in a 10 MB document therefore costs about what it costs in
// a 100 KB one, and a snapshot taken before the edit stays valid.
//
// Two invariants keep the counts local to a leaf: a leaf is never empty, and no leaf boundary
// falls between a "\r" and the "\n" after it. A line break is the byte that ends a line: every
// "\n", and every "\r" not followed by "\n". Line n (n >= 1) starts just after the n-th break.

// leafMax is the size a leaf is split at; nodeMax the most children an inner node has. They are
// variables so that tests can make them tiny and exercise deep trees with short texts.
var (
	leafMax = 4096
	nodeMax = 16
)

type node struct {
	bytes, breaks, nonASCII int
	leaves                  int // leaves under this node; 1 for a leaf
	height                  int // 0 for a leaf; every child of a node is one lower
	chunk                   string
	at                      []uint16 // a leaf's line breaks: their indexes in chunk (leafMax < 1<<16)
	kids                    []*node  // never appended to in place: nodes are shared between texts
}

func newLeaf(s string) *node {
	n := &node{bytes: len(s), nonASCII: countNonASCII(s), leaves: 1, chunk: s}
	if k := countBreaks(s); k > 0 {
		n.breaks = k
		n.at = make([]uint16, 0, k)
		for i := 0; ; i++ {
			j := strings.IndexAny(s[i:], "\r\n")
			if j < 0 {
				break
			}
			i += j
			if !(s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n') {
				n.at = append(n.at, uint16(i))
			}
		}
	}
	return n
}

func newInner(height int, kids []*node) *node {
	n := &node{height: height, kids: kids}
	for _, k := range kids {
		n.bytes += k.bytes
		n.breaks += k.breaks
		n.nonASCII += k.nonASCII
		n.leaves += k.leaves
	}
	return n
}

// countBreaks counts the line breaks in s, taking a "\r" at its end for a lone one.
func countBreaks(s string) int {
	n := strings.Count(s, "\n")
	if strings.IndexByte(s, '\r') >= 0 {
		n += strings.Count(s, "\r") - strings.Count(s, "\r\n")
	}
	return n
}

// chunk splits s into leaves of about equal size, at most leafMax bytes (one more where that keeps
// a "\r\n" together), moving each cut back to the start of a UTF-8 sequence where it can.
func chunk(s string, out []*node) []*node {
	for n := (len(s) + leafMax - 1) / leafMax; len(s) > 0; n-- {
		size := len(s)
		if n > 1 {
			size = len(s) / n
			for i := 0; i < utf8.UTFMax-1 && size > 1 && !utf8.RuneStart(s[size]); i++ {
				size--
			}
			if s[size-1] == '\r' && s[size] == '\n' {
				size++
			}
		}
		out = append(out, newLeaf(s[:size]))
		s = s[size:]
	}
	return out
}

// group makes inner nodes of height from nodes one lower, as few as nodeMax allows, of about
// equal size.
func group(height int, nodes []*node) []*node {
	n := (len(nodes) + nodeMax - 1) / nodeMax
	out := make([]*node, 0, n)
	for ; len(nodes) > 0; n-- {
		size := (len(nodes) + n - 1) / n
		out = append(out, newInner(height, nodes[:size:size]))
		nodes = nodes[size:]
	}
	return out
}

// build returns the root over nodes of height-1, grouping them until one node is left.
func build(height int, nodes []*node) *node {
	for len(nodes) > nodeMax {
		nodes = group(height, nodes)
		height++
	}
	return newInner(height, nodes)
}

// newRope returns the root of a rope holding text. Its leaves are substrings of text.
func newRope(text string) *node {
	return build(1, chunk(text, make([]*node, 0, (len(text)+leafMax-1)/leafMax)))
}

// leafAt returns the leaf holding byte offset off, in [0, n.bytes), with its index and offset.
func (n *node) leafAt(off int) (leaf *node, index, start int) {
	leaf, index, start, _ = n.leafAndBreaksAt(off)
	return leaf, index, start
}

// leafAndBreaksAt is leafAt, also counting the line breaks in the leaves before the leaf.
func (n *node) leafAndBreaksAt(off int) (leaf *node, index, start, breaks int) {
	for n.height > 0 {
		last := len(n.kids) - 1
		for i, k := range n.kids {
			if off < k.bytes || i == last {
				n = k
				break
			}
			off -= k.bytes
			start += k.bytes
			index += k.leaves
			breaks += k.breaks
		}
	}
	return n, index, start, breaks
}

// each calls fn with the chunks of the leaves that overlap [a, b), trimmed to it, in order.
func (n *node) each(a, b int, fn func(string)) {
	if n.height == 0 {
		fn(n.chunk[max(a, 0):min(b, n.bytes)])
		return
	}
	for _, k := range n.kids {
		if a < k.bytes && b > 0 {
			k.each(a, b, fn)
		}
		a -= k.bytes
		b -= k.bytes
		if b <= 0 {
			return
		}
	}
}

// slice returns the bytes [a, b): a substring of one leaf when they lie in one.
func (n *node) slice(a, b int) string {
	if a == b {
		return ""
	}
	if leaf, _, start := n.leafAt(a); b-start <= leaf.bytes {
		return leaf.chunk[a-start : b-start]
	}
	var sb strings.Builder
	sb.Grow(b - a)
	n.each(a, b, func(s string) { sb.WriteString(s) })
	return sb.String()
}

// child returns the child that holds leaf index i, and the index of its first leaf; for i equal
// to n.leaves, the last child.
func (n *node) child(i int) (c, first int) {
	for c = 0; c < len(n.kids)-1 && i >= first+n.kids[c].leaves; c++ {
		first += n.kids[c].leaves
	}
	return c, first
}

// replace returns the nodes, of n's height, that hold n's leaves with those in [i, j) replaced by
// leaves. Nodes it leaves with few children are joined with a neighbour, so the tree stays shallow.
func (n *node) replace(i, j int, leaves []*node) []*node {
	var kids []*node
	if n.height == 1 {
		kids = make([]*node, 0, len(n.kids)-(j-i)+len(leaves))
		kids = append(append(append(kids, n.kids[:i]...), leaves...), n.kids[j:]...)
	} else {
		ci, fi := n.child(i)
		cj, fj := ci, fi
		if j > i {
			cj, fj = n.child(j - 1)
		}
		var mid []*node
		if ci == cj {
			mid = n.kids[ci].replace(i-fi, j-fi, leaves)
		} else {
			mid = append(n.kids[ci].replace(i-fi, n.kids[ci].leaves, leaves), n.kids[cj].replace(0, j-fj, nil)...)
		}
		lo, hi := ci, cj+1 // n.kids[lo:hi] become mid
		if small(mid) {
			// Join the new children with a neighbour and share their grandchildren out again.
			if lo > 0 {
				lo--
				mid = append([]*node{n.kids[lo]}, mid...)
			} else if hi < len(n.kids) {
				mid = append(mid, n.kids[hi])
				hi++
			}
			var grand []*node
			for _, m := range mid {
				grand = append(grand, m.kids...)
			}
			mid = group(n.height-1, grand)
		}
		kids = make([]*node, 0, len(n.kids)-(hi-lo)+len(mid))
		kids = append(append(append(kids, n.kids[:lo]...), mid...), n.kids[hi:]...)
	}
	switch {
	case len(kids) == 0:
		return nil
	case len(kids) <= nodeMax:
		return []*node{newInner(n.height, kids)}
	}
	return group(n.height, kids)
}

// small reports whether any of nodes has fewer than a quarter of nodeMax children.
func small(nodes []*node) bool {
	for _, m := range nodes {
		if len(m.kids) < max(nodeMax/4, 2) {
			return true
		}
	}
	return false
}

// edit returns the root of the text with the bytes [start, end) replaced by text. The leaves from
// the one holding the byte before start to the one holding the byte at end are cut again with the
// edit applied, so a "\r" and a "\n" that meet at either edge end up in one leaf, and leaves
// that deletions left small are joined with their neighbours.
func (n *node) edit(start, end int, text string) *node {
	i, j, from, to := 0, 0, 0, 0 // leaves [i, j), bytes [from, to)
	if n.bytes > 0 {
		_, i, from = n.leafAt(max(start-1, 0))
		last, k, lastStart := n.leafAt(min(end, n.bytes-1))
		j, to = k+1, lastStart+last.bytes
	}
	old := n.slice(from, to)
	leaves := chunk(old[:start-from]+text+old[end-from:], nil)
	out := n.replace(i, j, leaves)
	switch len(out) {
	case 0:
		return newInner(1, nil)
	case 1:
		r := out[0]
		for r.height > 1 && len(r.kids) == 1 {
			r = r.kids[0]
		}
		return r
	}
	return build(n.height+1, out)
}

// byteAt returns the byte at offset off, in [0, n.bytes).
func (n *node) byteAt(off int) byte {
	leaf, _, start := n.leafAt(off)
	return leaf.chunk[off-start]
}

// breakAt returns the leaf that holds the k-th line break (k in [1, n.breaks]), the leaf's
// offset, and the break's index in the leaf.
func (n *node) breakAt(k int) (leaf *node, start, index int) {
	for n.height > 0 {
		for _, c := range n.kids {
			if k <= c.breaks {
				n = c
				break
			}
			k -= c.breaks
			start += c.bytes
		}
	}
	return n, start, int(n.at[k-1])
}

// breaksBefore returns the number of line breaks among the bytes before off, in [0, n.bytes].
func (n *node) breaksBefore(off int) int {
	if off == 0 {
		return 0
	}
	leaf, _, start, count := n.leafAndBreaksAt(off - 1)
	// The leaf's breaks at indexes up to that of the byte before off. A "\r" there is one only
	// when the next byte, in the same leaf, is not "\n"; the index lists only such.
	i, _ := slices.BinarySearch(leaf.at, uint16(off-start))
	return count + i
}
