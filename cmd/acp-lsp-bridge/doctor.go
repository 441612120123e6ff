package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/acpside"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/cmd/doctor"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent/model"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/workspace"
)

const doctorUsage = `acp-lsp-bridge doctor: check that an agent can give the bridge Next Edit Suggestions.

Usage:
  acp-lsp-bridge doctor [--json] [--timeout 20s] [--verbose] [--prompt] -- AGENT [ARGS...]
  acp-lsp-bridge doctor [--json] --agent copilot   (a known agent by its name, as the bridge's --agent)
  acp-lsp-bridge doctor [--json]     (no agent named: the bridge's built-in agent, "acp-lsp-bridge agent")

doctor starts AGENT exactly as the bridge does (a child process in its own process group, never
through a shell), runs ACP initialize and nes/start with the current directory as the workspace,
then nes/close, ends the agent, and reports:
  - for an agent without Next Edit Suggestions (the coding agents: Claude, Codex, Gemini), that
    the bridge asks it through prompts instead (session/new here, then a session/prompt per
    suggestion: slower, and billed to the agent's model), and the read-only mode it chose;
  - with --prompt, one suggestion asked on a small sample document, how long it took, and
    whether that is longer than the bridge waits (then the flag to raise);
  - the ACP protocol version, the agent's name, title and version, and its auth methods;
  - for the built-in model agent, its model and prompt format, and what serves the model
    (Ollama, llama-server or another OpenAI-compatible server: the agent, which doctor runs with
    ACP_LSP_BRIDGE_DOCTOR=1, asks its server at start) and where each prompt goes;
  - the document events it asked for (didOpen, didChange and its sync kind, didClose, didSave,
    didFocus) and the nes/suggest context keys (with maxCount);
  - the negotiated position encoding, and how long initialize and nes/start took;
  - the editor surfaces the bridge will offer with it (inline completion, Copilot inline edits,
    code actions, completion items);
  - the files of the workspace that the exclusion globs keep from the agent (.env, keys, ...;
    --exclude adds globs, as for the bridge), each with its glob, never their text.

Exit status: 0 when the agent can do Next Edit Suggestions; 1 when it cannot, and the last line
says why (the command was not found or could not start, no answer to initialize or nes/start in
time, no nes capability, nes/start refused, the agent exited); 2 for a usage error.

The report goes to stdout: a few lines, or with --json one JSON object (every field is described
in docs/doctor.md). Logs go to stderr, and only with --verbose.

Flags:
`

// doctorOptions are the doctor subcommand's arguments.
type doctorOptions struct {
	json          bool
	verbose       bool
	prompt        bool
	timeout       time.Duration
	promptTimeout time.Duration
	bridgeTimeout time.Duration
	command       acpside.Command
	excludes      *workspace.Excludes
}

