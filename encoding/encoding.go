// Package encoding converts between positions (zero-based line and character) and byte offsets
// for the three position encodings that LSP 3.17 and ACP negotiate: utf-8, utf-16 and utf-32.
//
// Inside the bridge a position is a byte offset into an immutable text. LSP and ACP positions are
// converted at the boundary through one [Mapper] per text, built once.
//
// The edge rules, each covered by a test:
//
//   - Lines end at "\n", "\r\n" or a lone "\r" (the LSP rule). "\r\n" is one line ending in both
//     directions: no position addresses the byte between "\r" and "\n".
//   - A character offset past the end of a line means the end of that line (before its line ending).
//   - The position (lineCount, c) for any c means the end of the text; a line beyond lineCount is an
//     error. lineCount is the number of line starts, so "a\n" has two lines and (1, 0) is its end.
//   - A utf-16 character offset that falls inside a surrogate pair is rounded down to the start of
//     the character. A utf-8 offset inside a multi-byte character is rounded down the same way.
//   - Invalid UTF-8: each byte that does not start a valid sequence counts as one character of one
//     unit in every encoding (as if it were U+FFFD, which is one utf-16 unit), so the conversion is
//     total and round-trips.
//   - An offset that falls inside a multi-byte character, inside a "\r\n" pair, or outside the text
//     is an error from [Mapper.OffsetPosition], never a silently wrong column.
//   - Negative lines or characters are errors.
package encoding

import (
	"errors"
	"fmt"
	"math/bits"
	"sort"
	"strings"
	"unicode/utf8"
)

// Kind is a position encoding: what one unit of Position.Character counts.
type Kind int

const (
	// UTF16 counts UTF-16 code units. It is the default of both LSP and ACP.
	UTF16 Kind = iota
	// UTF8 counts bytes.
	UTF8
	// UTF32 counts Unicode code points.
	UTF32
)

// String returns the wire name: "utf-8", "utf-16" or "utf-32".
func (k Kind) String() string {
	switch k {
	case UTF8:
		return "utf-8"
	case UTF32:
		return "utf-32"
	default:
		return "utf-16"
	}
}

// ParseKind parses a wire name. It reports false for anything else.
func ParseKind(s string) (Kind, bool) {
	switch s {
	case "utf-8":
		return UTF8, true
	case "utf-16":
		return UTF16, true
	case "utf-32":
		return UTF32, true
	}
	return UTF16, false
}

// ServerPreference is the order in which the bridge, as a language server, picks an encoding from
// those an editor offers: utf-8 (no conversion against the bridge's byte offsets), then utf-32,
// then utf-16.
var ServerPreference = []Kind{UTF8, UTF32, UTF16}

// Negotiate picks the first kind of preference that offered lists, ignoring names it does not
// know. With nothing offered (or nothing known in common) it returns utf-16, which every LSP and
// ACP peer must support.
func Negotiate(offered []string, preference []Kind) Kind {
	for _, want := range preference {
		for _, o := range offered {
			if k, ok := ParseKind(o); ok && k == want {
				return k
			}
		}
	}
	return UTF16
}

// Position is a zero-based line and character offset in some encoding.
type Position struct {
	Line      int
	Character int
}

// Range is a half-open pair of positions.
type Range struct {
	Start, End Position
}

func (p Position) String() string { return fmt.Sprintf("%d:%d", p.Line, p.Character) }

// ErrOutOfRange reports a position or offset outside the text.
var ErrOutOfRange = errors.New("position out of range")

// ErrInsideCharacter reports an offset that splits a character or a "\r\n" line ending.
var ErrInsideCharacter = errors.New("offset inside a character")

// Mapper converts positions of one immutable text. Build it once per text with [NewMapper]; it is
// safe for concurrent use.
type Mapper struct {
	text       string
	lineStarts []int // byte offset of the start of each line; lineStarts[0] == 0
	nonASCII   int   // number of bytes >= 0x80, kept so that Edit can update ascii without a rescan
	ascii      bool  // nonASCII == 0: every encoding counts bytes
}

// NewMapper indexes text.
func NewMapper(text string) *Mapper {
	m := &Mapper{text: text, nonASCII: countNonASCII(text)}
	m.ascii = m.nonASCII == 0
	m.lineStarts = appendLineStarts(make([]int, 1, 1+len(text)/32), text)
	return m
}

