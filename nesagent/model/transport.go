package model

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// httpCompleter reaches a model's server over HTTP: chat completions for a chat prompt, raw
// completions for a raw one (OpenAI's /v1/completions, or Ollama's own /api/generate with raw
// set, since Ollama's /v1/completions would wrap the prompt in the model's chat template).
type httpCompleter struct {
	cfg Config
	// chat and completions are the OpenAI-style endpoints; generate is Ollama's; version is
	// where Ollama says its version; shown is the server for messages, without a password.
	chat, completions, generate, version string
	shown                                string

	once   sync.Once
	ollama bool
}

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
	h := &httpCompleter{cfg: cfg}
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
	h.version = endpoint(path+"/api/version", false)
	v := *u
	v.RawQuery = ""
	h.shown = v.Redacted()
	switch strings.ToLower(cfg.Server) {
	case "ollama":
		h.once.Do(func() { h.ollama = true })
		cfg.Log.Info("model: the server is Ollama (--model-server ollama): raw prompts go to /api/generate")
	case "openai":
		h.once.Do(func() {})
		cfg.Log.Info("model: the server is OpenAI-compatible (--model-server openai): raw prompts go to /v1/completions")
	}
	return h
}

// isOllama asks the server once whether it is Ollama: only Ollama answers GET /api/version with
// {"version": …}. The answer is logged.
func (h *httpCompleter) isOllama(ctx context.Context) bool {
	h.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.version, nil)
		if err == nil {
			if h.cfg.APIKey != "" {
				req.Header.Set("Authorization", "Bearer "+h.cfg.APIKey)
			}
			var resp *http.Response
			if resp, err = h.cfg.HTTPClient.Do(req); err == nil {
				var v struct {
					Version string `json:"version"`
				}
				data, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
				resp.Body.Close()
				h.ollama = resp.StatusCode == http.StatusOK && json.Unmarshal(data, &v) == nil && v.Version != ""
				if h.ollama {
					h.cfg.Log.Info("model: the server is Ollama "+v.Version+" (it answers /api/version): raw prompts go to /api/generate with raw set", "server", h.shown)
					return
				}
			}
		}
		h.cfg.Log.Info("model: the server is OpenAI-compatible (no Ollama at /api/version): raw prompts go to /v1/completions", "server", h.shown)
	})
	return h.ollama
}

// Complete sends the prompt and returns the answer's text.
func (h *httpCompleter) Complete(ctx context.Context, p Prompt) (Answer, error) {
	began := time.Now()
	var text, finish, endpoint string
	var err error
	switch {
	case p.Raw == "":
		endpoint = h.chat
		var msgs []chatMessage
		if p.System != "" {
			msgs = append(msgs, chatMessage{Role: "system", Content: p.System})
		}
		msgs = append(msgs, chatMessage{Role: "user", Content: p.User})
		text, finish, err = h.post(ctx, endpoint, chatRequest{
			Model: h.cfg.Model, Messages: msgs, Temperature: 0, MaxTokens: p.MaxTokens, Stop: p.Stop,
		}, readChat)
	case h.isOllama(ctx):
		endpoint = h.generate
		text, finish, err = h.post(ctx, endpoint, generateRequest{
			Model: h.cfg.Model, Prompt: p.Raw, Raw: true, Stream: false,
			Options: generateOptions{NumPredict: p.MaxTokens, Temperature: 0, Stop: p.Stop, NumCtx: h.cfg.ContextTokens},
		}, readGenerate)
	default:
		endpoint = h.completions
		text, finish, err = h.post(ctx, endpoint, completionRequest{
			Model: h.cfg.Model, Prompt: p.Raw, MaxTokens: p.MaxTokens, Temperature: 0, Stop: p.Stop,
		}, readCompletion)
	}
	if err != nil {
		return Answer{}, err
	}
	h.cfg.Log.Debug("model: answer", "uri", p.URI, "endpoint", endpoint, "prompt_bytes", len(p.System)+len(p.User)+len(p.Raw), "answer_bytes", len(text), "took", time.Since(began), "finish_reason", finish)
	return Answer{Text: text, Cut: finish == "length"}, nil
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
}

type completionRequest struct {
	Model       string   `json:"model"`
	Prompt      string   `json:"prompt"`
	MaxTokens   int      `json:"max_tokens"`
	Temperature float64  `json:"temperature"`
	Stop        []string `json:"stop,omitempty"`
	Stream      bool     `json:"stream"`
}

