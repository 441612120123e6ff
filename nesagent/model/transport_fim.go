package model

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/andybalholm/brotli"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent"
)

// size is the prompt's size in bytes, 0 for none.
func (p *FIMPrompt) size() int {
	if p == nil {
		return 0
	}
	n := len(p.Prefix) + len(p.Line) + len(p.Suffix)
	for _, c := range p.Extra {
		n += len(c.Filename) + len(c.Text)
	}
	return n
}

// infillRequest is llama-server's /infill request as llama.vim sends it: the server writes the
// prompt with the model's own FIM tokens (and, for a model trained with them, the other files as
// a repository), reusing what it computed for the same start (cache_prompt), and ends the answer
// at a line indented less than n_indent or after t_max_predict_ms. Stream is never set: it is
// there to send "stream": false, the answer asked whole.
type infillRequest struct {
	InputPrefix   string     `json:"input_prefix"`
	InputSuffix   string     `json:"input_suffix"`
	InputExtra    []FIMChunk `json:"input_extra"`
	Prompt        string     `json:"prompt"`
	NPredict      int        `json:"n_predict"`
	NIndent       int        `json:"n_indent"`
	TopK          int        `json:"top_k,omitempty"`
	TopP          float64    `json:"top_p,omitempty"`
	Samplers      []string   `json:"samplers,omitempty"`
	Stream        bool       `json:"stream"`
	CachePrompt   bool       `json:"cache_prompt"`
	TMaxPromptMS  int        `json:"t_max_prompt_ms"`
	TMaxPredictMS int        `json:"t_max_predict_ms"`
	Stop          []string   `json:"stop,omitempty"`
}

// hostedFIMRequest is the hosted services' FIM request (Mistral's, Inception's). Stream is never
// set: it is there to send "stream": false, the answer asked whole.
type hostedFIMRequest struct {
	Model       string   `json:"model"`
	Prompt      string   `json:"prompt"`
	Suffix      string   `json:"suffix"`
	MaxTokens   int      `json:"max_tokens"`
	Temperature float64  `json:"temperature"`
	Stop        []string `json:"stop,omitempty"`
	Stream      bool     `json:"stream"`
}

// tMaxPredict is /infill's t_max_predict_ms: llama.vim's 1000 ms, within the agent's timeout.
func (h *httpCompleter) tMaxPredict() int {
	return int(min(time.Second, h.cfg.Timeout/2) / time.Millisecond)
}

// askFIM sends a FIM prompt where the server takes one: a hosted service's FIM endpoint,
// llama-server's /infill, Ollama's /api/generate with suffix, or else /v1/completions with the
// family's tokens written out.
func (h *httpCompleter) askFIM(ctx, dctx context.Context, p Prompt) (parsed, string, error) {
	f := p.FIM
	if f.Hosted != "" || h.hostedFIM {
		// No stop strings: the family's tokens are no text a service writes (Zed sends none
		// to Codestral); the answer is cut at them all the same (cleanFIM).
		r, err := h.post(ctx, dctx, h.fim, hostedFIMRequest{
			Model: h.cfg.Model, Prompt: f.Prefix + f.Line, Suffix: f.Suffix, MaxTokens: p.MaxTokens,
		}, readHostedFIM)
		return r, h.fim, err
	}
	switch h.serverKind(ctx, dctx, true) {
	case kindOllama:
		r, err := h.post(ctx, dctx, h.generate, generateRequest{
			Model: h.cfg.Model, Prompt: f.Prefix + f.Line, Suffix: f.Suffix,
			Options: h.ollamaOptions(p),
		}, readOllama)
		return r, h.generate, err
	case kindLlamaServer:
		extra := f.Extra
		if extra == nil {
			extra = []FIMChunk{}
		}
		req := infillRequest{
			InputPrefix: f.Prefix, InputSuffix: f.Suffix, InputExtra: extra, Prompt: f.Line,
			NPredict: p.MaxTokens, NIndent: f.Indent,
			CachePrompt: true, TMaxPromptMS: 500, TMaxPredictMS: h.tMaxPredict(), Stop: p.Stop,
		}
		if h.cfg.FIMSampling != "server" {
			// llama.vim's sampling, with llama-server's infill sampler, made for FIM.
			req.TopK, req.TopP, req.Samplers = 40, 0.9, []string{"top_k", "top_p", "infill"}
		}
		r, err := h.post(ctx, dctx, h.infill, req, readInfill)
		return r, h.infill, err
	}
	if f.Tokens == nil {
		why := "names no family the bridge knows"
		if f.Family != "" {
			why = fmt.Sprintf("is of the family %q, which the bridge does not know", f.Family)
		}
		return parsed{}, h.completions, &nesagent.BackendError{Reason: nesagent.ReasonBackendError, Err: fmt.Errorf(
			"model: %s is neither llama-server nor Ollama, which write the FIM prompt with the model's own tokens, and the model %q %s: name its tokens with --fim-tokens (%s)",
			h.shown, nesagent.CleanText(h.cfg.Model, 80), why, FIMTokenNames())}
	}
	r, err := h.post(ctx, dctx, h.completions, completionRequest{
		Model: h.cfg.Model, Prompt: f.Tokens.raw(f), MaxTokens: p.MaxTokens, Temperature: 0, Stop: p.Stop,
		CachePrompt: h.cachePrompt(),
	}, readCompletion)
	return r, h.completions, err
}

