package e2e

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"
)

// The model agent with the fill-in-the-middle and hosted formats (--model-format fim, codestral,
// mercury, sweep-api), through the real bridge and the real agent binary, in front of fakes of the
// services (hosted_fake_test.go): what each sends, what the editor shows of each answer and what
// accepting it makes of the buffer, and what the user sees when the service fails.

// startHostedSession starts the bridge with `acp-lsp-bridge agent --model-url url args...` as its
// agent, env added to the bridge's environment (which the agent inherits), and opens modelDoc
// (so that modelSession's ask and wantServed work). Without --api-key-env in args the agent reads
// the key from the format's own variable.
func startHostedSession(t *testing.T, env []string, url string, args ...string) *modelSession {
	t.Helper()
	bridge, _ := binaries(t)
	b := startBridgeEnv(t, append(os.Environ(), env...), append([]string{"--", bridge, "agent", "--model-url", url}, args...)...)
	b.InitializeWith(fakeeditor.InitParams{Encodings: []string{"utf-16"}, Capabilities: map[string]any{
		"window": map[string]any{"workDoneProgress": true},
	}})
	b.waitMessage("acp-lsp-bridge-model is ready")
	b.Open(modelURI, modelDoc)
	return &modelSession{bridgeProc: b, t: t}
}

// inlineAt asks for an inline completion by hand at p in uri and wants exactly one item.
func (s *modelSession) inlineAt(uri string, p fakeeditor.Pos) fakeeditor.InlineItem {
	s.t.Helper()
	items, err := s.InlineTriggered(uri, p, 1)
	if err != nil || len(items) != 1 {
		s.t.Fatalf("an inline completion at %v: items %+v, error %v; want one item", p, items, err)
	}
	return items[0]
}

// takeInlineEdit asks for the next edit anywhere in uri (textDocument/copilotInlineEdit, the
// surface of an edit away from the cursor), wants exactly one, and does what an editor does when
// the user takes it: the edit applied to the buffer, then its command run.
func (s *modelSession) takeInlineEdit(uri string, p fakeeditor.Pos) fakeeditor.InlineEdit {
	s.t.Helper()
	edits, err := s.InlineEdits(uri, p)
	if err != nil || len(edits) != 1 {
		s.t.Fatalf("the next edit at %v: edits %+v, error %v; want one", p, edits, err)
	}
	e := edits[0]
	start, err := s.OffsetOf(uri, e.Range.Start)
	if err != nil {
		s.t.Fatal(err)
	}
	end, err := s.OffsetOf(uri, e.Range.End)
	if err != nil {
		s.t.Fatal(err)
	}
	s.Edit(uri, start, end, e.Text)
	if e.Command != nil {
		s.Execute(*e.Command)
	}
	return e
}

// onlyRequests fails the test unless every request m received was method and path.
func onlyRequests(t *testing.T, m *fakeModel, method, path string) {
	t.Helper()
	for _, r := range m.requests() {
		if r.Method != method || r.Path != path {
			t.Errorf("the service received %s %s; want only %s %s", r.Method, r.Path, method, path)
		}
	}
}

// The document of the fill-in-the-middle tests: the cursor after "fo" (3:8), with text after it.
const (
	fimURI    = "file:///fim.go"
	fimDoc    = fimBefore + fimAfter
	fimBefore = "package p\n\nfunc main() {\n\tx := fo"
	fimAfter  = "\n\tprintln(x)\n}\n"
)

// completesAtTheCursor starts the agent with args (env added) in front of a fake serving as
// serving does, opens fimDoc, asks by hand at the cursor, wants the code model's "o()" shown
// inserted there, and accepts it: the buffer has the call finished. It returns the session, the
// fake and what the fake took.
func completesAtTheCursor(t *testing.T, serving func(*testing.T, *taken) behaviour, env []string, args ...string) (*modelSession, *fakeModel, *taken) {
	t.Helper()
	k := &taken{}
	m := newFakeModel(t)
	m.set(serving(t, k))
	s := startHostedSession(t, env, m.srv.URL, args...)
	s.Open(fimURI, fimDoc)
	cursor := fakeeditor.At(3, 8)
	it := s.inlineAt(fimURI, cursor)
	if it.InsertText != "o()" || it.Range == nil || *it.Range != fakeeditor.Span(cursor, cursor) {
		t.Errorf("the item %+v, want o() inserted at the cursor, 3:8", it)
	}
	s.Accept(fimURI, it)
	if got, want := s.Text(fimURI), fimBefore+"o()"+fimAfter; got != want {
		t.Errorf("after accepting, the buffer reads %q, want %q", got, want)
	}
	return s, m, k
}

