package model

import (
	"context"
	"errors"
	"sync"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent"
)

// Prefetching at the accept (issue 37, item 6). Once the engine has answered a suggestion for a
// document at the accept of the one before (engine.answered: a request at the text the last
// suggestion makes, or one answered by what was prefetched or by the rest of a streamed answer;
// the first suggestion after typing is not prefetched from), and nothing more of the same answer
// is to come (follows), it asks the model at once
// for the next suggestion as if that one had been accepted: the document with its edits made,
// the cursor where it puts it, and the edit history with it as the user's latest edit, grouped as
// the agent will group it (nesagent.RecentAfter). When the next request for the document comes at
// exactly that text, it is answered with that answer, or waits for it, without asking the model
// again; any other change of the document, or a request at any other text, cancels it and drops
// it. One per document at most, and only while no other request to the model is in flight for it
// (generations.start with idle): the model is otherwise idle, and a request the user waits for
// always comes first.
//
// It is asked when the suggestion is answered, not when it is shown: ACP's NES tells an agent of
// accepts and rejects, never that a suggestion is shown. The bridge shows an answer unless the
// document has moved past it, and the agent hears of that move (DocumentChanged), which drops
// what was prefetched; a suggestion the user dismisses is followed by typing, which does too.
//
// A service that bills each request (a hosted format, FIM at a hosted service, a coding agent
// asked through prompts) is not prefetched from unless Config.PrefetchBilled says so: the prefetch
// is billed whether or not the suggestion is accepted. It is on with Config.Prefetch
// (the agent command's default; --no-prefetch turns it off).

// errBusy is what a prefetch ends with when another request to the model was in flight for the
// document: it gives way.
var errBusy = errors.New("model: a request for the document is in flight")

// prefetches are the requests for the next suggestion made ahead, one per document at most.
type prefetches struct {
	mu    sync.Mutex
	byURI map[string]*prefetch
}

// prefetch is one prefetch, in flight until done is closed, then its answer.
type prefetch struct {
	expect string // the document once the suggestion is accepted: the request's text
	cancel context.CancelFunc
	done   chan struct{}
	sugs   []nesagent.Suggestion
	quiet  *nesagent.Quiet
	err    error
	// cancelled says it ended because it was cancelled or gave way: the request at expect
	// asks anew.
	cancelled bool
}

// prefetchOn reports whether the engine prefetches at the accept.
func (e *engine) prefetchOn() bool {
	if !e.cfg.Prefetch {
		return false
	}
	_, local := e.c.(*httpCompleter) // another Completer: a coding agent, billed
	return e.cfg.PrefetchBilled || local && !e.Billed()
}

// prefetchNext prefetches for the suggestion after sugs, the answer to req (one edit of req's
// document), as if it were accepted: at once, or, when the rest of a streamed answer may still
// follow it, once that answer has ended with nothing more. ctx is req's: a request cancelled
// meanwhile (the bridge cancels a request whose document changed) asks nothing ahead.
func (e *engine) prefetchNext(ctx context.Context, req nesagent.Request, sugs []nesagent.Suggestion) {
	if len(sugs) != 1 || !e.prefetchOn() {
		return
	}
	s := sugs[0]
	if s.Jump != nil || len(s.Edits) == 0 || s.URI != "" && s.URI != req.URI {
		return
	}
	next := acceptedRequest(req, s)
	if e.follows.after(req.URI, next.Text, func(lost func() bool) { e.startPrefetch(next, lost) }) {
		return
	}
	e.startPrefetch(next, func() bool { return ctx.Err() != nil })
}

