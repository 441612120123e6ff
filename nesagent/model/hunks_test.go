package model

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// region21 is a 21-line region: the size of Zeta's and Sweep's.
func region21() []string {
	var lines []string
	for i := 0; i < 21; i++ {
		lines = append(lines, fmt.Sprintf("\tv%d := f(%d)", i, i))
	}
	return lines
}

// feedLines gives the rewrite to a hunkReader a line at a time, and says after which line of the
// rewrite each streamHunk came.
func feedLines(region, rewrite []string) (hunks []streamHunk, after []int) {
	h := newHunkReader(strings.Join(region, "\n") + "\n")
	for i, l := range rewrite {
		for _, hk := range h.add(l) {
			hunks = append(hunks, hk)
			after = append(after, i)
		}
	}
	return hunks, after
}

func with(lines []string, at int, del int, add ...string) []string {
	out := append([]string(nil), lines[:at]...)
	out = append(out, add...)
	return append(out, lines[at+del:]...)
}

func TestHunkReader(t *testing.T) {
	r := region21()
	cases := []struct {
		name    string
		rewrite []string
		want    []streamHunk
		after   []int // the rewrite's line after which each streamHunk is complete
	}{
		{"a change on line 2, complete two lines later", with(r, 1, 1, "\tv1 := f(100)"),
			[]streamHunk{{1, 2, []string{"\tv1 := f(100)"}}}, []int{3}},
		{"at the start", with(r, 0, 1, "\tv0 := g(0)"), []streamHunk{{0, 1, []string{"\tv0 := g(0)"}}}, []int{2}},
		{"in the middle", with(r, 10, 1, "\tv10 := g(10)"), []streamHunk{{10, 11, []string{"\tv10 := g(10)"}}}, []int{12}},
		{"several hunks, each as it completes", with(with(r, 2, 1, "\tv2 := g(2)"), 12, 1, "\tv12 := g(12)"),
			[]streamHunk{{2, 3, []string{"\tv2 := g(2)"}}, {12, 13, []string{"\tv12 := g(12)"}}}, []int{4, 14}},
		{"lines added", with(r, 3, 0, "\tif v2 > 0 {", "\t\treturn", "\t}"), []streamHunk{{3, 3, []string{"\tif v2 > 0 {", "\t\treturn", "\t}"}}}, []int{7}},
		{"lines removed", with(r, 4, 3), []streamHunk{{4, 7, nil}}, []int{5}},
		{"nothing changed", r, nil, nil},
		{"a blank line and a brace do not confirm", with([]string{"a := 1", "if a {", "", "}", "b := 2", "c := 3"}, 1, 1, "if a > 0 {"),
			[]streamHunk{{1, 2, []string{"if a > 0 {"}}}, []int{4}},
	}
	for _, tc := range cases {
		region := r
		if strings.HasPrefix(tc.name, "a blank line") {
			region = []string{"a := 1", "if a {", "", "}", "b := 2", "c := 3"}
		}
		got, after := feedLines(region, tc.rewrite)
		if fmt.Sprint(got) != fmt.Sprint(tc.want) || fmt.Sprint(after) != fmt.Sprint(tc.after) {
			t.Errorf("%s:\n got %v after lines %v\nwant %v after lines %v", tc.name, got, after, tc.want, tc.after)
		}
	}
}

// TestHunkReaderCRLF: a region and a rewrite with CRLF line breaks compare as lines.
func TestHunkReaderCRLF(t *testing.T) {
	h := newHunkReader("a := 1\r\nb := 2\r\nc := 3\r\nd := 4\r\n")
	var f lineFeed
	var got []streamHunk
	for _, piece := range []string{"a := 1\r\nb := ", "20\r\nc := 3\r", "\nd := 4\r\n"} {
		got = append(got, h.add(f.write(piece)...)...)
	}
	if fmt.Sprint(got) != fmt.Sprint([]streamHunk{{1, 2, []string{"b := 20"}}}) {
		t.Errorf("hunks %v", got)
	}
}

// TestLineFeedKeepsAMarkerWhole: a marker split between two pieces of the stream reaches the
// reader whole, in its line.
func TestLineFeedKeepsAMarkerWhole(t *testing.T) {
	var f lineFeed
	var lines []string
	for _, piece := range []string{"\tx := <|user_cu", "rsor|>1\n\ty", " := 2\n", "\tz"} {
		lines = append(lines, f.write(piece)...)
	}
	if fmt.Sprint(lines) != fmt.Sprint([]string{"\tx := <|user_cursor|>1", "\ty := 2"}) {
		t.Errorf("lines %q", lines)
	}
}

// hunkWork is the most lines a hunkReader may compare for each line of the region and of the
// rewrite: its work grows with the rewrite, never with the rewrite squared.
const hunkWork = 4

