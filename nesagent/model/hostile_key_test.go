package model

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent"
)

// hostileKey is the key given to the engine in these tests; its forms are the ways a server may
// quote it.
const hostileKey = "sk-live-Q7w9E2r4T6y8U0i1O3p5"

var hostileForms = []string{
	hostileKey,
	hostileKey[8:20],
	url.QueryEscape(hostileKey),
	base64.StdEncoding.EncodeToString([]byte(hostileKey)),
	base64.RawURLEncoding.EncodeToString([]byte(hostileKey)),
	base64.StdEncoding.EncodeToString([]byte(":" + hostileKey)),
}

// writeRaw answers with a hand-written status line (Go's server writes its own reason phrase).
func writeRaw(w http.ResponseWriter, status string, headers []string, body string) {
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	fmt.Fprintf(buf, "HTTP/1.1 %s\r\n", status)
	for _, h := range headers {
		fmt.Fprintf(buf, "%s\r\n", h)
	}
	fmt.Fprintf(buf, "Content-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
	_ = buf.Flush()
}

// TestNoKeyFromAHostileServer: a server that puts the key (whole, in part, URL-encoded, in
// base64) into every string it gives: its status line, a redirect's target, its version, its
// error bodies of each shape, a stream's error event, an answer the format cannot read, and an
// answer whose text is the key. For each, in each prompt class it reaches, nothing the engine
// gives (its error, its reason, its log, what it says of the server, a suggestion) holds the key.
func TestNoKeyFromAHostileServer(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the server redirected to got %s %s", r.Method, r.URL)
	}))
	defer other.Close()
	b64 := base64.StdEncoding.EncodeToString([]byte(hostileKey))
	part := "sk-live-****" + hostileKey[16:]
	for _, tc := range []struct {
		name   string
		format string
		serve  func(w http.ResponseWriter, r *http.Request)
	}{
		{"401 reason phrase", "chat", func(w http.ResponseWriter, r *http.Request) {
			writeRaw(w, "401 Bad key "+hostileKey, []string{"Content-Type: application/json"}, `{"error":{"message":"token `+b64+`"}}`)
		}},
		{"429 reason phrase", "zeta2", func(w http.ResponseWriter, r *http.Request) {
			writeRaw(w, "429 Slow "+url.QueryEscape(hostileKey), []string{"Retry-After: 1"}, `{"error":"`+part+`"}`)
		}},
		{"500 reason phrase", "fim", func(w http.ResponseWriter, r *http.Request) {
			writeRaw(w, "500 Broken "+hostileKey, nil, "<html>"+hostileKey+"</html>")
		}},
		{"403 detail", "chat", func(w http.ResponseWriter, r *http.Request) {
			writeRaw(w, "403 Forbidden", nil, `{"detail":"`+hostileKey+`","message":"`+part+`"}`)
		}},
		{"redirect target", "zeta1", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other.URL+"/k/"+hostileKey+"/v1/completions?key="+url.QueryEscape(hostileKey), http.StatusTemporaryRedirect)
		}},
		{"version string", "fim", func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/api/version" {
				fmt.Fprintf(w, `{"version":"0.12.3 %s"}`, hostileKey)
				return
			}
			writeRaw(w, "404 Not "+hostileKey, nil, "")
		}},
		{"malformed body", "chat", func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, `{"choices": [%s`, hostileKey)
		}},
		{"stream error event", "zeta2", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: {\"error\":{\"message\":\"%s\"}}\n\n", hostileKey)
		}},
		{"unreadable answer", "sweep-api", func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "{%s\n", hostileKey)
		}},
		{"the key as the answer", "chat", func(w http.ResponseWriter, r *http.Request) {
			reply(w, marked("x := \""+hostileKey+"\"\n"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(tc.serve))
			defer srv.Close()
			var log bytes.Buffer
			cfg := Config{URL: srv.URL, Model: "qwen2.5-coder", Format: tc.format, APIKey: hostileKey, APIKeyEnv: "PROBE_KEY",
				Timeout: 2 * time.Second, Log: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))}
			if tc.format == "sweep-api" {
				cfg.Model = "sweep"
			}
			e := newEngine(t, cfg)
			var said []string
			os.Setenv(DoctorEnv, "1")
			said = append(said, e.ServerKind(context.Background(), time.Second))
			os.Unsetenv(DoctorEnv)
			text := "package p\n\nx := fo\n"
			for range 2 { // the second is held back after a 429 or 5xx: its message too
				sugs, quiet, err := e.SuggestWithReason(context.Background(), nesagent.Request{URI: "file:///w/a.go", Text: text, Cursor: len(text) - 1, Root: "/w"})
				if err != nil {
					said = append(said, err.Error())
				}
				if quiet != nil {
					said = append(said, quiet.Why)
				}
				for _, s := range sugs {
					for _, ed := range s.Edits {
						said = append(said, ed.NewText)
					}
				}
			}
			said = append(said, log.String())
			all := strings.Join(said, "\n")
			for _, k := range hostileForms {
				if strings.Contains(all, k) {
					t.Errorf("the engine gave the key (%q):\n%s", k, all)
				}
			}
			if tc.name == "the key as the answer" && !strings.Contains(all, "holds the API key") {
				t.Errorf("an answer holding the key is not said to be dropped for it:\n%s", all)
			}
			if !strings.Contains(all, "[key]") && tc.name != "the key as the answer" && tc.name != "malformed body" && tc.name != "unreadable answer" {
				t.Errorf("nothing says the server's words with the key taken out:\n%s", all)
			}
		})
	}
}

