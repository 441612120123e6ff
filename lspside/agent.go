package lspside

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"strings"
	"time"

	acp "github.com/coder/acp-go-sdk"
	"go.lsp.dev/protocol"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/acpside"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/workspace"
)

const noAgentMessage = "acp-lsp-bridge: no agent is configured, so there will be no suggestions. " +
	"Start the bridge as `acp-lsp-bridge -- AGENT [ARGS...]`, or set initializationOptions.agent = {command, args, env}."

// startAgent starts the agent, runs initialize and nes/start, replays the open documents to it and
// marks it ready. On failure the user is told once and the bridge keeps serving empty results.
func (s *Server) startAgent(ctx context.Context) { s.launch(ctx, false) }

// agentCommand is the agent to start: the bridge's flag, else initializationOptions.agent, else
// the built-in agent (when there is one and no test connects its own). It is a copy: starting it
// changes nothing of the configuration.
func (s *Server) agentCommand() (cmd *acpside.Command, builtin bool) {
	c := s.cfg.Agent
	if o := s.session().init.InitializationOptions; c == nil && o != nil {
		c = o.Agent
	}
	if (c == nil || c.Path == "") && s.cfg.DefaultAgent != nil && s.cfg.ConnectAgent == nil {
		c, builtin = s.cfg.DefaultAgent, true
	}
	if c == nil {
		return nil, false
	}
	cp := *c
	cp.Args = append([]string(nil), c.Args...)
	return &cp, builtin
}

// launch starts a new generation of the agent; restart is set when it replaces one that exited
// or the user restarts it, whose failures to start count as further exits.
func (s *Server) launch(ctx context.Context, restart bool) {
	gen, ok := s.sup.begin()
	if !ok {
		return
	}
	spawning := true
	endSpawn := func() {
		if spawning {
			spawning = false
			s.sup.spawned()
		}
	}
	defer endSpawn()
	cmd, builtin := s.agentCommand()
	if builtin && !restart {
		s.logMessage(ctx, protocol.MessageTypeInfo, "acp-lsp-bridge: no agent is configured; using the built-in agent "+
			"(rename propagation and repeated edits, no model). Set `-- AGENT` or initializationOptions.agent for another.")
	}
	agent, err := s.connectAgent(cmd)
	if err != nil {
		if restart && cmd != nil && cmd.Path != "" {
			s.agentExited(ctx, gen, "the agent", err)
			return
		}
		s.agentFailed(ctx, gen, startFailure(err), err)
		return
	}
	if !s.sup.attach(gen, agent) {
		agent.Close(ctx) // the editor left, or the user restarted it, meanwhile
		return
	}
	endSpawn() // attached: whoever ends the supervisor's agent ends this one
	ictx, cancel := context.WithTimeout(ctx, s.cfg.StartTimeout)
	defer cancel()
	// The editor leaving ends the start: an agent still starting is closed with the bridge, not
	// left running until it answers or the start timeout ends it.
	go func() {
		select {
		case <-s.sup.leaving:
			cancel()
		case <-ictx.Done():
		}
	}()
	resp, err := agent.Initialize(ictx)
	name := "the agent"
	if resp != nil {
		name = acpside.DisplayName(resp.AgentInfo)
	}
	if err != nil && s.leftWhileStarting(ctx, agent) {
		return
	}
	if err != nil {
		switch {
		case errors.Is(err, acpside.ErrNoNES):
			// Told at once: closing an agent can take seconds (it is given time to exit).
			s.agentFailed(ctx, gen, noNESMessage(name), err)
			agent.Close(ctx)
		case restart:
			// Told as at the first start (a started-again agent that cannot start usually says why
			// on its way out), then counted as an exit.
			msg := initFailure(agent, cmd, name, err)
			agent.Close(ctx)
			s.agentExited(ctx, gen, name, startError{msg})
		default:
			s.agentFailed(ctx, gen, initFailure(agent, cmd, name, err), err)
			agent.Close(ctx)
		}
		return
	}
	go s.watchAgent(ctx, gen, agent, name)
	err = agent.StartNES(ictx, s.startRequest())
	if err != nil && s.leftWhileStarting(ctx, agent) {
		return
	}
	if err != nil && endedWithin(agent, 100*time.Millisecond) {
		return // watchAgent counts it as an exit
	}
	if agent.Prompted() && !restart && (err == nil || acpside.AuthRequired(err)) {
		// Said before any sign-in question: the user learns what the agent will cost first.
		s.promptedReady(ctx, name)
	}
	switch {
	case err != nil && acpside.AuthRequired(err):
		// The editor keeps working (requests answer empty at once) while the user is asked to
		// sign in.
		if !s.sup.signingIn(gen, fmt.Sprintf("acp-lsp-bridge: %s is waiting for you to sign in.", name)) {
			agent.Close(ctx)
			return
		}
		s.log.Info().Str("agent", name).Msg("the agent requires authentication")
		if s.signIn(ctx, agent, name) {
			s.becomeReady(ctx, gen, agent, name)
		}
		return
	case errors.Is(err, acpside.ErrNoNES):
		s.agentFailed(ctx, gen, fmt.Sprintf("acp-lsp-bridge: %s does not offer Next Edit Suggestions, nor ACP sessions to ask it through prompts, so there will be no suggestions. "+
			"For suggestions, remove the agent setting to use the bridge's built-in agent, use a model agent (`acp-lsp-bridge agent --model-url URL --model NAME`), "+
			"or check another agent with `acp-lsp-bridge doctor -- COMMAND`.", name), err)
		agent.Close(ctx)
		return
	case err != nil:
		agent.Close(ctx)
		s.agentFailed(ctx, gen, fmt.Sprintf("acp-lsp-bridge: %s refused to start a Next Edit Suggestions session: %v", name, err), err)
		return
	}
	s.becomeReady(ctx, gen, agent, name)
}

