// Package model is a nesagent.Engine that asks a language model for the user's next edit, through
// the server that runs it: llama.cpp's llama-server, Ollama, vLLM, LM Studio or a hosted API.
//
// Each open next-edit model was trained on one prompt and answer format, and is asked in it: Zed's
// Zeta 1, Zeta 2 and Zeta 2.1, Sweep's next-edit models and Continue's Instinct (one file per
// format, format_*.go, each after its public reference); any other model gets an instruction
// prompt in chat (format_chat.go). The raw formats are raw completions (/v1/completions, or
// Ollama's /api/generate with raw set); chat and Instinct are chat completions. The answer is read
// by its format's grammar, passed through a quality gate (engine.go), and diffed against the
// region (lines, then words, then characters) into the smallest edits, which make one suggestion.
// docs/model-agent.md describes the formats and how to run each model.
package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent"
)

// Config configures the engine. URL and Model are required; every other field has a default when
// left zero. For the prompt's counts and sizes (LinesAbove to ExcerptBytes), a negative value
// means none: no lines above the cursor's, no context lines, no history, no excerpts.
type Config struct {
	// URL is the server: its base (http://127.0.0.1:8080), its OpenAI-style base ending in /v1
	// (https://api.example.com/v1), or the full endpoint ending in /chat/completions (or
	// /completions), used as given. Chat formats post to {base}/v1/chat/completions or, on
	// Ollama, {base}/api/chat; raw ones to {base}/v1/completions or, on Ollama, {base}/api/generate.
	URL string
	// Model is the "model" of each request (for llama-server any name; for Ollama the pulled
	// model, e.g. qwen2.5-coder:7b).
	Model string
	// APIKey, when set, is sent as "Authorization: Bearer APIKey" (the command reads it from the
	// environment variable --api-key-env names).
	APIKey string
	// APIKeyEnv is the environment variable APIKey was read from (--api-key-env), named in the
	// message when the server refuses the key.
	APIKeyEnv string
	// Timeout bounds each request to the model, from sending it to reading the whole answer
	// (default 5s). A cancelled nes/suggest aborts the request sooner.
	Timeout time.Duration
	// MaxTokens is the request's max_tokens (default: the format's own; for chat, room for the
	// region rewritten, about half its size in bytes plus 256, at least 512 and at most 4096).
	MaxTokens int

	// The fields from LinesAbove to ExcerptBytes shape the chat format's prompt; each next-edit
	// model's format has its reference's own sizes.
	//
	// LinesAbove and LinesBelow are the lines of the editable region above and below the cursor's
	// line (defaults 4 and 8). MaxRegionBytes bounds the region (default 3000 bytes; negative:
	// no bound but the lines): lines far from the cursor are dropped to fit, and when the
	// cursor's line alone is longer there is no suggestion.
	LinesAbove, LinesBelow int
	MaxRegionBytes         int
	// ContextLines and ContextBytes bound the lines shown (not editable) above the region and,
	// separately, below it (defaults 30 lines and 2000 bytes each side).
	ContextLines, ContextBytes int
	// MaxHistory and HistoryBytes bound the recent edits shown, newest kept (defaults 6 edits and
	// 2500 bytes of diff).
	MaxHistory, HistoryBytes int
	// MaxOpenDocs is how many other open documents are excerpted, most recently edited first
	// (default 3); ExcerptLines and ExcerptBytes bound each excerpt (defaults 20 lines and 1200
	// bytes).
	MaxOpenDocs, ExcerptLines, ExcerptBytes int

	// Format is the model's prompt format, one of FormatNames: "chat", "zeta1", "zeta2",
	// "zeta2.1", "sweep", "sweep-small", "sweep-7b", "instinct", "fim", "codestral", "mercury",
	// "sweep-api", or "auto"/"" to pick it from Model's name (PickFormat; case and surrounding
	// space aside).
	Format string
	// Server says what serves the model (--model-server; case aside): "openai" (an
	// OpenAI-compatible server: vLLM, LM Studio, hosted APIs), "ollama", "llama-server" (raw
	// prompts to /v1/completions, FIM prompts to /infill), or "auto"/"" to ask the server (GET
	// /api/version, which only Ollama answers; for a FIM prompt also GET /props, which only
	// llama-server answers) before the first raw or FIM completion. Raw formats go to Ollama's own
	// /api/generate with raw set: its /v1/completions would wrap the prompt in the model's chat
	// template.
	Server string
	// ContextTokens is the model's context size in tokens (--model-context); the prompt is kept
	// under it, estimated as the format's reference estimates. 0: the format's own bound.
	ContextTokens int

	// AbsolutePaths names the files in the prompt by their absolute paths instead of their names
	// relative to the workspace folder: for a coding agent asked through prompts, whose tools
	// work on the user's files (a model's prompt never holds them: they tell it the user's home,
	// and no next-edit model was trained on them).
	AbsolutePaths bool

	// NoGate turns the quality gate off (GateRules, engine.go): every answer that changes the
	// region is shown, for users who want every answer and for measuring what the gate does
	// (eval --no-gate). What cannot be shown (no change, unreadable, unfit text) still is not.
	NoGate bool

	// FIMTokens names the family whose FIM tokens write a "fim" prompt on a server that does
	// not apply them itself (--fim-tokens: qwen, codegemma, starcoder, deepseek, codellama,
	// codestral); "" or "auto": the family the model's name calls for. llama-server's /infill
	// and Ollama apply the model's own.
	FIMTokens string
	// FIMChunks is how many chunks of other files a "fim" prompt carries at most (default 16,
	// as llama.vim's ring; negative: none), FIMChunkLines how many lines each has (default 64).
	FIMChunks, FIMChunkLines int
	// FIMSampling is how llama-server samples a "fim" answer at /infill: "" or "llama.vim" as
	// llama.vim asks it (top_k 40, top_p 0.9, then llama-server's infill sampler), "server" by
	// the server's own settings (its --temp, --top-k, --samplers, --seed).
	FIMSampling string
	// NoStream asks every answer whole, as before streaming: no early answer (the
	// formats that rewrite a region line by line stream theirs by default).
	NoStream bool
	// Prefetch turns on prefetching at the accept (prefetch.go): after a suggestion answered at
	// the accept of the one before (never the first after typing: engine.answered), the model is
	// asked for the next one as if it had been accepted, for the accept to show it at once (the
	// agent command turns it on unless --no-prefetch).
	Prefetch bool
	// PrefetchBilled lets Prefetch ask a service that bills each request too (a hosted format,
	// FIM at a hosted service, a coding agent asked through prompts): off by default, since the
	// prefetch is billed whether or not the suggestion is accepted.
	PrefetchBilled bool
	// Billed, when set, says whether each request to the server is billed to the user
	// (--billed); nil: as Billing decides from the format and the server's address.
	Billed *bool
	// AllowInsecureKey lets the key go in clear (http://) to a server that is neither on this
	// machine nor on a private network (--allow-insecure-key: the user's own reverse proxy).
	AllowInsecureKey bool
	// SweepTracking tells Sweep's service which of its suggestions were accepted or dismissed
	// (sweep-api only; off by default): see sweepTracker.
	SweepTracking bool

	// Instructions replaces the system message (default DefaultInstructions). The user message
	// and the answer's markers stay as they are.
	Instructions string
	// HTTPClient sends the requests (default: a client of its own over http.DefaultTransport,
	// which honours HTTPS_PROXY and NO_PROXY). Its own Timeout, if any, also applies.
	HTTPClient *http.Client
	// Log receives the format chosen and the server found at info level, and a line per answer
	// and per dropped answer (with the reason) at debug level; never document text (default:
	// nothing is logged).
	Log *slog.Logger
}

