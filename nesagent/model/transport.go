package model

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent"
)

// httpCompleter reaches a model's server over HTTP: chat completions for a chat prompt (OpenAI's
// /v1/chat/completions, or Ollama's own /api/chat, which takes num_ctx), raw completions for a
// raw one (OpenAI's /v1/completions, or Ollama's own /api/generate with raw set, since Ollama's
// /v1/completions would wrap the prompt in the model's chat template).
//
// Every request goes through one client that follows no redirect to another scheme, host or port
// (server.go), and every string it takes from the server (the status line, a redirect's target,
// the version it says, error bodies, stream events) goes through its scrubber before it is
// quoted: its errors are bounded, cleaned and hold no form of the key, and they reach the
// agent's log, the bridge and the editor (TestEveryServerStringIsScrubbed).
type httpCompleter struct {
	cfg Config
	// chat and completions are the OpenAI-style endpoints; generate and ollamaChat are
	// Ollama's; version is where Ollama says its version; props where llama-server says its
	// settings, infill its FIM endpoint; fim the hosted services' FIM endpoint; shown is the
	// server for messages, without a password.
	chat, completions, generate, ollamaChat, version string
	props, infill, fim                               string
	shown                                            string
	// hostedFIM: the server's address is a hosted service whose FIM endpoint FIM prompts go to.
	hostedFIM bool
	// base is the server's address without /v1 or an endpoint: a hosted service's own paths
	// (Prompt.Path) go below it.
	base   string
	host   string // the server's host name or address, from --model-url
	client *http.Client
	scrub  scrubber
	pace   pacing

	mu sync.Mutex
	// kind is what serves the model, as far as known; fixed when --model-server said it.
	kind      serverKind
	fixed     bool
	kindTries int // checks of the kind that got no answer
	// toldUnreachable: the log said that nothing answers at the address, since it last answered.
	toldUnreachable bool
	// found is how kind was found: what the server answered the agent (the why of the log's
	// line), or the --model-server that named it.
	found  string
	warned bool // told that --model-server openai names an Ollama
	// timed: an answer carried llama-server's timings, which only llama-server adds: the server
	// is llama-server whatever --model-server said, and takes cache_prompt.
	timed bool
}

// serverKind is what serves the model.
type serverKind int

const (
	kindUnknown serverKind = iota
	kindOpenAI
	kindOllama
	kindLlamaServer
)

// String names the kind for the log and doctor.
func (k serverKind) String() string {
	switch k {
	case kindOpenAI:
		return "OpenAI-compatible"
	case kindOllama:
		return "Ollama"
	case kindLlamaServer:
		return "llama-server"
	}
	return "not known yet"
}

// hostedFIMHosts are the services whose FIM endpoint (/v1/fim/completions) takes a FIM prompt as
// prefix and suffix: Mistral's (Codestral) and Inception's (Mercury Coder).
var hostedFIMHosts = map[string]bool{"codestral.mistral.ai": true, "api.mistral.ai": true, "api.inceptionlabs.ai": true}

// maxKindTries is how many checks of the server's kind may fail (no answer, an error status)
// before it is taken to be OpenAI-compatible; an answer of Ollama's still changes that.
const maxKindTries = 3

func newHTTPCompleter(cfg Config, u *url.URL) *httpCompleter {
	u.Fragment = ""
	path := strings.TrimRight(u.Path, "/")
	query := u.RawQuery
	endpoint := func(p string, keepQuery bool) string {
		v := *u
		v.Path, v.RawPath = p, ""
		v.RawQuery = ""
		if keepQuery {
			v.RawQuery = query
		}
		return v.String()
	}
	h := &httpCompleter{cfg: cfg, client: guardedClient(cfg.HTTPClient), scrub: newHostScrubber(cfg.APIKey, u.Hostname())}
	switch {
	case strings.HasSuffix(path, "/chat/completions"):
		// The whole chat endpoint, used as given with its query (some hosts want
		// ?api-version=…); the raw one beside it.
		base := strings.TrimSuffix(path, "/chat/completions")
		h.chat = endpoint(path, true)
		h.completions = endpoint(base+"/completions", true)
		path = strings.TrimSuffix(base, "/v1")
	case strings.HasSuffix(path, "/completions"):
		base := strings.TrimSuffix(path, "/completions")
		h.completions = endpoint(path, true)
		h.chat = endpoint(base+"/chat/completions", true)
		path = strings.TrimSuffix(base, "/v1")
	case strings.HasSuffix(path, "/v1"):
		h.chat = endpoint(path+"/chat/completions", false)
		h.completions = endpoint(path+"/completions", false)
		path = strings.TrimSuffix(path, "/v1")
	default:
		h.chat = endpoint(path+"/v1/chat/completions", false)
		h.completions = endpoint(path+"/v1/completions", false)
	}
	h.generate = endpoint(path+"/api/generate", false)
	h.ollamaChat = endpoint(path+"/api/chat", false)
	h.version = endpoint(path+"/api/version", false)
	h.props = endpoint(path+"/props", false)
	h.infill = endpoint(path+"/infill", false)
	h.fim = endpoint(path+hostedFIMPath, false)
	h.hostedFIM = hostedFIMHosts[strings.ToLower(u.Hostname())]
	h.host = u.Hostname()
	h.base = endpoint(path, false)
	v := *u
	v.RawQuery = ""
	h.shown = v.Redacted()
	switch strings.ToLower(cfg.Server) {
	case "ollama":
		h.kind, h.fixed = kindOllama, true
		cfg.Log.Info("model: the server is Ollama (--model-server ollama): raw prompts go to /api/generate, chat prompts to /api/chat")
	case "openai":
		h.kind, h.fixed = kindOpenAI, true
		cfg.Log.Info("model: the server is OpenAI-compatible (--model-server openai): raw prompts go to /v1/completions")
	case "llama-server":
		h.kind, h.fixed = kindLlamaServer, true
		cfg.Log.Info("model: the server is llama-server (--model-server llama-server): raw prompts go to /v1/completions, FIM prompts to /infill")
	}
	if h.fixed {
		h.found = "--model-server " + strings.ToLower(cfg.Server)
	}
	return h
}

