package model

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent"
)

// chatAnswer answers a chat-shaped request with content.
func chatAnswer(content string) func(w http.ResponseWriter, r *http.Request, body []byte) {
	return func(w http.ResponseWriter, r *http.Request, body []byte) {
		json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": content}, "finish_reason": "stop"}}})
	}
}

// TestMercuryAnswers: what a user sees of each kind of answer from Mercury's edit endpoint.
func TestMercuryAnswers(t *testing.T) {
	req := fimCase("file:///w/greet.js", "function greet(name) {\n  return \"hello \" |\n}\n")
	want := "function greet(name) {\n  return \"hello \" + name;\n}\n"
	for _, tc := range []struct {
		name, content, want, rule string
	}{
		{"fenced", "```\nfunction greet(name) {\n  return \"hello \" + name;\n}\n```", want, ""},
		{"fenced with a language", "```javascript\nfunction greet(name) {\n  return \"hello \" + name;\n}\n```", want, ""},
		{"unfenced", "function greet(name) {\n  return \"hello \" + name;\n}\n", want, ""},
		{"with the region's markers", "<|code_to_edit|>\nfunction greet(name) {\n  return \"hello \" + name;<|cursor|>\n}\n<|/code_to_edit|>", want, ""},
		{"None", "None", "", RuleNoChange},
		{"the region as it was", "```\nfunction greet(name) {\n  return \"hello \" \n}\n```", "", RuleNoChange},
		{"empty", "", "", RuleUnreadable},
		{"a copied marker", "```\n<|current_file_content|>\nfunction greet(name) {\n  return \"hello \" + name;\n}\n```", "", RulePromptCopy},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newService(t, chatAnswer(tc.content))
			eng, err := New(Config{URL: srv.URL, Model: "mercury-edit", Format: "mercury", APIKey: testKey})
			if err != nil {
				t.Fatal(err)
			}
			sugs, quiet, err := eng.(nesagent.Reasoned).SuggestWithReason(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if tc.rule != "" {
				if len(sugs) != 0 || quiet == nil || quiet.Rule != tc.rule {
					t.Errorf("suggestions %+v, quiet %+v; want none by %s", sugs, quiet, tc.rule)
				}
				return
			}
			if got := applied(t, req, sugs); got != tc.want {
				t.Errorf("after accepting:\n%q\nwant\n%q", got, tc.want)
			}
			posts := srv.posts()
			var body chatRequest
			if len(posts) != 1 || posts[0].path != mercuryEditPath || json.Unmarshal(posts[0].body, &body) != nil {
				t.Fatalf("posts %+v", posts)
			}
			if len(body.Messages) != 1 || body.Messages[0].Role != "user" || body.Model != "mercury-edit" {
				t.Errorf("messages %+v, want one user message (the endpoint takes no system message)", body.Messages)
			}
			if m := body.Messages[0].Content; !strings.Contains(m, "<|code_to_edit|>\nfunction greet(name) {\n  return \"hello \" <|cursor|>\n}\n<|/code_to_edit|>") {
				t.Errorf("the region and cursor are not marked:\n%s", m)
			}
		})
	}
	t.Run("an error body", func(t *testing.T) {
		srv := newService(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
			w.WriteHeader(http.StatusPaymentRequired)
			fmt.Fprint(w, `{"error":{"message":"Your billing is inactive","type":"account_error"}}`)
		})
		eng, _ := New(Config{URL: srv.URL, Model: "mercury-edit", Format: "mercury", APIKey: testKey})
		_, err := eng.Suggest(context.Background(), req)
		if err == nil || !strings.Contains(err.Error(), "402") || !strings.Contains(err.Error(), "billing is inactive") || strings.Contains(err.Error(), testKey) {
			t.Errorf("error %v, want the service's status and words, without the key", err)
		}
	})
}

