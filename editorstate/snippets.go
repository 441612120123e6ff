package editorstate

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/document"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/translate"
)

// Bounds of relatedSnippets.
const (
	snippetContext     = 3       // lines of context each side of a hit
	maxExcerptsPerFile = 3       // excerpts per file
	maxSnippetFiles    = 5       // files
	maxSnippetBytes    = 8 << 10 // text of every excerpt together
	maxIdentifiers     = 16      // identifiers searched
	maxHitsPerFile     = 16      // best hits kept per file
	identWindow        = 2048    // bytes each side of the cursor's column read for identifiers
	scanChunkLines     = 256     // lines searched between two looks at the clock
	hitsPerClockCheck  = 256     // hits examined between two looks at the clock
)

// isIdentRune is translate.IdentifierAt's definition of an identifier character (a test checks
// that they agree): letters, digits, underscore and combining marks.
func isIdentRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.In(r, unicode.Mn, unicode.Mc)
}

// definitionKeywords are the words that, right before an identifier, make its line its
// definition. They are not searched for themselves.
var definitionKeywords = map[string]bool{
	"func": true, "fn": true, "def": true, "class": true, "struct": true, "type": true,
	"interface": true, "enum": true, "trait": true, "impl": true, "let": true, "const": true,
	"var": true, "val": true, "module": true, "package": true, "function": true,
}

// stopWords are common keywords that are never searched: they are everywhere and relate nothing.
var stopWords = map[string]bool{
	"return": true, "import": true, "from": true, "else": true, "elif": true, "while": true,
	"switch": true, "case": true, "default": true, "break": true, "continue": true, "this": true,
	"self": true, "true": true, "false": true, "nil": true, "null": true, "None": true,
	"True": true, "False": true, "public": true, "private": true, "protected": true,
	"static": true, "void": true, "catch": true, "throw": true, "async": true, "await": true,
	"export": true, "pub": true, "for": true, "not": true, "and": true, "new": true,
}

// searchable reports whether id is worth searching: at least 3 characters, not starting with a
// digit, not a keyword.
func searchable(id string) bool {
	r, _ := utf8.DecodeRuneInString(id)
	return utf8.RuneCountInString(id) >= 3 && !unicode.IsDigit(r) && !definitionKeywords[id] && !stopWords[id]
}

