package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/andybalholm/brotli"
)

// The hosted services (Mistral's Codestral, Inception's Mercury, Sweep's next-edit API) and the
// fill-in-the-middle of Ollama and llama-server, faked as each service takes its requests: each fake checks the
// path, the key and the body as the service reads them (a problem fails the test and is answered
// 400), records the body it took, and answers in the service's own shape. They are behaviours of
// fakeModel (model_server_test.go), which records every request and can be set to fail.

// behaviour is how a fake answers a request (fakeModel.set).
type behaviour = func(w http.ResponseWriter, r *http.Request, body []byte)

// taken records the bodies of the requests a fake took as valid (decompressed), for the test to
// check what the agent sent.
type taken struct {
	mu     sync.Mutex
	bodies [][]byte
}

func (k *taken) add(body []byte) {
	k.mu.Lock()
	k.bodies = append(k.bodies, body)
	k.mu.Unlock()
}

// last decodes the last body taken into v, and fails the test when there is none.
func (k *taken) last(t *testing.T, v any) {
	t.Helper()
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.bodies) == 0 {
		t.Fatal("the fake took no request")
	}
	if err := json.Unmarshal(k.bodies[len(k.bodies)-1], v); err != nil {
		t.Fatalf("the last body taken: %v", err)
	}
}

// hostedCheck checks what every hosted service checks: a POST to path, with the test's key as a
// Bearer token and a JSON body. It says what is wrong, or "".
func hostedCheck(r *http.Request, path string) string {
	switch {
	case r.Method != http.MethodPost || r.URL.Path != path:
		return fmt.Sprintf("%s %s, want POST %s", r.Method, r.URL.Path, path)
	case r.Header.Get("Authorization") != "Bearer "+testKey:
		return fmt.Sprintf("Authorization %q, want the test's key as a Bearer token", r.Header.Get("Authorization"))
	case !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json"):
		return fmt.Sprintf("Content-Type %q", r.Header.Get("Content-Type"))
	}
	return ""
}

// refuse fails the test with what is wrong with the request, and answers it 400 as a service does.
func refuse(t *testing.T, w http.ResponseWriter, r *http.Request, problem string) {
	t.Errorf("%s %s: %s", r.Method, r.URL.Path, problem)
	msg, _ := json.Marshal(map[string]string{"message": problem})
	http.Error(w, string(msg), http.StatusBadRequest)
}

// fimRequest is the body of a FIM request, hosted (Codestral's {model, prompt, suffix,
// max_tokens}) or Ollama's /api/generate (raw must then be absent or false: with raw set, Ollama
// does not apply the model's FIM template and the suffix is lost).
type fimRequest struct {
	Model     string  `json:"model"`
	Prompt    *string `json:"prompt"`
	Suffix    *string `json:"suffix"`
	MaxTokens int     `json:"max_tokens"`
	Raw       *bool   `json:"raw"`
}

// completeFo is the code model's completion: "o()" after a prompt that ends with "fo" (the call
// being typed), nothing after any other.
func completeFo(prompt string) string {
	if strings.HasSuffix(prompt, "fo") {
		return "o()"
	}
	return ""
}

// codestralServing is Mistral's FIM endpoint (POST /v1/fim/completions): it checks the key and
// the body, and answers the code model's completion (completeFo) as Mistral does, in a chat-style
// choice's message.content.
func codestralServing(t *testing.T, k *taken) behaviour {
	return func(w http.ResponseWriter, r *http.Request, body []byte) {
		if p := hostedCheck(r, "/v1/fim/completions"); p != "" {
			refuse(t, w, r, p)
			return
		}
		var req fimRequest
		if err := json.Unmarshal(body, &req); err != nil || req.Model == "" || req.Prompt == nil || req.Suffix == nil || req.MaxTokens <= 0 {
			refuse(t, w, r, fmt.Sprintf("a body without model, prompt, suffix and max_tokens (%v): %.300s", err, body))
			return
		}
		k.add(body)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": "cmpl-1", "object": "chat.completion", "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": completeFo(*req.Prompt)}}},
		})
	}
}

