package e2e

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
)

// TestDoctorFailsOnABrokenModelSetup: doctor --prompt in front of the model agent, for each way a
// model server setup is broken (nothing listening, Ollama without the model, a host that does not
// resolve, a refused key, a forbidden one, a rate limit, a server error), says FAIL with what to
// do, exits 1, and --json says ok false with failure "sample-failed", the sample's error and its
// advice; a server that answers is OK. Without --prompt, a server that does not answer at all
// fails the same way (failure "model-server-unreachable").
func TestDoctorFailsOnABrokenModelSetup(t *testing.T) {
	bridge, _ := binaries(t)
	status := func(code int, body string) string {
		m := newFakeModel(t)
		m.set(func(w http.ResponseWriter, r *http.Request, _ []byte) {
			if r.URL.Path == "/api/version" {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(code)
			fmt.Fprint(w, body)
		})
		return m.srv.URL
	}
	ollama := func() string {
		m := newFakeModel(t)
		m.set(func(w http.ResponseWriter, r *http.Request, _ []byte) {
			if r.URL.Path == "/api/version" {
				fmt.Fprint(w, `{"version":"0.12.3"}`)
				return
			}
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"error":"model \"qwen2.5-coder:7b\" not found, try pulling it first"}`)
		})
		return m.srv.URL
	}
	refused := func() string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close() // nothing listens there now
		return "http://" + addr
	}
	for _, tc := range []struct {
		name, url string
		advice    string // in the fix line and the JSON's sample.advice
		ok        bool
	}{
		{"nothing listening", refused(), "nothing answers at the model's address", false},
		{"ollama without the model", ollama(), "ollama pull", false},
		{"a host that does not resolve", "http://no-such-host.invalid:11434", "does not resolve", false},
		{"a refused key", status(401, `{"error":{"message":"invalid api key"}}`), "where the editor is started, and start the editor again", false},
		{"a forbidden key", status(403, `{"detail":"forbidden"}`), "refused the key", false},
		{"a rate limit", status(429, `{"error":{"message":"slow down"}}`), "asks for a pause", false},
		{"a server error", status(500, `{"error":{"message":"boom"}}`), "HTTP 5xx", false},
		{"a server that answers", status(200, `{"choices":[{"text":"m\n","finish_reason":"stop"}]}`), "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			args := []string{"--prompt", "--", bridge, "agent", "--model-url", tc.url, "--model", "qwen2.5-coder:7b", "--model-format", "chat", "--timeout", "5s"}
			r := runDoctor(t, t.TempDir(), []string{"ACP_TEST_KEY=k"}, args...)
			last := lastLine(r.stdout)
			if tc.ok {
				if r.code != 0 || !strings.HasPrefix(last, "OK") {
					t.Errorf("exit %d, verdict %q; want OK:\n%s", r.code, last, r.stdout)
				}
				// Its answer holds no edit the agent can read: the sample line says so, and why.
				if want := "with no suggestion: the agent kept its answer back (unreadable: the answer holds no marked region)"; !strings.Contains(r.stdout, want) {
					t.Errorf("the sample line does not say %q:\n%s", want, r.stdout)
				}
				// An answer came, so OK; but every answer in the editor would likely be unreadable
				// alike: a warning names the format asked in and the flag that changes it.
				if want := "warning    the sample's answer could not be read (the answer holds no marked region): the model may not write the format chat;"; !strings.Contains(r.stdout, want) || !strings.Contains(r.stdout, "--model-format") {
					t.Errorf("the report does not warn %q, naming --model-format:\n%s", want, r.stdout)
				}
				j := doctorJSON(t, runDoctor(t, t.TempDir(), nil, append([]string{"--json"}, args...)...))
				if q := field(j, "sample.quiet.rule"); q != "unreadable" {
					t.Errorf("--json: sample.quiet.rule %v, want unreadable (sample %v)", q, j["sample"])
				}
				if w := fmt.Sprint(j["warnings"]); !strings.Contains(w, "the sample's answer could not be read") {
					t.Errorf("--json: warnings %v, want the unreadable sample's", w)
				}
				return
			}
			if r.code != 1 || !strings.HasPrefix(last, "FAIL") || !strings.Contains(last, "the sample suggestion got no answer") {
				t.Errorf("exit %d, verdict %q; want FAIL, the sample:\n%s", r.code, last, r.stdout)
			}
			if !strings.Contains(r.stdout, "fix        ") || !strings.Contains(r.stdout, tc.advice) {
				t.Errorf("the report has no fix line saying %q:\n%s", tc.advice, r.stdout)
			}
			j := doctorJSON(t, runDoctor(t, t.TempDir(), nil, append([]string{"--json"}, args...)...))
			sample, _ := j["sample"].(map[string]any)
			if j["ok"] != false || j["failure"] != "sample-failed" || j["step"] != "nes/suggest" || sample == nil || sample["error"] == nil ||
				!strings.Contains(fmt.Sprint(j["advice"]), tc.advice) {
				t.Errorf("--json: ok %v, failure %v, step %v, advice %v, sample %v", j["ok"], j["failure"], j["step"], j["advice"], sample)
			}
			// Without --prompt, doctor still has the agent ask the server what it is: a server
			// that does not answer at all fails, with the same advice; one whose /api/version
			// answers 404 passes, though its suggestions would fail, as no suggestion was asked
			// (one that refuses the key there too: TestDoctorWithoutPromptRefusedKey).
			r = runDoctor(t, t.TempDir(), nil, args[1:]...)
			if down := tc.name == "nothing listening" || tc.name == "a host that does not resolve"; down {
				if r.code != 1 || !strings.Contains(lastLine(r.stdout), "the model's server does not answer") || !strings.Contains(r.stdout, "fix        ") {
					t.Errorf("without --prompt: exit %d, want FAIL, the server does not answer, a fix line:\n%s", r.code, r.stdout)
				}
			} else if r.code != 0 {
				t.Errorf("without --prompt, a server that answers: exit %d:\n%s", r.code, r.stdout)
			}
		})
	}
}

// TestDoctorWithoutPromptRefusedKey: a server that refuses the key on every path, /api/version
// too (llama-server with --api-key does), fails doctor without --prompt as well: the agent's
// question of what serves the model got the refusal every suggestion would get. The fix line says
// where to set the key; --json says model-server-refused-key. With the key it takes, doctor passes.
func TestDoctorWithoutPromptRefusedKey(t *testing.T) {
	bridge, _ := binaries(t)
	m := newFakeModel(t)
	m.set(func(w http.ResponseWriter, r *http.Request, _ []byte) {
		if r.Header.Get("Authorization") != "Bearer right-key" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"error":{"code":401,"message":"Invalid API Key","type":"authentication_error"}}`)
			return
		}
		http.NotFound(w, r)
	})
	args := []string{"--", bridge, "agent", "--model-url", m.srv.URL, "--model", "qwen2.5-coder:7b", "--model-format", "chat", "--api-key-env", "DOCTOR_TEST_KEY", "--timeout", "5s"}
	noKey := append([]string{}, args[:len(args)-4]...)
	noKey = append(noKey, args[len(args)-2:]...) // without --api-key-env
	for _, tc := range []struct {
		name, key, what string
		args            []string
	}{{"a wrong key", "wrong-key", "/api/version refused the API key in DOCTOR_TEST_KEY (401 Unauthorized: Invalid API Key)", args}, {"no key", "", "/api/version asks for an API key (401 Unauthorized: Invalid API Key)", noKey}} {
		t.Run(tc.name, func(t *testing.T) {
			env := []string{"DOCTOR_TEST_KEY=" + tc.key}
			args := tc.args
			r := runDoctor(t, t.TempDir(), env, args...)
			last := lastLine(r.stdout)
			if r.code != 1 || !strings.HasPrefix(last, "FAIL") || !strings.Contains(last, "the model's server refused the key") || !strings.Contains(last, "401") || !strings.Contains(last, tc.what) {
				t.Errorf("exit %d, verdict %q; want FAIL, the server refused the key (401):\n%s", r.code, last, r.stdout)
			}
			if !strings.Contains(r.stdout, "fix        ") || !strings.Contains(r.stdout, "where the editor is started") {
				t.Errorf("no fix line saying where to set the key:\n%s", r.stdout)
			}
			j := doctorJSON(t, runDoctor(t, t.TempDir(), env, append([]string{"--json"}, args...)...))
			if j["failure"] != "model-server-refused-key" || j["step"] != "model-server" || field(j, "agent.model.serverRefusedKey") != true {
				t.Errorf("--json: failure %v, step %v, agent.model %v", j["failure"], j["step"], field(j, "agent.model"))
			}
			if strings.Contains(r.stdout, "wrong-key") {
				t.Errorf("the report shows the key:\n%s", r.stdout)
			}
		})
	}
	r := runDoctor(t, t.TempDir(), []string{"DOCTOR_TEST_KEY=right-key"}, args...)
	if r.code != 0 || !strings.HasPrefix(lastLine(r.stdout), "OK") {
		t.Errorf("with the key the server takes: exit %d:\n%s", r.code, r.stdout)
	}
}