// appendLineStarts appends the start of every line of text but the first. It searches for "\n"
// with strings.IndexByte, and looks for lone "\r" line endings between them only when the text
// has a "\r" at all.
func appendLineStarts(starts []int, text string) []int {
	hasCR := strings.IndexByte(text, '\r') >= 0
	for i := 0; ; {
		j := strings.IndexByte(text[i:], '\n')
		segEnd := len(text)
		if j >= 0 {
			segEnd = i + j
		}
		if hasCR {
			for k := i; k < segEnd; {
				r := strings.IndexByte(text[k:segEnd], '\r')
				if r < 0 {
					break
				}
				k += r + 1
				if k < segEnd || j < 0 { // a "\r" just before the "\n" is part of "\r\n"
					starts = append(starts, k)
				}
			}
		}
		if j < 0 {
			return starts
		}
		i = segEnd + 1
		starts = append(starts, i)
	}
}

// isLineStart reports whether offset p, in [1, len(text)], starts a line of text: the byte before
// it is "\n", or a "\r" that is not followed by "\n".
func isLineStart(text string, p int) bool {
	switch text[p-1] {
	case '\n':
		return true
	case '\r':
		return p == len(text) || text[p] != '\n'
	}
	return false
}

// countNonASCII returns the number of bytes >= 0x80 in s, eight bytes at a time.
func countNonASCII(s string) int {
	const high = 0x8080808080808080
	n, i := 0, 0
	for ; i+8 <= len(s); i += 8 {
		w := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		if w&high != 0 {
			n += bits.OnesCount64(w & high)
		}
	}
	for ; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			n++
		}
	}
	return n
}

// Text returns the indexed text.
func (m *Mapper) Text() string { return m.text }

// LineCount returns the number of lines: one more than the number of line endings.
func (m *Mapper) LineCount() int { return len(m.lineStarts) }

// LineStart returns the byte offset at which line starts. The line must be in [0, LineCount()).
func (m *Mapper) LineStart(line int) int { return m.lineStarts[line] }

// lineContentEnd returns the offset of the end of line's content, before its line ending.
func (m *Mapper) lineContentEnd(line int) int {
	if line+1 >= len(m.lineStarts) {
		return len(m.text)
	}
	end := m.lineStarts[line+1]
	if end >= 1 && m.text[end-1] == '\n' {
		end--
		if end >= 1 && m.text[end-1] == '\r' {
			end--
		}
	} else if end >= 1 && m.text[end-1] == '\r' {
		end--
	}
	return end
}

