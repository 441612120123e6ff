package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/acpside"
)

const signInUsage = `acp-lsp-bridge sign-in: sign in to an agent from a terminal, with no browser on this machine.

Usage:
  acp-lsp-bridge sign-in [--timeout 20s] copilot [-- COMMAND [ARGS...]]

copilot: GitHub Copilot's language server (copilot-language-server, or COMMAND) is run in its LSP
mode and asked for GitHub's device flow. sign-in prints a code and an address
(https://github.com/login/device): open it on any device (a phone, a laptop), enter the code, and
sign-in waits until GitHub says you have, then says which account is signed in. Copilot keeps the
sign-in in its own store on this machine (~/.config/github-copilot; on Windows
%USERPROFILE%\AppData\Local\github-copilot), where the agent the bridge starts finds it: restart
the bridge (the command acp-lsp-bridge.restart) or run acp-lsp-bridge.signIn in the editor.
It works over SSH and in containers, and needs the network to reach GitHub.

Exit status: 0 when signed in (or already signed in), 1 when the sign-in failed or the code was not
entered in time, 2 for a usage error.

Flags:
`

// runSignIn is the sign-in subcommand.
func runSignIn(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var rest []string
	for i, a := range args {
		if a == "--" {
			args, rest = args[:i], args[i+1:]
			break
		}
	}
	fs := flag.NewFlagSet("acp-lsp-bridge sign-in", flag.ContinueOnError)
	fs.SetOutput(stderr)
	timeout := fs.Duration("timeout", 20*time.Second, "how long to wait for Copilot to start and give a code (the wait for you to enter it is as long as the code lasts)")
	verbose := fs.Bool("verbose", false, "log Copilot's start and its stderr to stderr")
	fs.Usage = func() {}
	if code, done := parseFlags(fs, args, signInUsage, "usage: acp-lsp-bridge sign-in copilot (see --help)", stdout, stderr); done {
		return code
	}
	if fs.NArg() != 1 || fs.Arg(0) != "copilot" {
		fmt.Fprintln(stderr, "acp-lsp-bridge sign-in: name the agent to sign in to: acp-lsp-bridge sign-in copilot (the only one the bridge signs in to from a terminal)")
		return 2
	}
	cmd, _ := namedAgent("copilot")
	if len(rest) > 0 {
		cmd = acpside.Command{Path: rest[0], Args: rest[1:], Env: cmd.Env}
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	log := zerolog.Nop()
	if *verbose {
		log = zerolog.New(zerolog.ConsoleWriter{Out: stderr, NoColor: true}).Level(zerolog.DebugLevel)
	}
	if s := acpside.FindCopilotSignIn(cmd.Env); s.TokenVar != "" {
		fmt.Fprintf(stdout, "%s is set: Copilot signs in with that token, whatever is saved. Unset it to use the sign-in made here.\n", s.TokenVar)
	}
	fmt.Fprintf(stdout, "Asking GitHub Copilot (%s) for a sign-in code…\n", cmd.String())
	sctx, cancel := context.WithTimeout(ctx, *timeout)
	d, err := acpside.StartCopilotDeviceSignIn(sctx, cmd, "acp-lsp-bridge", version, log)
	cancel()
	if err != nil {
		fmt.Fprintf(stderr, "acp-lsp-bridge sign-in: %v\n", signInWords(err, cmd))
		return 1
	}
	defer d.Close()
	if d.Already {
		fmt.Fprintf(stdout, "GitHub Copilot is signed in already, as %s.\n", d.User)
		return 0
	}
	fmt.Fprintf(stdout, "\nOn any device, open %s and enter the code:\n\n    %s\n\n", d.VerificationURI, d.UserCode)
	if d.Expires > 0 {
		fmt.Fprintf(stdout, "Waiting for you to enter it (the code lasts %v; Ctrl-C stops)…\n", d.Expires.Round(time.Second))
	}
	user, err := d.Wait(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "acp-lsp-bridge sign-in: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "Signed in to GitHub Copilot as %s. Restart the bridge (the command acp-lsp-bridge.restart), or run acp-lsp-bridge.signIn in the editor, to start its suggestions.\n", user)
	return 0
}

// signInWords is a failed start of Copilot's sign-in, with what to do.
func signInWords(err error, cmd acpside.Command) string {
	var notFound *exec.Error
	if errors.As(err, &notFound) {
		return fmt.Sprintf("cannot run %s: %v. Install it with `npm install -g @github/copilot-language-server` (or mason's copilot-language-server), or name it: acp-lsp-bridge sign-in copilot -- PATH --acp", cmd.Path, notFound.Err)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("%s did not answer in time (%v); try --timeout 60s", cmd.Path, err)
	}
	return err.Error() + ". Other ways to sign in without a browser here: a sign-in made on this machine with Copilot's own tools (copilot.vim's or copilot.lua's :Copilot setup/auth), or GH_COPILOT_TOKEN set for the agent to a GitHub token with Copilot access (docs/real-agents.md, \"GitHub Copilot\")"
}
