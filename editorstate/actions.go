package editorstate

import (
	"unicode/utf8"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/document"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
)

type actionKind uint8

const (
	actInsertChar actionKind = iota
	actInsertSelection
	actDeleteChar
	actDeleteSelection
	actReplaceSelection
	actCursorMovement
)

var actionNames = [...]string{
	actInsertChar:       "insertChar",
	actInsertSelection:  "insertSelection",
	actDeleteChar:       "deleteChar",
	actDeleteSelection:  "deleteSelection",
	actReplaceSelection: "replaceSelection",
	actCursorMovement:   "cursorMovement",
}

func (k actionKind) String() string { return actionNames[k] }

// position3 is a position with its column in each encoding, so that it can be given in any of them
// without the text it was computed on.
type position3 struct {
	line         int
	c8, c16, c32 int
}

func (p position3) in(k encoding.Kind) encoding.Position {
	c := p.c16
	switch k {
	case encoding.UTF8:
		c = p.c8
	case encoding.UTF32:
		c = p.c32
	}
	return encoding.Position{Line: p.line, Character: c}
}

// action is one recorded user action.
type action struct {
	kind actionKind
	uri  string
	pos  position3
	ms   int64 // unix milliseconds
}

// positionAt returns the position of offset off of m's text, with baseLine added to its line. An
// offset inside a character or a "\r\n" is moved back to the start of it. It costs time in
// proportion to the length of the line, not of the text.
func positionAt(m *encoding.Mapper, off, baseLine int) position3 {
	off = max(0, min(off, m.Len()))
	for {
		p, err := m.OffsetPosition(off, encoding.UTF8)
		if err == nil || off == 0 {
			prefix := m.Slice(m.LineStart(p.Line), off)
			return position3{
				line: baseLine + p.Line,
				c8:   len(prefix),
				c16:  encoding.Units(prefix, encoding.UTF16),
				c32:  encoding.Units(prefix, encoding.UTF32),
			}
		}
		off--
	}
}

// change is one change reduced to what it changes: the bytes [start, end) of before's text
// replaced by text, never a no-op.
type change struct {
	before     *encoding.Mapper
	start, end int
	text       string
}

// normalize turns an applied change into a change. A full-document replacement becomes the
// replacement of the bytes between the common prefix and the common suffix of the two texts. It
// reports false for a change that changes nothing (text replaced by the same text).
func normalize(a document.Applied) (change, bool) {
	if a.Before == nil {
		return change{}, false
	}
	if a.Full {
		t := a.Before.Text() // the editor sent the whole text: comparing it is in proportion to it
		p := commonPrefix(t, a.Text)
		q := commonSuffix(t[p:], a.Text[p:])
		if p == len(t) && p == len(a.Text) {
			return change{}, false
		}
		return change{before: a.Before, start: p, end: len(t) - q, text: a.Text[p : len(a.Text)-q]}, true
	}
	s, e := a.Start, a.End
	if s < 0 || e > a.Before.Len() || s > e || a.Before.Slice(s, e) == a.Text {
		return change{}, false // out of range, or text replaced by itself
	}
	return change{before: a.Before, start: s, end: e, text: a.Text}, true
}

// commonPrefix returns the length of the longest common prefix of a and b.
func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for i+64 <= n && a[i:i+64] == b[i:i+64] {
		i += 64
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// commonSuffix returns the length of the longest common suffix of a and b.
func commonSuffix(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for i+64 <= n && a[len(a)-i-64:len(a)-i] == b[len(b)-i-64:len(b)-i] {
		i += 64
	}
	for i < n && a[len(a)-1-i] == b[len(b)-1-i] {
		i++
	}
	return i
}

// oneChar reports whether s is one character: one rune, or a "\r\n".
func oneChar(s string) bool {
	return s == "\r\n" || (len(s) <= utf8.UTFMax && utf8.RuneCountInString(s) == 1)
}

// recordAction records the user action of change c of document d.
func (s *State) recordAction(d *docState, full bool, c change, now int64) {
	var kind actionKind
	removed := c.end - c.start
	switch {
	case full:
		kind = actReplaceSelection
	case removed == 0 && oneChar(c.text):
		kind = actInsertChar
	case removed == 0:
		kind = actInsertSelection
	case c.text == "" && oneChar(c.before.Slice(c.start, c.end)):
		kind = actDeleteChar
	case c.text == "":
		kind = actDeleteSelection
	default:
		kind = actReplaceSelection
	}
	var pos position3
	if full {
		first, _ := changeLines(c)
		pos = position3{line: first}
	} else {
		pos = afterPosition(c)
	}
	s.actions.push(action{kind: kind, uri: d.uri, pos: pos, ms: now})
}

// afterPosition returns the position, in the text after c, of the end of the text c inserted (the
// start of what it deleted). It looks at the line before the change, the change and a few bytes
// after it, never at the whole text: a "\r" and a "\n" joined or split by the change are
// accounted for, since the window starts at a line start that no change can move.
func afterPosition(c change) position3 {
	b := c.before
	base := b.LineOf(c.start)
	if base > 0 {
		base--
	}
	ws := b.LineStart(base)
	window := b.Slice(ws, c.start) + c.text + b.Slice(c.end, min(c.end+utf8.UTFMax, b.Len()))
	return positionAt(encoding.NewMapper(window), c.start-ws+len(c.text), base)
}
