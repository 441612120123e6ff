// Package nesagent is a small kit for writing ACP agents that offer Next Edit Suggestions: it speaks
// ACP on a pair of streams (initialize, nes/start, the document events, nes/suggest, nes/accept,
// nes/reject, nes/close, $/cancel_request), keeps a mirror of every open document with the user's
// recent edits grouped as a person would describe them, and asks an Engine for suggestions. Engines
// work on byte offsets into the mirror's text; the kit converts positions to and from the encoding
// it negotiated (utf-8 when the client offers it).
//
// The bridge's own agents (acp-lsp-bridge agent) are built on it; it is also a reference for
// agent authors.
package nesagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/document"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/translate"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/workspace"
)

// Engine produces suggestions for a request. It must return promptly when ctx ends (the client
// cancelled the request or closed the session).
type Engine interface {
	Suggest(ctx context.Context, req Request) ([]Suggestion, error)
}

// Request is what an engine gets for one nes/suggest.
type Request struct {
	URI        string
	LanguageID string
	Version    int
	Text       string // the document as the agent mirrors it
	Cursor     int    // byte offset of the cursor in Text
	Trigger    string // "automatic", "manual" or "diagnostic"
	// Recent are this document's recent edits, oldest first; the last one may still be growing
	// (the user is typing). At most MaxEdits are kept.
	Recent []Edit
	// Open are the other open documents, most recently edited first.
	Open []OpenDocument
	// Diagnostics are the problems the editor shows in this document, when the engine asked for
	// them (Options.Context.Diagnostics).
	Diagnostics []Diagnostic
	// Root is the local path of the workspace folder that holds the document (from nes/start), or
	// "" when none does: prompts name files relative to it.
	Root string
}

// Diagnostic is a problem the editor shows in the requested document.
type Diagnostic struct {
	Line     int    // 0-based line of its start
	Severity string // "error", "warning", "information" or "hint"
	Message  string
}

// OpenDocument is another document the client has open.
type OpenDocument struct {
	URI, LanguageID string
	Text            string
	// Recent are its recent edits, oldest first, as Request.Recent are the requested document's.
	Recent []Edit
	// Visit is the offset in Text where the user's cursor last was (the editor's
	// document/didFocus, or the last request in it), -1 when not known.
	Visit int
	// Saved says the document was saved (document/didSave) and not changed since.
	Saved bool
	m     *encoding.Mapper // Text's, for the positions of suggestions in it
}

// Edit is one edit as a person would describe it: keystrokes in one place are grouped. In the text
// as it is now, [Start, Start+len(New)) holds New, which replaced Old.
type Edit struct {
	Start    int
	Old, New string
	// Lines are the whole lines the edit touched, before and after it, and the offset in Text at
	// which those lines start now (for the last edit; for earlier ones, when they were made).
	OldLines, NewLines string
	LineStart          int
	// Seq orders edits across documents: a higher one began later.
	Seq uint64
}

// TextEdit replaces the bytes [Start, End) of the request's Text by NewText.
type TextEdit struct {
	Start, End int
	NewText    string
}

// Suggestion is one suggestion: an edit of the requested document or of another open one, or a
// jump to a place in one.
type Suggestion struct {
	// URI is the document the suggestion is for: "" (or the request's URI) for the requested one,
	// or one of Request.Open; the offsets below are in that document's text.
	URI   string
	Edits []TextEdit
	// Cursor, when set, is where the cursor should go after the edits, as a byte offset in the
	// text after them.
	Cursor *int
	// Jump, when set, makes the suggestion a jump to this byte offset (Edits and Cursor are
	// ignored). Jumps are sent only to a client that accepts them.
	Jump *int
	// Ref, when set, is the engine's own name for the suggestion: Feedback hears of it by Ref
	// rather than by the id the agent gave it.
	Ref string
	// Growing says the suggestion is what the model has written so far of its answer: a request
	// at the same text and cursor is answered with more of it (the answer's _meta
	// GrowingMetaKey).
	Growing bool
}

// MaxEdits bounds the edit history kept per document.
const MaxEdits = 16

// Feedback is implemented by engines that want to learn what happened to their suggestions: each
// is named by its Ref when the engine gave one (the last maxRefs are remembered), else by the
// agent's id.
type Feedback interface {
	Accepted(id string)
	Rejected(id, reason string)
}

// Watcher is implemented by engines that want to hear of each change of a document as it comes
// (to stop work for a text the user has typed past): the document's URI and its text after the
// change.
type Watcher interface {
	DocumentChanged(uri, text string)
}

