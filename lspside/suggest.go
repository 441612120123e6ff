package lspside

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	acp "github.com/coder/acp-go-sdk"
	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/acpside"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/document"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/editorstate"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/translate"
)

// suggestRequest is what a request for suggestions took, in order, before it ran.
type suggestRequest struct {
	snap    *document.Snapshot
	cursor  int // byte offset in snap
	trigger acp.UnstableNesTriggerKind
	// explicit is set for what the user asked for (not the editor while they type): only those
	// are prompted to an agent without NES by default (prompts.go).
	explicit bool
	// ahead is set for the bridge's own request, asked before the editor asks (ahead.go).
	ahead bool
	// diagnostics from the editor, sent to an agent that asked for them.
	diagnostics []lspDiagnostic
	// toldWhy, when set, is set to true when the user was told why nothing shows (the agent's
	// note on an answer with no suggestion).
	toldWhy *bool
	// answered, when set, is set once the agent has answered the request (with or without a
	// suggestion, for the version asked or an older one).
	answered *atomic.Bool
}

var errCancelled = jsonrpc2.Errorf(codeRequestCancelled, "request cancelled")

// requestSuggestions asks the agent for suggestions at a snapshot and records the answer as live
// suggestions, each presented once for every surface. It returns nothing for an answer to a
// version that is no longer current (those ids end as ignored), and no error when the agent is not
// ready (starting, restarting, waiting for sign-in, or none): the editor then sees an empty result
// at once, never a wait for the agent's start-up. What holds a request back before it is asked is
// heldBeforeAsking; what a failed answer becomes is suggestFailed.
func (s *Server) requestSuggestions(ctx context.Context, req suggestRequest) ([]*live, error) {
	uri := req.snap.URI
	if !req.ahead {
		// The editor asks: what the bridge asked ahead for another place or text would supersede
		// this request's answer with its own.
		s.ahead.changed(uri)
	}
	// Under fwd: an agent that has just become ready has had every open document replayed first,
	// so that no nes/suggest reaches it before the document it names.
	s.fwd.Lock()
	agent := s.currentAgent()
	s.fwd.Unlock()
	if s.heldBeforeAsking(agent, req) {
		return nil, nil
	}
	timeout, setting := s.suggestTimeout(agent.Prompted())
	wait, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	params, err := s.suggestParams(agent, req)
	if err != nil {
		return nil, err
	}
	// At most one nes/suggest in flight per document: a newer request supersedes this one. An
	// automatic one that supersedes another asked for only moments before waits a moment first,
	// so that a burst of keystrokes asks the agent once at its end, not once per key; at a
	// typist's pace each key asks at once (the superseded request is cancelled, which aborts the
	// agent's work), so the suggestion after the last key comes in the agent's own time. With a
	// delay (automatic.go), an automatic request waits until the document has been still that
	// long. What the user asks for by hand goes at once.
	began := time.Now()
	// An answer the model still writes is followed once this request is done (growing.go).
	var follow func()
	defer func() {
		if follow != nil {
			follow()
		}
	}()
	sctx, burst, done := s.reqs.beginSuggest(wait, uri, s.cfg.CoalesceDelay)
	defer done()
	if !req.explicit {
		if !s.untilStill(sctx, req, s.automaticDelay(agent.Prompted()), burst, began, s.cfg.CoalesceDelay) {
			if ctx.Err() != nil {
				return nil, errCancelled
			}
			s.log.Debug().Str("uri", uri).Msg("empty result: superseded, or the document changed, within the delay")
			return nil, nil
		}
	}
	s.reqs.asking(uri)
	sugs, note, growing, err := s.askAgent(ctx, sctx, agent, req.snap, params)
	if err == nil && req.answered != nil {
		req.answered.Store(true)
	}
	// The earlier suggestions for the document end as replaced once this request is answered (or
	// not): their nes/reject stays off the request's way to the agent.
	s.sugs.supersede(ctx, agent, uri, req.ahead)
	if err != nil {
		return s.suggestFailed(ctx, wait, agent, req, err, timeout, setting)
	}
	if s.health.answered(agent) {
		s.statusChanged()
	}
	if note != nil && req.explicit {
		s.tellWhyQuiet(ctx, agent, note, req)
	}

	// Present the answer only for the version it was computed on: check and register under the
	// same lock that document changes take, so that a later change sees what was shown.
	s.fwd.Lock()
	defer s.fwd.Unlock()
	cur, open := s.docs.Get(uri)
	stale := !open || cur.Version != req.snap.Version || !cur.Mapper.Equal(req.snap.Mapper)
	out := s.presentAnswer(ctx, agent, req.snap, req.cursor, sugs, stale)
	if stale && len(sugs) > 0 {
		s.log.Debug().Str("uri", uri).Int("version", req.snap.Version).Msg("answer for an old version dropped")
	}
	if growing && len(out) > 0 {
		follow = func() { s.followGrowth(agent, req.snap, req.cursor, params, out) }
	}
	return out, nil
}

