package model

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent"
)

// lineSpan is one line of a text: [start, end) is its content, [end, next) its line break ("\n",
// "\r\n" or nothing for a last line without one).
type lineSpan struct{ start, end, next int }

// splitLines splits s at "\n" (a "\r" before it belongs to the break). A text ending in a line
// break has no empty last line here.
func splitLines(s string) []lineSpan {
	var out []lineSpan
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] != '\n' {
			continue
		}
		end := i
		if end > start && s[end-1] == '\r' {
			end--
		}
		out = append(out, lineSpan{start, end, i + 1})
		start = i + 1
	}
	if start < len(s) {
		out = append(out, lineSpan{start, len(s), len(s)})
	}
	return out
}

// block is a maximal run of unequal elements in an alignment of two sequences: [a0, a1) of the
// first was replaced by [b0, b1) of the second.
type block struct{ a0, a1, b0, b1 int }

// maxCells bounds the dynamic-programming table of one alignment; beyond it the differing middle
// is one block.
const maxCells = 1 << 22

// diffBlocks aligns two sequences of lengths n and m (a longest common subsequence, eq telling
// whether element i of the first equals element j of the second) and returns the blocks that
// differ, in order.
func diffBlocks(n, m int, eq func(i, j int) bool) []block {
	pre := 0
	for pre < n && pre < m && eq(pre, pre) {
		pre++
	}
	suf := 0
	for suf < n-pre && suf < m-pre && eq(n-1-suf, m-1-suf) {
		suf++
	}
	an, bm := n-pre-suf, m-pre-suf
	switch {
	case an == 0 && bm == 0:
		return nil
	case an == 0 || bm == 0 || an*bm > maxCells:
		return []block{{pre, n - suf, pre, m - suf}}
	}
	// l[i*w+j] is the length of the longest common subsequence of the middles' tails from i and j.
	w := bm + 1
	l := make([]int32, (an+1)*w)
	for i := an - 1; i >= 0; i-- {
		for j := bm - 1; j >= 0; j-- {
			switch {
			case eq(pre+i, pre+j):
				l[i*w+j] = l[(i+1)*w+j+1] + 1
			case l[(i+1)*w+j] >= l[i*w+j+1]:
				l[i*w+j] = l[(i+1)*w+j]
			default:
				l[i*w+j] = l[i*w+j+1]
			}
		}
	}
	var out []block
	var cur block
	open := false
	i, j := 0, 0
	for i < an || j < bm {
		if i < an && j < bm && eq(pre+i, pre+j) {
			if open {
				out = append(out, cur)
				open = false
			}
			i++
			j++
			continue
		}
		if !open {
			cur = block{pre + i, pre + i, pre + j, pre + j}
			open = true
		}
		if j >= bm || (i < an && l[(i+1)*w+j] >= l[i*w+j+1]) {
			i++
			cur.a1 = pre + i
		} else {
			j++
			cur.b1 = pre + j
		}
	}
	if open {
		out = append(out, cur)
	}
	return out
}

// regionEdits turns the rewrite of a region (old, which starts at byte base of the document, into
// new) into minimal edits: the lines that differ are found first (line breaks compare equal
// whether "\n" or "\r\n"), then, inside each differing run of lines, the words, spaces and
// punctuation that differ; short equal stretches between changes are absorbed into one edit, and
// every edit is trimmed to the characters that differ.
func regionEdits(old, new string, base int) []nesagent.TextEdit {
	if old == new {
		return nil
	}
	ol, nl := splitLines(old), splitLines(new)
	key := func(s string, ls []lineSpan) []string {
		out := make([]string, len(ls))
		for i, l := range ls {
			out[i] = s[l.start:l.end]
			if l.next > l.end {
				out[i] += "\n"
			}
		}
		return out
	}
	ok, nk := key(old, ol), key(new, nl)
	at := func(ls []lineSpan, i, total int) int {
		if i < len(ls) {
			return ls[i].start
		}
		return total
	}
	var edits []nesagent.TextEdit
	for _, b := range diffBlocks(len(ok), len(nk), func(i, j int) bool { return ok[i] == nk[j] }) {
		os, oe := at(ol, b.a0, len(old)), at(ol, b.a1, len(old))
		ns, ne := at(nl, b.b0, len(new)), at(nl, b.b1, len(new))
		edits = append(edits, textEdits(old[os:oe], new[ns:ne], base+os)...)
	}
	return edits
}

