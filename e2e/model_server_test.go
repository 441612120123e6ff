package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"
)

// The model agent (acp-lsp-bridge agent --model-url) in front of a model server that is broken or
// hostile, through the real bridge and the real agent binary: each test's fake server does one
// thing wrong, and the test asserts what the user sees (status, messages, the editor's error),
// what the server received, that the key is nowhere in the logs, and that once the server is well
// the next request is served (docs/security.md, "The model server").

// testKey is the API key the tests give the agent; keyPart is a piece of it, which a server that
// quotes the key in part (sk-test-7f3a…e8a0) would show.
const (
	testKey = "sk-test-7f3a9c2e5b1d4068a9e2c7f1b3d5e8a0"
	keyPart = "9c2e5b1d4068"
)

// seenRequest is a request a fake model server received.
type seenRequest struct {
	Method, Path, Auth string
}

// fakeModel is a model's server that records every request and answers with the behaviour set
// last; the default is a healthy server (modelHealthy).
type fakeModel struct {
	t   *testing.T
	srv *httptest.Server
	mu  sync.Mutex
	// seen are the requests received; behave answers them.
	seen   []seenRequest
	behave func(w http.ResponseWriter, r *http.Request, body []byte)
}

func newFakeModel(t *testing.T) *fakeModel {
	m := &fakeModel{t: t, behave: modelHealthy(t)}
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(m.srv.Close)
	return m
}

func (m *fakeModel) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	m.mu.Lock()
	m.seen = append(m.seen, seenRequest{r.Method, r.URL.Path, r.Header.Get("Authorization")})
	behave := m.behave
	m.mu.Unlock()
	behave(w, r, body)
}

func (m *fakeModel) set(f func(w http.ResponseWriter, r *http.Request, body []byte)) {
	m.mu.Lock()
	m.behave = f
	m.mu.Unlock()
}

func (m *fakeModel) requests() []seenRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]seenRequest(nil), m.seen...)
}

// posts counts the POSTs received.
func (m *fakeModel) posts() int {
	n := 0
	for _, r := range m.requests() {
		if r.Method == http.MethodPost {
			n++
		}
	}
	return n
}

// modelDoc is the document of every session: the cursor at the end of "fo", which the healthy
// server's model completes to "foo()".
const (
	modelDoc = "package p\n\nx := fo\n"
	modelURI = "file:///m.go"
)

// modelHealthy answers as a well model server: /api/version not found (no Ollama), a chat
// completion or a Zeta 2 raw completion that rewrites the region with "fo" completed.
func modelHealthy(t *testing.T) func(w http.ResponseWriter, r *http.Request, body []byte) {
	return modelAnswering(t, "foo()")
}

// modelAnswering is modelHealthy with "fo" rewritten to completion.
func modelAnswering(t *testing.T, completion string) func(w http.ResponseWriter, r *http.Request, body []byte) {
	return func(w http.ResponseWriter, r *http.Request, body []byte) {
		if r.URL.Path == "/api/version" {
			http.NotFound(w, r)
			return
		}
		text, ok := rewrite(body, completion)
		if !ok {
			t.Errorf("%s %s: a request the fake cannot read: %.300s", r.Method, r.URL.Path, body)
			http.Error(w, "unreadable", http.StatusBadRequest)
			return
		}
		switch r.URL.Path {
		case "/v1/chat/completions":
			_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": text}}}})
		case "/v1/completions":
			_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"finish_reason": "stop", "text": text}}})
		case "/api/generate":
			_ = json.NewEncoder(w).Encode(map[string]any{"response": text, "done": true, "done_reason": "stop"})
		default:
			http.NotFound(w, r)
		}
	}
}