// TestHostedCodestral: --model-format codestral, with the key in CODESTRAL_API_KEY and no --model:
// the agent posts to the service's /v1/fim/completions (nothing else) the model codestral-latest,
// the text before the cursor as prompt and the text after it as suffix, with the key as a Bearer
// token; the editor shows the answer inserted at the cursor, and accepting it gives the buffer
// with the call finished.
func TestHostedCodestral(t *testing.T) {
	s, m, k := completesAtTheCursor(t, codestralServing, []string{"CODESTRAL_API_KEY=" + testKey}, "--model-format", "codestral")
	var req fimRequest
	k.last(t, &req)
	if req.Model != "codestral-latest" || *req.Prompt != fimBefore || *req.Suffix != fimAfter {
		t.Errorf("the service got model %q, prompt %q, suffix %q; want codestral-latest and the text before and after the cursor", req.Model, *req.Prompt, *req.Suffix)
	}
	onlyRequests(t, m, "POST", "/v1/fim/completions")
	s.noKeyAnywhere()
}

// TestHostedFIMOllama: --model-format fim in front of Ollama: the agent finds Ollama at
// /api/version and sends the completion to /api/generate with the text after the cursor as suffix
// and raw unset (so that Ollama writes the model's own FIM prompt); the editor shows the answer at
// the cursor, and accepting it gives the buffer with the call finished.
func TestHostedFIMOllama(t *testing.T) {
	// --no-prefetch: the last request taken is the editor's, not the next one's prefetched.
	s, m, k := completesAtTheCursor(t, ollamaFIMServing, nil, "--model-format", "fim", "--model", "qwen2.5-coder:1.5b", "--no-prefetch")
	var req fimRequest
	k.last(t, &req)
	if req.Model != "qwen2.5-coder:1.5b" || *req.Prompt != fimBefore || *req.Suffix != fimAfter || req.Raw != nil {
		t.Errorf("Ollama got model %q, prompt %q, suffix %q, raw %v; want the text before and after the cursor, raw absent", req.Model, *req.Prompt, *req.Suffix, req.Raw)
	}
	if got := m.requests(); len(got) < 2 || got[0].Path != "/api/version" || got[1].Path != "/api/generate" {
		t.Errorf("Ollama got %+v, want the check, then the completion at /api/generate", got)
	}
	s.waitLog("the server is Ollama 0.12.3", "Ollama found")
}

// TestHostedFIMLlamaServer: --model-format fim in front of llama-server: the agent finds it by
// its /props and sends the completion to /infill, the lines above the cursor's as input_prefix,
// the cursor's line up to the cursor as prompt and the text after it as input_suffix; the editor
// shows the answer at the cursor, and accepting it gives the buffer with the call finished.
func TestHostedFIMLlamaServer(t *testing.T) {
	s, _, k := completesAtTheCursor(t, llamaInfillServing, nil, "--model-format", "fim", "--model", "qwen2.5-coder-1.5b-q8_0.gguf", "--no-prefetch")
	var req infillRequest
	k.last(t, &req)
	if *req.InputPrefix != "package p\n\nfunc main() {\n" || *req.Prompt != "\tx := fo" || *req.InputSuffix != fimAfter {
		t.Errorf("llama-server got input_prefix %q, prompt %q, input_suffix %q", *req.InputPrefix, *req.Prompt, *req.InputSuffix)
	}
	s.waitLog("the server is llama-server", "llama-server found")
}

