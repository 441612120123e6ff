package editorstate

import (
	"net/url"
	"sort"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/document"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
)

// Want says which context keys the agent asked for, and the maxCount it gave for some of them.
type Want struct {
	OpenFiles, RecentFiles, EditHistory, UserActions, Diagnostics, RelatedSnippets bool
	// The agent's maxCount of recentFiles, editHistory and userActions; 0 when it gave none, which
	// means 10, 16 and 32. The output never has more than the State keeps.
	RecentMax, HistoryMax, ActionsMax int
}

// Request is what [State.Context] assembles a context for.
type Request struct {
	Want   Want
	Snap   *document.Snapshot   // the document of the request
	Cursor int                  // byte offset in Snap
	Open   []*document.Snapshot // every open document (the current text of each)
	Agent  encoding.Kind        // encoding of every position in the result
	Editor encoding.Kind        // encoding of Diagnostic ranges
	// Diagnostics that came with this request (a code action's context), of Snap. They come
	// first in the output.
	Extra []Diagnostic
	// Path returns the display path of a URI for diff headers (e.g. relative to the workspace);
	// nil means the URI's path.
	Path func(uri string) string
}

// Defaults of the agent's maxCounts, and the most diagnostics sent.
const (
	defaultRecentMax  = 10
	defaultHistoryMax = 16
	defaultActionsMax = 32
	maxDiagnosticsOut = 50
)

// docView is what Context reads of a document's state, copied under the lock.
type docView struct {
	lang       string
	focusAt    time.Time
	focusSeq   uint64
	rank       uint64 // docState.rank
	visible    LineRange
	hasVisible bool
}

// Context assembles the context of a nes/suggest request. Only the keys r.Want asks for are set,
// and it returns nil when none is asked for or every key asked for is empty. Every position is in
// r.Agent's encoding.
//
//   - openFiles: every document of r.Open (r.Snap is added when missing), the most recently
//     focused first, then those never focused in URI order; with the visible range when known
//     (whole lines: start and end at character 0, clamped to the document) and the last focus
//     time when known.
//   - recentFiles: the open documents other than r.Snap in the recency list, the most recent
//     first (those focused or edited, then those only opened), with their text; documents larger than Limits.RecentFileBytes are skipped, and
//     so is one that would take the text of them all over Limits.RecentFilesBytes.
//   - editHistory: the last entries, oldest first, as unified diffs (see the package
//     documentation).
//   - userActions: the last actions, oldest first.
//   - diagnostics: r.Extra, then the stored diagnostics of r.Snap nearest to the cursor first;
//     converted from r.Editor's encoding against r.Snap's text (a range whose end no longer fits
//     is clamped to the end of the text, one whose start does not fit is dropped), duplicates
//     (same range and message) removed, at most 50.
//   - relatedSnippets: see [relatedSnippets].
func (s *State) Context(r Request) *acp.UnstableNesSuggestContext {
	w := r.Want
	if r.Snap != nil && r.Snap.Mapper == nil {
		r.Snap = nil
	}
	if !w.OpenFiles && !w.RecentFiles && !w.EditHistory && !w.UserActions && !w.Diagnostics && !w.RelatedSnippets {
		return nil
	}
	open := openDocuments(r)
	lim := s.lim
	histMax := capMax(w.HistoryMax, defaultHistoryMax, lim.EditHistory)
	actMax := capMax(w.ActionsMax, defaultActionsMax, lim.UserActions)
	recentMax := capMax(w.RecentMax, defaultRecentMax, lim.Recent)

	// Copy what is needed under the lock; the work is done outside it.
	s.mu.Lock()
	views := make(map[string]docView, len(open))
	for _, snap := range open {
		if d, ok := s.docs[snap.URI]; ok {
			views[snap.URI] = docView{lang: d.lang, focusAt: d.focusAt, focusSeq: d.focusSeq, rank: d.rank(),
				visible: d.visible, hasVisible: d.hasVisible}
		}
	}
	var history []group
	if w.EditHistory {
		// Only the entry being built can render empty.
		for i := max(0, s.history.len()-histMax-1); i < s.history.len(); i++ {
			history = append(history, *s.history.at(i))
		}
	}
	var actions []action
	if w.UserActions {
		for i := max(0, s.actions.len()-actMax); i < s.actions.len(); i++ {
			actions = append(actions, s.actions.at(i))
		}
	}
	var stored []Diagnostic
	if w.Diagnostics && r.Snap != nil {
		if d, ok := s.docs[r.Snap.URI]; ok {
			stored = d.diags // replaced, never modified, by SetDiagnostics
		}
	}
	budgetNow := s.budgetNow
	s.mu.Unlock()

	ctx := &acp.UnstableNesSuggestContext{}
	if w.OpenFiles {
		ctx.OpenFiles = openFiles(open, views)
	}
	if w.RecentFiles {
		ctx.RecentFiles = recentFiles(r.Snap, open, views, recentMax, lim.RecentFileBytes, lim.RecentFilesBytes)
	}
	if w.EditHistory {
		ctx.EditHistory = editHistory(history, histMax, r.Path)
	}
	if w.UserActions {
		for _, a := range actions {
			ctx.UserActions = append(ctx.UserActions, acp.UnstableNesUserAction{
				Action: a.kind.String(), Uri: a.uri, Position: acpPosition(a.pos.in(r.Agent)), TimestampMs: int(a.ms),
			})
		}
	}
	if w.Diagnostics && r.Snap != nil {
		ctx.Diagnostics = diagnostics(r.Snap, r.Cursor, r.Extra, stored, r.Editor, r.Agent)
	}
	if w.RelatedSnippets && r.Snap != nil {
		others := byRecency(open, views, r.Snap.URI)
		deadline := budgetNow().Add(lim.SnippetBudget)
		ctx.RelatedSnippets = relatedSnippets(r.Snap, r.Cursor, others, func() bool { return budgetNow().After(deadline) })
	}
	if len(ctx.OpenFiles) == 0 && len(ctx.RecentFiles) == 0 && len(ctx.EditHistory) == 0 &&
		len(ctx.UserActions) == 0 && len(ctx.Diagnostics) == 0 && len(ctx.RelatedSnippets) == 0 {
		return nil
	}
	return ctx
}

