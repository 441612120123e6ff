package builtin

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent"
)

// Repeated edits.
//
// The user's last edit changed one line from X·B·Y to X·A·Y (see change). The engine suggests the
// same change on the nearby lines (cfg.window lines above and below) that have the same shape,
// nearest to the cursor first, one suggestion per line (with one text edit per place on the line).
// A line has the same shape when one of these holds:
//
// 1. It contains B with the same context around it (a pattern). The context is the nearest
// "unit" on each side of the change, taken from X and Y:
//
//   - on the left, the text back to and including the nearest identifier with its qualifiers
//     (log. in log.Print → log.Printf; "return " in return err → return wrap(err)); a bracketed
//     group on the way is kept with its head and its content becomes a hole, which matches any
//     balanced text (read(x) in read(x) → read(x)?, which thus matches read(y) too). When no
//     identifier is left before the change, the context goes to the start of the line (after its
//     indentation);
//   - on the right, the text up to and including the nearest identifier, or bracketed group (its
//     content a hole), or the end of the line; when B and A both end with an identifier
//     character, nothing: that the next character is not an identifier character is context
//     enough (log.Print → log.Printf matches log.Print(x) but neither log.Println nor
//     fmt.Print);
//   - when the change is at the end of the arguments of a call (more generally, of a bracket
//     group right after an identifier), the context is the call's head and the arguments before
//     the change are a hole: foo(a) → foo(a, ctx) matches foo(b.c, 1) (→ foo(b.c, 1, ctx)) but
//     not bar(a), nor foo() (the hole must not be empty), nor foo(b, ctx) (already done). At the
//     start of the arguments, the arguments after the change are the hole: foo(a) → foo(ctx, a)
//     matches foo(b).
//
// Identifiers in the context must be whole (log. does not match in catalog.), holes contain
// balanced brackets and strings only, and the context must hold at least one identifier
// character: "}" → "};" is not repeated on every "}".
//
// 2. It is an analogue of the edited line: the same tokens as the line before the edit (the same
// punctuation and spacing, indentation aside), except for identifiers substituted consistently,
// each substituted identifier appearing at least twice on the edited line, so that the analogy is
// evidenced. a.Foo = x.Foo → a.Foo = strings.TrimSpace(x.Foo) then gives a.Bar = x.Bar → a.Bar =
// strings.TrimSpace(x.Bar), and Foo: x.Foo, → Foo: conv(x.Foo), gives Bar: conv(x.Bar),. A
// substitution that is not evidenced is not made: return err → return wrap(err) says nothing
// about return nil.
//
// Nothing is suggested when the edit spans lines, changes only blanks, leaves unbalanced
// brackets or quotes in B or A, or looks unfinished (a trailing blank, or a trailing operator or
// separator such as "," or "." before a closing bracket or the end of the line: foo(a, ) while
// the user types ", ctx"). The edited line itself is left out, and so are lines longer than
// maxLine bytes; the matching of one request has a budget (matchBudget steps), spent on the
// nearest lines first.
func (e *engine) repeat(req nesagent.Request, c change) []nesagent.Suggestion {
	if len(c.oldLines) > maxLine || len(c.newLines) > maxLine || strings.ContainsAny(c.oldLines, "\r\n") || strings.ContainsAny(c.newLines, "\r\n") {
		return nil
	}
	if blank(c.b) && blank(c.a) || !balanced(c.b) || !balanced(c.a) || c.unfinished() {
		return nil
	}
	sh, shapeOK := c.pattern()
	an := newAnalogy(c.oldLines, c.newLines)
	if !shapeOK && an == nil {
		return nil
	}
	var out []nesagent.Suggestion
	for _, ln := range e.nearby(req.Text, c, req.Cursor) {
		line := req.Text[ln.start:ln.end]
		if len(line) > maxLine {
			continue
		}
		var edits []nesagent.TextEdit
		if shapeOK {
			edits = sh.apply(line, ln.start)
		}
		if len(edits) == 0 && an != nil {
			edits = an.apply(line, ln.start)
		}
		if len(edits) > 0 {
			out = append(out, suggestion(edits))
			if len(out) == e.cfg.max {
				break
			}
		}
	}
	return out
}

// maxLine is the longest line looked at for repeated edits (longer ones are generated code), and
// matchBudget bounds the steps of the pattern matching of one request, so that pathological lines
// (foo(foo(foo(…))) stay cheap.
const (
	maxLine     = 4096
	matchBudget = 1 << 16
)

func blank(s string) bool { return strings.Trim(s, " \t") == "" }

