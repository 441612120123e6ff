package editorstate

import (
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/document"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
)

// Limits bound everything the State keeps. Zero (or negative) fields take the defaults shown.
type Limits struct {
	EditHistory     int           // history entries kept; default 64
	UserActions     int           // actions kept; default 256
	Recent          int           // URIs kept in the recency list (open or closed); default 100
	EntryBytes      int           // max bytes of old+new text kept per history entry; default 16384
	GroupGap        time.Duration // changes further apart than this start a new history entry; default 3s
	Diagnostics     int           // diagnostics kept per document; default 200
	RecentFileBytes int           // recentFiles skips documents larger than this; default 256 KiB
	// RecentFilesBytes bounds the text of all of recentFiles in one request, whatever maxCount
	// the agent gave: a document that would take it over is skipped; default 1 MiB.
	RecentFilesBytes int
	SnippetBudget    time.Duration // time budget of relatedSnippets per request; default 20ms
}

// The defaults of Limits.
const (
	defaultEditHistory      = 64
	defaultUserActions      = 256
	defaultRecent           = 100
	defaultEntryBytes       = 16 << 10
	defaultGroupGap         = 3 * time.Second
	defaultDiagnostics      = 200
	defaultRecentFileBytes  = 256 << 10
	defaultRecentFilesBytes = 1 << 20
	defaultSnippetBudget    = 20 * time.Millisecond
)

func (l Limits) withDefaults() Limits {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.EditHistory, defaultEditHistory)
	def(&l.UserActions, defaultUserActions)
	def(&l.Recent, defaultRecent)
	def(&l.EntryBytes, defaultEntryBytes)
	def(&l.Diagnostics, defaultDiagnostics)
	def(&l.RecentFileBytes, defaultRecentFileBytes)
	def(&l.RecentFilesBytes, defaultRecentFilesBytes)
	if l.GroupGap <= 0 {
		l.GroupGap = defaultGroupGap
	}
	if l.SnippetBudget <= 0 {
		l.SnippetBudget = defaultSnippetBudget
	}
	return l
}

// LineRange is a range of zero-based lines, End inclusive, as editors report viewports.
type LineRange struct{ Start, End int }

// Diagnostic is a diagnostic of a document as the editor reported it.
type Diagnostic struct {
	Range    encoding.Range // in the editor's encoding
	Severity int            // LSP: 1 error, 2 warning, 3 information, 4 hint; anything else is information
	Message  string
}

// DocumentRef names a document for the editor-state queries.
type DocumentRef struct{ URI, LanguageID string }

// docState is what the State knows about one document. An entry exists while the document is
// open or in the recency list.
type docState struct {
	uri      string // a private copy, shared by the actions and history entries of the document
	lang     string
	open     bool
	focusAt  time.Time
	focusSeq uint64 // order of the last focus; 0: never focused
	touchSeq uint64 // order of the last focus or edit; 0: never focused or edited
	openSeq  uint64 // order of the last didOpen; 0: not opened since it entered the list

	// Forgotten on Closed.
	visible    LineRange
	hasVisible bool
	cursor     int // byte offset in the current text where the cursor is expected
	hasCursor  bool
	diags      []Diagnostic
}

// State is the recorded editor state. It is safe for concurrent use.
type State struct {
	mu        sync.Mutex
	lim       Limits
	now       func() time.Time
	budgetNow func() time.Time // the clock of the snippet budget: real time, whatever SetClock says

	docs        map[string]*docState
	seq         uint64
	recentCount int // docs with rank() > 0

	history *ring[*group]
	open    *group // the entry being built: the newest of history, or nil
	actions *ring[action]
}

// New returns an empty State with limits l (zero fields take their defaults).
func New(l Limits) *State {
	l = l.withDefaults()
	return &State{
		lim:       l,
		now:       time.Now,
		budgetNow: time.Now,
		docs:      make(map[string]*docState),
		history:   newRing[*group](l.EditHistory),
		actions:   newRing[action](l.UserActions),
	}
}