// TestHostedMercury: --model-format mercury, with the key in INCEPTION_API_KEY: the user types on
// a line, and the agent posts to /v1/edit/completions one user message for mercury-edit with the
// file's region to edit, the cursor where the user is, and the edit just made in the history.
// Mercury's answer, the region rewritten in a code fence with a typo fixed on the next line, is
// shown as the next edit there, and taking it gives the buffer with the typo fixed. "None" shows
// nothing.
func TestHostedMercury(t *testing.T) {
	k := &taken{}
	m := newFakeModel(t)
	m.set(mercuryServing(t, k)) // rewrites nothing: "None"
	s := startHostedSession(t, []string{"INCEPTION_API_KEY=" + testKey}, m.srv.URL, "--model-format", "mercury", "--verbose")
	const uri = "file:///edit.go"
	s.Open(uri, "package p\n\nfunc main() {\n\tcount := \n\tprintln(cuont)\n}\n")
	at, err := s.OffsetOf(uri, fakeeditor.At(3, 10))
	if err != nil {
		t.Fatal(err)
	}
	s.Edit(uri, at, at, "1") // the user types the count
	cursor := fakeeditor.At(3, 11)

	// "None": nothing on any surface.
	if items, err := s.InlineTriggered(uri, cursor, 1); err != nil || len(items) != 0 {
		t.Errorf("Mercury answered None: items %+v, error %v; want nothing shown", items, err)
	}
	if edits, err := s.InlineEdits(uri, cursor); err != nil || len(edits) != 0 {
		t.Errorf("Mercury answered None: next edits %+v, error %v; want none", edits, err)
	}
	s.waitLog("Mercury answered None", "the answer None")

	m.set(mercuryServing(t, k, "println(cuont)", "println(count)"))
	e := s.takeInlineEdit(uri, cursor)
	if got, want := s.Text(uri), "package p\n\nfunc main() {\n\tcount := 1\n\tprintln(count)\n}\n"; got != want {
		t.Errorf("after taking the next edit %+v, the buffer reads %q, want %q", e, got, want)
	}
	if e.Range.Start.Line != 4 || e.Range.End.Line != 4 {
		t.Errorf("the next edit %+v, want it on line 4, where the typo is", e)
	}
	var req mercuryRequest
	k.last(t, &req)
	user := req.Messages[0].Content
	for _, want := range []string{
		"current_file_path: edit.go\n",
		mercuryEdit + "package p\n\nfunc main() {\n\tcount := 1" + mercuryCursor + "\n\tprintln(cuont)\n}\n" + mercuryEditEnd,
		"-\tcount := \n+\tcount := 1\n",
	} {
		if !strings.Contains(user, want) {
			t.Errorf("Mercury's prompt lacks %q:\n%s", want, user)
		}
	}
	onlyRequests(t, m, "POST", "/v1/edit/completions")
	s.noKeyAnywhere()
}