// LineOf returns the line that contains offset (the line whose start is the greatest one not after
// offset). offset must be in [0, len(text)].
func (m *Mapper) LineOf(offset int) int {
	lo, hi := 0, len(m.lineStarts)
	for hi-lo > 1 {
		mid := int(uint(lo+hi) >> 1)
		if m.lineStarts[mid] <= offset {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// PositionOffset converts a position in encoding k to a byte offset, applying the edge rules of the
// package documentation.
func (m *Mapper) PositionOffset(p Position, k Kind) (int, error) {
	if p.Line < 0 || p.Character < 0 {
		return 0, fmt.Errorf("%w: negative position %v", ErrOutOfRange, p)
	}
	if p.Line >= len(m.lineStarts) {
		if p.Line == len(m.lineStarts) {
			return len(m.text), nil
		}
		return 0, fmt.Errorf("%w: line %d, the text has %d lines", ErrOutOfRange, p.Line, len(m.lineStarts))
	}
	start, end := m.lineStarts[p.Line], m.lineContentEnd(p.Line)
	if p.Character >= end-start {
		// Past the end of the line in every encoding: no character is narrower than one byte. The
		// comparison also keeps start+p.Character below from overflowing for a huge p.Character.
		return end, nil
	}
	if k == UTF8 || m.ascii {
		off := start + p.Character
		// Round down to the start of a character.
		for off > start && off < len(m.text) && !utf8.RuneStart(m.text[off]) && validContinuation(m.text, off) {
			off--
		}
		return off, nil
	}
	units := 0
	off := start
	for off < end {
		if m.text[off] < utf8.RuneSelf {
			if units == p.Character {
				break
			}
			units++
			off++
			continue
		}
		r, size := utf8.DecodeRuneInString(m.text[off:end])
		w := 1
		if k == UTF16 && r != utf8.RuneError && r >= 0x10000 {
			w = 2
		}
		if units+w > p.Character {
			break
		}
		units += w
		off += size
	}
	return off, nil
}

// validContinuation reports whether the continuation byte at off belongs to a valid multi-byte
// character that starts before off (rather than being a stray byte that counts on its own).
func validContinuation(text string, off int) bool {
	for back := 1; back <= 3 && off-back >= 0; back++ {
		if utf8.RuneStart(text[off-back]) {
			r, size := utf8.DecodeRuneInString(text[off-back:])
			return !(r == utf8.RuneError && size == 1) && off-back+size > off
		}
	}
	return false
}

// OffsetPosition converts a byte offset to a position in encoding k. An offset inside a character or
// inside a "\r\n" pair, or outside [0, len(text)], is an error.
func (m *Mapper) OffsetPosition(offset int, k Kind) (Position, error) {
	if offset < 0 || offset > len(m.text) {
		return Position{}, fmt.Errorf("%w: offset %d, the text has %d bytes", ErrOutOfRange, offset, len(m.text))
	}
	line := m.LineOf(offset)
	start, end := m.lineStarts[line], m.lineContentEnd(line)
	if offset > end {
		// Inside the line ending: only the byte between "\r" and "\n" can be reached here.
		return Position{}, fmt.Errorf("%w: offset %d splits a \\r\\n line ending", ErrInsideCharacter, offset)
	}
	if offset < len(m.text) && !utf8.RuneStart(m.text[offset]) && validContinuation(m.text, offset) {
		return Position{}, fmt.Errorf("%w: offset %d", ErrInsideCharacter, offset)
	}
	if k == UTF8 || m.ascii {
		return Position{Line: line, Character: offset - start}, nil
	}
	return Position{Line: line, Character: Units(m.text[start:offset], k)}, nil
}

// Units returns the length of s in encoding k, counting each invalid byte as one unit.
func Units(s string, k Kind) int {
	switch k {
	case UTF8:
		return len(s)
	case UTF32:
		return utf8.RuneCountInString(s)
	}
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			n++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r != utf8.RuneError && r >= 0x10000 {
			n += 2
		} else {
			n++
		}
		i += size
	}
	return n
}

// RangeOffsets converts a range to a pair of byte offsets. It is an error when the start comes
// after the end.
func (m *Mapper) RangeOffsets(r Range, k Kind) (start, end int, err error) {
	if start, err = m.PositionOffset(r.Start, k); err != nil {
		return 0, 0, err
	}
	if end, err = m.PositionOffset(r.End, k); err != nil {
		return 0, 0, err
	}
	if start > end {
		return 0, 0, fmt.Errorf("%w: range start %v is after its end %v", ErrOutOfRange, r.Start, r.End)
	}
	return start, end, nil
}

// OffsetsRange converts a pair of byte offsets to a range.
func (m *Mapper) OffsetsRange(start, end int, k Kind) (Range, error) {
	s, err := m.OffsetPosition(start, k)
	if err != nil {
		return Range{}, err
	}
	e, err := m.OffsetPosition(end, k)
	if err != nil {
		return Range{}, err
	}
	return Range{Start: s, End: e}, nil
}

// Edit returns the mapper of the text with the bytes [start, end) replaced by text. The offsets
// must be in range with start <= end; Edit panics otherwise. The result equals NewMapper of the
// edited text, but only the replaced and inserted bytes are scanned: the line starts before the edit
// are copied and those after it shifted. Building the new text string still copies the document.
func (m *Mapper) Edit(start, end int, text string) *Mapper {
	if start < 0 || start > end || end > len(m.text) {
		panic(fmt.Sprintf("encoding: Mapper.Edit(%d, %d) on a text of %d bytes", start, end, len(m.text)))
	}
	newText := m.text[:start] + text + m.text[end:]
	delta := len(text) - (end - start)

	// Whether offset p starts a line depends only on the bytes at p-1 and p. Line starts before
	// start look at old bytes only and are kept; those after end are the old ones shifted by delta
	// (their two bytes are old bytes, or the end of the text, moved together). Every offset in
	// [start, start+len(text)] is decided again on the new text, which covers a "\r" and a "\n"
	// joining or splitting at either edge of the edit.
	old := m.lineStarts
	keep := sort.SearchInts(old, start) // old[:keep] < start
	tail := sort.SearchInts(old, end+1) // old[tail:] > end
	// At most one start per "\r" or "\n" in the region, plus the one after the byte before it.
	bound := 1 + strings.Count(text, "\n") + strings.Count(text, "\r")
	if start == 0 {
		bound++
	}
	starts := make([]int, keep, keep+bound+len(old)-tail)
	copy(starts, old[:keep])
	lo := start
	if lo == 0 {
		starts = append(starts, 0)
		lo = 1
	}
	for p, hi := lo, start+len(text); p <= hi; p++ {
		if isLineStart(newText, p) {
			starts = append(starts, p)
		}
	}
	for _, q := range old[tail:] {
		starts = append(starts, q+delta)
	}

	nonASCII := m.nonASCII
	if !m.ascii {
		nonASCII -= countNonASCII(m.text[start:end])
	}
	nonASCII += countNonASCII(text)
	return &Mapper{text: newText, lineStarts: starts, nonASCII: nonASCII, ascii: nonASCII == 0}
}