// capMax returns the agent's maxCount v, or def when it gave none, and never more than kept.
func capMax(v, def, kept int) int {
	if v <= 0 {
		v = def
	}
	return min(v, kept)
}

// openDocuments returns r.Open without nil or repeated documents, with r.Snap added when missing.
func openDocuments(r Request) []*document.Snapshot {
	seen := make(map[string]bool, len(r.Open)+1)
	out := make([]*document.Snapshot, 0, len(r.Open)+1)
	for _, snap := range r.Open {
		if snap != nil && snap.Mapper != nil && !seen[snap.URI] {
			seen[snap.URI] = true
			out = append(out, snap)
		}
	}
	if r.Snap != nil && r.Snap.Mapper != nil && !seen[r.Snap.URI] {
		out = append(out, r.Snap)
	}
	return out
}

func acpPosition(p encoding.Position) acp.UnstablePosition {
	return acp.UnstablePosition{Line: p.Line, Character: p.Character}
}

func acpRange(r encoding.Range) acp.UnstableRange {
	return acp.UnstableRange{Start: acpPosition(r.Start), End: acpPosition(r.End)}
}

func languageOf(snap *document.Snapshot, v docView) string {
	switch {
	case snap.LanguageID != "":
		return snap.LanguageID
	case v.lang != "":
		return v.lang
	}
	return "plaintext"
}

func openFiles(open []*document.Snapshot, views map[string]docView) []acp.UnstableNesOpenFile {
	docs := append([]*document.Snapshot(nil), open...)
	sort.SliceStable(docs, func(i, j int) bool {
		fi, fj := views[docs[i].URI].focusSeq, views[docs[j].URI].focusSeq
		if fi != fj {
			return fi > fj
		}
		return docs[i].URI < docs[j].URI
	})
	out := make([]acp.UnstableNesOpenFile, 0, len(docs))
	for _, snap := range docs {
		v := views[snap.URI]
		f := acp.UnstableNesOpenFile{Uri: snap.URI, LanguageId: languageOf(snap, v)}
		if v.hasVisible {
			last := snap.Mapper.LineCount() - 1
			a, b := max(0, min(v.visible.Start, last)), max(0, min(v.visible.End, last))
			if a > b {
				a, b = b, a
			}
			f.VisibleRange = &acp.UnstableRange{Start: acp.UnstablePosition{Line: a}, End: acp.UnstablePosition{Line: b}}
		}
		if v.focusSeq > 0 {
			ms := int(v.focusAt.UnixMilli())
			f.LastFocusedMs = &ms
		}
		out = append(out, f)
	}
	return out
}

// byRecency returns the open documents but the one of uri: those in the recency list, the most
// recent first, then the others in URI order.
func byRecency(open []*document.Snapshot, views map[string]docView, uri string) []*document.Snapshot {
	var out []*document.Snapshot
	for _, snap := range open {
		if snap.URI != uri {
			out = append(out, snap)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		ti, tj := views[out[i].URI].rank, views[out[j].URI].rank
		if ti != tj {
			return ti > tj
		}
		return out[i].URI < out[j].URI
	})
	return out
}