// leftWhileStarting closes an agent whose start failed because the editor left meanwhile, and
// reports whether that was so: nothing to tell anyone then.
func (s *Server) leftWhileStarting(ctx context.Context, agent *acpside.Agent) bool {
	if !s.sup.leavingNow() {
		return false
	}
	s.log.Info().Msg("the editor left while the agent was starting; the agent is closed")
	agent.Close(ctx)
	return true
}

// startRequest is the nes/start request: the workspace and its repository.
func (s *Server) startRequest() acp.UnstableStartNesRequest {
	return s.workspace().start
}

// becomeReady makes a started agent (its NES session open) the one requests go to: the open
// documents are replayed to it, in order with every later document event.
func (s *Server) becomeReady(ctx context.Context, gen uint64, agent *acpside.Agent, name string) {
	select {
	case <-agent.Done():
		return // watchAgent counts it as an exit
	default:
	}
	s.fwd.Lock()
	if !s.sup.ready(gen, agent) {
		// The editor is leaving, the agent ended or the user restarted it: whoever moved it on
		// closes it.
		s.fwd.Unlock()
		return
	}
	s.log.Info().Str("agent", name).Str("encoding", agent.Encoding().String()).Interface("events", agent.Events()).Msg("agent ready")
	if agent.Events().DidOpen {
		for _, snap := range s.docs.All() {
			s.catchUp(ctx, agent, snap)
		}
	}
	s.unseen = nil
	// The user is somewhere already: tell an agent that listens for focus where.
	active := s.reqs.activeDoc()
	if snap, ok := s.docs.Get(active); ok && agent.Events().DidFocus {
		s.focus(ctx, snap, -1, s.ed.Visible(active))
	}
	s.fwd.Unlock()
	sync := "incremental"
	if agent.Events().FullSync {
		sync = "full"
	}
	s.logMessage(ctx, protocol.MessageTypeInfo, fmt.Sprintf("acp-lsp-bridge: %s is ready (positions %s, document sync %s).", name, agent.Encoding(), sync))
}

func (s *Server) connectAgent(cmd *acpside.Command) (*acpside.Agent, error) {
	opts := acpside.ClientOptions(s.log, s.cfg.Version)
	opts.Late = s.sugs.endLate
	// The file system (fs.go) and the editor state (editorstate.go) are answered here.
	opts.Handler = s.agentRequest
	opts.StuckAfter = s.cfg.StuckAfter
	opts.Prompts = s.promptOptions()
	if s.cfg.Trace != nil {
		opts.Trace = s.cfg.Trace.Record
	}
	if s.cfg.ConnectAgent != nil {
		return s.cfg.ConnectAgent(opts)
	}
	if cmd == nil || cmd.Path == "" {
		return nil, errors.New(noAgentMessage)
	}
	if root := s.workspace().root; root != "" {
		cmd.Dir = root // cmd is the launch's own copy
	}
	return acpside.Start(*cmd, opts)
}

// noNESMessage tells the user that the agent named offers no Next Edit Suggestions and prompts are
// off, and what to do.
func noNESMessage(name string) string {
	return fmt.Sprintf("acp-lsp-bridge: %s does not offer Next Edit Suggestions and prompts are off (prompts \"off\"), so there will be no suggestions. "+
		"For suggestions, allow prompts (initializationOptions.prompts \"explicit\" or --prompts explicit), remove the agent setting to use the bridge's built-in agent, "+
		"use a model agent (`acp-lsp-bridge agent --model-url URL --model NAME`), or check another agent with `acp-lsp-bridge doctor -- COMMAND`.", name)
}