// TestHostedSweep: --model-format sweep-api, with the key in SWEEP_AI_TOKEN: the agent posts to
// /backend/next_edit_autocomplete the request compressed by brotli (Content-Encoding: br), with
// the file's contents and the cursor as a byte offset in them (the file has characters of two and
// four bytes before it); the service's answer, a replacement of byte offsets, is shown at the
// cursor and, accepted, finishes the call. An answer of two NDJSON lines, a replacement each on
// two lines, is shown as one next edit, and taking it makes both, in a file with CRLF line breaks
// too.
func TestHostedSweep(t *testing.T) {
	k := &taken{}
	m := newFakeModel(t)
	m.set(sweepServing(t, k, false, "x := fo\n", "x := foo()\n"))
	s := startHostedSession(t, []string{"SWEEP_AI_TOKEN=" + testKey}, m.srv.URL, "--model-format", "sweep-api")
	const uri = "file:///sweep.go"
	const doc = "package p\n\n// héllo, 𐐀\nfunc main() {\n\tx := fo\n}\n"
	s.Open(uri, doc)
	cursor := fakeeditor.At(4, 8)
	it := s.inlineAt(uri, cursor)
	var req sweepRequest
	k.last(t, &req)
	if req.FilePath != "sweep.go" || req.FileContents != doc || *req.Original != doc || req.CursorPosition != strings.Index(doc, "fo\n}")+2 {
		t.Errorf("Sweep got file_path %q, cursor_position %d, file_contents %q, original_file_contents %q; want sweep.go, %d and the buffer, unedited", req.FilePath, req.CursorPosition, req.FileContents, *req.Original, strings.Index(doc, "fo\n}")+2)
	}
	s.Accept(uri, it)
	want := "package p\n\n// héllo, 𐐀\nfunc main() {\n\tx := foo()\n}\n"
	if got := s.Text(uri); got != want {
		t.Fatalf("after accepting %+v, the buffer reads %q, want %q", it, got, want)
	}

	// Two NDJSON lines: the typo in the comment and the call's argument.
	m.set(sweepServing(t, k, true, "héllo", "hello", "x := foo()\n", "x := foo(1)\n", "x := fo\n", "x := foo(1)\n"))
	s.takeInlineEdit(uri, fakeeditor.At(4, 10))
	if got, want := s.Text(uri), "package p\n\n// hello, 𐐀\nfunc main() {\n\tx := foo(1)\n}\n"; got != want {
		t.Errorf("after taking the next edit of two NDJSON lines, the buffer reads %q, want %q", got, want)
	}

	// A file with CRLF line breaks: the service's byte offsets are into the file_contents it got,
	// and the edit taken keeps the file's line breaks.
	const crlf = "file:///crlf.go"
	s.Open(crlf, "package p\r\n\r\n// héllo\r\nfunc main() {\r\n\tx := fo\r\n}\r\n")
	s.takeInlineEdit(crlf, fakeeditor.At(4, 8))
	k.last(t, &req)
	if i := strings.Index(req.FileContents, "fo\n}"); i < 0 || req.CursorPosition != i+2 {
		t.Errorf("Sweep got cursor_position %d in %q, want the offset after \"fo\"", req.CursorPosition, req.FileContents)
	}
	if got, want := s.Text(crlf), "package p\r\n\r\n// hello\r\nfunc main() {\r\n\tx := foo(1)\r\n}\r\n"; got != want {
		t.Errorf("after taking the next edit in a CRLF file, the buffer reads %q, want %q", got, want)
	}
	onlyRequests(t, m, "POST", "/backend/next_edit_autocomplete")
	s.noKeyAnywhere()
}

// hostedServices are the hosted services' formats, each with the variable its key is read from
// when --api-key-env is not given, and its fake serving modelDoc's call finished (what
// modelSession.wantServed asks for).
var hostedServices = []struct {
	format, keyEnv string
	healthy        func(t *testing.T) behaviour
}{
	{"codestral", "CODESTRAL_API_KEY", func(t *testing.T) behaviour {
		return codestralServing(t, &taken{})
	}},
	{"mercury", "INCEPTION_API_KEY", func(t *testing.T) behaviour {
		return mercuryServing(t, &taken{}, "x := fo\n", "x := foo()\n")
	}},
	{"sweep-api", "SWEEP_AI_TOKEN", func(t *testing.T) behaviour {
		return sweepServing(t, &taken{}, false, "x := fo\n", "x := foo()\n")
	}},
}

// forEachHosted runs f for each hosted service in parallel, with a fake of it (healthy until f
// sets its failure) and the bridge started with the agent for it: the key in the service's own
// variable, no --api-key-env.
func forEachHosted(t *testing.T, f func(t *testing.T, s *modelSession, m *fakeModel, keyEnv string, healthy behaviour)) {
	for _, h := range hostedServices {
		t.Run(h.format, func(t *testing.T) {
			t.Parallel()
			m := newFakeModel(t)
			m.set(h.healthy(t))
			s := startHostedSession(t, []string{h.keyEnv + "=" + testKey}, m.srv.URL, "--model-format", h.format)
			f(t, s, m, h.keyEnv, h.healthy(t))
		})
	}
}

