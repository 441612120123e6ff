package model

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent"
)

// TestRetryAfterSecondsOrDate: Retry-After in seconds or as an HTTP date, bounded by maxPause;
// nothing for an absent, past or unreadable one.
func TestRetryAfterSecondsOrDate(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"2":                             2 * time.Second,
		" 1.5 ":                         1500 * time.Millisecond,
		"Sun, 29 Nov 2026 12:00:07 GMT": 7 * time.Second,
		"Sun, 29 Nov 2026 11:59:00 GMT": 0,
		"Mon, 30 Nov 2026 12:00:00 GMT": maxPause,
		"86400":                         maxPause,
		"":                              0,
		"-3":                            0,
		"NaN":                           0,
		"soon":                          0,
	} {
		h := http.Header{}
		if v != "" {
			h.Set("Retry-After", v)
		}
		if got := retryAfter(h, now); got != want {
			t.Errorf("Retry-After %q: %v, want %v", v, got, want)
		}
	}
}

// TestScrubTakesTheKeyOutWholeOrInPart: the key is taken out of what a server says, whole, URL
// encoded, and where it is quoted in part; the text around it stays, and nothing of another word
// is lost.
func TestScrubTakesTheKeyOutWholeOrInPart(t *testing.T) {
	const key = "sk-proj-Zx81kQm2Lw93Ty+/Pq7"
	s := newScrubber(key)
	for in, want := range map[string]string{
		"Incorrect API key provided: " + key + ".": "Incorrect API key provided: [key].",
		"Bearer " + key:                                      "Bearer [key]",
		"key=" + url.QueryEscape(key) + "&x=1":               "key=[key]&x=1",
		`{"error":"bad key sk-proj-Zx81****y+/Pq7"}`:         `{"error":"bad key [key]"}`,
		"a key ending ...Lw93Ty+/Pq7 refused":                "a key ending [key] refused",
		"nothing of the key here, sk-proj is just a prefix.": "nothing of the key here, sk-proj is just a prefix.",
	} {
		if got := s.clean(in, 300); got != want {
			t.Errorf("clean(%q) = %q, want %q", in, got, want)
		}
	}
	if got := s.clean(strings.Repeat("é", 400), 300); len(got) > 300+len("…") || !strings.HasSuffix(got, "…") {
		t.Errorf("a long text is %d bytes: %q", len(got), got[len(got)-10:])
	}
	if got := s.clean("a\x00b\x1b[31mc\xff", 300); got != `a\x00b\x1b[31mc`+"\uFFFD" {
		t.Errorf("control characters and invalid UTF-8: %q", got)
	}
}

// TestRedirectsStayAtTheServerNamed: a redirect to another path of the same server is followed;
// one to another port, host or scheme is not, and says where it would have gone.
func TestRedirectsStayAtTheServerNamed(t *testing.T) {
	var got []string
	var mu sync.Mutex
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.URL.Path)
		mu.Unlock()
	}))
	defer other.Close()
	var target string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/moved/v1/chat/completions" {
			reply(w, "ok")
			return
		}
		http.Redirect(w, r, target, http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	e := newEngine(t, Config{URL: srv.URL, APIKey: "k-123456789"})
	h := e.c.(*httpCompleter)
	for _, tc := range []struct {
		target string
		ok     bool
	}{
		{srv.URL + "/moved/v1/chat/completions", true},
		{other.URL + "/v1/chat/completions", false},
		{strings.Replace(other.URL, "127.0.0.1", "localhost", 1) + "/x", false},
		{strings.Replace(srv.URL, "http:", "https:", 1) + "/x", false},
	} {
		target = tc.target
		_, err := h.Complete(context.Background(), Prompt{User: "u"})
		var be *nesagent.BackendError
		switch {
		case tc.ok && err != nil:
			t.Errorf("a redirect to %s: %v", tc.target, err)
		case !tc.ok && (!errors.As(err, &be) || be.Reason != nesagent.ReasonRedirectRefused || !strings.Contains(err.Error(), redacted(tc.target))):
			t.Errorf("a redirect to %s: %v, want it refused by name", tc.target, err)
		}
	}
	if len(got) != 0 {
		t.Errorf("the other server got %v", got)
	}
}