// useGenerate reports whether a raw prompt goes to Ollama's /api/generate: whether the server is
// Ollama, which only Ollama says at GET /api/version. It asks the server until it gets an answer
// (at most maxKindTries times without one), within the request's own time: at most half of what
// is left of dctx, so that the request keeps the rest.
func (h *httpCompleter) useGenerate(ctx, dctx context.Context) bool {
	return h.serverKind(ctx, dctx, false) == kindOllama
}

// serverKind is what serves the model, asked as useGenerate says; kindUnknown while not known
// (the prompt then goes to /v1/completions). With props (for FIM prompts, which llama-server
// takes at /infill), a server that is not Ollama is also asked whether it is llama-server.
func (h *httpCompleter) serverKind(ctx, dctx context.Context, props bool) serverKind {
	h.mu.Lock()
	k := h.kind
	h.mu.Unlock()
	if k != kindUnknown {
		return k
	}
	c := h.askKind(dctx, props)
	k, why, unreached := c.kind, c.why, c.unreached
	if ctx.Err() != nil {
		return kindUnknown // the request was abandoned: no try counted
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.kind != kindUnknown { // another request found it meanwhile
		return h.kind
	}
	if unreached {
		// Nothing listens there yet: that says nothing of what will (no try counted). The user
		// must start the server or name its address: a warning, with how, once until it answers.
		if !h.toldUnreachable {
			h.toldUnreachable = true
			h.cfg.Log.Warn("model: " + why + ": " + h.startHint())
		}
		return kindUnknown
	}
	h.toldUnreachable = false
	if k == kindUnknown {
		h.kindTries++
		if h.kindTries < maxKindTries {
			h.cfg.Log.Info("model: could not tell whether the server is Ollama ("+why+"); asked again at the next raw prompt, which goes to /v1/completions meanwhile", "server", h.shown, "tries", h.kindTries)
			return kindUnknown
		}
		k, why = kindOpenAI, fmt.Sprintf("%s, %d times: taken as OpenAI-compatible until an answer shows Ollama's", why, h.kindTries)
	}
	h.setKindLocked(k, why)
	return k
}

// Kind says what serves the model as far as it is known, for doctor.
func (h *httpCompleter) Kind() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.hostedFIM {
		return "a hosted FIM service (" + h.shown + ")"
	}
	return h.kind.String()
}

// kindCheck is what a check of the server's kind found: kind, kindUnknown when the server did
// not say (no answer, an error status), with why; unreached says nothing answered at the address
// at all (unreachable); refused, when /api/version refused the key (401, 403: an answer to the
// key, not to what the server is), says so as a request refused would (keyRefusal).
type kindCheck struct {
	kind      serverKind
	why       string
	unreached bool
	refused   string
}