// asksFail asks by hand n times, wants each request answered with an error saying all of wants,
// and returns the errors' texts.
func (s *modelSession) asksFail(n int, wants ...string) []string {
	s.t.Helper()
	var errs []string
	for range n {
		items, err := s.ask()
		if err == nil {
			s.t.Fatalf("a request against a failing service: items %+v and no error, want an error saying %q", items, wants)
		}
		for _, want := range wants {
			if !strings.Contains(err.Error(), want) {
				s.t.Errorf("the editor's error %q does not say %q", err, want)
			}
		}
		errs = append(errs, err.Error())
	}
	return errs
}

// statusSaid expects a status in this state whose message says all of words.
func statusSaid(state string, words ...string) fakeeditor.Expectation {
	return fakeeditor.Expectation{Description: fmt.Sprintf("a status %s saying %q", state, words), Met: func(r *fakeeditor.Record) bool {
		return slices.ContainsFunc(r.Statuses, func(st fakeeditor.Status) bool { return st.State == state && saysAll(st.Message, words) })
	}}
}

// messageSaid expects a window/showMessage that says all of words.
func messageSaid(words ...string) fakeeditor.Expectation {
	return fakeeditor.Expectation{Description: fmt.Sprintf("a message saying %q", words), Met: func(r *fakeeditor.Record) bool {
		return slices.ContainsFunc(r.Messages, func(m string) bool { return saysAll(m, words) })
	}}
}

// saysAll reports whether text holds each of words.
func saysAll(text string, words []string) bool {
	return !slices.ContainsFunc(words, func(w string) bool { return !strings.Contains(text, w) })
}

// recoversTo makes m serve as healthy does, and expects the next request to be served, the
// status to be ready again, and the key nowhere (noKeyAnywhere, extra included).
func (s *modelSession) recoversTo(m *fakeModel, healthy behaviour, extra ...string) {
	s.t.Helper()
	m.set(healthy)
	s.wantServed()
	s.Await(fakeeditor.StatusIs("ready", ""))
	s.noKeyAnywhere(extra...)
}

// TestHostedRefusedKey: each hosted service refuses the key (401, quoting it), the agent started
// without --api-key-env: the editor's error, the failed status and the one message name the
// service and the variable the key was read from, the service's own (CODESTRAL_API_KEY,
// INCEPTION_API_KEY, SWEEP_AI_TOKEN), as the variable to set; the key is nowhere; once the key
// is taken the next request is served and the status is ready again.
func TestHostedRefusedKey(t *testing.T) {
	forEachHosted(t, func(t *testing.T, s *modelSession, m *fakeModel, keyEnv string, healthy behaviour) {
		m.set(func(w http.ResponseWriter, r *http.Request, _ []byte) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"error":{"message":"Invalid API key: `+strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")+`"}}`)
		})
		errs := s.asksFail(3, "set "+keyEnv+" to a key", m.srv.URL, "401", "where the editor (or eval, or doctor) is started, and start it again")
		s.Await(statusSaid("failed", keyEnv, m.srv.URL))
		s.Await(fakeeditor.ShownMessage("refused the API key in " + keyEnv))
		if n := s.messagesWith("refused the API key"); n != 1 {
			t.Errorf("told %d times of the refused key, want once: %q", n, s.Record().Messages)
		}
		s.recoversTo(m, healthy, errs...)
	})
}

// TestHostedKeyUnset: the agent for each hosted service, started without --api-key-env and
// with the service's own variable empty: the user is told, by a message and a failed status,
// which variable to set.
func TestHostedKeyUnset(t *testing.T) {
	for _, h := range hostedServices {
		t.Run(h.format, func(t *testing.T) {
			t.Parallel()
			m := newFakeModel(t)
			bridge, _ := binaries(t)
			b := startBridgeEnv(t, append(os.Environ(), h.keyEnv+"="), "--", bridge, "agent", "--model-url", m.srv.URL, "--model-format", h.format)
			b.InitializeWith(fakeeditor.InitParams{Encodings: []string{"utf-16"}})
			b.Await(messageSaid(h.keyEnv, "unset"), statusSaid("failed", h.keyEnv, "unset"))
			if got := m.requests(); len(got) != 0 {
				t.Errorf("the service was asked %+v without a key", got)
			}
		})
	}
}

