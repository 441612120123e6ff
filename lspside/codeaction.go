package lspside

import (
	"context"
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	acp "github.com/coder/acp-go-sdk"
	"go.lsp.dev/jsonrpc2"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/translate"
)

// nearLines is how far, in lines, an edit may lie from the requested range and still be offered
// as a code action there.
const nearLines = 3

type lspDiagnostic struct {
	Range    lspRange `json:"range"`
	Severity int      `json:"severity"`
	Message  string   `json:"message"`
}

// codeAction offers every live suggestion of the document near the requested range as a code
// action, asking the agent first when the document has none for its current version. Diagnostics in
// the request make it a "diagnostic" trigger.
func (s *Server) codeAction(ctx context.Context, req *jsonrpc2.Request) (any, error) {
	var p struct {
		TextDocument struct {
			URI string `json:"uri"`
		} `json:"textDocument"`
		Range   lspRange `json:"range"`
		Context struct {
			Diagnostics []lspDiagnostic `json:"diagnostics"`
			Only        []string        `json:"only"`
			TriggerKind int             `json:"triggerKind"`
		} `json:"context"`
	}
	if err := json.Unmarshal(req.Params(), &p); err != nil {
		return nil, invalidParams("textDocument/codeAction: %v", err)
	}
	snap, ok := s.docs.Get(p.TextDocument.URI)
	if !ok {
		if s.secret.has(p.TextDocument.URI) {
			s.reqs.enter(p.TextDocument.URI)
			return []any{}, nil // kept from the agent: nothing to offer
		}
		return nil, invalidParams("textDocument/codeAction: document not open: %s", p.TextDocument.URI)
	}
	editor := s.editorEncoding()
	start, end, err := snap.Mapper.RangeOffsets(p.Range.toRange(), editor)
	if err != nil {
		return nil, invalidParams("textDocument/codeAction: range in %s: %v", snap.URI, err)
	}
	s.requestAt(jsonrpc2.DetachContext(ctx), snap, start)
	documentChanges := s.clientSupports(func(c clientCaps) bool { return c.documentChanges })
	rctx, done := s.track(req.ID())
	s.releaseReader(ctx)
	defer done()

	lives := s.sugs.forDocument(snap.URI, snap.Version)
	if len(lives) > 0 && len(p.Context.Diagnostics) > 0 && s.agentWantsDiagnostics() && !s.asks.answeredWith(snap.URI, snap.Version, p.Context.Diagnostics) {
		// What is live for this text was asked without the diagnostics this menu is opened on
		// (a new error's quick fix): asked anew with them, for an agent that reads them.
		lives = nil
	}
	if len(lives) == 0 {
		trig := acp.UnstableNesTriggerKindAutomatic
		if p.Context.TriggerKind == 1 {
			trig = acp.UnstableNesTriggerKindManual
		}
		if len(p.Context.Diagnostics) > 0 {
			trig = acp.UnstableNesTriggerKindDiagnostic
		}
		// Every code action request is the user's but the editor's automatic ones (triggerKind 2,
		// such as VS Code's light bulb on every cursor move).
		explicit := p.Context.TriggerKind != 2
		lives, err = s.suggestWithin(rctx, suggestRequest{snap: snap, cursor: start, trigger: trig, diagnostics: p.Context.Diagnostics, explicit: explicit}, s.cfg.CodeActionWait)
		if err != nil {
			return nil, err
		}
	}
	// The user may have come here from the file where the agent proposed it (by its jump).
	lives = append(lives, s.sugs.editing(snap.URI, snap.Version)...)
	kind := "refactor.rewrite"
	if len(p.Context.Diagnostics) > 0 {
		kind = "quickfix"
	}
	if !kindWanted(kind, p.Context.Only) {
		return []translate.CodeAction{}, nil
	}
	firstLine, lastLine := snap.Mapper.LineOf(start), snap.Mapper.LineOf(end)
	type ranked struct {
		action translate.CodeAction
		dist   int
	}
	var found []ranked
	for _, l := range lives {
		if l.inlineOnly.Load() {
			continue // replaced by more of its answer, which is offered
		}
		dist := 0
		if l.repl != nil && l.kind == "edit" {
			a, b := l.base.Mapper.LineOf(l.repl.Start), l.base.Mapper.LineOf(l.repl.End)
			switch {
			case b < firstLine:
				dist = firstLine - b
			case a > lastLine:
				dist = a - lastLine
			}
			if dist > nearLines {
				continue
			}
		}
		cmd := acceptCommand(l.id)
		action := translate.CodeAction{Title: l.label(), Kind: kind, Command: &cmd}
		if len(l.files) > 0 {
			we, err := translate.ToWorkspaceEdit(l.files, editor, documentChanges)
			if err != nil {
				s.log.Warn().Str("id", l.id).Err(err).Msg("cannot offer the suggestion as a code action")
				continue
			}
			action.Edit = we
		}
		found = append(found, ranked{action, dist})
	}
	sort.SliceStable(found, func(i, j int) bool { return found[i].dist < found[j].dist })
	actions := make([]translate.CodeAction, len(found))
	for i, f := range found {
		actions[i] = f.action
	}
	if len(actions) > 0 {
		actions[0].IsPreferred = true
	}
	return actions, nil
}