// askKind asks the server whether it is Ollama (and, with props, whether it is llama-server).
func (h *httpCompleter) askKind(dctx context.Context, props bool) kindCheck {
	budget := time.Second
	if deadline, ok := dctx.Deadline(); ok {
		budget = time.Until(deadline) / 2
	}
	ctx, cancel := context.WithTimeout(dctx, budget)
	defer cancel()
	code, status, data, err := h.get(ctx, h.version, 4096)
	if err != nil {
		if ctx.Err() != nil {
			return kindCheck{why: fmt.Sprintf("no answer at /api/version within %s", budget.Round(time.Millisecond))}
		}
		if cause, ok := unreachable(err); ok {
			return kindCheck{why: "nothing answers at " + h.shown + " (" + h.scrub.clean(cause, maxErrorText) + ")", unreached: true}
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return kindCheck{why: "/api/version: " + h.scrub.clean(err.Error(), maxErrorText)}
	}
	var v struct {
		Version string `json:"version"`
	}
	var refused string
	switch {
	case code == http.StatusOK && json.Unmarshal(data, &v) == nil && v.Version != "":
		return kindCheck{kind: kindOllama, why: h.scrub.clean(v.Version, 40) + " (it answers /api/version)"}
	case code >= 500:
		return kindCheck{why: "/api/version answered " + h.scrub.clean(status, 60)}
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		refused = h.keyRefusal(redacted(h.version), h.scrub.clean(status, 80), h.scrub.clean(errorText(data), maxErrorText))
	}
	if !props {
		return kindCheck{kind: kindOpenAI, why: "no Ollama at /api/version", refused: refused}
	}
	if h.askProps(ctx) {
		return kindCheck{kind: kindLlamaServer, why: "it answers /props as llama-server does", refused: refused}
	}
	return kindCheck{kind: kindOpenAI, why: "no Ollama at /api/version, no llama-server at /props", refused: refused}
}

// askProps reports whether the server answers GET /props as llama-server does: a JSON object
// with its default_generation_settings (or its build_info).
func (h *httpCompleter) askProps(ctx context.Context) bool {
	code, _, data, err := h.get(ctx, h.props, 1<<20)
	var v struct {
		Settings  json.RawMessage `json:"default_generation_settings"`
		BuildInfo string          `json:"build_info"`
	}
	return err == nil && code == http.StatusOK && json.Unmarshal(data, &v) == nil && (len(v.Settings) > 0 || v.BuildInfo != "")
}

// get asks endpoint with GET, the key as a Bearer token when there is one, and reads at most
// limit bytes of the answer: its status code and line, and its body.
func (h *httpCompleter) get(ctx context.Context, endpoint string, limit int64) (code int, status string, data []byte, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint, nil)
	if err != nil {
		return 0, "", nil, err
	}
	if h.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+h.cfg.APIKey)
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return 0, "", nil, err
	}
	defer resp.Body.Close()
	data, _ = io.ReadAll(io.LimitReader(resp.Body, limit))
	return resp.StatusCode, resp.Status, data, nil
}

// setKindLocked records what serves the model (a kind that is known), and logs it when it
// changed. h.mu is held.
func (h *httpCompleter) setKindLocked(k serverKind, why string) {
	if k == h.kind {
		return
	}
	h.kind, h.found = k, why
	switch k {
	case kindOllama:
		h.cfg.Log.Info("model: the server is Ollama "+why+": raw prompts go to /api/generate with raw set, FIM prompts with suffix, chat prompts to /api/chat", "server", h.shown)
	case kindLlamaServer:
		h.cfg.Log.Info("model: the server is llama-server ("+why+"): raw prompts go to /v1/completions, FIM prompts to /infill", "server", h.shown)
	case kindOpenAI:
		h.cfg.Log.Info("model: the server is OpenAI-compatible ("+why+"): raw prompts go to /v1/completions", "server", h.shown)
	}
}

// forgetKindLocked forgets what serves the model, for why: the next prompt that needs it asks
// the server again, with every try of maxKindTries before it is taken as OpenAI-compatible.
// h.mu is held.
func (h *httpCompleter) forgetKindLocked(why string) {
	if h.kind == kindUnknown {
		return
	}
	h.kind, h.found = kindUnknown, why
	h.kindTries = 0
	h.cfg.Log.Info("model: what serves the model is asked again ("+why+")", "server", h.shown)
}

// Complete sends the prompt and returns the answer's text. Nothing is sent while the server asked
// for a pause (429) or fails (5xx, with a backoff): those requests fail at once.
func (h *httpCompleter) Complete(ctx context.Context, p Prompt) (Answer, error) {
	return h.CompleteStream(ctx, p, nil)
}

// CompleteStream is Complete, asking the server to stream its answer when onText is set, and
// handing onText each piece of text as it comes (Streamer).
func (h *httpCompleter) CompleteStream(ctx context.Context, p Prompt, onText func(string)) (Answer, error) {
	if err := h.pace.held(h.shown); err != nil {
		return Answer{}, err
	}
	began := time.Now()
	// One bound for the whole request: the check of the server's kind included.
	dctx, cancel := context.WithTimeout(ctx, h.cfg.Timeout)
	defer cancel()
	r, endpoint, err := h.ask(ctx, dctx, p, onText)
	if err != nil {
		return Answer{}, err
	}
	h.pace.answered()
	if r.timings != nil {
		h.sawTimings()
	}
	attrs := []any{"uri", p.URI, "endpoint", redacted(endpoint), "prompt_bytes", len(p.System) + len(p.User) + len(p.Raw) + p.FIM.size() + bodySize(p.Body), "answer_bytes", len(r.text), "took", time.Since(began)}
	if !r.sent.IsZero() {
		// The part of took before the server had the prompt: asking what serves the model,
		// connecting, writing the request (eval sets it apart from the model's time).
		attrs = append(attrs, "setup", r.sent.Sub(began))
	}
	attrs = append(attrs, "finish_reason", r.finish)
	if t := r.timings; t != nil {
		attrs = append(attrs, "prompt_n", t.PromptN, "cache_n", t.CacheN, "predicted_n", t.PredictedN, "prompt_ms", t.PromptMS, "predicted_ms", t.PredictedMS)
	}
	h.cfg.Log.Debug("model: answer", attrs...)
	return Answer{Text: r.text, Cut: r.finish == "length", Timings: r.timings}, nil
}