// TestHostedRateLimited: each hosted service answers 429 with Retry-After: 2: the editor's error
// says when it is asked again, the status is slow saying when suggestions resume, the user is told
// once, the service is never asked again sooner than the 2 s it asked for, and once it takes
// requests the next one is served.
func TestHostedRateLimited(t *testing.T) {
	forEachHosted(t, func(t *testing.T, s *modelSession, m *fakeModel, _ string, healthy behaviour) {
		var mu sync.Mutex
		var limited []time.Time // when each request told to wait came
		m.set(func(w http.ResponseWriter, _ *http.Request, _ []byte) {
			mu.Lock()
			limited = append(limited, time.Now())
			mu.Unlock()
			w.Header().Set("Retry-After", "2")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = io.WriteString(w, `{"message":"Requests rate limit exceeded"}`)
		})
		errs := s.asksFail(3, "429", "not asked again for")
		s.Await(statusSaid("slow", "resume in"))
		if n := s.messagesWith("asked for a pause"); n != 1 {
			t.Errorf("told %d times of the rate limit, want once: %q", n, s.Record().Messages)
		}
		s.recoversTo(m, healthy, errs...)
		mu.Lock()
		defer mu.Unlock()
		for i := 1; i < len(limited); i++ {
			if gap := limited[i].Sub(limited[i-1]); gap < 2*time.Second {
				t.Errorf("the service was asked again %v after it asked for a pause of 2 s", gap.Round(time.Millisecond))
			}
		}
	})
}

// TestHostedServerError: each hosted service fails (500): the editor's error names the status,
// three failures in a row make the status failed and tell the user once, and once the service is
// well the next request is served.
func TestHostedServerError(t *testing.T) {
	forEachHosted(t, func(t *testing.T, s *modelSession, m *fakeModel, _ string, healthy behaviour) {
		m.set(func(w http.ResponseWriter, _ *http.Request, _ []byte) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = io.WriteString(w, `{"error":{"message":"internal error"}}`)
		})
		errs := s.asksFail(3, "500 Internal Server Error", m.srv.URL)
		s.Await(fakeeditor.StatusIs("failed", ""))
		s.Await(fakeeditor.ShownMessage("could not get 3 suggestions in a row"))
		if n := s.messagesWith("in a row"); n != 1 {
			t.Errorf("told %d times of the failures, want once: %q", n, s.Record().Messages)
		}
		s.recoversTo(m, healthy, errs...)
	})
}

// TestHostedEndlessAnswer: Sweep's service streams its answer as NDJSON lines; one that never
// ends it is cut at the agent's --timeout, and one that is huge (6 MiB of lines) at the agent's
// bound on an answer's size: the editor's error says which, the log has it, nothing is shown, and
// the next request is served.
func TestHostedEndlessAnswer(t *testing.T) {
	line := `{"autocomplete_id":"ac-1","start_index":0,"end_index":0,"completion":"// ` + strings.Repeat("x", 200) + `\n"}` + "\n"
	for _, tc := range []struct {
		name   string
		stream func(w http.ResponseWriter, r *http.Request)
		want   string
	}{
		{"never ends", func(w http.ResponseWriter, r *http.Request) {
			for {
				if _, err := io.WriteString(w, line); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
					return
				case <-time.After(50 * time.Millisecond):
				}
			}
		}, "within 2s (the agent's --timeout)"},
		{"huge", func(w http.ResponseWriter, _ *http.Request) {
			_, _ = io.WriteString(w, strings.Repeat(line, 6<<20/len(line)))
		}, "answered more than 4194304 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := newFakeModel(t)
			m.set(func(w http.ResponseWriter, r *http.Request, _ []byte) {
				w.Header().Set("Content-Type", "application/x-ndjson")
				tc.stream(w, r)
			})
			s := startHostedSession(t, []string{"SWEEP_AI_TOKEN=" + testKey}, m.srv.URL, "--model-format", "sweep-api", "--timeout", "2s")
			errs := s.asksFail(1, tc.want)
			s.waitLog(tc.want, "the answer cut")
			s.recoversTo(m, sweepServing(t, &taken{}, false, "x := fo\n", "x := foo()\n"), errs...)
		})
	}
}
