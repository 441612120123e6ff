package editorstate

import (
	"fmt"
	"strings"
	"time"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
)

// group is one edit-history entry: a region of whole lines of one document, as it was before the
// entry's first change (old) and as it is now (new). The region starts at the same line in both,
// since every change of the entry is inside it or next to it.
//
// Line counts are LSP lines: a region that reaches the end of the document counts the document's
// last line even when it is empty (the line after a final line ending).
type group struct {
	uri      string
	start    int    // first line of the region, zero-based
	old, new string // whole lines; both empty for a large entry
	oldLines int
	newLines int
	large    bool // the text is not kept: the entry renders as a summary
	// For a large entry only: whether the region's last line is the document's empty last line,
	// which a diff does not count as a line.
	oldTail, newTail bool
	last             time.Time // time of the entry's last change
}

// size is the number of text bytes g holds.
func (g *group) size() int { return len(g.old) + len(g.new) }

// lineEnd returns the offset where line ends (the start of the next line), or the end of the
// text for the last line and beyond.
func lineEnd(m *encoding.Mapper, line int) int {
	if line >= m.LineCount() {
		return m.Len()
	}
	return m.LineStart(line)
}

// changeLines returns the lines [first, end) of the text before c that c touches. A change that
// joins a "\r" at the end of the line before it with a "\n" of its own touches that line too. A
// change that ends at the start of a line and leaves a line start there (one that inserts or
// deletes whole lines) does not touch that line, so its region can be empty.
func changeLines(c change) (first, end int) {
	b := c.before
	first = b.LineOf(c.start)
	if first > 0 && c.start == b.LineStart(first) && b.ByteAt(c.start-1) == '\r' {
		var next byte
		if c.text != "" {
			next = c.text[0]
		} else if c.end < b.Len() {
			next = b.ByteAt(c.end)
		}
		if next == '\n' {
			first--
		}
	}
	end = b.LineOf(c.end) + 1
	if c.end == b.LineStart(end-1) && endsAtLineStart(c) {
		end--
	}
	return first, end
}

// endsAtLineStart reports whether the end of the text c inserts is the start of a line in the
// text after c.
func endsAtLineStart(c change) bool {
	b := c.before
	var prev byte
	switch {
	case c.text != "":
		prev = c.text[len(c.text)-1]
	case c.start > 0:
		prev = b.ByteAt(c.start - 1)
	default:
		return true
	}
	return prev == '\n' || prev == '\r' && (c.end == b.Len() || b.ByteAt(c.end) != '\n')
}

// countBreaks counts the line endings of the concatenation of pieces: "\n", "\r\n" and a lone "\r".
func countBreaks(pieces ...string) int {
	n := 0
	prevCR := false
	for _, p := range pieces {
		if p == "" {
			continue
		}
		if prevCR && p[0] == '\n' {
			n-- // a "\r\n" split between two pieces is one line ending
		}
		n += strings.Count(p, "\n") + strings.Count(p, "\r") - strings.Count(p, "\r\n")
		prevCR = p[len(p)-1] == '\r'
	}
	return n
}

func isBreak(c byte) bool { return c == '\n' || c == '\r' }

// endsWithEmptyLine reports whether the last line of m's text is empty.
func endsWithEmptyLine(m *encoding.Mapper) bool { return m.Len() == 0 || isBreak(m.ByteAt(m.Len()-1)) }

// afterEndsWithEmptyLine reports whether the last line of the text after c is empty.
func afterEndsWithEmptyLine(c change) bool {
	b := c.before
	switch {
	case c.end < b.Len():
		return isBreak(b.ByteAt(b.Len() - 1))
	case c.text != "":
		return isBreak(c.text[len(c.text)-1])
	case c.start > 0:
		return isBreak(b.ByteAt(c.start - 1))
	}
	return true
}

// join returns a new string holding the concatenation of pieces, never sharing memory with them,
// so that an entry never keeps a whole document alive.
func join(pieces ...string) string {
	n := 0
	for _, p := range pieces {
		n += len(p)
	}
	var b strings.Builder
	b.Grow(n)
	for _, p := range pieces {
		b.WriteString(p)
	}
	return b.String()
}

