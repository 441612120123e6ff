package lspside

import (
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/acpside"
)

// TestSupervisorTransitions drives the agent's state machine through each state, then applies
// each event there: what is allowed moves it, what is not changes nothing, and what a start of an
// older generation reports is ignored. The editor leaving is tried in every state.
func TestSupervisorTransitions(t *testing.T) {
	a := &acpside.Agent{}
	why := func(int, bool) string { return "exited" }
	// reach brings a new supervisor to a state and returns the generation of its agent.
	reach := map[agentState]func(v *supervisor) uint64{
		agentIdle: func(v *supervisor) uint64 { return 0 },
		agentStarting: func(v *supervisor) uint64 {
			g, _ := v.begin()
			v.attach(g, a)
			return g
		},
		agentSigningIn: func(v *supervisor) uint64 {
			g, _ := v.begin()
			v.attach(g, a)
			v.signingIn(g, "sign in")
			return g
		},
		agentReady: func(v *supervisor) uint64 {
			g, _ := v.begin()
			v.attach(g, a)
			v.ready(g, a)
			return g
		},
		agentBackingOff: func(v *supervisor) uint64 {
			g, _ := v.begin()
			v.attach(g, a)
			v.ready(g, a)
			v.exited(g, time.Now(), why)
			return g
		},
		agentGivenUp: func(v *supervisor) uint64 {
			g, _ := v.begin()
			v.fail(g, "refused")
			return g
		},
		agentClosing: func(v *supervisor) uint64 { v.leave(); return 0 },
		agentClosed:  func(v *supervisor) uint64 { v.leave(); v.closed(); return 0 },
	}
	type event struct {
		name string
		do   func(v *supervisor, gen uint64) bool
	}
	events := []event{
		{"begin", func(v *supervisor, _ uint64) bool { _, ok := v.begin(); return ok }},
		{"signingIn", func(v *supervisor, g uint64) bool { return v.signingIn(g, "sign in") }},
		{"ready", func(v *supervisor, g uint64) bool { return v.ready(g, a) }},
		{"exited", func(v *supervisor, g uint64) bool { _, _, ok := v.exited(g, time.Now(), why); return ok }},
		{"fail", func(v *supervisor, g uint64) bool { return v.fail(g, "refused") }},
		{"restart", func(v *supervisor, _ uint64) bool { _, refused := v.restart(); return refused == "" }},
		{"leave", func(v *supervisor, _ uint64) bool { v.leave(); return true }},
	}
	// want[state][event] is the state after the event, for the events that apply there.
	want := map[agentState]map[string]agentState{
		agentIdle:       {"begin": agentStarting, "restart": agentIdle, "leave": agentClosing},
		agentStarting:   {"signingIn": agentSigningIn, "ready": agentReady, "exited": agentBackingOff, "fail": agentGivenUp, "leave": agentClosing},
		agentSigningIn:  {"ready": agentReady, "exited": agentBackingOff, "fail": agentGivenUp, "restart": agentBackingOff, "leave": agentClosing},
		agentReady:      {"signingIn": agentSigningIn, "exited": agentBackingOff, "restart": agentBackingOff, "leave": agentClosing},
		agentBackingOff: {"begin": agentStarting, "restart": agentBackingOff, "leave": agentClosing},
		agentGivenUp:    {"restart": agentBackingOff, "leave": agentClosing},
		agentClosing:    {"leave": agentClosing},
		agentClosed:     {"leave": agentClosed},
	}
	for from, events2 := range want {
		for _, ev := range events {
			v := newSupervisor(zerolog.Nop(), 5, time.Minute)
			gen := reach[from](v)
			if st, _ := v.State(); st != from {
				t.Fatalf("reaching %s got to %s", from, st)
			}
			to, allowed := events2[ev.name]
			ok := ev.do(v, gen)
			st, _ := v.State()
			switch {
			case allowed && (!ok || st != to):
				t.Errorf("%s, %s: ok %v, state %s; want %s", from, ev.name, ok, st, to)
			case !allowed && (ok || st != from):
				t.Errorf("%s, %s: ok %v, state %s; want it refused, still %s", from, ev.name, ok, st, from)
			}
			// What the previous generation reports changes nothing.
			if gen > 0 && from != agentClosing && from != agentClosed {
				v2 := newSupervisor(zerolog.Nop(), 5, time.Minute)
				g := reach[from](v2)
				if _, refused := v2.restart(); refused != "" {
					continue // starting: the user is told to wait, the generation stays
				}
				before, _ := v2.State()
				if v2.ready(g, a) || v2.signingIn(g, "x") || v2.fail(g, "x") {
					t.Errorf("%s: an event of the generation before a restart was taken", from)
				}
				if _, _, ok := v2.exited(g, time.Now(), why); ok {
					t.Errorf("%s: the exit of the generation before a restart was counted", from)
				}
				if after, _ := v2.State(); after != before {
					t.Errorf("%s: a stale event moved the state from %s to %s", from, before, after)
				}
			}
		}
	}
	// The editor leaving in each state hands over the agent to close, once, and nothing starts.
	for from := range want {
		v := newSupervisor(zerolog.Nop(), 5, time.Minute)
		reach[from](v)
		hasAgent := from == agentStarting || from == agentSigningIn || from == agentReady
		got := v.leave()
		if (got != nil) != hasAgent {
			t.Errorf("leave in %s: agent %v, want one: %v", from, got, hasAgent)
		}
		if v.leave() != nil {
			t.Errorf("leave in %s: the agent handed over twice", from)
		}
		if !v.leavingNow() {
			t.Errorf("leave in %s: a start under way is not told", from)
		}
		if _, ok := v.begin(); ok {
			t.Errorf("leave in %s: an agent started after it", from)
		}
	}
}

