package encoding

import (
	"fmt"
	"strings"
	"testing"
)

// sourceLike returns about size bytes of Go-like source. With nonASCII, every line carries
// non-ASCII text (CJK, an accented letter, an astral-plane character) in its middle; otherwise the
// text is ASCII except, when sprinkle is set, one comment line in a hundred.
func sourceLike(size int, nonASCII, sprinkle bool) string {
	var b strings.Builder
	b.Grow(size + 128)
	b.WriteString("package bench\n\n")
	for i := 0; b.Len() < size; i++ {
		switch {
		case nonASCII:
			fmt.Fprintf(&b, "\tname%d := \"日本語 café 𐐀 %d\" + suffix(%d) // ünïcödé\n", i, i, i%7)
		case sprinkle && i%100 == 0:
			fmt.Fprintf(&b, "// Section %d — naïve café, 日本.\n", i)
		case i%10 == 0:
			fmt.Fprintf(&b, "func handler%d(ctx context.Context, req *Request) (*Response, error) {\n", i)
		case i%10 == 9:
			b.WriteString("}\n\n")
		default:
			fmt.Fprintf(&b, "\tvalue%d, err := compute(ctx, req.Field%d, %d)\n", i, i%13, i*7)
		}
	}
	return b.String()
}

type benchDoc struct {
	name string
	m    *Mapper
	// lines are the lines to convert in: ASCII or non-ASCII as the case says.
	lines []int
}

func benchDocs() []benchDoc {
	const size = 1 << 20
	pick := func(m *Mapper, wantASCII bool) []int {
		var lines []int
		for l := 0; l < m.LineCount()-1; l++ {
			line := m.Text()[m.LineStart(l):m.LineContentEnd(l)]
			if len(line) > 8 && (countNonASCII(line) == 0) == wantASCII {
				lines = append(lines, l)
			}
		}
		return lines
	}
	ascii := NewMapper(sourceLike(size, false, false))
	mixed := NewMapper(sourceLike(size, false, true))
	non := NewMapper(sourceLike(size, true, false))
	return []benchDoc{
		{"ascii", ascii, pick(ascii, true)},
		{"ascii-line-in-mixed", mixed, pick(mixed, true)},
		{"non-ascii", non, pick(non, false)},
	}
}

// benchPoints returns, for each line, the offset and position of a character in its middle (past
// the non-ASCII part of the non-ASCII lines).
func benchPoints(d benchDoc, k Kind) ([]int, []Position) {
	offs := make([]int, 0, len(d.lines))
	ps := make([]Position, 0, len(d.lines))
	for _, l := range d.lines {
		start, end := d.m.LineStart(l), d.m.LineContentEnd(l)
		off := start + (end-start)*3/4
		for off > start && !boundaries(d.m.Text()[start:end])[off-start] {
			off--
		}
		p, err := d.m.OffsetPosition(off, k)
		if err != nil {
			panic(err)
		}
		offs = append(offs, off)
		ps = append(ps, p)
	}
	return offs, ps
}

func BenchmarkPositionOffset(b *testing.B) {
	for _, d := range benchDocs() {
		for _, k := range kinds {
			offs, ps := benchPoints(d, k)
			b.Run(d.name+"/"+k.String(), func(b *testing.B) {
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					off, err := d.m.PositionOffset(ps[i], k)
					if err != nil || off != offs[i] {
						b.Fatalf("PositionOffset(%v) = %d, %v; want %d", ps[i], off, err, offs[i])
					}
					if i++; i == len(ps) {
						i = 0
					}
				}
			})
		}
	}
}

func BenchmarkOffsetPosition(b *testing.B) {
	for _, d := range benchDocs() {
		for _, k := range kinds {
			offs, ps := benchPoints(d, k)
			b.Run(d.name+"/"+k.String(), func(b *testing.B) {
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					p, err := d.m.OffsetPosition(offs[i], k)
					if err != nil || p != ps[i] {
						b.Fatalf("OffsetPosition(%d) = %v, %v; want %v", offs[i], p, err, ps[i])
					}
					if i++; i == len(ps) {
						i = 0
					}
				}
			})
		}
	}
}

func BenchmarkNewMapper(b *testing.B) {
	for _, tc := range []struct {
		name string
		text string
	}{
		{"ascii-1MB", sourceLike(1<<20, false, false)},
		{"non-ascii-1MB", sourceLike(1<<20, true, false)},
		{"crlf-1MB", strings.ReplaceAll(sourceLike(1<<20, false, true), "\n", "\r\n")},
		{"lone-cr-1MB", strings.ReplaceAll(sourceLike(1<<20, false, true), "\n", "\r")},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(tc.text)))
			for b.Loop() {
				NewMapper(tc.text)
			}
		})
	}
}

// BenchmarkEdit is a one-character insertion in the middle of the text, against NewMapper of the
// edited text (what Edit used to cost).
func BenchmarkEdit(b *testing.B) {
	text := sourceLike(1<<20, false, true)
	m := NewMapper(text)
	mid := m.LineStart(m.LineCount() / 2)
	b.Run("incremental-1MB", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			m.Edit(mid, mid, "x")
		}
	})
	b.Run("rebuild-1MB", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			NewMapper(text[:mid] + "x" + text[mid:])
		}
	})
}
