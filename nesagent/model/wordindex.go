package model

import (
	"sync"
	"unicode/utf8"
)

// A wordIndex is, for the text of one open document, the lines (among its first maxScanLines)
// that each name of it appears on, ascending, each line once: the related-file excerpts look up
// the region's names in it instead of reading every open document at every keystroke.
type wordIndex struct {
	text  string
	lines map[string][]int32
	n     int        // the lines indexed
	spans []lineSpan // the text's lines (splitLines)
}

// newWordIndex reads text once. Only names count: words of three characters or more, not all
// digits (identifiers).
func newWordIndex(text string) *wordIndex {
	w := &wordIndex{text: text, lines: map[string][]int32{}, spans: splitLines(text)}
	eachWord(text, func(line int, word string) {
		w.n = line + 1
		if len(word) < 3 || allDigits(word) {
			return
		}
		l := w.lines[word]
		if n := len(l); n == 0 || l[n-1] != int32(line) {
			w.lines[word] = append(l, int32(line))
		}
	})
	return w
}

// best is bestLine for the indexed text: the line whose distinct names in names are longest in
// total, the first of equals, 0 when none has any.
func (w *wordIndex) best(names map[string]bool) int {
	score := make([]int, w.n)
	for name := range names {
		for _, l := range w.lines[name] {
			score[l] += len(name)
		}
	}
	best := 0
	for l, s := range score {
		if s > score[best] {
			best = l
		}
	}
	return best
}

// eachWord calls f with each word of text (a run of letters, digits and underscores) and the
// line it is on, through the first maxScanLines lines.
func eachWord(text string, f func(line int, word string)) {
	next := func(i int) (rune, int) {
		if c := text[i]; c < utf8.RuneSelf {
			if wordByte[c] {
				return 'a', 1
			}
			return ' ', 1
		}
		return utf8.DecodeRuneInString(text[i:])
	}
	line := 0
	for i := 0; i < len(text) && line < maxScanLines; {
		if text[i] == '\n' {
			line++
			i++
			continue
		}
		r, size := next(i)
		if !isWordRune(r) {
			i += size
			continue
		}
		j := i + size
		for j < len(text) {
			r, size := next(j)
			if !isWordRune(r) {
				break
			}
			j += size
		}
		f(line, text[i:j])
		i = j
	}
}

// wordByte tells the ASCII bytes that are word characters.
var wordByte = func() (t [utf8.RuneSelf]bool) {
	for c := range t {
		t[c] = isWordRune(rune(c))
	}
	return t
}()

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// wordIndexes keeps the index of each open document while its text stays the same (the
// documents the user is not typing in), for the engine's requests.
type wordIndexes struct {
	mu    sync.Mutex
	byURI map[string]*wordIndex
}

// of is the index of text, the document uri's text, made at most once for each text.
func (c *wordIndexes) of(uri, text string) *wordIndex {
	if c == nil {
		return newWordIndex(text)
	}
	c.mu.Lock()
	w, ok := c.byURI[uri]
	c.mu.Unlock()
	if ok && w.text == text {
		return w
	}
	w = newWordIndex(text)
	c.mu.Lock()
	if c.byURI == nil {
		c.byURI = map[string]*wordIndex{}
	}
	c.byURI[uri] = w
	c.mu.Unlock()
	return w
}

// forget drops the index of a closed document.
func (c *wordIndexes) forget(uri string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.byURI, uri)
}

// keep forgets the indexes of documents not in uris (closed, or no longer among the open ones the
// request names).
func (c *wordIndexes) keep(uris map[string]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for u := range c.byURI {
		if !uris[u] {
			delete(c.byURI, u)
		}
	}
}
