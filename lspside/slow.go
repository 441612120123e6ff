package lspside

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.lsp.dev/protocol"
)

// DefaultSuggestTimeout is how long a nes/suggest is waited for when neither --suggest-timeout
// nor initializationOptions.suggestTimeout says.
const DefaultSuggestTimeout = 10 * time.Second

// MaxTimeout bounds the timeouts set in initializationOptions.
const MaxTimeout = 10 * time.Minute

// slowAfter is how many suggestions in a row must time out before the user is told.
const slowAfter = 3

// timeoutOption is one of the timeouts a user may raise: its flag, its initializationOptions
// key, the flag's value (0: not given), and the default.
type timeoutOption struct {
	flag, key string
	lua       string // the Neovim plugin's option
	given     time.Duration
	def       time.Duration
}

// suggestTimeout is how long a request waits for the agent's suggestions, and the setting that
// says it: for an agent asked through prompts --prompt-timeout, else --suggest-timeout; the flag,
// else initializationOptions, else the default.
func (s *Server) suggestTimeout(prompted bool) (time.Duration, timeoutOption) {
	o := timeoutOption{flag: "--suggest-timeout", key: "suggestTimeout", lua: "suggest_timeout", given: s.cfg.SuggestTimeout, def: DefaultSuggestTimeout}
	fromInit := s.session().suggestTimeout
	if prompted {
		o = timeoutOption{flag: "--prompt-timeout", key: "promptTimeout", lua: "prompt_timeout", given: s.cfg.PromptTimeout, def: DefaultPromptTimeout}
		fromInit = s.session().promptTimeout
	}
	switch {
	case o.given > 0:
		return o.given, o
	case fromInit != nil:
		return *fromInit, o
	}
	return o.def, o
}

// timeoutBounds keeps a timeout of initializationOptions from 100 ms to MaxTimeout.
func timeoutBounds(d time.Duration) (time.Duration, error) {
	if d < 100*time.Millisecond || d > MaxTimeout {
		return 0, fmt.Errorf("%v is not between 100ms and %v", d, MaxTimeout)
	}
	return d, nil
}

// slowness counts the suggestions in a row that the agent did not answer in time, so that the
// user is told once why nothing shows.
type slowness struct {
	mu     sync.Mutex
	streak int
	told   bool
}

// answered resets the count: the agent answered in time.
func (w *slowness) answered() {
	w.mu.Lock()
	w.streak = 0
	w.mu.Unlock()
}

// timedOut counts one more; it reports true once, when the count first reaches slowAfter.
func (w *slowness) timedOut() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.streak++
	if w.streak < slowAfter || w.told {
		return false
	}
	w.told = true
	return true
}

// suggestTimedOut is told of a suggestion the agent did not answer within timeout (set by o):
// after slowAfter in a row, the user is told once what happens and what to raise, and where.
func (s *Server) suggestTimedOut(ctx context.Context, agentName string, timeout time.Duration, o timeoutOption) {
	if !s.slow.timedOut() {
		return
	}
	raise := max(3*timeout, 30*time.Second).Round(time.Second)
	msg := fmt.Sprintf("acp-lsp-bridge: %s did not answer %d suggestions in a row within %v, so each came back empty. "+
		"If it is this slow by design, give it longer: %s %v on the bridge's command line (before \"--\"), or initializationOptions.%s = %d (milliseconds) in your editor's settings for the bridge "+
		"(Neovim: setup({ %s = %d }); VS Code: the acpLspBridge.%s setting).",
		agentName, slowAfter, timeout, o.flag, raise, o.key, raise.Milliseconds(), o.lua, raise.Milliseconds(), o.key)
	s.log.Warn().Dur("timeout", timeout).Str("flag", o.flag).Msg("the agent keeps timing out; the user is told")
	s.showMessage(context.WithoutCancel(ctx), protocol.MessageTypeWarning, msg)
}
