package encoding

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"
	"unicode/utf8"
)

// kinds lists the three encodings in a fixed order for the tests.
var kinds = []Kind{UTF8, UTF16, UTF32}

// Texts shared by the tables. The comments give the byte layout.
const (
	astral    = "𐐀23\n𐐀45"      // 𐐀 is U+10400: 4 bytes, 2 utf-16 units, 1 code point; line 1 starts at 7, len 13
	cjk       = "日本語\nx"        // 3 bytes, 1 unit each; line 1 starts at 10
	combined  = "e\u0301x"      // e, U+0301 (2 bytes, 1 unit), x
	zwj       = "👩\u200d💻"      // U+1F469 (4 bytes, 2 units), ZWJ (3 bytes, 1 unit), U+1F4BB (4 bytes, 2 units)
	crlf      = "a\r\nb"        // line 1 starts at 3
	loneCR    = "é\rb"          // line 1 starts at 3
	mixedEOL  = "\r\r\n\n"      // lines start at 0, 1, 3, 4
	invalid   = "a\xffb\xc3("   // every byte is one character of one unit
	truncated = "\xf0\x90\x80x" // a 4-byte lead with only two continuations: four characters
	fffd      = "\ufffdx"       // a real U+FFFD: 3 bytes, 1 unit
	stray     = "é\xa9"         // é, then a continuation byte that belongs to nothing
	surrogate = "\xed\xa0\x80"  // an encoded surrogate is invalid UTF-8: three characters
)

func pos(line, char int) Position { return Position{Line: line, Character: char} }

func TestKind(t *testing.T) {
	for _, tc := range []struct {
		name string
		kind Kind
		ok   bool
	}{
		{"utf-8", UTF8, true},
		{"utf-16", UTF16, true},
		{"utf-32", UTF32, true},
		{"UTF-8", UTF16, false},
		{"utf8", UTF16, false},
		{"utf-16le", UTF16, false},
		{"", UTF16, false},
	} {
		k, ok := ParseKind(tc.name)
		if k != tc.kind || ok != tc.ok {
			t.Errorf("ParseKind(%q) = %v, %v; want %v, %v", tc.name, k, ok, tc.kind, tc.ok)
		}
		if ok && k.String() != tc.name {
			t.Errorf("%v.String() = %q; want %q", k, k.String(), tc.name)
		}
	}
}

func TestClientPreferred(t *testing.T) {
	for _, tc := range []struct {
		offered []string
		want    Kind
	}{
		{nil, UTF16},
		{[]string{}, UTF16},
		{[]string{"utf-16"}, UTF16},
		{[]string{"utf-32"}, UTF32},
		{[]string{"utf-8"}, UTF8},
		{[]string{"utf-16", "utf-32"}, UTF16},
		{[]string{"utf-16", "utf-32", "utf-8"}, UTF16},
		// lsp-mode 10 and Eglot offer this: every server of the buffer must pick utf-32.
		{[]string{"utf-32", "utf-8", "utf-16"}, UTF32},
		{[]string{"utf-8", "utf-16"}, UTF8},
		{[]string{"latin1", "ucs-2"}, UTF16},
		{[]string{"latin1", "utf-32", "bogus"}, UTF32},
		{[]string{"UTF-8", "utf-16"}, UTF16},
	} {
		if got := ClientPreferred(tc.offered); got != tc.want {
			t.Errorf("ClientPreferred(%q) = %v; want %v", tc.offered, got, tc.want)
		}
	}
}

func TestNegotiate(t *testing.T) {
	agentPreference := []Kind{UTF8, UTF32, UTF16}
	for _, tc := range []struct {
		offered []string
		want    Kind
	}{
		{nil, UTF16},
		{[]string{"utf-16", "utf-32"}, UTF32},
		{[]string{"utf-16", "utf-32", "utf-8"}, UTF8},
		{[]string{"latin1", "utf-32", "bogus"}, UTF32},
	} {
		if got := Negotiate(tc.offered, agentPreference); got != tc.want {
			t.Errorf("Negotiate(%q, utf-8 first) = %v; want %v", tc.offered, got, tc.want)
		}
	}
	if got := Negotiate([]string{"utf-8", "utf-32"}, []Kind{UTF32, UTF8}); got != UTF32 {
		t.Errorf("Negotiate with utf-32 preferred = %v; want utf-32", got)
	}
	if got := Negotiate([]string{"utf-8"}, nil); got != UTF16 {
		t.Errorf("Negotiate with no preference = %v; want utf-16", got)
	}
}

