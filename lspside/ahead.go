package lspside

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	acp "github.com/coder/acp-go-sdk"
	"go.lsp.dev/protocol"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/document"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/translate"
)

// Asking ahead: once a document has been still for AskAhead after a change, the bridge asks the
// agent for a suggestion at the end of that change itself, before the editor asks (Neovim waits
// 200 ms of its own before it asks; VS Code and Helix have waits too). The editor's request at
// that place then joins it: it waits for that answer, or takes it when it has come, rather than
// asking again. A change cancels it, as it cancels any request for an older text. Agents billed
// per request (asked through prompts, or saying so: agentInfo._meta "acp-lsp-bridge/billed") are
// not asked ahead unless AskAheadBilled is set.

// SuggestedAskAhead is how long a document should be still before the bridge asks ahead (the
// command's default): longer than the time between two keys of a typist at 8 keys a second
// (125 ms), so that typing starts no request between keys, and shorter than the editors' own
// waits before they ask.
const SuggestedAskAhead = 150 * time.Millisecond

// aheads are the requests asked ahead, one per document at most.
type aheads struct {
	mu    sync.Mutex
	byURI map[string]*ahead
	// idle are the documents the editor says it does not ask about while they change
	// (acp-lsp-bridge/asking): Neovim outside insert mode.
	idle map[string]bool
}

// asking records whether the editor asks about uri while it changes.
func (as *aheads) asking(uri string, automatic bool) {
	as.mu.Lock()
	defer as.mu.Unlock()
	if as.idle == nil {
		as.idle = map[string]bool{}
	}
	if automatic {
		delete(as.idle, uri)
	} else {
		as.idle[uri] = true
	}
}

// editorIdle reports whether the editor said it does not ask about uri while it changes.
func (as *aheads) editorIdle(uri string) bool {
	as.mu.Lock()
	defer as.mu.Unlock()
	return as.idle[uri]
}

// bridgeAsking handles acp-lsp-bridge/asking.
func (s *Server) bridgeAsking(raw json.RawMessage) error {
	var p struct {
		TextDocument struct {
			URI string `json:"uri"`
		} `json:"textDocument"`
		Automatic *bool `json:"automatic"`
	}
	if err := json.Unmarshal(raw, &p); err != nil || p.TextDocument.URI == "" || p.Automatic == nil {
		return fmt.Errorf("%s: want {textDocument: {uri}, automatic: bool}", NotifyAsking)
	}
	s.ahead.asking(p.TextDocument.URI, *p.Automatic)
	if !*p.Automatic {
		s.ahead.changed(p.TextDocument.URI) // what was asked ahead would not be taken
	}
	return nil
}

// ahead is one request asked ahead: scheduled (timer), then in flight until done is closed.
type ahead struct {
	version int
	cursor  int // byte offset in the document's text at version
	timer   *time.Timer
	cancel  context.CancelFunc
	done    chan struct{}
	started bool        // the timer fired: the request is in flight or answered (aheads.mu)
	joined  atomic.Bool // an editor's request joined it: the editor needs no telling
	// answered: the agent answered it (before done is closed); one cancelled, or that never
	// reached the agent, was not.
	answered atomic.Bool
}

// stop ends a request asked ahead, scheduled or in flight.
func (a *ahead) stop() {
	a.timer.Stop()
	if a.cancel != nil {
		a.cancel()
	}
}

// changed cancels what was asked ahead for uri: its text changed.
func (as *aheads) changed(uri string) {
	as.mu.Lock()
	defer as.mu.Unlock()
	if a := as.byURI[uri]; a != nil {
		a.stop()
		delete(as.byURI, uri)
	}
}

