package e2e

import (
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"
)

// The user's key against a hostile model server, through the real bridge and the real agent
// binary: each path by which a server's words reach a log, the editor, a status or doctor (its
// status line, a redirect's target, its version string) is tried with the key in it, and the key
// must be nowhere (docs/security.md, "The model server").

// rawAnswer writes an HTTP/1.1 answer by hand, status line included: Go's server writes its own
// reason phrase, a hostile server writes whatever it likes there.
func rawAnswer(t *testing.T, w http.ResponseWriter, statusLine string, headers []string, body string) {
	t.Helper()
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		t.Errorf("hijack: %v", err)
		return
	}
	defer conn.Close()
	fmt.Fprintf(buf, "HTTP/1.1 %s\r\n", statusLine)
	for _, h := range headers {
		fmt.Fprintf(buf, "%s\r\n", h)
	}
	fmt.Fprintf(buf, "Content-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
	_ = buf.Flush()
}

// keyForms are the key as a server may quote it: whole, in base64, and as the Bearer value.
var keyForms = []string{testKey, keyPart, base64.StdEncoding.EncodeToString([]byte(testKey)), base64.RawURLEncoding.EncodeToString([]byte(testKey))}

// noKeyIn fails the test when any of texts holds the key in any of its forms.
func noKeyIn(t *testing.T, where string, texts ...string) {
	t.Helper()
	for _, text := range texts {
		for _, k := range keyForms {
			if strings.Contains(text, k) {
				at := strings.Index(text, k)
				t.Errorf("%s holds the key (%q): %.400s", where, k, text[max(0, at-200):])
			}
		}
	}
}

// TestBinaryModelServerKeyInTheStatusLine: a server whose status line quotes the key, a 401
// ("401 Bad key sk-…") and a 429 ("429 Slow down sk-…", repeated by every request it holds back):
// the editor's errors, the failed or slow status, the messages and the log name the status
// with the key taken out, and once the server is well the next request is served.
func TestBinaryModelServerKeyInTheStatusLine(t *testing.T) {
	for _, tc := range []struct {
		name, status string
		headers      []string
		state        string
	}{
		{"401", "401 Bad key " + testKey, nil, "failed"},
		{"429", "429 Slow down " + testKey, []string{"Retry-After: 1"}, "slow"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := newFakeModel(t)
			m.set(func(w http.ResponseWriter, r *http.Request, _ []byte) {
				// The body quotes the key as Basic credentials would carry it, too.
				body := `{"error":{"message":"the token ` + base64.StdEncoding.EncodeToString([]byte(testKey)) + ` is not valid"}}`
				rawAnswer(t, w, tc.status, append([]string{"Content-Type: application/json"}, tc.headers...), body)
			})
			s := startModelSession(t, m.srv.URL+"/v1", "fake-coder", "--timeout", "5s")
			var errs []string
			for range 2 {
				_, err := s.ask()
				if err == nil {
					t.Fatal("an explicit request against the server got no error")
				}
				errs = append(errs, err.Error())
				if !strings.Contains(err.Error(), tc.name) || !strings.Contains(err.Error(), "[key]") {
					t.Errorf("the editor's error %q does not give the status with the key taken out", err)
				}
			}
			s.Await(fakeeditor.Expectation{Description: "a " + tc.state + " status", Met: func(r *fakeeditor.Record) bool {
				n := len(r.Statuses)
				return n > 0 && r.Statuses[n-1].State == tc.state
			}})
			s.waitLog("[key]", "the server's status line")
			noKeyIn(t, "the editor's errors", errs...)
			noKeyIn(t, "the bridge's log", s.log())
			time.Sleep(time.Second) // the 429's pause
			s.recovers(m, errs...)
			noKeyIn(t, "the bridge's log", s.log())
		})
	}
}

// TestBinaryModelServerKeyInTheRedirect: a 307 to another port whose path holds the key is not
// followed, and the error, the status, the message and the log that name the location refused
// name it with the key taken out.
func TestBinaryModelServerKeyInTheRedirect(t *testing.T) {
	other := newFakeModel(t)
	_, port, _ := net.SplitHostPort(other.srv.Listener.Addr().String())
	location := "http://127.0.0.1:" + port + "/k/" + testKey + "/v1/completions"
	shown := "http://127.0.0.1:" + port + "/k/[key]/v1/completions"
	m := newFakeModel(t)
	m.set(func(w http.ResponseWriter, r *http.Request, _ []byte) {
		http.Redirect(w, r, location, http.StatusTemporaryRedirect)
	})
	s := startModelSession(t, m.srv.URL, "fake-coder")
	_, err := s.ask()
	if err == nil || !strings.Contains(err.Error(), shown) || !strings.Contains(err.Error(), "not followed") {
		t.Fatalf("the editor's error %v, want one that names %s as not followed", err, shown)
	}
	s.Await(fakeeditor.Expectation{Description: "a failed status naming the location", Met: func(r *fakeeditor.Record) bool {
		n := len(r.Statuses)
		return n > 0 && r.Statuses[n-1].State == "failed" && strings.Contains(r.Statuses[n-1].Message, shown)
	}})
	s.Await(fakeeditor.ShownMessage(shown))
	s.waitLog(shown, "the location refused")
	if got := other.requests(); len(got) != 0 {
		t.Errorf("the server redirected to received %+v", got)
	}
	noKeyIn(t, "the editor's error", err.Error())
	s.recovers(m, err.Error())
}