// TestScrubTakesOutEveryFormOfTheKey: the key URL-encoded (as a query and as a path), in base64
// (padded or not, standard or URL-safe, as Basic credentials), and without the "Bearer " its
// variable may hold before it, is taken out; the server's own host name is not masked for holding
// part of the key by chance, so that a failure to reach it reads as one.
func TestScrubTakesOutEveryFormOfTheKey(t *testing.T) {
	const key = "sk-a/b+c d=Zx81kQm2Lw93"
	s := newHostScrubber(key, "")
	for _, form := range []string{
		key, url.QueryEscape(key), url.PathEscape(key),
		base64.StdEncoding.EncodeToString([]byte(key)), base64.RawStdEncoding.EncodeToString([]byte(key)),
		base64.URLEncoding.EncodeToString([]byte(key)), base64.RawURLEncoding.EncodeToString([]byte(key)),
		base64.StdEncoding.EncodeToString([]byte(":" + key)),
	} {
		if got := s.clean("token "+form+" refused", 300); got != "token [key] refused" {
			t.Errorf("clean(%q) = %q", form, got)
		}
	}
	bearer := newHostScrubber("Bearer sk-proj-Zx81kQm2Lw93Ty", "")
	if got := bearer.clean("bad key sk-proj-Zx81kQm2Lw93Ty.", 300); got != "bad key [key]." {
		t.Errorf("the key without its Bearer: %q", got)
	}
	// A host that shares eight characters with the key.
	const host = "kqm2lw93-gpu.example.net"
	hs := newHostScrubber("sk-Zx81kqm2lw93Ty", host)
	msg := "dial tcp: lookup " + host + ": no such host"
	if got := hs.clean(msg, 300); got != msg {
		t.Errorf("the host name was masked: %q", got)
	}
	if got := hs.clean("bad key sk-Zx81****kqm2lw93Ty at "+host, 300); got != "bad key [key] at "+host {
		t.Errorf("a part of the key beside the host: %q", got)
	}
	// The log, last of all: a line whatever it quotes.
	var buf bytes.Buffer
	log := scrubbedLog(slog.New(slog.NewTextHandler(&buf, nil)), newHostScrubber(key, ""))
	log.With("k", key).Info("said "+key, "err", errors.New("e "+key), "n", 3, slog.Group("g", "v", key))
	if strings.Contains(buf.String(), "Zx81kQm2") || !strings.Contains(buf.String(), "[key]") {
		t.Errorf("the log holds the key: %s", buf.String())
	}
}

// TestBillingByAddress: a server neither on this machine nor on a private network bills each
// request unless the user says otherwise; the hosted formats are billed as before.
func TestBillingByAddress(t *testing.T) {
	no, yes := false, true
	for _, tc := range []struct {
		url, format string
		billed      *bool
		want        bool
		why         string
	}{
		{"http://127.0.0.1:8080", "chat", nil, false, "on this machine"},
		{"http://localhost:11434", "zeta2", nil, false, "on this machine"},
		{"http://[::1]:8012", "fim", nil, false, "on this machine"},
		{"http://192.168.1.20:8080", "chat", nil, false, "private network"},
		{"http://10.1.2.3:8080", "chat", nil, false, "private network"},
		{"http://172.20.0.5:8080", "chat", nil, false, "private network"},
		{"http://[fd00::5]:8080", "chat", nil, false, "private network"},
		{"http://169.254.10.1:8080", "chat", nil, false, "local link"},
		{"http://100.101.102.103:11434", "chat", nil, false, "tailnets"},
		{"http://gpubox:8080", "chat", nil, false, "one label"},
		{"http://gpubox.local:8080", "chat", nil, false, ".local"},
		{"https://ollama.tail1234.ts.net", "chat", nil, false, ".ts.net"},
		{"https://api.openai.com/v1", "chat", nil, true, "neither on this machine nor on a private network"},
		{"https://openrouter.ai/api/v1", "zeta2", nil, true, "neither on this machine"},
		{"https://8.8.8.8/v1", "chat", nil, true, "neither on this machine"},
		{"https://api.openai.com/v1", "chat", &no, false, "--billed=false"},
		{"http://127.0.0.1:8080", "chat", &yes, true, "--billed=true"},
		{"http://127.0.0.1:8080", "mercury", nil, true, "hosted service"},
		{"https://api.mistral.ai", "fim", nil, true, "hosted FIM"},
	} {
		e := newEngine(t, Config{URL: tc.url, Model: "m", Format: tc.format, Billed: tc.billed})
		got, why := e.Billing()
		if got != tc.want || !strings.Contains(why, tc.why) {
			t.Errorf("%s (%s, --billed %v): billed %v (%s), want %v (%s)", tc.url, tc.format, tc.billed, got, why, tc.want, tc.why)
		}
		e.cfg.Prefetch = true
		if e.prefetchOn() == got {
			t.Errorf("%s: prefetch %v while billed %v", tc.url, e.prefetchOn(), got)
		}
	}
}