func TestLines(t *testing.T) {
	for _, tc := range []struct {
		text   string
		starts []int
	}{
		{"", []int{0}},
		{"a", []int{0}},
		{"a\n", []int{0, 2}},
		{"a\nb", []int{0, 2}},
		{"\n", []int{0, 1}},
		{"\n\n", []int{0, 1, 2}},
		{crlf, []int{0, 3}},
		{"\r\n", []int{0, 2}},
		{"a\r", []int{0, 2}},
		{"a\rb", []int{0, 2}},
		{"\n\r", []int{0, 1, 2}},
		{mixedEOL, []int{0, 1, 3, 4}},
		{"\r\r", []int{0, 1, 2}},
		{loneCR, []int{0, 3}},
		{astral, []int{0, 7}},
		{cjk, []int{0, 10}},
		{"x\u2028y\u0085z", []int{0}}, // only \n, \r\n and \r end lines
	} {
		m := NewMapper(tc.text)
		checkIndex(t, m, tc.text)
		if m.Text() != tc.text {
			t.Errorf("NewMapper(%q).Text() = %q", tc.text, m.Text())
		}
		if m.LineCount() != len(tc.starts) {
			t.Errorf("NewMapper(%q).LineCount() = %d; want %d", tc.text, m.LineCount(), len(tc.starts))
			continue
		}
		for line, want := range tc.starts {
			if got := m.LineStart(line); got != want {
				t.Errorf("NewMapper(%q).LineStart(%d) = %d; want %d", tc.text, line, got, want)
			}
		}
		for off := 0; off <= len(tc.text); off++ {
			want := 0
			for i, s := range tc.starts {
				if s <= off {
					want = i
				}
			}
			if got := m.LineOf(off); got != want {
				t.Errorf("NewMapper(%q).LineOf(%d) = %d; want %d", tc.text, off, got, want)
			}
		}
	}
}

func TestUnits(t *testing.T) {
	for _, tc := range []struct {
		s            string
		u8, u16, u32 int
	}{
		{"", 0, 0, 0},
		{"abc", 3, 3, 3},
		{"日本語", 9, 3, 3},
		{"𐐀", 4, 2, 1},
		{combined, 4, 3, 3},
		{zwj, 11, 5, 3},
		{invalid, 5, 5, 5},
		{truncated, 4, 4, 4},
		{fffd, 4, 2, 2},
		{stray, 3, 2, 2},
		{surrogate, 3, 3, 3},
	} {
		for k, want := range map[Kind]int{UTF8: tc.u8, UTF16: tc.u16, UTF32: tc.u32} {
			if got := Units(tc.s, k); got != want {
				t.Errorf("Units(%q, %v) = %d; want %d", tc.s, k, got, want)
			}
		}
	}
}

