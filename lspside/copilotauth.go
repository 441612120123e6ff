package lspside

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"go.lsp.dev/protocol"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/acpside"
)

// GitHub Copilot's one auth method opens a browser on the agent's machine, which a user over SSH,
// in a container or with no display never sees. The bridge adds a way that works anywhere:
// GitHub's device flow, run in Copilot's own language server (its LSP mode), a code the user
// enters on any device; and it names the others (a token variable, a sign-in saved by Copilot's
// own tools) in the question itself, so that an editor that shows the question but not its
// buttons still tells the user what to do.

// copilotCodeTitle is the sign-in choice the bridge adds for Copilot.
const copilotCodeTitle = "Sign in with a code (any device)"

// copilotQuestion is the sign-in question for Copilot: why a browser would not open, and the ways
// that work here.
func (s *Server) copilotQuestion(name string) string {
	q := fmt.Sprintf("acp-lsp-bridge: %s needs you to sign in before it can suggest edits.", name)
	if why := acpside.NoBrowserHere(os.Getenv); why != "" {
		q += fmt.Sprintf(" A browser cannot open for you here (%s): choose %q to enter a code on any device.", why, copilotCodeTitle)
	} else {
		q += fmt.Sprintf(" %q lets you enter a code on any device; \"Sign in with GitHub\" opens a browser on this machine.", copilotCodeTitle)
	}
	return q
}

// copilotOtherWays names the ways to sign in to Copilot without a browser on this machine, for
// the last word of a dialog that did not sign in.
func copilotOtherWays(agent *acpside.Agent) string {
	var env map[string]string
	if c, ok := agent.Command(); ok {
		env = c.Env
	}
	found := acpside.FindCopilotSignIn(env)
	ways := "or sign in once with Copilot's own tools here (copilot.vim's or copilot.lua's :Copilot setup), or set GH_COPILOT_TOKEN for the agent " +
		"(docs/real-agents.md, \"GitHub Copilot\")"
	switch {
	case found.TokenVar != "":
		return fmt.Sprintf("%s is set, and Copilot did not accept it (expired, or no Copilot access); unset it, %s", found.TokenVar, ways)
	case found.Saved:
		return fmt.Sprintf("the sign-in saved in %s is not accepted (expired?); %s", found.Store, ways)
	}
	return ways
}

// copilotCodeSignIn runs GitHub's device flow in Copilot's language server: the user is shown a
// code and the address to enter it at, and the bridge waits until they have. It returns the
// account signed in, or why it failed.
func (s *Server) copilotCodeSignIn(ctx context.Context, agent *acpside.Agent, name string) (string, error) {
	c, ok := agent.Command()
	if !ok {
		return "", fmt.Errorf("the bridge did not start %s, so it cannot run its sign-in", name)
	}
	sctx, cancel := context.WithTimeout(ctx, s.cfg.StartTimeout)
	d, err := acpside.StartCopilotDeviceSignIn(sctx, c, "acp-lsp-bridge", s.cfg.Version, s.log)
	cancel()
	if err != nil {
		return "", err
	}
	defer d.Close()
	if d.Already {
		return d.User, nil
	}
	lasts := ""
	if d.Expires > 0 {
		lasts = fmt.Sprintf(" (the code lasts %v)", d.Expires.Round(time.Minute))
	}
	msg := fmt.Sprintf("acp-lsp-bridge: to sign in to %s, open %s on any device and enter the code %s%s. Suggestions start once you have.",
		name, d.VerificationURI, d.UserCode, lasts)
	s.log.Info().Str("agent", name).Str("uri", d.VerificationURI).Msg("device sign-in: waiting for the code to be entered")
	s.showMessage(ctx, protocol.MessageTypeWarning, msg)
	s.logMessage(ctx, protocol.MessageTypeInfo, msg)
	return d.Wait(ctx)
}

// copilotSignedIn starts the NES session once the device flow signed in: the running agent reads
// the sign-in Copilot saved when asked to authenticate (it checks before it would open a browser).
func (s *Server) copilotSignedIn(ctx context.Context, agent *acpside.Agent) error {
	actx, cancel := context.WithTimeout(ctx, s.cfg.StartTimeout)
	aerr := agent.Authenticate(actx, acpside.CopilotAuthMethod)
	cancel()
	sctx, cancel := context.WithTimeout(ctx, s.cfg.StartTimeout)
	defer cancel()
	err := agent.StartNES(sctx, s.startRequest())
	if err != nil && aerr != nil && !strings.Contains(err.Error(), aerr.Error()) {
		return fmt.Errorf("%w (authenticate: %s)", err, agentErrorText(aerr))
	}
	return err
}
