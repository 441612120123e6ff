package eval

import (
	"math"
	"testing"
	"time"
)

func TestChrF(t *testing.T) {
	for _, tc := range []struct {
		hyp, ref string
		want     float64
	}{
		{"return sum / float64(len(xs))", "return sum / float64(len(xs))", 100},
		{"abc", "xyz", 0},
		{"", "", 100},
		{"", "abc", 0},
		{"abc", "", 0},
		// Whitespace is not part of the characters.
		{"a b\n\tc", "abc", 100},
		// By hand: orders 1 to 3 have n-grams in both. Order 1: {a,b,c} against {a,b,d}: 2
		// match, P = R = 2/3; order 2: {ab,bc} against {ab,bd}: 1, P = R = 1/2; order 3: none,
		// P = R = 0. Mean P = mean R = 7/18; F2 of equal P and R is that value.
		{"abc", "abd", 100 * 7.0 / 18},
		// Recall weighs more: hyp "ab" against ref "abc". Order 1: P = 2/2, R = 2/3; order 2:
		// P = 1/1, R = 1/2; order 3: hyp has none, left out. Mean P = 1, mean R = 7/12;
		// F2 = 5·P·R / (4P + R) = (35/12) / (55/12) = 7/11.
		{"ab", "abc", 100 * 7.0 / 11},
		// The same, the other way round: P and R swap, F2 = 5·(7/12) / (4·7/12 + 1) = 35/40.
		{"abc", "ab", 100 * 35.0 / 40},
		// Counts are clipped: "aaaa" has 4 unigrams a, "a" 1.
		// Order 1: match 1, P = 1/4, R = 1; only order 1 counts. F2 = 5·(1/4)/(1 + 1) = 5/8.
		{"aaaa", "a", 100 * 5.0 / 8},
	} {
		got := ChrF(tc.hyp, tc.ref)
		if math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("ChrF(%q, %q) = %v, want %v", tc.hyp, tc.ref, got, tc.want)
		}
	}
}

func TestChangedLines(t *testing.T) {
	before := "a\nb\nc\nd\n"
	for _, tc := range []struct {
		name, expected, got string
		want, have          string
	}{
		{"one line changed, got right", "a\nB\nc\nd\n", "a\nB\nc\nd\n", "B\n", "B\n"},
		// Doing nothing changes no line: chrF 0.
		{"one line changed, got nothing", "a\nB\nc\nd\n", before, "B\n", ""},
		{"one line changed, got wrong", "a\nB\nc\nd\n", "a\nX\nc\nd\n", "B\n", "X\n"},
		{"a line inserted", "a\nb\nnew\nc\nd\n", before, "new\n", ""},
		{"a line inserted, got it", "a\nb\nnew\nc\nd\n", "a\nb\nnew\nc\nd\n", "new\n", "new\n"},
		// A change elsewhere too is among the result's changed lines (and the lines between).
		{"got a change elsewhere too", "a\nB\nc\nd\n", "a\nB\nc\nD\n", "B\n", "B\nc\nD\n"},
		{"got a line added above", "a\nB\nc\nd\n", "a\nnew\nB\nc\nd\n", "B\n", "new\nB\n"},
		{"lines deleted", "a\nd\n", "a\nd\n", "", ""},
		{"got everything replaced", "a\nB\nc\nd\n", "x\n", "B\n", "x\n"},
		{"two lines apart", "A\nb\nc\nD\n", before, "A\nb\nc\nD\n", ""},
		{"no final line break", "a\nb\nc\nd", before, "d", ""},
	} {
		want, have := ChangedLines(before, tc.expected, tc.got)
		if want != tc.want || have != tc.have {
			t.Errorf("%s: changed lines %q and %q, want %q and %q", tc.name, want, have, tc.want, tc.have)
		}
	}
}

func TestPercentile(t *testing.T) {
	ms := func(ns ...int) []time.Duration {
		var out []time.Duration
		for _, n := range ns {
			out = append(out, time.Duration(n)*time.Millisecond)
		}
		return out
	}
	for _, tc := range []struct {
		ds   []time.Duration
		p    float64
		want time.Duration
	}{
		{nil, 50, 0},
		{ms(7), 50, 7 * time.Millisecond},
		{ms(7), 90, 7 * time.Millisecond},
		{ms(40, 10, 30, 20), 50, 20 * time.Millisecond},
		{ms(40, 10, 30, 20), 90, 40 * time.Millisecond},
		{ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 50, 5 * time.Millisecond},
		{ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 90, 9 * time.Millisecond},
		{ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11), 90, 10 * time.Millisecond},
		{ms(5, 1, 3), 50, 3 * time.Millisecond},
	} {
		in := append([]time.Duration(nil), tc.ds...)
		if got := Percentile(tc.ds, tc.p); got != tc.want {
			t.Errorf("Percentile(%v, %v) = %v, want %v", tc.ds, tc.p, got, tc.want)
		}
		for i := range in {
			if in[i] != tc.ds[i] {
				t.Errorf("Percentile reordered its input")
			}
		}
	}
}
