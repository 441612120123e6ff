package model

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testutil"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent"
)

// ollamaChatFake is Ollama for the chat format: its OpenAI layer at /v1/chat/completions (answers
// with its fingerprint) and its own /api/chat, which answer the region with add(3) finished as
// add(3, 4); /api/chat answers 404 while gone is set.
func ollamaChatFake(t *testing.T, gone *atomic.Bool) *fake {
	return newFake(t, func(w http.ResponseWriter, r *http.Request, req chatRequest) {
		if len(req.Messages) != 2 {
			http.Error(w, "want a system and a user message", http.StatusBadRequest)
			return
		}
		answer := marked(strings.Replace(regionOf(t, req.Messages[1].Content), "add(3)", "add(3, 4)", 1))
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1/chat/completions":
			json.NewEncoder(w).Encode(map[string]any{
				"id": "x", "object": "chat.completion", "system_fingerprint": "fp_ollama",
				"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": answer}}},
			})
		case "/api/chat":
			if gone != nil && gone.Load() {
				http.NotFound(w, r)
				return
			}
			json.NewEncoder(w).Encode(map[string]any{"model": "m", "message": map[string]any{"role": "assistant", "content": answer}, "done": true, "done_reason": "stop"})
		default:
			http.NotFound(w, r)
		}
	})
}

// TestOllamaTakesChatAtItsOwnEndpoint: the chat format's first prompt goes to Ollama's OpenAI
// layer, whose answer (read as any) says it is Ollama's; the next go to Ollama's own /api/chat,
// with the same messages and --model-context as num_ctx among its options, which the OpenAI layer
// has no field for. With --model-server ollama the first goes there too; a 404 from /api/chat
// sends the next back to /v1/chat/completions.
func TestOllamaTakesChatAtItsOwnEndpoint(t *testing.T) {
	cur := strings.Index(goText, "add(3") + len("add(3")
	req := nesagent.Request{URI: "file:///w/main.go", Root: "/w", Text: goText, Cursor: cur}
	want := strings.Replace(goText, "add(3)", "add(3, 4)", 1)
	suggest := func(e *engine) error {
		t.Helper()
		sugs, err := e.Suggest(context.Background(), req)
		if err != nil {
			return err
		}
		if len(sugs) != 1 || apply(t, goText, sugs[0].Edits) != want {
			t.Errorf("suggestions %+v; want add(3) finished", sugs)
		}
		return nil
	}
	paths := func(f *fake) string {
		f.mu.Lock()
		defer f.mu.Unlock()
		var out []string
		for _, s := range f.reqs {
			out = append(out, s.Method+" "+s.Path)
		}
		return strings.Join(out, ",")
	}

	var gone atomic.Bool
	srv := ollamaChatFake(t, &gone)
	var log testutil.SyncBuffer
	e := newEngine(t, Config{URL: srv.URL, Model: "qwen2.5-coder:7b", Format: "chat", ContextTokens: 8192, Log: newTextLogger(&log)})
	for range 2 {
		if err := suggest(e); err != nil {
			t.Fatal(err)
		}
	}
	if got := paths(srv); got != "POST /v1/chat/completions,POST /api/chat" {
		t.Errorf("requests %s; want the OpenAI layer's first, then Ollama's own", got)
	}
	if !strings.Contains(log.String(), "the server is Ollama (its /v1/chat/completions answers as Ollama's") {
		t.Errorf("the log does not say how it knew Ollama:\n%s", log.String())
	}
	s := srv.last(t)
	opts, _ := s.Raw["options"].(map[string]any)
	if opts["num_ctx"] != 8192.0 || opts["temperature"] != 0.0 || opts["num_predict"] == nil || s.Raw["stream"] != false {
		t.Errorf("/api/chat options %v, stream %v: want num_ctx 8192, temperature 0, num_predict, no stream", opts, s.Raw["stream"])
	}
	if _, ok := s.Raw["max_tokens"]; ok {
		t.Errorf("/api/chat got max_tokens, which it does not read: %v", s.Raw)
	}
	first := srv.reqs[0].Body.Messages
	if m := s.Body.Messages; len(m) != 2 || m[0] != first[0] || m[1] != first[1] {
		t.Errorf("/api/chat got other messages than the OpenAI layer did")
	}

	// Gone: the 404 is the request's error, and the next prompt goes to the OpenAI layer again.
	gone.Store(true)
	if err := suggest(e); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("a 404 from /api/chat: %v", err)
	}
	gone.Store(false)
	if err := suggest(e); err != nil {
		t.Fatal(err)
	}
	if got := paths(srv); !strings.HasSuffix(got, "POST /api/chat,POST /v1/chat/completions") {
		t.Errorf("after the 404: requests %s", got)
	}

	// Said by the user: the first goes to /api/chat, nothing asked.
	srv2 := ollamaChatFake(t, nil)
	if err := suggest(newEngine(t, Config{URL: srv2.URL + "/v1", Model: "qwen2.5-coder:7b", Format: "chat", Server: "ollama"})); err != nil {
		t.Fatal(err)
	}
	if got := paths(srv2); got != "POST /api/chat" {
		t.Errorf("--model-server ollama: requests %s", got)
	}
	if opts, _ := srv2.last(t).Raw["options"].(map[string]any); opts["num_ctx"] != nil {
		t.Errorf("no --model-context: options %v; want Ollama's own context", opts)
	}
}