// Forgetter is implemented by engines that keep something per document (a stream, a prefetch, an
// index): the document's URI once the client has closed it (document/didClose), after the agent
// has dropped its own mirror of it, for the engine to free all it keeps for it. It is told again
// when a request for the document that was in flight at the close has been answered (unless the
// client has opened the document again by then), for what the engine kept for that request
// meanwhile.
type Forgetter interface {
	DocumentClosed(uri string)
}

// Options configure an agent.
type Options struct {
	Name, Version string
	// Context asks the client for these nes/suggest context keys (none by default).
	Context *acp.NesContextCapabilities
	// Meta is sent as agentInfo._meta (what doctor shows of the agent).
	Meta map[string]any
	// Visits asks the client for document/didFocus and document/didSave, by which each
	// OpenDocument's Visit and Saved are known (none by default: the engine is told only of the
	// places it is asked about).
	Visits bool
}

type docState struct {
	languageID string
	version    int
	m          *encoding.Mapper
	edits      []Edit
	open       bool // last edit still growing
	seq        uint64
	// visit is where the user's cursor last was in it (document/didFocus, or a request), -1 when
	// not known; saved says it was saved (document/didSave) and not changed since.
	visit int
	saved bool
}

// Agent is one ACP connection served by an engine.
type Agent struct {
	engine Engine
	opts   Options

	mu      sync.Mutex
	enc     encoding.Kind
	jumps   bool // the client accepts jump suggestions
	docs    map[string]*docState
	roots   []string // the workspace folders' local paths (nes/start)
	seq     uint64
	next    int
	changed chan struct{}
	// refs are the engine's Refs of the last suggestions, by id, oldest first in refOrder.
	refs     map[string]string
	refOrder []string
}

// New makes an agent around an engine.
func New(engine Engine, opts Options) *Agent {
	return &Agent{engine: engine, opts: opts, enc: encoding.UTF16, docs: map[string]*docState{}, changed: make(chan struct{})}
}

// Serve speaks ACP on r (what the client writes) and w until r ends.
func (a *Agent) Serve(r io.Reader, w io.Writer) {
	conn := acp.NewConnection(a.handle, w, r)
	<-conn.Done()
}

func invalid(err error) *acp.RequestError {
	return acp.NewInvalidParams(map[string]any{"error": err.Error()})
}

