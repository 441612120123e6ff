package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
)

// The model agent's fill-in-the-middle format (--model-format fim) and the hosted next-edit
// services (mercury, sweep-api) in real editors: Neovim with the shipped plugin
// (testdata/nvim/plugin_model_ghost.lua) and Helix in a terminal. Each test asserts what the user
// ends with, the buffer and the saved file, and what the server received.

// ghostShown is what plugin_model_ghost.lua printed of the ghost text it took: the buffer before
// accepting, the cursor (1-based row, 0-based byte column) and the ghost text.
type ghostShown struct {
	Before string `json:"before"`
	Row    int    `json:"row"`
	Col    int    `json:"col"`
	Ghost  string `json:"ghost"`
}

// line is the cursor's line up to the cursor, before accepting.
func (g ghostShown) line() string {
	lines := strings.Split(g.Before, "\n")
	return lines[g.Row-1][:g.Col]
}

// accepted is the buffer with the ghost text inserted at the cursor, as saved (with the final
// line break Neovim writes).
func (g ghostShown) accepted() string {
	lines := strings.Split(g.Before, "\n")
	l := lines[g.Row-1]
	lines[g.Row-1] = l[:g.Col] + g.Ghost + l[g.Col:]
	return strings.Join(lines, "\n") + "\n"
}

// runModelGhost runs plugin_model_ghost.lua with the plugin set up with the model agent (agent:
// its arguments after acp-lsp-bridge, --verbose among them), typing typed at the end of line 9
// of main.go, then retry one character at a time while the server's answers bring no ghost text
// (each answer waited for at most wait). It checks that the ghost text was taken and the file
// saved holds it where the cursor was, and returns what was shown, the saved main.go and the
// bridge's log (with the agent's).
func runModelGhost(t *testing.T, agent []string, typed, retry string, wait time.Duration, env ...string) (shown ghostShown, saved, log string) {
	t.Helper()
	if agent != nil { // else the env's MODEL_SETUP says setup()'s model option
		cmd, err := json.Marshal(append([]string{"acp-lsp-bridge", "agent"}, agent...))
		if err != nil {
			t.Fatal(err)
		}
		env = append(env, "MODEL_AGENT="+string(cmd))
	}
	env = append(env, "MODEL_TYPE="+typed, "MODEL_RETRY="+retry, fmt.Sprintf("MODEL_WAIT=%d", wait.Milliseconds()))
	out, work := runNeovimPlugin(t, "plugin_model_ghost.lua", "ALL PASSED", env...)
	// The bridge's log where the plugin has it by default (stdpath('log')), in the state
	// directory runNeovimScript gives Neovim beside the workspace.
	logData, _ := os.ReadFile(filepath.Join(filepath.Dir(work), "xdg", "state", "nvim", "acp-lsp-bridge.log"))
	log = string(logData)
	defer func() {
		if t.Failed() {
			t.Logf("Neovim:\n%s\nthe agent's lines of the bridge's log:\n%s", out, agentLines(log))
		}
	}()
	wantSteps(t, out, "ghost text", "accept")
	i := strings.Index(out, "SHOWN {")
	if i < 0 {
		t.Fatalf("the script printed no SHOWN line")
	}
	rest := out[i+len("SHOWN "):]
	if err := json.Unmarshal([]byte(rest[:strings.IndexByte(rest+"\n", '\n')]), &shown); err != nil {
		t.Fatalf("the SHOWN line: %v", err)
	}
	if shown.Ghost == "" {
		t.Fatalf("empty ghost text taken")
	}
	data, err := os.ReadFile(filepath.Join(work, "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != shown.accepted() {
		t.Errorf("the saved main.go:\n%s\nwant it as before with the ghost text %q at %d:%d:\n%s", data, shown.Ghost, shown.Row, shown.Col, shown.accepted())
	}
	return shown, string(data), log
}

// infillExchange is one /infill request to llama-server and its answer, as the recording
// front saw them.
type infillExchange struct {
	Request struct {
		InputPrefix string `json:"input_prefix"`
		InputSuffix string `json:"input_suffix"`
		Prompt      string `json:"prompt"`
		InputExtra  []struct {
			Filename string `json:"filename"`
			Text     string `json:"text"`
		} `json:"input_extra"`
	}
	Status int
	Answer struct {
		Content string `json:"content"`
		Timings *struct {
			PromptN *int `json:"prompt_n"`
			CacheN  *int `json:"cache_n"`
		} `json:"timings"`
	}
}

// infillRecorder is a front for a model server that passes every request on and keeps the
// /infill exchanges whole.
type infillRecorder struct {
	srv *httptest.Server
	mu  sync.Mutex
	all []infillExchange
}

func recordInfill(t *testing.T, target string) *infillRecorder {
	rec := &infillRecorder{}
	rec.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		req, err := http.NewRequestWithContext(r.Context(), r.Method, target+r.URL.RequestURI(), bytes.NewReader(body))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		req.Header = r.Header.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			// The agent gave the request up (a key typed since): the server was told by the
			// cancelled context.
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		answer, err := io.ReadAll(resp.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		if r.URL.Path == "/infill" {
			var x infillExchange
			x.Status = resp.StatusCode
			if err := json.Unmarshal(body, &x.Request); err != nil {
				t.Errorf("an /infill request that is not JSON: %v: %.300s", err, body)
			}
			_ = json.Unmarshal(answer, &x.Answer)
			rec.mu.Lock()
			rec.all = append(rec.all, x)
			rec.mu.Unlock()
		}
		for k, v := range resp.Header {
			if k != "Content-Length" {
				w.Header()[k] = v
			}
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = w.Write(answer)
	}))
	t.Cleanup(rec.srv.Close)
	return rec
}