// suggestParams is the nes/suggest that asks agent for req, in the agent's encoding, with the
// context the agent asked for.
func (s *Server) suggestParams(agent *acpside.Agent, req suggestRequest) (acp.UnstableSuggestNesRequest, error) {
	agentEnc := agent.Encoding()
	pos, err := translate.OffsetToACP(req.snap.Mapper, req.cursor, agentEnc)
	if err != nil {
		return acp.UnstableSuggestNesRequest{}, invalidParams("position: %v", err)
	}
	params := acp.UnstableSuggestNesRequest{
		Uri: req.snap.URI, Version: req.snap.Version, Position: pos, TriggerKind: req.trigger,
	}
	if want := agent.Context(); want.Any() {
		params.Context = s.suggestContext(want, req, agentEnc)
	}
	return params, nil
}

// askAgent sends params within sctx (the editor's ctx, bounded and superseded), once more after
// sending snap's document again when the agent's copy differs, and shows progress while an agent
// asked through prompts works.
func (s *Server) askAgent(ctx, sctx context.Context, agent *acpside.Agent, snap *document.Snapshot, params acp.UnstableSuggestNesRequest) ([]acpside.Suggestion, *acpside.Quiet, bool, error) {
	if agent.Prompted() {
		defer s.progress(ctx, "acp-lsp-bridge", "asking "+agent.Name()+"…")()
	}
	sugs, note, growing, err := agent.SuggestGrowing(sctx, params)
	if acpside.OutOfSync(err) && s.resync(ctx, agent, snap) {
		sugs, note, growing, err = agent.SuggestGrowing(sctx, params) // once more, and only once
	}
	return sugs, note, growing, err
}

// heldBeforeAsking tells whether req gets an empty result before the agent is asked: no agent
// ready (agent is nil), a document withheld from the agent, automatic suggestions off for it, an
// automatic request to an agent asked through prompts only when the user asks, or one the agent's
// service cannot answer now. It logs why.
func (s *Server) heldBeforeAsking(agent *acpside.Agent, req suggestRequest) bool {
	uri := req.snap.URI
	if agent == nil {
		s.log.Debug().Str("uri", uri).Str("why", s.notReady()).Msg("empty result: the agent is not ready")
		return true
	}
	if s.isWithheld(uri) {
		s.log.Debug().Str("uri", uri).Msg("empty result: the document is too large for the agent")
		return true
	}
	if !req.explicit && !s.reqs.automatic(uri) {
		s.log.Debug().Str("uri", uri).Msg("empty result: automatic suggestions are off for the document")
		return true
	}
	if agent.Prompted() && !s.promptGate(req.explicit) {
		s.log.Debug().Str("uri", uri).Msg("empty result: an automatic request, and the agent is asked through prompts only when you ask")
		return true
	}
	if !req.explicit {
		if why := s.health.holdAutomatic(agent, time.Now()); why != "" {
			s.log.Debug().Str("uri", uri).Str("why", why).Msg("empty result: an automatic request, and the agent's service cannot answer now")
			return true
		}
	}
	return false
}