// ollamaFIMServing is Ollama: GET /api/version says its version, POST /api/generate takes a FIM
// request (a suffix, raw absent or false) and answers the code model's completion (completeFo).
// Anything else is not expected of the agent.
func ollamaFIMServing(t *testing.T, k *taken) behaviour {
	return func(w http.ResponseWriter, r *http.Request, body []byte) {
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/api/version":
			_, _ = io.WriteString(w, `{"version":"0.12.3"}`)
			return
		case r.Method != http.MethodPost || r.URL.Path != "/api/generate":
			refuse(t, w, r, "not a request a FIM completion makes of Ollama")
			return
		}
		var req fimRequest
		switch err := json.Unmarshal(body, &req); {
		case err != nil || req.Model == "" || req.Prompt == nil:
			refuse(t, w, r, fmt.Sprintf("a body without model and prompt (%v): %.300s", err, body))
			return
		case req.Suffix == nil:
			refuse(t, w, r, "no suffix: Ollama would complete the prompt, not fill in the middle")
			return
		case req.Raw != nil && *req.Raw:
			refuse(t, w, r, "raw set: Ollama would not apply the model's FIM template")
			return
		}
		k.add(body)
		_ = json.NewEncoder(w).Encode(map[string]any{"model": req.Model, "response": completeFo(*req.Prompt), "done": true, "done_reason": "stop"})
	}
}

// The markers of Mercury's prompt.
const (
	mercuryEdit    = "<|code_to_edit|>\n"
	mercuryEditEnd = "<|/code_to_edit|>"
	mercuryCursor  = "<|cursor|>"
)

// mercuryRequest is the body of Mercury's next-edit endpoint.
type mercuryRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
	MaxTokens int `json:"max_tokens"`
}

// mercuryServing is Inception's next-edit endpoint (POST /v1/edit/completions, model
// mercury-edit): it checks the key and that the body is one user message with the prompt's three
// sections and the cursor inside the region to edit, and answers the region with the rewrites
// made, in a code fence, as Mercury does; "None" when they change nothing.
func mercuryServing(t *testing.T, k *taken, rewrites ...string) behaviour {
	return func(w http.ResponseWriter, r *http.Request, body []byte) {
		if p := hostedCheck(r, "/v1/edit/completions"); p != "" {
			refuse(t, w, r, p)
			return
		}
		var req mercuryRequest
		if err := json.Unmarshal(body, &req); err != nil || req.Model != "mercury-edit" || len(req.Messages) != 1 || req.Messages[0].Role != "user" {
			refuse(t, w, r, fmt.Sprintf("not one user message for mercury-edit (%v): %.300s", err, body))
			return
		}
		user := req.Messages[0].Content
		for _, section := range []string{"<|recently_viewed_code_snippets|>", "<|/recently_viewed_code_snippets|>", "<|current_file_content|>\ncurrent_file_path: ", "<|/current_file_content|>", "<|edit_diff_history|>", "<|/edit_diff_history|>"} {
			if !strings.Contains(user, section) {
				refuse(t, w, r, fmt.Sprintf("the prompt lacks %q:\n%s", section, user))
				return
			}
		}
		region, ok := between(user, mercuryEdit, mercuryEditEnd)
		if !ok || strings.Count(region, mercuryCursor) != 1 || strings.Count(user, mercuryCursor) != 1 {
			refuse(t, w, r, "no region to edit with the cursor in it, once:\n"+user)
			return
		}
		k.add(body)
		region = strings.Replace(region, mercuryCursor, "", 1)
		next := strings.NewReplacer(rewrites...).Replace(region)
		content := "```\n" + next + "```"
		if next == region {
			content = "None"
		}
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": "edit-1", "object": "chat.completion", "model": "mercury-edit",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": content}}},
		})
	}
}

// sweepRequest is the part of Sweep's request the fake reads.
type sweepRequest struct {
	FilePath       string  `json:"file_path"`
	FileContents   string  `json:"file_contents"`
	Original       *string `json:"original_file_contents"`
	CursorPosition int     `json:"cursor_position"`
	UseBytes       bool    `json:"use_bytes"`
	RecentChanges  *string `json:"recent_changes"`
	FileChunks     []any   `json:"file_chunks"`
	UserActions    []any   `json:"recent_user_actions"`
	Diagnostics    []any   `json:"editor_diagnostics"`
}