// TestKeyNotInClear: the key is not sent over plain http:// to a server neither on this machine
// nor on a private network (New refuses it and says what to do) unless --allow-insecure-key, and
// never through a proxy over plain http://.
func TestKeyNotInClear(t *testing.T) {
	_, err := New(Config{URL: "http://models.example.com/v1", Model: "m", APIKey: hostileKey})
	if err == nil || !strings.Contains(err.Error(), "https://") || !strings.Contains(err.Error(), "--allow-insecure-key") || strings.Contains(err.Error(), hostileKey) {
		t.Errorf("a key in clear to a remote server: %v", err)
	}
	for _, ok := range []Config{
		{URL: "http://models.example.com/v1", Model: "m", APIKey: hostileKey, AllowInsecureKey: true},
		{URL: "https://models.example.com/v1", Model: "m", APIKey: hostileKey},
		{URL: "http://192.168.0.9:8080", Model: "m", APIKey: hostileKey},
		{URL: "http://models.example.com/v1", Model: "m"},
	} {
		if _, err := New(ok); err != nil {
			t.Errorf("%+v: %v", ok, err)
		}
	}
	// A proxy for http://: the request with the key fails before it reaches the proxy.
	proxied := 0
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { proxied++ }))
	defer proxy.Close()
	pu, _ := url.Parse(proxy.URL)
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu)}}
	e := newEngine(t, Config{URL: "http://gpubox:8080", Model: "m", Format: "chat", APIKey: hostileKey, HTTPClient: client})
	_, err = e.Suggest(context.Background(), nesagent.Request{URI: "file:///w/a.go", Text: "x := fo\n", Cursor: 7})
	if !errors.Is(err, errClearProxy) && (err == nil || !strings.Contains(err.Error(), "NO_PROXY")) {
		t.Errorf("a key over http:// through a proxy: %v", err)
	}
	if proxied != 0 {
		t.Errorf("the proxy got %d requests", proxied)
	}
	// Without a key, the proxy carries the request as the user set it.
	e = newEngine(t, Config{URL: "http://gpubox:8080", Model: "m", Format: "chat", HTTPClient: client})
	_, _ = e.Suggest(context.Background(), nesagent.Request{URI: "file:///w/a.go", Text: "x := fo\n", Cursor: 7})
	if proxied != 1 {
		t.Errorf("without a key the proxy got %d requests, want 1", proxied)
	}
}

// TestCheckKeyEnv: --api-key-env takes a variable's name; the key itself, or a name with
// characters no variable has, is refused with a message that never repeats it.
func TestCheckKeyEnv(t *testing.T) {
	for _, name := range []string{"OPENAI_API_KEY", "MY_KEY", "_K", "openrouter_key_2"} {
		if err := CheckKeyEnv(name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	for _, name := range []string{hostileKey, "ghp_0123456789abcdefABCDEF", "AbCdEf0123456789GhIjKl", "my key", "1KEY", "KEY=x", ""} {
		err := CheckKeyEnv(name)
		if err == nil {
			t.Errorf("%q was taken as a variable's name", name)
			continue
		}
		if name != "" && strings.Contains(err.Error(), name) {
			t.Errorf("the message repeats %q: %v", name, err)
		}
	}
	_, err := New(Config{URL: "http://127.0.0.1:1", Model: "m", APIKey: "x", APIKeyEnv: hostileKey})
	if err == nil || strings.Contains(err.Error(), hostileKey) {
		t.Errorf("New with the key as --api-key-env: %v", err)
	}
}