// sawTimings records an answer with llama-server's timings: only llama-server's OpenAI layer adds
// them, so the server is llama-server (its /api/version is no Ollama's, and raw prompts are not
// asked for its /props), and its prompt cache is asked for from now on (cachePrompt). A kind that
// --model-server fixed stays as said.
func (h *httpCompleter) sawTimings() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.timed {
		return
	}
	h.timed = true
	if !h.fixed && h.kind != kindLlamaServer && h.kind != kindOllama {
		h.setKindLocked(kindLlamaServer, "its answers carry llama-server's timings")
	}
}

// cachePrompt reports whether requests carry llama-server's cache_prompt: only to a server known
// to be llama-server (--model-server llama-server, its /props, or its timings in an answer), as
// another server may refuse a field it does not know (vLLM's OpenAI layer can be set to).
// llama-server then starts its evaluation of a prompt after the longest start it shares with
// the prompt the slot evaluated last (the formats put what changes least first for that).
func (h *httpCompleter) cachePrompt() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.kind == kindLlamaServer || h.timed
}

// ask posts the prompt where its kind goes, and returns what was read of the answer and the endpoint that gave it.
func (h *httpCompleter) ask(ctx, dctx context.Context, p Prompt, onText func(string)) (parsed, string, error) {
	switch {
	case p.FIM != nil:
		return h.askFIM(ctx, dctx, p)
	case p.Body != nil:
		return h.askHosted(ctx, dctx, p)
	case p.Raw == "":
		return h.askChat(ctx, dctx, p, onText)
	}
	return h.askRaw(ctx, dctx, p, onText)
}

// askHosted posts a hosted service's own request (Sweep's) at its own path: the answer is read
// by the format.
func (h *httpCompleter) askHosted(ctx, dctx context.Context, p Prompt) (parsed, string, error) {
	endpoint := h.base + p.Path
	r, err := h.postAs(ctx, dctx, endpoint, p.Body, postOpts{brotli: p.Brotli, whole: true}, readWhole)
	return r, endpoint, err
}

// ollamaOptions are the options of Ollama's /api/generate and /api/chat for p.
func (h *httpCompleter) ollamaOptions(p Prompt) generateOptions {
	return generateOptions{NumPredict: p.MaxTokens, Temperature: 0, Stop: p.Stop, NumCtx: h.cfg.ContextTokens}
}

// askChat posts a chat prompt: to Ollama's own /api/chat when the server is known to be Ollama,
// to a hosted service's chat-shaped endpoint when the format names one (p.Path), and to
// /v1/chat/completions otherwise.
func (h *httpCompleter) askChat(ctx, dctx context.Context, p Prompt, onText func(string)) (parsed, string, error) {
	stream := onText != nil
	var msgs []chatMessage
	if p.System != "" {
		msgs = append(msgs, chatMessage{Role: "system", Content: p.System})
	}
	msgs = append(msgs, chatMessage{Role: "user", Content: p.User})
	if p.Path == "" && h.isOllama() {
		// Ollama's own chat, which takes the options its OpenAI layer has no field for:
		// num_ctx above all.
		r, err := h.postAs(ctx, dctx, h.ollamaChat, ollamaChatRequest{Model: h.cfg.Model, Messages: msgs, Stream: stream, Options: h.ollamaOptions(p)}, postOpts{onText: onText}, readOllama)
		h.notOllamaOn404(err, "/api/chat")
		return r, h.ollamaChat, err
	}
	chat := h.chat
	if p.Path != "" {
		chat = h.base + p.Path // a hosted service's chat-shaped endpoint (Inception's edits)
	}
	r, err := h.postAs(ctx, dctx, chat, chatRequest{
		Model: h.cfg.Model, Messages: msgs, Temperature: 0, MaxTokens: p.MaxTokens, Stop: p.Stop, Stream: stream,
		CachePrompt: p.Path == "" && h.cachePrompt(),
	}, postOpts{onText: onText}, readChat)
	if err == nil && p.Path == "" && r.fingerprint == ollamaFingerprint {
		// Ollama's OpenAI layer answered: the answer is good, but --model-context cannot reach
		// the model there; the next chat prompt goes to /api/chat. A kind the user said stays,
		// and the answer is good all the same: nothing to warn of.
		h.sawOllamaLayer("/v1/chat/completions")
	}
	return r, chat, err
}