// TestOffsetPosition converts offsets to positions in every encoding, then checks that the positions
// convert back to the same offsets.
func TestOffsetPosition(t *testing.T) {
	for _, tc := range []struct {
		text         string
		offset       int
		u8, u16, u32 Position
		err          error
	}{
		// Astral-plane characters.
		{text: astral, offset: 0, u8: pos(0, 0), u16: pos(0, 0), u32: pos(0, 0)},
		{text: astral, offset: 1, err: ErrInsideCharacter},
		{text: astral, offset: 2, err: ErrInsideCharacter},
		{text: astral, offset: 3, err: ErrInsideCharacter},
		{text: astral, offset: 4, u8: pos(0, 4), u16: pos(0, 2), u32: pos(0, 1)},
		{text: astral, offset: 5, u8: pos(0, 5), u16: pos(0, 3), u32: pos(0, 2)},
		{text: astral, offset: 6, u8: pos(0, 6), u16: pos(0, 4), u32: pos(0, 3)},
		{text: astral, offset: 7, u8: pos(1, 0), u16: pos(1, 0), u32: pos(1, 0)},
		{text: astral, offset: 9, err: ErrInsideCharacter},
		{text: astral, offset: 11, u8: pos(1, 4), u16: pos(1, 2), u32: pos(1, 1)},
		{text: astral, offset: 13, u8: pos(1, 6), u16: pos(1, 4), u32: pos(1, 3)},
		{text: astral, offset: 14, err: ErrOutOfRange},
		{text: astral, offset: -1, err: ErrOutOfRange},
		{text: astral, offset: math.MinInt, err: ErrOutOfRange},
		{text: astral, offset: math.MaxInt, err: ErrOutOfRange},
		// CJK.
		{text: cjk, offset: 3, u8: pos(0, 3), u16: pos(0, 1), u32: pos(0, 1)},
		{text: cjk, offset: 4, err: ErrInsideCharacter},
		{text: cjk, offset: 8, err: ErrInsideCharacter},
		{text: cjk, offset: 9, u8: pos(0, 9), u16: pos(0, 3), u32: pos(0, 3)},
		{text: cjk, offset: 10, u8: pos(1, 0), u16: pos(1, 0), u32: pos(1, 0)},
		// Combining marks are characters of their own.
		{text: combined, offset: 1, u8: pos(0, 1), u16: pos(0, 1), u32: pos(0, 1)},
		{text: combined, offset: 2, err: ErrInsideCharacter},
		{text: combined, offset: 3, u8: pos(0, 3), u16: pos(0, 2), u32: pos(0, 2)},
		{text: combined, offset: 4, u8: pos(0, 4), u16: pos(0, 3), u32: pos(0, 3)},
		// An emoji ZWJ sequence is three code points.
		{text: zwj, offset: 2, err: ErrInsideCharacter},
		{text: zwj, offset: 4, u8: pos(0, 4), u16: pos(0, 2), u32: pos(0, 1)},
		{text: zwj, offset: 5, err: ErrInsideCharacter},
		{text: zwj, offset: 7, u8: pos(0, 7), u16: pos(0, 3), u32: pos(0, 2)},
		{text: zwj, offset: 9, err: ErrInsideCharacter},
		{text: zwj, offset: 11, u8: pos(0, 11), u16: pos(0, 5), u32: pos(0, 3)},
		// "\r\n" is one line ending; the byte between them is not addressable.
		{text: crlf, offset: 1, u8: pos(0, 1), u16: pos(0, 1), u32: pos(0, 1)},
		{text: crlf, offset: 2, err: ErrInsideCharacter},
		{text: crlf, offset: 3, u8: pos(1, 0), u16: pos(1, 0), u32: pos(1, 0)},
		{text: crlf, offset: 4, u8: pos(1, 1), u16: pos(1, 1), u32: pos(1, 1)},
		{text: "é\r\n", offset: 3, err: ErrInsideCharacter},
		{text: "é\r\n", offset: 4, u8: pos(1, 0), u16: pos(1, 0), u32: pos(1, 0)},
		// A lone "\r" ends a line.
		{text: loneCR, offset: 2, u8: pos(0, 2), u16: pos(0, 1), u32: pos(0, 1)},
		{text: loneCR, offset: 3, u8: pos(1, 0), u16: pos(1, 0), u32: pos(1, 0)},
		{text: loneCR, offset: 4, u8: pos(1, 1), u16: pos(1, 1), u32: pos(1, 1)},
		{text: mixedEOL, offset: 0, u8: pos(0, 0), u16: pos(0, 0), u32: pos(0, 0)},
		{text: mixedEOL, offset: 1, u8: pos(1, 0), u16: pos(1, 0), u32: pos(1, 0)},
		{text: mixedEOL, offset: 2, err: ErrInsideCharacter},
		{text: mixedEOL, offset: 3, u8: pos(2, 0), u16: pos(2, 0), u32: pos(2, 0)},
		{text: mixedEOL, offset: 4, u8: pos(3, 0), u16: pos(3, 0), u32: pos(3, 0)},
		// Invalid UTF-8: each byte is a character of one unit.
		{text: invalid, offset: 1, u8: pos(0, 1), u16: pos(0, 1), u32: pos(0, 1)},
		{text: invalid, offset: 2, u8: pos(0, 2), u16: pos(0, 2), u32: pos(0, 2)},
		{text: invalid, offset: 4, u8: pos(0, 4), u16: pos(0, 4), u32: pos(0, 4)},
		{text: invalid, offset: 5, u8: pos(0, 5), u16: pos(0, 5), u32: pos(0, 5)},
		{text: truncated, offset: 1, u8: pos(0, 1), u16: pos(0, 1), u32: pos(0, 1)},
		{text: truncated, offset: 2, u8: pos(0, 2), u16: pos(0, 2), u32: pos(0, 2)},
		{text: truncated, offset: 3, u8: pos(0, 3), u16: pos(0, 3), u32: pos(0, 3)},
		{text: truncated, offset: 4, u8: pos(0, 4), u16: pos(0, 4), u32: pos(0, 4)},
		{text: surrogate, offset: 1, u8: pos(0, 1), u16: pos(0, 1), u32: pos(0, 1)},
		{text: surrogate, offset: 2, u8: pos(0, 2), u16: pos(0, 2), u32: pos(0, 2)},
		{text: stray, offset: 1, err: ErrInsideCharacter},
		{text: stray, offset: 2, u8: pos(0, 2), u16: pos(0, 1), u32: pos(0, 1)},
		{text: stray, offset: 3, u8: pos(0, 3), u16: pos(0, 2), u32: pos(0, 2)},
		// A real U+FFFD is one valid character.
		{text: fffd, offset: 1, err: ErrInsideCharacter},
		{text: fffd, offset: 2, err: ErrInsideCharacter},
		{text: fffd, offset: 3, u8: pos(0, 3), u16: pos(0, 1), u32: pos(0, 1)},
		// The empty text.
		{text: "", offset: 0, u8: pos(0, 0), u16: pos(0, 0), u32: pos(0, 0)},
		{text: "", offset: 1, err: ErrOutOfRange},
		{text: "", offset: -1, err: ErrOutOfRange},
		{text: "a\n", offset: 2, u8: pos(1, 0), u16: pos(1, 0), u32: pos(1, 0)},
	} {
		m := NewMapper(tc.text)
		for k, want := range map[Kind]Position{UTF8: tc.u8, UTF16: tc.u16, UTF32: tc.u32} {
			got, err := m.OffsetPosition(tc.offset, k)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Errorf("OffsetPosition(%q, %d, %v) = %v, %v; want error %v", tc.text, tc.offset, k, got, err, tc.err)
				}
				continue
			}
			if err != nil || got != want {
				t.Errorf("OffsetPosition(%q, %d, %v) = %v, %v; want %v", tc.text, tc.offset, k, got, err, want)
				continue
			}
			if back, err := m.PositionOffset(got, k); err != nil || back != tc.offset {
				t.Errorf("PositionOffset(%q, %v, %v) = %d, %v; want %d", tc.text, got, k, back, err, tc.offset)
			}
		}
	}
}

