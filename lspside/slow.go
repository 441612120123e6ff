package lspside

import (
	"context"
	"fmt"
	"time"

	"go.lsp.dev/protocol"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/acpside"
)

// DefaultSuggestTimeout is how long a nes/suggest is waited for when neither --suggest-timeout
// nor initializationOptions.suggestTimeout says.
const DefaultSuggestTimeout = 10 * time.Second

// MaxTimeout bounds the timeouts set in initializationOptions.
const MaxTimeout = 10 * time.Minute

// slowAfter is how many suggestions in a row must time out before the user is told.
const slowAfter = 3

// TimeoutSetting is the setting that bounds the wait for an agent's suggestions, for the user to
// raise: its flag, its initializationOptions key, the Neovim plugin's option, and its default.
type TimeoutSetting struct {
	Flag, Key, Lua string
	Default        time.Duration
}

// SuggestTimeoutSetting is the setting that bounds the wait for suggestions: --prompt-timeout for
// an agent asked through prompts, else --suggest-timeout. doctor names it too.
func SuggestTimeoutSetting(prompted bool) TimeoutSetting {
	if prompted {
		return TimeoutSetting{Flag: "--prompt-timeout", Key: "promptTimeout", Lua: "prompt_timeout", Default: DefaultPromptTimeout}
	}
	return TimeoutSetting{Flag: "--suggest-timeout", Key: "suggestTimeout", Lua: "suggest_timeout", Default: DefaultSuggestTimeout}
}

// RaisedTimeout is the timeout to suggest to a user whose agent took as long as took (or longer)
// where the bridge waits limit: three times limit, at least 30 s, and half as long again as took,
// in whole seconds.
func RaisedTimeout(limit, took time.Duration) time.Duration {
	return max(3*limit, 30*time.Second, took*3/2).Round(time.Second)
}

// suggestTimeout is how long a request waits for the agent's suggestions, and the setting that
// says it: the flag, else initializationOptions, else the default.
func (s *Server) suggestTimeout(prompted bool) (time.Duration, TimeoutSetting) {
	o := SuggestTimeoutSetting(prompted)
	given, fromInit := s.cfg.SuggestTimeout, s.session().suggestTimeout
	if prompted {
		given, fromInit = s.cfg.PromptTimeout, s.session().promptTimeout
	}
	switch {
	case given > 0:
		return given, o
	case fromInit != nil:
		return *fromInit, o
	}
	return o.Default, o
}

// timeoutBounds keeps a timeout of initializationOptions from 100 ms to MaxTimeout.
func timeoutBounds(d time.Duration) (time.Duration, error) {
	if d < 100*time.Millisecond || d > MaxTimeout {
		return 0, fmt.Errorf("%v is not between 100ms and %v", d, MaxTimeout)
	}
	return d, nil
}

// suggestTimedOut is told of a suggestion the agent did not answer within timeout (set by o):
// after slowAfter in a row, the user is told once what happens and what to raise, and where.
func (s *Server) suggestTimedOut(ctx context.Context, agent *acpside.Agent, timeout time.Duration, o TimeoutSetting) {
	agentName := agent.Name()
	raise := RaisedTimeout(timeout, timeout)
	told := s.health.timedOut(agent, fmt.Sprintf("the bridge waits %v (%s %v to raise it)", timeout, o.Flag, raise))
	s.statusChanged()
	if !told {
		return
	}
	msg := fmt.Sprintf("acp-lsp-bridge: %s did not answer %d suggestions in a row within %v, so each came back empty. "+
		"If it is this slow by design, give it longer: %s %v on the bridge's command line (before \"--\"), or initializationOptions.%s = %d (milliseconds) in your editor's settings for the bridge "+
		"(Neovim: setup({ %s = %d }); VS Code: the acpLspBridge.%s setting).",
		agentName, slowAfter, timeout, o.Flag, raise, o.Key, raise.Milliseconds(), o.Lua, raise.Milliseconds(), o.Key)
	s.log.Warn().Dur("timeout", timeout).Str("flag", o.Flag).Msg("the agent keeps timing out; the user is told")
	s.showMessage(context.WithoutCancel(ctx), protocol.MessageTypeWarning, msg)
}
