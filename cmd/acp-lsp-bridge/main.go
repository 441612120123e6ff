// Command acp-lsp-bridge is a language server that brings Next Edit Suggestions from any Agent
// Client Protocol (ACP) agent to any LSP editor. The editor starts it as a language server; it
// starts the agent given after "--" as a child process.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/pprof"
	exectrace "runtime/trace"
	"strings"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/acpside"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/buildinfo"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/wiretrace"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/lspside"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/workspace"
)

// version is what --version prints, serverInfo says and the agent hears in clientInfo: stamped
// in release builds, otherwise what the Go toolchain recorded (internal/buildinfo).
var version = buildinfo.Version()

const usage = `acp-lsp-bridge: Next Edit Suggestions from any ACP agent in any LSP editor.

Usage:
  acp-lsp-bridge [flags] -- AGENT [ARGS...]
  acp-lsp-bridge [flags] --agent copilot      (GitHub Copilot's language server, a known agent)
  acp-lsp-bridge [flags]                      (agent from initializationOptions.agent)
  acp-lsp-bridge agent [--model-url URL ...]  (the bridge's own NES agent, on stdin/stdout)
  acp-lsp-bridge demo                         (a scripted session; no setup, no network)
  acp-lsp-bridge doctor [--json] -- AGENT...  (can this agent do NES with the bridge? see doctor --help)
  acp-lsp-bridge sign-in copilot              (sign in to GitHub Copilot with a code, no browser needed)
  acp-lsp-bridge eval --model-url URL --model NAME [DIR]  (how well a model predicts the next edit; see eval --help)

Your editor starts acp-lsp-bridge as a language server on stdin/stdout. The bridge starts the
agent command after "--" as a child process (never through a shell) and speaks ACP with it on
the child's stdin/stdout. An agent that offers Next Edit Suggestions (agentCapabilities.nes) is
asked for them; any other is asked through prompts (below).

Instead of "--", the editor may name the agent in its initialize request:
  "initializationOptions": {"agent": {"command": "my-agent", "args": ["--acp"], "env": {"K": "V"}}}
A command line agent wins over initializationOptions.

Neovim 0.12 example (the bridge's own agent with a local model; any NES agent goes after "--"):
  vim.lsp.config('acp', { cmd = { 'acp-lsp-bridge', '--', 'acp-lsp-bridge', 'agent', '--model-url', 'http://127.0.0.1:11434', '--model', 'qwen2.5-coder:7b' }, filetypes = { 'go', 'lua' } })
  vim.lsp.enable('acp')
  vim.lsp.inline_completion.enable()

What the editor gets: textDocument/inlineCompletion items (ghost text) for the agent's edit
suggestions on the cursor line; accepting one runs the command acp-lsp-bridge.accept, which tells
the agent (nes/accept). Positions are converted between the encodings each side negotiated
(utf-8, utf-16, utf-32).

The agent gets the context it asks for (open and recent files, edit history, user actions,
diagnostics, related snippets), may read and write workspace files through the editor, and may ask
the user to sign in or for permission (window/showMessageRequest; --user-wait bounds the wait).
It sees nothing outside the workspace folders, and none of the files the exclusion globs keep from
it (.env, keys and the like, --exclude to add; docs/security.md): not their text, not their names.
Editor configurations can send acp-lsp-bridge/didFocus on entering a buffer and
acp-lsp-bridge/diagnostics with the diagnostics the editor shows (see docs/surfaces.md).

Without an agent configured, the bridge starts its own built-in agent (acp-lsp-bridge agent:
rename propagation and repeated edits, no model; see agent --help, which also connects any
OpenAI-compatible model server).

Agents without Next Edit Suggestions (the coding agents people run: Claude, Codex, Gemini over
ACP) are asked through prompts instead: one ACP session, a session/prompt per suggestion, the
answer shown on the same surfaces. Each costs seconds and tokens of the agent's model, so by
default only what you ask for is prompted: the acp-lsp-bridge.suggest command, inline completion
invoked by hand, code actions (but the editor's automatic ones); --prompts auto also prompts while
you type, --prompts off never. The agent changes no file: a read-only mode is chosen when it has
one, its permission requests are refused, its proposed edits become suggestions, and an agent that
writes a workspace file by itself is asked nothing more until acp-lsp-bridge.restart.

Logs go to stderr, or to --log-file; stdout carries only LSP messages.

Flags:
`