// TestBinaryModelServerKeyInTheVersion: a server that says it is Ollama with the key in its
// version string: the agent's log line and doctor's report say which server it is, with the key
// taken out.
func TestBinaryModelServerKeyInTheVersion(t *testing.T) {
	m := newFakeModel(t)
	healthy := modelHealthy(t)
	m.set(func(w http.ResponseWriter, r *http.Request, body []byte) {
		if r.URL.Path == "/api/version" {
			_, _ = fmt.Fprintf(w, `{"version":"0.12.3 %s"}`, testKey)
			return
		}
		healthy(w, r, body)
	})
	// FIM asks what serves the model when the agent starts.
	s := startModelSession(t, m.srv.URL, "qwen2.5-coder:1.5b", "--model-format", "fim")
	s.waitLog("the server is Ollama 0.12.3 [key]", "the server's version")
	noKeyIn(t, "the bridge's log", s.log())

	bridge, _ := binaries(t)
	env := []string{"FAKE_MODEL_KEY=" + testKey}
	agent := []string{"--", bridge, "agent", "--model-url", m.srv.URL, "--model", "zeta-2", "--api-key-env", "FAKE_MODEL_KEY", "--verbose"}
	for _, args := range [][]string{agent, append([]string{"--json"}, agent...)} {
		r := runDoctor(t, t.TempDir(), env, args...)
		if !strings.Contains(r.stdout, "Ollama 0.12.3 [key]") {
			t.Errorf("doctor %s does not name the server with the key taken out:\n%s", args[0], r.stdout)
		}
		noKeyIn(t, "doctor's output", r.stdout, r.stderr)
	}
}

// TestBinaryKeyEnvThatIsAKey: the key itself given where its variable's name belongs, or a name
// no variable can have, is refused by the agent, eval and doctor with a message that says what
// --api-key-env takes and never repeats what it was given.
func TestBinaryKeyEnvThatIsAKey(t *testing.T) {
	bridge, _ := binaries(t)
	for _, tc := range []struct{ given, want string }{
		{testKey, "looks like a key itself"},
		{"AbCdEf0123456789GhIjKlMnOp", "looks like a key itself"},
		{"my key!", "characters no variable's name has"},
	} {
		for _, args := range [][]string{
			{"agent", "--model-url", "http://127.0.0.1:1", "--model", "m", "--api-key-env", tc.given},
			{"eval", "--model-url", "http://127.0.0.1:1", "--model", "m", "--api-key-env", tc.given},
		} {
			cmd := exec.Command(bridge, args...)
			cmd.Stdin = strings.NewReader("")
			out, err := cmd.CombinedOutput()
			if exitCodeOf(err) != 2 || !strings.Contains(string(out), tc.want) || !strings.Contains(string(out), "--api-key-env MY_API_KEY") {
				t.Errorf("%s --api-key-env %q: exit %d, %q; want 2 and a message that says it %s and what to give", args[0], tc.given, exitCodeOf(err), out, tc.want)
			}
			if strings.Contains(string(out), tc.given) {
				t.Errorf("%s: the message repeats what --api-key-env was given: %q", args[0], out)
			}
		}
	}
	r := runDoctor(t, t.TempDir(), nil, "--", bridge, "agent", "--model-url", "http://127.0.0.1:1", "--model", "m", "--api-key-env", testKey)
	if !strings.Contains(r.stdout+r.stderr, "looks like a key itself") {
		t.Errorf("doctor does not show the agent's refusal:\n%s\n%s", r.stdout, r.stderr)
	}
	noKeyIn(t, "doctor's output", r.stdout, r.stderr)
}

