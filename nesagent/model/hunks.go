package model

import (
	"bytes"
	"slices"
	"strings"
	"unicode/utf8"
)

// hunkReader compares a region's rewrite with the region line by line while the rewrite is still
// being written, and says when a changed streamHunk is complete: once the lines after it match the
// region's again, confirmLines of them. (A change that only the rewrite's end completes waits for
// the whole answer, read as without streaming: suggestStreaming.) A next-edit model rewrites
// its whole region (Zeta's and Sweep's are about 20 lines) even when the change is on its second
// line; the streamHunk it wrote first can be shown long before the rest is written.
//
// Only whole lines are compared: a line is read once its line break has come, so that a marker
// or a character split between two pieces of the stream is read whole.
//
// Each line of the rewrite is looked at a few times, however long the rewrite runs: whether a
// region's line and a rewrite's line start confirmLines lines the same depends on those lines
// only, so it is asked once, when the last of the rewrite's lines comes, and the region's line
// is found by the lines' content rather than by trying each. A model that loops on line breaks,
// or a server that streams megabytes of them, costs what a rewrite of that length costs to
// read, and the document's next request does not wait behind a rescan at every line.
type hunkReader struct {
	region []string // the region's lines, without their breaks
	// text is the rewrite's whole lines so far, each with "\n" after it (its "\r" taken out),
	// lines how many. A line is found from where the reading is, never from a table of where
	// each starts: megabytes of blank lines cost their length, not a word or a string each.
	text  []byte
	lines int
	// tail is where the last confirmLines lines start, the last one last: the lines looked up
	// as a line comes are found without a search.
	tail [confirmLines]int
	// ri, ai and aiAt are how far the hunks found so far reach: region[:ri] and the rewrite's
	// first ai lines are read; the rewrite's line ai starts at text[aiAt].
	ri, ai, aiAt int
	// confirming holds, for each confirmLines lines in a row of the region that confirm a
	// streamHunk's end (one with a word), joined by "\n", the region lines they start at, in
	// order.
	confirming map[string][]int
	// seen is how far the rewrite was looked up in confirming (its line seen starts at
	// text[seenAt]): no line of it from ai to seen starts lines the same as the region's from ri
	// on. Those lines stay unmatched as ri grows, so each is looked up once.
	seen, seenAt int
	// diverged says region[ri] and the rewrite's line ai differ: more lines of the rewrite do
	// not move the common run, which goes on from there only once a streamHunk moves it.
	diverged bool
	// compared counts the lines compared, or looked up, so far: the reader's work, which its
	// tests hold to a few for each line.
	compared int
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
	h := &hunkReader{region: regionLines(region), confirming: map[string][]int{}}
	word := make([]bool, len(h.region))
	for i, l := range h.region {
		word[i] = strings.IndexFunc(l, isWordRune) >= 0
	}
	for i := 0; i+confirmLines <= len(h.region); i++ {
		if slices.Contains(word[i:i+confirmLines], true) {
			k := strings.Join(h.region[i:i+confirmLines], "\n")
			h.confirming[k] = append(h.confirming[k], i)
		}
	}
	return h
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
		copy(h.tail[:], h.tail[1:])
		h.tail[confirmLines-1] = len(h.text)
		h.text = append(append(h.text, strings.TrimSuffix(l, "\r")...), '\n')
		h.lines++
	}
	return h.read()
}

