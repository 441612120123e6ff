package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// serverFake is a model server that answers as Ollama, as llama-server or as a plain
// OpenAI-compatible server: only Ollama answers GET /api/version, only llama-server GET /props
// (with its default_generation_settings) and POST /infill, only Ollama POST /api/generate and
// /api/chat. Every
// POST is answered with an empty completion in the endpoint's shape; fakeModel records the
// requests, and the bodies are kept by endpoint.
func serverFake(t *testing.T, kind string) (*fakeModel, *taken) {
	m := newFakeModel(t)
	k := &taken{}
	m.set(func(w http.ResponseWriter, r *http.Request, body []byte) {
		if r.Method == http.MethodPost {
			k.add([]byte(`{"path":"` + r.URL.Path + `","body":` + string(body) + `}`))
		}
		timings := map[string]any(nil)
		if kind == "llama-server" {
			timings = map[string]any{"prompt_n": 9, "cache_n": 0, "predicted_n": 1, "prompt_ms": 1.0, "predicted_ms": 1.0}
		}
		switch {
		case r.URL.Path == "/api/version" && kind == "ollama":
			_, _ = io.WriteString(w, `{"version":"0.12.3"}`)
		case r.URL.Path == "/props" && kind == "llama-server":
			_, _ = io.WriteString(w, `{"default_generation_settings":{"n_ctx":8192},"build_info":"b6000-test"}`)
		case r.Method != http.MethodPost:
			http.NotFound(w, r)
		case r.URL.Path == "/v1/chat/completions":
			resp := map[string]any{"choices": []any{map[string]any{"finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": ""}}}}
			if timings != nil {
				resp["timings"] = timings
			}
			if kind == "ollama" {
				resp["system_fingerprint"] = "fp_ollama"
			}
			_ = json.NewEncoder(w).Encode(resp)
		case r.URL.Path == "/v1/completions":
			resp := map[string]any{"choices": []any{map[string]any{"finish_reason": "stop", "text": ""}}}
			if timings != nil {
				resp["timings"] = timings
			}
			if kind == "ollama" {
				resp["system_fingerprint"] = "fp_ollama"
			}
			_ = json.NewEncoder(w).Encode(resp)
		case r.URL.Path == "/api/generate" && kind == "ollama":
			_, _ = io.WriteString(w, `{"response":"","done":true,"done_reason":"stop"}`)
		case r.URL.Path == "/api/chat" && kind == "ollama":
			_, _ = io.WriteString(w, `{"message":{"role":"assistant","content":""},"done":true,"done_reason":"stop"}`)
		case r.URL.Path == "/infill" && kind == "llama-server":
			_ = json.NewEncoder(w).Encode(map[string]any{"content": "", "stop_type": "eos", "timings": timings})
		default:
			http.NotFound(w, r)
		}
	})
	return m, k
}

// serverLine is the value of the report's "server" line, "" when it has none.
func serverLine(report string) string {
	for l := range strings.SplitSeq(report, "\n") {
		if v, ok := strings.CutPrefix(l, "server     "); ok {
			return v
		}
	}
	return ""
}

// postedTo are the paths of the POSTs a fake got.
func postedTo(m *fakeModel) []string {
	var out []string
	for _, r := range m.requests() {
		if r.Method == http.MethodPost {
			out = append(out, r.Path)
		}
	}
	return out
}

