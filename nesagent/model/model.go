// Package model is a nesagent.Engine that asks a language model for the user's next edit through
// an OpenAI-compatible chat completions API: llama.cpp's llama-server, Ollama, vLLM, LM Studio or
// a hosted API.
//
// For each request it shows the model the editable region around the cursor (a few lines above
// and below, the cursor marked), the recent edits of the document as unified diffs, the lines
// around the region and short excerpts of the other open documents, and asks it to rewrite the
// region as the next edit will leave it. The rewrite is diffed against the region (lines, then
// words, then characters) into the smallest edits, which make one suggestion. docs/model-agent.md
// describes the prompt and how to run it.
package model

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent"
)

// Config configures the engine. URL and Model are required; every other field has a default when
// left zero. For the prompt's counts and sizes (LinesAbove to ExcerptBytes), a negative value
// means none: no lines above the cursor's, no context lines, no history, no excerpts.
type Config struct {
	// URL is the server: its base (http://127.0.0.1:8080), its OpenAI-style base ending in /v1
	// (https://api.example.com/v1), or the full endpoint ending in /chat/completions, used as
	// given. The engine posts to {base}/v1/chat/completions.
	URL string
	// Model is the "model" of each request (for llama-server any name; for Ollama the pulled
	// model, e.g. qwen2.5-coder:7b).
	Model string
	// APIKey, when set, is sent as "Authorization: Bearer APIKey" (the command reads it from the
	// environment variable --api-key-env names).
	APIKey string
	// Timeout bounds each request to the model, from sending it to reading the whole answer
	// (default 5s). A cancelled nes/suggest aborts the request sooner.
	Timeout time.Duration
	// MaxTokens is the request's max_tokens (default: room for the region rewritten, about half
	// its size in bytes plus 256, at least 512 and at most 4096).
	MaxTokens int

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

	// Instructions replaces the system message (default DefaultInstructions). The user message
	// and the answer's markers stay as they are.
	Instructions string
	// HTTPClient sends the requests (default: a client of its own over http.DefaultTransport,
	// which honours HTTPS_PROXY and NO_PROXY). Its own Timeout, if any, also applies.
	HTTPClient *http.Client
	// Log receives a line per answer at debug level (sizes, time taken, finish reason) and a line
	// per unusable answer at info level, never document text (default: nothing is logged).
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
	if err != nil {
		return nil, fmt.Errorf("model: server URL: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("model: server URL %q: want http://host[:port][/path] or https://…", cfg.URL)
	}
	if cfg.Timeout < 0 {
		return nil, fmt.Errorf("model: negative timeout %s", cfg.Timeout)
	}
	u.Fragment = ""
	path := strings.TrimRight(u.Path, "/")
	switch {
	case strings.HasSuffix(path, "/chat/completions"):
		// used as given, with its query (some hosts want ?api-version=…)
	case strings.HasSuffix(path, "/v1"):
		path += "/chat/completions"
		u.RawQuery = ""
	default:
		path += "/v1/chat/completions"
		u.RawQuery = ""
	}
	u.Path, u.RawPath = path, ""

	e := withDefaults(cfg)
	e.c = &httpCompleter{cfg: e.cfg, endpoint: u.String(), shown: u.Redacted()}
	return e, nil
}

// withDefaults is the engine with cfg's defaults filled in.
func withDefaults(cfg Config) *engine {
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
	return &engine{cfg: cfg}
}

type engine struct {
	cfg Config
	c   Completer
}

// httpCompleter asks an OpenAI-compatible chat completions endpoint.
type httpCompleter struct {
	cfg      Config
	endpoint string
	shown    string // the endpoint for messages, without a password
}

// Complete sends the prompt as a system and a user message and returns the first choice's text.
func (h *httpCompleter) Complete(ctx context.Context, p Prompt) (Answer, error) {
	began := time.Now()
	answer, finish, err := h.complete(ctx, p)
	if err != nil {
		return Answer{}, err
	}
	h.cfg.Log.Debug("model: answer", "uri", p.URI, "prompt_bytes", len(p.System)+len(p.User), "answer_bytes", len(answer), "took", time.Since(began), "finish_reason", finish)
	return Answer{Text: answer}, nil
}

// Suggest asks the model to rewrite the region around the cursor and returns the difference as
// one suggestion, or none when the rewrite changes nothing or cannot be read. Errors are the
// model's server failing: unreachable, too slow, an error status, a malformed body.
func (e *engine) Suggest(ctx context.Context, req nesagent.Request) ([]nesagent.Suggestion, error) {
	p, ok := e.build(req)
	if !ok {
		e.cfg.Log.Debug("model: the cursor's line is longer than MaxRegionBytes", "uri", req.URI)
		return nil, nil
	}
	answer, err := e.c.Complete(ctx, Prompt{System: p.system, User: p.user, MaxTokens: p.maxTokens, URI: req.URI})
	if err != nil {
		return nil, err
	}
	if len(answer.Changes) > 0 {
		// A coding agent proposed its edit as a change to the file rather than in its text.
		return changeSuggestions(req, answer.Changes, e.cfg.Log), nil
	}
	text, ok := p.rw.parse(answer.Text)
	if !ok {
		e.cfg.Log.Info("model: answer without a marked region; no suggestion", "uri", req.URI, "answer_bytes", len(answer.Text))
		return nil, nil
	}
	edits := regionEdits(p.rw.region, text, p.start)
	if len(edits) == 0 {
		return nil, nil
	}
	return []nesagent.Suggestion{{Edits: edits}}, nil
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
	Stream      bool          `json:"stream"`
}

type chatResponse struct {
	Choices []struct {
		Message struct {
			Content json.RawMessage `json:"content"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Error json.RawMessage `json:"error"`
}

// complete sends the prompt and returns the first choice's text and finish reason.
func (e *httpCompleter) complete(ctx context.Context, p Prompt) (answer, finish string, err error) {
	body, err := json.Marshal(chatRequest{
		Model: e.cfg.Model,
		Messages: []chatMessage{
			{Role: "system", Content: p.System},
			{Role: "user", Content: p.User},
		},
		Temperature: 0,
		MaxTokens:   p.MaxTokens,
	})
	if err != nil {
		return "", "", fmt.Errorf("model: %w", err)
	}
	rctx, cancel := context.WithTimeout(ctx, e.cfg.Timeout)
	defer cancel()
	hr, err := http.NewRequestWithContext(rctx, http.MethodPost, e.endpoint, bytes.NewReader(body))
	if err != nil {
		return "", "", fmt.Errorf("model: %w", err)
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json")
	if e.cfg.APIKey != "" {
		hr.Header.Set("Authorization", "Bearer "+e.cfg.APIKey)
	}
	failed := func(err error) error {
		switch {
		case ctx.Err() != nil:
			return fmt.Errorf("model: request to %s abandoned: %w", e.shown, context.Cause(ctx))
		case errors.Is(rctx.Err(), context.DeadlineExceeded):
			return fmt.Errorf("model: no answer from %s within %s: %w", e.shown, e.cfg.Timeout, context.DeadlineExceeded)
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is said once
		}
		return fmt.Errorf("model: request to %s: %w", e.shown, err)
	}
	resp, err := e.cfg.HTTPClient.Do(hr)
	if err != nil {
		return "", "", failed(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes+1))
	if err != nil {
		return "", "", failed(err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return "", "", fmt.Errorf("model: %s answered %s: %s", e.shown, resp.Status, errorText(data))
	}
	if len(data) > maxAnswerBytes {
		return "", "", fmt.Errorf("model: %s answered more than %d bytes", e.shown, maxAnswerBytes)
	}
	var cr chatResponse
	if err := json.Unmarshal(data, &cr); err != nil {
		return "", "", fmt.Errorf("model: %s answered a malformed body (%v): %s", e.shown, err, preview(data))
	}
	if len(cr.Choices) == 0 {
		if len(cr.Error) > 0 && string(cr.Error) != "null" {
			return "", "", fmt.Errorf("model: %s answered an error: %s", e.shown, errorText(data))
		}
		return "", "", fmt.Errorf("model: %s answered no choices: %s", e.shown, preview(data))
	}
	c := cr.Choices[0]
	text, err := contentText(c.Message.Content)
	if err != nil {
		return "", "", fmt.Errorf("model: %s answered a malformed message content (%v): %s", e.shown, err, preview(c.Message.Content))
	}
	return text, c.FinishReason, nil
}

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
	}
	if json.Unmarshal(data, &v) == nil {
		var inner struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(v.Error, &inner) == nil && inner.Message != "":
			return inner.Message
		case json.Unmarshal(v.Error, &s) == nil && s != "":
			return s
		case v.Message != "":
			return v.Message
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
