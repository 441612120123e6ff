package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// A modelFormat is what a fake llama-server expects of one prompt format and how it answers.
type modelFormat struct {
	model    string
	endpoint string
	stop     []string
	// shape are strings the prompt must hold (for chat formats, the user message); the system
	// message, when the format sends one, must start with system.
	shape  []string
	system string
	// region finds the editable region in the prompt (the user message), cursor marker included;
	// answer writes the format's answer for the region's new text.
	region func(prompt string) (string, bool)
	answer func(prompt, next string) string
	// cursor is the column the model puts the cursor at after the edit on line 9 (−1: it does
	// not place it).
	cursor int
}

// between is the text of s after the last from and before the first to after it.
func between(s, from, to string) (string, bool) {
	i := strings.LastIndex(s, from)
	if i < 0 {
		return "", false
	}
	rest := s[i+len(from):]
	j := strings.Index(rest, to)
	if j < 0 {
		return "", false
	}
	return rest[:j], true
}

var modelFormats = []modelFormat{
	{
		model: "zed-industries/zeta", endpoint: "/v1/completions",
		stop:  []string{"<|editable_region_end|>", "<|editable_region_end|>\n", "<|editable_region_end|>\n\n", "<|editable_region_end|>\n\n\n"},
		shape: []string{"### Instruction:\n", "### User Edits:\n\nUser edited main.go:\n```diff\n", "### User Excerpt:\n\n```main.go\n", "<|user_cursor_is_here|>", "### Response:\n"},
		region: func(p string) (string, bool) {
			return between(p, "<|editable_region_start|>\n", "<|editable_region_end|>")
		},
		// The stop strings take the end marker.
		answer: func(_, next string) string { return "<|editable_region_start|>\n" + next },
		cursor: -1,
	},
	{
		model: "zeta-2-Q8_0.gguf", endpoint: "/v1/completions", stop: nil,
		shape:  []string{"<[fim-suffix]>", "<[fim-prefix]>", "<filename>edit_history\n--- a/main.go\n+++ b/main.go\n", "<filename>main.go\n", "<<<<<<< CURRENT\n", "<|user_cursor|>", "=======\n<[fim-middle]>"},
		region: func(p string) (string, bool) { return between(p, "<<<<<<< CURRENT\n", "=======\n") },
		answer: func(_, next string) string {
			return strings.Replace(next, "add(3, 4)", "add(3, <|user_cursor|>4)", 1) + ">>>>>>> UPDATED\n"
		},
		cursor: len("\ty := add(3, "),
	},
	{
		model: "zeta-2.1", endpoint: "/v1/completions", stop: []string{"<[end▁of▁sentence]>"},
		shape:  []string{"<[fim-suffix]>", "<[fim-prefix]>", "<filename>edit_history\n--- a/main.go\n", "<filename>main.go\n<|marker_1|>", "<|user_cursor|>", "<[fim-middle]>"},
		region: func(p string) (string, bool) { return between(p, "<filename>main.go\n", "<[fim-middle]>") },
		answer: func(_, next string) string {
			// next holds the region's marker tags: the answer rewrites from the first to the last.
			first, last := strings.Index(next, "<|marker_"), strings.LastIndex(next, "<|marker_")
			end := last + strings.Index(next[last:], "|>") + 2
			span := next[first:end]
			return strings.Replace(span, "add(3, 4)", "add(3, 4)<|user_cursor|>", 1)
		},
		cursor: len("\ty := add(3, 4)"),
	},
	{
		model: "sweep-next-edit-1.5b", endpoint: "/v1/completions", stop: []string{"<|file_sep|>", "</s>"},
		shape: []string{"<|file_sep|>main.go.diff\noriginal:\n", "<|file_sep|>original/main.go\n", "<|file_sep|>current/main.go\n", "<|file_sep|>updated/main.go\n"},
		region: func(p string) (string, bool) {
			return between(p, "<|file_sep|>current/main.go\n", "<|file_sep|>updated/")
		},
		answer: func(_, next string) string { return next },
		cursor: -1,
	},
	{
		model: "sweepai/sweep-next-edit-v2-7B", endpoint: "/v1/completions", stop: []string{"<|endoftext|>", "<|file_sep|>"},
		shape: []string{"<|file_sep|>main.go\n", "<|file_sep|>main.go:9:9\noriginal:\n\ty := add\nupdated:\n\ty := add(3", "<|file_sep|>current/main.go:", "<|cursor|>", "<|file_sep|>updated/main.go:"},
		region: func(p string) (string, bool) {
			r, ok := between(p, "<|file_sep|>current/main.go:", "<|file_sep|>updated/")
			return r[strings.Index(r, "\n")+1:], ok
		},
		// The prompt ends with the updated window's lines above the cursor's: the answer goes on.
		answer: func(p, next string) string {
			prefill := p[strings.LastIndex(p, "<|file_sep|>updated/"):]
			prefill = prefill[strings.Index(prefill, "\n")+1:]
			return strings.TrimPrefix(strings.TrimSuffix(next, "\n"), prefill)
		},
		cursor: -1,
	},
	{
		model: "nate/instinct", endpoint: "/v1/chat/completions", stop: nil, system: "You are Instinct, an intelligent next-edit predictor developed by Continue.dev.",
		shape: []string{"### User Edits:\n\nUser edited file \"main.go\"\n\n```diff\n", "### User Excerpt:\nmain.go\n\n", "<|user_cursor_is_here|>", "\n### Response:"},
		region: func(p string) (string, bool) {
			return between(p, "<|editable_region_start|>\n", "<|editable_region_end|>")
		},
		answer: func(_, next string) string { return next },
		cursor: -1,
	},
	{
		model: "qwen2.5-coder:7b", endpoint: "/v1/chat/completions", stop: nil,
		shape: []string{"<|edit_history|>", "main.go", "<|user_cursor_is_here|>"},
		region: func(p string) (string, bool) {
			return between(p, "<|editable_region_start|>\n", "<|editable_region_end|>")
		},
		answer: func(_, next string) string { return "<|editable_region_start|>\n" + next + "<|editable_region_end|>" },
		cursor: -1,
	},
}