// rewrite reads a chat or Zeta 2 request and writes the model's answer: the region with "fo"
// completed.
func rewrite(body []byte, completion string) (string, bool) {
	var req struct {
		Prompt   string `json:"prompt"`
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
	}
	if json.Unmarshal(body, &req) != nil {
		return "", false
	}
	if len(req.Messages) > 0 {
		user := req.Messages[len(req.Messages)-1].Content
		const start, end, cursor = "<|editable_region_start|>\n", "<|editable_region_end|>", "<|user_cursor_is_here|>"
		region, ok := between(user, start, end)
		if !ok {
			return "", false
		}
		region = strings.ReplaceAll(region, cursor, "")
		return start + strings.Replace(region, "x := fo\n", "x := "+completion+"\n", 1) + end, true
	}
	region, ok := between(req.Prompt, "<<<<<<< CURRENT\n", "=======\n")
	if !ok {
		return "", false
	}
	region = strings.ReplaceAll(region, "<|user_cursor|>", "")
	return strings.Replace(region, "x := fo\n", "x := "+completion+"\n", 1) + ">>>>>>> UPDATED\n", true
}

// modelHanging is a server that never answers (until the request ends).
func modelHanging(_ http.ResponseWriter, r *http.Request, _ []byte) {
	select {
	case <-r.Context().Done():
	case <-time.After(time.Minute):
	}
}

// modelSession is the real bridge with the model agent in front of a server, and modelDoc open.
type modelSession struct {
	*bridgeProc
	t *testing.T
}

// startModelSession starts the bridge with `acp-lsp-bridge agent --model-url url --model name
// --api-key-env FAKE_MODEL_KEY args...`, the key in the bridge's environment (which the agent
// inherits).
func startModelSession(t *testing.T, url, name string, args ...string) *modelSession {
	t.Helper()
	bridge, _ := binaries(t)
	cmd := append([]string{"--", bridge, "agent", "--model-url", url, "--model", name, "--api-key-env", "FAKE_MODEL_KEY"}, args...)
	b := startBridgeEnv(t, append(os.Environ(), "FAKE_MODEL_KEY="+testKey), cmd...)
	b.InitializeWith(fakeeditor.InitParams{Encodings: []string{"utf-16"}, Capabilities: map[string]any{
		"window": map[string]any{"workDoneProgress": true},
	}})
	b.waitMessage("acp-lsp-bridge-model is ready")
	b.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": modelURI, "languageId": "go", "version": 1, "text": modelDoc,
	}})
	return &modelSession{bridgeProc: b, t: t}
}

// ask asks for a suggestion by hand at the end of "fo".
func (s *modelSession) ask() ([]fakeeditor.InlineItem, error) {
	return s.InlineTriggered(modelURI, fakeeditor.At(2, 7), 1)
}