// askRaw posts a raw prompt: to Ollama's /api/generate with raw set when the server is Ollama,
// to /v1/completions otherwise.
func (h *httpCompleter) askRaw(ctx, dctx context.Context, p Prompt, onText func(string)) (parsed, string, error) {
	stream := onText != nil
	if h.useGenerate(ctx, dctx) {
		return h.askGenerate(ctx, dctx, p, onText)
	}
	r, err := h.postAs(ctx, dctx, h.completions, completionRequest{
		Model: h.cfg.Model, Prompt: p.Raw, MaxTokens: p.MaxTokens, Temperature: 0, Stop: p.Stop, Stream: stream,
		CachePrompt: h.cachePrompt(),
	}, postOpts{onText: onText}, readCompletion)
	if err != nil || r.fingerprint != ollamaFingerprint {
		return r, h.completions, err
	}
	// Ollama's OpenAI layer answered: it wrapped the prompt in the model's chat template, so the
	// answer is to another prompt than the format's.
	if h.sawOllamaLayer("/v1/completions") {
		h.warnWrapped()
		return r, h.completions, nil
	}
	if stream {
		// Its pieces were read as they came: asking again would hand the reader a second
		// answer after the first. This one is dropped; the next prompt goes to /api/generate.
		return parsed{}, h.completions, errors.New("the answer came from Ollama's /v1/completions, which wraps the prompt in the model's chat template; it is dropped, and the next prompt goes to /api/generate")
	}
	return h.askGenerate(ctx, dctx, p, onText)
}

// askGenerate posts a raw prompt to Ollama's /api/generate, with raw set.
func (h *httpCompleter) askGenerate(ctx, dctx context.Context, p Prompt, onText func(string)) (parsed, string, error) {
	r, err := h.postAs(ctx, dctx, h.generate, generateRequest{
		Model: h.cfg.Model, Prompt: p.Raw, Raw: true, Stream: onText != nil, Options: h.ollamaOptions(p),
	}, postOpts{onText: onText}, readOllama)
	h.notOllamaOn404(err, "/api/generate")
	return r, h.generate, err
}

// ollamaFingerprint is the system_fingerprint of the answers of Ollama's OpenAI layer.
const ollamaFingerprint = "fp_ollama"

// sawOllamaLayer records an answer of Ollama's OpenAI layer at path: the server is Ollama. It
// reports whether the user fixed the kind with --model-server, which then stays as said.
func (h *httpCompleter) sawOllamaLayer(path string) (fixed bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.fixed {
		return true
	}
	h.setKindLocked(kindOllama, "(its "+path+" answers as Ollama's, system_fingerprint "+ollamaFingerprint+")")
	return false
}

// warnWrapped warns, once, that --model-server openai names an Ollama, whose /v1/completions
// wraps raw prompts in the chat template.
func (h *httpCompleter) warnWrapped() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.warned {
		h.warned = true
		h.cfg.Log.Warn("model: --model-server openai, but the server is Ollama (its /v1/completions answers as Ollama's): raw prompts go wrapped in the chat template, and the answers will be wrong; use --model-server ollama or auto", "server", h.shown)
	}
}

// isOllama reports whether the server is known to be Ollama (--model-server ollama, its
// /api/version, or its fingerprint on an answer). Chat prompts do not ask it: they go to
// /v1/chat/completions until it is known.
func (h *httpCompleter) isOllama() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.kind == kindOllama
}

