package lspside

import (
	"context"
	"encoding/json"
	"errors"

	acp "github.com/coder/acp-go-sdk"
	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/acpside"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/document"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/translate"
)

// inlineRequest is what an inline-completion request took, in order, before it ran.
type inlineRequest struct {
	snap    *document.Snapshot
	cursor  int // byte offset in snap
	editor  encoding.Kind
	trigger acp.UnstableNesTriggerKind
}

func (s *Server) inlineCompletion(ctx context.Context, req *jsonrpc2.Request) (any, error) {
	var p struct {
		TextDocument textDocumentID `json:"textDocument"`
		Position     lspPosition    `json:"position"`
		Context      *struct {
			TriggerKind int `json:"triggerKind"`
		} `json:"context"`
	}
	if err := json.Unmarshal(req.Params(), &p); err != nil {
		return nil, invalidParams("textDocument/inlineCompletion: %v", err)
	}
	snap, ok := s.docs.Get(p.TextDocument.URI)
	if !ok {
		return nil, invalidParams("textDocument/inlineCompletion: document not open: %s", p.TextDocument.URI)
	}
	editor := s.editorEncoding()
	cursor, err := snap.Mapper.PositionOffset(encoding.Position{Line: p.Position.Line, Character: p.Position.Character}, editor)
	if err != nil {
		return nil, invalidParams("textDocument/inlineCompletion: position %d:%d in %s: %v", p.Position.Line, p.Position.Character, p.TextDocument.URI, err)
	}
	trigger := acp.UnstableNesTriggerKindAutomatic
	if p.Context != nil && p.Context.TriggerKind == 1 { // Invoked
		trigger = acp.UnstableNesTriggerKindManual
	}
	ir := inlineRequest{snap: snap, cursor: cursor, editor: editor, trigger: trigger}
	rctx, done := s.track(req.ID())
	jsonrpc2.Async(ctx)
	defer done()
	items, err := s.suggestInline(rctx, ir)
	if err != nil {
		return nil, err
	}
	return result(protocol.InlineCompletionList{Items: items})
}

func (s *Server) suggestInline(ctx context.Context, ir inlineRequest) ([]protocol.InlineCompletionItem, error) {
	items := []protocol.InlineCompletionItem{}
	wait, cancel := context.WithTimeout(ctx, s.cfg.SuggestTimeout)
	defer cancel()
	agent := s.readyAgent(wait)
	if err := ctx.Err(); err != nil {
		return nil, jsonrpc2.Errorf(codeRequestCancelled, "request cancelled")
	}
	if agent == nil {
		return items, nil
	}
	uri := ir.snap.URI
	s.sugs.supersede(ctx, agent, uri)
	pos, err := translate.OffsetToACP(ir.snap.Mapper, ir.cursor, agent.Encoding())
	if err != nil {
		return nil, invalidParams("position: %v", err)
	}
	sugs, err := agent.Suggest(wait, acp.UnstableSuggestNesRequest{
		Uri:         uri,
		Version:     ir.snap.Version,
		Position:    pos,
		TriggerKind: ir.trigger,
	})
	switch {
	case errors.Is(err, acpside.ErrCancelled):
		if ctx.Err() != nil {
			return nil, jsonrpc2.Errorf(codeRequestCancelled, "request cancelled")
		}
		s.log.Warn().Dur("timeout", s.cfg.SuggestTimeout).Msg("nes/suggest timed out")
		return items, nil
	case err != nil:
		s.log.Error().Str("dir", "agent→bridge").Err(err).Msg("nes/suggest failed")
		return nil, jsonrpc2.Errorf(codeRequestFailed, "the agent failed: %v", err)
	}

	// Present the answer only for the version it was computed on: check and register under the
	// same lock that document changes take, so that a later change sees what was shown.
	s.fwd.Lock()
	defer s.fwd.Unlock()
	cur, open := s.docs.Get(uri)
	stale := !open || cur.Version != ir.snap.Version || cur.Text() != ir.snap.Text()
	for _, sg := range sugs {
		if sg.ID == "" {
			s.log.Warn().Str("problem", sg.Problem).Msg("dropping a suggestion without an id")
			continue
		}
		if stale {
			s.sugs.reject(ctx, agent, sg.ID, acp.UnstableNesRejectReasonIgnored)
			continue
		}
		item, l, reason := s.present(agent, ir, sg)
		if l == nil {
			s.log.Warn().Str("id", sg.ID).Str("kind", sg.Kind).Str("reason", reason).Msg("dropping a suggestion")
			s.sugs.reject(ctx, agent, sg.ID, acp.UnstableNesRejectReasonIgnored)
			continue
		}
		s.sugs.add(ctx, agent, l)
		if item != nil {
			items = append(items, *item)
		} else {
			s.log.Debug().Str("id", sg.ID).Msg("suggestion kept but not shown inline: it edits another document, or its range does not lie on the cursor's line around the cursor")
		}
	}
	if stale && len(sugs) > 0 {
		s.log.Debug().Str("uri", uri).Int("version", ir.snap.Version).Msg("answer for an old version dropped")
	}
	return items, nil
}

// present decides what to do with one suggestion: an inline item plus its live record, a live
// record kept for other surfaces (no item), or nothing (with the reason it was dropped).
func (s *Server) present(agent *acpside.Agent, ir inlineRequest, sg acpside.Suggestion) (*protocol.InlineCompletionItem, *live, string) {
	if sg.Problem != "" {
		return nil, nil, sg.Problem
	}
	if sg.Edit == nil {
		return nil, nil, "a " + sg.Kind + " suggestion, a kind the bridge did not advertise"
	}
	l := &live{id: sg.ID, uri: ir.snap.URI}
	if sg.Edit.Uri != ir.snap.URI {
		// An edit of another document: kept for the surfaces that can show it.
		return nil, l, ""
	}
	repl, err := translate.EditsToReplacement(ir.snap.Mapper, sg.Edit.Edits, agent.Encoding())
	if err != nil {
		return nil, nil, err.Error()
	}
	if ir.snap.Text()[repl.Start:repl.End] == repl.Text {
		return nil, nil, "the edit changes nothing"
	}
	l.base, l.repl = ir.snap, &repl
	if !translate.FitsInline(ir.snap.Mapper, repl, ir.cursor) {
		return nil, l, ""
	}
	item, err := translate.ReplacementToInlineItem(ir.snap.Mapper, repl, ir.editor, CommandAccept, sg.ID)
	if err != nil {
		return nil, nil, err.Error()
	}
	l.shown = true
	return &item, l, ""
}