// unfinished reports whether the change looks like typing in progress.
func (c *change) unfinished() bool {
	rest := strings.TrimLeft(c.y(), " \t")
	if rest != "" && !strings.ContainsRune(")]},;", rune(rest[0])) {
		return false
	}
	t := strings.TrimRight(c.a, " \t")
	if t != c.a {
		return true
	}
	if strings.HasSuffix(t, "++") || strings.HasSuffix(t, "--") {
		return false
	}
	r, _ := utf8.DecodeLastRuneInString(t)
	return t != "" && strings.ContainsRune(",.([{=+-*/%&|^<!~\\", r)
}

// balanced reports whether the brackets of s match and its strings ("…", `…`) are closed.
func balanced(s string) bool {
	var stack [32]byte
	depth := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '(', '[', '{':
			if depth == len(stack) {
				return false
			}
			stack[depth] = closerOf(c)
			depth++
		case ')', ']', '}':
			if depth == 0 || stack[depth-1] != c {
				return false
			}
			depth--
		case '"', '`':
			k := closingQuote(s, i)
			if k < 0 {
				return false
			}
			i = k
		}
	}
	return depth == 0
}

func closerOf(c byte) byte {
	switch c {
	case '(':
		return ')'
	case '[':
		return ']'
	}
	return '}'
}

// closingQuote returns the index of the quote closing the string that opens at s[i], or -1.
func closingQuote(s string, i int) int {
	q := s[i]
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case q:
			return j
		case '\\':
			if q == '"' {
				j++
			}
		}
	}
	return -1
}

// pairs maps each bracket of s to the bracket it pairs with, or -1; brackets in strings are not
// counted.
func pairs(s string) []int {
	m := make([]int, len(s))
	var stack []int
	for i := 0; i < len(s); i++ {
		m[i] = -1
		switch c := s[i]; c {
		case '(', '[', '{':
			stack = append(stack, i)
		case ')', ']', '}':
			if n := len(stack); n > 0 && closerOf(s[stack[n-1]]) == c {
				m[i], m[stack[n-1]] = stack[n-1], i
				stack = stack[:n-1]
			} else {
				stack = stack[:0]
			}
		case '"', '`':
			if k := closingQuote(s, i); k >= 0 {
				for j := i + 1; j <= k; j++ {
					m[j] = -1
				}
				i = k
			}
		}
	}
	return m
}

// A pattern element.
type elemKind uint8

const (
	eLit          elemKind = iota // this text
	eHole                         // any non-empty balanced text
	eLineStart                    // the end of the line's indentation
	eLineEnd                      // only blanks follow
	eNoWordBefore                 // no identifier character just before
	eNoWordAfter                  // no identifier character just after
)

type elem struct {
	kind elemKind
	s    string
}

// shape is a repeated edit as a pair of patterns with the same holes: what a line holds before
// the edit and after it.
type shape struct {
	before, after []elem
	holes         int
	first         string // the first literal of before
	anchored      bool   // before starts at the line's indentation
	scratch       []string
	budget        int // steps left for matching holes
}

type span struct{ start, end int }