// wantServed asks by hand until the suggestion comes (a server that failed may still be in its
// backoff for a moment), and fails the test when it has not within 15 s.
func (s *modelSession) wantServed() {
	s.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		items, err := s.ask()
		// The item inserts at the cursor, after "fo", or replaces a range before it.
		if err == nil && len(items) == 1 && items[0].InsertText != "" && strings.HasSuffix("x := foo()", items[0].InsertText) {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("the healthy server's suggestion never came: items %+v, error %v", items, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// recovers makes m healthy and expects the next request to be served and the status to be ready
// again, with the key nowhere (noKeyAnywhere, extra included).
func (s *modelSession) recovers(m *fakeModel, extra ...string) {
	s.t.Helper()
	m.set(modelHealthy(s.t))
	s.wantServed()
	s.Await(fakeeditor.StatusIs("ready", ""))
	s.noKeyAnywhere(extra...)
}

// log is the bridge's log, which holds the agent's stderr.
func (s *modelSession) log() string {
	data, err := os.ReadFile(s.logFile)
	if err != nil {
		s.t.Fatal(err)
	}
	return string(data)
}

// waitLog waits up to 5 s for want in the bridge's log, and fails the test with why when it never
// comes. The agent's stderr reaches that log through the bridge, after what the editor was
// answered.
func (s *modelSession) waitLog(want, why string) {
	s.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(s.log(), want) {
		if time.Now().After(deadline) {
			s.t.Errorf("%s: the bridge's log does not say %q", why, want)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// noKeyAnywhere fails the test when the key, whole or in part, is in the bridge's log (with the
// agent's), in anything the editor was sent, or in extra.
func (s *modelSession) noKeyAnywhere(extra ...string) {
	s.t.Helper()
	rec := s.Record()
	places := map[string]string{"the bridge's log": s.log()}
	for i, m := range rec.Said {
		places[fmt.Sprintf("message %d to the editor", i)] = m
	}
	for i, st := range rec.Statuses {
		places[fmt.Sprintf("status %d", i)] = st.Message
	}
	for i, e := range extra {
		places[fmt.Sprintf("extra %d", i)] = e
	}
	for where, text := range places {
		for _, k := range []string{testKey, keyPart} {
			if strings.Contains(text, k) {
				s.t.Errorf("%s holds the key (%q): %.400s", where, k, text[max(0, strings.Index(text, k)-200):])
			}
		}
	}
}

// messagesWith counts the window/showMessage texts holding substr.
func (s *modelSession) messagesWith(substr string) int {
	n := 0
	for _, m := range s.Record().Messages {
		if strings.Contains(m, substr) {
			n++
		}
	}
	return n
}

// TestBinaryModelServerRedirects: a 307 to another port of the same host and a 302 to
// localhost:OTHER are not followed: the other server receives nothing (neither the key nor the
// code), the editor's error and the failed status name the location refused, and the log says
// it. Once the server answers itself, the next request is served and the status is ready again.
func TestBinaryModelServerRedirects(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		host   func(port string) string
	}{
		{"307 to another port", http.StatusTemporaryRedirect, func(port string) string { return "127.0.0.1:" + port }},
		{"302 to localhost", http.StatusFound, func(port string) string { return "localhost:" + port }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			other := newFakeModel(t)
			_, port, _ := net.SplitHostPort(other.srv.Listener.Addr().String())
			location := "http://" + tc.host(port) + "/v1/chat/completions"
			m := newFakeModel(t)
			m.set(func(w http.ResponseWriter, r *http.Request, _ []byte) {
				http.Redirect(w, r, location, tc.status)
			})
			s := startModelSession(t, m.srv.URL, "fake-coder")
			_, err := s.ask()
			if err == nil || !strings.Contains(err.Error(), location) || !strings.Contains(err.Error(), "not followed") {
				t.Fatalf("the editor's error %v, want one that names %s as not followed", err, location)
			}
			s.Await(fakeeditor.Expectation{Description: "a failed status naming the location", Met: func(r *fakeeditor.Record) bool {
				n := len(r.Statuses)
				return n > 0 && r.Statuses[n-1].State == "failed" && strings.Contains(r.Statuses[n-1].Message, location)
			}})
			s.Await(fakeeditor.ShownMessage(location))
			if got := other.requests(); len(got) != 0 {
				t.Errorf("the server redirected to received %+v", got)
			}
			if !strings.Contains(s.log(), location) {
				t.Errorf("the log does not name the location refused")
			}
			// Automatic requests meanwhile do not reach the server.
			before := m.posts()
			for range 3 {
				if items, err := s.Inline(modelURI, fakeeditor.At(2, 7)); err != nil || len(items) != 0 {
					t.Errorf("an automatic request while the address is refused: items %v, error %v", items, err)
				}
			}
			if m.posts() != before {
				t.Errorf("automatic requests reached the server after it redirected: %d POSTs, %d before", m.posts(), before)
			}
			s.recovers(m, err.Error())
			if got := other.requests(); len(got) != 0 {
				t.Errorf("the server redirected to received %+v", got)
			}
		})
	}
}

// TestBinaryModelServerRefusesTheKey: a 401 that quotes the key (whole, and in part as some
// services do) and a 403: the status is failed with a message naming the variable and the server,
// the user is told once whatever the number of requests, automatic requests no longer reach the
// server while explicit ones report the same, the key is nowhere in the logs, the trace or what
// the editor got, and once the key is accepted again the next request is served.
func TestBinaryModelServerRefusesTheKey(t *testing.T) {
	for _, status := range []int{http.StatusUnauthorized, http.StatusForbidden} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			t.Parallel()
			m := newFakeModel(t)
			m.set(func(w http.ResponseWriter, r *http.Request, _ []byte) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(status)
				quoted := r.Header.Get("Authorization")
				_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
					"message": "Incorrect API key provided: " + strings.TrimPrefix(quoted, "Bearer ") + " (" + quoted + "; sk-test-7f3a****" + keyPart + "****). You can find your API key in your account.",
				}})
			})
			s := startModelSession(t, m.srv.URL+"/v1", "fake-coder", "--timeout", "5s")
			var errs []string
			for range 3 {
				_, err := s.ask()
				if err == nil {
					t.Fatal("an explicit request against a refused key got no error")
				}
				errs = append(errs, err.Error())
				for _, want := range []string{"FAKE_MODEL_KEY", m.srv.URL, fmt.Sprint(status)} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("the editor's error %q does not say %q", err, want)
					}
				}
			}
			s.Await(fakeeditor.Expectation{Description: "a failed status naming the variable and the server", Met: func(r *fakeeditor.Record) bool {
				n := len(r.Statuses)
				return n > 0 && r.Statuses[n-1].State == "failed" && strings.Contains(r.Statuses[n-1].Message, "FAKE_MODEL_KEY") && strings.Contains(r.Statuses[n-1].Message, m.srv.URL)
			}})
			s.Await(fakeeditor.ShownMessage("refused the API key in FAKE_MODEL_KEY"))
			posts := m.posts()
			for range 5 {
				if items, err := s.Inline(modelURI, fakeeditor.At(2, 7)); err != nil || len(items) != 0 {
					t.Errorf("an automatic request while the key is refused: items %v, error %v", items, err)
				}
			}
			if m.posts() != posts {
				t.Errorf("automatic requests reached the server after it refused the key: %d POSTs, %d before", m.posts(), posts)
			}
			if posts != 3 {
				t.Errorf("the server got %d POSTs for 3 explicit requests", posts)
			}
			if n := s.messagesWith("refused the API key"); n != 1 {
				t.Errorf("told %d times of the refused key, want once: %q", n, s.Record().Messages)
			}
			for _, r := range m.requests() {
				if r.Auth != "Bearer "+testKey {
					t.Errorf("the server got Authorization %q", r.Auth)
				}
			}
			s.recovers(m, errs...)
		})
	}
}

