package lspside

import (
	"context"
	"fmt"
	"time"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/workspace"
)

// NotifyStatus is the bridge's notification of its state to the editor: Status, sent after
// initialized whenever it changes (docs/surfaces.md).
const NotifyStatus = "acp-lsp-bridge/status"

// The states of Status.
const (
	// StatusStarting: the agent is starting, or starting again after it exited.
	StatusStarting = "starting"
	// StatusSigningIn: the agent waits for the user to sign in.
	StatusSigningIn = "signingIn"
	// StatusReady: suggestions come while you type and when you ask.
	StatusReady = "ready"
	// StatusAsking: the agent has been asked about the document for a while and not answered yet.
	StatusAsking = "asking"
	// StatusOff: suggestions while typing are off for the document (the switch); asking by hand
	// still works.
	StatusOff = "off"
	// StatusExcluded: the document is kept from the agent (an exclusion glob, or its size).
	StatusExcluded = "excluded"
	// StatusFailed: the agent could not start, or exited too often, and the bridge gave up until
	// the restart command; or the agent's service refused its key or its address, or nothing
	// answers at its address, or it failed three suggestions in a row (health.go), until it
	// answers again.
	StatusFailed = "failed"
)

// Status is NotifyStatus's params: the bridge's state as it concerns the document the user is in.
type Status struct {
	State string `json:"state"`
	// Message says it in a sentence, for a tooltip or a health check.
	Message string `json:"message"`
	// URI is the document the user is in, which the state is about; empty when none is known.
	URI string `json:"uri,omitempty"`
	// Agent is the agent's name, once it has started.
	Agent string `json:"agent,omitempty"`
}

// askingAfter is how long a nes/suggest must be in flight before the state is "asking": a quick
// answer changes nothing the user sees (docRequests pokes the publisher only after it).
const askingAfter = 150 * time.Millisecond

// statusNow is the bridge's state now.
func (s *Server) statusNow(now time.Time) Status {
	uri := s.reqs.activeDoc()
	st := Status{URI: uri}
	state, _ := s.sup.State()
	switch state {
	case agentIdle, agentStarting, agentBackingOff:
		st.State, st.Message = StatusStarting, "acp-lsp-bridge: the agent is starting."
		return st
	case agentSigningIn:
		st.State, st.Message = StatusSigningIn, s.notReady()
		return st
	case agentGivenUp:
		st.State, st.Message = StatusFailed, s.notReady()
		return st
	case agentClosing, agentClosed:
		return Status{}
	}
	agent := s.currentAgent()
	if agent == nil {
		st.State, st.Message = StatusStarting, "acp-lsp-bridge: the agent is starting."
		return st
	}
	name := agent.Name()
	st.Agent = name
	base := workspace.Host.Base(uriPath(uri))
	if glob, ok := s.secret.glob(uri); ok {
		st.State, st.Message = StatusExcluded, fmt.Sprintf("%s is kept from the agent (exclusion glob %q): no suggestions for it.", base, glob)
		return st
	}
	if uri != "" && s.isWithheld(uri) {
		st.State, st.Message = StatusExcluded, fmt.Sprintf("%s is too large to send to the agent: no suggestions for it.", base)
		return st
	}
	if since, ok := s.reqs.askingSince(uri); ok && now.Sub(since) >= askingAfter {
		st.State, st.Message = StatusAsking, fmt.Sprintf("asking %s…", name)
		return st
	}
	if state, msg := s.health.state(agent, name, now); state != "" {
		st.State, st.Message = state, msg
		return st
	}
	return s.restingStatus(st, uri, base, name, agent.Prompted())
}

// restingStatus is the state of a ready agent that is not being asked: off, or ready.
func (s *Server) restingStatus(st Status, uri, base, name string, prompted bool) Status {
	if !s.reqs.automatic(uri) {
		where := "every file"
		if uri != "" && s.reqs.ownSwitch(uri) {
			where = base
		}
		st.State, st.Message = StatusOff, fmt.Sprintf("suggestions while typing are off for %s; asking by hand still works (the command %s turns them on).", where, CommandEnable)
		return st
	}
	st.State, st.Message = StatusReady, fmt.Sprintf("%s is ready.", name)
	if prompted {
		if s.promptsMode() == PromptsAuto {
			st.Message = fmt.Sprintf("%s is ready; it is asked through prompts, also while you type.", name)
		} else {
			st.Message = fmt.Sprintf("%s is ready; it is asked through prompts, only when you ask.", name)
		}
	}
	return st
}

// statusPublisher sends NotifyStatus whenever the state changes: on each poke it looks at the
// state, and sends it when it differs from what was sent last. It runs from initialized until the
// connection ends.
type statusPublisher struct {
	poke chan struct{}
}

func newStatusPublisher() *statusPublisher { return &statusPublisher{poke: make(chan struct{}, 1)} }

// changed asks the publisher to look at the state again; it never blocks, and may be called under
// any lock.
func (p *statusPublisher) changed() {
	select {
	case p.poke <- struct{}{}:
	default:
	}
}

// publishStatus runs the publisher until done is closed. While the agent starts, a person waits:
// the editor shows it as work-done progress too ($/progress, when it supports it).
func (s *Server) publishStatus(done <-chan struct{}) {
	var last Status
	var endStarting func()
	defer func() {
		if endStarting != nil {
			endStarting()
		}
	}()
	for {
		st := s.statusNow(time.Now())
		if st.State != "" && st != last {
			last = st
			s.log.Debug().Str("state", st.State).Str("uri", st.URI).Msg(NotifyStatus)
			if err := s.conn.Notify(context.Background(), NotifyStatus, st); err != nil {
				s.log.Debug().Err(err).Msg(NotifyStatus)
			}
		}
		switch {
		case st.State == StatusStarting && endStarting == nil:
			endStarting = s.progress(context.Background(), "acp-lsp-bridge", "starting the agent…")
		case st.State != StatusStarting && endStarting != nil:
			endStarting()
			endStarting = nil
		}
		select {
		case <-s.status.poke:
		case <-done:
			return
		}
	}
}
