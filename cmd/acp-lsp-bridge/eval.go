package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/acpside"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/cmd/eval"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent/model"
)

// evalUsage is what eval --help prints before the flags.
var evalUsage = `acp-lsp-bridge eval: how well a model predicts the next edit, through the bridge's model agent.

Usage:
  acp-lsp-bridge eval --model-url URL --model NAME [--model-format F] [--model-server S]
  acp-lsp-bridge eval --model-format codestral|mercury|sweep-api [--model-url URL] [--model NAME]
                      [--model-context N] [--api-key-env VAR] [--timeout D] [--no-gate | --gate-effect]
                      [--fim-tokens F] [--fim-sampling S] [--fim-chunks N] [--fim-chunk-lines N]
                      [--set auto|nes|fim] [--json] [DIR]

Example, with llama.cpp's server running a coding model on this machine:
  llama-server -m qwen2.5-coder-7b-instruct-q4_k_m.gguf --port 8080
  acp-lsp-bridge eval --model-url http://127.0.0.1:8080 --model qwen2.5-coder-7b

and a fill-in-the-middle model, asked for completions at the cursor (llama-server's /infill):
  llama-server -m qwen2.5-coder-1.5b-q8_0.gguf --port 8080
  acp-lsp-bridge eval --model-url http://127.0.0.1:8080 --model qwen2.5-coder-1.5b --model-format fim

and a hosted service, whose address, model and key variable (here INCEPTION_API_KEY) are the
format's own unless given, as for "acp-lsp-bridge agent":
  acp-lsp-bridge eval --model-format mercury

eval runs each scenario through the real model agent: it starts "acp-lsp-bridge agent" with the
model flags given here (one agent per scenario), speaks ACP with it as the bridge does
(initialize, nes/start, document/didOpen, a document/didChange for each recorded edit, so the
agent's edit history is real), asks nes/suggest at the cursor, applies the first edit suggested
for the document and scores the result (other suggestions are left aside; --json lists them).
Without DIR it runs one of the two sets of scenarios built into the binary (Go, Python,
TypeScript, JavaScript, Rust, C, Java and others), the one the prompt format is made for:
  the FIM set   for the formats that complete at the cursor (--model-format fim or codestral):
                completions inserted at the cursor (kind complete: a return finished, a loop's
                body, an argument list, a dict's next key) and cases where nothing is to be
                inserted (kind nothing)
  the NES set   for every other format: next edits near the cursor (every other kind)
--set nes or --set fim runs the set named whatever the format (default auto: as above); the
report names the set that ran. With DIR, the *.txtar files of that directory run instead.

With --model-format fim or codestral, eval passes --fim-tokens, --fim-sampling, --fim-chunks and
--fim-chunk-lines to the agent, with the defaults below unless given (acp-lsp-bridge agent --help
says what each does); with another format they are refused, as the agent would not use them.

Progress goes to stderr, a line per scenario. The report goes to stdout: a table per scenario,
per kind and in total, or with --json the same as one JSON object (per scenario latencyMs,
modelMs, connectMs and startMs; in the totals latencyP50Ms, modelP50Ms, connectP50Ms, startP50Ms
and their P90s; null where not known).

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
                        cut-short, whitespace, prompt-copy, runaway, rewrite, undo, and for a
                        completion at the cursor repeats-suffix, past-line, repeats-above; or what it
                        cannot show: unreadable, unfit-text, outside-region), and how
                        many of them were where nothing was expected (noise kept back) or where
                        an edit was (an answer lost); --no-gate runs the agent without its gate,
                        and --gate-effect runs the scenarios both ways and sets the figures side
                        by side
  no change             the answers of the model that changed nothing (an empty completion, the
                        region as it was: the agent's rule no-change), which are no suggestion
                        and not counted as kept back; how many of them were where an edit was
                        expected (in the table, only when there are some)
  latency               p50 and p90 (nearest rank) of the time to the first suggestion shown
                        (speed is when the first of it appears), and on the settled line, to the
                        answer's end; as each scenario has an agent of its own, each includes the
                        agent's first request to the server: a new connection (and, for a raw
                        format with --model-server auto, its /api/version probe: name the server
                        to leave it out) and the model's time; not the agent's start
  first suggestion      the agent's first answer, while its model may still write (a streamed
                        rewrite is answered with its first change): when it came and its score,
                        per scenario (FIRST CHRF, FIRST MS) and in the totals. An agent that says
                        its answer grows (_meta "acp-lsp-bridge/growing") is asked again at the
                        same place until it has ended: the quality figures are that settled
                        suggestion's, what the user sees once the model has finished
  model's time          p50 and p90 of the model's part of the latency: from the prompt written
                        to the server to the answer read whole, as the agent logs each answer
                        (its "model: answer" line, took less setup)
  first connection      p50 and p90 of the part of the agent's first request before the server
                        had the prompt (setup: the new connection, the /api/version probe)
  agent start           p50 and p90 of the time from the agent's process start to its answer to
                        nes/start, before the scenario's edits are replayed; in no latency

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
	allowInsecureKey                   bool
	dir                                string
	// set is the built-in set asked for: auto, nes or fim (resolved by scenarioSet).
	set string
	// The FIM flags, passed to the agent for a format that completes at the cursor.
	fimTokens, fimSampling   string
	fimChunks, fimChunkLines int
}

// fimFlags are the names of the flags passed to the agent only for a FIM format.
var fimFlags = []string{"fim-tokens", "fim-sampling", "fim-chunks", "fim-chunk-lines"}

// completesAtCursor tells that a format (as --model-format names it, auto resolved by the model's
// name) inserts its answer at the cursor: the fill-in-the-middle formats, which the FIM set is
// for.
func completesAtCursor(format, modelName string) bool {
	f, _, err := model.PickFormat(format, modelName)
	return err == nil && model.AtCursor(f)
}

// scenarioSet is the built-in set that runs: the one asked for, or with auto the one the format
// is made for.
func (o evalOptions) scenarioSet() string {
	if o.set != "auto" {
		return o.set
	}
	if completesAtCursor(o.format, o.model) {
		return eval.SetFIM
	}
	return eval.SetNES
}

func parseEvalArgs(args []string, stdout, stderr io.Writer) (opts evalOptions, code int, done bool) {
	fs := flag.NewFlagSet("acp-lsp-bridge eval", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {}
	fs.StringVar(&opts.url, "model-url", "", "base `URL` of the model's OpenAI-compatible server (as for agent)")
	fs.StringVar(&opts.model, "model", "", "the model's `name` on that server")
	fs.StringVar(&opts.format, "model-format", "auto", "the model's prompt `format`: "+model.FormatNames+" (passed to the agent)")
	fs.StringVar(&opts.server, "model-server", "auto", "the `kind` of server the model is on: auto, openai, ollama or llama-server (passed to the agent)")
	fs.IntVar(&opts.contextTokens, "model-context", 0, "the model's context size in `tokens` (passed to the agent; 0: the format's own bound)")
	fs.StringVar(&opts.keyEnv, "api-key-env", "", "the environment `variable` holding the server's API key (passed to the agent)")
	fs.BoolVar(&opts.allowInsecureKey, "allow-insecure-key", false, "send the API key over plain http:// to a server that is neither on this machine nor on a private network (passed to the agent)")
	fs.DurationVar(&opts.timeout, "timeout", 30*time.Second, "how long one request to the model may take (passed to the agent, whose own default is "+model.DefaultTimeout.String()+"; a scenario without an answer by then fails)")
	fs.BoolVar(&opts.json, "json", false, "print the report as one JSON object")
	fs.BoolVar(&opts.gateEffect, "gate-effect", false, "run the scenarios twice, with the agent's quality gate and without it, and report what the gate changes: shown where expected, quiet where none, chrF, exact matches (twice the model's time)")
	fs.BoolVar(&opts.noGate, "no-gate", false, "run the agent with --no-gate: its quality gate off, every answer that changes the region shown (compare with a run without it to see what the gate does)")
	fs.StringVar(&opts.set, "set", "auto", "the built-in `set` of scenarios run without DIR: auto (fim for --model-format fim or codestral, else nes), nes (next edits near the cursor) or fim (completions at the cursor)")
	fs.StringVar(&opts.fimTokens, "fim-tokens", "auto", "for --model-format fim or codestral, on a server that is neither llama-server nor Ollama: the `family` whose FIM tokens write the prompt, one of "+model.FIMTokenNames()+" (passed to the agent)")
	fs.StringVar(&opts.fimSampling, "fim-sampling", "llama.vim", "for --model-format fim or codestral, at llama-server's /infill: the `sampling` of the answer, llama.vim or server (its own --temp, --top-k, --samplers, --seed; passed to the agent)")
	fs.IntVar(&opts.fimChunks, "fim-chunks", 16, "for --model-format fim or codestral: how many `chunks` of other files the prompt carries at most, 0 for none (passed to the agent)")
	fs.IntVar(&opts.fimChunkLines, "fim-chunk-lines", 64, "for --model-format fim or codestral: the `lines` of each chunk (passed to the agent)")
	fs.BoolVar(&opts.verbose, "verbose", false, "copy the agent's stderr (it runs with --verbose: prompt format, request sizes and timings, why an answer was dropped) to stderr")
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
	keyHow := "--api-key-env " + opts.keyEnv + ": the variable"
	if h, ok := model.Hosted[opts.format]; ok {
		// A hosted service's format: its address, model and key variable unless given, as
		// for agent.
		if opts.url == "" {
			opts.url = h.URL
		}
		if opts.model == "" {
			opts.model = h.Model
		}
		if opts.keyEnv == "" {
			opts.keyEnv = h.KeyEnv
			keyHow = "--model-format " + opts.format + " reads its key from " + h.KeyEnv + ", which"
		}
	}
	if opts.url == "" || opts.model == "" {
		fmt.Fprintln(stderr, "acp-lsp-bridge eval: --model-url and --model are required (but for the hosted formats "+hostedNames()+"), such as --model-url http://127.0.0.1:8080 --model qwen2.5-coder-7b (see --help)")
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
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	switch {
	case opts.set != "auto" && opts.set != eval.SetNES && opts.set != eval.SetFIM:
		fmt.Fprintf(stderr, "acp-lsp-bridge eval: --set %q: want auto, nes or fim\n", opts.set)
		return opts, 2, true
	case set["set"] && opts.dir != "":
		fmt.Fprintf(stderr, "acp-lsp-bridge eval: --set %s and the directory %s: give one of them (--set names a built-in set, run when no directory is given)\n", opts.set, opts.dir)
		return opts, 2, true
	case opts.fimChunks < 0 || opts.fimChunkLines <= 0:
		fmt.Fprintln(stderr, "acp-lsp-bridge eval: --fim-chunks takes 0 or more, --fim-chunk-lines 1 or more")
		return opts, 2, true
	}
	if !completesAtCursor(opts.format, opts.model) {
		for _, name := range fimFlags {
			if set[name] {
				fmt.Fprintf(stderr, "acp-lsp-bridge eval: --%s is for the formats that complete at the cursor (--model-format fim or codestral); the agent would not use it with --model-format %s\n", name, opts.format)
				return opts, 2, true
			}
		}
	}
	if opts.keyEnv != "" {
		// Checked before it is printed: the key given where its variable's name belongs must
		// not come back in a message.
		if err := model.CheckKeyEnv(opts.keyEnv); err != nil {
			fmt.Fprintf(stderr, "acp-lsp-bridge eval: %v\n", err)
			return opts, 2, true
		}
		if os.Getenv(opts.keyEnv) == "" {
			fmt.Fprintf(stderr, "acp-lsp-bridge eval: %s is empty or unset\n", keyHow)
			return opts, 2, true
		}
	}
	// What the agent would refuse, said here before any scenario runs.
	cfg := model.Config{URL: opts.url, Model: opts.model, Format: opts.format, Server: opts.server, ContextTokens: opts.contextTokens, Timeout: opts.timeout,
		FIMTokens: opts.fimTokens, FIMSampling: opts.fimSampling, AllowInsecureKey: opts.allowInsecureKey}
	if opts.keyEnv != "" {
		cfg.APIKey, cfg.APIKeyEnv = os.Getenv(opts.keyEnv), opts.keyEnv
	}
	if _, err := model.New(cfg); err != nil {
		fmt.Fprintf(stderr, "acp-lsp-bridge eval: %v\n", err)
		return opts, 2, true
	}

	return opts, 0, false
}

// hostedNames are the hosted services' formats, which need neither --model-url nor --model.
func hostedNames() string {
	names := slices.Sorted(maps.Keys(model.Hosted))
	return strings.Join(names, ", ")
}

// agentArgs are the arguments of the agent evaluated.
func (o evalOptions) agentArgs() []string {
	args := []string{"agent", "--model-url", o.url, "--model", o.model, "--model-format", o.format,
		"--model-server", o.server, "--model-context", strconv.Itoa(o.contextTokens), "--timeout", o.timeout.String()}
	if o.keyEnv != "" {
		args = append(args, "--api-key-env", o.keyEnv)
	}
	if o.allowInsecureKey {
		args = append(args, "--allow-insecure-key")
	}
	if completesAtCursor(o.format, o.model) {
		args = append(args, "--fim-tokens", o.fimTokens, "--fim-sampling", o.fimSampling,
			"--fim-chunks", strconv.Itoa(o.fimChunks), "--fim-chunk-lines", strconv.Itoa(o.fimChunkLines))
	}
	// Verbose always: the server's timings of each answer (its prompt cache) are in the agent's
	// debug lines, which eval reads (and copies to stderr with eval --verbose).
	args = append(args, "--verbose")
	if o.noGate {
		args = append(args, "--no-gate")
	}
	// One suggestion is scored per scenario, and the agent closed: the next one, prefetched as
	// if it were accepted, would be a request to the model for nothing.
	return append(args, "--no-prefetch")
}

// runEval is the eval subcommand.
func runEval(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	opts, code, done := parseEvalArgs(args, stdout, stderr)
	if done {
		return code
	}
	var scenarios []*eval.Scenario
	var err error
	set, where := "", opts.dir
	if opts.dir == "" {
		set = opts.scenarioSet()
		where = "the built-in " + strings.ToUpper(set) + " set"
		scenarios, err = eval.BuiltIn(set)
	} else {
		scenarios, err = eval.Load(os.DirFS(opts.dir), ".")
	}
	if err != nil {
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
		// agentArgs runs it with --verbose: its line of each answer (the model's time, the
		// server's timings) is read.
		AgentVerbose: true,
	}
	if opts.verbose {
		cfg.AgentStderr = stderr
	}
	fmt.Fprintf(stderr, "eval: %d scenarios (%s), model %q at %s\n", len(scenarios), where, opts.model, opts.url)
	rep, err := eval.Run(ctx, cfg, scenarios)
	rep.Model, rep.URL, rep.Set, rep.Dir = opts.model, opts.url, set, opts.dir
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
		msg := err.Error()
		if rep.Stopped != "" {
			// The failure's words are in the scenario's progress line and in the report:
			// not said a third time.
			msg = rep.StopWhy
			if rep.Stopped != rep.StopWhy {
				msg += " (why: above)"
			}
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