type config struct {
	logFile        string
	logLevel       string
	trace          string
	cpuProfile     string
	execTrace      string
	agent          *acpside.Command
	suggestTimeout time.Duration
	stuckAfter     time.Duration
	userWait       time.Duration
	maxMessage     int
	prompts        string
	promptTimeout  time.Duration
	promptTurns    int
	maxEditor      int
	exclude        []string
	noDefaultExcl  bool
	delay          time.Duration
	askAhead       time.Duration
	askAheadBilled bool
	automatic      bool
	codeActionWait time.Duration
}

func main() {
	// The bridge holds the editor's open documents for as long as they are open, so most of its
	// heap is live. Go collects garbage once the heap has doubled; collecting when it has grown by
	// half keeps resident memory nearer to what the bridge holds, for a little more CPU (README, "Performance":
	// the memory budget). GOGC in the environment still decides.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(50)
	}
	os.Exit(Run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// Run parses args and runs the bridge on stdin/stdout. It returns the process exit code.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "demo":
			return runDemo(ctx, args[1:], stdout, stderr)
		case "agent":
			return runAgent(ctx, args[1:], stdin, stdout, stderr)
		case "doctor":
			return runDoctor(ctx, args[1:], stdout, stderr)
		case "eval":
			return runEval(ctx, args[1:], stdout, stderr)
		case "sign-in":
			return runSignIn(ctx, args[1:], stdout, stderr)
		}
	}
	cfg, code, done := parseArgs(args, stderr, stdout)
	if done {
		return code
	}
	log, closeLog, err := newLogger(cfg, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "acp-lsp-bridge: %v\n", err)
		return 2
	}
	defer closeLog()
	var trace *wiretrace.Writer
	if cfg.trace != "" {
		if trace, err = wiretrace.Create(cfg.trace); err != nil {
			fmt.Fprintf(stderr, "acp-lsp-bridge: --trace: %v\n", err)
			return 2
		}
		defer trace.Close()
	}
	// The recordings for work on speed, kept until Run returns.
	for _, r := range []struct {
		flag, path string
		start      func(io.Writer) error
		stop       func()
	}{
		{"--cpu-profile", cfg.cpuProfile, pprof.StartCPUProfile, pprof.StopCPUProfile},
		{"--exec-trace", cfg.execTrace, exectrace.Start, exectrace.Stop},
	} {
		if r.path == "" {
			continue
		}
		end, err := record(r.path, r.start, r.stop)
		if err != nil {
			fmt.Fprintf(stderr, "acp-lsp-bridge: %s: %v\n", r.flag, err)
			return 2
		}
		defer end()
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	// The ACP SDK logs through slog's default logger; it must never reach stdout.
	slog.SetDefault(slog.New(zerolog.NewSlogHandler(log.With().Str("dir", "acp sdk").Logger())))
	log.Info().Str("version", version).Msg("acp-lsp-bridge starting")
	return run(ctx, stdin, stdout, cfg, log, trace)
}

// record starts a recording (a CPU profile, an execution trace) into a new file at path; end stops
// it and closes the file.
func record(path string, start func(io.Writer) error, stop func()) (end func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := start(f); err != nil {
		_ = f.Close()
		return nil, err
	}
	return func() {
		stop()
		_ = f.Close()
	}, nil
}