// TestSupervisorGivesUpAfterTooManyExits: the sixth exit within the window gives up; the restart
// command forgets them.
func TestSupervisorGivesUpAfterTooManyExits(t *testing.T) {
	v := newSupervisor(zerolog.Nop(), 5, time.Minute)
	a := &acpside.Agent{}
	now := time.Now()
	for i := 1; i <= 6; i++ {
		g, ok := v.begin()
		if !ok {
			t.Fatalf("start %d refused", i)
		}
		v.attach(g, a)
		v.ready(g, a)
		n, giveUp, ok := v.exited(g, now.Add(time.Duration(i)*time.Second), func(n int, giveUp bool) string { return "" })
		if !ok || n != i || giveUp != (i == 6) {
			t.Fatalf("exit %d: n %d giveUp %v ok %v", i, n, giveUp, ok)
		}
	}
	if st, _ := v.State(); st != agentGivenUp {
		t.Fatalf("state %s after 6 exits", st)
	}
	if _, ok := v.begin(); ok {
		t.Fatal("started again after giving up")
	}
	v.restart()
	g, ok := v.begin()
	if !ok {
		t.Fatal("the restart command did not start it")
	}
	v.attach(g, a)
	v.ready(g, a)
	if n, giveUp, _ := v.exited(g, now.Add(10*time.Second), func(int, bool) string { return "" }); n != 1 || giveUp {
		t.Errorf("after a restart: exit %d, giveUp %v; want the count started over", n, giveUp)
	}
}

// TestStartingLeavesTheConfiguredCommandAlone: each start works on its own copy of the agent's
// command (its folder is set on it), so the configuration stays as the user wrote it.
func TestStartingLeavesTheConfiguredCommandAlone(t *testing.T) {
	conf := &acpside.Command{Path: "agent", Args: []string{"--acp"}}
	s := &Server{cfg: Config{Agent: conf}}
	c, builtin := s.agentCommand()
	if builtin || c == conf || c.Path != "agent" {
		t.Fatalf("command %+v (builtin %v)", c, builtin)
	}
	c.Dir, c.Args[0] = "/work", "--changed"
	if conf.Dir != "" || conf.Args[0] != "--acp" {
		t.Errorf("the configured command changed: %+v", conf)
	}
}

// TestLeavingWaitsForAStartUnderWay: the editor leaving while an agent's process is being made
// waits until the start has attached or closed it, so the bridge never exits with it half made.
func TestLeavingWaitsForAStartUnderWay(t *testing.T) {
	v := newSupervisor(zerolog.Nop(), 5, time.Minute)
	if _, ok := v.begin(); !ok {
		t.Fatal("begin refused")
	}
	if a := v.leave(); a != nil {
		t.Fatalf("leave handed over %v before anything was attached", a)
	}
	waited := make(chan struct{})
	go func() {
		v.waitSpawning(10 * time.Second)
		close(waited)
	}()
	select {
	case <-waited:
		t.Fatal("leaving did not wait for the start under way")
	case <-time.After(50 * time.Millisecond):
	}
	v.spawned() // the start saw it could not attach and closed its process
	select {
	case <-waited:
	case <-time.After(5 * time.Second):
		t.Fatal("leaving still waits after the start ended")
	}
}

// TestExitWhyOfAStartAgain: an agent that cannot start again is told as at its first start, then
// what the bridge does: restart it, or give up.
func TestExitWhyOfAStartAgain(t *testing.T) {
	why := startError{"acp-lsp-bridge: the agent `x` exited (exit status 41) before answering initialize. It wrote: expired"}
	if got, want := exitWhy("X", 2, time.Minute, why, false), why.msg+". Restarting it."; got != want {
		t.Errorf("restarting: %q, want %q", got, want)
	}
	if got, want := exitWhy("X", 5, time.Minute, why, true), why.msg+". The bridge stopped restarting it (5 exits in 1m0s); run the command acp-lsp-bridge.restart to try again."; got != want {
		t.Errorf("giving up: %q, want %q", got, want)
	}
}
