package testagent

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"

	acp "github.com/coder/acp-go-sdk"
)

// regions finds the editable regions of a prompt (the instructions show one too).
var regions = regexp.MustCompile(`(?s)<\|editable_region_start\|>\n(.*?)<\|editable_region_end\|>`)

// session answers the session methods of a coding agent (Config.Sessions).
func (a *Agent) session(ctx context.Context, method string, params json.RawMessage) (any, *acp.RequestError) {
	switch method {
	case acp.AgentMethodSessionNew:
		if a.needsAuth() {
			return nil, errAuthRequired
		}
		return acp.NewSessionResponse{SessionId: "test-prompts", Modes: &acp.SessionModeState{CurrentModeId: "default", AvailableModes: []acp.SessionMode{
			{Id: "default", Name: "Default"}, {Id: "read-only", Name: "Read Only"},
		}}}, nil
	case acp.AgentMethodSessionSetMode:
		return acp.SetSessionModeResponse{}, nil
	case acp.AgentMethodSessionCancel:
		return nil, nil
	}
	var p acp.PromptRequest
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, invalid(err)
	}
	var text strings.Builder
	for _, b := range p.Prompt {
		if b.Text != nil {
			text.WriteString(b.Text.Text)
		}
	}
	region, ok := "", false
	for _, m := range regions.FindAllStringSubmatch(text.String(), -1) {
		if strings.Contains(m[1], "<|user_cursor_is_here|>") {
			region, ok = strings.ReplaceAll(m[1], "<|user_cursor_is_here|>", ""), true
		}
	}
	answer := "I cannot find the region."
	if ok {
		for _, r := range a.cfg.Rules {
			region = strings.Replace(region, r.Find, r.Replace, 1)
		}
		answer = "<|editable_region_start|>\n" + region + "<|editable_region_end|>\n"
	}
	if err := a.connection().SendNotification(ctx, acp.ClientMethodSessionUpdate, acp.SessionNotification{SessionId: p.SessionId, Update: acp.UpdateAgentMessageText(answer)}); err != nil {
		return nil, acp.NewInternalError(map[string]any{"error": err.Error()})
	}
	return acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
}