// schedule asks ahead for uri at version and cursor after wait, with ask.
func (as *aheads) schedule(uri string, version, cursor int, wait time.Duration, ask func(ctx context.Context, a *ahead)) {
	as.mu.Lock()
	defer as.mu.Unlock()
	if as.byURI == nil {
		as.byURI = map[string]*ahead{}
	}
	if old := as.byURI[uri]; old != nil {
		old.stop()
	}
	a := &ahead{version: version, cursor: cursor, done: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	a.cancel = cancel
	a.timer = time.AfterFunc(wait, func() {
		as.mu.Lock()
		if as.byURI[uri] != a {
			// Ended as its time came (a change, the editor's own request): the timer had
			// fired already, so Stop could not hold it back.
			as.mu.Unlock()
			close(a.done)
			return
		}
		a.started = true
		as.mu.Unlock()
		ask(ctx, a)
	})
	as.byURI[uri] = a
}

// joinable is, for an editor's request at uri, version and cursor, the request asked ahead there,
// once it was sent (anywhere: at any place of that text, for a surface that shows the suggestion
// nearest the cursor anywhere); the editor's request joins it when automatic. Any other request asked ahead
// for uri ends: one still waiting for its time (the editor's own request goes now instead), one for
// another place or text, and any when the editor asks by hand. Its answer would otherwise come
// after the editor's and replace what the editor was shown.
func (as *aheads) joinable(uri string, version, cursor int, automatic, anywhere bool) *ahead {
	as.mu.Lock()
	defer as.mu.Unlock()
	a := as.byURI[uri]
	if a == nil {
		return nil
	}
	if automatic && a.started && a.version == version && (anywhere || a.cursor == cursor) {
		return a
	}
	a.stop()
	delete(as.byURI, uri)
	return nil
}

// closed forgets uri.
func (as *aheads) closed(uri string) {
	as.changed(uri)
	as.mu.Lock()
	delete(as.idle, uri)
	as.mu.Unlock()
}

// askAheadAfter schedules, after a change of snap's document ending at cursor, a request asked
// ahead, when the bridge asks ahead for this agent and document. A change that completed a
// suggestion (the user accepted it) is asked after at once: it is no keystroke that another may
// follow, and the next suggestion is often ready (the rest of the same answer, or one the agent
// prepared for the accept).
func (s *Server) askAheadAfter(snap *document.Snapshot, cursor int, accepted bool) {
	wait := s.cfg.AskAhead
	if wait <= 0 {
		return
	}
	if accepted {
		wait = 0
	}
	agent := s.currentAgent()
	if agent == nil || (agent.Prompted() || agent.Billed()) && !s.cfg.AskAheadBilled {
		return
	}
	uri := snap.URI
	if !s.editorAsksItself.Load() || s.ahead.editorIdle(uri) || !s.reqs.automatic(uri) || s.isWithheld(uri) {
		// An editor that asks only when the user does (a code action menu), or not now (Neovim
		// outside insert mode), would never take it.
		return
	}
	if len(s.typedThrough(snap, cursor)) > 0 {
		// The user types (or takes a word or a line of) a suggestion shown: the rest of it is the
		// answer (typeThrough), and a new one would replace it.
		return
	}
	// A delay longer than the ask-ahead's: the request waits the rest (untilStill).
	s.ahead.schedule(uri, snap.Version, cursor, wait, func(ctx context.Context, a *ahead) {
		defer close(a.done)
		cur, ok := s.docs.Get(uri)
		if !ok || cur.Version != a.version {
			return
		}
		s.log.Debug().Str("uri", uri).Int("version", a.version).Msg("asking ahead: the document is still")
		lives, err := s.requestSuggestions(ctx, suggestRequest{snap: cur, cursor: a.cursor, trigger: acp.UnstableNesTriggerKindAutomatic, ahead: true, answered: &a.answered})
		if err != nil {
			s.log.Debug().Str("uri", uri).Err(err).Msg("asking ahead")
			return
		}
		if len(lives) > 0 && ctx.Err() == nil {
			s.suggestionReady(cur, a)
		}
	})
}

// NotifySuggestionReady is the bridge's notification that a suggestion asked ahead is ready
// (SuggestionReady), sent to an editor that asked for it (initializationOptions.suggestionReady)
// and has not asked for it yet: it can ask for inline completion at that place now, rather than
// after its own wait, and takes the answer at once.
const NotifySuggestionReady = "acp-lsp-bridge/suggestionReady"

// SuggestionReady is NotifySuggestionReady's params: the document, its version and the place the
// suggestion was asked for, in the editor's encoding.
type SuggestionReady struct {
	TextDocument struct {
		URI     string `json:"uri"`
		Version int    `json:"version"`
	} `json:"textDocument"`
	Position protocol.Position `json:"position"`
}

// suggestionReady tells the editor that what was asked ahead in snap is answered, when it asked to
// hear it and no request of its own has joined it.
func (s *Server) suggestionReady(snap *document.Snapshot, a *ahead) {
	if a.joined.Load() {
		return
	}
	s.tellReady(snap, a.cursor)
}

// tellReady tells the editor, when it asked to hear it, that a suggestion for snap at cursor is
// ready (or has grown: growing.go).
func (s *Server) tellReady(snap *document.Snapshot, cursor int) {
	o := s.session().init.InitializationOptions
	if o == nil || !o.SuggestionReady {
		return
	}
	pos, err := snap.Mapper.OffsetPosition(cursor, s.editorEncoding())
	if err != nil {
		return
	}
	var p SuggestionReady
	p.TextDocument.URI, p.TextDocument.Version, p.Position = snap.URI, snap.Version, translate.PositionToLSP(pos)
	s.log.Debug().Str("uri", snap.URI).Int("version", snap.Version).Msg(NotifySuggestionReady)
	if err := s.conn.Notify(context.Background(), NotifySuggestionReady, p); err != nil {
		s.log.Debug().Err(err).Msg(NotifySuggestionReady)
	}
}

// joinAhead waits, for an editor's automatic request at snap and cursor, for the request asked
// ahead there, if any, and reports whether there was one: its answer is then among the
// document's suggestions for this version and position.
func (s *Server) joinAhead(ctx context.Context, snap *document.Snapshot, cursor int, automatic, anywhere bool) bool {
	if automatic {
		s.editorAsksItself.Store(true)
	}
	a := s.ahead.joinable(snap.URI, snap.Version, cursor, automatic, anywhere)
	if a == nil {
		return false
	}
	a.joined.Store(true)
	s.log.Debug().Str("uri", snap.URI).Int("version", snap.Version).Msg("the editor's request joins the one asked ahead")
	select {
	case <-a.done:
		if !a.answered.Load() {
			// Ended without the agent's answer (cancelled by another request, or never sent):
			// the editor's request asks anew rather than show nothing.
			s.log.Debug().Str("uri", snap.URI).Int("version", snap.Version).Msg("the request asked ahead ended without an answer: the editor's request asks anew")
			return false
		}
		return true
	case <-ctx.Done():
		return false
	}
}