// pattern derives the shape of the change (rule 1 of the doc comment of repeat).
func (c *change) pattern() (shape, bool) {
	o, x, y := c.oldLines, c.x(), c.y()
	yOff := len(o) - len(y) // where Y starts in o
	m := pairs(o)
	// The innermost bracket group around the change, if its closer is on the line.
	open := -1
	for i := len(x) - 1; i >= 0; i-- {
		if strings.IndexByte("([{", x[i]) >= 0 && m[i] >= yOff {
			open = i
			break
		}
	}
	head := -1
	if open >= 0 && endsWord(x[:open]) {
		head = chainStart(x, open)
	}
	atOpen := open >= 0 && open == len(x)-1
	atClose := open >= 0 && m[open] == yOff

	var left, right []elem
	// Left context.
	switch {
	case atOpen && head >= 0:
		left = []elem{{eLit, x[head:]}}
	case atClose && head >= 0:
		left = []elem{{eLit, x[head : open+1]}, {kind: eHole}}
	default:
		var holes []span
		i := len(x)
		start := -1
		for i > 0 {
			r, size := utf8.DecodeLastRuneInString(x[:i])
			if isWord(r) {
				start = chainStart(x, i)
				break
			}
			if strings.ContainsRune(")]}", r) && m[i-1] >= 0 && m[i-1] < i-1 {
				if m[i-1]+1 < i-1 {
					holes = append(holes, span{m[i-1] + 1, i - 1})
				}
				i = m[i-1]
				continue
			}
			i -= size
		}
		if start < 0 {
			start = len(x) - len(strings.TrimLeft(x, " \t"))
			left = append(left, elem{kind: eLineStart})
		}
		slices.Reverse(holes)
		left = append(left, withHoles(x, start, len(x), holes)...)
	}
	// Right context.
	switch {
	case atClose:
		right = []elem{{eLit, y[:1]}}
	case atOpen && head >= 0:
		close := m[open] - yOff
		right = []elem{{kind: eHole}, {eLit, y[close : close+1]}}
	case c.b != "" && c.a != "" && endsWord(c.b) && endsWord(c.a):
	default:
		var holes []span
		j, end := 0, -1
		for end < 0 && !blank(y[j:]) {
			r, size := utf8.DecodeRuneInString(y[j:])
			switch {
			case isWord(r):
				for j < len(y) {
					r, size := utf8.DecodeRuneInString(y[j:])
					if !isWord(r) {
						break
					}
					j += size
				}
				end = j
			case strings.ContainsRune("([{", r) && m[yOff+j] > yOff+j:
				k := m[yOff+j] - yOff
				if j+1 < k {
					holes = append(holes, span{j + 1, k})
				}
				j = k + 1
				end = j
			default:
				j += size
			}
		}
		if end >= 0 {
			right = withHoles(y, 0, end, holes)
		} else {
			right = append(withHoles(y, 0, j, holes), elem{kind: eLineEnd})
		}
	}

	sh := shape{
		budget: matchBudget,
		before: normalize(slices.Concat(left, []elem{{eLit, c.b}}, right)),
		after:  normalize(slices.Concat(left, []elem{{eLit, c.a}}, right)),
	}
	word := false
	for _, el := range sh.before {
		switch el.kind {
		case eHole:
			sh.holes++
		case eLit:
			if sh.first == "" {
				sh.first = el.s
			}
			for _, r := range el.s {
				word = word || isWord(r)
			}
		}
	}
	for _, el := range sh.before {
		if el.kind == eLineStart {
			sh.anchored = true
		}
		if el.kind == eLit || el.kind == eHole {
			if el.kind == eHole {
				return shape{}, false // a pattern must start with text
			}
			break
		}
	}
	return sh, word && sh.first != ""
}

// withHoles returns s[from:to] as literals, with the spans (in order, inside it) as holes.
func withHoles(s string, from, to int, holes []span) []elem {
	var out []elem
	at := from
	for _, h := range holes {
		out = append(out, elem{eLit, s[at:h.start]}, elem{kind: eHole})
		at = h.end
	}
	return append(out, elem{eLit, s[at:to]})
}

// normalize merges adjacent literals, drops empty ones, and requires whole identifiers where a
// literal meets a hole or an end of the pattern.
func normalize(p []elem) []elem {
	var merged []elem
	for _, el := range p {
		if el.kind == eLit {
			if el.s == "" {
				continue
			}
			if n := len(merged); n > 0 && merged[n-1].kind == eLit {
				merged[n-1].s += el.s
				continue
			}
		}
		merged = append(merged, el)
	}
	var out []elem
	for i, el := range merged {
		if el.kind != eLit {
			out = append(out, el)
			continue
		}
		if startsWord(el.s) && (i == 0 || merged[i-1].kind == eHole || merged[i-1].kind == eLineStart) {
			out = append(out, elem{kind: eNoWordBefore})
		}
		out = append(out, el)
		if endsWord(el.s) && (i == len(merged)-1 || merged[i+1].kind == eHole) {
			out = append(out, elem{kind: eNoWordAfter})
		}
	}
	return out
}

// matcher matches patterns against one line.
type matcher struct {
	line   string
	indent int
	holes  []string
	budget *int
}

// match matches p at pos and returns where the match ends.
func (m *matcher) match(p []elem, pos, hole int) (int, bool) {
	for k, el := range p {
		switch el.kind {
		case eLit:
			if !strings.HasPrefix(m.line[pos:], el.s) {
				return 0, false
			}
			pos += len(el.s)
		case eNoWordBefore:
			if wordBefore(m.line, pos) {
				return 0, false
			}
		case eNoWordAfter:
			if wordAfter(m.line, pos) {
				return 0, false
			}
		case eLineStart:
			if pos != m.indent {
				return 0, false
			}
		case eLineEnd:
			if !blank(m.line[pos:]) {
				return 0, false
			}
			pos = len(m.line)
		case eHole:
			return m.hole(p[k+1:], pos, hole)
		}
	}
	return pos, true
}

