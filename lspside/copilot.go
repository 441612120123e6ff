package lspside

import (
	"context"
	"encoding/json"

	"go.lsp.dev/jsonrpc2"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/translate"
)

// copilotInlineEdit answers Copilot's textDocument/copilotInlineEdit, so that the plugins written for
// Copilot's next edit suggestions (sidekick.nvim, copilot-lsp.nvim, copilot.lua, copilot.el) work
// unchanged: at most one edit, the best edit suggestion for the document (the one nearest the
// position), anywhere in the file, with the request's document version echoed exactly.
func (s *Server) copilotInlineEdit(ctx context.Context, req *jsonrpc2.Request) (any, error) {
	type result struct {
		Edits []translate.CopilotInlineEdit `json:"edits"`
	}
	empty := result{Edits: []translate.CopilotInlineEdit{}}
	editor := s.editorEncoding()
	var answered []*live
	otherVersion := func(pr positionRequest) bool {
		var version *int
		if json.Unmarshal(pr.params.TextDocument.Version, &version) == nil && version != nil && *version != pr.snap.Version {
			s.log.Debug().Int("requested", *version).Int("current", pr.snap.Version).Msg("copilotInlineEdit for another version; nothing to show")
			return true
		}
		// The agent already answered for this text and this position (the plugins ask again as
		// the cursor moves, or when told the answer grew): that answer, without asking again. A
		// request by hand asks for another.
		for _, l := range s.sugs.forDocument(pr.snap.URI, pr.snap.Version) {
			if pr.automatic() && s.reqs.automatic(pr.snap.URI) && l.cursor == pr.cursor && !l.inlineOnly.Load() {
				answered = append(answered, l)
			}
		}
		if len(answered) > 0 {
			s.log.Debug().Str("uri", pr.snap.URI).Msg("copilotInlineEdit answered from the agent's answer for this text and position")
			return true
		}
		return false
	}
	pr, lives, skipped, err := s.suggestionsAt(ctx, req, otherVersion)
	if skipped && answered == nil {
		return empty, nil
	}
	if skipped {
		lives = answered
	}
	p, snap, cursor := pr.params, pr.snap, pr.cursor
	if err != nil {
		if rpcErr, ok := err.(*jsonrpc2.Error); ok && rpcErr.Code == codeRequestFailed {
			// Copilot's clients show every error, on every keystroke: the log has it already.
			return empty, nil
		}
		return nil, err
	}
	var best *live
	for _, l := range lives {
		if l.kind != "edit" || l.repl == nil || l.inlineOnly.Load() {
			continue
		}
		if best == nil || distance(*l.repl, cursor) < distance(*best.repl, cursor) {
			best = l
		}
	}
	if best == nil {
		return empty, nil
	}
	echo := json.RawMessage(p.TextDocument.Version)
	if len(echo) == 0 {
		echo = json.RawMessage("null")
	}
	edit, err := translate.ToCopilotInlineEdit(snap.Mapper, *best.repl, editor, snap.URI, echo, acceptCommand(best.id))
	if err != nil {
		return nil, err
	}
	return result{Edits: []translate.CopilotInlineEdit{edit}}, nil
}

// distance is how far a replacement lies from an offset.
func distance(r translate.Replacement, off int) int {
	switch {
	case off < r.Start:
		return r.Start - off
	case off > r.End:
		return off - r.End
	}
	return 0
}

// didFocus handles Copilot's textDocument/didFocus: it names only the document, so the cursor is
// the one of the document's last request and the visible range is unknown.
func (s *Server) didFocus(ctx context.Context, raw json.RawMessage) error {
	uri, err := documentURI(raw)
	if err != nil {
		return err
	}
	s.fwd.Lock()
	defer s.fwd.Unlock()
	snap, ok := s.docs.Get(uri)
	if !ok {
		if s.secret.has(uri) {
			s.reqs.enter(uri) // the status says why nothing comes
		}
		return nil // Copilot sends didFocus for buffers it does not sync, too
	}
	s.focus(ctx, snap, -1, nil)
	return nil
}
