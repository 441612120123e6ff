package lspside

import (
	"context"
	"fmt"
	"time"

	acp "github.com/coder/acp-go-sdk"
	"go.lsp.dev/protocol"
)

// CommandRestart [] restarts the agent: after the bridge gave up restarting it, or when it hangs.
const CommandRestart = "acp-lsp-bridge.restart"

// RestartWindow is the span in which Config.RestartLimit exits make the bridge give up.
const RestartWindow = 3 * time.Minute

// agentExited handles an agent that ended, or failed to start again, while the editor works: its
// suggestions end with it, and it is started again after a backoff, unless it exited too often
// within RestartWindow; then the user is told once, with the command that tries again. Meanwhile
// requests answer empty at once, and the restarted agent gets every open document's current text.
func (s *Server) agentExited(ctx context.Context, name string, why error) {
	s.sugs.endAll(ctx, nil, acp.UnstableNesRejectReasonIgnored) // their agent is gone
	now := time.Now()
	s.mu.Lock()
	kept := s.exits[:0]
	for _, t := range s.exits {
		if now.Sub(t) < RestartWindow {
			kept = append(kept, t)
		}
	}
	s.exits = append(kept, now)
	n := len(s.exits)
	shutting := s.state == stateShutdown || s.ended
	giveUp := n > s.cfg.RestartLimit
	if giveUp {
		s.agentErr = fmt.Sprintf("acp-lsp-bridge: %s exited %d times in %s (last: %v); the bridge stopped restarting it. "+
			"Its error output is in the bridge's log; run the command %s to try again.", name, n, RestartWindow, why, CommandRestart)
	} else {
		s.agentErr = fmt.Sprintf("acp-lsp-bridge: %s exited (%v); restarting it.", name, why)
	}
	msg := s.agentErr
	s.mu.Unlock()
	if shutting {
		return
	}
	s.log.Warn().Str("agent", name).Err(why).Int("exits", n).Bool("giveUp", giveUp).Msg("agent exited")
	switch {
	case giveUp:
		s.showMessage(ctx, protocol.MessageTypeError, msg)
		return
	case n == 1:
		s.showMessage(ctx, protocol.MessageTypeWarning, msg)
	default:
		s.logMessage(ctx, protocol.MessageTypeWarning, msg)
	}
	delay := s.cfg.RestartDelays[min(n, len(s.cfg.RestartDelays))-1]
	go func() {
		select {
		case <-time.After(delay):
		case <-s.exited:
			return
		}
		s.launch(ctx, true)
	}()
}

// restartCommand starts the agent again at the user's request: the running one (if any) ends
// first, and the count of exits starts over.
func (s *Server) restartCommand(ctx context.Context) error {
	s.mu.Lock()
	if s.launching {
		s.mu.Unlock()
		s.showMessage(ctx, protocol.MessageTypeInfo, "acp-lsp-bridge: the agent is starting already.")
		return nil
	}
	agent := s.agent
	if agent == nil {
		agent = s.authAgent
	}
	s.agent, s.authAgent = nil, nil
	s.exits = nil
	s.agentErr = "acp-lsp-bridge: the agent is restarting."
	s.mu.Unlock()
	if agent != nil {
		s.sugs.endAll(ctx, agent, acp.UnstableNesRejectReasonIgnored)
		agent.Close(ctx)
	}
	s.showMessage(ctx, protocol.MessageTypeInfo, "acp-lsp-bridge: restarting the agent.")
	go s.launch(context.WithoutCancel(ctx), true)
	return nil
}
