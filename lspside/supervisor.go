package lspside

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/acpside"
)

// agentState is where the agent is in its life. The supervisor moves it along the transitions
// in agentTransitions, under one lock; every start of an agent is a new generation, and what a
// start or a watcher of an older generation reports changes nothing.
type agentState int

const (
	// agentIdle: nothing started yet (before initialize).
	agentIdle agentState = iota
	// agentStarting: the process runs; initialize and nes/start are under way.
	agentStarting
	// agentSigningIn: the agent asked for sign-in; it is kept while the user decides.
	agentSigningIn
	// agentReady: requests and document events go to the agent.
	agentReady
	// agentBackingOff: the agent exited (or is being restarted); it starts again after a wait.
	agentBackingOff
	// agentGivenUp: the agent could not start, refused, or exited too often; the restart command
	// tries again.
	agentGivenUp
	// agentClosing: the editor is leaving; the agent is being closed.
	agentClosing
	// agentClosed: the editor has left; nothing starts any more.
	agentClosed
)

func (st agentState) String() string {
	return [...]string{"idle", "starting", "signing in", "ready", "backing off", "given up", "closing", "closed"}[st]
}

// agentTransitions lists, for each state, the states it may move to.
var agentTransitions = map[agentState][]agentState{
	agentIdle:       {agentStarting, agentClosing},
	agentStarting:   {agentSigningIn, agentReady, agentBackingOff, agentGivenUp, agentClosing},
	agentSigningIn:  {agentReady, agentBackingOff, agentGivenUp, agentClosing},
	agentReady:      {agentSigningIn, agentBackingOff, agentGivenUp, agentClosing},
	agentBackingOff: {agentStarting, agentGivenUp, agentClosing},
	agentGivenUp:    {agentBackingOff, agentClosing},
	agentClosing:    {agentClosed},
	agentClosed:     {},
}

// supervisor owns the agent's life: its state, its current generation and agent, what the user
// was last told about it, and the exits that decide whether it is started again.
type supervisor struct {
	log           zerolog.Logger
	restartLimit  int
	restartWindow time.Duration

	mu      sync.Mutex
	state   agentState
	gen     uint64         // the current generation; each start takes a new one
	agent   *acpside.Agent // the current generation's agent, once started
	why     string         // why there is no ready agent: what the user was last told
	dialog  bool           // a sign-in dialog is running
	exits   []time.Time    // the agent's exits within restartWindow
	leaving chan struct{}  // closed when the editor starts leaving: ends a start, a backoff

	// spawning counts the starts between begin and the agent attached or closed: the bridge
	// waits for them before it exits, so that no agent is started and then left behind (on
	// Windows a process joins its Job Object only once started).
	spawning  sync.WaitGroup
	closeOnce sync.Once
	// changed, when set, is called (under the lock: it must not block) after each change of
	// state or of what the user was told.
	changed func()
}

func newSupervisor(log zerolog.Logger, restartLimit int, restartWindow time.Duration) *supervisor {
	return &supervisor{log: log, restartLimit: restartLimit, restartWindow: restartWindow, leaving: make(chan struct{})}
}

// move changes the state when the transition is allowed; the lock is held.
func (v *supervisor) move(to agentState) bool {
	for _, ok := range agentTransitions[v.state] {
		if ok == to {
			v.log.Debug().Str("from", v.state.String()).Str("to", to.String()).Uint64("generation", v.gen).Msg("agent state")
			v.state = to
			if v.changed != nil {
				v.changed()
			}
			return true
		}
	}
	return false
}

// current reports whether gen is the current generation; the lock is held.
func (v *supervisor) current(gen uint64) bool { return gen == v.gen }

// State returns the state and the current generation.
func (v *supervisor) State() (agentState, uint64) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.state, v.gen
}

// begin starts a new generation: from idle, or after a backoff. It returns false when an agent
// is starting, ready or waiting for sign-in, or the editor is leaving.
func (v *supervisor) begin() (gen uint64, ok bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.state != agentIdle && v.state != agentBackingOff {
		return 0, false
	}
	if !v.move(agentStarting) {
		return 0, false
	}
	v.gen++
	v.agent = nil
	v.spawning.Add(1) // under the lock: after leave, nothing is added
	return v.gen, true
}

// spawned ends what begin counted: the start's process is attached, closed, or was never made.
func (v *supervisor) spawned() { v.spawning.Done() }

// waitSpawning waits, at most d, for the starts under way to attach or close their process.
func (v *supervisor) waitSpawning(d time.Duration) {
	done := make(chan struct{})
	go func() {
		v.spawning.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(d):
	}
}

// attach records the agent that gen started. It returns false when gen is no longer current or
// the editor is leaving: the caller closes the agent.
func (v *supervisor) attach(gen uint64, a *acpside.Agent) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.current(gen) || v.state != agentStarting {
		return false
	}
	v.agent = a
	return true
}

// signingIn moves gen's agent to waiting for sign-in (from starting or ready).
func (v *supervisor) signingIn(gen uint64, why string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.current(gen) || !v.move(agentSigningIn) {
		return false
	}
	v.why = why
	return true
}

// waitingForSignIn returns the agent waiting for sign-in and its generation.
func (v *supervisor) waitingForSignIn() (*acpside.Agent, uint64, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.state != agentSigningIn || v.agent == nil {
		return nil, 0, false
	}
	return v.agent, v.gen, true
}