func (a *Agent) handle(ctx context.Context, method string, params json.RawMessage) (any, *acp.RequestError) {
	switch method {
	case acp.AgentMethodInitialize:
		var p acp.InitializeRequest
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, invalid(err)
		}
		var offered []string
		for _, e := range p.ClientCapabilities.PositionEncodings {
			offered = append(offered, string(e))
		}
		enc := encoding.Negotiate(offered, []encoding.Kind{encoding.UTF8, encoding.UTF32, encoding.UTF16})
		a.mu.Lock()
		a.enc = enc
		a.jumps = p.ClientCapabilities.Nes != nil && p.ClientCapabilities.Nes.Jump != nil
		a.mu.Unlock()
		pe := acp.PositionEncodingKind(enc.String())
		return acp.InitializeResponse{
			ProtocolVersion: acp.ProtocolVersionNumber,
			AgentCapabilities: acp.AgentCapabilities{
				PositionEncoding: &pe,
				Nes: &acp.NesCapabilities{
					Events:  &acp.NesEventCapabilities{Document: a.documentEvents()},
					Context: a.opts.Context,
				},
			},
			AgentInfo:   &acp.Implementation{Name: a.opts.Name, Version: a.opts.Version, Meta: a.opts.Meta},
			AuthMethods: []acp.AuthMethod{},
		}, nil
	case acp.AgentMethodNesStart:
		var p acp.UnstableStartNesRequest
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, invalid(err)
		}
		var roots []string
		for _, f := range p.WorkspaceFolders {
			if r := uriToPath(f.Uri); r != "" {
				roots = append(roots, r)
			}
		}
		if len(roots) == 0 && p.WorkspaceUri != nil {
			if r := uriToPath(*p.WorkspaceUri); r != "" {
				roots = append(roots, r)
			}
		}
		a.mu.Lock()
		a.roots = roots
		a.mu.Unlock()
		return acp.UnstableStartNesResponse{SessionId: "nes-1"}, nil
	case acp.AgentMethodNesClose:
		return acp.UnstableCloseNesResponse{}, nil
	case acp.AgentMethodDocumentDidOpen:
		var p acp.UnstableDidOpenDocumentNotification
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, invalid(err)
		}
		a.mu.Lock()
		a.seq++
		a.docs[p.Uri] = &docState{languageID: p.LanguageId, version: p.Version, m: encoding.NewMapper(p.Text), seq: a.seq, visit: -1}
		a.signalLocked()
		a.mu.Unlock()
		return nil, nil
	case acp.AgentMethodDocumentDidChange:
		var p acp.UnstableDidChangeDocumentNotification
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, invalid(err)
		}
		if err := a.didChange(p); err != nil {
			return nil, err
		}
		if w, ok := a.engine.(Watcher); ok {
			a.mu.Lock()
			d, ok := a.docs[p.Uri]
			var text string
			if ok {
				text = d.m.Text()
			}
			a.mu.Unlock()
			if ok {
				w.DocumentChanged(p.Uri, text)
			}
		}
		return nil, nil
	case acp.AgentMethodDocumentDidClose:
		var p acp.UnstableDidCloseDocumentNotification
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, invalid(err)
		}
		a.mu.Lock()
		delete(a.docs, p.Uri)
		a.mu.Unlock()
		if f, ok := a.engine.(Forgetter); ok {
			f.DocumentClosed(p.Uri)
		}
		return nil, nil
	case acp.AgentMethodNesAccept:
		var p acp.UnstableAcceptNesNotification
		if json.Unmarshal(params, &p) == nil {
			if f, ok := a.engine.(Feedback); ok {
				f.Accepted(a.refOf(p.Id))
			}
		}
		return nil, nil
	case acp.AgentMethodNesReject:
		var p acp.UnstableRejectNesNotification
		if json.Unmarshal(params, &p) == nil {
			if f, ok := a.engine.(Feedback); ok {
				reason := ""
				if p.Reason != nil {
					reason = string(*p.Reason)
				}
				f.Rejected(a.refOf(p.Id), reason)
			}
		}
		return nil, nil
	case acp.AgentMethodDocumentDidSave:
		var p acp.UnstableDidSaveDocumentNotification
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, invalid(err)
		}
		a.mu.Lock()
		if d, ok := a.docs[p.Uri]; ok {
			d.saved = true
		}
		a.mu.Unlock()
		return nil, nil
	case acp.AgentMethodDocumentDidFocus:
		var p acp.UnstableDidFocusDocumentNotification
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, invalid(err)
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		if d, ok := a.docs[p.Uri]; ok {
			// A position the document's text no longer has (it changed since) is left out.
			if off, err := d.m.PositionOffset(encoding.Position{Line: p.Position.Line, Character: p.Position.Character}, a.enc); err == nil {
				d.visit = off
			}
		}
		return nil, nil
	case acp.AgentMethodNesSuggest:
		var p acp.UnstableSuggestNesRequest
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, invalid(err)
		}
		return a.suggest(ctx, p)
	}
	return nil, acp.NewMethodNotFound(method)
}

func (a *Agent) signalLocked() {
	close(a.changed)
	a.changed = make(chan struct{})
}

func (a *Agent) didChange(p acp.UnstableDidChangeDocumentNotification) *acp.RequestError {
	a.mu.Lock()
	defer a.mu.Unlock()
	d, ok := a.docs[p.Uri]
	if !ok {
		return invalid(fmt.Errorf("document/didChange for %s, which is not open", p.Uri))
	}
	changes := translate.ChangesFromACP(p.ContentChanges)
	m, applied, err := document.Apply(d.m, changes, a.enc)
	if err != nil {
		return invalid(err)
	}
	a.seq++
	for _, ap := range applied {
		d.record(ap, a.seq)
	}
	d.m, d.version = m, p.Version
	d.seq = a.seq
	d.saved = false
	if d.visit > len(m.Text()) {
		d.visit = len(m.Text())
	}
	a.signalLocked()
	return nil
}

