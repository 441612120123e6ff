// Command acp-test-agent is the scripted NES agent of the bridge's end-to-end tests. It speaks ACP
// on stdin/stdout; see package testagent.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"syscall"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testagent"
)

func main() {
	enc := flag.String("encoding", "utf-16", "position encoding to choose: utf-8, utf-16 or utf-32")
	sync := flag.String("sync", "incremental", "didChange sync kind: incremental or full")
	logFile := flag.String("log", os.Getenv("ACP_TEST_AGENT_LOG"), "append one JSON line per received message to this file (default $ACP_TEST_AGENT_LOG); the arguments after the flags are logged first, as {\"method\":\"test/args\",\"params\":[...]}")
	mirrorDir := flag.String("mirror-dir", "", "write the agent's copy of each document to this folder after every change (file named by the document's base name)")
	rules := flag.String("rules", "", "JSON file with rules [{when, find, replace}]")
	noNES := flag.Bool("no-nes", false, "answer initialize without the nes capability")
	sessions := flag.Bool("sessions", false, "with --no-nes: a coding agent, answering session/new and session/prompt (the prompt's region rewritten by the --rules' find/replace)")
	auth := flag.Bool("auth", false, `require authentication: offer the auth method "login" ("Sign in with Test") and answer auth_required until authenticate names it`)
	focus := flag.Bool("focus", false, "ask for document/didFocus events")
	contextJSON := flag.String("context", "", `nes.context to ask for, as JSON, e.g. {"diagnostics":{},"editHistory":{"maxCount":4}}`)
	fault := flag.String("fault", "", testagent.FaultHelp)
	startDelay := flag.Duration("start-delay", 0, "wait this long before answering initialize: an agent that is slow to start")
	suggestDelay := flag.Duration("suggest-delay", 0, "wait this long before answering each nes/suggest (a cancellation ends the wait): a busy agent")
	stall := flag.Duration("stall", 0, "once the NES session has started, stop reading stdin for this long (the log then gets test/stallEnded)")
	stallOnce := flag.String("stall-once", "", "with --stall: stall only if this file does not exist yet, and create it (an agent started again does not stall)")
	trickle := flag.Bool("trickle", false, "read stdin one byte at a time")
	pidFile := flag.String("pid-file", "", "append a line \"ROLE PID\" to this file for the agent and each process it starts (roles: agent, helper, relauncher)")
	helper := flag.Bool("spawn-helper", false, "start a helper process that ignores SIGTERM and the end of its stdin and runs until killed, as a Node wrapper's native binary may")
	relaunch := flag.Bool("relaunch", false, "relaunch: start this command again as a child (without --relaunch, the same stdin and stdout) and wait for it, as some Node agents do")
	helperMode := flag.Bool("helper", false, "be the helper that --spawn-helper starts")
	answer := flag.String("answer", "", "answer every nes/suggest with the suggestions in this JSON `file` (an array; each id gets \"-n\" appended), whatever URIs they name")
	readPath := flag.String("read", "", "once nes/start is answered, read this `path` with fs/read_text_file --read-count times, logging each answer as test/read, then test/readsDone")
	readCount := flag.Int("read-count", 1, "how many times --read reads")
	copilot := flag.Bool("copilot", false, "behave as GitHub Copilot's language server 1.539.0 in --acp mode (package testagent, copilot.go): its initialize, one auth method github_oauth, signed in by $GH_COPILOT_TOKEN (without '=') or $GITHUB_COPILOT_TOKEN, by a sign-in saved in Copilot's store (see --stdio), or by authenticate when $ACP_TEST_COPILOT_BROWSER=1; one NES session, its document rules and errors; suggestions from --rules")
	acpMode := flag.Bool("acp", false, "with --copilot: the ACP mode (the default), named as the real server is started (copilot-language-server --acp)")
	stdio := flag.Bool("stdio", false, "with --copilot: the LSP mode (copilot-language-server --stdio) instead, for GitHub's device flow (signInInitiate, then workspace/executeCommand github.copilot.finishDeviceFlow; package testagent, copilot.go): the code WXYZ-1234, taken as entered once the file $"+testagent.CopilotCodeEnteredEnv+" names exists (without it, the real server's offline error), the sign-in then saved in Copilot's store ($XDG_CONFIG_HOME/github-copilot, or ~/.config/github-copilot), which the ACP mode reads; every message logged to --log")
	dropChange := flag.Int("drop-change", 0, "with --copilot: drop the `n`th document/didChange received (1-based), as Copilot ignores one it judged stale; logged as test/droppedChange")
	cannotStart := flag.String("cannot-start-if", "", "when this `file` exists, write two lines to stderr and exit 41 before reading anything, as an agent whose sign-in expired while it ran does when started again")
	flag.Parse()
	if *cannotStart != "" {
		if _, err := os.Stat(*cannotStart); err == nil {
			fmt.Fprintln(os.Stderr, "acp-test-agent: cannot start")
			fmt.Fprintln(os.Stderr, "Your session expired; run acp-test-agent login")
			os.Exit(41)
		}
	}
	if *helperMode {
		runHelper(*pidFile)
		return
	}
	if *relaunch {
		os.Exit(runRelauncher(*pidFile))
	}
	recordPID(*pidFile, "agent")
	if *helper {
		cmd := exec.Command(os.Args[0], "--helper", "--pid-file", *pidFile)
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "acp-test-agent: --spawn-helper:", err)
			os.Exit(2)
		}
		go cmd.Wait()
	}
	if *dropChange != 0 && !*copilot {
		fmt.Fprintln(os.Stderr, "acp-test-agent: --drop-change needs --copilot")
		os.Exit(2)
	}
	if (*acpMode || *stdio) && !*copilot {
		fmt.Fprintln(os.Stderr, "acp-test-agent: --acp and --stdio need --copilot")
		os.Exit(2)
	}
	if *acpMode && *stdio {
		fmt.Fprintln(os.Stderr, "acp-test-agent: --acp or --stdio, not both")
		os.Exit(2)
	}
	if *copilot {
		// What the real server decides for itself.
		var clash []string
		flag.Visit(func(f *flag.Flag) {
			switch f.Name {
			case "encoding", "sync", "no-nes", "sessions", "auth", "focus", "context", "fault", "answer":
				clash = append(clash, "--"+f.Name)
			}
		})
		if len(clash) > 0 {
			fmt.Fprintf(os.Stderr, "acp-test-agent: --copilot decides its capabilities and sign-in as Copilot does; leave out %v\n", clash)
			os.Exit(2)
		}
	}
	cfg := testagent.Config{Copilot: *copilot, DropChange: *dropChange, Encoding: *enc, Sync: *sync, NoNES: *noNES, Sessions: *sessions, DidFocus: *focus, Fault: *fault, Exit: exitSaying, StartDelay: *startDelay, SuggestDelay: *suggestDelay, MirrorDir: *mirrorDir,
		Stall: *stall, StallOnce: *stallOnce, Trickle: *trickle}
	if *fault != "" && !slices.Contains(testagent.Faults, *fault) {
		fmt.Fprintf(os.Stderr, "acp-test-agent: --fault %q: use one of %v\n", *fault, testagent.Faults)
		os.Exit(2)
	}
	if *answer != "" {
		b, err := os.ReadFile(*answer)
		if err == nil && !json.Valid(b) {
			err = errors.New("not JSON")
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "acp-test-agent: --answer:", err)
			os.Exit(2)
		}
		cfg.Answer = b
	}
	if *readPath != "" {
		cfg.Reads = testagent.ReadLoop{Path: *readPath, Count: *readCount}
	}
	if *contextJSON != "" {
		cfg.Context = &acp.NesContextCapabilities{}
		if err := json.Unmarshal([]byte(*contextJSON), cfg.Context); err != nil {
			fmt.Fprintln(os.Stderr, "acp-test-agent: --context:", err)
			os.Exit(2)
		}
	}
	if *auth {
		cfg.RequireAuth = true
		cfg.AuthMethods = []acp.AuthMethod{{Agent: &acp.AuthMethodAgent{Id: "login", Name: "Sign in with Test"}}}
	}
	if *rules != "" {
		b, err := os.ReadFile(*rules)
		if err == nil {
			err = json.Unmarshal(b, &cfg.Rules)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "acp-test-agent: --rules:", err)
			os.Exit(2)
		}
	}
	if *logFile != "" {
		f, err := os.OpenFile(*logFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			fmt.Fprintln(os.Stderr, "acp-test-agent: --log:", err)
			os.Exit(2)
		}
		defer f.Close()
		cfg.Log = f
		if flag.NArg() > 0 {
			// What the agent was started with, past its flags (an npm shim's script, say).
			b, _ := json.Marshal(map[string]any{"method": "test/args", "params": flag.Args()})
			_, _ = f.Write(append(b, '\n'))
		}
	}
	if *stdio {
		if code := testagent.New(cfg).ServeLSP(os.Stdin, os.Stdout); code != 0 {
			os.Exit(code) // an exit without shutdown (the log is written unbuffered)
		}
		return
	}
	testagent.New(cfg).Serve(os.Stdin, os.Stdout)
}