// TestPacingHoldsRequestsBack: after a 429 nothing is sent until its Retry-After has passed;
// after server errors, a backoff that grows with each one in a row, with jitter, and ends at the
// first answer.
func TestPacingHoldsRequestsBack(t *testing.T) {
	now := time.Unix(1000, 0)
	p := &pacing{now: func() time.Time { return now }}
	if p.held("s") != nil {
		t.Fatal("held before anything happened")
	}
	p.limited(2*time.Second, "asked for a pause (429)")
	var be *nesagent.BackendError
	if err := p.held("s"); !errors.As(err, &be) || be.Reason != nesagent.ReasonRateLimited || be.RetryAfter != 2*time.Second || !strings.Contains(err.Error(), "not asked again for 2s") {
		t.Errorf("during a pause: %v", err)
	}
	now = now.Add(2 * time.Second)
	if err := p.held("s"); err != nil {
		t.Errorf("after the pause: %v", err)
	}
	p.answered()
	var last time.Duration
	for n := 1; n <= 8; n++ {
		d := p.failed(0, "failed (503)")
		full := min(backoffBase<<(n-1), backoffMax)
		if d < full/2 || d > full {
			t.Errorf("backoff %d: %v, want between %v and %v", n, d, full/2, full)
		}
		if n > 1 && full < backoffMax && d <= last/2 {
			t.Errorf("backoff %d (%v) did not grow from %v", n, d, last)
		}
		last = d
	}
	if err := p.held("s"); !errors.As(err, &be) || be.Reason != nesagent.ReasonBackendError {
		t.Errorf("during a backoff: %v", err)
	}
	if d := p.failed(time.Hour, "failed (503)"); d != maxPause {
		t.Errorf("a Retry-After of an hour: %v, want at most %v", d, maxPause)
	}
	p.answered()
	if err := p.held("s"); err != nil {
		t.Errorf("after an answer: %v", err)
	}
}

// TestOllamaFoundByItsAnswer: when /api/version does not answer (a server that is slow there), the
// raw prompt goes to /v1/completions; when the answer shows Ollama's OpenAI layer (which wrapped
// the prompt in the chat template), the agent takes the server as Ollama, asks again at
// /api/generate, and says so in the log; later prompts go there directly.
func TestOllamaFoundByItsAnswer(t *testing.T) {
	var mu sync.Mutex
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.Method+" "+r.URL.Path)
		mu.Unlock()
		switch r.URL.Path {
		case "/api/version":
			http.Error(w, "busy", http.StatusServiceUnavailable)
		case "/v1/completions":
			_ = json.NewEncoder(w).Encode(map[string]any{"system_fingerprint": "fp_ollama", "choices": []any{map[string]any{"text": "wrapped", "finish_reason": "stop"}}})
		case "/api/generate":
			_ = json.NewEncoder(w).Encode(map[string]any{"response": "raw", "done_reason": "stop"})
		}
	}))
	defer srv.Close()
	var log bytes.Buffer
	e := newEngine(t, Config{URL: srv.URL, Log: slog.New(slog.NewTextHandler(&log, nil))})
	h := e.c.(*httpCompleter)
	for i := range 2 {
		a, err := h.Complete(context.Background(), Prompt{Raw: "p"})
		if err != nil || a.Text != "raw" {
			t.Fatalf("request %d: %q, %v; want Ollama's raw answer", i, a.Text, err)
		}
	}
	want := "GET /api/version,POST /v1/completions,POST /api/generate,POST /api/generate"
	if got := strings.Join(paths, ","); got != want {
		t.Errorf("requests %s, want %s", got, want)
	}
	for _, say := range []string{"could not tell whether the server is Ollama (/api/version answered 503 Service Unavailable)", "the server is Ollama (its /v1/completions answers as Ollama's"} {
		if !strings.Contains(log.String(), say) {
			t.Errorf("the log does not say %q:\n%s", say, log.String())
		}
	}
}