// hole matches the shortest non-empty balanced text at pos after which rest matches.
func (m *matcher) hole(rest []elem, pos, hole int) (int, bool) {
	line := m.line
	var stack [32]byte
	depth := 0
	for j := pos; j <= len(line); {
		if *m.budget--; *m.budget < 0 {
			return 0, false
		}
		if depth == 0 && j > pos {
			if end, ok := m.match(rest, j, hole+1); ok {
				m.holes[hole] = line[pos:j]
				return end, true
			}
		}
		if j == len(line) {
			break
		}
		switch c := line[j]; c {
		case '(', '[', '{':
			if depth == len(stack) {
				return 0, false
			}
			stack[depth] = closerOf(c)
			depth++
		case ')', ']', '}':
			if depth == 0 || stack[depth-1] != c {
				return 0, false
			}
			depth--
		case '"', '`':
			k := closingQuote(line, j)
			if k < 0 {
				return 0, false
			}
			j = k
		}
		j++
	}
	return 0, false
}

// render writes a pattern with the captured holes.
func (m *matcher) render(p []elem) string {
	var b strings.Builder
	h := 0
	for _, el := range p {
		switch el.kind {
		case eLit:
			b.WriteString(el.s)
		case eHole:
			b.WriteString(m.holes[h])
			h++
		}
	}
	return b.String()
}

// apply returns the edits that make the shape's change at each place of line (which starts at
// offset off of the text) that holds its before pattern and not already its after pattern.
func (sh *shape) apply(line string, off int) []nesagent.TextEdit {
	if sh.scratch == nil {
		sh.scratch = make([]string, 2*sh.holes)
	}
	m := matcher{line: line, indent: len(indentOf(line)), holes: sh.scratch[:sh.holes], budget: &sh.budget}
	var edits []nesagent.TextEdit
	for from := 0; from <= len(line); {
		if sh.budget--; sh.budget < 0 {
			break
		}
		var pos int
		if sh.anchored {
			if from > m.indent {
				break
			}
			pos = m.indent
			if !strings.HasPrefix(line[pos:], sh.first) {
				break
			}
		} else {
			i := strings.Index(line[from:], sh.first)
			if i < 0 {
				break
			}
			pos = from + i
		}
		end, ok := m.match(sh.before, pos, 0)
		if !ok {
			from = pos + 1
			continue
		}
		from = max(end, pos+1)
		// When the line also reads as the after pattern, with shorter holes, the change is
		// already there: foo(b, ctx) reads as foo(‹b, ctx›) and as foo(‹b›, ctx); but f(c, b)
		// reads as f(‹c›, b) and as f(‹c, b›), and losing ", b" is still to do.
		done := matcher{line: line, indent: m.indent, holes: sh.scratch[sh.holes:], budget: &sh.budget}
		if _, ok := done.match(sh.after, pos, 0); ok && holeLen(done.holes) <= holeLen(m.holes) {
			continue
		}
		if te, ok := minimalEdit(line[pos:end], m.render(sh.after), off+pos); ok {
			edits = append(edits, te)
		}
	}
	return edits
}

func holeLen(holes []string) int {
	n := 0
	for _, h := range holes {
		n += len(h)
	}
	return n
}

// minimalEdit returns the edit turning old (at offset off) into nw, trimmed to what changes.
func minimalEdit(old, nw string, off int) (nesagent.TextEdit, bool) {
	if old == nw {
		return nesagent.TextEdit{}, false
	}
	p, s := commonEnds(old, nw)
	return nesagent.TextEdit{Start: off + p, End: off + len(old) - s, NewText: nw[p : len(nw)-s]}, true
}

// Tokens for analogies.
type tokKind uint8

const (
	tOther tokKind = iota // one character
	tWord                 // an identifier or a number
	tSpace                // blanks
)

type token struct {
	s    string
	kind tokKind
}

func tokenize(s string) []token {
	var out []token
	for i := 0; i < len(s); {
		t := tokenAt(s, i)
		out = append(out, t)
		i += len(t.s)
	}
	return out
}

// tokenAt returns the token at s[i:] (i < len(s)).
func tokenAt(s string, i int) token {
	r, size := utf8.DecodeRuneInString(s[i:])
	j := i + size
	kind := tOther
	switch {
	case isWord(r):
		kind = tWord
		for j < len(s) {
			r, size := utf8.DecodeRuneInString(s[j:])
			if !isWord(r) {
				break
			}
			j += size
		}
	case r == ' ' || r == '\t':
		kind = tSpace
		for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
			j++
		}
	}
	return token{s[i:j], kind}
}

