package model

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent"
)

// TestCachePromptOnlyToLlamaServer: a raw or chat prompt carries llama-server's cache_prompt once
// the server is known to be llama-server (named by --model-server, or found by the timings its
// answers carry, which only llama-server adds), and never to another OpenAI-compatible server,
// which may refuse a field it does not know.
func TestCachePromptOnlyToLlamaServer(t *testing.T) {
	timings := `,"timings":{"prompt_n":7,"cache_n":120,"predicted_n":1}`
	serve := func(withTimings bool) func(w http.ResponseWriter, r *http.Request, _ []byte) {
		return func(w http.ResponseWriter, r *http.Request, _ []byte) {
			extra := ""
			if withTimings {
				extra = timings
			}
			switch r.URL.Path {
			case "/v1/completions":
				fmt.Fprintf(w, `{"choices":[{"text":"no edit","finish_reason":"stop"}]%s}`, extra)
			case "/v1/chat/completions":
				fmt.Fprintf(w, `{"choices":[{"message":{"role":"assistant","content":"no edit"},"finish_reason":"stop"}]%s}`, extra)
			default:
				http.NotFound(w, r) // no Ollama at /api/version
			}
		}
	}
	req := nesagent.Request{URI: "file:///w/main.go", Root: "/w", LanguageID: "go", Text: "package main\n\nfunc main() {\n\tx := 1\n}\n", Cursor: 20}
	for _, tc := range []struct {
		name, model, server string
		timings             bool
		// want says, for each of three requests in a row, whether it carries cache_prompt.
		want  string
		found string // what the log says of the server, "" for nothing about llama-server
	}{
		{"llama-server, raw", "zeta", "", true, "- + +", "the server is llama-server (its answers carry llama-server's timings)"},
		{"llama-server, chat", "qwen2.5-coder", "", true, "- + +", "the server is llama-server (its answers carry llama-server's timings)"},
		{"named llama-server", "zeta", "llama-server", true, "+ + +", ""},
		{"named openai, yet llama-server", "qwen2.5-coder", "openai", true, "- + +", ""},
		{"another server, raw", "zeta", "", false, "- - -", ""},
		{"another server, chat", "qwen2.5-coder", "", false, "- - -", ""},
		{"another server named openai", "zeta", "openai", false, "- - -", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newService(t, serve(tc.timings))
			var log bytes.Buffer
			eng, err := New(Config{URL: srv.URL, Model: tc.model, Server: tc.server, Log: slog.New(slog.NewTextHandler(&log, nil))})
			if err != nil {
				t.Fatal(err)
			}
			for range 3 {
				if _, err := eng.Suggest(context.Background(), req); err != nil {
					t.Fatal(err)
				}
			}
			var got []string
			for _, p := range srv.posts() {
				var body map[string]any
				if err := json.Unmarshal(p.body, &body); err != nil {
					t.Fatal(err)
				}
				switch v, ok := body["cache_prompt"]; {
				case !ok:
					got = append(got, "-")
				case v == true:
					got = append(got, "+")
				default:
					got = append(got, fmt.Sprint(v))
				}
			}
			if strings.Join(got, " ") != tc.want {
				t.Errorf("cache_prompt in the requests: %s, want %s", strings.Join(got, " "), tc.want)
			}
			if tc.found != "" && !strings.Contains(log.String(), tc.found) {
				t.Errorf("the log does not say %q:\n%s", tc.found, log.String())
			}
			if tc.server != "" && strings.Contains(log.String(), "the server is llama-server (its answers") {
				t.Errorf("--model-server %s, yet the kind changed:\n%s", tc.server, log.String())
			}
		})
	}
}

// TestChatPromptStartStaysWhileTyping: from one request to the next while the user types, the
// chat prompt keeps its start as far as the text allows (the server's prompt cache reuses it):
// typing on a line keeps everything before the cursor, and going to the next line everything
// before the region's old start; the history, whose newest edit grows with each key, comes
// after the file.
func TestChatPromptStartStaysWhileTyping(t *testing.T) {
	var b strings.Builder
	b.WriteString("package shop\n\n")
	for i := range 41 { // the first line shown, anchored at line 17, stays while the cursor moves
		fmt.Fprintf(&b, "func f%d() int { return %d }\n", i, i)
	}
	before := b.String()
	after := "\nfunc g() int { return 0 }\n"
	other := nesagent.OpenDocument{URI: "file:///w/other.go", LanguageID: "go", Text: "package shop\n\n// Total adds.\nfunc Total() int { return 1 }\n"}
	e, err := withDefaults(Config{Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	// prompt is the user message after the user typed typed at the end of before.
	prompt := func(typed string) string {
		text := before + typed + after
		at := len(before) + len(typed)
		lineStart := strings.LastIndexByte(text[:len(before)-1], '\n') + 1
		req := nesagent.Request{URI: "file:///w/main.go", Root: "/w", LanguageID: "go", Text: text, Cursor: at, Open: []nesagent.OpenDocument{other},
			Recent: []nesagent.Edit{{Start: len(before), New: typed, OldLines: text[lineStart : len(before)-1], NewLines: text[lineStart:at], LineStart: lineStart, Seq: 1}}}
		c, err := chatFormat{}.Build(prepare(req), limits{cfg: &e.cfg})
		if err != nil {
			t.Fatal(err)
		}
		return c.User
	}
	common := func(a, b string) int {
		n := 0
		for n < len(a) && n < len(b) && a[n] == b[n] {
			n++
		}
		return n
	}
	steps := []string{"func h", "func h() int", "func h() int {\n\treturn", "func h() int {\n\treturn f1()", "func h() int {\n\treturn f1()\n}\n\nfunc k"}
	prev := prompt(steps[0])
	for i, typed := range steps[1:] {
		next := prompt(typed)
		want := strings.Index(prev, markCursor)
		if strings.Count(typed, "\n") > strings.Count(steps[i], "\n") {
			want = strings.Index(prev, markStart) // the region moved down with the cursor
		}
		if n := common(prev, next); n < want {
			t.Errorf("after typing %q the prompt keeps %d bytes of its start, want the %d before the cursor or the region:\n%s\n---\n%s", typed, n, want, prev, next)
		}
		if strings.Index(next, "<|edit_history|>") < strings.Index(next, "<|/current_file|>") {
			t.Errorf("the history comes before the file:\n%s", next)
		}
		prev = next
	}
}
