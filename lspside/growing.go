package lspside

import (
	"context"
	"sync"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/acpside"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/document"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/translate"
)

// Growing answers: an agent that answers with the first change of an answer its model is still
// writing says so (the answer's _meta "acp-lsp-bridge/growing": the model agent streaming a
// rewrite). The bridge then asks it again at the same version and place, and the agent answers
// once more of the answer is written: everything written so far, as one suggestion, and at the
// end the whole answer. Each answer replaces what the bridge shows of the one before, until the
// user acts on it or the document changes: an editor's request at that text then gets everything
// written so far, and an editor that listens is told (suggestionReady). Ghost text shows only
// text at the cursor: while the grown suggestion does not fit there, the first one stays for
// ghost text alone (live.inlineOnly), and the rest of the answer follows its accept.

// growths are the documents whose answer the bridge follows: at most one each.
type growths struct {
	mu    sync.Mutex
	byURI map[string]*growth
}

// growth is the following of one answer.
type growth struct{ cancel context.CancelFunc }

// begin registers the following of uri's answer, ending one going on; stop unregisters it (and
// only it: a newer one registered meanwhile stays, for a change to end).
func (g *growths) begin(uri string) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	me := &growth{cancel: cancel}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.byURI == nil {
		g.byURI = map[string]*growth{}
	}
	if old := g.byURI[uri]; old != nil {
		old.cancel()
	}
	g.byURI[uri] = me
	return ctx, func() {
		cancel()
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.byURI[uri] == me {
			delete(g.byURI, uri)
		}
	}
}

// changed ends the following of uri's answer: the document changed, or closed.
func (g *growths) changed(uri string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if gr := g.byURI[uri]; gr != nil {
		gr.cancel()
		delete(g.byURI, uri)
	}
}

// followGrowth asks the agent again, at the request of params (for snap and cursor), for more of
// the answer that shown came from, until the answer has ended, the user acts on what is shown, the
// document changes or another request for it goes to the agent.
func (s *Server) followGrowth(agent *acpside.Agent, snap *document.Snapshot, cursor int, params acp.UnstableSuggestNesRequest, shown []*live) {
	uri := snap.URI
	ctx, stop := s.growth.begin(uri)
	go func() {
		defer stop()
		timeout, _ := s.suggestTimeout(false)
		for {
			wait, cancel := context.WithTimeout(ctx, timeout)
			sctx, ok, done := s.reqs.beginFollow(wait, uri)
			if !ok {
				// Another request for the document is with the agent: its answer replaces this one.
				cancel()
				return
			}
			sugs, _, growing, err := agent.SuggestGrowing(sctx, params)
			done()
			cancel()
			if err != nil {
				s.log.Debug().Str("uri", uri).Err(err).Msg("following the answer the model writes: stopped")
				return
			}
			if shown = s.grew(ctx, agent, snap, cursor, sugs, shown); shown == nil || !growing {
				return
			}
		}
	}()
}

// grew replaces shown, the suggestions of the answer so far, by sugs, more of the same answer (or
// the whole), and returns what is shown now: nil when nothing is (the document moved on, the user
// acted on shown, or the whole answer has nothing to show).
func (s *Server) grew(ctx context.Context, agent *acpside.Agent, snap *document.Snapshot, cursor int, sugs []acpside.Suggestion, shown []*live) []*live {
	s.fwd.Lock()
	cur, open := s.docs.Get(snap.URI)
	stale := !open || cur.Version != snap.Version || !cur.Mapper.Equal(snap.Mapper)
	var still []*live
	for _, l := range shown {
		if s.sugs.isLive(l.id) && !l.applied {
			still = append(still, l)
		}
	}
	// Nothing is shown of the answer any more, or the text moved on: its new ids end at once.
	gone := stale || len(still) == 0 || agent != s.currentAgent()
	now := s.presentAnswer(ctx, agent, snap, cursor, sugs, gone)
	if gone {
		s.fwd.Unlock()
		return nil
	}
	// What was shown ends, replaced; the first answer stays for ghost text while what replaces
	// it does not fit there.
	fits := func(l *live) bool {
		return l.kind == "edit" && l.repl != nil && translate.FitsInline(snap.Mapper, *l.repl, cursor)
	}
	keep := func(old *live) bool {
		if !fits(old) || len(now) == 0 {
			return false
		}
		for _, l := range now {
			if fits(l) {
				return false
			}
		}
		return old.inlineOnly.Load() || old == shown[0]
	}
	var ended []*live
	kept := 0
	for _, old := range still {
		if keep(old) && kept == 0 {
			old.inlineOnly.Store(true)
			now = append(now, old)
			kept++
			continue
		}
		if l, ok := s.sugs.take(old.id); ok {
			ended = append(ended, l)
		}
	}
	s.fwd.Unlock()
	for _, l := range ended {
		s.sugs.end(ctx, agent, l, acp.UnstableNesRejectReasonReplaced)
	}
	if len(now) == 0 {
		s.log.Debug().Str("uri", snap.URI).Msg("the answer the model wrote has nothing to show: what was shown of it ends")
		return nil
	}
	s.log.Debug().Str("uri", snap.URI).Int("version", snap.Version).Int("suggestions", len(now)-kept).Msg("more of the answer the model writes: shown in place of what was")
	s.tellReady(snap, cursor)
	s.statusChanged()
	return now
}