// hunk is a change of old[oa:ob] into new[na:nb].
type hunk struct{ oa, ob, na, nb int }

// textEdits diffs two texts word by word and returns the edits, at offset base.
func textEdits(old, new string, base int) []nesagent.TextEdit {
	ot, nt := tokenize(old), tokenize(new)
	var hunks []hunk
	for _, b := range diffBlocks(len(ot)-1, len(nt)-1, func(i, j int) bool {
		return old[ot[i]:ot[i+1]] == new[nt[j]:nt[j+1]]
	}) {
		h, ok := core(old, new, hunk{ot[b.a0], ot[b.a1], nt[b.b0], nt[b.b1]})
		if !ok {
			continue
		}
		// Absorb the equal stretch before h when it is no longer than the changes on both sides of
		// it: a rewritten phrase becomes one edit rather than a comb of edits around stray
		// matches of spaces and punctuation.
		for len(hunks) > 0 {
			p := hunks[len(hunks)-1]
			gap := h.oa - p.ob
			if gap > max(p.ob-p.oa, p.nb-p.na) || gap > max(h.ob-h.oa, h.nb-h.na) {
				break
			}
			h = hunk{p.oa, h.ob, p.na, h.nb}
			hunks = hunks[:len(hunks)-1]
		}
		hunks = append(hunks, h)
	}
	edits := make([]nesagent.TextEdit, len(hunks))
	for i, h := range hunks {
		edits[i] = nesagent.TextEdit{Start: base + h.oa, End: base + h.ob, NewText: new[h.na:h.nb]}
	}
	return edits
}

// core narrows a hunk to the characters that differ: the common prefix and suffix go, except
// that a replacement keeps whole words (compute → calc, not ompute → alc) while an insertion or
// a deletion stays as small as it is (log → logf inserts f). ok is false when nothing differs.
func core(old, new string, h hunk) (hunk, bool) {
	o, n := old[h.oa:h.ob], new[h.na:h.nb]
	p := encoding.CommonPrefix(o, n)
	s := encoding.CommonSuffix(o[p:], n[p:])
	if p == len(o)-s && p == len(n)-s {
		return h, false
	}
	if p < len(o)-s && p < len(n)-s {
		for p > 0 && (midWord(o, p) || midWord(n, p)) {
			_, size := utf8.DecodeLastRuneInString(o[:p])
			p -= size
		}
		for s > 0 && (midWord(o, len(o)-s) || midWord(n, len(n)-s)) {
			_, size := utf8.DecodeRuneInString(o[len(o)-s:])
			s -= size
		}
	}
	return hunk{h.oa + p, h.ob - s, h.na + p, h.nb - s}, true
}

// tokenize returns the boundaries of s's tokens (token i is s[b[i]:b[i+1]]): runs of letters,
// digits and underscores; runs of spaces and tabs; line breaks; any other single character.
func tokenize(s string) []int {
	b := []int{0}
	class := func(r rune) int {
		switch {
		case r == '\n' || r == '\r':
			return 0
		case isWordRune(r):
			return 1
		case unicode.IsSpace(r):
			return 2
		}
		return 3
	}
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		c := class(r)
		j := i + n
		switch {
		case r == '\r' && strings.HasPrefix(s[j:], "\n"):
			j++
		case c == 1 || c == 2:
			for j < len(s) {
				r2, n2 := utf8.DecodeRuneInString(s[j:])
				if class(r2) != c {
					break
				}
				j += n2
			}
		}
		b = append(b, j)
		i = j
	}
	return b
}

func isWordRune(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// midWord tells whether offset i of s falls inside a word.
func midWord(s string, i int) bool {
	if i <= 0 || i >= len(s) {
		return false
	}
	before, _ := utf8.DecodeLastRuneInString(s[:i])
	after, _ := utf8.DecodeRuneInString(s[i:])
	return isWordRune(before) && isWordRune(after)
}
