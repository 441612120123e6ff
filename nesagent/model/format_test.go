package model

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testutil"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent"
)

// TestPickFormatFromTheModelsName: auto reads the name a model is published under, as Zed's
// prompt_format "infer" does, not any text the name holds. Each reference name (Zed's, the model
// cards', their GGUF files', Ollama's and re-publishers' uploads) gives its format, case aside; each
// near miss gives the chat format and says what it held; a format named is taken as it is; a
// misspelt one is refused.
func TestPickFormatFromTheModelsName(t *testing.T) {
	for model, want := range map[string]string{
		// Zed's own names, with Ollama's tag.
		"zeta2":          "zeta2",
		"zeta2.1":        "zeta2.1",
		"zeta2:latest":   "zeta2",
		"zeta2.1:latest": "zeta2.1",
		// The cards, their files and uploads.
		"zed-industries/zeta": "zeta1",
		"zeta":                "zeta1",
		"bartowski/zed-industries_zeta-GGUF:Q4_K_M":   "zeta1",
		"hf.co/bartowski/zed-industries_zeta-GGUF:Q8": "zeta1",
		"zeta-Q4_K_M.gguf":                            "zeta1",
		"zed-industries/zeta-2":                       "zeta2",
		"zeta-2-Q8_0.gguf":                            "zeta2",
		"zed-industries/zeta-2.1":                     "zeta2.1",
		"Zeta-2.1-Q4_K_M.gguf":                        "zeta2.1",
		"mradermacher/zeta-2.1-i1-GGUF":               "zeta2.1",
		"zeta-2.1:latest":                             "zeta2.1",
		"sweepai/sweep-next-edit-0.5B":                "sweep",
		"sweep-next-edit-1.5b":                        "sweep",
		"sweep-next-edit-1.5b.q8_0.v2.gguf":           "sweep",
		"sweepai/sweep-next-edit-v2-7B":               "sweep",
		"sweep-next-edit:latest":                      "sweep",
		"continuedev/instinct":                        "instinct",
		"nate/instinct":                               "instinct",
		"instinct:latest":                             "instinct",
		// Near misses and other models.
		"my-zeta-finetune-chat": "chat",
		"zetacoder":             "chat",
		"zeta-chat:7b":          "chat",
		"zeta3":                 "chat",
		"sweep":                 "chat",
		"sweeper-7b":            "chat",
		"instinct-chat":         "chat",
		"qwen2.5-coder:7b":      "chat",
		"gpt-4o-mini":           "chat",
		"local":                 "chat",
	} {
		f, why, err := PickFormat("auto", model)
		if err != nil || f.Name() != want || why == "" {
			t.Errorf("auto for %q = %v (%s), %v; want %s", model, f, why, err, want)
			continue
		}
		if f, _, _ := PickFormat("", model); f.Name() != want {
			t.Errorf("\"\" for %q = %s, want %s", model, f.Name(), want)
		}
		if want == "chat" {
			for _, part := range []string{"zeta", "sweep", "instinct"} {
				if strings.Contains(strings.ToLower(model), part) && !strings.Contains(why, "holds \""+part+"\" but is not") {
					t.Errorf("auto for the near miss %q does not say what it held: %s", model, why)
				}
			}
		}
	}
	// A code model's name falls to the chat format, with the hint a llama.vim user needs.
	for model, family := range map[string]string{"qwen2.5-coder:7b": "Qwen2.5-Coder", "Qwen2.5-Coder-1.5B-Q8_0.gguf": "Qwen2.5-Coder", "qwen3-coder:30b": "Qwen3-Coder",
		"bigcode/starcoder2-3b": "StarCoder", "deepseek-coder-6.7b-base": "DeepSeek-Coder", "codellama:7b-code": "CodeLlama"} {
		f, why, _ := PickFormat("auto", model)
		if f.Name() != "chat" || !strings.Contains(why, "it names a code model ("+family+"): to have it complete at the cursor by fill-in-the-middle, as llama.vim asks it, say --model-format fim") {
			t.Errorf("auto for the code model %q = %s, %q: want chat, and the hint to say --model-format fim", model, f.Name(), why)
		}
	}
	if _, why, _ := PickFormat("auto", "gpt-4o-mini"); strings.Contains(why, "--model-format fim") {
		t.Errorf("auto for a chat model hints at fim: %s", why)
	}
	if _, why, _ := PickFormat("auto", "bartowski/zed-industries_zeta-GGUF:Q4_K_M"); !strings.Contains(why, `read as "zeta"`) {
		t.Errorf("the reason does not say how the name was read: %s", why)
	}
	if f, why, err := PickFormat("ZETA2", "qwen2.5-coder:7b"); err != nil || f.Name() != "zeta2" || !strings.Contains(why, "--model-format") {
		t.Errorf("a format named: %v %q %v", f, why, err)
	}
	if _, _, err := PickFormat("zeta3", "x"); err == nil || !strings.Contains(err.Error(), "chat, zeta1, zeta2, zeta2.1, sweep, sweep-small, sweep-7b, instinct, fim") {
		t.Errorf("a misspelt format: %v", err)
	}
}