// startPrefetch starts the prefetch at req, unless stale, asked once it is registered
// (a change heard after that drops it), says the document has moved on.
func (e *engine) startPrefetch(req nesagent.Request, stale func() bool) {
	ctx, cancel := context.WithCancel(context.Background())
	p := &prefetch{expect: req.Text, cancel: cancel, done: make(chan struct{})}
	e.prefetched.put(req.URI, p)
	if stale() {
		e.prefetched.drop(req.URI, p)
		return
	}
	e.cfg.Log.Debug("model: prefetching the next suggestion, as if this one were accepted", "uri", req.URI, "format", e.format.Name())
	go func() {
		defer close(p.done)
		p.sugs, p.quiet, p.err = e.ask(ctx, req, true)
		if p.err != nil {
			p.cancelled = ctx.Err() != nil || errors.Is(p.err, errBusy)
			e.prefetched.drop(req.URI, p)
		}
	}()
}

// acceptedRequest is req as it will be once s is accepted: the text with s's edits made, the
// cursor where s puts it (else after its last edit), and the edit history with s as the user's
// latest edit (one edit over the span of s's edits, as an editor applies a suggestion).
func acceptedRequest(req nesagent.Request, s nesagent.Suggestion) nesagent.Request {
	text := applyEdits(req.Text, s.Edits)
	start, end := len(req.Text), 0
	for _, ed := range s.Edits {
		start, end = min(start, ed.Start), max(end, ed.End)
	}
	newEnd := end + len(text) - len(req.Text)
	var seq uint64
	for _, ed := range req.Recent {
		seq = max(seq, ed.Seq)
	}
	for _, d := range req.Open {
		for _, ed := range d.Recent {
			seq = max(seq, ed.Seq)
		}
	}
	next := req
	next.Text = text
	next.Recent = nesagent.RecentAfter(req.Recent, req.Text, start, end, text[start:newEnd], seq+1)
	next.Cursor = newEnd
	if s.Cursor != nil {
		next.Cursor = *s.Cursor
	}
	return next
}

// put registers p for uri, cancelling the one it replaces.
func (ps *prefetches) put(uri string, p *prefetch) {
	ps.mu.Lock()
	if ps.byURI == nil {
		ps.byURI = map[string]*prefetch{}
	}
	old := ps.byURI[uri]
	ps.byURI[uri] = p
	ps.mu.Unlock()
	if old != nil {
		old.cancel()
	}
}

// drop cancels p and unregisters it, if it is still uri's.
func (ps *prefetches) drop(uri string, p *prefetch) {
	p.cancel()
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.byURI[uri] == p {
		delete(ps.byURI, uri)
	}
}

// take answers a request at the text prefetched for its document with that answer, waiting for
// it while it comes (ok true, with the request's error if it ends first: what was prefetched
// stays for the next request). A request at another text drops what was prefetched (ok false);
// so does one at that text when it was cancelled, gave way, or failed before the request came:
// the request asks anew.
func (ps *prefetches) take(ctx context.Context, req nesagent.Request) (_ []nesagent.Suggestion, _ *nesagent.Quiet, _ error, ok bool) {
	ps.mu.Lock()
	p := ps.byURI[req.URI]
	ps.mu.Unlock()
	if p == nil {
		return nil, nil, nil, false
	}
	if req.Text != p.expect {
		ps.drop(req.URI, p)
		return nil, nil, nil, false
	}
	select {
	case <-p.done:
	case <-ctx.Done():
		return nil, nil, ctx.Err(), true
	}
	ps.drop(req.URI, p)
	if p.cancelled {
		return nil, nil, nil, false
	}
	return p.sugs, p.quiet, p.err, true
}

// closed drops what was prefetched for a closed document, cancelling it.
func (ps *prefetches) closed(uri string) {
	ps.mu.Lock()
	p := ps.byURI[uri]
	ps.mu.Unlock()
	if p != nil {
		ps.drop(uri, p)
	}
}

// changed drops what was prefetched for uri unless its text is now the one prefetched for
// (the suggestion accepted).
func (ps *prefetches) changed(uri, text string) {
	ps.mu.Lock()
	p := ps.byURI[uri]
	ps.mu.Unlock()
	if p != nil && text != p.expect {
		ps.drop(uri, p)
	}
}