// notOllamaOn404 forgets that the server is Ollama when one of Ollama's own endpoints (path)
// answered err, a 404: no Ollama there now. A kind the user said stays.
func (h *httpCompleter) notOllamaOn404(err error, path string) {
	var se *statusError
	if !errors.As(err, &se) || se.code != http.StatusNotFound {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.fixed {
		h.forgetKindLocked(path + " answered 404: no Ollama there now")
	}
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type chatRequest struct {
	Model       string        `json:"model"`
	Messages    []chatMessage `json:"messages"`
	Temperature float64       `json:"temperature"`
	MaxTokens   int           `json:"max_tokens"`
	Stop        []string      `json:"stop,omitempty"`
	Stream      bool          `json:"stream"`
	// CachePrompt is llama-server's cache_prompt, sent to it alone (cachePrompt).
	CachePrompt bool `json:"cache_prompt,omitempty"`
}

// ollamaChatRequest is a chat for Ollama's /api/chat: its options are /api/generate's.
type ollamaChatRequest struct {
	Model    string          `json:"model"`
	Messages []chatMessage   `json:"messages"`
	Stream   bool            `json:"stream"`
	Options  generateOptions `json:"options"`
}

type completionRequest struct {
	Model       string   `json:"model"`
	Prompt      string   `json:"prompt"`
	MaxTokens   int      `json:"max_tokens"`
	Temperature float64  `json:"temperature"`
	Stop        []string `json:"stop,omitempty"`
	Stream      bool     `json:"stream"`
	// CachePrompt is llama-server's cache_prompt, sent to it alone (cachePrompt).
	CachePrompt bool `json:"cache_prompt,omitempty"`
}

type generateRequest struct {
	Model   string          `json:"model"`
	Prompt  string          `json:"prompt"`
	Suffix  string          `json:"suffix,omitempty"`
	Raw     bool            `json:"raw,omitempty"`
	Stream  bool            `json:"stream"`
	Options generateOptions `json:"options"`
}

type generateOptions struct {
	NumPredict  int      `json:"num_predict"`
	Temperature float64  `json:"temperature"`
	Stop        []string `json:"stop,omitempty"`
	// NumCtx is the context Ollama loads the model with: --model-context when given (Ollama's
	// default can be smaller than the prompt, whose start it would then drop without a word).
	NumCtx int `json:"num_ctx,omitempty"`
}

// A reader takes the answer's text and finish reason from a response body.
type reader func(data []byte) (parsed, error)

// parsed is what a reader takes from an answer.
type parsed struct {
	text, finish string
	// fingerprint is the answer's system_fingerprint (OpenAI's completions), which tells
	// Ollama's OpenAI layer apart.
	fingerprint string
	// timings are llama-server's figures for the answer (tokens of the prompt, of them taken
	// from its cache, tokens predicted, milliseconds), for the debug log and eval.
	timings *Timings
	// sent is when the request that gave the answer was written whole to the server (postAs).
	sent time.Time
}

// Timings are what llama-server says of an answer's work: the prompt's tokens evaluated and
// those reused from its cache, the tokens predicted, and the time of each.
type Timings struct {
	PromptN     int     `json:"prompt_n"`
	PromptMS    float64 `json:"prompt_ms"`
	PredictedN  int     `json:"predicted_n"`
	PredictedMS float64 `json:"predicted_ms"`
	CacheN      int     `json:"cache_n"`
}

func readChat(data []byte) (parsed, error) {
	var r struct {
		SystemFingerprint string `json:"system_fingerprint"`
		Choices           []struct {
			Message struct {
				Content json.RawMessage `json:"content"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Error   json.RawMessage `json:"error"`
		Timings *Timings        `json:"timings"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return parsed{}, fmt.Errorf("a malformed body (%v): %s", err, preview(data))
	}
	if len(r.Choices) == 0 {
		return parsed{}, noChoices(r.Error, data)
	}
	text, err := contentText(r.Choices[0].Message.Content)
	if err != nil {
		return parsed{}, fmt.Errorf("a malformed message content (%v): %s", err, preview(r.Choices[0].Message.Content))
	}
	return parsed{text: text, finish: r.Choices[0].FinishReason, fingerprint: r.SystemFingerprint, timings: r.Timings}, nil
}

func readCompletion(data []byte) (parsed, error) {
	var r struct {
		Choices []struct {
			Text         *string `json:"text"`
			FinishReason string  `json:"finish_reason"`
		} `json:"choices"`
		SystemFingerprint string          `json:"system_fingerprint"`
		Error             json.RawMessage `json:"error"`
		// llama-server's figures, which its OpenAI layer adds.
		Timings *Timings `json:"timings"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return parsed{}, fmt.Errorf("a malformed body (%v): %s", err, preview(data))
	}
	if len(r.Choices) == 0 {
		return parsed{}, noChoices(r.Error, data)
	}
	if r.Choices[0].Text == nil {
		return parsed{}, fmt.Errorf("a completion without text: %s", preview(data))
	}
	return parsed{text: *r.Choices[0].Text, finish: r.Choices[0].FinishReason, fingerprint: r.SystemFingerprint, timings: r.Timings}, nil
}

// readOllama reads an answer of Ollama's own: /api/generate's {response, done_reason}, or
// /api/chat's {message:{content}, done_reason}.
func readOllama(data []byte) (parsed, error) {
	var r struct {
		Response *string `json:"response"`
		Message  *struct {
			Content string `json:"content"`
		} `json:"message"`
		DoneReason string `json:"done_reason"`
		Error      string `json:"error"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return parsed{}, fmt.Errorf("a malformed body (%v): %s", err, preview(data))
	}
	switch {
	case r.Response != nil:
		return parsed{text: *r.Response, finish: r.DoneReason}, nil
	case r.Message != nil:
		return parsed{text: r.Message.Content, finish: r.DoneReason}, nil
	case r.Error != "":
		return parsed{}, fmt.Errorf("an error: %s", r.Error)
	}
	return parsed{}, fmt.Errorf("no response: %s", preview(data))
}

func noChoices(errField json.RawMessage, data []byte) error {
	if len(errField) > 0 && string(errField) != "null" {
		return fmt.Errorf("an error: %s", errorText(data))
	}
	return fmt.Errorf("no choices: %s", preview(data))
}

// post sends body to endpoint within dctx (ctx is the caller's, to tell an abandoned request from
// one that timed out) and reads the answer with read. Its errors are the server's failures
// (nesagent.BackendError, with the reason), their text bounded and without the key.
func (h *httpCompleter) post(ctx, dctx context.Context, endpoint string, body any, read reader) (parsed, error) {
	return h.postAs(ctx, dctx, endpoint, body, postOpts{}, read)
}

// postOpts are how postAs sends and reads: the body compressed by brotli (Content-Encoding: br,
// as Sweep's service takes it); a streamed answer's text handed to onText as it comes; or, with
// whole, the body read whole whatever its type (a service's own answer, which its format reads:
// Sweep's lines are no stream of text).
type postOpts struct {
	brotli bool
	onText func(string)
	whole  bool
}

// postAs is post, sent and read as opts say.
func (h *httpCompleter) postAs(ctx, dctx context.Context, endpoint string, body any, opts postOpts, read reader) (parsed, error) {
	// Prompts are full of "<" and ">" (markers, code): without HTML escaping the body is smaller
	// and quicker to write.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(body); err != nil {
		return parsed{}, fmt.Errorf("model: %w", err)
	}
	payload := buf.Bytes()
	if opts.brotli {
		payload = compressBrotli(payload)
	}
	// When the request is written whole: what came before (a new connection) is not the
	// model's time. The transport's goroutine says it.
	var wrote atomic.Pointer[time.Time]
	trace := &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { now := time.Now(); wrote.Store(&now) }}
	hr, err := http.NewRequestWithContext(httptrace.WithClientTrace(dctx, trace), http.MethodPost, endpoint, bytes.NewReader(payload))
	if err != nil {
		return parsed{}, fmt.Errorf("model: %s", h.scrub.clean(err.Error(), maxErrorText))
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json")
	if opts.brotli {
		hr.Header.Set("Content-Encoding", "br")
	}
	if h.cfg.APIKey != "" {
		hr.Header.Set("Authorization", "Bearer "+h.cfg.APIKey)
	}
	shown := redacted(endpoint)
	resp, err := h.client.Do(hr)
	if err != nil {
		return parsed{}, h.transportError(ctx, dctx, shown, err)
	}
	defer resp.Body.Close()
	if !opts.whole && resp.StatusCode >= 200 && resp.StatusCode <= 299 && streamed(resp.Header.Get("Content-Type")) {
		// A streamed answer, read event by event to its end (or the request's).
		r, err := readStream(resp.Body, streamKindOf(endpoint), opts.onText)
		switch {
		case errors.Is(err, errStreamTooLarge):
			return parsed{}, h.backendError(fmt.Errorf("model: %s answered %s", shown, err))
		case err != nil && (ctx.Err() != nil || dctx.Err() != nil):
			return parsed{}, h.transportError(ctx, dctx, shown, err)
		case err != nil:
			return parsed{}, h.backendError(fmt.Errorf("model: %s answered %s", shown, h.scrub.clean(err.Error(), maxErrorText)))
		}
		r.sent = sentAt(&wrote)
		return r, nil
	}
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes+1))
	if err != nil {
		return parsed{}, h.transportError(ctx, dctx, shown, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return parsed{}, h.statusError(resp, answer, shown)
	}
	if len(answer) > maxAnswerBytes {
		return parsed{}, h.backendError(fmt.Errorf("model: %s answered more than %d bytes", shown, maxAnswerBytes))
	}
	r, err := read(answer)
	if err != nil {
		return parsed{}, h.backendError(fmt.Errorf("model: %s answered %s", shown, h.scrub.clean(err.Error(), maxErrorText)))
	}
	r.sent = sentAt(&wrote)
	return r, nil
}

// sentAt is the time a request was written whole, as its trace stored it; zero when not known.
func sentAt(wrote *atomic.Pointer[time.Time]) time.Time {
	if t := wrote.Load(); t != nil {
		return *t
	}
	return time.Time{}
}

// backendError is err as a failure of the server.
func (h *httpCompleter) backendError(err error) error {
	return &nesagent.BackendError{Reason: nesagent.ReasonBackendError, Err: err}
}

// transportError is the error of a request that got no whole answer: abandoned by the caller,
// past the agent's timeout, a redirect refused, or the server unreachable.
func (h *httpCompleter) transportError(ctx, dctx context.Context, shown string, err error) error {
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("model: request to %s abandoned: %w", shown, context.Cause(ctx))
	case errors.Is(dctx.Err(), context.DeadlineExceeded):
		return &nesagent.BackendError{Reason: nesagent.ReasonBackendTimeout, Err: fmt.Errorf("model: no answer from %s within %s (the agent's --timeout): %w", shown, h.cfg.Timeout, context.DeadlineExceeded)}
	}
	var re *redirectError
	if errors.As(err, &re) {
		return &nesagent.BackendError{Reason: nesagent.ReasonRedirectRefused, Err: fmt.Errorf("model: %s: %s; if the model is served there, name it with --model-url", h.scrub.clean(re.from, maxErrorText), h.scrub.clean(re.Error(), 2*maxErrorText))}
	}
	if cause, ok := unreachable(err); ok {
		return &nesagent.BackendError{Reason: nesagent.ReasonBackendUnreachable, Err: fmt.Errorf("model: nothing answers at %s (%s): %s", h.shown, h.scrub.clean(cause, maxErrorText), h.startHint())}
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // the URL is said once
	}
	return h.backendError(fmt.Errorf("model: request to %s: %s", shown, h.scrub.clean(err.Error(), maxErrorText)))
}

// unreachable says why a request could not reach the server at all, when that is so: the host
// name is not found, or the connection was not made (refused, no route, the network down). The
// cause is the system's words, without the address (the caller names it).
func unreachable(err error) (string, bool) {
	var de *net.DNSError
	if errors.As(err, &de) {
		if de.IsTimeout {
			return "", false
		}
		return "the host " + de.Name + " is not found: " + de.Err, true
	}
	var oe *net.OpError
	if !errors.As(err, &oe) || oe.Op != "dial" || oe.Timeout() {
		return "", false
	}
	cause := oe.Err
	var se *os.SyscallError
	if errors.As(cause, &se) {
		cause = se.Err
	}
	return cause.Error(), true
}

// startHint says what to do when nothing answers at the server's address: start the server
// there, or name the right one.
func (h *httpCompleter) startHint() string {
	if local, _ := LocalHost(h.host); local {
		return "is the model's server (llama-server, Ollama, vLLM) running there? Start it, or name its address with --model-url; suggestions come once it answers"
	}
	return "check the address in --model-url and the network; suggestions come once it answers"
}

// statusError is an answer of the server that is not a success.
type statusError struct {
	code int
	err  error
}

func (e *statusError) Error() string { return e.err.Error() }
func (e *statusError) Unwrap() error { return e.err }

// statusError is the error of an answer with an error status: a refused key (401, 403), a
// request for a pause (429: nothing is asked meanwhile), a failure of the server (5xx: nothing
// is asked for a backoff), or another refusal.
func (h *httpCompleter) statusError(resp *http.Response, body []byte, shown string) error {
	status := h.scrub.clean(resp.Status, 80)
	text := h.scrub.clean(errorText(body), maxErrorText)
	wait := retryAfter(resp.Header, time.Now())
	var be *nesagent.BackendError
	switch code := resp.StatusCode; {
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		be = &nesagent.BackendError{Reason: nesagent.ReasonCredentialsRefused, Err: errors.New("model: " + h.keyRefusal(shown, status, text))}
	case code == http.StatusTooManyRequests:
		d := h.pace.limited(wait, "asked for a pause ("+status+")")
		be = &nesagent.BackendError{Reason: nesagent.ReasonRateLimited, RetryAfter: d, Err: fmt.Errorf("model: %s asked for a pause (%s: %s); not asked again for %s", shown, status, text, nesagent.RoundUp(d))}
	case code >= 500:
		d := h.pace.failed(wait, "failed ("+status+")")
		be = &nesagent.BackendError{Reason: nesagent.ReasonBackendError, RetryAfter: d, Err: fmt.Errorf("model: %s answered %s: %s; not asked again for %s", shown, status, text, nesagent.RoundUp(d))}
	default:
		be = &nesagent.BackendError{Reason: nesagent.ReasonBackendError, Err: fmt.Errorf("model: %s answered %s: %s", shown, status, text)}
	}
	return &statusError{code: resp.StatusCode, err: be}
}

// keyRefusal is what to say of a refused key (a 401 or 403 with status and text, both cleaned)
// at shown: that the server asks for one, or refused the one in the variable, and what to do.
func (h *httpCompleter) keyRefusal(shown, status, text string) string {
	switch {
	case h.cfg.APIKey == "":
		return fmt.Sprintf("%s asks for an API key (%s: %s): put the key in an environment variable and name it with --api-key-env", shown, status, text)
	case h.cfg.APIKeyEnv != "":
		return fmt.Sprintf("%s refused the API key in %s (%s: %s): set %s to a key this server accepts where the editor (or eval, or doctor) is started, and start it again: the agent reads the key once, when it starts", shown, h.cfg.APIKeyEnv, status, text, h.cfg.APIKeyEnv)
	}
	return fmt.Sprintf("%s refused the API key (%s: %s)", shown, status, text)
}

// redacted is an endpoint for messages: no password, no query.
func redacted(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil {
		return endpoint
	}
	u.RawQuery = ""
	return u.Redacted()
}