// TestBinaryModelServerKeyNotInTrace: the bridge's wire trace (--trace), which records what the
// agent sends, holds the server's refusal without the key it quoted.
func TestBinaryModelServerKeyNotInTrace(t *testing.T) {
	m := newFakeModel(t)
	m.set(func(w http.ResponseWriter, r *http.Request, _ []byte) {
		http.Error(w, `{"error":"invalid key `+strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")+`"}`, http.StatusUnauthorized)
	})
	bridge, _ := binaries(t)
	trace := t.TempDir() + "/trace.jsonl"
	b := startBridgeEnv(t, append(os.Environ(), "FAKE_MODEL_KEY="+testKey), "--trace", trace, "--", bridge, "agent", "--model-url", m.srv.URL, "--model", "fake-coder", "--api-key-env", "FAKE_MODEL_KEY")
	b.InitializeWith(fakeeditor.InitParams{Encodings: []string{"utf-16"}})
	b.waitMessage("acp-lsp-bridge-model is ready")
	b.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": modelURI, "languageId": "go", "version": 1, "text": modelDoc}})
	if _, err := b.InlineTriggered(modelURI, fakeeditor.At(2, 7), 1); err == nil || !strings.Contains(err.Error(), "invalid key [key]") {
		t.Fatalf("the editor's error %v, want the server's words with the key taken out", err)
	}
	data, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "credentials_refused") {
		t.Fatalf("the trace does not hold the agent's error:\n%.2000s", data)
	}
	if strings.Contains(string(data), testKey) || strings.Contains(string(data), keyPart) {
		t.Errorf("the trace holds the key")
	}
}

// TestBinaryModelServerRateLimit: a server that answers 429 with Retry-After: 2 while the user
// types 10 keys a second: the agent asks it once per pause (not once per key), the user is told
// once, the status is slow while it lasts, an explicit request meanwhile is answered at once with
// when to try again, and once the server takes requests the next one is served.
func TestBinaryModelServerRateLimit(t *testing.T) {
	m := newFakeModel(t)
	m.set(func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		w.Header().Set("Retry-After", "2")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = io.WriteString(w, `{"error":{"message":"Rate limit reached for requests","type":"requests"}}`)
	})
	s := startModelSession(t, m.srv.URL, "fake-coder")
	// Type a comment on a line of its own, asking automatically after each key.
	s.Notify("textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": modelURI, "version": 2},
		"contentChanges": []any{map[string]any{"text": modelDoc + "// \n"}},
	})
	began := time.Now()
	const keys = 30
	text := modelDoc + "// "
	for i := range keys {
		text += "a"
		s.Notify("textDocument/didChange", map[string]any{
			"textDocument":   map[string]any{"uri": modelURI, "version": 3 + i},
			"contentChanges": []any{map[string]any{"text": text + "\n"}},
		})
		if _, err := s.Inline(modelURI, fakeeditor.At(3, 3+i+1)); err != nil {
			t.Errorf("an automatic request while rate-limited got an error: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	took := time.Since(began)
	// One request per pause of 2 s, and one more for a pause that ended as the typing did.
	if got, most := m.posts(), int(took/(2*time.Second))+2; got > most {
		t.Errorf("%d of %d automatic requests reached the server in %v, want at most %d (one per Retry-After)", got, keys, took.Round(time.Millisecond), most)
	}
	s.Await(fakeeditor.Expectation{Description: "a slow status saying when suggestions resume", Met: func(r *fakeeditor.Record) bool {
		for _, st := range r.Statuses {
			if st.State == "slow" && strings.Contains(st.Message, "resume in") {
				return true
			}
		}
		return false
	}})
	// The first explicit request may find the pause over and reach the server, which starts
	// another; the second, at once, must not reach it.
	for i := range 2 {
		posts := m.posts()
		_, err := s.ask()
		if err == nil || !strings.Contains(err.Error(), "not asked again for") || !strings.Contains(err.Error(), "429") {
			t.Errorf("an explicit request against a rate-limited server: error %v, want one saying when to try again", err)
		}
		if i == 1 && m.posts() != posts {
			t.Errorf("the explicit request during the pause reached the server")
		}
	}
	if n := s.messagesWith("asked for a pause"); n != 1 {
		t.Errorf("told %d times of the rate limit, want once: %q", n, s.Record().Messages)
	}
	s.recovers(m)
}

// TestBinaryModelServerHugeError: a 3 MiB error message from a failing server (500) reaches
// neither the editor nor the log whole; three failures in a row make the status failed and tell
// the user once; the server is not asked while it backs off, and once well the next request is
// served.
func TestBinaryModelServerHugeError(t *testing.T) {
	m := newFakeModel(t)
	huge := strings.Repeat("overloaded ", 3<<20/11)
	m.set(func(w http.ResponseWriter, _ *http.Request, _ []byte) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": huge}})
	})
	s := startModelSession(t, m.srv.URL, "fake-coder")
	var errs []string
	for range 3 {
		_, err := s.ask()
		if err == nil {
			t.Fatal("an explicit request against a failing server got no error")
		}
		if len(err.Error()) > 1000 || !strings.Contains(err.Error(), "500 Internal Server Error") {
			t.Errorf("the editor's error is %d bytes: %.300s…", len(err.Error()), err)
		}
		errs = append(errs, err.Error())
	}
	if m.posts() > 2 {
		t.Errorf("%d POSTs for 3 requests in a row against a server that fails: no backoff", m.posts())
	}
	s.Await(fakeeditor.StatusIs("failed", ""))
	s.Await(fakeeditor.ShownMessage("could not get 3 suggestions in a row"))
	if log := s.log(); strings.Contains(log, strings.Repeat("overloaded ", 100)) || len(log) > 256<<10 {
		t.Errorf("the log holds the server's error at length (%d bytes)", len(log))
	}
	for _, m := range s.Record().Said {
		if len(m) > 2000 {
			t.Errorf("a message of %d bytes to the editor: %.200s…", len(m), m)
		}
	}
	s.recovers(m, errs...)
}

// TestBinaryModelServerHangsBeforeTheKindCheck: with a raw format, the first request asks the
// server whether it is Ollama; against a server that hangs, that check and the request together
// take the agent's --timeout, not a fixed time on top of it. The check that got no answer is
// asked again once the server answers.
func TestBinaryModelServerHangsBeforeTheKindCheck(t *testing.T) {
	m := newFakeModel(t)
	m.set(modelHanging)
	s := startModelSession(t, m.srv.URL, "zeta-2", "--timeout", "2s")
	began := time.Now()
	_, err := s.ask()
	took := time.Since(began)
	if err == nil || !strings.Contains(err.Error(), "within 2s") {
		t.Fatalf("the editor's error %v, want a timeout within the agent's 2s", err)
	}
	// The check used to take 3 s of its own before the request's 2 s: 5 s.
	if took > 4*time.Second {
		t.Errorf("the first request took %v with --timeout 2s", took.Round(time.Millisecond))
	}
	got := m.requests()
	if len(got) != 2 || got[0].Path != "/api/version" || got[1].Path != "/v1/completions" {
		t.Errorf("the server got %+v, want the check and then the request within the timeout", got)
	}
	m.set(modelHealthy(t))
	s.wantServed()
	var paths []string
	for _, r := range m.requests()[2:] {
		paths = append(paths, r.Method+" "+r.Path)
	}
	if len(paths) < 2 || paths[0] != "GET /api/version" || paths[len(paths)-1] != "POST /v1/completions" {
		t.Errorf("after the server came back: %v, want the check asked again, then the completion", paths)
	}
	s.waitLog("the server is OpenAI-compatible (no Ollama at /api/version)", "what serves the model")
	s.noKeyAnywhere()
}

// serveOn is a fake model's server doing behave on ln (an address that nothing listened on
// before: the server started later), closed when the test ends.
func serveOn(t *testing.T, ln net.Listener, behave behaviour) *fakeModel {
	m := &fakeModel{t: t, behave: behave}
	m.srv = httptest.NewUnstartedServer(http.HandlerFunc(m.serve))
	m.srv.Listener.Close()
	m.srv.Listener = ln
	m.srv.Start()
	t.Cleanup(m.srv.Close)
	return m
}

// TestBinaryModelServerOllamaStartsLater: Ollama is down when the first raw prompt goes out, and
// up for the next: the agent asks again what serves the model, finds Ollama, and sends the raw
// prompt to /api/generate (never to Ollama's /v1/completions, which would wrap it in the chat
// template), and says so in the log.
func TestBinaryModelServerOllamaStartsLater(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there: Ollama is not started yet
	s := startModelSession(t, "http://"+addr, "zeta-2")
	if _, err := s.ask(); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("a request with no server: error %v, want the connection refused", err)
	}
	ln, err = net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("the port was taken meanwhile: %v", err)
	}
	healthy := modelHealthy(t)
	ollama := serveOn(t, ln, func(w http.ResponseWriter, r *http.Request, body []byte) {
		switch r.URL.Path {
		case "/api/version":
			_, _ = io.WriteString(w, `{"version":"0.12.3"}`)
		case "/v1/completions":
			t.Errorf("a raw prompt went to Ollama's /v1/completions")
			http.Error(w, "wrapped", http.StatusBadRequest)
		default:
			healthy(w, r, body)
		}
	})
	s.wantServed()
	var paths []string
	for _, r := range ollama.requests() {
		paths = append(paths, r.Method+" "+r.Path)
	}
	if len(paths) < 2 || paths[0] != "GET /api/version" || paths[1] != "POST /api/generate" {
		t.Errorf("Ollama got %v, want the check, then the raw prompt at /api/generate", paths)
	}
	s.waitLog("the server is Ollama 0.12.3", "Ollama found")
	s.noKeyAnywhere()
}

// TestBinaryModelServerUnreachable: nothing listens at the model's address (llama-server not
// started yet). The first suggestion asked while typing makes the status failed, saying where and
// what to start; the user is told once; a request by hand gets the same words, not the system's
// dial error; the agent's log warns once. Once the server runs there, the next request is served
// and the status is ready again.
func TestBinaryModelServerUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there
	s := startModelSession(t, "http://"+addr, "zeta-2")
	if _, err := s.InlineTriggered(modelURI, fakeeditor.At(2, 7), 2); err != nil {
		t.Fatalf("a request while typing, with no server: error %v, want an empty result", err)
	}
	say := []string{"nothing answers at http://" + addr + " (", "llama-server", "--model-url"}
	if runtime.GOOS != "windows" { // (Windows words the refusal its own way)
		say = append(say, "connection refused")
	}
	s.Await(statusSaid("failed", say...), messageSaid(say...))
	_, err = s.ask()
	if err == nil {
		t.Fatal("a request by hand with no server: no error")
	}
	for _, w := range say {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("the editor's error %q does not say %q", err, w)
		}
	}
	if strings.Contains(err.Error(), "dial tcp") {
		t.Errorf("the editor's error %q shows the system's dial error", err)
	}
	if _, err := s.InlineTriggered(modelURI, fakeeditor.At(2, 7), 2); err != nil {
		t.Fatalf("a second request while typing: %v", err)
	}
	if n := s.messagesWith("nothing answers at"); n != 1 {
		t.Errorf("told %d times that nothing answers, want once: %q", n, s.Record().Messages)
	}
	s.waitLog("model: nothing answers at http://"+addr+" (", "the agent's warning")
	s.waitLog("): is the model's server (llama-server, Ollama, vLLM) running there?", "the agent's warning")
	if n := strings.Count(s.log(), `level=WARN msg=\"model: nothing answers at`); n != 1 {
		t.Errorf("the agent's log warns %d times that nothing answers, want once", n)
	}
	// Three requests failed the same way; the bridge's own log warns of the first alone.
	warned := 0
	for _, line := range strings.Split(s.log(), "\n") {
		if strings.Contains(line, `"level":"warn"`) && strings.Contains(line, "the agent's service failed") && strings.Contains(line, "backend_unreachable") {
			warned++
		}
	}
	if warned != 1 {
		t.Errorf("the bridge's log warns %d times that the agent's service failed, want once", warned)
	}
	ln, err = net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("the port was taken meanwhile: %v", err)
	}
	serveOn(t, ln, modelHealthy(t))
	s.wantServed()
	s.Await(fakeeditor.StatusIs("ready", ""))
}