func parseDoctorArgs(args []string, stdout, stderr io.Writer) (opts doctorOptions, code int, done bool) {
	var agentArgs []string
	dash := false
	for i, a := range args {
		if a == "--" {
			agentArgs, args, dash = args[i+1:], args[:i], true
			break
		}
	}
	fs := flag.NewFlagSet("acp-lsp-bridge doctor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.BoolVar(&opts.json, "json", false, "print one JSON object instead of the report (fields in docs/doctor.md)")
	fs.DurationVar(&opts.timeout, "timeout", 20*time.Second, "how long to wait for each of the agent's answers to initialize and nes/start")
	fs.BoolVar(&opts.prompt, "prompt", false, "also ask one suggestion on a small sample document and report it with how long it took (for an agent asked through prompts, this costs one prompt of its model)")
	fs.DurationVar(&opts.promptTimeout, "prompt-timeout", time.Minute, "how long --prompt waits for the sample suggestion")
	fs.DurationVar(&opts.bridgeTimeout, "suggest-timeout", 0, "with --prompt: the bridge's --suggest-timeout (or --prompt-timeout, for an agent asked through prompts) you run it with; the sample says whether the agent answers within it (default: the bridge's, 10s, or 30s through prompts)")
	fs.BoolVar(&opts.verbose, "verbose", false, "log the agent's start, its stderr and its exit, and the ACP SDK's messages, to stderr")
	var exclude []string
	fs.Func("exclude", "a `glob` of files kept from the agent besides the defaults, as the bridge's --exclude (repeat for more)", func(g string) error {
		if _, err := workspace.NewExcludes(false, []string{g}); err != nil {
			return err
		}
		exclude = append(exclude, g)
		return nil
	})
	agentName := fs.String("agent", "", "check a known agent by its `name` (as the bridge's --agent: copilot) instead of a command after \"--\"")
	noDefaults := fs.Bool("no-default-excludes", false, "as the bridge's --no-default-excludes: the default exclusion globs keep nothing back")
	fs.Usage = func() {} // the flag package calls it on every error; --help is answered below
	if code, done := parseFlags(fs, args, doctorUsage, "usage: acp-lsp-bridge doctor [--json] [--timeout 20s] [--verbose] -- AGENT [ARGS...] (see --help)", stdout, stderr); done {
		return opts, code, true
	}
	if !dash {
		// Without "--", the first argument that is not a flag starts the agent command.
		agentArgs = fs.Args()
	} else if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "acp-lsp-bridge doctor: unexpected argument %q before \"--\"\n", fs.Arg(0))
		return opts, 2, true
	}
	if *agentName != "" {
		if len(agentArgs) > 0 {
			fmt.Fprintln(stderr, "acp-lsp-bridge doctor: --agent names the agent; give it or a command, not both")
			return opts, 2, true
		}
		c, err := namedAgent(*agentName)
		if err != nil {
			fmt.Fprintf(stderr, "acp-lsp-bridge doctor: %v\n", err)
			return opts, 2, true
		}
		opts.command = c
	} else if len(agentArgs) == 0 {
		// What the bridge runs when no agent is named: its own.
		self, err := os.Executable()
		if err != nil {
			fmt.Fprintf(stderr, "acp-lsp-bridge doctor: cannot find this executable to check the built-in agent (%v); name the agent: acp-lsp-bridge doctor -- AGENT [ARGS...]\n", err)
			return opts, 1, true
		}
		agentArgs = []string{self, "agent"}
	}
	if opts.timeout <= 0 {
		fmt.Fprintf(stderr, "acp-lsp-bridge doctor: --timeout %v: must be more than 0\n", opts.timeout)
		return opts, 2, true
	}
	if opts.command.Path == "" {
		opts.command = acpside.Command{Path: agentArgs[0], Args: agentArgs[1:]}
	}
	opts.excludes, _ = workspace.NewExcludes(!*noDefaults, exclude) // each glob was checked above
	return opts, 0, false
}

// runDoctor is the doctor subcommand.
func runDoctor(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	opts, code, done := parseDoctorArgs(args, stdout, stderr)
	if done {
		return code
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	// Logs go to stderr, and only with --verbose; what doctor reports comes from the agent's
	// events (internal/cmd/doctor), not from them.
	log := zerolog.Nop()
	if opts.verbose {
		zerolog.TimeFieldFormat = time.RFC3339Nano
		log = zerolog.New(zerolog.ConsoleWriter{Out: stderr, NoColor: !isTerminal(stderr), TimeFormat: "15:04:05.000"}).
			Level(zerolog.DebugLevel).With().Timestamp().Logger()
	}
	// The ACP SDK logs through slog's default logger: never to stdout, and only with --verbose.
	slog.SetDefault(slog.New(zerolog.NewSlogHandler(log.With().Str("dir", "acp sdk").Logger())))

	dir, err := os.Getwd()
	if err != nil {
		fmt.Fprintf(stderr, "acp-lsp-bridge doctor: %v\n", err)
		return 2
	}
	opts.command.Dir = dir
	cmd := opts.command
	// The one difference from the bridge's start: the model agent asks its server what it is at
	// start, whatever its format, and says so for the report (model.DoctorEnv).
	cmd.Env = map[string]string{model.DoctorEnv: "1"}
	for k, v := range opts.command.Env {
		cmd.Env[k] = v
	}
	rep := doctor.Check(ctx, doctor.Run{
		Command: cmd,
		Dir:     dir,
		Timeout: opts.timeout,
		Log:     log,
		Version: version,
		Start:   func(o acpside.Options) (*acpside.Agent, error) { return acpside.Start(cmd, o) },
		Sample:  opts.prompt, SampleTimeout: opts.promptTimeout, BridgeTimeout: opts.bridgeTimeout,

		Excludes: opts.excludes,
	})
	if opts.json {
		_, err = stdout.Write(rep.JSON())
	} else {
		_, err = io.WriteString(stdout, rep.Human(isTerminal(stdout) && os.Getenv("NO_COLOR") == ""))
	}
	if err != nil {
		fmt.Fprintf(stderr, "acp-lsp-bridge doctor: %v\n", err)
	}
	if !rep.OK {
		return 1
	}
	return 0
}