// TestPositionOffset covers the rules that only apply from positions to offsets: rounding, columns
// past the end of a line and the end-of-text line.
func TestPositionOffset(t *testing.T) {
	type row struct {
		text string
		kind Kind
		pos  Position
		want int
		err  error
	}
	rows := []row{
		// Astral-plane characters: a column inside the character rounds down.
		{astral, UTF8, pos(0, 2), 0, nil},
		{astral, UTF8, pos(0, 3), 0, nil},
		{astral, UTF8, pos(1, 1), 7, nil},
		{astral, UTF16, pos(0, 1), 0, nil},
		{astral, UTF16, pos(1, 1), 7, nil},
		{astral, UTF16, pos(0, 2), 4, nil},
		{astral, UTF32, pos(0, 1), 4, nil},
		{astral, UTF32, pos(1, 1), 11, nil},
		// CJK.
		{cjk, UTF8, pos(0, 4), 3, nil},
		{cjk, UTF8, pos(0, 5), 3, nil},
		{cjk, UTF16, pos(0, 2), 6, nil},
		{cjk, UTF32, pos(0, 2), 6, nil},
		// Combining marks.
		{combined, UTF8, pos(0, 2), 1, nil},
		{combined, UTF16, pos(0, 1), 1, nil},
		{combined, UTF16, pos(0, 2), 3, nil},
		{combined, UTF32, pos(0, 2), 3, nil},
		// ZWJ sequences: inside either surrogate pair rounds down.
		{zwj, UTF16, pos(0, 1), 0, nil},
		{zwj, UTF16, pos(0, 3), 7, nil},
		{zwj, UTF16, pos(0, 4), 7, nil},
		{zwj, UTF16, pos(0, 5), 11, nil},
		{zwj, UTF8, pos(0, 5), 4, nil},
		{zwj, UTF8, pos(0, 6), 4, nil},
		{zwj, UTF8, pos(0, 8), 7, nil},
		{zwj, UTF32, pos(0, 2), 7, nil},
		// Invalid UTF-8: stray bytes are characters of their own, even in utf-8.
		{invalid, UTF8, pos(0, 2), 2, nil},
		{invalid, UTF16, pos(0, 2), 2, nil},
		{invalid, UTF16, pos(0, 4), 4, nil},
		{invalid, UTF32, pos(0, 4), 4, nil},
		{truncated, UTF8, pos(0, 1), 1, nil},
		{truncated, UTF16, pos(0, 3), 3, nil},
		{stray, UTF8, pos(0, 1), 0, nil},
		{stray, UTF8, pos(0, 2), 2, nil},
		{stray, UTF16, pos(0, 1), 2, nil},
		{stray, UTF16, pos(0, 2), 3, nil},
		{fffd, UTF8, pos(0, 2), 0, nil},
		{fffd, UTF16, pos(0, 1), 3, nil},
	}
	// Rules that hold alike in every encoding.
	for _, k := range kinds {
		rows = append(rows,
			// A column past the end of the line is the end of the line, before its ending.
			row{astral, k, pos(0, 7), 6, nil},
			row{astral, k, pos(0, 1000), 6, nil},
			row{astral, k, pos(0, math.MaxInt), 6, nil},
			row{astral, k, pos(1, 99), 13, nil},
			row{astral, k, pos(1, math.MaxInt), 13, nil},
			row{cjk, k, pos(0, 10), 9, nil},
			row{"abc\ndef", k, pos(0, math.MaxInt), 3, nil},
			row{"abc", k, pos(0, math.MaxInt-1), 3, nil},
			row{crlf, k, pos(0, 1), 1, nil},
			row{crlf, k, pos(0, 2), 1, nil},
			row{crlf, k, pos(0, 9), 1, nil},
			row{crlf, k, pos(1, 0), 3, nil},
			row{crlf, k, pos(1, 5), 4, nil},
			row{loneCR, k, pos(0, 9), 2, nil},
			row{loneCR, k, pos(1, 0), 3, nil},
			row{loneCR, k, pos(1, 1), 4, nil},
			row{mixedEOL, k, pos(1, 3), 1, nil},
			row{mixedEOL, k, pos(2, 0), 3, nil},
			row{mixedEOL, k, pos(3, 0), 4, nil},
			// (lineCount, c) is the end of the text for any c.
			row{astral, k, pos(2, 0), 13, nil},
			row{astral, k, pos(2, 12345), 13, nil},
			row{"a\n", k, pos(1, 0), 2, nil},
			row{"a\n", k, pos(1, 5), 2, nil},
			row{"a\n", k, pos(2, 0), 2, nil},
			row{"a\r", k, pos(2, 0), 2, nil},
			row{crlf, k, pos(2, 3), 4, nil},
			row{mixedEOL, k, pos(4, 0), 4, nil},
			row{"", k, pos(0, 0), 0, nil},
			row{"", k, pos(0, 3), 0, nil},
			row{"", k, pos(1, 7), 0, nil},
			// A line beyond lineCount is an error.
			row{astral, k, pos(3, 0), 0, ErrOutOfRange},
			row{"a\n", k, pos(3, 0), 0, ErrOutOfRange},
			row{"", k, pos(2, 0), 0, ErrOutOfRange},
			row{"", k, pos(math.MaxInt, 0), 0, ErrOutOfRange},
			// Negative values are errors.
			row{astral, k, pos(-1, 0), 0, ErrOutOfRange},
			row{astral, k, pos(0, -1), 0, ErrOutOfRange},
			row{astral, k, pos(2, -1), 0, ErrOutOfRange},
			row{astral, k, pos(math.MinInt, math.MinInt), 0, ErrOutOfRange},
			row{"", k, pos(0, -1), 0, ErrOutOfRange},
		)
	}
	for _, tc := range rows {
		m := NewMapper(tc.text)
		got, err := m.PositionOffset(tc.pos, tc.kind)
		if tc.err != nil {
			if !errors.Is(err, tc.err) {
				t.Errorf("PositionOffset(%q, %v, %v) = %d, %v; want error %v", tc.text, tc.pos, tc.kind, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("PositionOffset(%q, %v, %v) = %d, %v; want %d", tc.text, tc.pos, tc.kind, got, err, tc.want)
		}
	}
}

func TestRanges(t *testing.T) {
	m := NewMapper(astral)
	for _, k := range kinds {
		r, err := m.OffsetsRange(4, 11, k)
		if err != nil {
			t.Fatalf("OffsetsRange(4, 11, %v): %v", k, err)
		}
		start, end, err := m.RangeOffsets(r, k)
		if err != nil || start != 4 || end != 11 {
			t.Errorf("RangeOffsets(%v, %v) = %d, %d, %v; want 4, 11", r, k, start, end, err)
		}
		if _, err := m.OffsetsRange(1, 11, k); !errors.Is(err, ErrInsideCharacter) {
			t.Errorf("OffsetsRange(1, 11, %v) error = %v; want ErrInsideCharacter", k, err)
		}
		if _, err := m.OffsetsRange(4, 99, k); !errors.Is(err, ErrOutOfRange) {
			t.Errorf("OffsetsRange(4, 99, %v) error = %v; want ErrOutOfRange", k, err)
		}
		if _, _, err := m.RangeOffsets(Range{Start: pos(1, 0), End: pos(0, 0)}, k); !errors.Is(err, ErrOutOfRange) {
			t.Errorf("RangeOffsets with start after end, %v: error = %v; want ErrOutOfRange", k, err)
		}
		if _, _, err := m.RangeOffsets(Range{Start: pos(0, 0), End: pos(5, 0)}, k); !errors.Is(err, ErrOutOfRange) {
			t.Errorf("RangeOffsets with end beyond the text, %v: error = %v; want ErrOutOfRange", k, err)
		}
		if _, _, err := m.RangeOffsets(Range{Start: pos(-1, 0), End: pos(0, 0)}, k); !errors.Is(err, ErrOutOfRange) {
			t.Errorf("RangeOffsets with a negative start, %v: error = %v; want ErrOutOfRange", k, err)
		}
		// Columns past the end of a line are clamped before the comparison.
		start, end, err = m.RangeOffsets(Range{Start: pos(0, 99), End: pos(1, 0)}, k)
		if err != nil || start != 6 || end != 7 {
			t.Errorf("RangeOffsets((0,99)-(1,0), %v) = %d, %d, %v; want 6, 7", k, start, end, err)
		}
	}
}

// sameMapper reports how got differs from NewMapper(text), or "" when it does not.
func sameMapper(got *Mapper, text string) string {
	want := NewMapper(text)
	switch {
	case got.Text() != want.Text():
		return fmt.Sprintf("text %q, want %q", got.Text(), want.Text())
	case got.LineCount() != want.LineCount():
		return fmt.Sprintf("line count %d, want %d", got.LineCount(), want.LineCount())
	case got.ascii() != want.ascii() || got.root().nonASCII != want.root().nonASCII:
		return fmt.Sprintf("ascii %v with %d non-ASCII bytes, want %v with %d", got.ascii(), got.root().nonASCII, want.ascii(), want.root().nonASCII)
	}
	for line := 0; line < want.LineCount(); line++ {
		if got.LineStart(line) != want.LineStart(line) {
			return fmt.Sprintf("LineStart(%d) = %d, want %d (line starts %v, want %v)",
				line, got.LineStart(line), want.LineStart(line), lineStarts(got), lineStarts(want))
		}
	}
	return ""
}

func TestEdit(t *testing.T) {
	for _, tc := range []struct {
		text       string
		start, end int
		insert     string
	}{
		{"", 0, 0, ""},
		{"", 0, 0, "a\nb"},
		{"abc", 0, 3, ""},
		{"abc", 1, 1, "\n"},
		{"a\nb\nc\nd", 2, 3, "x\ny\nz"},
		{"a\nb\nc\nd", 1, 6, ""},
		// "\r" and "\n" joining at the left edge of the edit.
		{"a\rb", 2, 3, "\nc"},
		{"a\r", 2, 2, "\n"},
		{"a\rX\nb", 2, 3, ""},
		// ... and at the right edge.
		{"a\nb", 1, 1, "\r"},
		{"\nb", 0, 0, "\r"},
		{"a\r\nb", 1, 1, "x\r"},
		// Splitting a "\r\n".
		{"a\r\nb", 2, 2, "x"},
		{"a\r\nb", 1, 2, ""},
		{"a\r\nb", 2, 3, ""},
		{"a\r\nb", 2, 3, "\r"},
		{"\r\n\r\n", 1, 3, ""},
		{"\r\n\r\n", 1, 3, "\n\r"},
		{"\r\n", 0, 1, ""},
		{"\r\n", 1, 2, ""},
		// Edits at the very start and end.
		{"\nabc\n", 0, 1, ""},
		{"\nabc\n", 4, 5, ""},
		{"abc\r", 4, 4, "\n"},
		{"abc", 3, 3, "\r"},
		// The ascii flag follows the non-ASCII bytes in and out.
		{"é\nx", 0, 2, ""},
		{"é\nx", 0, 1, ""},
		{"x\ny", 1, 1, "日本"},
		{"日本\nx", 3, 6, "a"},
		{"\xff", 0, 1, "\xc3"},
	} {
		m := NewMapper(tc.text)
		edited := tc.text[:tc.start] + tc.insert + tc.text[tc.end:]
		got := m.Edit(tc.start, tc.end, tc.insert)
		if diff := sameMapper(got, edited); diff != "" {
			t.Errorf("NewMapper(%q).Edit(%d, %d, %q): %s", tc.text, tc.start, tc.end, tc.insert, diff)
		}
		if diff := sameMapper(m, tc.text); diff != "" {
			t.Errorf("NewMapper(%q).Edit(%d, %d, %q) changed the original: %s", tc.text, tc.start, tc.end, tc.insert, diff)
		}
	}
}

func TestEditPanics(t *testing.T) {
	m := NewMapper("abc")
	for _, r := range [][2]int{{-1, 0}, {2, 1}, {0, 4}, {4, 4}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Edit(%d, %d) on a 3-byte text did not panic", r[0], r[1])
				}
			}()
			m.Edit(r[0], r[1], "x")
		}()
	}
}