func (r *infillRecorder) exchanges() []infillExchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]infillExchange(nil), r.all...)
}

// TestNeovimPluginFIMRealLlamaServer: in real Neovim with the plugin, the model agent in the fim
// format (--model-format fim --fim-sampling server) against the real llama-server and its tiny
// random model, through a front that records the /infill exchanges. The user edits and saves
// util.go, then types in main.go: ghost text appears at the cursor, and <Tab> inserts exactly
// that text there (the buffer, then the saved file). The /infill request it came from carried
// the cursor's line as its prompt and a chunk of util.go in input_extra; the server answered
// with timings, and the agent's log has them (prompt_n, cache_n).
//
// The tiny model writes gibberish, which the quality gate keeps back (an answer cut at the bound
// on tokens, in its first line, is cut short): --no-gate shows it, as this test is of the way to
// /infill and back into the buffer. An answer with invalid UTF-8, or nothing left once cleaned,
// is still dropped: the user then types on, one character at a time, until ghost text comes.
func TestNeovimPluginFIMRealLlamaServer(t *testing.T) {
	skipOnWindows(t, "Neovim runs on Linux here")
	if os.Getenv("NVIM") == "" {
		skipWithoutPeer(t, `NVIM is not set; run eval "$(bash ../shared/tools/install-test-peers.sh)"`)
	}
	l := startLlamaServer(t)
	rec := recordInfill(t, l.URL)
	shown, _, log := runModelGhost(t, []string{
		"--model-url", rec.srv.URL, "--model", "tiny-qwen2", "--model-format", "fim", "--fim-sampling", "server",
		"--no-gate", "--max-tokens", "16", "--timeout", "30s", "--verbose",
	}, "(", "scale", 20*time.Second)

	// What the user typed on for, and why: the answers the agent dropped.
	for _, line := range strings.Split(agentLines(log), "\n") {
		if i := strings.Index(line, "model: answer dropped"); i >= 0 {
			t.Log(line[i:])
		}
	}
	t.Logf("the ghost text taken after %q: %q", shown.line(), shown.Ghost)
	all := rec.exchanges()
	if len(all) == 0 {
		t.Fatalf("llama-server got no /infill request")
	}
	// The exchange the ghost text came from: its prompt is the cursor's line, its answer starts
	// with the ghost text (the rest is what the agent cut: the line the bound on tokens cut, the
	// trailing spaces).
	var from *infillExchange
	for i := range all {
		x := &all[i]
		if x.Request.Prompt == shown.line() && strings.HasPrefix(strings.ReplaceAll(x.Answer.Content, "\r\n", "\n"), shown.Ghost) {
			from = x
		}
	}
	if from == nil {
		var got []string
		for _, x := range all {
			got = append(got, fmt.Sprintf("prompt %q → %d %q", x.Request.Prompt, x.Status, x.Answer.Content))
		}
		t.Fatalf("no /infill exchange has the prompt %q and an answer starting with the ghost text %q:\n%s", shown.line(), shown.Ghost, strings.Join(got, "\n"))
	}
	if !strings.HasSuffix(from.Request.InputPrefix, "func main() {\n") || !strings.HasPrefix(from.Request.InputSuffix, "\n\tprintln(scale(y, 2))\n}\n") {
		t.Errorf("the request's input_prefix ends %q and input_suffix starts %q", from.Request.InputPrefix[max(0, len(from.Request.InputPrefix)-40):], from.Request.InputSuffix[:min(40, len(from.Request.InputSuffix))])
	}
	util := false
	for _, c := range from.Request.InputExtra {
		util = util || c.Filename == "util.go" && strings.Contains(c.Text, "\treturn v * factor // the product\n")
	}
	if !util {
		t.Errorf("the request's input_extra has no chunk of util.go as saved: %+v", from.Request.InputExtra)
	}
	if from.Status != http.StatusOK || from.Answer.Timings == nil || from.Answer.Timings.PromptN == nil || from.Answer.Timings.CacheN == nil {
		t.Errorf("llama-server answered %d without timings (prompt_n, cache_n): %+v", from.Status, from.Answer)
	}
	if !strings.Contains(log, "model: the server is llama-server") {
		t.Errorf("the agent's log does not say it found llama-server")
	}
	timed := false
	for _, line := range strings.Split(agentLines(log), "\n") {
		timed = timed || strings.Contains(line, "endpoint="+rec.srv.URL+"/infill ") && strings.Contains(line, " prompt_n=") && strings.Contains(line, " cache_n=")
	}
	if !timed {
		t.Errorf("no line of the agent's log has an /infill answer's prompt_n and cache_n")
	}
}

