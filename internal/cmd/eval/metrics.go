package eval

import (
	"math"
	"slices"
	"strings"
	"time"
	"unicode"
)

// ChrF is the chrF score (Popović 2015) of hyp against ref, from 0 to 100, as sacrebleu computes
// it by default (chrF2): character n-grams of orders 1 to 6, whitespace left out of the
// characters; for each order the precision and recall of hyp's n-grams (counts clipped to ref's);
// precision and recall averaged over the orders that both texts have n-grams of; then their
// F-score with beta 2, recall weighing twice as much as precision.
//
// Two texts without any character but whitespace score 100 (both empty: the same); one of them
// alone scores 0.
func ChrF(hyp, ref string) float64 {
	const maxOrder, beta = 6, 2.0
	h, r := dropSpace(hyp), dropSpace(ref)
	if len(h) == 0 || len(r) == 0 {
		if len(h) == len(r) {
			return 100
		}
		return 0
	}
	var sumP, sumR float64
	orders := 0
	for n := 1; n <= maxOrder; n++ {
		if len(h) < n || len(r) < n {
			break
		}
		hc, rc := ngrams(h, n), ngrams(r, n)
		match := 0
		for g, c := range hc {
			match += min(c, rc[g])
		}
		sumP += float64(match) / float64(len(h)-n+1)
		sumR += float64(match) / float64(len(r)-n+1)
		orders++
	}
	p, rec := sumP/float64(orders), sumR/float64(orders)
	if p+rec == 0 {
		return 0
	}
	f := (1 + beta*beta) * p * rec / (beta*beta*p + rec)
	return 100 * f
}

// dropSpace is s's characters without whitespace.
func dropSpace(s string) []rune {
	out := make([]rune, 0, len(s))
	for _, c := range s {
		if !unicode.IsSpace(c) {
			out = append(out, c)
		}
	}
	return out
}

// ngrams counts the character n-grams of s.
func ngrams(s []rune, n int) map[string]int {
	m := make(map[string]int, len(s))
	for i := 0; i+n <= len(s); i++ {
		m[string(s[i:i+n])]++
	}
	return m
}

// ChangedLines are the lines the expected edit changes and the lines the result changes, as chrF
// compares them: each text without the whole lines it shares with before at its start and at its
// end (as many as match, the two counts together at most the shorter text's line count). Texts
// are split into lines after each "\n". A result that changed nothing has no changed lines (chrF
// 0: doing nothing earns nothing), and a result that also changed lines elsewhere has those among
// its changed lines (they lower its precision).
func ChangedLines(before, expected, got string) (want, have string) {
	return changed(before, expected), changed(before, got)
}

// changed is after without the lines it shares with before at its start and end.
func changed(before, after string) string {
	b, a := splitLines(before), splitLines(after)
	pre := 0
	for pre < len(b) && pre < len(a) && b[pre] == a[pre] {
		pre++
	}
	suf := 0
	for suf < len(b)-pre && suf < len(a)-pre && b[len(b)-1-suf] == a[len(a)-1-suf] {
		suf++
	}
	return strings.Join(a[pre:len(a)-suf], "")
}

// splitLines splits s after each "\n" (a last line without one is a line too).
func splitLines(s string) []string {
	l := strings.SplitAfter(s, "\n")
	if l[len(l)-1] == "" {
		l = l[:len(l)-1]
	}
	return l
}

// Percentile is the nearest-rank percentile p (0 < p ≤ 100) of ds: the smallest value that at
// least p percent of them do not exceed. It is 0 for none.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	return s[min(max(rank, 1), len(s))-1]
}
