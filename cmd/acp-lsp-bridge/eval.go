package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/acpside"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/eval"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent/model"
)

// evalUsage is what eval --help prints before the flags.
var evalUsage = `acp-lsp-bridge eval: how well a model predicts the next edit, through the bridge's model agent.

Usage:
  acp-lsp-bridge eval --model-url URL --model NAME [--model-format F] [--model-server S]
                      [--model-context N] [--api-key-env VAR] [--timeout D] [--no-gate | --gate-effect]
                      [--json] [DIR]

Example, with llama.cpp's server running a coding model on this machine:
  llama-server -m qwen2.5-coder-7b-instruct-q4_k_m.gguf --port 8080
  acp-lsp-bridge eval --model-url http://127.0.0.1:8080 --model qwen2.5-coder-7b

eval runs each scenario through the real model agent: it starts "acp-lsp-bridge agent" with the
model flags given here (one agent per scenario), speaks ACP with it as the bridge does
(initialize, nes/start, document/didOpen, a document/didChange for each recorded edit, so the
agent's edit history is real), asks nes/suggest at the cursor, applies the first edit suggested
for the document and scores the result (other suggestions are left aside; --json lists them).
Without DIR it runs the scenarios built into the binary (Go, Python, TypeScript, JavaScript,
Rust and others); with DIR, the *.txtar files of that directory.

Progress goes to stderr, a line per scenario. The report goes to stdout: a table per scenario,
per kind and in total, or with --json the same as one JSON object.

Metrics:
  exact matches         the document after the suggestion is exactly the expected text (for a
                        scenario that expects nothing: no suggestion, or one that changes nothing)
  chrF                  chrF (character n-grams of 1 to 6 characters, whitespace left out, beta 2,
                        as sacrebleu's default chrF2; 0 to 100) of the changed lines of the result
                        against the changed lines of the expected text; the mean over the
                        scenarios that expect a change (the others have none). The changed lines
                        of a text are the text without the whole lines it shares with the last
                        version at its start and at its end. A result that changed nothing has
                        none, and scores 0; a result that also changed lines elsewhere has them
                        (and the lines between) among its changed lines, which lowers its score.
  shown where expected  how often the agent suggested an edit where one was expected
  quiet where none      how often it suggested none where none was expected
  kept back             the answers the agent had but did not show, by rule (its quality gate:
                        cut-short, whitespace, prompt-copy, runaway, rewrite, undo; or what it
                        cannot show: no-change, unreadable, unfit-text, outside-region), and how
                        many of them were where nothing was expected (noise kept back) or where
                        an edit was (an answer lost); --no-gate runs the agent without its gate,
                        and --gate-effect runs the scenarios both ways and sets the figures side
                        by side
  latency               p50 and p90 (nearest rank) of the time nes/suggest took; as each scenario
                        has an agent of its own, each includes a new connection to the server
                        (and, for a raw format with --model-server auto, its /api/version probe:
                        name the server to leave it out)

A scenario that cannot be evaluated (the agent or the model's server failed, no answer in time)
counts as failed and in none of the metrics. When the first scenario fails, eval stops there and
says why (a model server that is down, a wrong URL or model name, a missing API key).

Exit status: 0 when scenarios were evaluated; 1 when none could be (the first failed, or every
one) or eval was interrupted; 2 for a usage error or a malformed scenario file.

Scenario files:
` + eval.FormatHelp + `

Example scenario:
` + indentText(eval.Example) + `

Flags:
`

// indentText indents each line of s that has text by two spaces.
func indentText(s string) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) != "" {
			lines[i] = "  " + l
		}
	}
	return strings.Join(lines, "")
}

// evalOptions are the eval subcommand's arguments.
type evalOptions struct {
	url, model, format, server, keyEnv string
	contextTokens                      int
	timeout                            time.Duration
	json, verbose, noGate, gateEffect  bool
	dir                                string
}