// DefaultTimeout is Config.Timeout's default.
const DefaultTimeout = 5 * time.Second

// maxAnswerBytes bounds the response body read.
const maxAnswerBytes = 4 << 20

// New checks cfg, fills in its defaults and returns the engine.
func New(cfg Config) (nesagent.Engine, error) {
	if cfg.URL == "" {
		return nil, errors.New("model: no server URL")
	}
	if cfg.Model == "" {
		return nil, errors.New("model: no model name")
	}
	u, err := url.Parse(cfg.URL)
	if !strings.Contains(cfg.URL, "://") && (err != nil || u.Host == "") {
		// An address without its scheme (127.0.0.1:8012, localhost:8080/v1): say the URL meant.
		return nil, fmt.Errorf("model: server URL %q has no scheme: want http://host[:port][/path] or https://…, such as http://%s", cfg.URL, cfg.URL)
	}
	if err != nil {
		return nil, fmt.Errorf("model: server URL %q: %v: want http://host[:port][/path] or https://…", cfg.URL, errors.Unwrap(err))
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("model: server URL %q: want http://host[:port][/path] or https://…", cfg.URL)
	}
	if cfg.Timeout < 0 {
		return nil, fmt.Errorf("model: negative timeout %s", cfg.Timeout)
	}
	if cfg.ContextTokens < 0 {
		return nil, fmt.Errorf("model: negative context size %d", cfg.ContextTokens)
	}
	switch strings.ToLower(cfg.Server) {
	case "", "auto", "openai", "ollama", "llama-server":
	default:
		return nil, fmt.Errorf("model: --model-server %q: want auto, openai, ollama or llama-server", cfg.Server)
	}
	if cfg.APIKeyEnv != "" {
		if err := CheckKeyEnv(cfg.APIKeyEnv); err != nil {
			return nil, fmt.Errorf("model: %w", err)
		}
	}
	if cfg.APIKey != "" && strings.EqualFold(u.Scheme, "http") && !cfg.AllowInsecureKey {
		if local, _ := LocalHost(u.Hostname()); !local {
			v := *u
			v.RawQuery = ""
			return nil, fmt.Errorf("model: --model-url %s is plain http:// to %s, which is neither on this machine nor on a private network: the API key would cross the network in clear; use https://, or --allow-insecure-key if that address is your own reverse proxy", v.Redacted(), u.Hostname())
		}
	}
	// Whatever the agent logs, the key is taken out of it, last of all (scrubHandler).
	sc := newHostScrubber(cfg.APIKey, u.Hostname())
	if cfg.Log != nil {
		cfg.Log = scrubbedLog(cfg.Log, sc)
	}
	e, err := withDefaults(cfg)
	if err != nil {
		return nil, err
	}
	e.scrub = sc
	if cfg.APIKey != "" {
		e.cfg.HTTPClient = noClearProxy(e.cfg.HTTPClient)
	}
	h := newHTTPCompleter(e.cfg, u)
	e.c = h
	if cfg.SweepTracking && e.format.Name() == "sweep-api" {
		e.track = &sweepTracker{endpoint: sweepMetricsURL(h.base), key: cfg.APIKey, client: h.client, scrub: h.scrub, log: e.cfg.Log}
		e.cfg.Log.Info("model: --sweep-tracking: what becomes of each suggestion (its id, the lines it adds and removes, how long it was shown; no code) goes to " + redacted(e.track.endpoint))
	}
	return e, nil
}