// suggestFailed is what requestSuggestions returns when the agent's answer to req is the error
// err (not nil): wait is the request's context with its timeout (set by setting), ctx the
// editor's.
func (s *Server) suggestFailed(ctx, wait context.Context, agent *acpside.Agent, req suggestRequest, err error, timeout time.Duration, setting TimeoutSetting) ([]*live, error) {
	uri := req.snap.URI
	switch {
	case errors.Is(err, acpside.ErrCancelled):
		switch {
		case ctx.Err() != nil:
			return nil, errCancelled
		case wait.Err() == nil:
			s.log.Debug().Str("uri", uri).Msg("nes/suggest superseded by a newer request for the document")
			return nil, nil
		}
		s.log.Warn().Dur("timeout", timeout).Msg("nes/suggest timed out")
		s.suggestTimedOut(ctx, agent, timeout, setting)
		return nil, nil
	case errors.Is(err, acpside.ErrPromptsStopped):
		s.log.Debug().Str("uri", uri).Msg("empty result: prompts to the agent are stopped")
		return nil, nil
	case acpside.AuthRequired(err):
		s.needSignIn(context.WithoutCancel(ctx), agent)
		return nil, nil
	case acpside.OutOfSync(err):
		// Sent again already (resync); the editor's text moved on meanwhile, or the agent still
		// differs: its next request names the text as it is then.
		s.log.Warn().Str("uri", uri).Str("error", agentWords(err)).Msg("nes/suggest: the agent's copy of the document differs; empty result")
		return nil, nil
	case endedWithin(agent, 200*time.Millisecond):
		// The agent died with the request: an outage, not an answer. watchAgent restarts it.
		s.log.Warn().Str("dir", "agent→bridge").Str("error", agentWords(err)).Msg("nes/suggest: the agent exited before answering")
		return nil, nil
	}
	if f, ok := acpside.BackendFailure(err); ok {
		return nil, s.backendFailed(ctx, agent, f, req.explicit)
	}
	words := agentWords(err)
	s.log.Error().Str("dir", "agent→bridge").Str("error", words).Msg("nes/suggest failed")
	return nil, jsonrpc2.Errorf(codeRequestFailed, "the agent failed: %s", words)
}

// tellWhyQuiet tells the user, who asked (req), why the agent kept its answer back (note), in a
// line, and records in req.toldWhy that they were told.
func (s *Server) tellWhyQuiet(ctx context.Context, agent *acpside.Agent, note *acpside.Quiet, req suggestRequest) {
	why := nesagent.CleanText(strings.Join(strings.Fields(note.Why), " "), maxQuietWords)
	if why == "" {
		why = nesagent.CleanText(note.Rule, maxQuietWords)
	}
	s.log.Debug().Str("uri", req.snap.URI).Str("rule", note.Rule).Str("why", why).Msg("empty result: the agent kept its answer back")
	s.showMessage(context.WithoutCancel(ctx), protocol.MessageTypeInfo, fmt.Sprintf("acp-lsp-bridge: %s has no suggestion here: %s.", agent.Name(), strings.TrimSuffix(why, ".")))
	if req.toldWhy != nil {
		*req.toldWhy = true
	}
}

