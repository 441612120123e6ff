package lspside

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	acp "github.com/coder/acp-go-sdk"
	"go.lsp.dev/protocol"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/acpside"
)

// CommandSignIn [] asks again how to sign in to an agent that requires authentication.
const CommandSignIn = "acp-lsp-bridge.signIn"

// signInAttempts bounds how often one sign-in dialog asks again after a failed attempt.
const signInAttempts = 3

const notNow = "Not now"

// signIn runs the sign-in dialog for an agent that answered auth_required: the user picks one of
// the agent's authMethods (window/showMessageRequest), the bridge sends authenticate and then
// nes/start again. It reports whether the NES session is open. Only one dialog runs at a time; the
// editor is never blocked meanwhile (requests answer empty). It tells the user every state through
// window/showMessage; the last word comes once the dialog is over, so that the user can run the
// sign-in command it may name at once.
func (s *Server) signIn(ctx context.Context, agent *acpside.Agent, name string) bool {
	if !s.sup.beginDialog() {
		return false
	}
	ok, last := s.signInDialog(ctx, agent, name)
	s.sup.endDialog()
	s.showMessage(ctx, last.typ, last.text)
	return ok
}

// notice is a window/showMessage to send.
type notice struct {
	typ  protocol.MessageType
	text string
}

// signInDialog is signIn's dialog; it returns whether the NES session is open and the last word for
// the user.
func (s *Server) signInDialog(ctx context.Context, agent *acpside.Agent, name string) (bool, notice) {
	later := notice{protocol.MessageTypeInfo, fmt.Sprintf("acp-lsp-bridge: no suggestions from %s until you sign in; run the command %s when you are ready.", name, CommandSignIn)}
	methods := agent.AuthMethods()
	if len(methods) == 0 {
		return false, notice{protocol.MessageTypeError, fmt.Sprintf(
			"acp-lsp-bridge: %s requires you to sign in but offers no way to do it from the editor (no authMethods); sign in with the agent's own tools, then run %s.", name, CommandSignIn)}
	}
	titles := authTitles(methods)
	question := fmt.Sprintf("acp-lsp-bridge: %s needs you to sign in before it can suggest edits.", name)
	copilot := agent.IsCopilot()
	var choices []string
	if copilot {
		question = s.copilotQuestion(name)
		// The way first: an editor that shows one line (Helix's status line) cuts the rest.
		later.text = fmt.Sprintf("acp-lsp-bridge: %s is not signed in: run `acp-lsp-bridge sign-in copilot` in a terminal (a code for any device), then %s. Other ways: %s.",
			name, CommandSignIn, strings.TrimPrefix(copilotOtherWays(agent), "or "))
		choices = append(choices, copilotCodeTitle)
	}
	choices = append(append(choices, titles...), notNow)
	for attempt := 0; attempt < signInAttempts; attempt++ {
		choice, err := s.ask(ctx, protocol.MessageTypeWarning, question, choices...)
		if err != nil {
			s.log.Warn().Err(err).Msg("window/showMessageRequest for sign-in")
		}
		if err == nil && copilot && choice == copilotCodeTitle {
			user, err := s.copilotCodeSignIn(ctx, agent, name)
			if err == nil {
				err = s.copilotSignedIn(ctx, agent)
				if acpside.AuthRequired(err) {
					// Signed in, but this agent process does not see it: a new one reads Copilot's
					// store at its start.
					s.log.Info().Str("agent", name).Msg("signed in with a code; the running agent did not see it: restarting it")
					go func() { _ = s.restartCommand(context.WithoutCancel(ctx)) }()
					return false, notice{protocol.MessageTypeInfo, fmt.Sprintf("acp-lsp-bridge: signed in to %s as %s; starting it again to use the sign-in.", name, user)}
				}
			}
			if err == nil {
				return true, notice{protocol.MessageTypeInfo, fmt.Sprintf("acp-lsp-bridge: signed in to %s as %s.", name, user)}
			}
			s.log.Warn().Err(err).Msg("sign-in with a code failed")
			why := agentErrorText(err)
			var refused *acpside.CopilotSignInError
			if errors.As(err, &refused) {
				why = refused.Message
			}
			question = fmt.Sprintf("acp-lsp-bridge: signing in to %s with a code failed (%s). Try again?", name, why)
			continue
		}
		i := indexOf(titles, choice)
		if err != nil || i < 0 {
			return false, later
		}
		m := methods[i]
		switch m.Type {
		case "env_var":
			return false, notice{protocol.MessageTypeInfo, fmt.Sprintf(
				"acp-lsp-bridge: to sign in to %s with %q, set %s for the agent: %s. Then restart the bridge.",
				name, m.Name, strings.Join(m.Vars, ", "), s.envHint(m.Vars))}
		case "terminal":
			return false, notice{protocol.MessageTypeInfo, terminalSignIn(agent, name, m)}
		}
		s.showMessage(ctx, protocol.MessageTypeInfo, fmt.Sprintf("acp-lsp-bridge: signing in to %s (%s)…", name, m.Name))
		actx, cancel := context.WithTimeout(ctx, s.cfg.UserWait)
		err = agent.Authenticate(actx, m.ID)
		cancel()
		if err != nil {
			s.log.Warn().Err(err).Str("method", m.ID).Msg("authenticate failed")
			question = fmt.Sprintf("acp-lsp-bridge: signing in to %s failed (%s). Try again?", name, agentErrorText(err))
			continue
		}
		sctx, cancel := context.WithTimeout(ctx, s.cfg.StartTimeout)
		err = agent.StartNES(sctx, s.startRequest())
		cancel()
		switch {
		case err == nil:
			return true, notice{protocol.MessageTypeInfo, fmt.Sprintf("acp-lsp-bridge: signed in to %s.", name)}
		case acpside.AuthRequired(err):
			question = fmt.Sprintf("acp-lsp-bridge: %s still asks you to sign in. Try again?", name)
		default:
			return false, notice{protocol.MessageTypeError, fmt.Sprintf("acp-lsp-bridge: %s refused to start a Next Edit Suggestions session after sign-in: %v", name, err)}
		}
	}
	later.typ = protocol.MessageTypeWarning
	return false, later
}

