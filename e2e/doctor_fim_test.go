package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestDoctorSaysWhatServesAFIMModel: doctor shows the format, what serves the model (asked as the
// agent asks it: llama-server by its /props, a hosted service by its format) and the variable
// the key is read from, never the key; the sample is the completion at the cursor.
func TestDoctorSaysWhatServesAFIMModel(t *testing.T) {
	m := newFakeModel(t)
	m.set(func(w http.ResponseWriter, r *http.Request, _ []byte) {
		switch r.URL.Path {
		case "/props":
			_, _ = io.WriteString(w, `{"default_generation_settings":{"n_ctx":4096},"build_info":"b1-test"}`)
		case "/infill":
			_ = json.NewEncoder(w).Encode(map[string]any{"content": "m", "stop_type": "eos", "timings": map[string]any{"prompt_n": 9, "cache_n": 0}})
		case "/v1/fim/completions":
			_, _ = io.WriteString(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":"m"},"finish_reason":"stop"}]}`)
		default:
			http.NotFound(w, r)
		}
	})
	bridge, _ := binaries(t)
	env := []string{"FAKE_MODEL_KEY=" + testKey}
	fim := runDoctor(t, t.TempDir(), env, "--prompt", "--", bridge, "agent", "--model-url", m.srv.URL, "--model", "qwen2.5-coder:1.5b", "--model-format", "fim", "--api-key-env", "FAKE_MODEL_KEY")
	for _, want := range []string{"asked in the fim prompt format", "server     llama-server (FIM prompts to /infill)", "key        from the environment variable FAKE_MODEL_KEY", `the first writes "m"`} {
		if !strings.Contains(fim.stdout, want) {
			t.Errorf("doctor does not say %q:\n%s", want, fim.stdout)
		}
	}
	js := runDoctor(t, t.TempDir(), env, "--json", "--", bridge, "agent", "--model-url", m.srv.URL, "--model", "codestral-latest", "--model-format", "codestral", "--api-key-env", "FAKE_MODEL_KEY")
	rep := doctorJSON(t, js)
	if s, _ := field(rep, "agent.model.server").(string); !strings.Contains(s, "the service's own API at "+m.srv.URL) {
		t.Errorf("agent.model.server %q, want the hosted service named", s)
	}
	if k, _ := field(rep, "agent.model.keyEnv").(string); k != "FAKE_MODEL_KEY" {
		t.Errorf("agent.model.keyEnv %q", k)
	}
	for _, out := range []string{fim.stdout, fim.stderr, js.stdout, js.stderr} {
		if strings.Contains(out, testKey) || strings.Contains(out, keyPart) {
			t.Errorf("doctor's output holds the key: %.600s", out)
		}
	}
}