// presentAnswer records the agent's answer sugs, asked at snap and cursor, as live suggestions
// and returns those that may be shown; every other id ends as ignored at once (all of them when
// stale: the answer is for a text the editor no longer has). Under fwd.
func (s *Server) presentAnswer(ctx context.Context, agent *acpside.Agent, snap *document.Snapshot, cursor int, sugs []acpside.Suggestion, stale bool) []*live {
	var out []*live
	for _, sg := range sugs {
		if sg.ID == "" {
			s.log.Warn().Str("problem", sg.Problem).Msg("dropping a suggestion without an id")
			continue
		}
		if stale {
			s.sugs.reject(ctx, agent, sg.ID, acp.UnstableNesRejectReasonIgnored)
			continue
		}
		if sg.Unknown {
			s.log.Debug().Str("id", sg.ID).Str("kind", sg.Kind).Msg("ignoring a suggestion of a kind the bridge does not know")
			s.sugs.reject(ctx, agent, sg.ID, acp.UnstableNesRejectReasonIgnored)
			continue
		}
		l, err := s.present(agent.Encoding(), snap, cursor, sg)
		if err != nil {
			s.log.Warn().Str("id", sg.ID).Str("kind", sg.Kind).Err(err).Msg("dropping a suggestion")
			s.sugs.reject(ctx, agent, sg.ID, acp.UnstableNesRejectReasonIgnored)
			continue
		}
		if s.sugs.add(ctx, agent, l) {
			out = append(out, l)
		}
	}
	return out
}

// acceptCommand is the command every surface attaches to a suggestion.
func acceptCommand(id string) translate.Command {
	return translate.Command{Title: "Accept next edit", Command: CommandAccept, Arguments: []any{id}}
}

// suggestContext assembles the context of a nes/suggest: exactly the keys the agent asked for.
func (s *Server) suggestContext(want acpside.ContextWanted, req suggestRequest, agentEnc encoding.Kind) *acp.UnstableNesSuggestContext {
	root := s.workspace().root
	return s.ed.Context(editorstate.Request{
		Want: editorstate.Want{
			OpenFiles: want.OpenFiles, RecentFiles: want.RecentFiles, EditHistory: want.EditHistory,
			UserActions: want.UserActions, Diagnostics: want.Diagnostics, RelatedSnippets: want.RelatedSnippets,
			RecentMax: want.RecentMax, HistoryMax: want.HistoryMax, ActionsMax: want.ActionsMax,
		},
		Snap:   req.snap,
		Cursor: req.cursor,
		Open:   s.docs.All(),
		Agent:  agentEnc,
		Editor: s.editorEncoding(),
		Extra:  toStateDiagnostics(req.diagnostics),
		Path: func(u string) string {
			p := uriPath(u)
			if root != "" {
				if rel, err := filepath.Rel(root, p); err == nil && !strings.HasPrefix(rel, "..") {
					return filepath.ToSlash(rel)
				}
			}
			return p
		},
	})
}

// resync gives the agent the document of snap again, as the editor has it now, after the agent
// said its copy differs (acpside.OutOfSync): it is closed and opened with the current text, since
// an agent that has it open ignores another didOpen. It reports whether snap is still the
// editor's text, so that asking again is worth it.
func (s *Server) resync(ctx context.Context, agent *acpside.Agent, snap *document.Snapshot) bool {
	s.fwd.Lock()
	defer s.fwd.Unlock()
	cur, open := s.docs.Get(snap.URI)
	ev := agent.Events()
	if !open || !ev.DidOpen || s.isWithheld(snap.URI) || s.secret.has(snap.URI) || agent != s.currentAgent() {
		return false
	}
	if ev.DidClose {
		if err := agent.DidClose(ctx, acp.UnstableDidCloseDocumentNotification{Uri: snap.URI}); err != nil {
			s.sendFailed(agent, "document/didClose", err)
			return false
		}
	}
	s.sendDidOpen(ctx, agent, cur)
	n := s.resyncs.Add(1)
	current := cur.Version == snap.Version && cur.Mapper.Equal(snap.Mapper)
	s.log.Debug().Str("uri", snap.URI).Int("version", cur.Version).Int64("resyncs", n).Bool("askAgain", current).
		Msg("the agent's copy of the document differed: sent it again (didClose, didOpen)")
	return current
}
