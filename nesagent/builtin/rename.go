package builtin

import (
	"strings"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent"
)

// isRename reports whether the change turned one whole identifier into another: in
//
//	total := count + 1   →   total := sum + 1
//
// B is "count" and A is "sum". The change must leave a complete identifier on both sides, which
// an edit in progress does as soon as it is one (old → old_na while the user types "_name";
// ol → old_na). A number is not an identifier (10 → 100 is not a rename), and a qualified name
// (log.Print → log.Printf, s.foo → s.bar) is left to the repeated edits, which keep the
// qualifier as context: renaming every Print of the file because log.Print became log.Printf
// would be wrong.
func (c *change) isRename() bool {
	return c.b != c.a && isIdentifier(c.b) && isIdentifier(c.a) && qualifier(c.x()) == 0
}

// rename suggests replacing the old identifier by the new one at each of its other occurrences as
// a whole identifier ("count" in "count2", "recount" or "x.counter" is not one; in "s.count" it
// is), nearest to the cursor first, one suggestion per occurrence, at most cfg.max. The document
// is searched from the cursor outwards in both directions at once, so the search stops as soon as
// it has enough.
func (e *engine) rename(req nesagent.Request, c change) []nesagent.Suggestion {
	text, old, nw := req.Text, c.b, c.a
	cur := min(max(req.Cursor, 0), len(text))
	// Occurrences starting at or after split are found forwards, the others backwards.
	split := max(cur-len(old)+1, 0)
	fwd, bwdEnd := split, min(split+len(old)-1, len(text))
	editStart, editEnd := c.start(), c.start()+len(nw)

	nextFwd := func() int {
		for fwd <= len(text)-len(old) {
			i := strings.Index(text[fwd:], old)
			if i < 0 {
				fwd = len(text)
				return -1
			}
			i += fwd
			fwd = i + len(old) // an identifier cannot overlap a rejected match of itself
			if !wordBefore(text, i) && !wordAfter(text, i+len(old)) {
				return i
			}
		}
		return -1
	}
	// Backwards, the text is searched forwards (strings.Index is much faster than
	// strings.LastIndex) in windows of growing size, each ending where the previous one started
	// (plus len(old)-1, for an occurrence that straddles the two); found holds the valid
	// occurrences of the current window.
	var found []int
	lo, window := bwdEnd, 1024
	nextBwd := func() int {
		for len(found) == 0 {
			if lo == 0 || bwdEnd < len(old) {
				return -1
			}
			hi := bwdEnd
			lo = max(hi-window, 0)
			window = min(2*window, 1<<20)
			for from := lo; from <= hi-len(old); {
				i := strings.Index(text[from:hi], old)
				if i < 0 {
					break
				}
				i += from
				from = i + len(old)
				if !wordBefore(text, i) && !wordAfter(text, i+len(old)) {
					found = append(found, i)
				}
			}
			bwdEnd = min(lo+len(old)-1, hi)
		}
		j := found[len(found)-1]
		found = found[:len(found)-1]
		return j
	}

	var out []nesagent.Suggestion
	f, b := nextFwd(), nextBwd()
	for len(out) < e.cfg.max && (f >= 0 || b >= 0) {
		var at int
		if b < 0 || f >= 0 && max(f-cur, 0) <= cur-(b+len(old)) {
			at, f = f, nextFwd()
		} else {
			at, b = b, nextBwd()
		}
		if at < editEnd && at+len(old) > editStart {
			continue // the place the user edited
		}
		out = append(out, suggestion([]nesagent.TextEdit{{Start: at, End: at + len(old), NewText: nw}}))
	}
	return append(out, elsewhere(req, old, nw)...)
}

// Bounds of a rename's suggestions for the other open documents.
const (
	maxOtherDocuments = 4   // the most recently edited ones of the request's language
	maxOtherEdits     = 500 // occurrences renamed in one of them
)

// elsewhere suggests the rename in the other open documents of the same language that use the old
// identifier, most recently edited first: for each, one edit renaming its occurrences (at most
// maxOtherEdits) and a jump to the first of them, for the user who wants to look before renaming.
func elsewhere(req nesagent.Request, old, nw string) []nesagent.Suggestion {
	var out []nesagent.Suggestion
	docs := 0
	for _, d := range req.Open {
		if docs == maxOtherDocuments {
			break
		}
		if d.URI == req.URI || d.LanguageID != req.LanguageID {
			continue
		}
		var edits []nesagent.TextEdit
		for from := 0; len(edits) < maxOtherEdits; {
			i := strings.Index(d.Text[from:], old)
			if i < 0 {
				break
			}
			i += from
			from = i + len(old)
			if !wordBefore(d.Text, i) && !wordAfter(d.Text, i+len(old)) {
				edits = append(edits, nesagent.TextEdit{Start: i, End: i + len(old), NewText: nw})
			}
		}
		if len(edits) == 0 {
			continue
		}
		docs++
		first := edits[0].Start
		out = append(out, nesagent.Suggestion{URI: d.URI, Edits: edits}, nesagent.Suggestion{URI: d.URI, Jump: &first})
	}
	return out
}