// TestSweepLayoutNamed: --model-format sweep-small and sweep-7b take their card's layout whatever
// the model's name; sweep takes the one the name calls for.
func TestSweepLayoutNamed(t *testing.T) {
	for _, tc := range []struct {
		format, model string
		v2            bool
	}{
		{"sweep", "sweep-next-edit-1.5b", false},
		{"sweep", "sweep-next-edit-v2-7b", true},
		{"sweep-7b", "sweep:latest", true},
		{"sweep-small", "my-sweep-7b-copy", false},
	} {
		f, _, err := PickFormat(tc.format, tc.model)
		if err != nil {
			t.Fatal(err)
		}
		if got := f.(sweepFormat).v2(tc.model); got != tc.v2 {
			t.Errorf("--model-format %s, model %q: v2 layout %v, want %v", tc.format, tc.model, got, tc.v2)
		}
	}
}

// completionFake is a server of raw completions (an OpenAI-compatible one at /v1/completions, or
// Ollama at /api/generate and /api/version) that answers each request with answer, and records
// the requests.
type completionFake struct {
	*httptest.Server
	mu    sync.Mutex
	paths []string
	body  map[string]any
}

func newCompletionFake(t *testing.T, ollama bool, answer string) *completionFake {
	t.Helper()
	f := &completionFake{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.paths = append(f.paths, r.Method+" "+r.URL.Path)
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/api/version" && ollama:
			io.WriteString(w, `{"version":"0.12.3"}`)
			return
		case r.URL.Path == "/api/generate" && ollama:
		case r.URL.Path == "/v1/completions" && !ollama:
		case r.URL.Path == "/v1/completions" && ollama:
			// What Ollama's OpenAI layer would do: wrap the prompt in the model's template.
			t.Errorf("a raw prompt went to Ollama's /v1/completions, which wraps it in a chat template")
		default:
			http.NotFound(w, r)
			return
		}
		data, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		json.Unmarshal(data, &f.body)
		f.mu.Unlock()
		if ollama {
			json.NewEncoder(w).Encode(map[string]any{"model": "m", "response": answer, "done": true, "done_reason": "stop"})
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"object": "text_completion", "choices": []any{map[string]any{"index": 0, "text": answer, "finish_reason": "stop"}}})
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *completionFake) seen() ([]string, map[string]any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.paths...), f.body
}

