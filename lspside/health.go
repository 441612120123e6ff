package lspside

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/acpside"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent"
)

// StatusSlow: suggestions do not come in time (three in a row timed out, the bridge's wait or
// the agent's own for its model), or the agent's service asked for a pause.
const StatusSlow = "slow"

// maxQuietWords bounds the agent's reason for keeping its answer back, in the line the user is
// told.
const maxQuietWords = 200

// maxAgentWords bounds the agent's own words in a message to the user or in an error the editor
// gets.
const maxAgentWords = 500

// health is what the bridge has learnt of the agent's ability to answer from its last requests:
// timeouts in a row, and the failures of the service behind it that the agent reported with a
// reason (acpside.BackendFailure). It concerns one agent: when another starts (a restart), it
// starts afresh. It decides the slow and failed states, which automatic requests are not sent,
// and what the user is told (each notice once per agent).
type health struct {
	mu sync.Mutex
	healthOf
}

// healthOf is health's record of one agent.
type healthOf struct {
	agent *acpside.Agent
	// timeouts and errors are the suggestions in a row that timed out, and that the agent's
	// service failed; words is what was said of the last of them.
	timeouts, errors int
	words            string
	// refused is what the agent said when its service refused its credentials or address: the
	// user must change something, and automatic requests are not sent until an answer comes.
	refused string
	// unreachable is what the agent said when nothing answered at its service's address: the
	// user must start the server (or name its address); requests are still sent, so that the
	// first answer once it runs ends the state.
	unreachable string
	// pauseUntil is when the agent's service takes requests again (its Retry-After, or its
	// backoff): automatic requests are not sent before; pauseWords says why.
	pauseUntil time.Time
	pauseWords string
	rateLimit  bool // the pause is the service's own (429), not a backoff after failures
	told       map[string]bool
}

// of makes h about agent, afresh when it was about another one. h.mu is held.
func (h *health) of(agent *acpside.Agent) {
	if h.agent != agent {
		h.healthOf = healthOf{agent: agent}
	}
}

// answered records an answer: the agent and its service are well. It reports whether that
// changed the state.
func (h *health) answered(agent *acpside.Agent) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.of(agent)
	changed := h.timeouts >= slowAfter || h.errors >= slowAfter || h.refused != "" || h.unreachable != "" || !h.pauseUntil.IsZero()
	h.timeouts, h.errors, h.refused, h.unreachable, h.pauseUntil = 0, 0, "", "", time.Time{}
	return changed
}

// timedOut counts a suggestion that timed out, the bridge's wait or the agent's own (words says
// which); it reports true once per agent, when the count first reaches slowAfter.
func (h *health) timedOut(agent *acpside.Agent, words string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.of(agent)
	return h.timedOutLocked(words)
}

// timedOutLocked counts one more timeout in a row, said in words; it reports true once per agent,
// when the count first reaches slowAfter. h.mu is held.
func (h *health) timedOutLocked(words string) bool {
	h.timeouts++
	h.words = words
	return h.timeouts >= slowAfter && h.once("slow")
}

// once reports whether the notice key is told for the first time to this agent. h.mu is held.
func (h *health) once(key string) bool {
	if h.told[key] {
		return false
	}
	if h.told == nil {
		h.told = map[string]bool{}
	}
	h.told[key] = true
	return true
}

// failed records a failure of the agent's service and returns the notice for the user, "" when
// there is none (it was told already, or the failure is not yet one in a row too many); again
// says the service was already found unreachable in these words since it last answered.
func (h *health) failed(agent *acpside.Agent, name string, f acpside.Failure, words string, now time.Time) (notice string, again bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.of(agent)
	if f.RetryAfter > 0 {
		h.pauseUntil, h.pauseWords, h.rateLimit = now.Add(f.RetryAfter), words, f.Reason == acpside.ReasonRateLimited
	}
	switch f.Reason {
	case acpside.ReasonCredentialsRefused, acpside.ReasonRedirectRefused:
		h.refused = words
		if h.once(f.Reason) {
			return fmt.Sprintf("acp-lsp-bridge: %s: %s. Suggestions while typing stop until it answers again; asking by hand tries again, and the command %s restarts the agent.", name, words, CommandRestart), false
		}
	case acpside.ReasonBackendUnreachable:
		// Failed at the first: no answer can come until the user starts the server.
		again = h.unreachable == words
		h.unreachable = words
		if h.once(f.Reason) {
			return fmt.Sprintf("acp-lsp-bridge: %s: %s.", name, strings.TrimSuffix(words, ".")), again
		}
		return "", again
	case acpside.ReasonRateLimited:
		if h.once(f.Reason) {
			return fmt.Sprintf("acp-lsp-bridge: %s: %s. Suggestions while typing pause until the server takes requests again; asking by hand meanwhile says when to try again.", name, words), false
		}
	case acpside.ReasonBackendTimeout:
		if h.timedOutLocked(words) {
			return fmt.Sprintf("acp-lsp-bridge: %s's model did not answer %d suggestions in a row in time, so each came back empty: %s", name, slowAfter, words), false
		}
	default:
		h.errors++
		h.words = words
		if h.errors >= slowAfter && h.once(f.Reason) {
			return fmt.Sprintf("acp-lsp-bridge: %s could not get %d suggestions in a row from its model: %s", name, slowAfter, words), false
		}
	}
	return "", false
}