// TestHunkReaderWorkIsLinear: a rewrite of 4096 blank lines (a model that loops on line breaks,
// a hostile server) and a long rewrite of the region's own lines cost the reader a few line
// comparisons a line, however long they run, given a line at a time or all at once.
func TestHunkReaderWorkIsLinear(t *testing.T) {
	r := region21()[:20]
	code := regionLines(earlyBenchDoc)
	repeat := func(first, then []string, n int) []string {
		out := append([]string(nil), first...)
		for len(out) < n {
			out = append(out, then...)
		}
		return out[:n]
	}
	long := repeat(nil, code, 600)
	var everyFifth []string
	for k, l := range long {
		if k%5 == 2 {
			l = fmt.Sprintf("\tchanged(%d)", k)
		}
		everyFifth = append(everyFifth, l)
	}
	cases := []struct {
		name            string
		region, rewrite []string
		want            []streamHunk // nil: the reference's
	}{
		{"blank lines", r, repeat(nil, []string{""}, 4096), []streamHunk{}}, // blank lines confirm no change
		{"the region rewritten, then repeated", r, repeat(with(r, 1, 1, "\tv1 := f(100)"), r, 600), nil},
		{"code with blank lines and braces, then repeated", code, repeat(with(code, 6, 1, "\tn := 1"), code, 600), nil},
		{"the region's lines backwards, over and over", code, repeat(nil, reversed(code), 600), nil},
		{"a long region with a change every fifth line", long, everyFifth, nil},
	}
	for _, tc := range cases {
		for _, whole := range []bool{false, true} {
			name := tc.name
			h := newHunkReader(strings.Join(tc.region, "\n") + "\n")
			ref := &refHunkReader{region: tc.region}
			var got, want []streamHunk
			if whole {
				name += ", all at once"
				got = h.add(tc.rewrite...)
				if tc.want == nil {
					want = ref.add(tc.rewrite...)
				}
			} else {
				for _, l := range tc.rewrite {
					got = append(got, h.add(l)...)
					if tc.want == nil {
						want = append(want, ref.add(l)...)
					}
				}
			}
			if limit := hunkWork * (len(tc.region) + len(tc.rewrite)); h.compared > limit {
				t.Errorf("%s: %d lines compared for %d lines of rewrite, want at most %d", name, h.compared, len(tc.rewrite), limit)
			}
			if tc.want != nil {
				want = tc.want
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s:\n got %v\nwant %v", name, got, want)
			}
		}
	}
}

func reversed(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[len(lines)-1-i] = l
	}
	return out
}

// TestHunkReaderAsTheReference: on many small regions and rewrites, with lines that confirm and
// lines that do not (blank, braces), the rewrite cut into pieces anywhere, the hunkReader finds
// the same hunks, after the same pieces, as the reference: the pairs of lines compared anew at
// every line.
func TestHunkReaderAsTheReference(t *testing.T) {
	rnd := rand.New(rand.NewPCG(37, 2))
	alphabet := []string{"", "}", "{", "\t}", "a", "b := 1", "c()", "return x"}
	pick := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = alphabet[rnd.IntN(len(alphabet))]
		}
		return out
	}
	for run := 0; run < 20000; run++ {
		region := pick(rnd.IntN(12))
		// Mostly the region edited here and there, as a model rewrites it; sometimes anything.
		var rewrite []string
		if rnd.IntN(5) == 0 {
			rewrite = pick(rnd.IntN(16))
		} else {
			rewrite = append(rewrite, region...)
			for e := rnd.IntN(4); e > 0; e-- {
				at := rnd.IntN(len(rewrite) + 1)
				del := min(rnd.IntN(3), len(rewrite)-at)
				rewrite = with(rewrite, at, del, pick(rnd.IntN(3))...)
			}
		}
		brk := "\n"
		if rnd.IntN(4) == 0 {
			brk = "\r\n"
		}
		text := strings.Join(rewrite, brk)
		if len(rewrite) > 0 && rnd.IntN(2) == 0 {
			text += brk
		}
		h := newHunkReader(strings.Join(region, brk) + brk)
		ref := &refHunkReader{region: regionLines(strings.Join(region, brk) + brk)}
		var f lineFeed
		var got, want [][]streamHunk
		for len(text) > 0 {
			n := min(1+rnd.IntN(12), len(text))
			lines := f.write(text[:n])
			text = text[n:]
			got, want = append(got, h.add(lines...)), append(want, ref.add(lines...))
		}
		if limit := hunkWork * (len(region) + len(rewrite)); h.compared > limit {
			t.Errorf("region %q, rewrite %q: %d lines compared, want at most %d", region, rewrite, h.compared, limit)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("region %q, rewrite %q:\n got %v\nwant %v", region, rewrite, got, want)
		}
	}
}

// refHunkReader is the hunkReader as it first was, the reference: at every line it looks again
// at every pair of a region's line and a rewrite's line after what was read, the nearest first.
type refHunkReader struct {
	region, answer []string
	ri, ai         int
}

func (h *refHunkReader) add(lines ...string) []streamHunk {
	for _, l := range lines {
		h.answer = append(h.answer, strings.TrimSuffix(l, "\r"))
	}
	var out []streamHunk
	for {
		hk, ok := h.next()
		if !ok {
			return out
		}
		out = append(out, hk)
	}
}

func (h *refHunkReader) next() (streamHunk, bool) {
	i, j := h.ri, h.ai
	for i < len(h.region) && j < len(h.answer) && h.region[i] == h.answer[j] {
		i, j = i+1, j+1
	}
	h.ri, h.ai = i, j
	if i >= len(h.region) && j >= len(h.answer) {
		return streamHunk{}, false
	}
	for span := 0; span <= len(h.region)-i+len(h.answer)-j; span++ {
		for di := 0; di <= span; di++ {
			ri, aj := i+di, j+span-di
			if ri > len(h.region) || aj > len(h.answer) {
				continue
			}
			if h.confirms(ri, aj) {
				for ri > i && aj > j && h.region[ri-1] == h.answer[aj-1] {
					ri, aj = ri-1, aj-1
				}
				hk := streamHunk{regionStart: i, regionEnd: ri, lines: append([]string(nil), h.answer[j:aj]...)}
				h.ri, h.ai = ri, aj
				return hk, true
			}
		}
	}
	return streamHunk{}, false
}

func (h *refHunkReader) confirms(ri, aj int) bool {
	word := false
	for k := 0; k < confirmLines; k++ {
		switch {
		case ri+k >= len(h.region) || aj+k >= len(h.answer):
			return false
		case h.region[ri+k] != h.answer[aj+k]:
			return false
		}
		if strings.IndexFunc(h.region[ri+k], isWordRune) >= 0 {
			word = true
		}
	}
	return word
}
