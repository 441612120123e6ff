package model

import (
	"fmt"
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
// rewrite each streamHunk came (-1: at its end).
func feedLines(region, rewrite []string) (hunks []streamHunk, after []int) {
	h := newHunkReader(strings.Join(region, "\n") + "\n")
	for i, l := range rewrite {
		for _, hk := range h.add(l) {
			hunks = append(hunks, hk)
			after = append(after, i)
		}
	}
	for _, hk := range h.end() {
		hunks = append(hunks, hk)
		after = append(after, -1)
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
		{"at the end: complete when the rewrite ends", with(r, 20, 1, "\tv20 := g(20)"), []streamHunk{{20, 21, []string{"\tv20 := g(20)"}}}, []int{-1}},
		{"one line before the end: at the rewrite's end, the last line aside", with(r, 19, 1, "\tv19 := g(19)"), []streamHunk{{19, 20, []string{"\tv19 := g(19)"}}}, []int{-1}},
		{"several hunks, each as it completes", with(with(r, 2, 1, "\tv2 := g(2)"), 12, 1, "\tv12 := g(12)"),
			[]streamHunk{{2, 3, []string{"\tv2 := g(2)"}}, {12, 13, []string{"\tv12 := g(12)"}}}, []int{4, 14}},
		{"lines added", with(r, 3, 0, "\tif v2 > 0 {", "\t\treturn", "\t}"), []streamHunk{{3, 3, []string{"\tif v2 > 0 {", "\t\treturn", "\t}"}}}, []int{7}},
		{"lines removed", with(r, 4, 3), []streamHunk{{4, 7, nil}}, []int{5}},
		{"nothing changed", r, nil, nil},
		{"the rewrite ends early: the rest of the region goes", r[:15], []streamHunk{{15, 21, nil}}, []int{-1}},
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
	if rest, ok := f.rest(); !ok || rest != "\tz" {
		t.Errorf("the last line %q, %v", rest, ok)
	}
}