type generateRequest struct {
	Model   string          `json:"model"`
	Prompt  string          `json:"prompt"`
	Raw     bool            `json:"raw"`
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
type reader func(data []byte) (text, finish string, err error)

func readChat(data []byte) (string, string, error) {
	var r struct {
		Choices []struct {
			Message struct {
				Content json.RawMessage `json:"content"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Error json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return "", "", fmt.Errorf("a malformed body (%v): %s", err, preview(data))
	}
	if len(r.Choices) == 0 {
		return "", "", noChoices(r.Error, data)
	}
	text, err := contentText(r.Choices[0].Message.Content)
	if err != nil {
		return "", "", fmt.Errorf("a malformed message content (%v): %s", err, preview(r.Choices[0].Message.Content))
	}
	return text, r.Choices[0].FinishReason, nil
}

func readCompletion(data []byte) (string, string, error) {
	var r struct {
		Choices []struct {
			Text         *string `json:"text"`
			FinishReason string  `json:"finish_reason"`
		} `json:"choices"`
		Error json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return "", "", fmt.Errorf("a malformed body (%v): %s", err, preview(data))
	}
	if len(r.Choices) == 0 {
		return "", "", noChoices(r.Error, data)
	}
	if r.Choices[0].Text == nil {
		return "", "", fmt.Errorf("a completion without text: %s", preview(data))
	}
	return *r.Choices[0].Text, r.Choices[0].FinishReason, nil
}

func readGenerate(data []byte) (string, string, error) {
	var r struct {
		Response   *string `json:"response"`
		DoneReason string  `json:"done_reason"`
		Error      string  `json:"error"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return "", "", fmt.Errorf("a malformed body (%v): %s", err, preview(data))
	}
	if r.Response == nil {
		if r.Error != "" {
			return "", "", fmt.Errorf("an error: %s", r.Error)
		}
		return "", "", fmt.Errorf("no response: %s", preview(data))
	}
	return *r.Response, r.DoneReason, nil
}

func noChoices(errField json.RawMessage, data []byte) error {
	if len(errField) > 0 && string(errField) != "null" {
		return fmt.Errorf("an error: %s", errorText(data))
	}
	return fmt.Errorf("no choices: %s", preview(data))
}

// post sends body to endpoint and reads the answer with read.
func (h *httpCompleter) post(ctx context.Context, endpoint string, body any, read reader) (text, finish string, err error) {
	// Prompts are full of "<" and ">" (markers, code): without HTML escaping the body is smaller
	// and quicker to write.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(body); err != nil {
		return "", "", fmt.Errorf("model: %w", err)
	}
	data := buf.Bytes()
	rctx, cancel := context.WithTimeout(ctx, h.cfg.Timeout)
	defer cancel()
	hr, err := http.NewRequestWithContext(rctx, http.MethodPost, endpoint, bytes.NewReader(data))
	if err != nil {
		return "", "", fmt.Errorf("model: %w", err)
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json")
	if h.cfg.APIKey != "" {
		hr.Header.Set("Authorization", "Bearer "+h.cfg.APIKey)
	}
	shown := redacted(endpoint)
	failed := func(err error) error {
		switch {
		case ctx.Err() != nil:
			return fmt.Errorf("model: request to %s abandoned: %w", shown, context.Cause(ctx))
		case errors.Is(rctx.Err(), context.DeadlineExceeded):
			return fmt.Errorf("model: no answer from %s within %s: %w", shown, h.cfg.Timeout, context.DeadlineExceeded)
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is said once
		}
		return fmt.Errorf("model: request to %s: %w", shown, err)
	}
	resp, err := h.cfg.HTTPClient.Do(hr)
	if err != nil {
		return "", "", failed(err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes+1))
	if err != nil {
		return "", "", failed(err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return "", "", fmt.Errorf("model: %s answered %s: %s", shown, resp.Status, errorText(answer))
	}
	if len(answer) > maxAnswerBytes {
		return "", "", fmt.Errorf("model: %s answered more than %d bytes", shown, maxAnswerBytes)
	}
	text, finish, err = read(answer)
	if err != nil {
		return "", "", fmt.Errorf("model: %s answered %w", shown, err)
	}
	return text, finish, nil
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