// exitedMessage tells the user that who's process ended (before answering step, when it is set),
// how it ended, and the last lines it wrote to stderr, which usually say why.
func exitedMessage(who, status, step string, stderr []string) string {
	msg := fmt.Sprintf("acp-lsp-bridge: %s exited (%s)", who, status)
	if step != "" {
		msg += " before answering " + step
	}
	msg += "."
	if len(stderr) > 0 {
		msg += " It wrote: " + strings.Join(stderr, " | ")
	}
	return msg
}

// commandName names the agent by its command, before it has said its name.
func commandName(cmd *acpside.Command) string {
	if cmd != nil && cmd.Path != "" {
		return fmt.Sprintf("the agent `%s`", cmd)
	}
	return "the agent"
}

// initFailure is what the user is told of an agent whose initialize failed: its exit status and
// what it wrote, when it exited; else the agent's error.
func initFailure(agent *acpside.Agent, cmd *acpside.Command, name string, err error) string {
	if status, stderr, ok := agent.Exited(time.Second); ok {
		return exitedMessage(commandName(cmd), status, "initialize", stderr)
	}
	return fmt.Sprintf("acp-lsp-bridge: %s did not initialize: %v", name, err)
}

// startFailure tells the user that the agent could not be started, with what to do when its
// command was not found.
func startFailure(err error) string {
	msg := err.Error()
	if !strings.HasPrefix(msg, "acp-lsp-bridge:") {
		msg = "acp-lsp-bridge: cannot start the agent: " + msg
	}
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
		msg += ". Put the agent's folder on the PATH the editor starts the bridge with, give its absolute path, " +
			"or run a package through npx (command `npx`, args [\"-y\", \"PACKAGE\"])."
	}
	return msg
}

// agentFailed gives up on gen's agent and tells the user why, once.
func (s *Server) agentFailed(ctx context.Context, gen uint64, msg string, err error) {
	if !s.sup.fail(gen, msg) {
		return
	}
	s.log.Error().Err(err).Msg("no agent")
	s.showMessage(ctx, protocol.MessageTypeError, msg)
}

// watchAgent notices gen's agent ending while it starts, waits for sign-in or is ready, and has
// it restarted. The ended agent is closed then: a process that hung up but still runs, and what
// it started, end; its pipes are released; its faults are logged. (Whoever took the agent before
// it ended, a restart or the editor leaving, closes it too; the later Close waits for the first.)
func (s *Server) watchAgent(ctx context.Context, gen uint64, agent *acpside.Agent, name string) {
	<-agent.Done()
	s.agentExited(ctx, gen, name, endOf(agent, name))
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	agent.Close(cctx)
}

// endOf says how a running agent ended: the bridge ended it (it was stuck); else, as at a first
// start, its exit status and the last lines it wrote to stderr, which usually say why; else (no
// process of the bridge's to wait for, or one still running after its output closed) only that
// it exited.
func endOf(agent *acpside.Agent, name string) error {
	if r := agent.Stuck(); r != "" {
		return fmt.Errorf("the bridge ended it: %s", r)
	}
	if status, stderr, ok := agent.Exited(time.Second); ok {
		return startError{exitedMessage(name, status, "", stderr)}
	}
	return errors.New("the agent exited")
}

// currentAgent returns the agent if it is ready, without waiting. Nothing waits for the agent:
// until it is ready, requests answer empty.
func (s *Server) currentAgent() *acpside.Agent { return s.sup.readyAgent() }

// notReady says why there is no ready agent: what the user was last told, or that it is starting.
func (s *Server) notReady() string { return s.sup.whyNotReady() }

// shutdownAgent ends every live suggestion, then the NES session and the agent's process group;
// nothing starts afterwards. A second call waits for the first to finish.
func (s *Server) shutdownAgent() {
	s.sup.closeOnce.Do(func() {
		agent := s.sup.leave()
		// A start under way attaches its process (which leave missed) or closes it itself.
		s.sup.waitSpawning(10 * time.Second)
		if agent != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			s.sugs.endAll(ctx, agent, acp.UnstableNesRejectReasonIgnored)
			agent.Close(ctx)
		}
		s.sup.closed()
	})
}

// uriPath is the host's path of a file: URI, however the editor spelled it; any other URI is
// returned as it is.
func uriPath(u string) string { return workspace.URIPath(u) }

// endedWithin reports whether an agent's connection ends within d: a request that failed because
// the agent died may return just before the connection notices.
func endedWithin(a *acpside.Agent, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-a.Done():
		return true
	case <-t.C:
		return false
	}
}

// sendFailed logs a message the agent could not be sent. Once its connection has ended, every
// send fails until watchAgent restarts it: those are logged at debug level, not one error per
// keystroke.
func (s *Server) sendFailed(agent *acpside.Agent, what string, err error) {
	if agent != nil && agent.Ended() {
		s.log.Debug().Str("dir", "bridge→agent").Err(err).Msg(what + " (the agent has exited)")
		return
	}
	s.log.Error().Str("dir", "bridge→agent").Err(err).Msg(what)
}
