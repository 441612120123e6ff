// Package builtin is the bridge's built-in next-edit engine: deterministic suggestions that need no
// model. It looks at the user's last edit (nesagent.Request.Recent) and recognizes two things:
//
//   - a rename: one identifier on the line became another one (count → total). The same change is
//     suggested at the other occurrences of the old identifier in the document, as whole
//     identifiers, nearest to the cursor first, one suggestion per occurrence; then, for each other
//     open document of the same language that uses the old identifier, an edit renaming it there
//     and a jump to its first use (see rename.go);
//   - a repeated edit: any other change of one line (foo(a) → foo(a, ctx), log.Print →
//     log.Printf, err → wrap(err), read(x) → read(x)?). The same change is suggested on the
//     nearby lines that have the same shape, nearest first, one suggestion per line (see
//     repeat.go, which defines "same shape").
//
// When neither applies it suggests nothing: it never guesses. It never suggests an edit that changes
// nothing, nor one at the place the user just edited.
//
// Identifier characters are letters, digits and the underscore, Unicode letters and digits
// included, and combining marks (so "café" spelled with U+0301 is one identifier, and 日本語 and 𐐀
// are identifier characters).
package builtin

import (
	"context"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent"
)

// Defaults for the options.
const (
	DefaultMaxSuggestions = 20
	DefaultWindow         = 30
)

// Option configures the engine.
type Option func(*config)

type config struct {
	max    int
	window int
}

// MaxSuggestions bounds the number of suggestions for one request (DefaultMaxSuggestions).
func MaxSuggestions(n int) Option { return func(c *config) { c.max = n } }

// Window is how many lines above and below the edited line a repeated edit is looked for
// (DefaultWindow).
func Window(lines int) Option { return func(c *config) { c.window = lines } }

type engine struct{ cfg config }

// New returns the built-in engine.
func New(opts ...Option) nesagent.Engine {
	e := &engine{cfg: config{max: DefaultMaxSuggestions, window: DefaultWindow}}
	for _, o := range opts {
		o(&e.cfg)
	}
	return e
}

// Suggest implements nesagent.Engine.
func (e *engine) Suggest(ctx context.Context, req nesagent.Request) ([]nesagent.Suggestion, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(req.Recent) == 0 || e.cfg.max <= 0 {
		return nil, nil
	}
	ch, ok := lineChange(req.Text, req.Recent[len(req.Recent)-1])
	if !ok {
		return nil, nil
	}
	if ch.isRename() {
		return e.rename(req, ch), nil
	}
	return e.repeat(req, ch), nil
}

// change is the user's last edit as a change of its lines: the lines were X·B·Y and are now X·A·Y,
// where X and Y are the longest common prefix and suffix (cut at character boundaries), widened so
// that neither B nor A starts or ends inside an identifier: typing "f" after "log.Print" is the
// change Print → Printf, and typing "_na" after "old" is old → old_na.
type change struct {
	oldLines, newLines string
	lineStart          int // offset of newLines in the request's text
	p                  int // len(X)
	b, a               string
}

func (c *change) x() string { return c.newLines[:c.p] }
func (c *change) y() string { return c.newLines[c.p+len(c.a):] }

// start is the offset of A in the request's text.
func (c *change) start() int { return c.lineStart + c.p }

// lineChange derives the change of the last edit, checking that its lines are those of text.
func lineChange(text string, e nesagent.Edit) (change, bool) {
	o, n := e.OldLines, e.NewLines
	if o == n || e.LineStart < 0 || e.LineStart > len(text) || len(n) > len(text)-e.LineStart || text[e.LineStart:e.LineStart+len(n)] != n {
		return change{}, false
	}
	p, s := commonEnds(o, n)
	ob, oe, ne := p, len(o)-s, len(n)-s
	// Widen to identifier boundaries.
	if r, _ := utf8.DecodeLastRuneInString(o[:ob]); ob > 0 && isWord(r) && (startsWord(o[ob:oe]) || startsWord(n[ob:ne])) {
		for ob > 0 {
			r, size := utf8.DecodeLastRuneInString(o[:ob])
			if !isWord(r) {
				break
			}
			ob -= size
		}
	}
	if r, _ := utf8.DecodeRuneInString(o[oe:]); oe < len(o) && isWord(r) && (endsWord(o[ob:oe]) || endsWord(n[ob:ne])) {
		for oe < len(o) {
			r, size := utf8.DecodeRuneInString(o[oe:])
			if !isWord(r) {
				break
			}
			oe += size
			ne += size
		}
	}
	return change{oldLines: o, newLines: n, lineStart: e.LineStart, p: ob, b: o[ob:oe], a: n[ob:ne]}, true
}

// commonEnds returns the lengths of the longest common prefix and suffix of a and b, cut at
// character boundaries and not overlapping.
func commonEnds(a, b string) (p, s int) {
	m := min(len(a), len(b))
	for p < m && a[p] == b[p] {
		p++
	}
	for p > 0 && (p < len(a) && !utf8.RuneStart(a[p]) || p < len(b) && !utf8.RuneStart(b[p])) {
		p--
	}
	for s < m-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	for s > 0 && !utf8.RuneStart(a[len(a)-s]) {
		s--
	}
	return p, s
}

// isWord reports whether r is an identifier character.
func isWord(r rune) bool {
	if r < utf8.RuneSelf {
		return r == '_' || '0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.In(r, unicode.Mn, unicode.Mc)
}

func startsWord(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return s != "" && isWord(r)
}

func endsWord(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return s != "" && isWord(r)
}

// isIdentifier reports whether s is one whole identifier (not a number).
func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !isWord(r) || i == 0 && (unicode.IsDigit(r) || unicode.In(r, unicode.Mn, unicode.Mc)) {
			return false
		}
	}
	return true
}

// wordBefore and wordAfter report whether an identifier character touches offset i of s.
func wordBefore(s string, i int) bool {
	r, _ := utf8.DecodeLastRuneInString(s[:i])
	return i > 0 && isWord(r)
}

func wordAfter(s string, i int) bool {
	r, _ := utf8.DecodeRuneInString(s[i:])
	return i < len(s) && isWord(r)
}

// qualifier returns the length of the member-access operator x ends with ("." "->" "::"), when
// it follows an identifier or a closing bracket; 0 otherwise. "...rest" is not qualified.
func qualifier(x string) int {
	n := 0
	switch {
	case strings.HasSuffix(x, "->"), strings.HasSuffix(x, "::"):
		n = 2
	case strings.HasSuffix(x, "."):
		n = 1
	default:
		return 0
	}
	before := x[:len(x)-n]
	if endsWord(before) || strings.HasSuffix(before, ")") || strings.HasSuffix(before, "]") {
		return n
	}
	return 0
}

// chainStart returns where the qualified name ending at x[:end] (which ends with an identifier)
// starts: "a.b.c" in "x := a.b.c".
func chainStart(x string, end int) int {
	i := end
	for {
		for i > 0 {
			r, size := utf8.DecodeLastRuneInString(x[:i])
			if !isWord(r) {
				break
			}
			i -= size
		}
		q := qualifier(x[:i])
		if q == 0 || !endsWord(x[:i-q]) {
			return i
		}
		i -= q
	}
}

// suggestion makes a one-edit suggestion whose cursor lands after the new text.
func suggestion(edits []nesagent.TextEdit) nesagent.Suggestion {
	cur, delta := 0, 0
	for _, te := range edits {
		cur = te.Start + delta + len(te.NewText)
		delta += len(te.NewText) - (te.End - te.Start)
	}
	return nesagent.Suggestion{Edits: edits, Cursor: &cur}
}