// TestKindCheckGivesUpAfterTries: a server whose /api/version never answers is asked at most
// maxKindTries times, then taken as OpenAI-compatible, which the log says once.
func TestKindCheckGivesUpAfterTries(t *testing.T) {
	var mu sync.Mutex
	checks := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/version" {
			mu.Lock()
			checks++
			mu.Unlock()
			http.Error(w, "bad gateway", http.StatusBadGateway)
			return
		}
		_, _ = io.WriteString(w, `{"choices":[{"text":"t","finish_reason":"stop"}]}`)
	}))
	defer srv.Close()
	var log bytes.Buffer
	e := newEngine(t, Config{URL: srv.URL, Log: slog.New(slog.NewTextHandler(&log, nil))})
	for range maxKindTries + 2 {
		if _, err := e.c.Complete(context.Background(), Prompt{Raw: "p"}); err != nil {
			t.Fatal(err)
		}
	}
	if checks != maxKindTries {
		t.Errorf("%d checks, want %d", checks, maxKindTries)
	}
	if n := strings.Count(log.String(), "taken as OpenAI-compatible"); n != 1 {
		t.Errorf("said %d times that it took the server as OpenAI-compatible:\n%s", n, log.String())
	}
}

// FuzzScrubNeverShowsTheKey: whatever a server answers, and wherever it puts the key (whole,
// URL-encoded, or a part of eight characters or more), what the agent makes of it holds none of
// the key's runs of eight characters.
func FuzzScrubNeverShowsTheKey(f *testing.F) {
	f.Add("sk-test-7f3a9c2e5b1d4068", "Incorrect API key provided: ", "!", 0, 24)
	f.Add("abcdefgh", "key=", "&x", 0, 8)
	f.Add("k+/=k+/=k+/=", "quoted ", "\"", 2, 11)
	f.Fuzz(func(t *testing.T, key, before, after string, from, to int) {
		if len(key) < 8 || len(key) > 200 || strings.ContainsAny(key, "\x00") {
			return
		}
		from, to = min(max(from, 0), len(key)), min(max(to, 0), len(key))
		if to-from < 8 {
			from, to = 0, len(key)
		}
		s := newScrubber(key)
		for _, text := range []string{before + key + after, before + url.QueryEscape(key) + after, before + key[from:to] + after} {
			got := s.clean(text, 1<<20)
			for i := 0; i+8 <= len(key); i++ {
				if frag := nesagent.CleanText(key[i:i+8], 0); strings.Contains(got, frag) && utf8.ValidString(key[i:i+8]) {
					t.Fatalf("key %q in %q: the cleaned text %q holds %q", key, text, got, frag)
				}
			}
		}
	})
}

// TestForgottenKindGetsEveryTryAgain: once the server is forgotten as Ollama (its /api/generate
// answered 404), what serves the model is asked afresh, with all of maxKindTries before it is
// taken as OpenAI-compatible: the tries spent before it was found do not count.
func TestForgottenKindGetsEveryTryAgain(t *testing.T) {
	var mu sync.Mutex
	checks, completions := 0, 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		switch r.URL.Path {
		case "/api/version":
			checks++
			http.Error(w, "busy", http.StatusServiceUnavailable)
		case "/v1/completions":
			completions++
			fp := ""
			if completions == 2 {
				fp = "fp_ollama"
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"system_fingerprint": fp, "choices": []any{map[string]any{"text": "t", "finish_reason": "stop"}}})
		case "/api/generate":
			http.Error(w, "404 page not found", http.StatusNotFound)
		}
	}))
	defer srv.Close()
	var log bytes.Buffer
	e := newEngine(t, Config{URL: srv.URL, Log: slog.New(slog.NewTextHandler(&log, nil))})
	for i := range 2 + maxKindTries + 1 {
		_, err := e.c.Complete(context.Background(), Prompt{Raw: "p"})
		if (err != nil) != (i == 1) {
			t.Fatalf("request %d: %v (only the second, sent to /api/generate, should fail)", i, err)
		}
	}
	if want := 2 + maxKindTries; checks != want {
		t.Errorf("%d checks of the kind, want %d (two before Ollama was found, then every try again)", checks, want)
	}
	for _, say := range []string{"what serves the model is asked again (/api/generate answered 404", "3 times: taken as OpenAI-compatible"} {
		if !strings.Contains(log.String(), say) {
			t.Errorf("the log does not say %q:\n%s", say, log.String())
		}
	}
}