// TestRawFormatsPostCompletions: a raw format's request goes to /v1/completions with its prompt,
// its stop strings, temperature 0 and a bounded max_tokens; the answer is read by its grammar, and
// the cursor the model placed comes back with the suggestion.
func TestRawFormatsPostCompletions(t *testing.T) {
	text := "package p\n\nfunc f() {\n\tx := 1\n}\n"
	srv := newCompletionFake(t, false, "<|marker_1|>package p\n\nfunc f() {\n\tx := 12<|user_cursor|>\n}\n<|marker_2|>")
	e := newEngine(t, Config{URL: srv.URL, Model: "zeta-2.1", Server: "openai"})
	req := nesagent.Request{URI: "file:///w/p.go", Root: "/w", Text: text, Cursor: strings.Index(text, "1") + 1}
	sugs, err := e.Suggest(context.Background(), req)
	if err != nil || len(sugs) != 1 {
		t.Fatalf("%+v, %v", sugs, err)
	}
	if got := apply(t, text, sugs[0].Edits); got != "package p\n\nfunc f() {\n\tx := 12\n}\n" {
		t.Errorf("applied: %q", got)
	}
	if c := sugs[0].Cursor; c == nil || *c != strings.Index(text, "1")+2 {
		t.Errorf("cursor %v, want after the 12", sugs[0].Cursor)
	}
	paths, body := srv.seen()
	if strings.Join(paths, ",") != "POST /v1/completions" {
		t.Errorf("requests %v", paths)
	}
	prompt, _ := body["prompt"].(string)
	if !strings.HasPrefix(prompt, seedFIMSuffix) || !strings.HasSuffix(prompt, seedFIMMiddle) || !strings.Contains(prompt, "<filename>p.go\n") {
		t.Errorf("prompt %q", prompt)
	}
	if stop := fmt.Sprint(body["stop"]); stop != "[<[end▁of▁sentence]>]" {
		t.Errorf("stop %s", stop)
	}
	if body["temperature"] != 0.0 || body["max_tokens"] != float64(zetaMaxOutputTokens) || body["model"] != "zeta-2.1" || body["stream"] != false {
		t.Errorf("body %v", body)
	}
}

// TestOllamaGetsTheRawPromptUnwrapped: with Ollama (recognized by its /api/version), a raw format
// posts to /api/generate with raw set, so that the prompt reaches the model as it is, not wrapped
// in the model's chat template as Ollama's /v1/completions would; its options carry the stop
// strings, the bound and the temperature.
func TestOllamaGetsTheRawPromptUnwrapped(t *testing.T) {
	text := "a := 1\nb := 2\n"
	srv := newCompletionFake(t, true, "<|editable_region_start|>\na := 1\nb := 3\n<|editable_region_end|>")
	var log testutil.SyncBuffer
	e := newEngine(t, Config{URL: srv.URL, Model: "zed-industries/zeta", Log: newTextLogger(&log)})
	sugs, err := e.Suggest(context.Background(), nesagent.Request{URI: "file:///w/x.go", Root: "/w", Text: text, Cursor: 3})
	if err != nil || len(sugs) != 1 || apply(t, text, sugs[0].Edits) != "a := 1\nb := 3\n" {
		t.Fatalf("%+v, %v", sugs, err)
	}
	paths, body := srv.seen()
	if strings.Join(paths, ",") != "GET /api/version,POST /api/generate" {
		t.Errorf("requests %v", paths)
	}
	prompt, _ := body["prompt"].(string)
	if body["raw"] != true || body["stream"] != false || !strings.HasPrefix(prompt, "### Instruction:\n") || !strings.HasSuffix(prompt, "### Response:\n") {
		t.Errorf("raw %v, prompt %q", body["raw"], prompt)
	}
	opts, _ := body["options"].(map[string]any)
	if stop, _ := opts["stop"].([]any); opts["temperature"] != 0.0 || opts["num_predict"] != float64(zetaMaxOutputTokens) || len(stop) != 4 || stop[0] != "<|editable_region_end|>" || stop[3] != "<|editable_region_end|>\n\n\n" {
		t.Errorf("options %v", opts)
	}
	if !strings.Contains(log.String(), "the server is Ollama 0.12.3") || !strings.Contains(log.String(), "prompt format zeta1") {
		t.Errorf("the log does not say what it chose:\n%s", log.String())
	}
	// Asked once: a second request goes straight to /api/generate.
	e.Suggest(context.Background(), nesagent.Request{URI: "file:///w/x.go", Root: "/w", Text: text, Cursor: 3})
	if paths, _ := srv.seen(); len(paths) != 3 || paths[2] != "POST /api/generate" {
		t.Errorf("requests %v", paths)
	}
	// Said by the user: no question asked.
	srv2 := newCompletionFake(t, true, "x")
	e2 := newEngine(t, Config{URL: srv2.URL + "/v1", Model: "zeta", Server: "ollama", ContextTokens: 8192})
	e2.Suggest(context.Background(), nesagent.Request{URI: "file:///w/x.go", Text: text, Cursor: 3})
	paths, body = srv2.seen()
	if strings.Join(paths, ",") != "POST /api/generate" {
		t.Errorf("--model-server ollama: requests %v", paths)
	}
	// --model-context is the context Ollama loads the model with; without it, Ollama's own.
	if opts, _ := body["options"].(map[string]any); opts["num_ctx"] != 8192.0 {
		t.Errorf("--model-context 8192: options %v", opts)
	}
	if _, set := opts["num_ctx"]; set {
		t.Errorf("no --model-context: options %v", opts)
	}
}

