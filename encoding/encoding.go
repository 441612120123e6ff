// Package encoding converts between positions (zero-based line and character) and byte offsets
// for the three position encodings that LSP 3.17 and ACP negotiate: utf-8, utf-16 and utf-32.
//
// Inside the bridge a position is a byte offset into an immutable text. LSP and ACP positions are
// converted at the boundary through one [Mapper] per text, built once.
//
// Negotiation: with the editor, the bridge takes the editor's most preferred encoding
// ([ClientPreferred]: the first one of general.positionEncodings, utf-16 when none is offered),
// because it usually runs beside the language's own server and some editors keep one encoding per
// buffer for all of its servers. With the agent, the bridge offers utf-8, utf-32, utf-16 in that
// order and the agent picks ([Negotiate] is that pick, for agents written with this module).
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
	"strings"
	"sync/atomic"
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

// ClientPreferred is the encoding the bridge, as a language server, picks from those an editor
// offers: the first one the editor lists that the bridge knows (LSP 3.17 lists them in decreasing
// order of the client's preference), and utf-16 when it lists none it knows.
//
// The bridge follows the client rather than its own taste because it is usually an add-on beside
// the language's own server, and some clients keep one encoding per buffer for all their servers
// (lsp-mode takes the one of whichever server initialized last): when every server picks the
// client's first choice, they all agree, and no server's copy of a line is corrupted.
func ClientPreferred(offered []string) Kind {
	for _, o := range offered {
		if k, ok := ParseKind(o); ok {
			return k
		}
	}
	return UTF16
}

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

// Mapper converts positions of one immutable text. Build it once per text with [NewMapper], or
// from another with [Mapper.Edit]; it is safe for concurrent use.
//
// The text is held as a rope (see rope.go), so Edit costs about the same whatever the size of the
// text, and mappers before and after an edit share most of their memory. [Mapper.Text] joins the
// rope into one string the first time it is called on a mapper made by Edit; code on the keystroke
// path uses [Mapper.Len], [Mapper.Slice] and [Mapper.ByteAt] instead.
type Mapper struct {
	// The rope. Text replaces it with one cut from the joined text, which holds the same bytes:
	// then the text is in memory once, and the mappers that edits make from this one share it.
	rope atomic.Pointer[node]
	text atomic.Pointer[string] // the whole text, once joined (at once for NewMapper)
}

// NewMapper indexes text. The rope's leaves are substrings of text: nothing is copied.
func NewMapper(text string) *Mapper {
	m := fromRope(newRope(text))
	m.text.Store(&text)
	return m
}

func fromRope(n *node) *Mapper {
	m := &Mapper{}
	m.rope.Store(n)
	return m
}

func (m *Mapper) root() *node { return m.rope.Load() }

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

// Text returns the whole text. On a mapper made by Edit the first call joins the rope, which costs
// a copy of the text; later calls return the same string.
func (m *Mapper) Text() string {
	if p := m.text.Load(); p != nil {
		return *p
	}
	root := m.root()
	var b strings.Builder
	b.Grow(root.bytes)
	root.each(0, root.bytes, func(s string) { b.WriteString(s) })
	s := b.String()
	// Otherwise the leaves and the joined string would both hold the text.
	m.rope.Store(newRope(s))
	m.text.Store(&s)
	return s
}

// Len returns the length of the text in bytes.
func (m *Mapper) Len() int { return m.root().bytes }

// Slice returns the bytes [start, end) of the text, which must be in range with start <= end.
// Within one leaf of the rope, or once the text is joined, it copies nothing.
func (m *Mapper) Slice(start, end int) string {
	if start < 0 || start > end || end > m.root().bytes {
		panic(fmt.Sprintf("encoding: Mapper.Slice(%d, %d) on a text of %d bytes", start, end, m.root().bytes))
	}
	if p := m.text.Load(); p != nil {
		return (*p)[start:end]
	}
	return m.root().slice(start, end)
}

// ByteAt returns the byte at offset, in [0, Len()).
func (m *Mapper) ByteAt(offset int) byte {
	if offset < 0 || offset >= m.root().bytes {
		panic(fmt.Sprintf("encoding: Mapper.ByteAt(%d) on a text of %d bytes", offset, m.root().bytes))
	}
	if p := m.text.Load(); p != nil {
		return (*p)[offset]
	}
	return m.root().byteAt(offset)
}

// Equal reports whether two mappers hold the same text. Mappers that share their rope compare at
// once; others compare chunk by chunk, without joining either text.
func (m *Mapper) Equal(o *Mapper) bool {
	if m == o || m.root() == o.root() {
		return true
	}
	if m.root().bytes != o.root().bytes {
		return false
	}
	equal, off := true, 0
	m.root().each(0, m.root().bytes, func(s string) {
		if equal {
			equal = s == o.Slice(off, off+len(s))
			off += len(s)
		}
	})
	return equal
}