// record adds one applied change to the document's edit history, grouping it with the growing
// edit when it touches it.
func (d *docState) record(ap document.Applied, seq uint64) {
	b := ap.Before // its Slice costs in proportion to the slice, Text to the document
	if ap.Full {
		d.edits, d.open = nil, false
		return
	}
	if n := len(d.edits); n > 0 && d.open {
		e := &d.edits[n-1]
		end := e.Start + len(e.New)
		switch {
		case ap.Start >= e.Start && ap.End <= end: // inside the growing edit
			e.New = e.New[:ap.Start-e.Start] + ap.Text + e.New[ap.End-e.Start:]
			return
		case ap.End == e.Start && ap.Start < e.Start: // just before it (backspace at its start)
			e.Old = b.Slice(ap.Start, ap.End) + e.Old
			e.New = ap.Text + e.New
			e.Start = ap.Start
			return
		case ap.Start == end && ap.End > end: // just after it (delete at its end)
			e.Old += b.Slice(ap.Start, ap.End)
			e.New += ap.Text
			return
		}
		d.closeEdit(b.Text())
	}
	d.edits = append(d.edits, Edit{Start: ap.Start, Old: b.Slice(ap.Start, ap.End), New: ap.Text, Seq: seq})
	if len(d.edits) > MaxEdits {
		d.edits = append(d.edits[:0:0], d.edits[len(d.edits)-MaxEdits:]...)
	}
	d.open = true
}

// RecentAfter is a document's edit history recent (as a Request has it, for the text text) once
// the user replaces [start, end) of text by newText, an edit numbered seq: grouped with the
// growing edit as the agent groups the edits it hears of. An engine that prefetches for the text
// a suggestion makes (as if it were accepted) gives its model the history the request at that
// text will have.
func RecentAfter(recent []Edit, text string, start, end int, newText string, seq uint64) []Edit {
	// The agent's last edit is always the growing one: only the next edit elsewhere closes it.
	d := &docState{edits: append([]Edit(nil), recent...), open: len(recent) > 0}
	d.record(document.Applied{Before: encoding.NewMapper(text), Start: start, End: end, Text: newText}, seq)
	return d.recent(text[:start] + newText + text[end:])
}

// closeEdit fixes the lines of the growing edit, in text (the text it lives in).
func (d *docState) closeEdit(text string) {
	e := &d.edits[len(d.edits)-1]
	e.OldLines, e.NewLines, e.LineStart = linesOf(text, e)
	d.open = false
}

// linesOf returns the whole lines an edit touched, before and after it, in text (where New stands).
func linesOf(text string, e *Edit) (oldLines, newLines string, lineStart int) {
	end := e.Start + len(e.New)
	if end > len(text) || e.Start > len(text) {
		return e.Old, e.New, e.Start
	}
	ls := lastLineBreak(text[:e.Start]) + 1
	le := end
	for le < len(text) && text[le] != '\n' && text[le] != '\r' {
		le++
	}
	prefix, suffix := text[ls:e.Start], text[end:le]
	return prefix + e.Old + suffix, text[ls:le], ls
}

func lastLineBreak(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '\n' || s[i] == '\r' {
			return i
		}
	}
	return -1
}