// TestEndpointsOfEachURLForm: every --model-url form reaches the chat and raw endpoints beside
// each other, and Ollama's own.
func TestEndpointsOfEachURLForm(t *testing.T) {
	for url, want := range map[string][4]string{
		"http://h:8080":     {"http://h:8080/v1/chat/completions", "http://h:8080/v1/completions", "http://h:8080/api/generate", "http://h:8080/api/version"},
		"http://h:8080/v1/": {"http://h:8080/v1/chat/completions", "http://h:8080/v1/completions", "http://h:8080/api/generate", "http://h:8080/api/version"},
		"https://api.example.com/v1/chat/completions?api-version=2": {"https://api.example.com/v1/chat/completions?api-version=2", "https://api.example.com/v1/completions?api-version=2", "https://api.example.com/api/generate", "https://api.example.com/api/version"},
		"http://h:8080/v1/completions":                              {"http://h:8080/v1/chat/completions", "http://h:8080/v1/completions", "http://h:8080/api/generate", "http://h:8080/api/version"},
		"http://h/proxy":                                            {"http://h/proxy/v1/chat/completions", "http://h/proxy/v1/completions", "http://h/proxy/api/generate", "http://h/proxy/api/version"},
	} {
		h := newEngine(t, Config{URL: url}).c.(*httpCompleter)
		if got := [4]string{h.chat, h.completions, h.generate, h.version}; got != want {
			t.Errorf("%s:\n got %q\nwant %q", url, got, want)
		}
	}
	if _, err := New(Config{URL: "http://h", Model: "m", Server: "vllm"}); err == nil {
		t.Error("--model-server vllm accepted")
	}
}

// TestGateDropsNoise: each rule of the quality gate, with what it says in the debug log.
func TestGateDropsNoise(t *testing.T) {
	text := "func f(a int) int {\n\treturn a\n}\n\nfunc g() {\n\tx := f(1)\n\ty := 2\n}\n"
	cursor := strings.Index(text, "x := f(1)") + len("x := f(1)")
	// The user's last edit: "f(1)" was "f()".
	last := nesagent.Edit{Start: strings.Index(text, "f(1)") + 2, Old: "", New: "1", OldLines: "\tx := f()", NewLines: "\tx := f(1)", LineStart: strings.Index(text, "\tx :=")}
	cases := []struct {
		name   string
		answer func(region string) string
		why    string
	}{
		{"no change", func(r string) string { return r }, "no change"},
		{"whitespace", func(r string) string { return strings.Replace(r, "\ty := 2", "\ty  :=  2 ", 1) }, "a change of whitespace only"},
		{"reversal", func(r string) string { return strings.Replace(r, "f(1)", "f()", 1) }, "it undoes the most recent edit"},
		{"markers", func(r string) string { return strings.Replace(r, "y := 2", "y := 2 <|edit_history|>", 1) }, "the answer holds the format's marker"},
		{"prompt text", func(r string) string { return strings.Replace(r, "y := 2", "y := 2\n<|current_file|>", 1) }, "the model copied its prompt"},
		{"runaway", func(r string) string { return r + strings.Repeat("\ty := 2\n", 400) }, "runaway growth"},
		{"rewrite", func(r string) string { return "magazines Cyr Cyr\nmagazines\n" }, "a rewrite, not an edit: the answer keeps 0 of the region's"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newFake(t, rewriter(t, tc.answer, marked))
			var log testutil.SyncBuffer
			e := newEngine(t, Config{URL: srv.URL, Log: newTextLogger(&log)})
			sugs, err := e.Suggest(context.Background(), nesagent.Request{URI: "file:///w/g.go", Text: text, Cursor: cursor, Recent: []nesagent.Edit{last}})
			if err != nil || len(sugs) != 0 {
				t.Fatalf("%+v, %v; want nothing shown", sugs, err)
			}
			if !strings.Contains(log.String(), "answer dropped") || !strings.Contains(log.String(), tc.why) {
				t.Errorf("the debug log does not say %q:\n%s", tc.why, log.String())
			}
		})
	}
	// And a good answer passes.
	srv := newFake(t, rewriter(t, func(r string) string { return strings.Replace(r, "y := 2", "y := x + 2", 1) }, marked))
	e := newEngine(t, Config{URL: srv.URL})
	sugs, err := e.Suggest(context.Background(), nesagent.Request{URI: "file:///w/g.go", Text: text, Cursor: cursor, Recent: []nesagent.Edit{last}})
	if err != nil || len(sugs) != 1 {
		t.Fatalf("a good answer: %+v, %v", sugs, err)
	}
}

