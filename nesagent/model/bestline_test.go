package model

import (
	"slices"
	"strings"
	"testing"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent"
)

// scoreLine is the total length of the distinct names of a line found in names.
func scoreLine(line string, names map[string]bool) int {
	var found []string
	score := 0
	for _, w := range strings.FieldsFunc(line, func(r rune) bool { return !isWordRune(r) }) {
		if names[w] && !slices.Contains(found, w) {
			found = append(found, w)
			score += len(w)
		}
	}
	return score
}

// TestBestLineScoresAsLineByLine: the word index finds the line that scoring each line's
// words separately finds, in text with CRLF, non-ASCII names, repeated names and no match.
func TestBestLineScoresAsLineByLine(t *testing.T) {
	names := identifiers("total := priceOf(item) + grüße_2 + 日本語")
	for _, text := range []string{
		"",
		"nothing here\nat all\n",
		"a\r\ntotal total total\r\npriceOf(item) total\r\n",
		"x := 1\n\tgrüße_2 = 日本語\n\ttotal = priceOf(x)\n",
		"priceOf priceOf priceOf\ntotal item\n",
		"last line without break total priceOf",
		strings.Repeat("filler line\n", 50) + "item total\n" + strings.Repeat("z\n", 5),
	} {
		want, score := 0, 0
		for i, l := range splitLines(text) {
			if s := scoreLine(text[l.start:l.end], names); s > score {
				want, score = i, s
			}
		}
		if got := newWordIndex(text).best(names); got != want {
			t.Errorf("best(%q) = %d, line by line %d", text, got, want)
		}
	}
}

// TestWordIndexesFollowTheText: an open document's index is made once while its text stays the
// same, made anew when it changes, and forgotten when the document is no longer open.
func TestWordIndexesFollowTheText(t *testing.T) {
	var c wordIndexes
	a := c.of("file:///a", "total := 1\n")
	if c.of("file:///a", "total := 1\n") != a {
		t.Error("the same text was indexed again")
	}
	b := c.of("file:///a", "total := 2\nprice\n")
	if b == a || b.best(map[string]bool{"price": true}) != 1 {
		t.Error("a changed text kept its old index")
	}
	c.keep(map[string]bool{"file:///b": true})
	if len(c.byURI) != 0 {
		t.Errorf("a closed document's index is kept: %v", c.byURI)
	}
}

// TestZetaRegionsReadOnlyWhatTheyReach: the Zeta regions found reading only zetaReach bytes around
// the cursor are those found reading the whole text, for lines as short as a token (the most
// lines the excerpt can hold) and as long as many.
func TestZetaRegionsReadOnlyWhatTheyReach(t *testing.T) {
	for _, line := range []string{"x", "ab = 12", strings.Repeat("word ", 40), ""} {
		text := strings.Repeat(line+"\n", 60000/(len(line)+1)+30000)
		for _, cursor := range []int{0, len(text) / 3, len(text) / 2, len(text) - 1, len(text)} {
			in := prepare(nesagent.Request{URI: "file:///w/a.go", Text: text, Cursor: cursor})
			got := zetaRegions(in, zetaEditableTokens, zetaContextTokens)
			want := zetaRegionsWithin(in, zetaEditableTokens, zetaContextTokens, len(text)+1)
			if got != want {
				t.Errorf("line %q, cursor %d: %+v, reading all %+v", line, cursor, got, want)
			}
		}
	}
}