func (a *Agent) suggest(ctx context.Context, p acp.UnstableSuggestNesRequest) (any, *acp.RequestError) {
	d, enc, err := a.waitVersion(ctx, p.Uri, p.Version)
	if err != nil {
		return nil, invalid(err)
	}
	text := d.m.Text()
	cursor, err := d.m.PositionOffset(encoding.Position{Line: p.Position.Line, Character: p.Position.Character}, enc)
	if err != nil {
		return nil, invalid(fmt.Errorf("position: %w", err))
	}
	req := Request{URI: p.Uri, LanguageID: d.languageID, Version: d.version, Text: text, Cursor: cursor, Trigger: string(p.TriggerKind), Recent: d.recent(text)}
	req.Open = a.others(p.Uri)
	a.mu.Lock()
	if live, ok := a.docs[p.Uri]; ok && live.version == d.version {
		live.visit = cursor
	}
	a.mu.Unlock()
	req.Root = a.rootOf(p.Uri)
	if p.Context != nil {
		for _, dg := range p.Context.Diagnostics {
			if dg.Uri == "" || dg.Uri == p.Uri {
				req.Diagnostics = append(req.Diagnostics, Diagnostic{Line: dg.Range.Start.Line, Severity: string(dg.Severity), Message: dg.Message})
			}
		}
	}
	var sugs []Suggestion
	var quiet *Quiet
	if r, ok := a.engine.(Reasoned); ok {
		sugs, quiet, err = r.SuggestWithReason(ctx, req)
	} else {
		sugs, err = a.engine.Suggest(ctx, req)
	}
	if f, ok := a.engine.(Forgetter); ok && !a.isOpen(p.Uri) {
		// Closed while the engine worked: what it kept for this request goes too.
		f.DocumentClosed(p.Uri)
	}
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, acp.NewRequestCancelled(nil)
	case err == nil && len(sugs) == 0 && quiet != nil:
		// No suggestion, and why: an answer, not a failure.
		return acp.UnstableSuggestNesResponse{
			Suggestions: []acp.UnstableNesSuggestion{},
			Meta:        map[string]any{QuietMetaKey: map[string]any{"rule": quiet.Rule, "why": ErrorText(quiet.Why)}},
		}, nil
	case err != nil:
		return nil, engineError(err)
	}
	a.mu.Lock()
	jumps := a.jumps
	a.mu.Unlock()
	out := []acp.UnstableNesSuggestion{}
	for _, s := range sugs {
		uri, m, base := p.Uri, d.m, text
		if s.URI != "" && s.URI != p.Uri {
			uri, m = s.URI, nil
			for _, o := range req.Open {
				if o.URI == s.URI {
					m, base = o.m, o.Text
					break
				}
			}
			if m == nil {
				continue // not a document the client has open
			}
		}
		if s.Jump != nil {
			if !jumps {
				continue
			}
			pos, err := m.OffsetPosition(*s.Jump, enc)
			if err != nil {
				continue
			}
			out = append(out, acp.UnstableNesSuggestion{Jump: &acp.UnstableNesSuggestionJump{
				Id: a.newID(), Kind: "jump", Uri: uri, Position: acp.UnstablePosition{Line: pos.Line, Character: pos.Character},
			}})
			continue
		}
		edit := acp.UnstableNesSuggestionEdit{Kind: "edit", Uri: uri}
		ok := true
		for _, te := range s.Edits {
			r, err := m.OffsetsRange(te.Start, te.End, enc)
			if err != nil {
				ok = false
				break
			}
			edit.Edits = append(edit.Edits, acp.UnstableNesTextEdit{
				Range: acp.UnstableRange{
					Start: acp.UnstablePosition{Line: r.Start.Line, Character: r.Start.Character},
					End:   acp.UnstablePosition{Line: r.End.Line, Character: r.End.Character},
				},
				NewText: te.NewText,
			})
		}
		if !ok || len(edit.Edits) == 0 {
			continue
		}
		if s.Cursor != nil {
			after := encoding.NewMapper(applyCheckedEdits(base, s.Edits))
			if pos, err := after.OffsetPosition(*s.Cursor, enc); err == nil {
				edit.CursorPosition = &acp.UnstablePosition{Line: pos.Line, Character: pos.Character}
			}
		}
		edit.Id = a.newID()
		a.remember(edit.Id, s.Ref)
		out = append(out, acp.UnstableNesSuggestion{Edit: &edit})
	}
	resp := acp.UnstableSuggestNesResponse{Suggestions: out}
	for _, s := range sugs {
		if s.Growing && len(out) > 0 {
			resp.Meta = map[string]any{GrowingMetaKey: true}
		}
	}
	return resp, nil
}

// engineError is the error answer for an engine's failure: its text, bounded and cleaned, and for
// a failure of the service behind it, the reason and the pause it asked for.
func engineError(err error) *acp.RequestError {
	data := map[string]any{"error": ErrorText(err.Error())}
	var be *BackendError
	if errors.As(err, &be) && be.Reason != "" {
		data["reason"] = be.Reason
		if be.RetryAfter > 0 {
			data["retryAfterMs"] = be.RetryAfter.Milliseconds()
		}
	}
	return acp.NewInternalError(data)
}

// maxRefs is how many of the engine's Refs the agent remembers for Feedback.
const maxRefs = 64

// remember keeps the engine's Ref of the suggestion with this id, if it gave one.
func (a *Agent) remember(id, ref string) {
	if ref == "" {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.refs == nil {
		a.refs = map[string]string{}
	}
	a.refs[id] = ref
	a.refOrder = append(a.refOrder, id)
	if len(a.refOrder) > maxRefs {
		delete(a.refs, a.refOrder[0])
		a.refOrder = a.refOrder[1:]
	}
}

// refOf is the engine's Ref of the suggestion with this id, or the id.
func (a *Agent) refOf(id string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if r, ok := a.refs[id]; ok {
		return r
	}
	return id
}

// newID returns a new suggestion id.
func (a *Agent) newID() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.next++
	return fmt.Sprintf("%s-%d", a.opts.Name, a.next)
}

