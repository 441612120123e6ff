package lspside

import (
	"context"
	"fmt"

	acp "github.com/coder/acp-go-sdk"
	"go.lsp.dev/protocol"
)

// requestPermission answers session/request_permission by asking the user with
// window/showMessageRequest, one button per option the agent gave. No answer within
// Config.UserWait, a closed prompt, or the agent cancelling its request gives the outcome
// "cancelled", as ACP requires of a cancelled turn.
func (s *Server) requestPermission(ctx context.Context, p acp.RequestPermissionRequest) (acp.RequestPermissionResponse, *acp.RequestError) {
	cancelled := acp.RequestPermissionResponse{Outcome: acp.NewRequestPermissionOutcomeCancelled()}
	if len(p.Options) == 0 {
		s.log.Warn().Msg("session/request_permission without options; answered cancelled")
		return cancelled, nil
	}
	what := "an action"
	if p.ToolCall.Title != nil && *p.ToolCall.Title != "" {
		what = fmt.Sprintf("%q", *p.ToolCall.Title)
	}
	name := "The agent"
	if a := s.currentAgent(); a != nil {
		name = a.Name()
	}
	names, ids := make([]string, len(p.Options)), make([]string, len(p.Options))
	for i, o := range p.Options {
		names[i], ids[i] = o.Name, string(o.OptionId)
	}
	titles := uniqueTitles(names, ids)
	s.log.Info().Str("dir", "agent→bridge").Str("what", what).Msg("session/request_permission")
	choice, err := s.ask(ctx, protocol.MessageTypeWarning, fmt.Sprintf("acp-lsp-bridge: %s asks permission for %s.", name, what), titles...)
	i := indexOf(titles, choice)
	if err != nil || i < 0 {
		s.log.Info().Err(err).Msg("permission not given: answered cancelled")
		return cancelled, nil
	}
	return acp.RequestPermissionResponse{Outcome: acp.NewRequestPermissionOutcomeSelected(p.Options[i].OptionId)}, nil
}