// SetClock replaces time.Now as the clock of timestamps and of the history's GroupGap (tests).
// The related-snippet budget keeps measuring real time.
func (s *State) SetClock(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = now
}

// doc returns the entry of uri, creating it. Every caller reports an event of an open document.
func (s *State) doc(uri string) *docState {
	d, ok := s.docs[uri]
	if !ok {
		d = &docState{uri: strings.Clone(uri)}
		s.docs[d.uri] = d
	}
	d.open = true
	return d
}

// rank orders the recency list, the most recent highest; 0 means not in it. Documents focused or
// edited come before those only opened: opening a file to look at it makes it recent (clients
// such as Helix and Kakoune send no focus), but less than working in one does.
func (d *docState) rank() uint64 {
	const touched = 1 << 63
	if d.touchSeq > 0 {
		return touched | d.touchSeq
	}
	return d.openSeq
}

// touch makes d the most recent document: focused or edited.
func (s *State) touch(d *docState) {
	in := d.rank() > 0
	s.seq++
	d.touchSeq = s.seq
	s.entered(d, in)
}

// entered counts d in the recency list unless it was in already, dropping the least recent
// document when the list is full: a closed one first. That may be d itself, when it was only
// opened and every other document in the full list is open and was focused or edited.
func (s *State) entered(d *docState, already bool) {
	if !already {
		s.recentCount++
	}
	for s.recentCount > s.lim.Recent {
		var victim *docState
		for _, o := range s.docs {
			if o.rank() == 0 {
				continue
			}
			if victim == nil || (victim.open && !o.open) || (victim.open == o.open && o.rank() < victim.rank()) {
				victim = o
			}
		}
		victim.touchSeq, victim.openSeq = 0, 0
		s.recentCount--
		if !victim.open {
			delete(s.docs, victim.uri)
		}
	}
}

// Opened records a newly opened document's language, and makes it recent: after every document
// focused or edited, before those opened earlier.
func (s *State) Opened(snap *document.Snapshot) {
	if snap == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open != nil && s.open.uri == snap.URI {
		s.closeGroup() // the text may not be what the entry expects any more
	}
	d := s.doc(snap.URI)
	d.lang = snap.LanguageID
	in := d.rank() > 0
	s.seq++
	d.openSeq = s.seq
	s.entered(d, in)
}

// Changed records changes of a document as the mirror applied them: the edit history, one user
// action per change, and the document becomes the most recent one.
func (s *State) Changed(uri string, applied []document.Applied) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	d := s.doc(uri)
	changed := false
	for _, a := range applied {
		c, ok := normalize(a)
		if !ok {
			continue
		}
		changed = true
		s.recordAction(d, a.Full, c, now.UnixMilli())
		s.recordHistory(d, c, now)
		d.cursor, d.hasCursor = c.start+len(c.text), true
	}
	if changed {
		s.touch(d)
	}
}

// Closed forgets a document's visible range, cursor and diagnostics and closes its history entry.
// The document stays in the recency list.
func (s *State) Closed(uri string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open != nil && s.open.uri == uri {
		s.closeGroup()
	}
	d, ok := s.docs[uri]
	if !ok {
		return
	}
	d.open = false
	d.hasVisible, d.visible = false, LineRange{}
	d.hasCursor, d.cursor = false, 0
	d.diags = nil
	if d.rank() == 0 {
		delete(s.docs, uri)
	}
}

// Focused records that uri became the active document: its focus time, its visible range when
// visible is non-nil, and its cursor when hasCursor (a cursorMovement action when the cursor is
// not where the document's last change or cursor left it). m is the document's current text.
// Focusing another document closes the history entry being built.
func (s *State) Focused(uri string, m *encoding.Mapper, cursor int, hasCursor bool, visible *LineRange) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if s.open != nil && s.open.uri != uri {
		s.closeGroup()
	}
	d := s.doc(uri)
	s.seq++
	d.focusSeq, d.focusAt = s.seq, now
	s.touch(d)
	if visible != nil {
		d.visible, d.hasVisible = *visible, true
	}
	if hasCursor && m != nil {
		s.cursorTo(d, m, cursor, now)
	}
}

