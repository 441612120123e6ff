package encoding

import "unicode/utf8"

// SplitsCRLF tells whether offset i of s falls between a "\r" and a "\n": no position addresses
// it.
func SplitsCRLF(s string, i int) bool {
	return i > 0 && i < len(s) && s[i-1] == '\r' && s[i] == '\n'
}

// CommonPrefix is the length of the longest common prefix of a and b made of whole characters
// and not ending inside a "\r\n": an offset that a position can address in both.
func CommonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) {
		_, sa := utf8.DecodeRuneInString(a[n:])
		_, sb := utf8.DecodeRuneInString(b[n:])
		if sa != sb || a[n:n+sa] != b[n:n+sb] {
			break
		}
		n += sa
	}
	for n > 0 && (SplitsCRLF(a, n) || SplitsCRLF(b, n)) {
		n--
	}
	return n
}

// CommonSuffix is the length of the longest common suffix of a and b made of whole characters
// and not starting inside a "\r\n".
func CommonSuffix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) {
		_, sa := utf8.DecodeLastRuneInString(a[:len(a)-n])
		_, sb := utf8.DecodeLastRuneInString(b[:len(b)-n])
		if sa != sb || a[len(a)-n-sa:len(a)-n] != b[len(b)-n-sb:len(b)-n] {
			break
		}
		n += sa
	}
	for n > 0 && (SplitsCRLF(a, len(a)-n) || SplitsCRLF(b, len(b)-n)) {
		n--
	}
	return n
}
