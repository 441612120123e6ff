package e2e

import (
	"encoding/json"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// TestBinaryModelAgent: the bridge runs `acp-lsp-bridge agent --model-url ... --model ...` as its
// agent, which asks a (local, fake) OpenAI-compatible server and turns its rewrite of the region
// into the edit the editor shows. The request carries the --max-tokens the user set.
func TestBinaryModelAgent(t *testing.T) {
	bridge, _ := binaries(t)
	var mu sync.Mutex
	var prompts []string
	var auth string
	var maxTokens []int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model     string `json:"model"`
			MaxTokens int    `json:"max_tokens"`
			Messages  []struct {
				Content string `json:"content"`
			} `json:"messages"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		user := req.Messages[len(req.Messages)-1].Content
		mu.Lock()
		prompts = append(prompts, req.Model+"\n"+user)
		auth = r.Header.Get("Authorization")
		maxTokens = append(maxTokens, req.MaxTokens)
		mu.Unlock()
		// Rewrite the region: the call being typed is completed.
		const start, end, cursor = "<|editable_region_start|>\n", "<|editable_region_end|>", "<|user_cursor_is_here|>"
		region := user[strings.LastIndex(user, start)+len(start) : strings.LastIndex(user, end)]
		region = strings.ReplaceAll(region, cursor, "")
		region = strings.Replace(region, "𐐀 = fo\n", "𐐀 = foo(日本)\n", 1)
		answer := start + region + end
		_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": answer}}}})
	}))
	defer srv.Close()
	t.Setenv("FAKE_MODEL_KEY", "sekret")
	// --no-prefetch: one prompt is wanted, not the next suggestion's prefetched after it.
	b := startBridge(t, "--", bridge, "agent", "--model-url", srv.URL, "--model", "fake-coder", "--api-key-env", "FAKE_MODEL_KEY", "--max-tokens", "200", "--no-prefetch")
	b.InitializeWith(fakeeditor.InitParams{Encodings: []string{"utf-16"}})
	b.waitMessage("acp-lsp-bridge-model is ready") // requests before it answer empty
	b.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": "file:///m.go", "languageId": "go", "version": 1, "text": "package p\n\nx := 𐐀 = fo\n",
	}})
	var res struct {
		Items []struct {
			InsertText string `json:"insertText"`
			Range      struct {
				Start struct {
					Character int `json:"character"`
				} `json:"start"`
			} `json:"range"`
		} `json:"items"`
	}
	// utf-16: "x := 𐐀 = fo" is 13 units long (𐐀 counts two).
	if err := b.Call("textDocument/inlineCompletion", map[string]any{
		"textDocument": map[string]any{"uri": "file:///m.go"}, "position": map[string]any{"line": 2, "character": 13},
	}, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Items) != 1 || !strings.HasSuffix("x := 𐐀 = foo(日本)", res.Items[0].InsertText) || res.Items[0].InsertText == "" {
		t.Fatalf("items %+v", res.Items)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(prompts) != 1 || !strings.HasPrefix(prompts[0], "fake-coder\n") || !strings.Contains(prompts[0], "x := 𐐀 = fo<|user_cursor_is_here|>") {
		t.Errorf("prompts %q", prompts)
	}
	if len(maxTokens) != 1 || maxTokens[0] != 200 {
		t.Errorf("max_tokens %v, want the 200 of --max-tokens", maxTokens)
	}
	if auth != "Bearer sekret" {
		t.Errorf("Authorization %q", auth)
	}
}