// TestBinaryModelServerInvalidText: an answer that would write a NUL byte, or the U+FFFD that
// invalid UTF-8 in the server's JSON becomes, shows nothing, and the log says why; the next
// answer is served.
func TestBinaryModelServerInvalidText(t *testing.T) {
	for _, tc := range []struct {
		name, raw, why string
	}{
		{"NUL", `foo(\u0000)`, "the control character U+0000"},
		{"invalid UTF-8", "foo(\xff\xfe)", "U+FFFD"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := newFakeModel(t)
			m.set(func(w http.ResponseWriter, r *http.Request, body []byte) {
				text, ok := rewrite(body, "@@")
				if !ok {
					http.Error(w, "unreadable", http.StatusBadRequest)
					return
				}
				enc, _ := json.Marshal(text)
				content := strings.Replace(string(enc), "@@", tc.raw, 1)
				_, _ = io.WriteString(w, `{"choices":[{"finish_reason":"stop","message":{"role":"assistant","content":`+content+`}}]}`)
			})
			s := startModelSession(t, m.srv.URL, "fake-coder")
			items, err := s.ask()
			if err != nil || len(items) != 0 {
				t.Fatalf("an answer with %s: items %+v, error %v; want nothing shown", tc.name, items, err)
			}
			if m.posts() != 1 {
				t.Fatalf("the server got %d POSTs", m.posts())
			}
			s.waitLog("answer dropped: unfit text: the answer holds "+tc.why, "the answer dropped")
			m.set(modelHealthy(t))
			s.wantServed()
		})
	}
}