// Cursor records the cursor of a request in document uri (m is its current text): a
// cursorMovement action when it is not where the document's last change or cursor left it. It
// does not change the focus.
func (s *State) Cursor(uri string, m *encoding.Mapper, cursor int) {
	if m == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cursorTo(s.doc(uri), m, cursor, s.now())
}

func (s *State) cursorTo(d *docState, m *encoding.Mapper, cursor int, now time.Time) {
	cursor = max(0, min(cursor, m.Len()))
	if !d.hasCursor || d.cursor != cursor {
		s.actions.push(action{kind: actCursorMovement, uri: d.uri, pos: positionAt(m, cursor, 0), ms: now.UnixMilli()})
	}
	d.cursor, d.hasCursor = cursor, true
}

// SetDiagnostics replaces an open document's diagnostics, keeping the first Limits.Diagnostics.
// The diagnostics of a document the State does not know as open are not kept.
func (s *State) SetDiagnostics(uri string, diags []Diagnostic) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.docs[uri]
	if !ok || !d.open {
		return
	}
	diags = diags[:min(len(diags), s.lim.Diagnostics)]
	d.diags = append([]Diagnostic(nil), diags...)
}

// Active returns the most recently focused document that is still open.
func (s *State) Active() (DocumentRef, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var best *docState
	for _, d := range s.docs {
		if d.open && d.focusSeq > 0 && (best == nil || d.focusSeq > best.focusSeq) {
			best = d
		}
	}
	if best == nil {
		return DocumentRef{}, false
	}
	return DocumentRef{URI: best.uri, LanguageID: best.lang}, true
}

// Recent returns the recent documents, open or closed, the most recent first (those focused or
// edited, then those only opened): at most limit of them, or all that are kept when limit <= 0.
func (s *State) Recent(limit int) []DocumentRef {
	s.mu.Lock()
	ds := make([]*docState, 0, s.recentCount)
	for _, d := range s.docs {
		if d.rank() > 0 {
			ds = append(ds, d)
		}
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i].rank() > ds[j].rank() })
	if limit > 0 && len(ds) > limit {
		ds = ds[:limit]
	}
	out := make([]DocumentRef, len(ds))
	for i, d := range ds {
		out[i] = DocumentRef{URI: d.uri, LanguageID: d.lang}
	}
	s.mu.Unlock()
	return out
}

// LastFocused returns when uri was last focused, if the State remembers it.
func (s *State) LastFocused(uri string) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.docs[uri]
	if !ok || d.focusSeq == 0 {
		return time.Time{}, false
	}
	return d.focusAt, true
}

// ring is a fixed-capacity queue that drops its oldest element when full.
type ring[T any] struct {
	buf      []T
	start, n int
}

func newRing[T any](capacity int) *ring[T] { return &ring[T]{buf: make([]T, capacity)} }

func (r *ring[T]) len() int { return r.n }

// at returns the i-th element, the oldest first.
func (r *ring[T]) at(i int) T { return r.buf[(r.start+i)%len(r.buf)] }

func (r *ring[T]) push(v T) {
	if r.n == len(r.buf) {
		r.buf[r.start] = v
		r.start = (r.start + 1) % len(r.buf)
		return
	}
	r.buf[(r.start+r.n)%len(r.buf)] = v
	r.n++
}

// pop removes the newest element.
func (r *ring[T]) pop() {
	if r.n == 0 {
		return
	}
	var zero T
	r.buf[(r.start+r.n-1)%len(r.buf)] = zero
	r.n--
}

// Visible returns the visible lines last reported for an open document, or nil when unknown.
func (s *State) Visible(uri string) *LineRange {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.docs[uri]
	if !ok || !d.open || !d.hasVisible {
		return nil
	}
	v := d.visible
	return &v
}