// TestDoctorSaysWhatServesTheModel: for every prompt format the model agent speaks to a model's
// server (chat, Instinct, Zeta 1, 2 and 2.1, Sweep, FIM) and for a server that is Ollama,
// llama-server or another OpenAI-compatible server, doctor's "server" line names what serves the
// model, found by asking it as the agent does (GET /api/version, GET /props), and where the
// format's prompts go; and the sample suggestion (--prompt) is posted there, and only there.
func TestDoctorSaysWhatServesTheModel(t *testing.T) {
	bridge, _ := binaries(t)
	servers := []struct{ kind, named string }{
		{"ollama", "Ollama 0.12.3 ("},
		{"llama-server", "llama-server ("},
		{"openai", "OpenAI-compatible ("},
	}
	for _, sv := range servers {
		for _, format := range []string{"chat", "instinct", "zeta1", "zeta2", "zeta2.1", "sweep", "fim"} {
			t.Run(sv.kind+"/"+format, func(t *testing.T) {
				t.Parallel()
				var endpoint string
				switch {
				case (format == "chat" || format == "instinct") && sv.kind == "ollama":
					endpoint = "/api/chat"
				case format == "chat" || format == "instinct":
					endpoint = "/v1/chat/completions"
				case sv.kind == "ollama":
					endpoint = "/api/generate"
				case format == "fim" && sv.kind == "llama-server":
					endpoint = "/infill"
				default:
					endpoint = "/v1/completions"
				}
				m, k := serverFake(t, sv.kind)
				r := runDoctor(t, t.TempDir(), nil, "--prompt", "--", bridge, "agent", "--model-url", m.srv.URL, "--model", "qwen2.5-coder-1.5b", "--model-format", format)
				line := serverLine(r.stdout)
				t.Logf("server     %s", line)
				if !strings.HasPrefix(line, sv.named) {
					t.Errorf("the server line %q does not name %q:\n%s", line, sv.named, r.stdout)
				}
				if !strings.Contains(line, " to "+endpoint) {
					t.Errorf("the server line %q does not say the prompts go to %s", line, endpoint)
				}
				if !strings.Contains(line, "found by asking") {
					t.Errorf("the server line %q does not say it was found by asking the server", line)
				}
				posts := postedTo(m)
				if len(posts) == 0 {
					t.Fatalf("the sample was posted nowhere; the server got %+v", m.requests())
				}
				for _, p := range posts {
					if p != endpoint {
						t.Errorf("the sample went to %v; doctor said %s", posts, endpoint)
						break
					}
				}
				var req struct {
					Body struct {
						CachePrompt *bool `json:"cache_prompt"`
						Raw         bool  `json:"raw"`
					} `json:"body"`
				}
				k.last(t, &req)
				if said, sent := strings.Contains(line, "with cache_prompt") || endpoint == "/infill", req.Body.CachePrompt != nil && *req.Body.CachePrompt; said != sent {
					t.Errorf("doctor says %q; the sample's request carries cache_prompt: %v", line, sent)
				}
				if said := strings.Contains(line, "with raw set"); said != req.Body.Raw {
					t.Errorf("doctor says %q; the sample's request sets raw: %v", line, req.Body.Raw)
				}
			})
		}
	}
}

// TestDoctorSaysWhereOllamaTakesAChat: with --model-server ollama and the chat prompt, doctor
// says the chat goes to Ollama's own /api/chat with what the request carries, --model-context as
// num_ctx among its options; the sample's request is that. Named by --model-server against a
// server that is llama-server, it says so.
func TestDoctorSaysWhereOllamaTakesAChat(t *testing.T) {
	bridge, _ := binaries(t)
	m, k := serverFake(t, "ollama")
	agent := []string{"--", bridge, "agent", "--model-url", m.srv.URL, "--model", "qwen2.5-coder:7b", "--model-format", "chat", "--model-server", "ollama", "--model-context", "8192"}
	r := runDoctor(t, t.TempDir(), nil, append([]string{"--prompt"}, agent...)...)
	line := serverLine(r.stdout)
	t.Logf("server     %s", line)
	for _, want := range []string{
		"Ollama (chat prompts to /api/chat; options num_predict, temperature 0, stop, num_ctx 8192 from --model-context",
		"named by --model-server ollama",
	} {
		if !strings.Contains(line, want) {
			t.Errorf("the server line %q does not say %q", line, want)
		}
	}
	if strings.Contains(line, "but the server answers") {
		t.Errorf("the server line %q says the server is something else", line)
	}
	var req struct {
		Path string                     `json:"path"`
		Body map[string]json.RawMessage `json:"body"`
	}
	k.last(t, &req)
	if req.Path != "/api/chat" {
		t.Errorf("the sample went to %s", req.Path)
	}
	for _, key := range []string{"model", "messages", "options"} {
		if _, ok := req.Body[key]; !ok {
			t.Errorf("the chat request has no %s: %v", key, req.Body)
		}
	}
	for _, key := range []string{"temperature", "max_tokens", "cache_prompt"} {
		if _, ok := req.Body[key]; ok {
			t.Errorf("the chat request carries %s outside its options, which Ollama's /api/chat does not read", key)
		}
	}
	var opts map[string]any
	if err := json.Unmarshal(req.Body["options"], &opts); err != nil || opts["num_ctx"] != 8192.0 || opts["temperature"] != 0.0 || opts["num_predict"] == nil {
		t.Errorf("the chat request's options %s: want num_ctx 8192, temperature 0 and num_predict (%v)", req.Body["options"], err)
	}
	js := doctorJSON(t, runDoctor(t, t.TempDir(), nil, append([]string{"--json"}, agent...)...))
	if s, _ := field(js, "agent.model.server").(string); s != line {
		t.Errorf("agent.model.server %q, the report's line %q", s, line)
	}

	llama, _ := serverFake(t, "llama-server")
	r = runDoctor(t, t.TempDir(), nil, "--", bridge, "agent", "--model-url", llama.srv.URL, "--model", "qwen", "--model-format", "zeta2", "--model-server", "ollama")
	if line := serverLine(r.stdout); !strings.HasPrefix(line, "Ollama (raw prompts to /api/generate") || !strings.Contains(line, "but the server answers as llama-server") {
		t.Errorf("--model-server ollama at a llama-server: the server line %q", line)
	}
}