// withDefaults is the engine with cfg's defaults filled in and its format chosen.
func withDefaults(cfg Config) (*engine, error) {
	def := func(v *int, d int) {
		switch {
		case *v == 0:
			*v = d
		case *v < 0:
			*v = 0
		}
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxTokens < 0 {
		cfg.MaxTokens = 0
	}
	def(&cfg.LinesAbove, 4)
	def(&cfg.LinesBelow, 8)
	def(&cfg.MaxRegionBytes, 3000)
	def(&cfg.ContextLines, 30)
	def(&cfg.ContextBytes, 2000)
	def(&cfg.MaxHistory, 6)
	def(&cfg.HistoryBytes, 2500)
	def(&cfg.MaxOpenDocs, 3)
	def(&cfg.ExcerptLines, 20)
	def(&cfg.ExcerptBytes, 1200)
	def(&cfg.FIMChunks, 16)
	def(&cfg.FIMChunkLines, 64)
	switch cfg.FIMSampling {
	case "", "llama.vim", "server":
	default:
		return nil, fmt.Errorf("model: --fim-sampling %q: want llama.vim or server", cfg.FIMSampling)
	}
	if cfg.FIMTokens != "" && cfg.FIMTokens != "auto" {
		if _, ok := family(cfg.FIMTokens); !ok {
			return nil, fmt.Errorf("model: --fim-tokens %q: want auto or one of %s", cfg.FIMTokens, FIMTokenNames())
		}
	}
	if cfg.MaxRegionBytes == 0 {
		cfg.MaxRegionBytes = math.MaxInt // negative: no limit but the lines
	}
	if cfg.Instructions == "" {
		cfg.Instructions = DefaultInstructions
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{}
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	f, why, err := PickFormat(cfg.Format, cfg.Model)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	if f.Name() == "sweep" {
		if sweepV2(cfg.Model) {
			why += "; the v2 7B layout, as the name holds 7b"
		} else {
			why += "; the 0.5B/1.5B layout, as the name does not hold 7b"
		}
	}
	cfg.Log.Info("model: prompt format "+f.Name(), "format", f.Name(), "why", why)
	return &engine{cfg: cfg, format: f, formatWhy: why}, nil
}

type engine struct {
	// words are the word indexes of the open documents, kept while their text stays the same.
	words      wordIndexes
	ring       fimRing
	follows    follows       // the answers still streaming after their first change was shown
	prefetched prefetches    // the next suggestions prefetched, as if the last were accepted
	chain      acceptChain   // the text each document's last suggestion makes: met, it was accepted
	track      *sweepTracker // Sweep's metrics, when turned on
	scrub      scrubber      // the key, out of every error and reason the engine gives
	gens       generations
	cfg        Config
	c          Completer
	format     Format
	formatWhy  string
}

// Describe says which format the engine speaks and why (for doctor and the log).
func (e *engine) Describe() (format, why string) { return e.format.Name(), e.formatWhy }

// contentText reads a message's content: a string, null, or an array of parts ({type:"text",
// text}).
func contentText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Type, Text string
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", errors.New("neither a string nor an array of parts")
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "" || p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String(), nil
}

// errorText is the message of an error body ({"error":{"message":…}}, {"error":"…"}, or
// {"message":…}) or a preview of the body.
func errorText(data []byte) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(data, &v) == nil {
		var inner struct {
			Message string `json:"message"`
		}
		var s string
		var details []struct {
			Msg string `json:"msg"`
		}
		switch {
		case json.Unmarshal(v.Error, &inner) == nil && inner.Message != "":
			return inner.Message
		case json.Unmarshal(v.Error, &s) == nil && s != "":
			return s
		case v.Message != "":
			return v.Message
		case json.Unmarshal(v.Detail, &s) == nil && s != "":
			// FastAPI's shape (vLLM, Sweep and other Python services): {"detail": "…"}.
			return s
		case json.Unmarshal(v.Detail, &details) == nil && len(details) > 0 && details[0].Msg != "":
			// FastAPI's validation errors: {"detail": [{"msg": "…", …}, …]}.
			var msgs []string
			for _, d := range details {
				if d.Msg != "" {
					msgs = append(msgs, d.Msg)
				}
			}
			return strings.Join(msgs, "; ")
		}
	}
	return preview(data)
}