// boundaries returns, for every offset in [0, len(text)], whether a position can address it: it
// is not inside a valid multi-byte character nor between "\r" and "\n". It walks the text one
// character at a time, independently of the Mapper.
func boundaries(text string) []bool {
	ok := make([]bool, len(text)+1)
	for i := 0; i < len(text); {
		ok[i] = true
		if text[i] == '\r' && i+1 < len(text) && text[i+1] == '\n' {
			i += 2
			continue
		}
		_, size := utf8.DecodeRuneInString(text[i:])
		i += size
	}
	ok[len(text)] = true
	return ok
}

// refStarts returns the line starts of text and its number of non-ASCII bytes, byte by byte.
func refStarts(text string) (starts []int, nonASCII int) {
	starts = []int{0}
	for i := 0; i < len(text); i++ {
		switch c := text[i]; {
		case c == '\n' || c == '\r' && (i+1 == len(text) || text[i+1] != '\n'):
			starts = append(starts, i+1)
		case c >= 0x80:
			nonASCII++
		}
	}
	return starts, nonASCII
}

// checkIndex fails unless m indexes text as refStarts does.
func checkIndex(t *testing.T, m *Mapper, text string) {
	t.Helper()
	starts, nonASCII := refStarts(text)
	if m.Text() != text || !slices.Equal(lineStarts(m), starts) || m.root().nonASCII != nonASCII || m.ascii() != (nonASCII == 0) {
		t.Fatalf("mapper of %q: line starts %v, %d non-ASCII bytes (ascii %v); want %v, %d",
			text, lineStarts(m), m.root().nonASCII, m.ascii(), starts, nonASCII)
	}
}

