package lspside

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	acp "github.com/coder/acp-go-sdk"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/acpside"
)

const noAgentMessage = "acp-lsp-bridge: no agent is configured, so there will be no suggestions. " +
	"Start the bridge as `acp-lsp-bridge -- AGENT [ARGS...]`, or set initializationOptions.agent = {command, args, env}."

// startAgent starts the agent, runs initialize and nes/start, replays the open documents to it and
// marks it ready. On failure the user is told once and the bridge keeps serving empty results.
func (s *Server) startAgent(ctx context.Context) { s.launch(ctx, false) }

// launch starts the agent; restart is set when it replaces one that exited (supervise.go), whose
// failures to start count as further exits.
func (s *Server) launch(ctx context.Context, restart bool) {
	s.mu.Lock()
	if s.launching || s.ended {
		s.mu.Unlock()
		return
	}
	s.launching = true
	cmd := s.cfg.Agent
	if cmd == nil && s.init.InitializationOptions != nil {
		cmd = s.init.InitializationOptions.Agent
	}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.launching = false
		s.mu.Unlock()
	}()
	if (cmd == nil || cmd.Path == "") && s.cfg.DefaultAgent != nil && s.cfg.ConnectAgent == nil {
		def := *s.cfg.DefaultAgent
		cmd = &def
		if !restart {
			s.logMessage(ctx, protocol.MessageTypeInfo, "acp-lsp-bridge: no agent is configured; using the built-in agent "+
				"(rename propagation and repeated edits, no model). Set `-- AGENT` or initializationOptions.agent for another.")
		}
	}
	agent, err := s.connectAgent(cmd)
	if err != nil {
		if restart && cmd != nil && cmd.Path != "" {
			s.agentExited(ctx, "the agent", err)
			return
		}
		s.agentFailed(ctx, startFailure(err), err)
		return
	}
	ictx, cancel := context.WithTimeout(ctx, s.cfg.StartTimeout)
	defer cancel()
	// The editor leaving ends the start: an agent still starting is closed with the bridge, not
	// left running until it answers or the start timeout ends it.
	go func() {
		select {
		case <-s.leaving:
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
			s.agentFailed(ctx, noNESMessage(name), err)
			agent.Close(ctx)
		case restart:
			agent.Close(ctx)
			s.agentExited(ctx, name, fmt.Errorf("initialize: %w", err))
		default:
			msg := fmt.Sprintf("acp-lsp-bridge: %s did not initialize: %v", name, err)
			if status, stderr, ok := agent.Exited(time.Second); ok {
				msg = exitedMessage(cmd, status, "initialize", stderr)
			}
			s.agentFailed(ctx, msg, err)
			agent.Close(ctx)
		}
		return
	}
	go s.watchAgent(ctx, agent, name)
	err = agent.StartNES(ictx, s.startRequest())
	if err != nil && s.leftWhileStarting(ctx, agent) {
		return
	}
	if err != nil && restart && agent.Ended() {
		return // watchAgent counts it as an exit
	}
	switch {
	case err != nil && acpside.AuthRequired(err):
		// The editor keeps working (requests answer empty at once) while the user is asked to
		// sign in.
		s.mu.Lock()
		gone := s.ended
		s.agentErr = fmt.Sprintf("acp-lsp-bridge: %s is waiting for you to sign in.", name)
		if !gone {
			s.authAgent = agent
		}
		s.mu.Unlock()
		if gone {
			agent.Close(ctx)
			return
		}
		s.log.Info().Str("agent", name).Msg("the agent requires authentication")
		if s.signIn(ctx, agent, name) {
			s.becomeReady(ctx, agent, name)
		}
		return
	case err != nil:
		agent.Close(ctx)
		s.agentFailed(ctx, fmt.Sprintf("acp-lsp-bridge: %s refused to start a Next Edit Suggestions session: %v", name, err), err)
		return
	}
	s.becomeReady(ctx, agent, name)
}