// preview is the start of a body, for messages.
func preview(data []byte) string {
	s := strings.TrimSpace(string(data))
	if s == "" {
		return "(empty body)"
	}
	if len(s) > 300 {
		n := 300
		for n > 0 && s[n]&0xC0 == 0x80 {
			n--
		}
		s = s[:n] + "…"
	}
	return fmt.Sprintf("%q", s)
}

// DoctorEnv is set (to any value) in the environment of the agent that acp-lsp-bridge doctor
// checks: the model agent then asks its server at start what it is, for every format, as its
// first request would (GET /api/version, then GET /props), keeps the answer for its requests, and
// says in agentInfo._meta what serves the model and where its prompts go. Without it (under the
// bridge), only a FIM agent asks at start; the others ask at their first request, or learn it from
// the answers.
const DoctorEnv = "ACP_LSP_BRIDGE_DOCTOR"

// ServerKind says what serves the model, for doctor and the log: a hosted service's format names
// the service; for fim, whose requests go where the server takes them, and for every format when
// doctor runs the agent (DoctorEnv), the server is asked as the first request would ask it
// (within wait; the answer is kept for the requests), and the answer says what it is, how that was
// found, and where the format's prompts go with what; otherwise what --model-server said, or that
// it is asked at the first prompt.
func (e *engine) ServerKind(ctx context.Context, wait time.Duration) string {
	name := e.format.Name()
	h, ok := e.c.(*httpCompleter)
	if !ok {
		return ""
	}
	if _, ok := Hosted[name]; ok {
		return "the service's own API at " + h.shown + " (--model-format " + name + ")"
	}
	if h.hostedFIM {
		return h.Kind()
	}
	class := promptClass(name)
	doctor := os.Getenv(DoctorEnv) != ""
	if class != "FIM" && !doctor && !h.fixed {
		if class == "chat" {
			return "OpenAI-compatible chat completions"
		}
		return "asked at the first prompt (Ollama or OpenAI-compatible)"
	}
	dctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	k := h.serverKind(ctx, dctx, true)
	h.mu.Lock()
	found := h.found
	h.mu.Unlock()
	out := h.scrub.scrub(h.describeKind(class, k, found))
	if h.fixed && doctor {
		// The agent takes --model-server's word and asks nothing; doctor asks all the same, to
		// say when the server is something else.
		if c := h.askKind(dctx, true); c.kind != kindUnknown && c.kind != k {
			out += "; but the server answers as " + c.kind.String() + " (" + h.scrub.scrub(strings.Trim(c.why, "()")) + "): use --model-server auto"
		}
	}
	return out
}