// TestGateRefusesEditsOutsideTheRegion: an answer whose marker numbers reach past the region the
// model was given (Zeta 2.1) is refused, not applied elsewhere.
func TestGateRefusesEditsOutsideTheRegion(t *testing.T) {
	text := "a\nb\nc\n"
	srv := newCompletionFake(t, false, "<|marker_1|>X<|marker_7|>")
	var log testutil.SyncBuffer
	e := newEngine(t, Config{URL: srv.URL, Model: "zeta2.1", Server: "openai", Log: newTextLogger(&log)})
	sugs, err := e.Suggest(context.Background(), nesagent.Request{URI: "file:///w/a.txt", Text: text, Cursor: 1})
	if err != nil || len(sugs) != 0 || !strings.Contains(log.String(), "out of range") {
		t.Fatalf("%+v, %v\n%s", sugs, err, log.String())
	}
}

// newTextLogger logs every level, as text, into w.
func newTextLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// TestChatKeepsUnderTheModelsContext: with --model-context, the chat prompt drops the other
// files' excerpts first, then the history, to fit; a region that cannot fit asks nothing.
func TestChatKeepsUnderTheModelsContext(t *testing.T) {
	text := "package a\n\nfunc f() {\n\tx := 1\n}\n"
	other := "package a\n\n// g is long.\nfunc g() {\n" + strings.Repeat("\ty := 2\n", 15) + "}\n"
	req := nesagent.Request{URI: "file:///w/a.go", Root: "/w", Text: text, Cursor: strings.Index(text, "x := 1"),
		Open: []nesagent.OpenDocument{{URI: "file:///w/b.go", Text: other}}}
	ask := func(ctx int) []Prompt {
		c := &fixedCompleter{}
		e, err := WithCompleter(Config{ContextTokens: ctx}, c)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Suggest(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		return c.got
	}
	full := ask(0)
	if len(full) != 1 || !strings.Contains(full[0].User, "b.go") {
		t.Fatalf("no bound: %+v", full)
	}
	// One token short of the whole prompt: something must go.
	bound := (len(full[0].System)+len(full[0].User))/3 + full[0].MaxTokens - 1
	got := ask(bound)
	if len(got) != 1 || strings.Contains(got[0].User, "b.go") || !strings.Contains(got[0].User, "x := 1") {
		t.Fatalf("--model-context %d: want the excerpt of b.go dropped, the region kept: %+v", bound, got)
	}
	if (len(got[0].System)+len(got[0].User))/3+got[0].MaxTokens > bound {
		t.Errorf("the prompt (%d bytes) and max_tokens %d exceed %d tokens", len(got[0].System)+len(got[0].User), got[0].MaxTokens, bound)
	}
	if got := ask(100); len(got) != 0 {
		t.Errorf("--model-context 100: asked %+v", got)
	}
}