// applyCheckedEdits applies non-overlapping edits of text, in any order. It is given only edits
// that each mapped to a range of the document (Mapper.OffsetsRange), and it trusts them: edits
// that overlap make a wrong text or a panic (translate.Merge). The model package's applyEdits
// differs on purpose: it makes an engine's edits on a request's text, unchecked, skips an edit
// out of the text or backwards, and makes overlapping ones from the last to the first; it cannot
// be this one without changing what either does with such edits.
func applyCheckedEdits(text string, edits []TextEdit) string {
	spans := make([]translate.Span, len(edits))
	for i, e := range edits {
		spans[i] = translate.Span{Start: e.Start, End: e.End, Text: e.NewText}
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].Start < spans[j].Start })
	return translate.ApplySpans(text, spans)
}

// waitVersion waits, briefly, until the document has reached version (the ACP SDK runs a request as
// soon as it arrives, ahead of notifications still queued before it) and returns a copy of its
// state taken under the lock.
func (a *Agent) waitVersion(ctx context.Context, uri string, version int) (*docState, encoding.Kind, error) {
	deadline := time.After(2 * time.Second)
	for {
		a.mu.Lock()
		d, ok := a.docs[uri]
		enc, ch := a.enc, a.changed
		var snap docState
		if ok {
			snap = *d
			snap.edits = append([]Edit(nil), d.edits...)
		}
		a.mu.Unlock()
		if ok && snap.version >= version {
			return &snap, enc, nil
		}
		select {
		case <-ch:
			continue
		case <-ctx.Done():
		case <-deadline:
		}
		if ok {
			return &snap, enc, nil
		}
		return nil, enc, fmt.Errorf("%s is not open", uri)
	}
}

// isOpen reports whether the client has the document open.
func (a *Agent) isOpen(uri string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	_, ok := a.docs[uri]
	return ok
}

// others lists the other open documents, most recently changed first.
func (a *Agent) others(uri string) []OpenDocument {
	a.mu.Lock()
	defer a.mu.Unlock()
	type kv struct {
		uri string
		d   *docState
	}
	var list []kv
	for u, d := range a.docs {
		if u != uri {
			list = append(list, kv{u, d})
		}
	}
	for i := 1; i < len(list); i++ {
		for j := i; j > 0 && list[j].d.seq > list[j-1].d.seq; j-- {
			list[j], list[j-1] = list[j-1], list[j]
		}
	}
	out := make([]OpenDocument, len(list))
	for i, x := range list {
		text := x.d.m.Text()
		out[i] = OpenDocument{URI: x.uri, LanguageID: x.d.languageID, Text: text, Recent: x.d.recent(text), Visit: x.d.visit, Saved: x.d.saved, m: x.d.m}
	}
	return out
}

// recent is a copy of the document's edits, the growing one with its lines as they stand in
// text (the document's text now). The caller holds the document still (a.mu, or a snapshot).
func (d *docState) recent(text string) []Edit {
	edits := append([]Edit(nil), d.edits...)
	if n := len(edits); n > 0 && d.open {
		e := &edits[n-1]
		e.OldLines, e.NewLines, e.LineStart = linesOf(text, e)
	}
	return edits
}

// rootOf is the local path of the workspace folder that holds uri (the innermost), or "".
func (a *Agent) rootOf(uri string) string {
	a.mu.Lock()
	roots := a.roots
	a.mu.Unlock()
	p := uriToPath(uri)
	best := ""
	for _, r := range roots {
		if within(p, r) && len(r) > len(best) {
			best = r
		}
	}
	return best
}

// uriToPath is the host's path of a file: URI, or "".
func uriToPath(u string) string {
	if p, ok := workspace.Host.URIToPath(u); ok {
		return p
	}
	return ""
}

// within reports whether the path p lies in the folder root, as the platform compares paths.
func within(p, root string) bool { return p != "" && workspace.Host.Within(p, root) }

// documentEvents are the document events the agent asks for: didFocus and didSave too with
// Options.Visits.
func (a *Agent) documentEvents() *acp.NesDocumentEventCapabilities {
	ev := &acp.NesDocumentEventCapabilities{
		DidOpen:   &acp.NesDocumentDidOpenCapabilities{},
		DidChange: &acp.NesDocumentDidChangeCapabilities{SyncKind: acp.TextDocumentSyncKindIncremental},
		DidClose:  &acp.NesDocumentDidCloseCapabilities{},
	}
	if a.opts.Visits {
		ev.DidFocus = &acp.NesDocumentDidFocusCapabilities{}
		ev.DidSave = &acp.NesDocumentDidSaveCapabilities{}
	}
	return ev
}