// TestBinaryModelServerTimeouts: three requests in a row that the model does not answer within
// the agent's --timeout tell the user once, naming the agent's timeout, and make the status slow;
// once the model answers, the status is ready again and the suggestion shows.
func TestBinaryModelServerTimeouts(t *testing.T) {
	m := newFakeModel(t)
	m.set(modelHanging)
	s := startModelSession(t, m.srv.URL, "fake-coder", "--timeout", "1s")
	for i := range 3 {
		_, err := s.ask()
		if err == nil || !strings.Contains(err.Error(), "within 1s (the agent's --timeout)") {
			t.Fatalf("request %d: error %v, want the model's timeout", i+1, err)
		}
	}
	s.Await(fakeeditor.ShownMessage("did not answer 3 suggestions in a row in time"))
	s.Await(fakeeditor.StatusIs("slow", ""))
	if n := s.messagesWith("in a row in time"); n != 1 {
		t.Errorf("told %d times of the timeouts, want once", n)
	}
	if !strings.Contains(s.Record().Statuses[len(s.Record().Statuses)-1].Message, "--timeout") {
		t.Errorf("the slow status does not name the agent's --timeout: %+v", s.Record().Statuses[len(s.Record().Statuses)-1])
	}
	s.recovers(m)
}

// TestDoctorModelServerRefusesTheKey: doctor --prompt against the model agent whose server
// refuses the key and quotes it: the report's sample says the key was refused and names the
// variable, and neither the report (text or JSON) nor the agent's stderr it shows holds the key.
func TestDoctorModelServerRefusesTheKey(t *testing.T) {
	m := newFakeModel(t)
	m.set(func(w http.ResponseWriter, r *http.Request, _ []byte) {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, `{"error":{"message":"Incorrect API key provided: `+strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")+`"}}`)
	})
	bridge, _ := binaries(t)
	env := []string{"FAKE_MODEL_KEY=" + testKey}
	agent := []string{"--", bridge, "agent", "--model-url", m.srv.URL, "--model", "fake-coder", "--api-key-env", "FAKE_MODEL_KEY", "--verbose"}
	text := runDoctor(t, t.TempDir(), env, append([]string{"--prompt"}, agent...)...)
	if !strings.Contains(text.stdout, "refused the API key in FAKE_MODEL_KEY") {
		t.Errorf("the report does not say the key was refused:\n%s", text.stdout)
	}
	js := runDoctor(t, t.TempDir(), env, append([]string{"--json", "--prompt"}, agent...)...)
	if e, _ := field(doctorJSON(t, js), "sample.error").(string); !strings.Contains(e, "FAKE_MODEL_KEY") || !strings.Contains(e, "[key]") {
		t.Errorf("sample.error %q, want the refusal with the key taken out", e)
	}
	if m.posts() != 2 {
		t.Errorf("the server got %d POSTs for two samples", m.posts())
	}
	for _, out := range []string{text.stdout, text.stderr, js.stdout, js.stderr} {
		if strings.Contains(out, testKey) || strings.Contains(out, keyPart) {
			t.Errorf("doctor's output holds the key: %.600s", out)
		}
	}
}

// TestNeovimPluginModelServerRefusesTheKey: in real Neovim with the plugin and the model agent, a
// user typing against a server that refuses the key sees no ghost text, the statusline "✗ next
// edit" and one message naming the variable and the server, whatever they type next, and the key
// nowhere; once the server takes the key, <M-CR> shows the suggestion and the statusline is ready
// again (testdata/nvim/plugin_model_key.lua).
func TestNeovimPluginModelServerRefusesTheKey(t *testing.T) {
	skipOnWindows(t, "Neovim runs on Linux here")
	flag := filepath.Join(t.TempDir(), "healthy")
	m := newFakeModel(t)
	healthy := modelHealthy(t)
	var refused atomic.Int32
	m.set(func(w http.ResponseWriter, r *http.Request, body []byte) {
		if _, err := os.Stat(flag); err == nil {
			healthy(w, r, body)
			return
		}
		refused.Add(1)
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, `{"error":{"message":"Incorrect API key provided: `+strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")+`"}}`)
	})
	out, _ := runNeovimPlugin(t, "plugin_model_key.lua", "ALL PASSED", "MODEL_URL="+m.srv.URL, "FAKE_MODEL_KEY="+testKey, "MODEL_HEALTHY_FLAG="+flag)
	wantSteps(t, out, "failed", "told once", "ready again")
	if strings.Contains(out, testKey) {
		t.Errorf("Neovim's output holds the key")
	}
	// Once refused, typing on asks the server nothing: the requests refused are those the first
	// keys had in flight.
	if n := refused.Load(); n > 3 {
		t.Errorf("%d requests were refused: typing on after the refusal still reached the server", n)
	}
}