// ascii reports whether every byte of the text is ASCII: then every encoding counts bytes.
func (m *Mapper) ascii() bool { return m.root().nonASCII == 0 }

// LineCount returns the number of lines: one more than the number of line endings.
func (m *Mapper) LineCount() int { return m.root().breaks + 1 }

// LineStart returns the byte offset at which line starts. The line must be in [0, LineCount()).
func (m *Mapper) LineStart(line int) int {
	if line < 0 || line > m.root().breaks {
		panic(fmt.Sprintf("encoding: Mapper.LineStart(%d) on a text of %d lines", line, m.root().breaks+1))
	}
	if line == 0 {
		return 0
	}
	_, start, i := m.root().breakAt(line)
	return start + i + 1
}

// LineContentEnd returns the offset of the end of line's content, before its line ending. The
// line must be in [0, LineCount()).
func (m *Mapper) LineContentEnd(line int) int {
	if line < 0 || line > m.root().breaks {
		panic(fmt.Sprintf("encoding: Mapper.LineContentEnd(%d) on a text of %d lines", line, m.root().breaks+1))
	}
	if line == m.root().breaks {
		return m.root().bytes
	}
	// The line ends at its break, or at the "\r" before it, which is in the same leaf.
	leaf, start, i := m.root().breakAt(line + 1)
	if i > 0 && leaf.chunk[i] == '\n' && leaf.chunk[i-1] == '\r' {
		i--
	}
	return start + i
}

// LineOf returns the line that contains offset (the line whose start is the greatest one not after
// offset). offset must be in [0, Len()].
func (m *Mapper) LineOf(offset int) int {
	if offset < 0 || offset > m.root().bytes {
		panic(fmt.Sprintf("encoding: Mapper.LineOf(%d) on a text of %d bytes", offset, m.root().bytes))
	}
	return m.root().breaksBefore(offset)
}

// PositionOffset converts a position in encoding k to a byte offset, applying the edge rules of the
// package documentation.
func (m *Mapper) PositionOffset(p Position, k Kind) (int, error) {
	if p.Line < 0 || p.Character < 0 {
		return 0, fmt.Errorf("%w: negative position %v", ErrOutOfRange, p)
	}
	if lines := m.LineCount(); p.Line >= lines {
		if p.Line == lines {
			return m.Len(), nil
		}
		return 0, fmt.Errorf("%w: line %d, the text has %d lines", ErrOutOfRange, p.Line, lines)
	}
	start, end := m.LineStart(p.Line), m.LineContentEnd(p.Line)
	if p.Character >= end-start {
		// Past the end of the line in every encoding: no character is narrower than one byte. The
		// comparison also keeps start+p.Character below from overflowing for a huge p.Character.
		return end, nil
	}
	// The byte before the line, if any, ends a line: looking back for the start of a character
	// never needs to leave the line.
	line := m.Slice(start, end)
	if k == UTF8 || m.ascii() {
		off := p.Character
		// Round down to the start of a character.
		for off > 0 && !utf8.RuneStart(line[off]) && validContinuation(line, off) {
			off--
		}
		return start + off, nil
	}
	units := 0
	off := 0
	for off < len(line) {
		if line[off] < utf8.RuneSelf {
			if units == p.Character {
				break
			}
			units++
			off++
			continue
		}
		r, size := utf8.DecodeRuneInString(line[off:])
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
	return start + off, nil
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
// inside a "\r\n" pair, or outside [0, Len()], is an error.
func (m *Mapper) OffsetPosition(offset int, k Kind) (Position, error) {
	if offset < 0 || offset > m.Len() {
		return Position{}, fmt.Errorf("%w: offset %d, the text has %d bytes", ErrOutOfRange, offset, m.Len())
	}
	line := m.LineOf(offset)
	start, end := m.LineStart(line), m.LineContentEnd(line)
	if offset > end {
		// Inside the line ending: only the byte between "\r" and "\n" can be reached here.
		return Position{}, fmt.Errorf("%w: offset %d splits a \\r\\n line ending", ErrInsideCharacter, offset)
	}
	text, rel := m.Slice(start, end), offset-start
	if rel < len(text) && !utf8.RuneStart(text[rel]) && validContinuation(text, rel) {
		return Position{}, fmt.Errorf("%w: offset %d", ErrInsideCharacter, offset)
	}
	if k == UTF8 || m.ascii() {
		return Position{Line: line, Character: rel}, nil
	}
	return Position{Line: line, Character: Units(text[:rel], k)}, nil
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
// edited text, but its cost depends on the size of the edit, not of the text: it builds new
// leaves around the edit and a new path to them, and shares the rest of the rope with m.
func (m *Mapper) Edit(start, end int, text string) *Mapper {
	if start < 0 || start > end || end > m.root().bytes {
		panic(fmt.Sprintf("encoding: Mapper.Edit(%d, %d) on a text of %d bytes", start, end, m.root().bytes))
	}
	return fromRope(m.root().edit(start, end, text))
}
