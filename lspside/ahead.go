package lspside

import (
	"context"
	"sync"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/document"
)

// Asking ahead: once a document has been still for AskAhead after a change, the bridge asks the
// agent for a suggestion at the end of that change itself, before the editor asks (Neovim waits
// 200 ms of its own before it asks; VS Code and Helix have waits too). The editor's request at
// that place then joins it: it waits for that answer, or takes it when it has come, rather than
// asking again. A change cancels it, as it cancels any request for an older text. Agents billed
// per request (asked through prompts, or saying so: agentInfo._meta "acp-lsp-bridge/billed") are
// not asked ahead unless AskAheadBilled is set.

// SuggestedAskAhead is how long a document should be still before the bridge asks ahead: longer
// than the time between two keys of a typist at 8 keys a second (125 ms), so that typing starts no
// request between keys, and shorter than the editors' own waits before they ask. Asking ahead is
// off by default for now: with it on, some editors' surfaces (lsp-mode's completion, Neovim's
// partial accept) took an answer asked ahead at the change for their own request.
const SuggestedAskAhead = 150 * time.Millisecond

// aheads are the requests asked ahead, one per document at most.
type aheads struct {
	mu    sync.Mutex
	byURI map[string]*ahead
}

// ahead is one request asked ahead: scheduled (timer), then in flight until done is closed.
type ahead struct {
	version int
	cursor  int // byte offset in the document's text at version
	timer   *time.Timer
	cancel  context.CancelFunc
	done    chan struct{}
	started bool // the timer fired: the request is in flight or answered (aheads.mu)
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
		a.started = true
		as.mu.Unlock()
		ask(ctx, a)
	})
	as.byURI[uri] = a
}

// joinable is the request asked ahead for uri at this version and cursor, once it was sent. One
// still waiting for its time is dropped: the editor's own request goes now instead.
func (as *aheads) joinable(uri string, version, cursor int) *ahead {
	as.mu.Lock()
	defer as.mu.Unlock()
	a := as.byURI[uri]
	switch {
	case a == nil:
		return nil
	case !a.started:
		a.stop()
		delete(as.byURI, uri)
		return nil
	case a.version == version && a.cursor == cursor:
		return a
	}
	return nil
}

// closed forgets uri.
func (as *aheads) closed(uri string) { as.changed(uri) }

// askAheadAfter schedules, after a change of snap's document ending at cursor, a request asked
// ahead, when the bridge asks ahead for this agent and document.
func (s *Server) askAheadAfter(snap *document.Snapshot, cursor int) {
	wait := s.cfg.AskAhead
	if wait <= 0 {
		return
	}
	agent := s.currentAgent()
	if agent == nil || (agent.Prompted() || agent.Billed()) && !s.cfg.AskAheadBilled {
		return
	}
	uri := snap.URI
	if !s.reqs.automatic(uri) || s.isWithheld(uri) {
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
		if _, err := s.requestSuggestions(ctx, suggestRequest{snap: cur, cursor: a.cursor, trigger: acp.UnstableNesTriggerKindAutomatic}); err != nil {
			s.log.Debug().Str("uri", uri).Err(err).Msg("asking ahead")
		}
	})
}

// joinAhead waits, for an editor's automatic request at snap and cursor, for the request asked
// ahead there, if any, and reports whether there was one: its answer is then among the
// document's suggestions for this version and position.
func (s *Server) joinAhead(ctx context.Context, snap *document.Snapshot, cursor int) bool {
	a := s.ahead.joinable(snap.URI, snap.Version, cursor)
	if a == nil {
		return false
	}
	s.log.Debug().Str("uri", snap.URI).Int("version", snap.Version).Msg("the editor's request joins the one asked ahead")
	select {
	case <-a.done:
		return true
	case <-ctx.Done():
		return false
	}
}