func run(ctx context.Context, stdin io.Reader, stdout io.Writer, cfg config, log zerolog.Logger, trace *wiretrace.Writer) int {
	var builtinAgent *acpside.Command
	if self, err := os.Executable(); err == nil {
		builtinAgent = &acpside.Command{Path: self, Args: []string{"agent"}}
	} else {
		log.Warn().Err(err).Msg("cannot find the bridge's own executable; no built-in agent")
	}
	return lspside.Serve(ctx, stdin, stdout, lspside.Config{
		Agent:           cfg.agent,
		DefaultAgent:    builtinAgent,
		Version:         version,
		Log:             log,
		Trace:           trace,
		SuggestTimeout:  cfg.suggestTimeout,
		StuckAfter:      cfg.stuckAfter,
		UserWait:        cfg.userWait,
		MaxMessageBytes: cfg.maxMessage,
		Prompts:         cfg.prompts,
		PromptTimeout:   cfg.promptTimeout,
		PromptTurns:     cfg.promptTurns,
		Delay:           cfg.delay,
		AskAhead:        cfg.askAhead,
		AskAheadBilled:  cfg.askAheadBilled,
		AutomaticOff:    !cfg.automatic,
		CodeActionWait:  cfg.codeActionWait,

		MaxEditorMessageBytes: cfg.maxEditor,
		Exclude:               cfg.exclude,
		NoDefaultExcludes:     cfg.noDefaultExcl,
	})
}