func parseEvalArgs(args []string, stdout, stderr io.Writer) (opts evalOptions, code int, done bool) {
	fs := flag.NewFlagSet("acp-lsp-bridge eval", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {}
	fs.StringVar(&opts.url, "model-url", "", "base `URL` of the model's OpenAI-compatible server (as for agent)")
	fs.StringVar(&opts.model, "model", "", "the model's `name` on that server")
	fs.StringVar(&opts.format, "model-format", "auto", "the model's prompt `format`: "+model.FormatNames+" (passed to the agent)")
	fs.StringVar(&opts.server, "model-server", "auto", "what serves the model: auto, openai or ollama (passed to the agent)")
	fs.IntVar(&opts.contextTokens, "model-context", 0, "the model's context size in `tokens` (passed to the agent; 0: the format's own bound)")
	fs.StringVar(&opts.keyEnv, "api-key-env", "", "the environment `variable` holding the server's API key (passed to the agent)")
	fs.DurationVar(&opts.timeout, "timeout", 30*time.Second, "how long one request to the model may take (passed to the agent, whose own default is "+model.DefaultTimeout.String()+"; a scenario without an answer by then fails)")
	fs.BoolVar(&opts.json, "json", false, "print the report as one JSON object")
	fs.BoolVar(&opts.gateEffect, "gate-effect", false, "run the scenarios twice, with the agent's quality gate and without it, and report what the gate changes: shown where expected, quiet where none, chrF, exact matches (twice the model's time)")
	fs.BoolVar(&opts.noGate, "no-gate", false, "run the agent with --no-gate: its quality gate off, every answer that changes the region shown (compare with a run without it to see what the gate does)")
	fs.BoolVar(&opts.verbose, "verbose", false, "also run the agent with --verbose and copy its stderr (prompt format, request sizes and timings, why an answer was dropped) to stderr")
	if code, done := parseFlags(fs, args, evalUsage, "run acp-lsp-bridge eval --help for the flags", stdout, stderr); done {
		return opts, code, true
	}
	switch {
	case fs.NArg() > 1:
		fmt.Fprintf(stderr, "acp-lsp-bridge eval: unexpected argument %q: give at most one scenario directory\n", fs.Arg(1))
		return opts, 2, true
	case fs.NArg() == 1:
		opts.dir = fs.Arg(0)
	}
	if opts.url == "" || opts.model == "" {
		fmt.Fprintln(stderr, "acp-lsp-bridge eval: --model-url and --model are required, such as --model-url http://127.0.0.1:8080 --model qwen2.5-coder-7b (see --help)")
		return opts, 2, true
	}
	if opts.gateEffect && opts.noGate {
		fmt.Fprintln(stderr, "acp-lsp-bridge eval: --gate-effect runs with the gate and without it; leave out --no-gate")
		return opts, 2, true
	}
	if opts.timeout <= 0 {
		fmt.Fprintf(stderr, "acp-lsp-bridge eval: --timeout %v: must be more than 0\n", opts.timeout)
		return opts, 2, true
	}
	// What the agent would refuse, said here before any scenario runs.
	cfg := model.Config{URL: opts.url, Model: opts.model, Format: opts.format, Server: opts.server, ContextTokens: opts.contextTokens, Timeout: opts.timeout}
	if _, err := model.New(cfg); err != nil {
		fmt.Fprintf(stderr, "acp-lsp-bridge eval: %v\n", err)
		return opts, 2, true
	}
	if opts.keyEnv != "" && os.Getenv(opts.keyEnv) == "" {
		fmt.Fprintf(stderr, "acp-lsp-bridge eval: --api-key-env %s: the variable is empty or unset\n", opts.keyEnv)
		return opts, 2, true
	}
	return opts, 0, false
}

// agentArgs are the arguments of the agent evaluated.
func (o evalOptions) agentArgs() []string {
	args := []string{"agent", "--model-url", o.url, "--model", o.model, "--model-format", o.format,
		"--model-server", o.server, "--model-context", strconv.Itoa(o.contextTokens), "--timeout", o.timeout.String()}
	if o.keyEnv != "" {
		args = append(args, "--api-key-env", o.keyEnv)
	}
	if o.verbose {
		args = append(args, "--verbose")
	}
	if o.noGate {
		args = append(args, "--no-gate")
	}
	return args
}

// runEval is the eval subcommand.
func runEval(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	opts, code, done := parseEvalArgs(args, stdout, stderr)
	if done {
		return code
	}
	var scenarios []*eval.Scenario
	var err error
	if opts.dir == "" {
		scenarios, err = eval.Embedded()
	} else {
		scenarios, err = eval.Load(os.DirFS(opts.dir), ".")
	}
	if err != nil {
		where := "the built-in scenarios"
		if opts.dir != "" {
			where = opts.dir
		}
		fmt.Fprintf(stderr, "acp-lsp-bridge eval: %s: %v\n", where, err)
		return 2
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "acp-lsp-bridge eval: cannot find this executable to start its agent: %v\n", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	// The ACP SDK logs through slog's default logger: never to stdout, nor here at all.
	slog.SetDefault(slog.New(slog.DiscardHandler))

	cfg := eval.Config{
		Agent:          acpside.Command{Path: self, Args: opts.agentArgs()},
		Version:        version,
		SuggestTimeout: opts.timeout + 10*time.Second,
		Progress:       stderr,
		Log:            zerolog.Nop(),
	}
	if opts.verbose {
		cfg.AgentStderr = stderr
	}
	fmt.Fprintf(stderr, "eval: %d scenarios, model %q at %s\n", len(scenarios), opts.model, opts.url)
	rep, err := eval.Run(ctx, cfg, scenarios)
	rep.Model, rep.URL = opts.model, opts.url
	if opts.gateEffect && err == nil {
		fmt.Fprintln(stderr, "eval: again, with the agent's quality gate off (--no-gate)")
		off := cfg
		off.Agent.Args = append(opts.agentArgs(), "--no-gate")
		without, werr := eval.Run(ctx, off, scenarios)
		if werr == nil {
			rep.WithoutGate = &without.Total
		}
		err = werr
	}
	if opts.json {
		_, _ = stdout.Write(rep.JSON())
	} else {
		_, _ = io.WriteString(stdout, rep.Human())
	}
	if err != nil {
		msg := rep.Stopped
		if msg == "" {
			msg = err.Error()
		}
		fmt.Fprintf(stderr, "acp-lsp-bridge eval: %s\n", msg)
	}
	if rep.Total.Evaluated == 0 {
		if err == nil {
			fmt.Fprintln(stderr, "acp-lsp-bridge eval: no scenario could be evaluated")
		}
		return 1
	}
	if ctx.Err() != nil { // interrupted: the report is partial
		return 1
	}
	return 0
}
