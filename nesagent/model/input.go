package model

import (
	"net/url"
	"path"
	"sort"
	"strings"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/workspace"
)

// input is a request as every format reads it: the text with "\n" line breaks (the models were
// trained on such text; the answer is turned back into the document's own breaks), the file named
// relative to the workspace, the recent edits of every open document in the order they were made,
// and the other open documents.
type input struct {
	req    nesagent.Request
	text   string // req.Text with each "\r\n" as "\n"
	cursor int    // in text
	path   string // the document's name: relative to the workspace folder, with "/"
	lang   string
	events []event    // the recent edits, oldest first, across documents
	others []openFile // the other open documents, most recently edited first
	crs    []int      // the offsets in text before which a "\r" was removed, ascending
	crlf   bool       // the document's line breaks are mostly "\r\n"
	diags  []nesagent.Diagnostic
	// words keeps the open documents' word indexes between requests (the engine's); nil: made
	// for each request.
	words *wordIndexes
}

// event is one edit of a document as a unified diff hunk, the way the formats write history.
type event struct {
	path     string
	old, new string // the whole lines the edit touched, before and after (no final line break)
	line     int    // the first of those lines, 1-based, in the document as it is now
	// ctxBefore and ctxAfter are up to three lines around them, as the document reads now.
	ctxBefore, ctxAfter string
	// diff, when set, is the event's diff as it is given (the references' tests give it so).
	diff       string
	seq        uint64
	current    bool // an edit of the requested document
	oldAt, end int  // for current: where the new lines stand in input.text, [oldAt, end)
}

// openFile is another open document.
type openFile struct {
	uri, path, lang, text string
}

// prepare reads a request for the formats.
func prepare(req nesagent.Request) *input { return prepareNamed(req, relName) }

// prepareNamed is prepare with the documents named by name (relName, or absName for a coding
// agent).
func prepareNamed(req nesagent.Request, name func(uri, root string) string) *input {
	in := &input{req: req, lang: req.LanguageID, diags: req.Diagnostics}
	in.text, in.crs = lfView(req.Text)
	in.crlf = strings.Count(req.Text, "\r\n")*2 > strings.Count(req.Text, "\n")
	in.cursor = in.fromOrig(min(max(req.Cursor, 0), len(req.Text)))
	in.path = name(req.URI, req.Root)
	for _, e := range historyEvents(req.Recent, req.Text, in.path) {
		e.current = true
		e.oldAt = in.fromOrig(e.oldAt)
		e.end = in.fromOrig(e.end)
		in.events = append(in.events, e)
	}
	for _, d := range req.Open {
		p := name(d.URI, req.Root)
		text, _ := lfView(d.Text)
		in.others = append(in.others, openFile{uri: d.URI, path: p, lang: d.LanguageID, text: text})
		in.events = append(in.events, historyEvents(d.Recent, d.Text, p)...)
	}
	sort.SliceStable(in.events, func(i, j int) bool { return in.events[i].seq < in.events[j].seq })
	return in
}

// lfView is s with each "\r\n" as "\n", and the offsets (in the result) before which a "\r" was
// removed.
func lfView(s string) (string, []int) {
	if !strings.Contains(s, "\r\n") {
		return s, nil
	}
	var b strings.Builder
	b.Grow(len(s))
	var crs []int
	for i := 0; i < len(s); i++ {
		if s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n' {
			crs = append(crs, b.Len())
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String(), crs
}

// toOrig maps an offset in in.text to the request's text.
func (in *input) toOrig(off int) int {
	return off + sort.SearchInts(in.crs, off)
}

// fromOrig maps an offset in the request's text to in.text (an offset between a "\r" and its "\n"
// goes before the line break).
func (in *input) fromOrig(off int) int {
	// The k-th removed "\r" stood at original offset crs[k]+k.
	n := sort.Search(len(in.crs), func(k int) bool { return in.crs[k]+k >= off })
	return off - n
}

// breaks turns a text with "\n" into the document's line breaks.
func (in *input) breaks(s string) string {
	if !in.crlf {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\n", "\r\n")
}

// absName is the document's absolute path on this machine (relName's name when it is no file).
func absName(uri, root string) string {
	if p, ok := workspace.Host.URIToPath(uri); ok {
		return p
	}
	return relName(uri, root)
}

// relName is how a document is named to a model: its path relative to the workspace folder, with
// "/", never an absolute path (which would tell the model the user's home, and was never in its
// training data); outside a folder, its base name; a URI that is no file, as it is.
func relName(uri, root string) string {
	p, ok := workspace.Host.URIToPath(uri)
	if !ok {
		if u, err := url.Parse(uri); err == nil && u.Opaque != "" {
			return u.Opaque
		}
		return uri
	}
	if root != "" {
		if rel, ok := workspace.Host.Rel(p, root); ok && rel != "." {
			return rel
		}
	}
	return path.Base(strings.ReplaceAll(p, `\`, "/"))
}

// historyEvents turns a document's recent edits into events: the lines each touched, placed where
// they stand now (later edits above them moved them).
func historyEvents(recent []nesagent.Edit, text, name string) []event {
	var out []event
	for i, ed := range recent {
		if ed.OldLines == ed.NewLines {
			continue
		}
		pos := ed.LineStart
		for _, later := range recent[i+1:] {
			switch {
			case later.Start+len(later.Old) <= pos:
				pos += len(later.New) - len(later.Old)
			case later.Start < pos:
				pos = later.Start
			}
		}
		pos = min(max(pos, 0), len(text))
		end := min(pos+len(ed.NewLines), len(text))
		before, after := contextLines(text, pos, end, diffContext)
		out = append(out, event{
			path: name, old: lf(ed.OldLines), new: lf(ed.NewLines),
			line: strings.Count(text[:pos], "\n") + 1, seq: ed.Seq, oldAt: pos, end: end,
			ctxBefore: lf(before), ctxAfter: lf(after),
		})
	}
	return out
}

// diffContext is how many lines of context a history hunk has on each side, as in Zed's.
const diffContext = 3

// contextLines are up to n whole lines of text before the line holding pos and after the line
// holding end, each ending in its line break.
func contextLines(text string, pos, end, n int) (before, after string) {
	ls := strings.LastIndexByte(text[:pos], '\n') + 1 // the start of pos's line
	b := ls
	for i := 0; i < n && b > 0; i++ {
		b = strings.LastIndexByte(text[:b-1], '\n') + 1
	}
	le := end // the end of end's line, after its break
	if j := strings.IndexByte(text[le:], '\n'); j >= 0 {
		le += j + 1
	} else {
		le = len(text)
	}
	a := le
	for i := 0; i < n && a < len(text); i++ {
		if j := strings.IndexByte(text[a:], '\n'); j >= 0 {
			a += j + 1
		} else {
			a = len(text)
		}
	}
	return text[b:ls], text[le:a]
}

// lastEvent is the most recent edit of the requested document, if any.
func (in *input) lastEvent() (event, bool) {
	for i := len(in.events) - 1; i >= 0; i-- {
		if in.events[i].current {
			return in.events[i], true
		}
	}
	return event{}, false
}

// lf turns "\r\n" line breaks into "\n".
func lf(s string) string { return strings.ReplaceAll(s, "\r\n", "\n") }
