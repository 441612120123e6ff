package lspside

import (
	"context"
	"time"

	acp "github.com/coder/acp-go-sdk"
	"go.lsp.dev/protocol"
)

// CommandRestart [] restarts the agent: after the bridge gave up restarting it, or when it hangs.
const CommandRestart = "acp-lsp-bridge.restart"

// RestartWindow is the span in which Config.RestartLimit exits make the bridge give up.
const RestartWindow = 3 * time.Minute

// agentExited handles gen's agent ending, or failing to start again, while the editor works: its
// suggestions end with it, and it is started again after a backoff, unless it exited too often
// within RestartWindow; then the user is told once, with the command that tries again. Meanwhile
// requests answer empty at once, and the restarted agent gets every open document's current text.
func (s *Server) agentExited(ctx context.Context, gen uint64, name string, why error) {
	n, giveUp, ok := s.sup.exited(gen, time.Now(), func(n int, giveUp bool) string {
		return exitWhy(name, n, RestartWindow, why, giveUp)
	})
	if !ok {
		return // the bridge closed it, or a newer generation runs
	}
	s.fwd.Lock()
	s.agentGone()
	s.fwd.Unlock()
	s.sugs.endAll(ctx, nil, acp.UnstableNesRejectReasonIgnored) // their agent is gone
	msg := s.notReady()
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
		case <-s.sup.leaving:
			return
		}
		s.launch(ctx, true)
	}()
}

// restartCommand starts the agent again at the user's request: the running one (if any) ends
// first, and the count of exits starts over.
func (s *Server) restartCommand(ctx context.Context) error {
	agent, refused := s.sup.restart()
	if refused != "" {
		s.showMessage(ctx, protocol.MessageTypeInfo, refused)
		return nil
	}
	if agent != nil {
		s.fwd.Lock()
		s.agentGone()
		s.fwd.Unlock()
		s.sugs.endAll(ctx, agent, acp.UnstableNesRejectReasonIgnored)
		agent.Close(ctx)
	}
	s.showMessage(ctx, protocol.MessageTypeInfo, "acp-lsp-bridge: restarting the agent.")
	go s.launch(context.WithoutCancel(ctx), true)
	return nil
}