// exitSaying ends the agent for the "exit" fault, saying so on stderr first, as an agent that
// crashes usually says why.
func exitSaying(code int) {
	fmt.Fprintf(os.Stderr, "acp-test-agent: exiting with status %d on purpose (--fault exit)\n", code)
	os.Exit(code)
}

// recordPID appends "role pid" to path, when set.
func recordPID(path, role string) {
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, "acp-test-agent: --pid-file:", err)
		os.Exit(2)
	}
	fmt.Fprintf(f, "%s %d\n", role, os.Getpid())
	f.Close()
}

// runHelper ignores SIGTERM, SIGINT, SIGHUP and its stdin, and sleeps until it is killed.
func runHelper(pidFile string) {
	signal.Ignore(syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	recordPID(pidFile, "helper")
	for {
		time.Sleep(time.Hour)
	}
}

// runRelauncher starts the same command without --relaunch, sharing stdin, stdout and stderr,
// and exits with its status.
func runRelauncher(pidFile string) int {
	recordPID(pidFile, "relauncher")
	var args []string
	for _, a := range os.Args[1:] {
		if a != "--relaunch" && a != "-relaunch" {
			args = append(args, a)
		}
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		return exit.ExitCode()
	}
	fmt.Fprintln(os.Stderr, "acp-test-agent: --relaunch:", err)
	return 2
}