// identifiersNear returns the identifiers worth searching on the cursor's line and the lines
// before and after it (within identWindow bytes of the cursor's column): the one that contains
// or ends at the cursor first, then the others of the cursor's line, the line before and the
// line after, each once.
func identifiersNear(snap *document.Snapshot, cursor int) []string {
	m := snap.Mapper
	t := m.Text()
	cursor = max(0, min(cursor, len(t)))
	var ids []string
	seen := make(map[string]bool)
	add := func(id string) {
		if len(ids) < maxIdentifiers && !seen[id] && searchable(id) {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	line := m.LineOf(cursor)
	ls, le := m.LineStart(line), lineContentEnd(m, line)
	col := cursor - ls
	if cursor <= le {
		// The identifier at the cursor, read in a window so that a huge line costs nothing more.
		from, to := max(ls, cursor-identWindow), min(le, cursor+identWindow)
		w := t[from:to]
		if a, b, ok := translate.IdentifierAt(w, cursor-from); ok && (a > 0 || from == ls) && (b < len(w) || to == le) {
			add(w[a:b])
		}
	}
	for _, l := range []int{line, line - 1, line + 1} {
		if l < 0 || l >= m.LineCount() {
			continue
		}
		ls, le := m.LineStart(l), lineContentEnd(m, l)
		from, to := max(ls, ls+col-identWindow), min(le, ls+col+identWindow)
		if from > to {
			from = to
		}
		for i := from; i < to; {
			r, size := utf8.DecodeRuneInString(t[i:to])
			if !isIdentRune(r) {
				i += size
				continue
			}
			j := i + size
			for j < to {
				r, size := utf8.DecodeRuneInString(t[j:to])
				if !isIdentRune(r) {
					break
				}
				j += size
			}
			// A word cut by the window's edge is not a whole identifier.
			if (i > from || from == ls) && (j < to || to == le) {
				add(t[i:j])
			}
			i = j
		}
	}
	return ids
}

// isWholeWord reports whether the n bytes at in t are not part of a longer identifier.
func isWholeWord(t string, at, n int) bool {
	if at > 0 {
		if r, _ := utf8.DecodeLastRuneInString(t[:at]); isIdentRune(r) {
			return false
		}
	}
	if at+n < len(t) {
		if r, _ := utf8.DecodeRuneInString(t[at+n:]); isIdentRune(r) {
			return false
		}
	}
	return true
}

// lastWord returns the identifier that ends s after trailing blanks, or "".
func lastWord(s string) string {
	s = strings.TrimRight(s, " \t")
	i := len(s)
	for i > 0 {
		r, size := utf8.DecodeLastRuneInString(s[:i])
		if !isIdentRune(r) {
			break
		}
		i -= size
	}
	return s[i:]
}

// isDefinition reports whether the whole-identifier occurrence of id at byte col of line (a line
// without its line ending) looks like the place where id is defined. The heuristic knows nothing
// of any language; it says yes when:
//
//  1. the word right before id, with only blanks between, is one of func, fn, def, class, struct,
//     type, interface, enum, trait, impl, let, const, var, val, module, package, function
//     ("func Name(", "pub fn name", "class Name:", "let name =", "type Name struct");
//  2. the line is a Go method: "func", blanks, one parenthesized receiver, blanks, then id;
//  3. id is the first word of the line and is followed, after blanks, by ":=" or by "=" that is
//     not "==" or "=>" ("name := 1", "NAME = 3", "\tName = iota");
//  4. id is the first word of the line, followed after blanks by "(", and the line ends with "{"
//     (a method in JavaScript or Java, a C function whose type is on the line before).
func isDefinition(line string, col int, id string) bool {
	before := line[:col]
	after := strings.TrimLeft(line[col+len(id):], " \t")
	if definitionKeywords[lastWord(before)] {
		return true
	}
	lead := strings.TrimLeft(before, " \t")
	if rest, ok := strings.CutPrefix(lead, "func"); ok {
		rest = strings.TrimSpace(rest)
		if len(rest) >= 2 && rest[0] == '(' && rest[len(rest)-1] == ')' &&
			strings.Count(rest, "(") == 1 && strings.Count(rest, ")") == 1 {
			return true
		}
	}
	if lead != "" {
		return false
	}
	switch {
	case strings.HasPrefix(after, ":="):
		return true
	case strings.HasPrefix(after, "="):
		return !strings.HasPrefix(after, "==") && !strings.HasPrefix(after, "=>")
	case strings.HasPrefix(after, "("):
		return strings.HasSuffix(strings.TrimRight(line, " \t"), "{")
	}
	return false
}

// hit is one whole-identifier occurrence in a file.
type hit struct {
	line int
	def  bool
	rank int // index of the identifier: the one at the cursor is 0
}

// better orders hits: definitions first, then by identifier, then by line.
func (h hit) better(o hit) bool {
	if h.def != o.def {
		return h.def
	}
	if h.rank != o.rank {
		return h.rank < o.rank
	}
	return h.line < o.line
}

// fileHits is what the search found in one file.
type fileHits struct {
	snap  *document.Snapshot
	order int // position in the recency order
	hits  []hit
}

// add keeps h if it is among the maxHitsPerFile best.
func (f *fileHits) add(h hit) {
	if len(f.hits) < maxHitsPerFile {
		f.hits = append(f.hits, h)
		return
	}
	worst := 0
	for i := range f.hits {
		if f.hits[worst].better(f.hits[i]) {
			worst = i
		}
	}
	if h.better(f.hits[worst]) {
		f.hits[worst] = h
	}
}

// relatedSnippets finds code in the other open documents (others, the most recent first) related
// to the code around the cursor:
//
//   - it takes the identifiers of at least 3 characters on the cursor's line and the lines before
//     and after it (the one at the cursor first; common keywords excluded; at most 16);
//   - it searches every other open document, the most recently focused or edited first, for
//     whole-identifier occurrences of them, and ranks them: occurrences on a line that looks like
//     a definition ([isDefinition]) first, then by identifier (the one at the cursor first), by
//     recency of the file, and by line;
//   - each occurrence becomes an excerpt of its line and 3 lines either side (clamped to the
//     document, whose empty line after a final line ending is left out); excerpts of one file
//     that overlap or touch are merged. StartLine and EndLine are
//     zero-based and EndLine is inclusive; Text is those lines without the last line ending.
//   - the output has at most 3 excerpts per file, 5 files and 8 KiB of excerpt text; files come in
//     the order of their best occurrence and excerpts in line order.
//
// expired is called between chunks of a few hundred lines; once it returns true the search stops
// and what was found so far is returned.
func relatedSnippets(snap *document.Snapshot, cursor int, others []*document.Snapshot, expired func() bool) []acp.UnstableNesRelatedSnippet {
	ids := identifiersNear(snap, cursor)
	if len(ids) == 0 || len(others) == 0 {
		return nil
	}
	var found []*fileHits
	checks := 0
search:
	for order, doc := range others {
		m, t := doc.Mapper, doc.Text()
		f := &fileHits{snap: doc, order: order}
		for l := 0; l < m.LineCount(); l += scanChunkLines {
			if expired() {
				if len(f.hits) > 0 {
					found = append(found, f)
				}
				break search
			}
			cs, ce := m.LineStart(l), lineEnd(m, l+scanChunkLines)
			for rank, id := range ids {
				for off := cs; ; {
					j := strings.Index(t[off:ce], id)
					if j < 0 {
						break
					}
					at := off + j
					off = at + len(id)
					if !isWholeWord(t, at, len(id)) {
						continue
					}
					line := m.LineOf(at)
					ls := m.LineStart(line)
					f.add(hit{line: line, def: isDefinition(t[ls:lineContentEnd(m, line)], at-ls, id), rank: rank})
					if checks++; checks%hitsPerClockCheck == 0 && expired() {
						if len(f.hits) > 0 {
							found = append(found, f)
						}
						break search
					}
				}
			}
		}
		if len(f.hits) > 0 {
			found = append(found, f)
		}
	}
	return excerpts(found)
}

// excerpts turns the hits into excerpts within the bounds of relatedSnippets.
func excerpts(found []*fileHits) []acp.UnstableNesRelatedSnippet {
	for _, f := range found {
		sort.Slice(f.hits, func(i, j int) bool { return f.hits[i].better(f.hits[j]) })
	}
	sort.SliceStable(found, func(i, j int) bool {
		hi, hj := found[i].hits[0], found[j].hits[0]
		if hi.def != hj.def {
			return hi.def
		}
		if hi.rank != hj.rank {
			return hi.rank < hj.rank
		}
		return found[i].order < found[j].order
	})
	var out []acp.UnstableNesRelatedSnippet
	total := 0
	for _, f := range found {
		if len(out) == maxSnippetFiles {
			break
		}
		m := f.snap.Mapper
		last := m.LineCount() - 1
		if last > 0 && m.LineStart(last) == m.Len() {
			last-- // the empty line after a final line ending is not worth showing
		}
		var ranges []LineRange
		size := 0
		for _, h := range f.hits {
			r := LineRange{Start: max(0, h.line-snippetContext), End: max(h.line, min(last, h.line+snippetContext))}
			next := mergeRanges(append(append([]LineRange(nil), ranges...), r))
			if len(next) > maxExcerptsPerFile {
				continue
			}
			nextSize := 0
			for _, x := range next {
				nextSize += excerptSize(m, x)
			}
			if total-size+nextSize > maxSnippetBytes {
				continue
			}
			total += nextSize - size
			ranges, size = next, nextSize
		}
		if len(ranges) == 0 {
			continue
		}
		sn := acp.UnstableNesRelatedSnippet{Uri: f.snap.URI}
		for _, x := range ranges {
			sn.Excerpts = append(sn.Excerpts, acp.UnstableNesExcerpt{
				StartLine: x.Start, EndLine: x.End,
				Text: m.Text()[m.LineStart(x.Start):lineContentEnd(m, x.End)],
			})
		}
		out = append(out, sn)
	}
	return out
}

// mergeRanges sorts line ranges and merges those that overlap or touch.
func mergeRanges(rs []LineRange) []LineRange {
	sort.Slice(rs, func(i, j int) bool { return rs[i].Start < rs[j].Start })
	out := rs[:0]
	for _, r := range rs {
		if n := len(out); n > 0 && r.Start <= out[n-1].End+1 {
			out[n-1].End = max(out[n-1].End, r.End)
			continue
		}
		out = append(out, r)
	}
	return out
}

// excerptSize returns the number of bytes of the text of lines r.
func excerptSize(m *encoding.Mapper, r LineRange) int {
	return lineContentEnd(m, r.End) - m.LineStart(r.Start)
}