// leftWhileStarting closes an agent whose start failed because the editor left meanwhile, and
// reports whether that was so: nothing to tell anyone then.
func (s *Server) leftWhileStarting(ctx context.Context, agent *acpside.Agent) bool {
	select {
	case <-s.leaving:
	default:
		return false
	}
	s.log.Info().Msg("the editor left while the agent was starting; the agent is closed")
	agent.Close(ctx)
	return true
}

// startRequest is the nes/start request: the workspace and its repository.
func (s *Server) startRequest() acp.UnstableStartNesRequest {
	start := s.nesStartRequest()
	if root := s.workspaceRoot(); root != "" {
		start.Repository = repositoryOf(root)
	}
	return start
}

// becomeReady makes a started agent (its NES session open) the one requests go to: the open
// documents are replayed to it, in order with every later document event.
func (s *Server) becomeReady(ctx context.Context, agent *acpside.Agent, name string) {
	s.log.Info().Str("agent", name).Str("encoding", agent.Encoding().String()).Interface("events", agent.Events()).Msg("agent ready")
	s.fwd.Lock()
	s.mu.Lock()
	shutting := s.state == stateShutdown || s.ended
	dead := false
	select {
	case <-agent.Done(): // watchAgent saw it end before it was ours
		dead = true
	default:
	}
	if !shutting && !dead {
		s.agent = agent
		s.agentErr = ""
	}
	if s.authAgent == agent {
		s.authAgent = nil
	}
	s.mu.Unlock()
	if dead {
		// watchAgent saw it end while it was not ours yet, and left it: restart it from here.
		s.fwd.Unlock()
		if !shutting {
			s.agentExited(ctx, name, errors.New("the agent exited while starting"))
		}
		return
	}
	if !shutting && agent.Events().DidOpen {
		for _, snap := range s.docs.All() {
			s.sendDidOpen(ctx, agent, snap)
		}
	}
	if !shutting {
		// The user is somewhere already: tell an agent that listens for focus where.
		s.mu.Lock()
		active := s.active
		s.mu.Unlock()
		if snap, ok := s.docs.Get(active); ok && agent.Events().DidFocus {
			s.focus(ctx, snap, -1, s.ed.Visible(active))
		}
	}
	s.fwd.Unlock()
	if shutting {
		agent.Close(ctx)
		return
	}
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
	if s.cfg.Trace != nil {
		opts.Trace = s.cfg.Trace.Record
	}
	if s.cfg.ConnectAgent != nil {
		return s.cfg.ConnectAgent(opts)
	}
	if cmd == nil || cmd.Path == "" {
		return nil, errors.New(noAgentMessage)
	}
	if root := s.workspaceRoot(); root != "" {
		cmd.Dir = root
	}
	return acpside.Start(*cmd, opts)
}

// noNESMessage tells the user that the agent named offers no Next Edit Suggestions, and what to do.
func noNESMessage(name string) string {
	return fmt.Sprintf("acp-lsp-bridge: %s does not offer Next Edit Suggestions, so there will be no suggestions. "+
		"For suggestions, remove the agent setting to use the bridge's built-in agent, use a model agent "+
		"(`acp-lsp-bridge agent --model-url URL --model NAME`), or check another agent with `acp-lsp-bridge doctor -- COMMAND`.", name)
}

