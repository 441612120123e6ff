package model

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
)

// The reversal rule (gate, RuleUndo) keeps back an answer that puts back what the user's last
// edit replaced, unless that edit looks like a slip the answer corrects. A slip here is an edit
// that turned a known word into an unknown one while keeping the known word's characters:
//
//   - the word the edit touched, as it reads now (imfrom, retrn, retuhttp://xrn), occurs nowhere
//     else in the document or the other open documents, and is no keyword;
//   - the word as it read before the edit (from, return) is known: it occurs elsewhere in those
//     documents, or is a keyword of a common language;
//   - all of the known word's characters but at most one are still there, in order, at its start
//     and end (something was typed or pasted into it or next to it, or one character was lost or
//     changed), or two neighbouring characters were swapped (form for from).
//
// A deliberate edit fails one of these: a deleted line or word leaves no word behind, a rename
// (count to total) replaces the word's characters, and re-adding a character the user removed
// on purpose (counts back to count) leaves a known word. A rename that keeps the word's
// characters is told apart by its shape (renameShaped): only the case changed (userName to
// username), a part of a name added at its start or end (item to itemList, item_list, my_item),
// or a spelling of the word another English has (color to colour). docs/model-agent.md states
// the rule and the references it follows.
func slip(in *input, last event) bool {
	oldW, newW, ok := touchedWords(last.old, last.new)
	if !ok || oldW == newW {
		return false
	}
	if !keepsChars(oldW, newW) || renameShaped(oldW, newW) {
		return false
	}
	// The word as it reads now is in the document once: where the slip made it.
	if countWord(in.text, newW) > 1 || keywords[strings.ToLower(newW)] || inOthers(in, newW) {
		return false
	}
	return countWord(in.text, oldW) > 0 || keywords[strings.ToLower(oldW)] || inOthers(in, oldW)
}

// touchedWords are the words of the lines before and after an edit that the edit touched: the
// run of word characters around the changed span, in each. ok is false for an edit across lines
// or one that leaves no word behind (a deletion of whole words).
func touchedWords(before, after string) (oldW, newW string, ok bool) {
	if strings.Contains(before, "\n") || strings.Contains(after, "\n") {
		return "", "", false
	}
	p := encoding.CommonPrefix(before, after)
	s := encoding.CommonSuffix(before[p:], after[p:])
	oldW = wordAround(before, p, len(before)-s)
	newW = wordAround(after, p, len(after)-s)
	return oldW, newW, oldW != "" && newW != ""
}

// wordAround is the run of word characters of line that holds [from, to) or touches it; "" when
// none does.
func wordAround(line string, from, to int) string {
	for from > 0 {
		r, n := utf8.DecodeLastRuneInString(line[:from])
		if !isWordRune(r) {
			break
		}
		from -= n
	}
	for to < len(line) {
		r, n := utf8.DecodeRuneInString(line[to:])
		if !isWordRune(r) {
			break
		}
		to += n
	}
	w := line[from:to]
	if strings.IndexFunc(w, isWordRune) < 0 {
		return ""
	}
	return w
}

// keepsChars reports whether newW keeps oldW's characters but at most one at its start and end
// (something inserted, or one character lost or changed), or is oldW with two neighbouring
// characters swapped.
func keepsChars(oldW, newW string) bool {
	p := encoding.CommonPrefix(oldW, newW)
	s := encoding.CommonSuffix(oldW[p:], newW[p:])
	lost, put := oldW[p:len(oldW)-s], newW[p:len(newW)-s]
	if utf8.RuneCountInString(lost) <= 1 && utf8.RuneCountInString(oldW) >= 2 {
		return true
	}
	// A swap: the same two characters, the other way round.
	a, n := utf8.DecodeRuneInString(lost)
	return utf8.RuneCountInString(lost) == 2 && put == lost[n:]+string(a)
}

// renameShaped reports whether newW, made from oldW by keeping its characters (keepsChars), has
// the shape of a name chosen rather than a slip of the fingers: the same letters in another case;
// oldW with a part of at least two characters added at its end that starts a part of a name (an
// upper-case letter after a lower-case one, or "_") or at its start that ends one ("_"); or oldW
// spelled as another English spells it (one of spellings, either way).
func renameShaped(oldW, newW string) bool {
	if strings.EqualFold(oldW, newW) {
		return true
	}
	if rest, ok := strings.CutPrefix(newW, oldW); ok && utf8.RuneCountInString(rest) >= 2 {
		first, _ := utf8.DecodeRuneInString(rest)
		last, _ := utf8.DecodeLastRuneInString(oldW)
		if first == '_' || unicode.IsUpper(first) && unicode.IsLower(last) {
			return true
		}
	}
	if rest, ok := strings.CutSuffix(newW, oldW); ok && utf8.RuneCountInString(rest) >= 2 && strings.HasSuffix(rest, "_") {
		return true
	}
	lo, ln := strings.ToLower(oldW), strings.ToLower(newW)
	for _, sp := range spellings {
		for _, d := range [2][2]string{{sp[0], sp[1]}, {sp[1], sp[0]}} {
			for at := 0; ; {
				i := strings.Index(lo[at:], d[0])
				if i < 0 {
					break
				}
				i += at
				if lo[:i]+d[1]+lo[i+len(d[0]):] == ln {
					return true
				}
				at = i + 1
			}
		}
	}
	return false
}

// spellings are the differences of spelling between American and British English that a user
// renaming a word to the other one makes: color and colour, normalize and normalise, analyze and
// analyse, center and centre, catalog and catalogue, license and licence.
var spellings = [][2]string{{"or", "our"}, {"ize", "ise"}, {"yze", "yse"}, {"er", "re"}, {"og", "ogue"}, {"ense", "ence"}}

// countWord counts the occurrences of w in text as a whole word.
func countWord(text, w string) int {
	n := 0
	for at := 0; ; {
		i := strings.Index(text[at:], w)
		if i < 0 {
			return n
		}
		i += at
		before, _ := utf8.DecodeLastRuneInString(text[:i])
		after, _ := utf8.DecodeRuneInString(text[i+len(w):])
		if (i == 0 || !isWordRune(before)) && (i+len(w) == len(text) || !isWordRune(after)) {
			n++
		}
		at = i + len(w)
	}
}

// inOthers reports whether w is a word of one of the other open documents.
func inOthers(in *input, w string) bool {
	for _, o := range in.others {
		if countWord(o.text, w) > 0 {
			return true
		}
	}
	return false
}

// keywords are the reserved words of common languages (Go, Python, JavaScript and TypeScript,
// Rust, Java, C and C++, C#, Ruby, Lua, Kotlin, Swift, PHP, shell), which a slip turns into
// unknown words as often as the document's own names.
var keywords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`
		abstract and as assert async await begin bool boolean break byte case catch char chan class
		const constexpr continue crate def default defer del delete do double dyn elif else elseif
		end enum except export extends extern false fi final finally float fn for foreach from func
		function global go goto if impl implements import in inline instanceof int interface is
		lambda let local long loop map match mod module mut namespace new nil none not null object
		of or override package pass pub public private protected raise range ref require rescue
		return self short signed sizeof static struct super switch then this throw throws trait
		true try type typedef typeof undefined union unless unsafe unsigned until use using val var
		virtual void volatile when where while with yield`) {
		m[w] = true
	}
	return m
}()
