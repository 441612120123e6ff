package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/acpside"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent/builtin"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent/model"
)

const agentUsage = `acp-lsp-bridge agent: the bridge's own ACP agent with Next Edit Suggestions.

Usage:
  acp-lsp-bridge agent                                   (built-in: no model, no network)
  acp-lsp-bridge agent --model-url URL --model NAME      (llama-server, Ollama, vLLM, LM Studio, hosted APIs)
  acp-lsp-bridge agent --model-url URL --model NAME --model-format fim    (a completion at the cursor)
  acp-lsp-bridge agent --model-format mercury|sweep-api|codestral         (a hosted service)

It speaks ACP on stdin/stdout, like any agent; the bridge starts it by itself when no other agent
is configured. The built-in engine suggests, after you rename an identifier in one place, the same
rename at its next occurrences, and in the other open files of the same language that use it (an
edit, and a jump to see it first); after you edit one line, the same edit on nearby lines of the
same shape. With --model-url it asks a model (llama.cpp's server, Ollama, vLLM, hosted APIs) to
rewrite the region around the cursor; see docs/model-agent.md. The open next-edit models (Zed's
Zeta 1, 2 and 2.1, Sweep's next-edit models, Continue's Instinct) are each asked in the format they
were trained on, chosen from the name the model is published under (--model-format to say it); any
other model gets an instruction prompt in chat, and the log says when a name only looked like one.

--model-format fim asks a code model by fill-in-the-middle (Qwen2.5-Coder, StarCoder2, DeepSeek-Coder,
CodeLlama, Codestral, CodeGemma, Granite) for a completion at the cursor, as llama.vim does: to
llama-server's /infill, Ollama's /api/generate with suffix, or any /v1/completions with the model's
FIM tokens (--fim-tokens). The hosted services need neither --model-url nor --model, and read their
key from their own variable unless --api-key-env names another:
  mercury     Inception's Mercury Edit, a next edit        INCEPTION_API_KEY
  sweep-api   Sweep's hosted next edit                     SWEEP_AI_TOKEN
  codestral   Mistral's Codestral, a completion            CODESTRAL_API_KEY

Flags:
`