// authTitles are the choices shown for the auth methods, unique so that the answer names one.
func authTitles(methods []acpside.AuthMethod) []string {
	names, ids := make([]string, len(methods)), make([]string, len(methods))
	for i, m := range methods {
		names[i], ids[i] = m.Name, m.ID
	}
	return uniqueTitles(names, ids, notNow)
}

// uniqueTitles names the buttons of a question (window/showMessageRequest answers with a title):
// each choice's name, or its id when it has none, with the id added to a name already taken, so
// that every answer names one choice. reserved are titles of other buttons.
func uniqueTitles(names, ids []string, reserved ...string) []string {
	titles := make([]string, len(names))
	seen := map[string]bool{}
	for _, r := range reserved {
		seen[r] = true
	}
	for i, t := range names {
		if t == "" {
			t = ids[i]
		}
		if seen[t] {
			t = fmt.Sprintf("%s (%s)", t, ids[i])
		}
		seen[t] = true
		titles[i] = t
	}
	return titles
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s && s != "" {
			return i
		}
	}
	return -1
}

// agentErrorText is the message of an agent's error, without the JSON around it.
func agentErrorText(err error) string {
	var re *acp.RequestError
	if errors.As(err, &re) && re.Message != "" {
		return re.Message
	}
	return err.Error()
}

// needSignIn handles auth_required from a running session (nes/suggest): the agent stops taking
// requests, every live suggestion ends, and the sign-in dialog runs in the background; after it
// nes/start opens a new session and the open documents are replayed.
func (s *Server) needSignIn(ctx context.Context, agent *acpside.Agent) {
	gen, ok := s.sup.readyGen(agent)
	if !ok {
		return
	}
	name := agent.Name()
	if !s.sup.signingIn(gen, fmt.Sprintf("acp-lsp-bridge: %s is waiting for you to sign in.", name)) {
		return
	}
	s.log.Info().Str("agent", name).Msg("the agent requires authentication")
	go func() {
		s.sugs.endAll(ctx, agent, acp.UnstableNesRejectReasonIgnored)
		if s.signIn(ctx, agent, name) {
			s.becomeReady(ctx, gen, agent, name)
		}
	}()
}