// exitedMessage tells the user that the agent's process ended before answering step, how it
// ended, and the last lines it wrote to stderr, which usually say why.
func exitedMessage(cmd *acpside.Command, status, step string, stderr []string) string {
	who := "the agent"
	if cmd != nil && cmd.Path != "" {
		who = fmt.Sprintf("the agent `%s`", cmd)
	}
	msg := fmt.Sprintf("acp-lsp-bridge: %s exited (%s) before answering %s.", who, status, step)
	if len(stderr) > 0 {
		msg += " It wrote: " + strings.Join(stderr, " | ")
	}
	return msg
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

func (s *Server) agentFailed(ctx context.Context, msg string, err error) {
	s.mu.Lock()
	s.agentErr = msg
	s.mu.Unlock()
	s.log.Error().Err(err).Msg("no agent")
	s.showMessage(ctx, protocol.MessageTypeError, msg)
}

// watchAgent notices an agent that ends while the editor still works, and has it restarted.
func (s *Server) watchAgent(ctx context.Context, agent *acpside.Agent, name string) {
	<-agent.Done()
	s.mu.Lock()
	shutting := s.state == stateShutdown || s.ended
	ours := s.agent == agent || s.authAgent == agent
	if ours {
		s.agent, s.authAgent = nil, nil
	}
	s.mu.Unlock()
	if !ours {
		return // the bridge closed it: it refused to start, or the editor is leaving
	}
	select {
	case <-s.exited:
		return
	default:
	}
	if !shutting {
		why := errors.New("the agent exited")
		if r := agent.Stuck(); r != "" {
			why = fmt.Errorf("the bridge ended it: %s", r)
		}
		s.log.Error().Str("agent", name).Err(why).Msg("the agent connection ended")
		s.agentExited(ctx, name, why)
	}
}

// currentAgent returns the agent if it is ready, without waiting. Nothing waits for the agent:
// until it is ready, requests answer empty.
func (s *Server) currentAgent() *acpside.Agent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.agent
}

// notReady says why there is no ready agent: what the user was last told, or that it is starting.
func (s *Server) notReady() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.agentErr != "" {
		return s.agentErr
	}
	return "acp-lsp-bridge: the agent is still starting; there are no suggestions until it is ready."
}

// shutdownAgent ends every live suggestion, then the NES session and the agent's process group.
func (s *Server) shutdownAgent() {
	s.closeAgent.Do(func() {
		s.mu.Lock()
		agent := s.agent
		if agent == nil {
			agent = s.authAgent
		}
		s.agent, s.authAgent = nil, nil
		s.mu.Unlock()
		if agent == nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.sugs.endAll(ctx, agent, acp.UnstableNesRejectReasonIgnored)
		agent.Close(ctx)
	})
}

// nesStartRequest describes the workspace from the editor's initialize.
func (s *Server) nesStartRequest() acp.UnstableStartNesRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	var req acp.UnstableStartNesRequest
	for _, f := range s.init.WorkspaceFolders {
		name := f.Name
		if name == "" {
			name = filepath.Base(uriPath(f.URI))
		}
		req.WorkspaceFolders = append(req.WorkspaceFolders, acp.UnstableWorkspaceFolder{Uri: f.URI, Name: name})
	}
	switch {
	case s.init.RootURI != nil && *s.init.RootURI != "":
		root := *s.init.RootURI
		req.WorkspaceUri = &root
	case len(req.WorkspaceFolders) > 0:
		root := req.WorkspaceFolders[0].Uri
		req.WorkspaceUri = &root
	case s.init.RootPath != nil && *s.init.RootPath != "":
		root := string(uri.File(*s.init.RootPath))
		req.WorkspaceUri = &root
	}
	if req.WorkspaceUri != nil && len(req.WorkspaceFolders) == 0 {
		req.WorkspaceFolders = []acp.UnstableWorkspaceFolder{{Uri: *req.WorkspaceUri, Name: filepath.Base(uriPath(*req.WorkspaceUri))}}
	}
	return req
}

// workspaceRoot is the local folder of the workspace, or "".
func (s *Server) workspaceRoot() string {
	req := s.nesStartRequest()
	if req.WorkspaceUri == nil || !strings.HasPrefix(*req.WorkspaceUri, "file:") {
		return ""
	}
	return uriPath(*req.WorkspaceUri)
}

func uriPath(u string) string {
	if !strings.HasPrefix(u, "file:") {
		return u
	}
	parsed, err := uri.Parse(u)
	if err != nil {
		return u
	}
	return parsed.FsPath()
}

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