// runAgent is the agent subcommand.
func runAgent(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("acp-lsp-bridge agent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {}
	url := fs.String("model-url", "", "base `URL` of the model's server: llama-server, Ollama, vLLM, LM Studio or an OpenAI-compatible API (uses the model engine)")
	name := fs.String("model", "", "the model's `name` on that server")
	keyEnv := fs.String("api-key-env", "", "the environment `variable` holding the server's API key (sent as a Bearer token, to that server only: no redirect elsewhere is followed, and the key is kept out of every message)")
	timeout := fs.Duration("timeout", model.DefaultTimeout, "how long one request to the model may take, the check of what serves it included; three in a row past it make the bridge's status slow")
	format := fs.String("model-format", "auto", "the model's prompt `format`: "+model.FormatNames+" (auto: from the name the model is published under, as Zed infers it: zeta2.1/zeta-2.1, zeta2/zeta-2, zeta, any name holding sweep-next-edit, instinct, tags, owners and GGUF suffixes aside; anything else chat); see docs/model-agent.md")
	server := fs.String("model-server", "auto", "the `kind` of server the model is on: auto (ask it: only Ollama answers /api/version, only llama-server /props), openai (vLLM, LM Studio, hosted APIs), ollama or llama-server; raw formats go to Ollama's /api/generate with raw set, fim to llama-server's /infill or Ollama's /api/generate with suffix, chat and instinct to Ollama's /api/chat")
	fimTokens := fs.String("fim-tokens", "auto", "for --model-format fim on a server that is neither llama-server nor Ollama (which apply the model's own): the `family` whose FIM tokens write the prompt, one of "+model.FIMTokenNames()+" (auto: from the model's name)")
	fimChunks := fs.Int("fim-chunks", 16, "for --model-format fim: how many `chunks` of the files you worked in (around recent edits, the places you visited, files saved) the prompt carries at most, as llama.vim's ring; 0: none")
	fimSampling := fs.String("fim-sampling", "llama.vim", "for --model-format fim at llama-server's /infill: the `sampling` of the answer: llama.vim (its top_k 40 and top_p 0.9, then the server's infill sampler) or server (the server's own settings: its --temp, --top-k, --samplers, --seed)")
	noStream := fs.Bool("no-stream", false, "ask every answer whole: by default Zeta 2's and Sweep's answers are streamed and the first change is shown as soon as the model has written it, the rest kept as the next suggestion")
	noPrefetch := fs.Bool("no-prefetch", false, "do not prefetch the next suggestion: by default, once a suggestion is answered at the accept of the one before it (not the first after typing) and no other request to the model is in flight for the document, the model is asked for the next suggestion as if that one had been accepted, and accepting it shows the next one at once (one such request per document at most, cancelled by any other change); not for a billed server (--billed), unless --prefetch-billed")
	prefetchBilled := fs.Bool("prefetch-billed", false, "prefetch at the accept a server that bills each request too (--billed: a hosted format, FIM at a hosted service, any server neither on this machine nor on a private network): each prefetch is billed, whether you accept the suggestion or not; off by default")
	var billed billedFlag
	fs.Var(&billed, "billed", "whether each request to the model's server is billed to you, a `choice` of true, false or auto, written --billed=false (auto: a hosted format, and any server that is neither on this machine nor on a private network — loopback, 10/8, 172.16/12, 192.168/16, fc00::/7, link-local, 100.64/10, a one-label name, *.local, *.lan, *.internal, *.home.arpa, *.ts.net — are billed). Nothing is asked of a billed server ahead of you: no asking ahead by the bridge, no prefetch (unless --prefetch-billed); doctor says which was decided and why")
	allowInsecureKey := fs.Bool("allow-insecure-key", false, "send the API key over plain http:// to a server that is neither on this machine nor on a private network (your own reverse proxy); refused by default, as the key would cross the network in clear")
	sweepTracking := fs.Bool("sweep-tracking", false, "for --model-format sweep-api: tell Sweep which of its suggestions you accepted or dismissed, as its own clients do: each suggestion's id, the lines it added and removed and how long it was shown (no code), sent with your key to https://backend.app.sweep.dev/backend/track_autocomplete_metrics (for another --model-url, to that path on it); off by default")
	fimChunkLines := fs.Int("fim-chunk-lines", 64, "for --model-format fim: the `lines` of each chunk")
	contextTokens := fs.Int("model-context", 0, "the model's context size in `tokens`; the prompt is kept under it, and Ollama loads the model with it (0: the format's own bound, Ollama's own context)")
	maxTokens := fs.Int("max-tokens", 0, "the most `tokens` one answer may take: a lower bound answers a slow model sooner, and an answer cut short is dropped (0: the format's own: 1024 for Zeta and Sweep v2, 512 for Sweep and Instinct, for chat sized to the region)")
	noGate := fs.Bool("no-gate", false, "show every answer that changes the region: turn off the quality gate that keeps back answers it takes for noise (whitespace only, the prompt copied, runaway growth, a rewrite of most of the region, an undo of your last edit, an answer cut short); see docs/model-agent.md")
	verbose := fs.Bool("verbose", false, "also log each request to stderr: sizes, timings, and why an answer was dropped (never document text)")
	if code, done := parseFlags(fs, args, agentUsage, "run acp-lsp-bridge agent --help for the flags", stdout, stderr); done {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "acp-lsp-bridge agent: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if *fimChunks < 0 || *fimChunkLines <= 0 {
		fmt.Fprintln(stderr, "acp-lsp-bridge agent: --fim-chunks takes 0 or more, --fim-chunk-lines 1 or more")
		return 2
	}
	if *fimChunks == 0 {
		*fimChunks = -1 // none
	}
	if *keyEnv != "" {
		// Checked before it is ever printed: the key itself, given where its variable's name
		// belongs, must not come back in a message.
		if err := model.CheckKeyEnv(*keyEnv); err != nil {
			fmt.Fprintf(stderr, "acp-lsp-bridge agent: %v\n", err)
			return 2
		}
	}
	keyHow := "--api-key-env " + *keyEnv + ": the variable"
	if h, ok := model.Hosted[*format]; ok {
		// A hosted service's format: its address, model and key variable unless given.
		if *url == "" {
			*url = h.URL
		}
		if *name == "" {
			*name = h.Model
		}
		if *keyEnv == "" {
			*keyEnv = h.KeyEnv
			keyHow = "--model-format " + *format + " reads its key from " + h.KeyEnv + ", which"
		}
	}
	if *maxTokens < 0 || *contextTokens < 0 {
		fmt.Fprintln(stderr, "acp-lsp-bridge agent: --max-tokens and --model-context take a number of tokens, 0 or more")
		return 2
	}
	// stderr reaches the bridge's log: the few lines said once (the prompt format and why, what
	// serves the model) always, each request's (sizes, timings, why an answer was dropped) with
	// --verbose. Never document text.
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	// The ACP SDK logs through slog's default logger; stdout is the ACP wire.
	slog.SetDefault(logger)

	var engine nesagent.Engine
	var meta map[string]any
	name2 := "acp-lsp-bridge-builtin"
	switch {
	case *url == "" && *name == "":
		engine = builtin.New()
	case *url == "" || *name == "":
		fmt.Fprintln(stderr, "acp-lsp-bridge agent: --model-url and --model go together")
		return 2
	default:
		cfg := model.Config{URL: *url, Model: *name, Timeout: *timeout, Log: logger, Format: *format, Server: *server, ContextTokens: *contextTokens, MaxTokens: *maxTokens, NoGate: *noGate,
			FIMTokens: *fimTokens, FIMChunks: *fimChunks, FIMChunkLines: *fimChunkLines, FIMSampling: *fimSampling, SweepTracking: *sweepTracking, NoStream: *noStream,
			Prefetch: !*noPrefetch, PrefetchBilled: *prefetchBilled, Billed: billed.value, AllowInsecureKey: *allowInsecureKey}
		if *keyEnv != "" {
			cfg.APIKey, cfg.APIKeyEnv = os.Getenv(*keyEnv), *keyEnv
			if cfg.APIKey == "" {
				fmt.Fprintf(stderr, "acp-lsp-bridge agent: %s is empty or unset; set %s to your key (or name another variable with --api-key-env)\n", keyHow, *keyEnv)
				return 2
			}
		}
		var err error
		if engine, err = model.New(cfg); err != nil {
			fmt.Fprintf(stderr, "acp-lsp-bridge agent: %v\n", err)
			return 2
		}
		name2 = "acp-lsp-bridge-model"
		if d, ok := engine.(interface{ Describe() (string, string) }); ok {
			f, why := d.Describe()
			m := map[string]any{"format": f, "why": why, "model": *name, "keyEnv": *keyEnv}
			if k, ok := engine.(interface {
				ServerKind(context.Context, time.Duration) string
			}); ok {
				// What serves the model, for doctor: for fim the server is asked now, as the
				// first request would ask it (the answer is kept for it).
				m["server"] = k.ServerKind(ctx, min(*timeout, 2*time.Second))
			}
			if a, ok := engine.(interface {
				ServerAnswers(context.Context, time.Duration) (bool, string, bool)
			}); ok && os.Getenv(model.DoctorEnv) != "" {
				// For doctor, without a sample suggestion too: whether the server answers at all,
				// and whether it refuses the key.
				answers, why, refused := a.ServerAnswers(ctx, min(*timeout, 2*time.Second))
				m["serverAnswers"], m["serverWhy"], m["serverRefusedKey"] = answers, why, refused
			}
			meta = map[string]any{model.MetaKey: m}
			if b, ok := engine.(interface{ Billing() (bool, string) }); ok {
				isBilled, why := b.Billing()
				m["billed"], m["billedWhy"] = isBilled, why
				if isBilled {
					// Each request is billed: the bridge asks it only when the editor
					// does.
					meta[acpside.BilledMetaKey] = true
				}
			}
		}
	}
	start := time.Now()
	opts := nesagent.Options{Name: name2, Version: version, Meta: meta}
	if name2 == "acp-lsp-bridge-model" {
		// The model is shown the problems the editor reports (nesagent/model), and the other
		// files around where the user last was in them, and the files saved (FIM's chunks,
		// Mercury's recently viewed snippets).
		opts.Context = &acp.NesContextCapabilities{Diagnostics: &acp.NesDiagnosticsCapabilities{}}
		opts.Visits = true
	}
	nesagent.New(engine, opts).Serve(stdin, stdout)
	logger.Info("agent done", "uptime", time.Since(start))
	return 0
}

// billedFlag is --billed: true, false, or auto (nil: the agent decides from the server's address).
type billedFlag struct{ value *bool }

func (f *billedFlag) String() string {
	if f == nil || f.value == nil {
		return "auto"
	}
	return strconv.FormatBool(*f.value)
}

func (f *billedFlag) Set(s string) error {
	if s == "auto" {
		f.value = nil
		return nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return errors.New("want true, false or auto")
	}
	f.value = &b
	return nil
}

// IsBoolFlag lets --billed stand alone for --billed=true.
func (f *billedFlag) IsBoolFlag() bool { return true }