// holdAutomatic says why an automatic request is not sent to agent now, or "".
func (h *health) holdAutomatic(agent *acpside.Agent, now time.Time) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.agent != agent:
		return ""
	case h.refused != "":
		return "the agent's service refused it: " + h.refused
	case now.Before(h.pauseUntil):
		return fmt.Sprintf("the agent's service takes no requests for %s: %s", h.pauseUntil.Sub(now).Round(time.Millisecond), h.pauseWords)
	}
	return ""
}

// state is the slow or failed state for agent, with its message; "" when neither.
func (h *health) state(agent *acpside.Agent, name string, now time.Time) (string, string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.agent != agent:
		return "", ""
	case h.refused != "":
		return StatusFailed, fmt.Sprintf("%s: %s", name, h.refused)
	case h.unreachable != "":
		return StatusFailed, fmt.Sprintf("%s: %s", name, h.unreachable)
	case h.errors >= slowAfter:
		return StatusFailed, fmt.Sprintf("%s could not get %d suggestions in a row from its model: %s", name, h.errors, h.words)
	case h.rateLimit && now.Before(h.pauseUntil):
		return StatusSlow, fmt.Sprintf("%s: %s; suggestions while typing resume in %s.", name, h.pauseWords, nesagent.RoundUp(h.pauseUntil.Sub(now)))
	case h.timeouts >= slowAfter:
		return StatusSlow, fmt.Sprintf("%s did not answer %d suggestions in a row in time: %s", name, h.timeouts, h.words)
	}
	return "", ""
}

// agentWords is what an agent's error says, cleaned and bounded for a person.
func agentWords(err error) string {
	return nesagent.CleanText(acpside.ErrorWords(err), maxAgentWords)
}

// backendFailed handles an agent's error that says its service failed (f): the state, what the
// user is told once, and the answer: nothing for a request made while typing (no error per key),
// the agent's words for one the user asked for.
func (s *Server) backendFailed(ctx context.Context, agent *acpside.Agent, f acpside.Failure, explicit bool) error {
	words := nesagent.CleanText(f.Words, maxAgentWords)
	now := time.Now()
	notice, again := s.health.failed(agent, agent.Name(), f, words, now)
	ev := s.log.Warn()
	if again {
		// Nothing answers there still: every request while typing fails at once, the same way,
		// until the user starts the server. Warned once; the repeats are for the debug log.
		ev = s.log.Debug()
	}
	ev.Str("dir", "agent→bridge").Str("reason", f.Reason).Dur("retry_after", f.RetryAfter).Str("error", words).Msg("nes/suggest: the agent's service failed")
	if notice != "" {
		typ := protocol.MessageTypeWarning
		if f.Reason == acpside.ReasonCredentialsRefused || f.Reason == acpside.ReasonRedirectRefused || f.Reason == acpside.ReasonBackendError || f.Reason == acpside.ReasonBackendUnreachable {
			typ = protocol.MessageTypeError
		}
		s.showMessage(context.WithoutCancel(ctx), typ, notice)
	}
	s.statusChanged()
	if f.RetryAfter > 0 {
		// The state after the pause (ready again) is sent when it ends.
		time.AfterFunc(f.RetryAfter+10*time.Millisecond, s.statusChanged)
	}
	if !explicit {
		return nil
	}
	return jsonrpc2.Errorf(codeRequestFailed, "%s: %s", agent.Name(), words)
}

// statusChanged asks the status publisher to look at the state again.
func (s *Server) statusChanged() { s.status.changed() }