// read finds the complete hunks after what was read, in order.
func (h *hunkReader) read() []streamHunk {
	var out []streamHunk
	for {
		i, j, at := h.ri, h.ai, h.aiAt
		for !h.diverged && i < len(h.region) && j < h.lines {
			h.compared++
			e := h.after(j, at)
			if h.region[i] != string(h.text[at:e-1]) {
				h.diverged = true
				break
			}
			i, j, at = i+1, j+1, e
		}
		h.ri, h.ai, h.aiAt = i, j, at
		if i >= len(h.region) && j >= h.lines {
			return out
		}
		// The first place after (i, j) where confirmLines lines match again: the fewest lines
		// written or replaced first (span), then the fewest replaced. The rewrite's lines up to
		// seen start no such place; one further on that is found bounds how far to look, since
		// a place at rewrite line aj replaces or writes aj-j lines at least.
		if h.seen < j {
			h.seen, h.seenAt = j, at
		}
		found, ri, aj, ajAt := false, 0, 0, 0
		for k, kAt := h.seen, h.seenAt; k+confirmLines <= h.lines && (!found || k-j <= ri-i+aj-j); k++ {
			second, e := h.after(k, kAt), len(h.text) // the last lines end the text
			if k+confirmLines < h.lines {
				e = second
				for c := 1; c < confirmLines; c++ {
					e = h.after(k+c, e)
				}
			}
			r, ok := h.confirmingAt(i, h.text[kAt:e-1])
			switch {
			case !ok:
				if !found {
					h.seen, h.seenAt = k+1, second
				}
			case !found || r-i+k-j <= ri-i+aj-j:
				// As many lines in all, further on in the rewrite: fewer of the region's
				// replaced.
				found, ri, aj, ajAt = true, r, k, kAt
			}
			kAt = second
		}
		if found {
			// Lines the same on both sides just before the confirming ones (a blank line, a
			// brace) are not part of the change.
			for ri > i && aj > j {
				s := h.lineBefore(ajAt)
				if !h.same(ri-1, h.text[s:ajAt-1]) {
					break
				}
				ri, aj, ajAt = ri-1, aj-1, s
			}
			out = append(out, streamHunk{regionStart: i, regionEnd: ri, lines: h.split(at, ajAt)})
			h.ri, h.ai, h.aiAt, h.diverged = ri, aj, ajAt, false
			continue
		}
		return out
	}
}

// confirmingAt is the first region line from ri on that starts lines, confirmLines lines of the
// rewrite joined by "\n", one of them with a word (the region's end confirms nothing: lines may
// still come).
func (h *hunkReader) confirmingAt(ri int, lines []byte) (int, bool) {
	h.compared += confirmLines
	if !hasWord(lines) {
		return 0, false // blank lines and braces: not worth a look
	}
	from := h.confirming[string(lines)]
	k, _ := slices.BinarySearch(from, ri)
	if k == len(from) {
		return 0, false
	}
	return from[k], true
}

// hasWord says whether b holds a word's character (isWordRune), the ASCII ones told apart
// without decoding: a rewrite of blank lines or braces is looked at for each of them.
func hasWord(b []byte) bool {
	for k := 0; k < len(b); k++ {
		switch c := b[k]; {
		case c >= utf8.RuneSelf:
			return bytes.IndexFunc(b[k:], isWordRune) >= 0
		case c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
			return true
		}
	}
	return false
}

// same says whether region line ri is line.
func (h *hunkReader) same(ri int, line []byte) bool {
	h.compared++
	return h.region[ri] == string(line)
}

// after is where the rewrite's line after line k, which starts at text[at], starts (or would).
func (h *hunkReader) after(k, at int) int {
	if d := k + 1 + confirmLines - h.lines; d >= confirmLines {
		return len(h.text)
	} else if d >= 0 {
		return h.tail[d]
	}
	return at + bytes.IndexByte(h.text[at:], '\n') + 1
}

// lineBefore is where the rewrite's line before the one that starts at text[at] starts.
func (h *hunkReader) lineBefore(at int) int { return bytes.LastIndexByte(h.text[:at-1], '\n') + 1 }

// split is the rewrite's lines in text[from:to], which starts and ends a line.
func (h *hunkReader) split(from, to int) []string {
	if from == to {
		return nil
	}
	return strings.Split(string(h.text[from:to-1]), "\n")
}

// lineFeed cuts a stream's text into whole lines: it keeps what comes after the last line break
// until the rest of its line comes.
type lineFeed struct {
	partial strings.Builder
	// lines is what write returned last, its room used again: a stream of a line a piece makes
	// no garbage a line.
	lines []string
}

// write takes a piece of the stream and returns the lines it completes, without their breaks;
// they are good until the next write.
func (f *lineFeed) write(s string) []string {
	f.lines = f.lines[:0]
	for {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			if s != "" {
				f.partial.WriteString(s)
			}
			return f.lines
		}
		line := s[:i]
		if f.partial.Len() > 0 {
			f.partial.WriteString(line)
			line = f.partial.String()
			f.partial.Reset()
		}
		f.lines = append(f.lines, line)
		s = s[i+1:]
	}
}