// ServerAnswers says whether the model's server answers (for doctor: GET /api/version, within
// wait), and when it does not, why; refused, that it answered by refusing the key (401 or 403: an
// answer, but every request would be refused alike), with why. A hosted service, or another
// Completer, is not asked (true).
func (e *engine) ServerAnswers(ctx context.Context, wait time.Duration) (answers bool, why string, refused bool) {
	h, ok := e.c.(*httpCompleter)
	if !ok || h.hostedFIM {
		return true, "", false
	}
	if _, ok := Hosted[e.format.Name()]; ok {
		return true, "", false
	}
	dctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	c := h.askKind(dctx, false)
	switch {
	case c.kind == kindUnknown:
		why := c.why
		if !c.unreached { // (those words name the server already)
			why = h.shown + why
		}
		return false, h.scrub.scrub(why), false
	case c.refused != "":
		return true, c.refused, true
	}
	return true, "", false
}

// promptClass is what a format's prompts are: "chat" (chat completions: chat, Instinct), "FIM"
// (fim) or "raw" (the next-edit models' own prompts: Zeta, Sweep).
func promptClass(format string) string {
	switch format {
	case "chat", "instinct":
		return "chat"
	case "fim":
		return "FIM"
	}
	return "raw"
}

// describeKind says what serves the model (k), where a format's prompts (class) go and with what,
// and how k was found: "KIND (CLASS prompts to ENDPOINT ...); HOW".
func (h *httpCompleter) describeKind(class string, k serverKind, found string) string {
	if k == kindUnknown {
		switch class {
		case "chat":
			return "not known yet: the server did not answer at /api/version or /props; chat prompts go to /v1/chat/completions until an answer shows Ollama's"
		case "FIM":
			return "not known yet: the server did not answer (asked again at the first prompt)"
		}
		return "not known yet: the server did not answer (asked again at the first prompt: Ollama's raw prompts go to /api/generate, any other server's to /v1/completions)"
	}
	numCtx := "no num_ctx, so Ollama's own context size, as --model-context is not given"
	if n := h.cfg.ContextTokens; n > 0 {
		numCtx = fmt.Sprintf("num_ctx %d from --model-context", n)
	}
	var where string
	switch {
	case class == "chat" && k == kindOllama:
		where = "chat prompts to /api/chat; options num_predict, temperature 0, stop, " + numCtx
	case class == "chat" && k == kindLlamaServer:
		where = "chat prompts to /v1/chat/completions with cache_prompt"
	case class == "chat":
		where = "chat prompts to /v1/chat/completions"
	case class == "FIM" && k == kindLlamaServer:
		where = "FIM prompts to /infill"
	case class == "FIM" && k == kindOllama:
		where = "FIM prompts to /api/generate with suffix; options num_predict, temperature 0, stop, " + numCtx
	case class == "FIM":
		where = "FIM prompts to /v1/completions with the model's tokens"
	case k == kindOllama:
		where = "raw prompts to /api/generate with raw set; options num_predict, temperature 0, stop, " + numCtx
	case k == kindLlamaServer:
		where = "raw prompts to /v1/completions with cache_prompt"
	default:
		where = "raw prompts to /v1/completions"
	}
	name := k.String()
	how := "found by asking: " + strings.Trim(found, "()")
	switch {
	case strings.HasPrefix(found, "--model-server"):
		how = "named by " + found
	case k == kindOllama:
		// "0.12.3 (it answers /api/version)": the version belongs to the name.
		if v, rest, ok := strings.Cut(found, " ("); ok && !strings.HasPrefix(found, "(") {
			name, how = name+" "+v, "found by asking: "+strings.TrimSuffix(rest, ")")
		}
	}
	return name + " (" + where + "); " + how
}

