package encoding

import "testing"

// TestCommonPrefixAndSuffix: the shared start and end of two texts stop before a character that
// differs, even one that shares its first bytes with the other, and never fall inside a "\r\n".
func TestCommonPrefixAndSuffix(t *testing.T) {
	for _, tc := range []struct {
		a, b           string
		prefix, suffix int
	}{
		{"sum := 0", "acc := 0", 0, 5},
		{"x 日本 y", "x 日木 y", 5, 2}, // 本 and 木 share their first two bytes
		{"é", "è", 0, 0},
		{"a\r\nb", "a\rX\nb", 1, 1}, // neither ends nor starts between "\r" and "\n"
		{"a\r\n", "a\r\n", 3, 3},
		{"", "abc", 0, 0},
	} {
		if p := CommonPrefix(tc.a, tc.b); p != tc.prefix {
			t.Errorf("CommonPrefix(%q, %q) = %d, want %d", tc.a, tc.b, p, tc.prefix)
		}
		if s := CommonSuffix(tc.a, tc.b); s != tc.suffix {
			t.Errorf("CommonSuffix(%q, %q) = %d, want %d", tc.a, tc.b, s, tc.suffix)
		}
	}
}