func parseArgs(args []string, stderr, stdout io.Writer) (cfg config, code int, done bool) {
	var agentArgs []string
	for i, a := range args {
		if a == "--" {
			agentArgs = args[i+1:]
			args = args[:i]
			break
		}
	}
	fs := flag.NewFlagSet("acp-lsp-bridge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.logFile, "log-file", "", "append logs to this `file` instead of stderr")
	fs.StringVar(&cfg.cpuProfile, "cpu-profile", "", "write a CPU profile of the bridge to this `file` (Go's pprof format, for `go tool pprof`) until it exits: for work on its speed")
	fs.StringVar(&cfg.execTrace, "exec-trace", "", "write a Go execution trace of the bridge to this `file` (runtime/trace, for `go tool trace`) until it exits: for work on its speed, it shows each goroutine a request crosses, when it ran and what it waited on; it holds no document text")
	fs.StringVar(&cfg.trace, "trace", "", "write every message on both wires (editor and agent) to this `file`, one JSON object per line: {time, dir, message}; it contains document text")
	fs.StringVar(&cfg.logLevel, "log-level", "info", "log `level`: debug, info, warn or error (debug logs every message's method, never document text)")
	fs.DurationVar(&cfg.stuckAfter, "agent-stuck-after", acpside.DefaultStuckAfter, "how long the agent may read nothing of what the bridge sends it (`duration`) before the bridge ends it and starts it again with the editor's current text; the editor never waits on the agent meanwhile")
	fs.DurationVar(&cfg.suggestTimeout, "suggest-timeout", lspside.DefaultSuggestTimeout, "the longest the editor waits for the agent's suggestions (`duration`); after it the agent's request is cancelled and the editor gets an empty result (after 3 in a row the bridge tells you); initializationOptions.suggestTimeout (milliseconds) sets it too, this flag wins")
	fs.IntVar(&cfg.maxMessage, "max-message-size", lspside.DefaultMaxMessageBytes, "the largest message the agent is sent, in `bytes` (the ACP Go SDK reads at most 10 MiB); a document whose text does not fit is not sent to the agent and gets no suggestions")
	fs.DurationVar(&cfg.userWait, "user-wait", 2*time.Minute, "the longest a question to the user (sign-in, permission, a manual suggestion) stays open (`duration`); unanswered, it counts as declined")
	fs.StringVar(&cfg.prompts, "prompts", "", "for an agent without Next Edit Suggestions, which requests are asked through prompts (`mode`): explicit (what you ask for; the default), auto (also while you type) or off; initializationOptions.prompts sets it too, this flag wins")
	fs.DurationVar(&cfg.promptTimeout, "prompt-timeout", lspside.DefaultPromptTimeout, "the longest a request asked through a prompt waits for the agent's answer (`duration`); initializationOptions.promptTimeout (milliseconds) sets it too, this flag wins")
	fs.IntVar(&cfg.promptTurns, "prompt-turns", acpside.DefaultPromptTurns, "how many suggestions one session of an agent asked through prompts serves (`count`) before the bridge opens a new one, so that the session's history stays small; the old one is closed (session/close) when the agent offers it")
	fs.IntVar(&cfg.maxEditor, "max-editor-message-size", lspside.DefaultMaxEditorMessageBytes, "the largest message read from the editor, in `bytes`; a larger one (or a header line over 64 KiB) is refused before its memory is taken, and the bridge exits, since nothing after it can be read")
	fs.Func("exclude", "a `glob` of files kept from the agent, besides the defaults (.env, .env.*, *.pem, *.key, id_rsa*, .ssh/**, ...: see docs/security.md); matched at any depth, ignoring case; repeat the flag for more; initializationOptions.exclude adds more", func(g string) error {
		if _, err := workspace.NewExcludes(false, []string{g}); err != nil {
			return err
		}
		cfg.exclude = append(cfg.exclude, g)
		return nil
	})
	fs.BoolVar(&cfg.noDefaultExcl, "no-default-excludes", false, "send the agent the files that the default exclusion globs keep from it (.env, keys, ...); initializationOptions.defaultExcludes: false does the same")
	fs.Func("delay", "how long a document must be still (counted from your last change; a newer request replaces the one before) before the agent is asked for suggestions while you type: a number of `milliseconds` (300) or a duration (300ms); what you ask for by hand goes at once. Default: none for an agent with Next Edit Suggestions, 600ms for one asked through prompts; 150-300ms suits a local model (README, \"When suggestions are asked\"). initializationOptions.delay sets it too, this flag wins", func(v string) error {
		d, err := lspside.ParseDelay(v)
		cfg.delay = d
		return err
	})
	fs.DurationVar(&cfg.askAhead, "ask-ahead", lspside.SuggestedAskAhead, "once a document has been still this long (a `duration`) after a change, ask the agent for a suggestion at the end of that change before the editor asks; the editor's request there takes that answer (editors wait on their own before they ask: Neovim 200 ms). 150ms, the default, suits typing at 8 keys a second; 0 turns it off. Only for an editor that asks while you type, never while you type through a suggestion shown, and not for agents billed per request (asked through prompts, or saying so) unless --ask-ahead-billed")
	fs.BoolVar(&cfg.askAheadBilled, "ask-ahead-billed", false, "ask ahead (--ask-ahead) agents billed per request too: each change you pause after costs a request")
	fs.DurationVar(&cfg.codeActionWait, "code-action-wait", lspside.DefaultCodeActionWait, "the longest a code-action request waits for the agent (`duration`): editors open their menu only once every language server has answered, so after it the bridge answers with the suggestions it has, and the agent's later answer is offered at the next request and as ghost text")
	fs.BoolVar(&cfg.automatic, "automatic", true, "ask the agent for suggestions while you type; --automatic=false starts with them off (what you ask for by hand still works; the command acp-lsp-bridge.enable turns them on). initializationOptions.automatic: false does the same")
	agentName := fs.String("agent", "", agentFlagHelp())
	showVersion := fs.Bool("version", false, "print the version and exit")
	// flag prints a parse error and then calls Usage; the full usage goes to stdout for --help only.
	fs.Usage = func() {}
	if code, done := parseFlags(fs, args, usage, "run acp-lsp-bridge --help for the flags", stdout, stderr); done {
		return cfg, code, true
	}
	if *showVersion {
		fmt.Fprintf(stdout, "acp-lsp-bridge %s\n", version)
		return cfg, 0, true
	}
	// The timeouts' flags win over initializationOptions only when given.
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	defer func() {
		if !given["suggest-timeout"] {
			cfg.suggestTimeout = 0
		}
		if !given["prompt-timeout"] {
			cfg.promptTimeout = 0
		}
	}()
	if cfg.maxEditor < 1<<20 {
		fmt.Fprintln(stderr, "acp-lsp-bridge: --max-editor-message-size must be at least 1048576 bytes")
		return cfg, 2, true
	}
	if cfg.maxMessage < 64<<10 {
		fmt.Fprintln(stderr, "acp-lsp-bridge: --max-message-size must be at least 65536 bytes")
		return cfg, 2, true
	}
	if cfg.suggestTimeout <= 0 || cfg.userWait <= 0 || cfg.stuckAfter <= 0 || cfg.promptTimeout <= 0 || cfg.codeActionWait <= 0 {
		fmt.Fprintln(stderr, "acp-lsp-bridge: --suggest-timeout, --prompt-timeout, --code-action-wait, --user-wait and --agent-stuck-after must be positive durations, such as 10s or 2m")
		return cfg, 2, true
	}
	if cfg.promptTurns < 1 {
		fmt.Fprintln(stderr, "acp-lsp-bridge: --prompt-turns must be at least 1")
		return cfg, 2, true
	}
	if cfg.prompts != "" && !lspside.ValidPrompts(cfg.prompts) {
		fmt.Fprintf(stderr, "acp-lsp-bridge: --prompts %q: want explicit, auto or off\n", cfg.prompts)
		return cfg, 2, true
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "acp-lsp-bridge: unexpected argument %q; put the agent command after \"--\"\n", fs.Arg(0))
		return cfg, 2, true
	}
	if *agentName != "" {
		if len(agentArgs) > 0 {
			fmt.Fprintln(stderr, "acp-lsp-bridge: --agent names the agent; give it or a command after \"--\", not both")
			return cfg, 2, true
		}
		c, err := namedAgent(*agentName)
		if err != nil {
			fmt.Fprintf(stderr, "acp-lsp-bridge: %v\n", err)
			return cfg, 2, true
		}
		cfg.agent = &c
	} else if len(agentArgs) > 0 {
		cfg.agent = &acpside.Command{Path: agentArgs[0], Args: agentArgs[1:]}
	} else if agentArgs != nil {
		fmt.Fprintln(stderr, "acp-lsp-bridge: \"--\" must be followed by the agent command")
		return cfg, 2, true
	}
	return cfg, 0, false
}