// Billed reports whether each request is taken to be billed to the user (Billing).
func (e *engine) Billed() bool {
	billed, _ := e.Billing()
	return billed
}

// Billing says whether each request is taken to be billed to the user, and why: as
// Config.Billed says when it does; else a hosted format, FIM at a hosted FIM service, and any
// server that is neither on this machine nor on a private network (LocalHost) are, since a
// hosted OpenAI-compatible API bills each request. A billed engine asks nothing ahead of the
// user: no prefetch (unless Config.PrefetchBilled), and the agent tells the bridge not to ask
// ahead either.
func (e *engine) Billing() (bool, string) {
	if e.cfg.Billed != nil {
		if *e.cfg.Billed {
			return true, "--billed=true"
		}
		return false, "--billed=false"
	}
	if _, ok := Hosted[e.format.Name()]; ok {
		return true, "a hosted service (--model-format " + e.format.Name() + ")"
	}
	h, ok := e.c.(*httpCompleter)
	if !ok {
		return false, ""
	}
	if h.hostedFIM {
		return true, "a hosted FIM service"
	}
	host := h.host
	if local, why := LocalHost(host); local {
		return false, "the server is " + why
	}
	return true, "the server (" + host + ") is neither on this machine nor on a private network, as a hosted API's is; --billed=false if it does not bill each request"
}

// LocalHost reports whether host (a name or an address, as a URL holds it) is on this machine or
// on a private network, and says which: loopback (127.0.0.0/8, ::1, localhost and *.localhost),
// the private ranges (10/8, 172.16/12, 192.168/16, fc00::/7), link-local (169.254/16, fe80::/10),
// the shared range of carrier-grade NAT and tailnets (100.64/10), the unspecified address, a
// name of one label (a machine on the local network), and the names of local networks (*.local,
// *.lan, *.internal, *.home.arpa, *.ts.net). No name is looked up: the user's words decide.
func LocalHost(host string) (bool, string) {
	h := strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	if ip, err := netip.ParseAddr(h); err == nil {
		ip = ip.Unmap()
		switch {
		case ip.IsLoopback():
			return true, "on this machine (" + h + ")"
		case ip.IsUnspecified():
			return true, "on this machine (" + h + ")"
		case ip.IsPrivate():
			return true, "on a private network (" + h + ")"
		case ip.IsLinkLocalUnicast():
			return true, "on the local link (" + h + ")"
		case cgnat.Contains(ip):
			return true, "on a private network (" + h + ", the shared range of carrier-grade NAT and tailnets)"
		}
		return false, ""
	}
	switch {
	case h == "localhost" || strings.HasSuffix(h, ".localhost"):
		return true, "on this machine (" + h + ")"
	case h != "" && !strings.Contains(h, "."):
		return true, "on the local network (" + h + ", a name of one label)"
	}
	for _, suffix := range []string{".local", ".lan", ".internal", ".home.arpa", ".ts.net"} {
		if strings.HasSuffix(h, suffix) {
			return true, "on a private network (" + h + ", a " + suffix + " name)"
		}
	}
	return false, ""
}

// cgnat is the shared address space of carrier-grade NAT (RFC 6598), where tailnets put their
// machines.
var cgnat = netip.MustParsePrefix("100.64.0.0/10")
