package lspside

import (
	"context"
	"encoding/json"

	"go.lsp.dev/jsonrpc2"
)

func (s *Server) executeCommand(ctx context.Context, req *jsonrpc2.Request) (any, error) {
	var p struct {
		Command   string            `json:"command"`
		Arguments []json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(req.Params(), &p); err != nil {
		return nil, invalidParams("workspace/executeCommand: %v", err)
	}
	switch p.Command {
	case CommandAccept:
		var id string
		if len(p.Arguments) != 1 || json.Unmarshal(p.Arguments[0], &id) != nil || id == "" {
			return nil, invalidParams("%s takes one argument: the suggestion id", CommandAccept)
		}
		return s.accept(ctx, id)
	}
	return nil, invalidParams("unknown command %q", p.Command)
}

// accept sends nes/accept for a live suggestion. An id that already ended is logged and ignored:
// it must not end twice.
func (s *Server) accept(ctx context.Context, id string) (any, error) {
	if _, ok := s.sugs.take(id); !ok {
		s.log.Warn().Str("id", id).Msg("accept for a suggestion that is not live (unknown or already ended); ignored")
		return nil, nil
	}
	agent := s.currentAgent()
	if agent == nil {
		s.log.Warn().Str("id", id).Msg("accept with no agent running")
		return nil, nil
	}
	s.log.Debug().Str("dir", "bridge→agent").Str("id", id).Msg("nes/accept")
	if err := agent.Accept(jsonrpc2.DetachContext(ctx), id); err != nil {
		s.log.Error().Str("dir", "bridge→agent").Err(err).Msg("nes/accept")
	}
	return nil, nil
}