// recentFiles lists at most limit recent documents, each of at most maxBytes, all of them together
// of at most totalBytes: the agent's maxCount alone would let one request carry tens of megabytes,
// which the connection then copies more than once.
func recentFiles(snap *document.Snapshot, open []*document.Snapshot, views map[string]docView, limit, maxBytes, totalBytes int) []acp.UnstableNesRecentFile {
	self := ""
	if snap != nil {
		self = snap.URI
	}
	var out []acp.UnstableNesRecentFile
	total := 0
	for _, d := range byRecency(open, views, self) {
		v := views[d.URI]
		if len(out) == limit || v.rank == 0 {
			break
		}
		if n := d.Mapper.Len(); n > maxBytes || total+n > totalBytes {
			continue
		}
		total += d.Mapper.Len()
		out = append(out, acp.UnstableNesRecentFile{Uri: d.URI, LanguageId: languageOf(d, v), Text: d.Text()})
	}
	return out
}

// uriPath returns the path of a URI for a diff header.
func uriPath(uri string) string {
	u, err := url.Parse(uri)
	switch {
	case err != nil:
		return uri
	case u.Path != "":
		return u.Path
	case u.Opaque != "":
		return u.Opaque
	}
	return uri
}

// editHistory renders the last limit entries of history that change something, oldest first.
func editHistory(history []group, limit int, path func(string) string) []acp.UnstableNesEditHistoryEntry {
	if path == nil {
		path = uriPath
	}
	var out []acp.UnstableNesEditHistoryEntry
	for i := len(history) - 1; i >= 0 && len(out) < limit; i-- {
		g := &history[i]
		if diff := g.diff(path(g.uri)); diff != "" {
			out = append(out, acp.UnstableNesEditHistoryEntry{Uri: g.uri, Diff: diff})
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

var severities = map[int]acp.UnstableNesDiagnosticSeverity{
	1: acp.UnstableNesDiagnosticSeverityError,
	2: acp.UnstableNesDiagnosticSeverityWarning,
	3: acp.UnstableNesDiagnosticSeverityInformation,
	4: acp.UnstableNesDiagnosticSeverityHint,
}

func severity(s int) acp.UnstableNesDiagnosticSeverity {
	if v, ok := severities[s]; ok {
		return v
	}
	return acp.UnstableNesDiagnosticSeverityInformation
}

// fitRange returns the offsets of r (in encoding k) in m's text. A range whose end lies beyond the
// text's last line ends at the end of the text; one whose start does not fit, or that is
// reversed, is dropped.
func fitRange(m *encoding.Mapper, r encoding.Range, k encoding.Kind) (a, b int, ok bool) {
	a, err := m.PositionOffset(r.Start, k)
	if err != nil {
		return 0, 0, false
	}
	b, err = m.PositionOffset(r.End, k)
	if err != nil {
		if r.End.Line < 0 || r.End.Character < 0 {
			return 0, 0, false
		}
		b = m.Len()
	}
	return a, b, a <= b
}

// diagnostics converts extra, then stored, to the agent's encoding against snap's text.
func diagnostics(snap *document.Snapshot, cursor int, extra, stored []Diagnostic, editor, agent encoding.Kind) []acp.UnstableNesDiagnostic {
	m := snap.Mapper
	cursor = max(0, min(cursor, m.Len()))
	cursorLine := m.LineOf(cursor)
	type key struct {
		a, b int
		msg  string
	}
	type item struct {
		key
		sev              int
		lineDist, byteDs int
	}
	seen := make(map[key]bool)
	var items []item
	nExtra := 0
	for i, d := range append(append([]Diagnostic(nil), extra...), stored...) {
		a, b, ok := fitRange(m, d.Range, editor)
		if !ok {
			continue
		}
		k := key{a, b, d.Message}
		if seen[k] {
			continue
		}
		seen[k] = true
		it := item{key: k, sev: d.Severity}
		switch la, lb := m.LineOf(a), m.LineOf(b); {
		case cursorLine < la:
			it.lineDist = la - cursorLine
		case cursorLine > lb:
			it.lineDist = cursorLine - lb
		}
		switch {
		case cursor < a:
			it.byteDs = a - cursor
		case cursor > b:
			it.byteDs = cursor - b
		}
		items = append(items, it)
		if i < len(extra) {
			nExtra++
		}
	}
	rest := items[nExtra:]
	sort.SliceStable(rest, func(i, j int) bool {
		if rest[i].lineDist != rest[j].lineDist {
			return rest[i].lineDist < rest[j].lineDist
		}
		return rest[i].byteDs < rest[j].byteDs
	})
	var out []acp.UnstableNesDiagnostic
	for _, it := range items {
		if len(out) == maxDiagnosticsOut {
			break
		}
		r, err := m.OffsetsRange(it.a, it.b, agent)
		if err != nil {
			continue
		}
		out = append(out, acp.UnstableNesDiagnostic{Uri: snap.URI, Range: acpRange(r), Severity: severity(it.sev), Message: it.msg})
	}
	return out
}

// lineContentEnd returns the offset of the end of line's text, before its line ending; the end of
// the text for a line beyond the last.
func lineContentEnd(m *encoding.Mapper, line int) int {
	if line >= m.LineCount() {
		return m.Len()
	}
	return m.LineContentEnd(line)
}