// signInCommand runs the sign-in dialog again for an agent that waits for it.
func (s *Server) signInCommand(ctx context.Context) error {
	agent, gen, ok := s.sup.waitingForSignIn()
	if !ok {
		if s.currentAgent() != nil {
			s.showMessage(ctx, protocol.MessageTypeInfo, "acp-lsp-bridge: the agent is ready; there is nothing to sign in to.")
			return nil
		}
		s.showMessage(ctx, protocol.MessageTypeInfo, "acp-lsp-bridge: no agent is waiting for sign-in.")
		return nil
	}
	name := agent.Name()
	go func() {
		if s.signIn(context.WithoutCancel(ctx), agent, name) {
			s.becomeReady(context.WithoutCancel(ctx), gen, agent, name)
		}
	}()
	return nil
}

// terminalSignIn tells the user the command a terminal sign-in method runs (the agent's own
// command with the method's arguments and environment added) and where to run it.
func terminalSignIn(agent *acpside.Agent, name string, m acpside.AuthMethod) string {
	var words []string
	keys := make([]string, 0, len(m.Env))
	for k := range m.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		words = append(words, k+"="+shellQuote(m.Env[k]))
	}
	where := "in a terminal"
	if c, ok := agent.Command(); ok {
		words = append(words, shellQuote(c.Path))
		for _, a := range c.Args {
			words = append(words, shellQuote(a))
		}
		if c.Dir != "" {
			where = "in a terminal, in the folder " + c.Dir
		}
	} else {
		words = append(words, "AGENT")
	}
	for _, a := range m.Args {
		words = append(words, shellQuote(a))
	}
	// Then restart: signing in again would only ask the same question, the agent not having
	// been asked to start its session since.
	return fmt.Sprintf("acp-lsp-bridge: to sign in to %s with %q, run `%s` %s, then run the command %s.",
		name, m.Name, strings.Join(words, " "), where, CommandRestart)
}

// shellQuote quotes s for a POSIX shell when it holds anything but plain word characters.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@%+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// envHint says where the user of this editor sets an environment variable for the agent: the
// editor's own place for a language server's environment (editors/ has each config), else
// initializationOptions.agent.env or the environment the editor starts in.
func (s *Server) envHint(vars []string) string {
	client := ""
	if ci := s.session().init.ClientInfo; ci != nil {
		client = ci.Name
	}
	return envHint(client, vars)
}

// envHint is Server.envHint for the editor that calls itself client.
func envHint(client string, vars []string) string {
	client = strings.ToLower(client)
	v := "VAR"
	if len(vars) > 0 {
		v = vars[0]
	}
	generic := fmt.Sprintf("in initializationOptions.agent.env ({\"%s\": \"…\"}), or in the environment the editor is started in", v)
	switch {
	case strings.Contains(client, "neovim") || strings.Contains(client, "nvim"):
		return fmt.Sprintf("in Neovim, vim.lsp.config('acp', { cmd_env = { %s = '…' } }), or export it in the shell that starts nvim", v)
	case strings.Contains(client, "code") || strings.Contains(client, "codium"):
		return fmt.Sprintf("in VS Code, export %s in the shell you start VS Code from (for a remote window, in the remote machine's shell profile)", v)
	case strings.Contains(client, "helix"):
		return fmt.Sprintf("in Helix, environment = { %s = \"…\" } under [language-server.acp-lsp-bridge] in languages.toml", v)
	case strings.Contains(client, "emacs") || strings.Contains(client, "eglot"):
		return fmt.Sprintf("in Emacs, (setenv \"%s\" \"…\") before the server starts, or %s", v, generic)
	case strings.Contains(client, "zed"):
		return fmt.Sprintf("in Zed, \"env\": {\"%s\": \"…\"} under lsp.acp-lsp-bridge.binary in settings.json", v)
	case strings.Contains(client, "sublime"):
		return fmt.Sprintf("in Sublime Text, \"env\": {\"%s\": \"…\"} in the client's settings in LSP.sublime-settings", v)
	}
	return generic
}