// TestBinaryKeyNotInClear: the key is not sent over plain http:// to a server that is neither on
// this machine nor on a private network (the agent refuses to start, saying why and what to do),
// nor through a proxy over plain http:// to a server on the local network (the request fails,
// and the proxy receives nothing).
func TestBinaryKeyNotInClear(t *testing.T) {
	bridge, _ := binaries(t)
	cmd := exec.Command(bridge, "agent", "--model-url", "http://models.example.com/v1", "--model", "m", "--api-key-env", "FAKE_MODEL_KEY")
	cmd.Env = append(os.Environ(), "FAKE_MODEL_KEY="+testKey)
	cmd.Stdin = strings.NewReader("")
	out, err := cmd.CombinedOutput()
	for _, want := range []string{"plain http://", "in clear", "https://", "--allow-insecure-key"} {
		if exitCodeOf(err) != 2 || !strings.Contains(string(out), want) {
			t.Errorf("a key over plain http:// to models.example.com: exit %d, %q; want 2 and a message that says %q", exitCodeOf(err), out, want)
		}
	}
	noKeyIn(t, "the agent's message", string(out))

	// A server on the local network, named by one label, with a proxy for http:// set: the
	// proxy would read the key, so nothing goes there.
	proxy := newFakeModel(t)
	b := startBridgeEnv(t, append(os.Environ(), "FAKE_MODEL_KEY="+testKey, "HTTP_PROXY="+proxy.srv.URL, "http_proxy="+proxy.srv.URL, "NO_PROXY=", "no_proxy="),
		"--", bridge, "agent", "--model-url", "http://modelbox:8080", "--model", "fake-coder", "--api-key-env", "FAKE_MODEL_KEY")
	b.InitializeWith(fakeeditor.InitParams{Encodings: []string{"utf-16"}})
	b.waitMessage("acp-lsp-bridge-model is ready")
	b.Open(modelURI, modelDoc)
	_, err = b.InlineTriggered(modelURI, fakeeditor.At(2, 7), 1)
	if err == nil || !strings.Contains(err.Error(), "HTTP_PROXY") || !strings.Contains(err.Error(), "NO_PROXY") {
		t.Errorf("a request through a proxy over plain http://: error %v, want one that names HTTP_PROXY and NO_PROXY", err)
	}
	if got := proxy.requests(); len(got) != 0 {
		t.Errorf("the proxy received %+v", got)
	}
}

// TestBinaryHostedChatAPIIsBilled: a chat API that is neither on this machine nor on a private
// network (here api.example.com, reached through a proxy that is the fake server) bills each
// request: the bridge does not ask it ahead of the editor, and doctor says it is billed and why;
// with --billed=false it is asked ahead as a local server is.
func TestBinaryHostedChatAPIIsBilled(t *testing.T) {
	for _, billed := range []bool{true, false} {
		t.Run(fmt.Sprintf("billed=%v", billed), func(t *testing.T) {
			m := newFakeModel(t)
			healthy := modelHealthy(t)
			m.set(func(w http.ResponseWriter, r *http.Request, body []byte) {
				if r.URL.Path == "/props" { // doctor asks whether it is llama-server
					http.NotFound(w, r)
					return
				}
				healthy(w, r, body)
			})
			bridge, _ := binaries(t)
			env := append(os.Environ(), "HTTP_PROXY="+m.srv.URL, "http_proxy="+m.srv.URL, "NO_PROXY=", "no_proxy=")
			agent := []string{bridge, "agent", "--model-url", "http://api.example.com/v1", "--model", "zeta-2", "--verbose", "--no-prefetch"}
			if !billed {
				agent = append(agent, "--billed=false")
			}
			b := startBridgeEnv(t, env, append([]string{"--ask-ahead", "30ms", "--"}, agent...)...)
			b.InitializeWith(fakeeditor.InitParams{Encodings: []string{"utf-16"}})
			b.waitMessage("acp-lsp-bridge-model is ready")
			text := strings.Replace(modelDoc, "x := fo\n", "x := f\n", 1)
			b.Open(modelURI, text)
			if _, err := b.Inline(modelURI, fakeeditor.At(0, 0)); err != nil {
				t.Fatal(err)
			}
			base := m.posts()
			b.Edit(modelURI, len(text)-1, len(text)-1, "o")
			if billed {
				time.Sleep(300 * time.Millisecond) // ten times the ask-ahead's wait
			} else {
				waitBridgeLog(t, b.logFile, "asking ahead: the document is still")
			}
			items, err := b.Inline(modelURI, fakeeditor.At(2, 7))
			if err != nil || len(items) != 1 || !strings.HasSuffix("x := foo()", items[0].InsertText) {
				t.Fatalf("the editor's request: %+v %v, want the model's suggestion", items, err)
			}
			if n := m.posts() - base; n != 1 {
				t.Errorf("the server was asked %d times after the change, want once", n)
			}
			asked := strings.Contains(readFile(t, b.logFile), "asking ahead")
			if asked == billed {
				t.Errorf("billed %v: asked ahead %v", billed, asked)
			}
			for _, r := range m.requests() {
				if r.Method == http.MethodPost && r.Path != "/v1/completions" {
					t.Errorf("the proxy got %s %s", r.Method, r.Path)
				}
			}

			r := runDoctor(t, t.TempDir(), []string{"HTTP_PROXY=" + m.srv.URL, "http_proxy=" + m.srv.URL, "NO_PROXY=", "no_proxy="}, append([]string{"--json", "--"}, agent...)...)
			js := doctorJSON(t, r)
			if got, _ := field(js, "agent.model.billed").(bool); got != billed {
				t.Errorf("doctor's agent.model.billed %v, want %v", field(js, "agent.model.billed"), billed)
			}
			why, _ := field(js, "agent.model.billedWhy").(string)
			want := "neither on this machine nor on a private network"
			if !billed {
				want = "--billed=false"
			}
			if !strings.Contains(why, want) {
				t.Errorf("doctor's agent.model.billedWhy %q, want it to say %q", why, want)
			}
		})
	}
}
