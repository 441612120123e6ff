package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"
)

// TestBinaryFIMChunksComeFromWhatTheUserWorkedIn: through the real bridge and agent, the chunks
// of other files in /infill's input_extra come from the documents the user opened and visited,
// never from a file the bridge keeps from the agent (a .env opened in the editor), and stay in
// the order they came from one request to the next (the start of the prompt the server can
// reuse).
func TestBinaryFIMChunksComeFromWhatTheUserWorkedIn(t *testing.T) {
	var mu sync.Mutex
	var extras [][]map[string]string
	m := newFakeModel(t)
	m.set(func(w http.ResponseWriter, r *http.Request, body []byte) {
		switch r.URL.Path {
		case "/props":
			_, _ = w.Write([]byte(`{"default_generation_settings":{"n_ctx":4096}}`))
		case "/infill":
			var req struct {
				InputExtra []map[string]string `json:"input_extra"`
			}
			_ = json.Unmarshal(body, &req)
			mu.Lock()
			extras = append(extras, req.InputExtra)
			mu.Unlock()
			_ = json.NewEncoder(w).Encode(map[string]any{"content": "Total(items)", "stop_type": "eos", "timings": map[string]any{"prompt_n": 20, "cache_n": 0}})
		default:
			http.NotFound(w, r)
		}
	})
	dir := t.TempDir()
	files := map[string]string{
		"main.go":    "package shop\n\nfunc main() {\n\tt := \n}\n",
		"total.go":   "package shop\n\n// Total adds the prices.\nfunc Total(items []int) int {\n\treturn 0\n}\n",
		"receipt.go": "package shop\n\nfunc Receipt() string {\n\treturn \"receipt\"\n}\n",
		".env":       "STRIPE_KEY=sk_live_do_not_send\n",
		"notes.go":   "package shop\n\n// Notes: the receipts are kept a year.\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bridge, _ := binaries(t)
	// --no-prefetch: the requests are read in order, one per editor's request.
	b := startBridgeEnv(t, os.Environ(), "--", bridge, "agent", "--model-url", m.srv.URL, "--model", "qwen2.5-coder:1.5b", "--model-format", "fim", "--verbose", "--no-prefetch")
	b.InitializeWith(fakeeditor.InitParams{Root: fileURI(dir), Encodings: []string{"utf-16"}})
	b.waitMessage("acp-lsp-bridge-model is ready")
	open := func(name, lang string) string {
		u := fileURI(filepath.Join(dir, name))
		b.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": u, "languageId": lang, "version": 1, "text": files[name]}})
		return u
	}
	open(".env", "dotenv")
	totalURI := open("total.go", "go")
	// The user visits Total's body and saves the file there.
	b.Notify("textDocument/didSave", map[string]any{"textDocument": map[string]any{"uri": totalURI}})
	mainURI := open("main.go", "go")
	ask := func(uri string, line, col int) []fakeeditor.InlineItem {
		t.Helper()
		items, err := b.InlineTriggered(uri, fakeeditor.At(line, col), 1)
		if err != nil {
			t.Fatal(err)
		}
		return items
	}
	ask(totalURI, 4, 9) // a request in total.go: the place the user was
	items := ask(mainURI, 3, 6)
	if len(items) != 1 || items[0].InsertText != "Total(items)" && !strings.HasSuffix(items[0].InsertText, "Total(items)") {
		t.Fatalf("items %+v, want the completion at the cursor", items)
	}
	receiptURI := open("receipt.go", "go")
	ask(receiptURI, 3, 8)
	ask(mainURI, 3, 6)
	// A file the user only opens and saves, never edits nor asks about: the agent hears of the
	// save (it asks for document/didSave), and the file is among the chunks.
	notesURI := open("notes.go", "go")
	b.Notify("textDocument/didSave", map[string]any{"textDocument": map[string]any{"uri": notesURI}})
	ask(mainURI, 3, 6)
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		n := len(extras)
		mu.Unlock()
		if n >= 5 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(extras) < 5 {
		t.Fatalf("%d /infill requests, want 5", len(extras))
	}
	names := func(cs []map[string]string) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c["filename"])
			if strings.Contains(c["text"], "sk_live") || c["filename"] == ".env" {
				t.Errorf("a chunk of the file kept from the agent: %v", c)
			}
		}
		return out
	}
	second, fourth := names(extras[1]), names(extras[3])
	if strings.Join(second, " ") != "total.go" {
		t.Errorf("the request in main.go carries %v, want the chunk of total.go where the user was", second)
	}
	if len(fourth) < 2 || fourth[0] != "total.go" || fourth[len(fourth)-1] != "receipt.go" {
		t.Errorf("the later request carries %v, want total.go's chunk first (kept in its place) and receipt.go's after it", fourth)
	}
	if fifth := names(extras[4]); !slices.Contains(fifth, "notes.go") {
		t.Errorf("the request after notes.go was saved carries %v, want a chunk of it", fifth)
	}
	b.Shutdown()
}