// fakeLlamaServer is an OpenAI-compatible server for one format: it checks each request's
// endpoint, stop strings, temperature and prompt shape (problems go to the test), and answers
// the request whose region shows "y := add(3" with that call finished, in the format's own
// grammar; any other request gets the region back unchanged (no edit).
func fakeLlamaServer(t *testing.T, f modelFormat, workspace string) (*httptest.Server, func() int) {
	var mu sync.Mutex
	answered := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet { // no Ollama at /api/version, no llama-server's /props (doctor asks both)
			http.NotFound(w, r)
			return
		}
		var req struct {
			Model       string   `json:"model"`
			Prompt      *string  `json:"prompt"`
			Stop        []string `json:"stop"`
			Temperature *float64 `json:"temperature"`
			MaxTokens   int      `json:"max_tokens"`
			Messages    []struct {
				Role, Content string
			} `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			t.Errorf("%s: a body that is not JSON: %v", r.URL.Path, err)
			return
		}
		problem := func(format string, args ...any) {
			t.Errorf("%s: "+format, append([]any{f.model}, args...)...)
			http.Error(w, fmt.Sprintf(format, args...), http.StatusBadRequest)
		}
		if r.URL.Path != f.endpoint {
			problem("the request went to %s, want %s", r.URL.Path, f.endpoint)
			return
		}
		if !reflect.DeepEqual(req.Stop, f.stop) {
			problem("stop strings %q, want %q", req.Stop, f.stop)
			return
		}
		if req.Model != f.model || req.Temperature == nil || *req.Temperature != 0 || req.MaxTokens <= 0 || req.MaxTokens > 4096 {
			problem("model %q, temperature %v, max_tokens %d", req.Model, req.Temperature, req.MaxTokens)
			return
		}
		var prompt string
		switch {
		case f.endpoint == "/v1/completions" && req.Prompt != nil:
			prompt = *req.Prompt
		case f.endpoint == "/v1/chat/completions" && len(req.Messages) > 0:
			prompt = req.Messages[len(req.Messages)-1].Content
			if f.system != "" && (len(req.Messages) != 2 || req.Messages[0].Role != "system" || !strings.HasPrefix(req.Messages[0].Content, f.system)) {
				problem("the system message is not Instinct's: %+v", req.Messages[0])
				return
			}
		default:
			problem("no prompt in %+v", req)
			return
		}
		if strings.Contains(prompt, filepath.ToSlash(workspace)) {
			problem("the prompt names the workspace's absolute path:\n%s", prompt)
			return
		}
		region, ok := f.region(prompt)
		if !ok {
			problem("no region in the prompt:\n%s", prompt)
			return
		}
		next := region
		if strings.Contains(region, "y := add(3") && !strings.Contains(region, "y := add(3,") {
			for _, shape := range f.shape {
				if !strings.Contains(prompt, shape) {
					problem("the prompt lacks %q:\n%s", shape, prompt)
					return
				}
			}
			next = strings.NewReplacer("<|user_cursor_is_here|>", "", "<|user_cursor|>", "", "<|cursor|>", "").Replace(region)
			next = strings.Replace(next, "y := add(3\n", "y := add(3, 4)\n", 1)
			mu.Lock()
			answered++
			mu.Unlock()
		}
		text := f.answer(prompt, next)
		var body any
		if f.endpoint == "/v1/completions" {
			body = map[string]any{"object": "text_completion", "choices": []any{map[string]any{"index": 0, "text": text, "finish_reason": "stop"}}}
		} else {
			body = map[string]any{"object": "chat.completion", "choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": text}, "finish_reason": "stop"}}}
		}
		_ = json.NewEncoder(w).Encode(body)
	}))
	t.Cleanup(srv.Close)
	return srv, func() int {
		mu.Lock()
		defer mu.Unlock()
		return answered
	}
}

// TestNeovimModelFormats: for each open next-edit model's format (Zeta 1, 2, 2.1, Sweep 1.5B and
// v2 7B, Instinct, and chat for any other model), real Neovim 0.12 runs the bridge with the model
// agent against a fake llama-server that checks the request (endpoint, stop strings, the prompt's
// shape, file names relative to the workspace) and answers in the format; the user types "(3",
// the model's finished call is shown as ghost text, accepted, and the saved file holds it. Where
// the model places the cursor (Zeta 2 and 2.1), the cursor goes there.
func TestNeovimModelFormats(t *testing.T) {
	if os.Getenv("NVIM") == "" {
		skipWithoutPeer(t, `NVIM is not set; run eval "$(bash ../shared/tools/install-test-peers.sh)"`)
	}
	for _, f := range modelFormats {
		t.Run(strings.NewReplacer("/", "_", ":", "_").Replace(f.model), func(t *testing.T) {
			var srv *httptest.Server
			var answered func() int
			env := func(work string) []string {
				srv, answered = fakeLlamaServer(t, f, work)
				cursor := ""
				if f.cursor >= 0 {
					cursor = fmt.Sprint(f.cursor)
				}
				return []string{"MODEL_URL=" + srv.URL, "MODEL_NAME=" + f.model, "MODEL_CURSOR=" + cursor}
			}
			out, work := runShippedNeovimIn(t, "model_formats.lua", "ALL PASSED", env)
			saved, err := os.ReadFile(filepath.Join(work, "main.go"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(saved), "\n\ty := add(3, 4)\n\tprintln(x, y)\n") {
				t.Errorf("the saved file:\n%s\nNeovim:\n%s", saved, out)
			}
			if answered() == 0 {
				t.Errorf("the fake server never saw the typed call")
			}
		})
	}
}

// TestDoctorShowsTheModelsFormat: doctor, run on the model agent, says which model it asks in
// which prompt format and why, in its report and its JSON, a near miss of a name included.
func TestDoctorShowsTheModelsFormat(t *testing.T) {
	srv, _ := fakeLlamaServer(t, modelFormats[2], t.TempDir()) // zeta-2.1
	bridge, _ := binaries(t)
	dir := t.TempDir()
	r := runDoctor(t, dir, nil, "--", bridge, "agent", "--model-url", srv.URL, "--model", "zeta-2.1")
	want := `zeta-2.1, asked in the zeta2.1 prompt format (the model's name "zeta-2.1" is zeta2.1's)`
	if !strings.Contains(r.stdout, want) {
		t.Errorf("doctor does not say %q:\n%s", want, r.stdout)
	}
	j := doctorJSON(t, runDoctor(t, dir, nil, "--json", "--", bridge, "agent", "--model-url", srv.URL, "--model", "sweepai/sweep-next-edit-v2-7B"))
	if f, why := field(j, "agent.model.format"), field(j, "agent.model.why"); f != "sweep" || !strings.Contains(fmt.Sprint(why), "v2 7B layout") {
		t.Errorf("agent.model: format %v, why %v", f, why)
	}
	// A name that only looks like Zeta's gets the chat format, and doctor says why and what to
	// give if it is Zeta.
	r = runDoctor(t, dir, nil, "--", bridge, "agent", "--model-url", srv.URL, "--model", "my-zeta-finetune-chat")
	want = `asked in the chat prompt format (the model's name "my-zeta-finetune-chat" holds "zeta" but is not a name that model is published under: the chat format; if it is that model, say --model-format zeta1, zeta2 or zeta2.1)`
	if !strings.Contains(r.stdout, want) {
		t.Errorf("doctor does not say %q:\n%s", want, r.stdout)
	}
}