// DefaultCodeActionWait is Config.CodeActionWait's default: well under a second, so that a menu
// that waits for every language server opens at once.
const DefaultCodeActionWait = 500 * time.Millisecond

// suggestWithin asks the agent as requestSuggestions does, but waits for its answer at most wait:
// after it, it returns nothing, and the request goes on by itself (until its own timeout, or a
// newer request for the document supersedes it), its answer live for the next request and the
// inline surfaces. A code action request that comes while one for the same version of the
// document and the same diagnostics is still with the agent waits for that one instead of asking
// again (a menu opened twice, a light bulb on each cursor move). The editor cancelling the
// request before the wait ends cancels the agent's too, unless another request joined it.
func (s *Server) suggestWithin(ctx context.Context, req suggestRequest, wait time.Duration) ([]*live, error) {
	bctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	p, started := s.asks.join(req.snap.URI, req.snap.Version, req.diagnostics, cancel)
	if !started {
		cancel()
	} else {
		go func() {
			defer cancel()
			lives, err := s.requestSuggestions(bctx, req)
			s.asks.finish(req.snap.URI, p, lives, err)
		}()
	}
	defer s.asks.leave(p)
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-p.done:
		if !started {
			// Its answer was registered for the request that asked; what is live now is it.
			return s.sugs.forDocument(req.snap.URI, req.snap.Version), p.err
		}
		return p.lives, p.err
	case <-ctx.Done():
		s.asks.abandon(p)
		return nil, errCancelled
	case <-t.C:
		s.log.Debug().Str("uri", req.snap.URI).Dur("wait", wait).Msg("code action answered without the agent's answer, which will stay live for the next request")
		return nil, nil
	}
}

// pendingAsk is a code action's nes/suggest still with the agent: the requests waiting for it, and
// its answer once done is closed.
type pendingAsk struct {
	version     int
	diagnostics []lspDiagnostic // the context it asked with
	waiting     int
	cancel      context.CancelFunc
	done        chan struct{}
	lives       []*live
	err         error
}

// pendingAsks are the code actions' nes/suggest in flight, by document, and what the last one
// answered was asked with.
type pendingAsks struct {
	mu       sync.Mutex
	m        map[string]*pendingAsk
	answered map[string]*pendingAsk
}

// answeredWith reports whether the last code action's nes/suggest answered for uri was asked at
// version with these diagnostics.
func (a *pendingAsks) answeredWith(uri string, version int, diagnostics []lspDiagnostic) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	p := a.answered[uri]
	return p != nil && p.version == version && slices.Equal(p.diagnostics, diagnostics)
}

// agentWantsDiagnostics reports whether the agent asked for the diagnostics in the context of
// nes/suggest: only then does asking with others change its answer.
func (s *Server) agentWantsDiagnostics() bool {
	agent := s.currentAgent()
	return agent != nil && agent.Context().Diagnostics
}

// join returns the ask in flight for uri at version with these diagnostics, or a new one that
// cancel cancels (started: the caller asks).
//
// A request with other diagnostics does not join: the agent would answer about those it was
// asked with, not the ones the user opened this menu on (a new error's quick fix). It asks anew,
// and its nes/suggest supersedes the one in flight (requestSuggestions: one per document, the
// newest wins), as any newer request for the document does; the older menu gets what its ask
// got before it was superseded, most often nothing.
func (a *pendingAsks) join(uri string, version int, diagnostics []lspDiagnostic, cancel context.CancelFunc) (p *pendingAsk, started bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.m == nil {
		a.m = map[string]*pendingAsk{}
	}
	if p, ok := a.m[uri]; ok && p.version == version && slices.Equal(p.diagnostics, diagnostics) {
		p.waiting++
		return p, false
	}
	p = &pendingAsk{version: version, diagnostics: diagnostics, waiting: 1, cancel: cancel, done: make(chan struct{})}
	a.m[uri] = p
	return p, true
}

// leave is a request no longer waiting for p. The ask goes on: its answer serves the next request.
func (a *pendingAsks) leave(p *pendingAsk) {
	a.mu.Lock()
	defer a.mu.Unlock()
	p.waiting--
}

// abandon is the editor cancelling a request waiting for p: when no other request waits for it,
// the agent's request is cancelled too.
func (a *pendingAsks) abandon(p *pendingAsk) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if p.waiting == 1 {
		p.cancel()
	}
}

// finish records p's answer and forgets it, but for what it was asked with.
func (a *pendingAsks) finish(uri string, p *pendingAsk, lives []*live, err error) {
	a.mu.Lock()
	p.lives, p.err = lives, err
	if a.m[uri] == p {
		delete(a.m, uri)
	}
	if err == nil {
		if a.answered == nil {
			a.answered = map[string]*pendingAsk{}
		}
		a.answered[uri] = p
	}
	a.mu.Unlock()
	close(p.done)
}

// kindWanted applies CodeActionContext.only: kinds are hierarchical ("refactor" covers
// "refactor.rewrite").
func kindWanted(kind string, only []string) bool {
	if len(only) == 0 {
		return true
	}
	for _, o := range only {
		if kind == o || strings.HasPrefix(kind, o+".") {
			return true
		}
	}
	return false
}