// hostedKey is the API key the hosted services' fakes take.
const hostedKey = "hosted-test-4e1f0c2b9a7d"

// hostedFake is a hosted service's fake: handle answers a request that passed the checks of
// path and key; asked counts the requests whose region held the typed call.
type hostedFake struct {
	srv   *httptest.Server
	mu    sync.Mutex
	asked int
}

func (f *hostedFake) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.asked
}

func (f *hostedFake) hit() {
	f.mu.Lock()
	f.asked++
	f.mu.Unlock()
}

// newHostedFake serves path with handle after checking the method, the path and the key.
func newHostedFake(t *testing.T, path string, handle func(w http.ResponseWriter, r *http.Request, f *hostedFake)) *hostedFake {
	f := &hostedFake{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != path {
			t.Errorf("the service got %s %s, want POST %s", r.Method, r.URL.Path, path)
			http.NotFound(w, r)
			return
		}
		if got := r.Header.Get("Authorization"); got != "Bearer "+hostedKey {
			t.Errorf("the service got Authorization %q", got)
			http.Error(w, `{"error":"unauthorized"}`, http.StatusUnauthorized)
			return
		}
		handle(w, r, f)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// The typed call on line 9 of plugin_model_ghost.lua's main.go, and what the services make of it.
const (
	typedCall    = "\ty := add(3"
	finishedCall = "\ty := add(3, 4)"
)

// TestNeovimPluginMercury: in real Neovim with the plugin set up with its model option (the
// plugin writes the command: acp-lsp-bridge agent --model-url URL --model-format mercury), the
// model agent in the mercury format
// against a fake of Inception's service (its key in INCEPTION_API_KEY, the format's default):
// the request goes to /v1/edit/completions with the key, as one user message with the region to
// edit and the cursor marked; the answer, the region rewritten in a code fence, shows as ghost
// text that <Tab> takes, and the saved file holds the finished call.
func TestNeovimPluginMercury(t *testing.T) {
	skipOnWindows(t, "Neovim runs on Linux here")
	f := newHostedFake(t, "/v1/edit/completions", func(w http.ResponseWriter, r *http.Request, f *hostedFake) {
		var req struct {
			Model    string `json:"model"`
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) != 1 || req.Messages[0].Role != "user" || req.Model != "mercury-edit" {
			t.Errorf("the service got model %q, messages %+v (%v); want mercury-edit and one user message", req.Model, req.Messages, err)
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		prompt := req.Messages[0].Content
		for _, want := range []string{"<|recently_viewed_code_snippets|>", "<|recently_viewed_code_snippet|>\ncode_snippet_file_path: util.go\n", "<|current_file_content|>\ncurrent_file_path: main.go\n", "<|cursor|>", "<|edit_diff_history|>"} {
			if !strings.Contains(prompt, want) {
				t.Errorf("the prompt lacks %q:\n%s", want, prompt)
			}
		}
		region, ok := between(prompt, "<|code_to_edit|>\n", "<|/code_to_edit|>")
		if !ok {
			t.Errorf("no region to edit in the prompt:\n%s", prompt)
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		region = strings.Replace(region, "<|cursor|>", "", 1)
		content := "None"
		if strings.Contains(region, typedCall+"\n") {
			f.hit()
			content = "```\n" + strings.Replace(region, typedCall+"\n", finishedCall+"\n", 1) + "```"
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "cmpl-1", "object": "chat.completion", "model": "mercury-edit", "choices": []any{
			map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": content}},
		}})
	})
	// Set up as a user would, with setup()'s model option: the plugin writes the agent's command.
	setup := fmt.Sprintf(`{"url": %q, "format": "mercury", "args": ["--verbose"]}`, f.srv.URL)
	shown, saved, _ := runModelGhost(t, nil, "(3", "", 10*time.Second, "INCEPTION_API_KEY="+hostedKey, "MODEL_SETUP="+setup)
	wantHostedEdit(t, shown, saved, f.count())
}

// TestNeovimPluginSweepAPI: in real Neovim with the plugin, the model agent in the sweep-api
// format against a fake of Sweep's service (its key in SWEEP_AI_TOKEN, the format's default):
// the request goes to /backend/next_edit_autocomplete with the key, its JSON body compressed by
// brotli (Content-Encoding: br), the cursor a byte offset into file_contents (non-ASCII text
// before it); the answer replaces the cursor's whole line by byte offsets, shows as ghost text
// that <Tab> takes, and the saved file holds the finished call.
func TestNeovimPluginSweepAPI(t *testing.T) {
	skipOnWindows(t, "Neovim runs on Linux here")
	f := newHostedFake(t, "/backend/next_edit_autocomplete", func(w http.ResponseWriter, r *http.Request, f *hostedFake) {
		raw, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		if enc := r.Header.Get("Content-Encoding"); enc != "br" || json.Valid(raw) {
			t.Errorf("the body is not compressed by brotli: Content-Encoding %q, %d bytes", enc, len(raw))
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		var req struct {
			FilePath       string `json:"file_path"`
			FileContents   string `json:"file_contents"`
			CursorPosition int    `json:"cursor_position"`
			UseBytes       bool   `json:"use_bytes"`
			FileChunks     []struct {
				FilePath string `json:"file_path"`
			} `json:"file_chunks"`
		}
		if err := json.NewDecoder(brotli.NewReader(bytes.NewReader(raw))).Decode(&req); err != nil {
			t.Errorf("the body, decompressed, is not the request: %v", err)
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		at := req.CursorPosition
		if len(req.FileChunks) == 0 || req.FileChunks[0].FilePath != "util.go" {
			t.Errorf("the request's file_chunks %+v, want util.go's first", req.FileChunks)
		}
		if req.FilePath != "main.go" || !req.UseBytes || at < 0 || at > len(req.FileContents) {
			t.Errorf("the service got file_path %q, use_bytes %v, cursor_position %d in %d bytes", req.FilePath, req.UseBytes, at, len(req.FileContents))
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		answer := map[string]any{"autocomplete_id": "ac-none", "start_index": at, "end_index": at, "completion": ""}
		if strings.HasSuffix(req.FileContents[:at], "\n"+typedCall) {
			// The cursor's line, whole, by byte offsets.
			f.hit()
			start := strings.LastIndexByte(req.FileContents[:at], '\n') + 1
			end := at + strings.IndexByte(req.FileContents[at:]+"\n", '\n')
			answer = map[string]any{"autocomplete_id": "ac-1", "start_index": start, "end_index": end, "completion": finishedCall}
		}
		_ = json.NewEncoder(w).Encode(answer)
	})
	shown, saved, _ := runModelGhost(t, []string{"--model-url", f.srv.URL, "--model-format", "sweep-api", "--verbose"}, "(3", "", 10*time.Second, "SWEEP_AI_TOKEN="+hostedKey)
	wantHostedEdit(t, shown, saved, f.count())
}

// wantHostedEdit checks that the ghost text taken finished the typed call, and that the service
// saw it.
func wantHostedEdit(t *testing.T, shown ghostShown, saved string, asked int) {
	t.Helper()
	if shown.line() != typedCall || shown.Ghost != strings.TrimPrefix(finishedCall, typedCall) {
		t.Errorf("the ghost text %q after %q, want %q", shown.Ghost, shown.line(), strings.TrimPrefix(finishedCall, typedCall))
	}
	if !strings.Contains(saved, "\n"+finishedCall+"\n\tprintln(scale(y, 2))\n") {
		t.Errorf("the saved main.go does not hold the finished call:\n%s", saved)
	}
	if asked == 0 {
		t.Errorf("the service never saw the typed call")
	}
}

// TestHelixFIMCompletion runs the real Helix ($HX) in a terminal (tmux) with the bridge as its
// language server for Go and the model agent in the fim format against a fake llama-server
// (GET /props, POST /infill). The user types "(" after "y := add" in insert mode and opens the
// completion menu with Ctrl-x: the model's completion is listed, Tab selects it and Enter takes
// it; :w saves, and the saved file holds the completion. Helix closes the bracket as "(" is typed,
// and the model's answer "3, 4)" closes it too: the item inserts "3, 4" before the ")" already
// there. The fake checks the /infill request (the cursor's line as its prompt, the text before
// and after).
func TestHelixFIMCompletion(t *testing.T) {
	const (
		before     = "\ty := add("
		completion = "3, 4)" // the model's answer
		item       = "3, 4"  // the item: without the ")" after the cursor
		text       = "package main\n\n// add adds, in € (日本).\nfunc add(a, b int) int {\n\treturn a + b\n}\n\nfunc main() {\n\ty := add\n\tprintln(y)\n}\n"
	)
	var mu sync.Mutex
	answered := 0
	llama := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/props":
			_, _ = io.WriteString(w, `{"default_generation_settings":{}}`)
		case r.Method == http.MethodPost && r.URL.Path == "/infill":
			var req struct {
				InputPrefix string            `json:"input_prefix"`
				InputSuffix string            `json:"input_suffix"`
				InputExtra  []json.RawMessage `json:"input_extra"`
				Prompt      string            `json:"prompt"`
			}
			if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.InputExtra == nil {
				t.Errorf("an /infill request without input_extra, or not JSON: %v", err)
				http.Error(w, "bad request", http.StatusBadRequest)
				return
			}
			content := ""
			if req.Prompt == before {
				if !strings.HasSuffix(req.InputPrefix, "func main() {\n") || req.InputSuffix != ")\n\tprintln(y)\n}\n" {
					t.Errorf("the /infill request's input_prefix %q, input_suffix %q", req.InputPrefix, req.InputSuffix)
				}
				mu.Lock()
				answered++
				mu.Unlock()
				content = completion
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"content": content, "stop_type": "eos", "timings": map[string]any{"prompt_n": 5, "cache_n": 0, "predicted_n": 3}})
		default:
			// /api/version and the like: no Ollama here.
			http.NotFound(w, r)
		}
	}))
	defer llama.Close()

	term, work, bridgeLog := startHelix(t, func(bridge, bridgeLog string) string {
		return fmt.Sprintf(`[language-server.acp]
command = %q
args = ["--log-file", %q, "--log-level", "debug"]
config = { agent = { command = %q, args = ["agent", "--model-url", %q, "--model", "qwen2.5-coder-1.5b", "--model-format", "fim", "--verbose"] } }

[[language]]
name = "go"
language-servers = ["acp"]
`, bridge, bridgeLog, bridge, llama.URL)
	}, map[string]string{"main.go": text}, "main.go")

	// At the end of line 9, type "(" and ask with Ctrl-x until the menu lists the completion (the
	// agent starts in the background).
	term.keys(":")
	term.text("9")
	term.keys("Enter")
	term.keys("A")
	term.text("(")
	term.waitText(5*time.Second, "y := add(")
	term.askUntil("the completion item "+item, item+" text", func() { term.keys("C-x") })
	term.takeItem("insert `"+item+"` (line 9)", "y := add("+item+")")
	term.save("main.go")
	want := strings.Replace(text, "\ty := add\n", before+item+")\n", 1)
	if got, err := os.ReadFile(filepath.Join(work, "main.go")); err != nil || string(got) != want {
		t.Errorf("the saved file:\n%s\nwant:\n%s (%v)", got, want, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if answered == 0 {
		t.Errorf("the fake llama-server never got the typed line as /infill's prompt")
	}
	log, _ := os.ReadFile(bridgeLog)
	if !strings.Contains(string(log), "endpoint="+llama.URL+"/infill") {
		t.Errorf("the agent's log does not say it asked %s/infill", llama.URL)
	}
}