// recordHistory adds change c of document d to the entry being built, or starts a new entry.
// Its cost is in proportion to the lines c touches and the size of the entry, not to the text.
func (s *State) recordHistory(d *docState, c change, now time.Time) {
	b := c.before
	first, end := changeLines(c)
	ro, re := b.LineStart(first), lineEnd(b, end)
	oldSize := re - ro
	newSize := oldSize - (c.end - c.start) + len(c.text)
	newLines := countBreaks(b.Slice(ro, c.start), c.text, b.Slice(c.end, re))
	atEnd := end == b.LineCount() // the region has the text's last line, which has no line ending
	if atEnd {
		newLines++
	}
	tooLarge := oldSize+newSize > s.lim.EntryBytes

	if g := s.open; g != nil {
		gEnd := g.start + g.newLines
		if g.uri == d.uri && now.Sub(g.last) <= s.lim.GroupGap && first <= gEnd && end >= g.start && g.start < b.LineCount() && gEnd <= b.LineCount() {
			u0, u1 := min(first, g.start), max(end, gEnd)
			merged := false
			switch {
			case g.large:
				if tooLarge {
					if u1 > gEnd {
						g.oldTail = u1 == b.LineCount() && endsWithEmptyLine(b)
					}
					g.newTail = u1 == b.LineCount() && afterEndsWithEmptyLine(c)
					merged = true
				}
			case b.Slice(b.LineStart(g.start), lineEnd(b, gEnd)) == g.new:
				uo, ue := b.LineStart(u0), lineEnd(b, u1)
				above, below := b.Slice(uo, b.LineStart(g.start)), b.Slice(lineEnd(b, gEnd), ue)
				mergedOld := len(above) + len(g.old) + len(below)
				mergedNew := (ue - uo) - (c.end - c.start) + len(c.text)
				if mergedOld+mergedNew <= s.lim.EntryBytes {
					g.old = join(above, g.old, below)
					g.new = join(b.Slice(uo, c.start), c.text, b.Slice(c.end, ue))
					merged = true
				}
			}
			if merged {
				g.oldLines += (g.start - u0) + (u1 - gEnd)
				g.newLines = (u1 - u0) - (end - first) + newLines
				g.start, g.last = u0, now
				return
			}
		}
		s.closeGroup()
	}

	g := &group{uri: d.uri, start: first, oldLines: end - first, newLines: newLines, last: now}
	if tooLarge {
		g.large = true
		g.oldTail = atEnd && endsWithEmptyLine(b)
		g.newTail = atEnd && afterEndsWithEmptyLine(c)
	} else {
		g.old = join(b.Slice(ro, re))
		g.new = join(b.Slice(ro, c.start), c.text, b.Slice(c.end, re))
	}
	s.history.push(g)
	s.open = g
}

// closeGroup ends the entry being built, dropping it when its lines are back as they were.
func (s *State) closeGroup() {
	g := s.open
	s.open = nil
	if g == nil || g.large || g.old != g.new {
		return
	}
	if n := s.history.len(); n > 0 && s.history.at(n-1) == g {
		s.history.pop()
	}
}

// heldBytes returns the number of history entries, the text bytes they hold, and the number of
// actions kept.
func (s *State) heldBytes() (entries, bytes, actions int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.history.len() {
		bytes += s.history.at(i).size()
	}
	return s.history.len(), bytes, s.actions.len()
}

// splitLines splits t into lines, each with its line ending ("\n", "\r\n" or a lone "\r"); the
// last one has none when t does not end with a line ending. An empty t has no lines.
func splitLines(t string) []string {
	var lines []string
	for len(t) > 0 {
		i := strings.IndexAny(t, "\r\n")
		if i < 0 {
			return append(lines, t)
		}
		j := i + 1
		if t[i] == '\r' && j < len(t) && t[j] == '\n' {
			j++
		}
		lines = append(lines, t[:j])
		t = t[j:]
	}
	return lines
}

// hunkStart is the line number of a hunk side in GNU's numbering: the 1-based number of its first
// line, or of the line before it when it has no lines.
func hunkStart(start0, count int) int {
	if count == 0 {
		return start0
	}
	return start0 + 1
}

// diff renders g as a unified diff without context lines, or "" when it changes nothing.
func (g *group) diff(path string) string {
	path = strings.TrimPrefix(path, "/")
	header := "--- a/" + path + "\n+++ b/" + path + "\n"
	if g.large {
		return header + fmt.Sprintf("# edit at line %d too large to show: %s replaced by %s\n",
			g.start+1, plural(g.oldLines-b2i(g.oldTail), "line"), plural(g.newLines-b2i(g.newTail), "line"))
	}
	if g.old == g.new {
		return ""
	}
	old, new := splitLines(g.old), splitLines(g.new)
	p := 0
	for p < len(old) && p < len(new) && old[p] == new[p] {
		p++
	}
	q := 0
	for q < len(old)-p && q < len(new)-p && old[len(old)-1-q] == new[len(new)-1-q] {
		q++
	}
	old, new = old[p:len(old)-q], new[p:len(new)-q]
	start0 := g.start + p
	var b strings.Builder
	b.WriteString(header)
	fmt.Fprintf(&b, "@@ -%d,%d +%d,%d @@\n", hunkStart(start0, len(old)), len(old), hunkStart(start0, len(new)), len(new))
	for _, l := range old {
		writeDiffLine(&b, '-', l)
	}
	for _, l := range new {
		writeDiffLine(&b, '+', l)
	}
	return b.String()
}

// writeDiffLine writes one line of a diff. Every diff line ends with "\n"; a line keeps its own
// line ending, and a line with none is the last of its text.
func writeDiffLine(b *strings.Builder, marker byte, line string) {
	b.WriteByte(marker)
	b.WriteString(line)
	switch {
	case strings.HasSuffix(line, "\n"):
	case strings.HasSuffix(line, "\r"):
		b.WriteByte('\n')
	default:
		b.WriteString("\n\\ No newline at end of file\n")
	}
}

func b2i(v bool) int {
	if v {
		return 1
	}
	return 0
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