// ready makes gen's agent the one requests go to (from starting or signing in).
func (v *supervisor) ready(gen uint64, a *acpside.Agent) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.current(gen) || v.agent != a || !v.move(agentReady) {
		return false
	}
	v.why = ""
	return true
}

// readyAgent returns the agent when it is ready.
func (v *supervisor) readyAgent() *acpside.Agent {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.state != agentReady {
		return nil
	}
	return v.agent
}

// readyGen returns the agent and its generation when it is ready and is a.
func (v *supervisor) readyGen(a *acpside.Agent) (uint64, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.state != agentReady || v.agent != a {
		return 0, false
	}
	return v.gen, true
}

// fail gives up on gen's agent (it could not start, or refused): the user was told why.
func (v *supervisor) fail(gen uint64, why string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.current(gen) || (v.state != agentStarting && v.state != agentSigningIn) || !v.move(agentGivenUp) {
		return false
	}
	v.why, v.agent = why, nil
	return true
}

// exited records that gen's agent ended (or failed to start again) while it was starting,
// waiting for sign-in or ready. Within the restart limit it backs off and is started again;
// past it, the bridge gives up. n is the number of exits within the window; ok is false when gen
// is not current or the agent was not in one of those states (the bridge closed it).
func (v *supervisor) exited(gen uint64, now time.Time, why func(n int, giveUp bool) string) (n int, giveUp, ok bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.current(gen) || (v.state != agentStarting && v.state != agentSigningIn && v.state != agentReady) {
		return 0, false, false
	}
	kept := v.exits[:0]
	for _, t := range v.exits {
		if now.Sub(t) < v.restartWindow {
			kept = append(kept, t)
		}
	}
	v.exits = append(kept, now)
	n = len(v.exits)
	giveUp = n > v.restartLimit
	to := agentBackingOff
	if giveUp {
		to = agentGivenUp
	}
	if !v.move(to) {
		return 0, false, false
	}
	v.agent = nil
	v.why = why(n, giveUp)
	return n, giveUp, true
}

// restart takes the agent (whatever its state but starting and leaving) so that it is closed and
// started again, and forgets its exits. It returns false, with the reason, when it cannot.
func (v *supervisor) restart() (old *acpside.Agent, refused string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	switch v.state {
	case agentStarting:
		return nil, "acp-lsp-bridge: the agent is starting already."
	case agentClosing, agentClosed:
		return nil, "acp-lsp-bridge: the editor is leaving; the agent is not restarted."
	}
	if v.state != agentIdle && v.state != agentBackingOff {
		v.move(agentBackingOff)
	}
	old = v.agent
	v.agent = nil
	v.gen++ // what the old generation still reports changes nothing
	v.exits = nil
	v.why = "acp-lsp-bridge: the agent is restarting."
	return old, ""
}

// beginDialog marks a sign-in dialog as running; false when one already runs.
func (v *supervisor) beginDialog() bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.dialog {
		return false
	}
	v.dialog = true
	return true
}

func (v *supervisor) endDialog() {
	v.mu.Lock()
	v.dialog = false
	v.mu.Unlock()
}

// whyNotReady says why there is no ready agent.
func (v *supervisor) whyNotReady() string {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.why != "" {
		return v.why
	}
	return "acp-lsp-bridge: the agent is still starting; there are no suggestions until it is ready."
}

// leave starts the editor's leaving: nothing starts any more, a start or a backoff under way
// ends, and the agent (if any) is returned to be closed. Later calls return nil.
func (v *supervisor) leave() *acpside.Agent {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.state == agentClosing || v.state == agentClosed {
		return nil
	}
	v.move(agentClosing)
	close(v.leaving)
	a := v.agent
	v.agent = nil
	v.gen++
	return a
}

// leavingNow reports whether the editor is leaving.
func (v *supervisor) leavingNow() bool {
	select {
	case <-v.leaving:
		return true
	default:
		return false
	}
}

// closed marks the agent closed, once leave's agent has been.
func (v *supervisor) closed() {
	v.mu.Lock()
	v.move(agentClosed)
	v.mu.Unlock()
}

// startError is an agent's exit told as at its first start (msg, a whole sentence): its exit
// status and what it wrote as it exited, not the protocol's error. It is how an agent that could
// not start again ended, or one that exited while it ran.
type startError struct{ msg string }

func (e startError) Error() string { return e.msg }

// exitWhy is what the user is told when the agent exited: restarting, or given up.
func exitWhy(name string, n int, window time.Duration, why error, giveUp bool) string {
	if se := (startError{}); errors.As(why, &se) {
		msg := strings.TrimSuffix(se.msg, ".") + "."
		if giveUp {
			return fmt.Sprintf("%s The bridge stopped restarting it (%d exits in %s); run the command %s to try again.", msg, n, window, CommandRestart)
		}
		return msg + " Restarting it."
	}
	if giveUp {
		return fmt.Sprintf("acp-lsp-bridge: %s exited %d times in %s (last: %v); the bridge stopped restarting it. "+
			"Its error output is in the bridge's log; run the command %s to try again.", name, n, window, why, CommandRestart)
	}
	return fmt.Sprintf("acp-lsp-bridge: %s exited (%v); restarting it.", name, why)
}
