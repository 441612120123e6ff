package nesagent

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzCleanText: whatever a server or an agent writes, the text made of it for a person is valid
// UTF-8, holds no control character but tab and line breaks, and is at most the limit (and the
// "…" that says it was cut); text that needed no cleaning and fits comes back as it was.
func FuzzCleanText(f *testing.F) {
	for _, s := range []string{"", "plain", "a\x00b", "\x1b[31mred\x1b[0m", "\xff\xfe", "é日本😀", "tab\tline\r\n", "\u0085\u009b", strings.Repeat("é", 100)} {
		f.Add(s, 10)
		f.Add(s, 0)
	}
	f.Fuzz(func(t *testing.T, s string, limit int) {
		limit %= 2000
		got := CleanText(s, limit)
		if !utf8.ValidString(got) {
			t.Fatalf("CleanText(%q, %d) = %q: not valid UTF-8", s, limit, got)
		}
		for _, r := range got {
			if r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0x7f || r >= 0x80 && r < 0xa0 {
				t.Fatalf("CleanText(%q, %d) = %q holds U+%04X", s, limit, got, r)
			}
		}
		if limit > 0 && len(got) > limit+len("…") {
			t.Fatalf("CleanText(%q, %d) is %d bytes", s, limit, len(got))
		}
		clean := utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool {
			return r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0x7f || r >= 0x80 && r < 0xa0
		})
		if clean && (limit <= 0 || len(s) <= limit) && got != s {
			t.Fatalf("CleanText(%q, %d) = %q: a clean text that fits changed", s, limit, got)
		}
	})
}