var fuzzSeeds = []string{
	"",
	"a",
	"hello\nworld\n",
	astral,
	cjk,
	combined,
	zwj,
	crlf,
	loneCR,
	mixedEOL,
	invalid,
	truncated,
	fffd,
	stray,
	surrogate,
	"\r",
	"\n\r",
	"x\r\n\r\ny\r",
	"𐐀\r\n日本\re\u0301\n👩\u200d💻\xff",
}

func FuzzRoundTrip(f *testing.F) {
	for i, s := range fuzzSeeds {
		f.Add(s, i)
		f.Add(s, len(s)/2)
	}
	f.Add("a\r\nb", 2)
	f.Add("é", -1)
	f.Fuzz(func(t *testing.T, text string, offset int) {
		m := NewMapper(text)
		checkIndex(t, m, text)
		ok := boundaries(text)
		check := func(off int) {
			for _, k := range kinds {
				p, err := m.OffsetPosition(off, k)
				switch {
				case off < 0 || off > len(text):
					if !errors.Is(err, ErrOutOfRange) {
						t.Fatalf("OffsetPosition(%q, %d, %v) = %v, %v; want ErrOutOfRange", text, off, k, p, err)
					}
					continue
				case !ok[off]:
					if !errors.Is(err, ErrInsideCharacter) {
						t.Fatalf("OffsetPosition(%q, %d, %v) = %v, %v; want ErrInsideCharacter", text, off, k, p, err)
					}
					continue
				case err != nil:
					t.Fatalf("OffsetPosition(%q, %d, %v): %v", text, off, k, err)
				}
				if p.Line < 0 || p.Line >= m.LineCount() || p.Character < 0 {
					t.Fatalf("OffsetPosition(%q, %d, %v) = %v: outside the text", text, off, k, p)
				}
				if want := Units(text[m.LineStart(p.Line):off], k); p.Character != want {
					t.Fatalf("OffsetPosition(%q, %d, %v) = %v; want character %d", text, off, k, p, want)
				}
				back, err := m.PositionOffset(p, k)
				if err != nil || back != off {
					t.Fatalf("PositionOffset(%q, %v, %v) = %d, %v; want %d", text, p, k, back, err, off)
				}
			}
		}
		check(offset)
		if len(text) <= 64 { // every offset of short texts; longer ones rely on the fuzzed offset
			for off := 0; off <= len(text); off++ {
				check(off)
			}
		}
	})
}

