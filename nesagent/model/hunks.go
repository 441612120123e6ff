package model

import (
	"strings"
)

// hunkReader compares a region's rewrite with the region line by line while the rewrite is still
// being written, and says when a changed streamHunk is complete: once the lines after it match the
// region's again, confirmLines of them, or once the rewrite has ended. A next-edit model rewrites
// its whole region (Zeta's and Sweep's are about 20 lines) even when the change is on its second
// line; the streamHunk it wrote first can be shown long before the rest is written.
//
// Only whole lines are compared: a line is read once its line break has come, so that a marker
// or a character split between two pieces of the stream is read whole.
type hunkReader struct {
	region []string // the region's lines, without their breaks
	answer []string // the rewrite's whole lines so far
	// done is how far the hunks found so far reach: region[:ri] and answer[:ai] are read.
	ri, ai int
}

// confirmLines is how many lines after a changed streamHunk must match the region again before the
// streamHunk is taken as complete. One is not enough: a blank line or a lone "}" matches by chance in
// the middle of a longer change; two in a row, one with a word in it, rarely do, and waiting for
// more delays the suggestion by a line of tokens each.
const confirmLines = 2

// streamHunk is one change of the region: region lines [regionStart, regionEnd) replaced by lines.
type streamHunk struct {
	regionStart, regionEnd int
	lines                  []string
}

func newHunkReader(region string) *hunkReader {
	return &hunkReader{region: regionLines(region)}
}

// regionLines is s's lines without their breaks ("\r\n" or "\n"); a final line break ends the last
// line rather than starting an empty one.
func regionLines(s string) []string {
	s = strings.TrimSuffix(strings.TrimSuffix(s, "\n"), "\r")
	if s == "" {
		return nil
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// add takes the rewrite's whole lines written since the last call, and returns the hunks they
// complete, in order.
func (h *hunkReader) add(lines ...string) []streamHunk {
	for _, l := range lines {
		h.answer = append(h.answer, strings.TrimSuffix(l, "\r"))
	}
	var out []streamHunk
	for {
		hk, ok := h.next(false)
		if !ok {
			return out
		}
		out = append(out, hk)
	}
}

// end says the rewrite has ended, and returns the hunks left: the last one runs to the region's
// end.
func (h *hunkReader) end() []streamHunk {
	var out []streamHunk
	for {
		hk, ok := h.next(true)
		if !ok {
			return out
		}
		out = append(out, hk)
	}
}

// next finds the next complete streamHunk after what was read. With ended, the rewrite is whole.
func (h *hunkReader) next(ended bool) (streamHunk, bool) {
	i, j := h.ri, h.ai
	for i < len(h.region) && j < len(h.answer) && h.region[i] == h.answer[j] {
		i, j = i+1, j+1
	}
	h.ri, h.ai = i, j
	if i >= len(h.region) && j >= len(h.answer) {
		return streamHunk{}, false
	}
	// The first place after (i, j) where confirmLines lines match again: the fewest lines
	// written or replaced first.
	for span := 0; span <= len(h.region)-i+len(h.answer)-j; span++ {
		for di := 0; di <= span; di++ {
			ri, aj := i+di, j+span-di
			if ri > len(h.region) || aj > len(h.answer) {
				continue
			}
			if h.confirms(ri, aj) {
				// Lines the same on both sides just before the confirming ones (a blank
				// line, a brace) are not part of the change.
				for ri > i && aj > j && h.region[ri-1] == h.answer[aj-1] {
					ri, aj = ri-1, aj-1
				}
				hk := streamHunk{regionStart: i, regionEnd: ri, lines: append([]string(nil), h.answer[j:aj]...)}
				h.ri, h.ai = ri, aj
				return hk, true
			}
		}
	}
	if !ended {
		return streamHunk{}, false
	}
	// The rewrite ended: the rest of the region is replaced by the rest of the rewrite, but for
	// the lines both end with.
	re, ae := len(h.region), len(h.answer)
	for re > i && ae > j && h.region[re-1] == h.answer[ae-1] {
		re, ae = re-1, ae-1
	}
	hk := streamHunk{regionStart: i, regionEnd: re, lines: append([]string(nil), h.answer[j:ae]...)}
	h.ri, h.ai = len(h.region), len(h.answer)
	return hk, true
}

// confirms says whether the region from line ri and the rewrite from line aj match for
// confirmLines lines, one of them with a word (or both run out together: the region's end,
// which a rewrite that ends there confirms).
func (h *hunkReader) confirms(ri, aj int) bool {
	word := false
	for k := 0; k < confirmLines; k++ {
		switch {
		case ri+k >= len(h.region) || aj+k >= len(h.answer):
			// The region's end: confirmed only when the rewrite ends there too, which is
			// said by end(), never while lines may still come.
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

// lineFeed cuts a stream's text into whole lines: it keeps what comes after the last line break
// until the rest of its line comes.
type lineFeed struct {
	partial strings.Builder
}

// write takes a piece of the stream and returns the lines it completes, without their breaks.
func (f *lineFeed) write(s string) []string {
	var out []string
	for {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			f.partial.WriteString(s)
			return out
		}
		f.partial.WriteString(s[:i])
		out = append(out, f.partial.String())
		f.partial.Reset()
		s = s[i+1:]
	}
}

// rest is the last line, when the stream ended without a line break after it.
func (f *lineFeed) rest() (string, bool) {
	if f.partial.Len() == 0 {
		return "", false
	}
	s := f.partial.String()
	f.partial.Reset()
	return s, true
}