// readInfill reads llama-server's /infill answer: content, why it stopped (stop_type "limit", or
// stopped_limit, is the bound on tokens) and its timings.
func readInfill(data []byte) (parsed, error) {
	var r struct {
		Content      *string  `json:"content"`
		StopType     string   `json:"stop_type"`
		StoppedLimit bool     `json:"stopped_limit"`
		Timings      *Timings `json:"timings"`
		Error        json.RawMessage
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return parsed{}, fmt.Errorf("a malformed body (%v): %s", err, preview(data))
	}
	if r.Content == nil {
		if len(r.Error) > 0 {
			return parsed{}, fmt.Errorf("an error: %s", errorText(data))
		}
		return parsed{}, fmt.Errorf("no content: %s", preview(data))
	}
	finish := "stop"
	if r.StopType == "limit" || r.StoppedLimit {
		finish = "length"
	}
	return parsed{text: *r.Content, finish: finish, timings: r.Timings}, nil
}

// readHostedFIM reads a hosted FIM endpoint's answer: a chat-style choice (Mistral's
// message.content) or a completion-style one (text).
func readHostedFIM(data []byte) (parsed, error) {
	var r struct {
		Choices []struct {
			Text    *string `json:"text"`
			Message struct {
				Content json.RawMessage `json:"content"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Error json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return parsed{}, fmt.Errorf("a malformed body (%v): %s", err, preview(data))
	}
	if len(r.Choices) == 0 {
		return parsed{}, noChoices(r.Error, data)
	}
	c := r.Choices[0]
	if c.Text != nil {
		return parsed{text: *c.Text, finish: c.FinishReason}, nil
	}
	text, err := contentText(c.Message.Content)
	if err != nil {
		return parsed{}, fmt.Errorf("a malformed message content (%v): %s", err, preview(c.Message.Content))
	}
	return parsed{text: text, finish: c.FinishReason}, nil
}

// compressBrotli is data compressed by brotli, as Sweep's own clients compress their requests
// (quality 11, window 22: a request is sent once and is small).
func compressBrotli(data []byte) []byte {
	var buf bytes.Buffer
	w := brotli.NewWriterOptions(&buf, brotli.WriterOptions{Quality: 11, LGWin: 22})
	_, _ = w.Write(data)
	_ = w.Close()
	return buf.Bytes()
}

// readWhole takes the body as the answer's text, for the format to read (a hosted service's own
// answer, Sweep's).
func readWhole(data []byte) (parsed, error) {
	return parsed{text: string(data)}, nil
}

// bodySize is the size of a service's own request as JSON, 0 for none (for the debug log).
func bodySize(body any) int {
	if body == nil {
		return 0
	}
	data, _ := json.Marshal(body)
	return len(data)
}