func FuzzPositionOffset(f *testing.F) {
	for i, s := range fuzzSeeds {
		f.Add(s, 0, i)
		f.Add(s, 1, 1)
		f.Add(s, NewMapper(s).LineCount(), 3)
	}
	f.Add(astral, 0, 1)
	f.Add(astral, 3, 0)
	f.Add("abc", 0, math.MaxInt)
	f.Add("abc", -1, 0)
	f.Add("abc", 0, -1)
	f.Fuzz(func(t *testing.T, text string, line, char int) {
		m := NewMapper(text)
		ok := boundaries(text)
		for _, k := range kinds {
			off, err := m.PositionOffset(Position{Line: line, Character: char}, k)
			if line < 0 || char < 0 || line > m.LineCount() {
				if !errors.Is(err, ErrOutOfRange) {
					t.Fatalf("PositionOffset(%q, %d:%d, %v) = %d, %v; want ErrOutOfRange", text, line, char, k, off, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("PositionOffset(%q, %d:%d, %v): %v", text, line, char, k, err)
			}
			if off < 0 || off > len(text) || !ok[off] {
				t.Fatalf("PositionOffset(%q, %d:%d, %v) = %d: not a character boundary", text, line, char, k, off)
			}
			if line == m.LineCount() {
				if off != len(text) {
					t.Fatalf("PositionOffset(%q, %d:%d, %v) = %d; want the end of the text", text, line, char, k, off)
				}
				continue
			}
			// The offset is on the requested line, at or before the requested column, and the next
			// character (if any on the line) would have passed it.
			p, err := m.OffsetPosition(off, k)
			if err != nil || p.Line != line || p.Character > char {
				t.Fatalf("PositionOffset(%q, %d:%d, %v) = %d, which is %v, %v", text, line, char, k, off, p, err)
			}
		}
	})
}

func FuzzEdit(f *testing.F) {
	for i, s := range fuzzSeeds {
		f.Add(s, i, i+1, fuzzSeeds[(i+3)%len(fuzzSeeds)])
		f.Add(s, 0, len(s), "\n")
	}
	f.Add("a\rb", 2, 3, "\nc")
	f.Add("a\rX\nb", 2, 3, "")
	f.Add("a\nb", 1, 1, "\r")
	f.Add("a\r\nb", 2, 2, "x")
	f.Add("é\nx", 0, 2, "")
	f.Fuzz(func(t *testing.T, text string, start, end int, insert string) {
		start = int(uint(start) % uint(len(text)+1))
		end = int(uint(end) % uint(len(text)+1))
		if start > end {
			start, end = end, start
		}
		checkEdit(t, text, start, end, insert)
		// Again with leaves of a few bytes, so that the same inputs cut through a deep rope.
		tinyRope(t)
		checkEdit(t, text, start, end, insert)
	})
}

// checkEdit checks NewMapper(text).Edit(start, end, insert) against NewMapper of the edited text,
// and that undoing the edit gives the original back.
func checkEdit(t *testing.T, text string, start, end int, insert string) {
	t.Helper()
	{
		m := NewMapper(text)
		edited := text[:start] + insert + text[end:]
		got := m.Edit(start, end, insert)
		checkIndex(t, got, edited)
		if diff := sameMapper(got, edited); diff != "" {
			t.Fatalf("NewMapper(%q).Edit(%d, %d, %q): %s", text, start, end, insert, diff)
		}
		// Undo the edit on the edited mapper: back to the original, and the original untouched.
		back := got.Edit(start, start+len(insert), text[start:end])
		if diff := sameMapper(back, text); diff != "" {
			t.Fatalf("undoing NewMapper(%q).Edit(%d, %d, %q): %s", text, start, end, insert, diff)
		}
		if diff := sameMapper(m, text); diff != "" {
			t.Fatalf("NewMapper(%q).Edit changed the original: %s", text, diff)
		}
		checkRope(t, got.root())
		checkRope(t, back.root())
	}
}

// lineStarts returns every line start of m, through LineStart.
func lineStarts(m *Mapper) []int {
	starts := make([]int, m.LineCount())
	for i := range starts {
		starts[i] = m.LineStart(i)
	}
	return starts
}