// analogy is rule 2 of the doc comment of repeat.
type analogy struct {
	old, new []token
	counts   map[string]int // identifiers of the old line
}

func newAnalogy(oldLine, newLine string) *analogy {
	oi, ni := indentOf(oldLine), indentOf(newLine)
	if oi != ni {
		return nil
	}
	a := &analogy{old: tokenize(oldLine), new: tokenize(newLine[len(ni):]), counts: map[string]int{}}
	repeated := false
	for _, t := range a.old {
		if t.kind == tWord {
			a.counts[t.s]++
			repeated = repeated || a.counts[t.s] > 1
		}
	}
	if !repeated {
		return nil
	}
	return a
}

func indentOf(s string) string { return s[:len(s)-len(strings.TrimLeft(s, " \t"))] }

func (a *analogy) apply(line string, off int) []nesagent.TextEdit {
	var from, to []string
	at := 0
	for i, t := range a.old {
		if at == len(line) {
			return nil
		}
		l := tokenAt(line, at)
		at += len(l.s)
		if t.kind != l.kind {
			return nil
		}
		if t.s == l.s || t.kind == tSpace && i == 0 {
			continue
		}
		if t.kind != tWord || a.counts[t.s] < 2 {
			return nil
		}
		known := false
		for k := range from {
			if (from[k] == t.s) != (to[k] == l.s) {
				return nil // not a consistent one-to-one substitution
			}
			known = known || from[k] == t.s
		}
		if !known {
			from, to = append(from, t.s), append(to, l.s)
		}
	}
	if at != len(line) || len(from) == 0 {
		return nil
	}
	for _, t := range to {
		if a.counts[t] > 0 {
			return nil // it would stand for two identifiers of the edited line
		}
	}
	var b strings.Builder
	b.WriteString(indentOf(line))
	for _, t := range a.new {
		s := t.s
		if t.kind == tWord {
			if k := slices.Index(from, s); k >= 0 {
				s = to[k]
			}
		}
		b.WriteString(s)
	}
	te, ok := minimalEdit(line, b.String(), off)
	if !ok {
		return nil
	}
	return []nesagent.TextEdit{te}
}

// numbered is a line of the window: its index relative to the edited line and its span.
type numbered struct {
	n          int
	start, end int
}

// nearby returns the lines within cfg.window lines of the edited one (which is left out), nearest
// to the cursor's line first (below first on a tie).
func (e *engine) nearby(text string, c change, cursor int) []numbered {
	ls, le := c.lineStart, c.lineStart+len(c.newLines)
	above := make([]numbered, 0, min(e.cfg.window, 256)) // nearest first
	below := make([]numbered, 0, min(e.cfg.window, 256))
	cur := 0
	s := ls
	for n := -1; n >= -e.cfg.window && s > 0; n-- {
		end := s - 1
		if text[end] == '\n' && end > 0 && text[end-1] == '\r' {
			end--
		}
		s = lastBreak(text[:end]) + 1
		above = append(above, numbered{n, s, end})
		if s <= cursor && cursor <= end {
			cur = n
		}
	}
	end := le
	for n := 1; n <= e.cfg.window && end < len(text); n++ {
		s := end + 1
		if text[end] == '\r' && s < len(text) && text[s] == '\n' {
			s++
		}
		end = s + lineLen(text[s:])
		below = append(below, numbered{n, s, end})
		if s <= cursor && cursor <= end {
			cur = n
		}
	}
	line := func(n int) (numbered, bool) {
		switch {
		case n < 0 && -n <= len(above):
			return above[-n-1], true
		case n > 0 && n <= len(below):
			return below[n-1], true
		}
		return numbered{}, false
	}
	out := make([]numbered, 0, len(above)+len(below))
	if l, ok := line(cur); ok {
		out = append(out, l)
	}
	for d := 1; cur+d <= len(below) || cur-d >= -len(above); d++ {
		if l, ok := line(cur + d); ok {
			out = append(out, l)
		}
		if l, ok := line(cur - d); ok {
			out = append(out, l)
		}
	}
	return out
}

// lastBreak returns the index of the last line break (\n or \r) of s, or -1.
func lastBreak(s string) int {
	i := len(s) - 1
	for i >= 0 && s[i] != '\n' && s[i] != '\r' {
		i--
	}
	return i
}

// lineLen returns the length of the first line of s, without its line break.
func lineLen(s string) int {
	n := strings.IndexByte(s, '\n')
	if n < 0 {
		n = len(s)
	}
	if r := strings.IndexByte(s[:n], '\r'); r >= 0 {
		return r
	}
	return n
}