// sweepServing is Sweep's next-edit endpoint (POST /backend/next_edit_autocomplete): it requires
// the body compressed by brotli (Content-Encoding: br), decodes it, checks the fields its clients
// send, and answers, for each pair of rewrites (old, new) whose old is in file_contents, the
// replacement of its first occurrence: {autocomplete_id, start_index, end_index, completion} in
// byte offsets. With ndjson each is a line of its own; otherwise the one object (an empty
// completion at the cursor when there is none).
func sweepServing(t *testing.T, k *taken, ndjson bool, rewrites ...string) behaviour {
	return func(w http.ResponseWriter, r *http.Request, body []byte) {
		if p := hostedCheck(r, "/backend/next_edit_autocomplete"); p != "" {
			refuse(t, w, r, p)
			return
		}
		if r.Header.Get("Content-Encoding") != "br" {
			refuse(t, w, r, fmt.Sprintf("Content-Encoding %q, want br", r.Header.Get("Content-Encoding")))
			return
		}
		plain, err := io.ReadAll(brotli.NewReader(bytes.NewReader(body)))
		if err != nil {
			refuse(t, w, r, fmt.Sprintf("a body brotli does not decode: %v", err))
			return
		}
		var req sweepRequest
		if err := json.Unmarshal(plain, &req); err != nil || req.FilePath == "" || req.Original == nil || req.RecentChanges == nil || !req.UseBytes || req.FileChunks == nil || req.UserActions == nil || req.Diagnostics == nil {
			refuse(t, w, r, fmt.Sprintf("not the request Sweep's clients send (%v): %.300s", err, plain))
			return
		}
		if req.CursorPosition < 0 || req.CursorPosition > len(req.FileContents) {
			refuse(t, w, r, fmt.Sprintf("cursor_position %d in a file of %d bytes", req.CursorPosition, len(req.FileContents)))
			return
		}
		k.add(plain)
		var answers []map[string]any
		for i := 0; i+1 < len(rewrites); i += 2 {
			if at := strings.Index(req.FileContents, rewrites[i]); at >= 0 {
				answers = append(answers, map[string]any{"autocomplete_id": fmt.Sprintf("ac-%d", len(answers)+1), "start_index": at, "end_index": at + len(rewrites[i]), "completion": rewrites[i+1]})
			}
		}
		if len(answers) == 0 {
			answers = append(answers, map[string]any{"autocomplete_id": "ac-0", "start_index": req.CursorPosition, "end_index": req.CursorPosition, "completion": ""})
		}
		if !ndjson {
			_ = json.NewEncoder(w).Encode(answers[0])
			return
		}
		w.Header().Set("Content-Type", "application/x-ndjson")
		enc := json.NewEncoder(w)
		for _, a := range answers {
			_ = enc.Encode(a)
		}
	}
}

// infillRequest is the part of llama-server's /infill request the fake reads.
type infillRequest struct {
	InputPrefix *string `json:"input_prefix"`
	InputSuffix *string `json:"input_suffix"`
	Prompt      *string `json:"prompt"`
	NPredict    int     `json:"n_predict"`
}

// llamaInfillServing is llama-server: no Ollama at /api/version, its settings at GET /props, and
// POST /infill taking the lines above the cursor's (input_prefix), the cursor's line up to the
// cursor (prompt) and the text after it (input_suffix), answering the code model's completion
// (completeFo) in content.
func llamaInfillServing(t *testing.T, k *taken) behaviour {
	return func(w http.ResponseWriter, r *http.Request, body []byte) {
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/api/version":
			http.NotFound(w, r)
			return
		case r.Method == http.MethodGet && r.URL.Path == "/props":
			_, _ = io.WriteString(w, `{"default_generation_settings":{"n_ctx":4096},"total_slots":1,"build_info":"b6000"}`)
			return
		case r.Method != http.MethodPost || r.URL.Path != "/infill":
			refuse(t, w, r, "not a request a FIM completion makes of llama-server")
			return
		}
		var req infillRequest
		if err := json.Unmarshal(body, &req); err != nil || req.InputPrefix == nil || req.InputSuffix == nil || req.Prompt == nil || req.NPredict <= 0 {
			refuse(t, w, r, fmt.Sprintf("not /infill's input_prefix, prompt, input_suffix and n_predict (%v): %.300s", err, body))
			return
		}
		k.add(body)
		_ = json.NewEncoder(w).Encode(map[string]any{"content": completeFo(*req.InputPrefix + *req.Prompt), "stop": true, "stop_type": "eos"})
	}
}
