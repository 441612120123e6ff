package lspside

import (
	"math/rand/v2"
	"testing"
	"unicode/utf8"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
)

// TestOneChange: the one replacement between two texts covers what differs, whole characters
// only and never from inside a "\r\n", and turns the first into the second, whatever the texts (random ones of one- to
// four-byte characters, and bytes that are no UTF-8).
func TestOneChange(t *testing.T) {
	for _, tc := range []struct {
		before, after string
		start, end    int
		text          string
	}{
		{"\tsum := 0\n", "\tacc := 0\n", 1, 4, "acc"},
		{"ab", "abc", 2, 2, "c"},
		{"abc", "ab", 2, 3, ""},
		{"x 日本 y", "x 日木 y", 5, 8, "木"}, // 本 and 木 share their first two bytes
		{"é", "è", 0, 2, "è"},           // so do é and è
		{"a😀b", "a😁b", 1, 5, "😁"},
		{"aaa", "aaaa", 3, 3, "a"},
		{"a\r\nb", "a\rX\nb", 1, 3, "\rX\n"}, // no position between "\r" and "\n"
	} {
		c, ok := oneChange(tc.before, tc.after)
		if !ok || c.Start != tc.start || c.End != tc.end || c.Text != tc.text {
			t.Errorf("%q → %q: [%d, %d) %q, %v; want [%d, %d) %q", tc.before, tc.after, c.Start, c.End, c.Text, ok, tc.start, tc.end, tc.text)
		}
	}
	if _, ok := oneChange("same", "same"); ok {
		t.Error("a change between the same texts")
	}
	alphabet := []string{"a", "b", "\n", "\r", "é", "è", "日", "本", "木", "😀", "😁", "\xff", "\xe6"}
	random := func(r *rand.Rand) string {
		s := ""
		for range r.IntN(8) {
			s += alphabet[r.IntN(len(alphabet))]
		}
		return s
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		before, after := random(r), random(r)
		c, ok := oneChange(before, after)
		if !ok {
			if before != after {
				t.Fatalf("%q → %q: no change", before, after)
			}
			continue
		}
		if c.Start < 0 || c.Start > c.End || c.End > len(before) {
			t.Fatalf("%q → %q: [%d, %d) out of range", before, after, c.Start, c.End)
		}
		if got := before[:c.Start] + c.Text + before[c.End:]; got != after {
			t.Fatalf("%q → %q: [%d, %d) %q makes %q", before, after, c.Start, c.End, c.Text, got)
		}
		if utf8.ValidString(before) && utf8.ValidString(after) &&
			(!utf8.ValidString(before[:c.Start]) || !utf8.ValidString(before[c.End:]) || !utf8.ValidString(c.Text)) {
			t.Fatalf("%q → %q: [%d, %d) %q splits a character", before, after, c.Start, c.End, c.Text)
		}
		if encoding.SplitsCRLF(before, c.Start) || encoding.SplitsCRLF(before, c.End) {
			t.Fatalf("%q → %q: [%d, %d) %q falls inside a \"\\r\\n\"", before, after, c.Start, c.End, c.Text)
		}
	}
}