// TestSweepAPIAnswers: what a user sees of each kind of answer from Sweep's service: one object,
// a stream of them, a list, and the ones that cannot be shown.
func TestSweepAPIAnswers(t *testing.T) {
	text := "def total(xs):\n    s = 0\n    for x in xs:\n        s += x\n    retur\n# ünï\n"
	req := nesagent.Request{URI: "file:///w/total.py", Text: text, Cursor: strings.Index(text, "retur") + 5}
	at := strings.Index(text, "retur")
	one := fmt.Sprintf(`{"autocomplete_id":"a","start_index":%d,"end_index":%d,"completion":"return s"}`, at, at+5)
	sAt := strings.Index(text, "s = 0")
	for _, tc := range []struct {
		name, body, want, rule string
	}{
		{"one object", one, strings.Replace(text, "retur\n", "return s\n", 1), ""},
		{"a stream of two", one + "\n" + fmt.Sprintf(`{"autocomplete_id":"b","start_index":%d,"end_index":%d,"completion":"total = 0"}`, sAt, sAt+5) + "\n",
			strings.Replace(strings.Replace(text, "retur\n", "return s\n", 1), "s = 0", "total = 0", 1), ""},
		{"a list", `{"completions":[` + one + `]}`, strings.Replace(text, "retur\n", "return s\n", 1), ""},
		{"an empty completion", fmt.Sprintf(`{"autocomplete_id":"a","start_index":%d,"end_index":%d,"completion":""}`, at, at), "", RuleNoChange},
		{"out of the file", `{"autocomplete_id":"a","start_index":5,"end_index":9999,"completion":"x"}`, "", RuleUnreadable},
		{"overlapping", one + "\n" + one, "", RuleUnreadable},
		{"splitting a character", fmt.Sprintf(`{"autocomplete_id":"a","start_index":%d,"end_index":%d,"completion":"x"}`, strings.Index(text, "ü")+1, strings.Index(text, "ü")+2), "", RuleUnreadable},
		{"malformed", `{"autocomplete_id":`, "", RuleUnreadable},
		{"no fields", `{"autocomplete_id":"a"}`, "", RuleUnreadable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newService(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
				// As a stream of lines: read whole all the same, by the format.
				w.Header().Set("Content-Type", "application/x-ndjson")
				fmt.Fprint(w, tc.body)
			})
			eng, err := New(Config{URL: srv.URL, Model: "sweep", Format: "sweep-api", APIKey: testKey})
			if err != nil {
				t.Fatal(err)
			}
			sugs, quiet, err := eng.(nesagent.Reasoned).SuggestWithReason(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if tc.rule != "" {
				if len(sugs) != 0 || quiet == nil || quiet.Rule != tc.rule {
					t.Errorf("suggestions %+v, quiet %+v; want none by %s", sugs, quiet, tc.rule)
				}
				return
			}
			if got := applied(t, req, sugs); got != tc.want {
				t.Errorf("after accepting:\n%q\nwant\n%q", got, tc.want)
			}
			p := srv.posts()
			if len(p) != 1 || p[0].header.Get("Content-Encoding") != "br" || len(p[0].raw) >= len(p[0].body) {
				t.Errorf("the request was not sent compressed by brotli: %d bytes for %d", len(p[0].raw), len(p[0].body))
			}
		})
	}
}

// TestSweepAPIGateJudgesWhatItReplaces: in a small file, Sweep's exact replacements of two of its
// three lines are an edit, not a rewrite of the file: shown. An answer that changes only
// whitespace is still kept back.
func TestSweepAPIGateJudgesWhatItReplaces(t *testing.T) {
	text := "x = 1\nprint(x)\nprnt(x)\n"
	req := nesagent.Request{URI: "file:///w/a.py", Text: text, Cursor: 3}
	a, b := strings.Index(text, "x = 1"), strings.Index(text, "prnt")
	for _, tc := range []struct {
		name, body, want, rule string
	}{
		{"two replacements", fmt.Sprintf(`{"start_index":%d,"end_index":%d,"completion":"y = 1"}`+"\n"+`{"start_index":%d,"end_index":%d,"completion":"print(y)"}`, a, a+5, b, b+7),
			"y = 1\nprint(x)\nprint(y)\n", ""},
		{"whitespace", fmt.Sprintf(`{"start_index":%d,"end_index":%d,"completion":"x  =  1"}`, a, a+5), "", RuleWhitespace},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newService(t, func(w http.ResponseWriter, r *http.Request, _ []byte) { fmt.Fprint(w, tc.body) })
			eng, _ := New(Config{URL: srv.URL, Model: "sweep", Format: "sweep-api"})
			sugs, quiet, err := eng.(nesagent.Reasoned).SuggestWithReason(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if tc.rule != "" {
				if len(sugs) != 0 || quiet == nil || quiet.Rule != tc.rule {
					t.Errorf("suggestions %+v, quiet %+v; want none by %s", sugs, quiet, tc.rule)
				}
				return
			}
			if quiet != nil {
				t.Fatalf("kept back: %+v", quiet)
			}
			if got := applied(t, req, sugs); got != tc.want {
				t.Errorf("after accepting %q, want %q", got, tc.want)
			}
		})
	}
}