func newLogger(cfg config, stderr io.Writer) (zerolog.Logger, func(), error) {
	level, err := zerolog.ParseLevel(strings.ToLower(cfg.logLevel))
	if err != nil || cfg.logLevel == "" {
		return zerolog.Nop(), nil, fmt.Errorf("--log-level %q: use debug, info, warn or error", cfg.logLevel)
	}
	var w io.Writer = stderr
	closeFn := func() {}
	if cfg.logFile != "" {
		f, err := os.OpenFile(cfg.logFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return zerolog.Nop(), nil, fmt.Errorf("--log-file: %w", err)
		}
		w = f
		closeFn = func() { _ = f.Close() }
	}
	zerolog.TimeFieldFormat = time.RFC3339Nano
	return zerolog.New(w).Level(level).With().Timestamp().Logger(), closeFn, nil
}

// parseFlags parses a command's args with fs. --help prints usage and the flags to stdout (code
// 0); a bad flag, which fs has already reported on stderr, adds hint there (code 2). done says the
// command ends here.
func parseFlags(fs *flag.FlagSet, args []string, usage, hint string, stdout, stderr io.Writer) (code int, done bool) {
	err := fs.Parse(args)
	switch {
	case err == nil:
		return 0, false
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(stdout, usage)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		return 0, true
	}
	fmt.Fprintln(stderr, hint)
	return 2, true
}
