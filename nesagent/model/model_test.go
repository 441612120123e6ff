package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent"
)

func TestMain(m *testing.M) {
	slog.SetDefault(slog.New(slog.DiscardHandler)) // the ACP SDK logs through it
	os.Exit(m.Run())
}

// seen is one request the fake server got.
type seen struct {
	Method, Path, Auth, ContentType string
	Raw                             map[string]any
	Body                            chatRequest
}

// fake is a local OpenAI-compatible server whose "model" answers with reply(user message).
type fake struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []seen
}

func newFake(t *testing.T, handler func(w http.ResponseWriter, r *http.Request, req chatRequest)) *fake {
	t.Helper()
	f := &fake{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		var s seen
		s.Method, s.Path, s.Auth, s.ContentType = r.Method, r.URL.RequestURI(), r.Header.Get("Authorization"), r.Header.Get("Content-Type")
		if err := json.Unmarshal(data, &s.Raw); err != nil {
			t.Errorf("request body %q: %v", data, err)
		}
		json.Unmarshal(data, &s.Body)
		f.mu.Lock()
		f.reqs = append(f.reqs, s)
		f.mu.Unlock()
		handler(w, r, s.Body)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fake) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.reqs)
}

func (f *fake) last(t *testing.T) seen {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.reqs) == 0 {
		t.Fatal("the server got no request")
	}
	return f.reqs[len(f.reqs)-1]
}

// reply answers a chat completion with content.
func reply(w http.ResponseWriter, content string) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id": "x", "object": "chat.completion",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": content}}},
	})
}

// regionOf returns the editable region of a prompt's user message, without the cursor marker and
// the line break the prompt puts before the end marker.
func regionOf(t *testing.T, user string) string {
	t.Helper()
	i := strings.Index(user, markStart+"\n")
	j := strings.Index(user, markEnd)
	if i < 0 || j < i {
		t.Fatalf("no marked region in the prompt:\n%s", user)
	}
	return strings.ReplaceAll(user[i+len(markStart)+1:j], markCursor, "")
}

// rewriter is a fake model that rewrites the prompt's region with f and answers it wrapped by
// wrap (markers and whatever a model adds around them).
func rewriter(t *testing.T, f func(region string) string, wrap func(region string) string) func(http.ResponseWriter, *http.Request, chatRequest) {
	return func(w http.ResponseWriter, _ *http.Request, req chatRequest) {
		reply(w, wrap(f(regionOf(t, req.Messages[len(req.Messages)-1].Content))))
	}
}

func marked(region string) string { return markStart + "\n" + region + markEnd }

func newEngine(t *testing.T, cfg Config) *engine {
	t.Helper()
	if cfg.Model == "" {
		cfg.Model = "test-model"
	}
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e.(*engine)
}

// apply applies a suggestion's edits to text (they must not overlap and be in order).
func apply(t *testing.T, text string, edits []nesagent.TextEdit) string {
	t.Helper()
	var b strings.Builder
	at := 0
	for _, e := range edits {
		if e.Start < at || e.End < e.Start || e.End > len(text) {
			t.Fatalf("edits out of order or range: %+v", edits)
		}
		if !utf8.ValidString(text[:e.Start]) || !utf8.ValidString(text[e.End:]) {
			t.Fatalf("edit %+v splits a character of %q", e, text)
		}
		b.WriteString(text[at:e.Start] + e.NewText)
		at = e.End
	}
	return b.String() + text[at:]
}

const goText = `package main

import "fmt"

func add(a, b int) int {
	return a + b
}

func main() {
	x := add(1, 2)
	y := add(3)
	fmt.Println(x, y)
}
`

func TestPromptAndRequest(t *testing.T) {
	srv := newFake(t, func(w http.ResponseWriter, _ *http.Request, _ chatRequest) { reply(w, "no idea") })
	e := newEngine(t, Config{URL: srv.URL, Model: "qwen2.5-coder:7b", APIKey: "sekret", LinesAbove: 1, LinesBelow: 1, ContextLines: 3})
	cur := strings.Index(goText, "add(3") + len("add(3")
	// The user added the parameter b to add, then the argument 2 at line 10.
	req := nesagent.Request{
		URI: "file:///home/me/proj/cmd/main.go", Root: "/home/me/proj", LanguageID: "go", Text: goText, Cursor: cur,
		Recent: []nesagent.Edit{
			{Start: strings.Index(goText, "add(a") + 5, Old: "", New: ", b", OldLines: "func add(a int) int {", NewLines: "func add(a, b int) int {", LineStart: strings.Index(goText, "func add")},
			{Start: strings.Index(goText, "add(1") + 5, Old: "", New: ", 2", OldLines: "\tx := add(1)", NewLines: "\tx := add(1, 2)", LineStart: strings.Index(goText, "\tx :=")},
		},
		Open: []nesagent.OpenDocument{
			{URI: "file:///home/me/proj/notes.md", LanguageID: "markdown", Text: strings.Repeat("nothing to see here\n", 40) + "sum with add and Println\n" + strings.Repeat("more filler text\n", 40)},
			{URI: "file:///home/me/proj/empty.go", Text: ""},
		},
	}
	sugs, err := e.Suggest(context.Background(), req)
	if err != nil || sugs != nil {
		t.Fatalf("an answer without markers: %+v, %v; want no suggestion and no error", sugs, err)
	}
	s := srv.last(t)
	if s.Method != "POST" || s.Path != "/v1/chat/completions" || s.ContentType != "application/json" {
		t.Errorf("request %s %s (%s)", s.Method, s.Path, s.ContentType)
	}
	if s.Auth != "Bearer sekret" {
		t.Errorf("Authorization %q", s.Auth)
	}
	if s.Body.Model != "qwen2.5-coder:7b" || s.Raw["temperature"] != 0.0 || s.Body.Stream {
		t.Errorf("model %q temperature %v stream %v", s.Body.Model, s.Raw["temperature"], s.Body.Stream)
	}
	if mt, _ := s.Raw["max_tokens"].(float64); mt < 256 || mt > 4096 {
		t.Errorf("max_tokens %v", s.Raw["max_tokens"])
	}
	if len(s.Body.Messages) != 2 || s.Body.Messages[0].Role != "system" || s.Body.Messages[1].Role != "user" {
		t.Fatalf("messages %+v", s.Body.Messages)
	}
	if sys := s.Body.Messages[0].Content; sys != DefaultInstructions || !strings.Contains(sys, markStart) || !strings.Contains(sys, markCursor) {
		t.Errorf("system message %q", sys)
	}
	user := s.Body.Messages[1].Content
	t.Logf("user message:\n%s", user)
	want := []string{
		// the region: one line above and below the cursor's, the cursor marked
		markStart + "\n\tx := add(1, 2)\n\ty := add(3" + markCursor + ")\n\tfmt.Println(x, y)\n" + markEnd + "\n",
		// three lines of context above and below it
		// files named relative to the workspace: never the user's home
		"The file cmd/main.go (go) from line 7, with the editable region marked:\n\n<|current_file|>\n}\n\nfunc main() {\n" + markStart,
		markEnd + "\n}\n<|/current_file|>\n",
		// the history, oldest first, with the lines where the edits are now
		"<|edit_history|>\n--- cmd/main.go\n+++ cmd/main.go\n@@ -5,1 +5,1 @@\n-func add(a int) int {\n+func add(a, b int) int {\n@@ -10,1 +10,1 @@\n-\tx := add(1)\n+\tx := add(1, 2)\n<|/edit_history|>",
		// the excerpt of the other document around the line naming the region's names
		"<|excerpt|> notes.md (markdown, lines 36-55)\nnothing to see here\n",
		"sum with add and Println\nmore filler text\n",
		closing,
	}
	for _, w := range want {
		if !strings.Contains(user, w) {
			t.Errorf("the user message lacks %q", w)
		}
	}
	for _, no := range []string{"package main", "empty.go", "notes.md (markdown, lines 1-", "/home/me"} {
		if strings.Contains(user, no) {
			t.Errorf("the user message has %q", no)
		}
	}
	// What changes least first, for the server's prompt cache: the history's newest edit grows
	// with each key typed.
	if strings.Index(user, "<|excerpt|>") > strings.Index(user, "<|current_file|>") || strings.Index(user, "<|current_file|>") > strings.Index(user, "<|edit_history|>") {
		t.Error("want the excerpts, then the file, then the history")
	}

	// No key, no Authorization; limits turned off leave the region alone.
	e = newEngine(t, Config{URL: srv.URL + "/", Model: "local", ContextLines: -1, MaxHistory: -1, MaxOpenDocs: -1, MaxTokens: 77})
	if _, err := e.Suggest(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	s = srv.last(t)
	user = s.Body.Messages[1].Content
	if s.Auth != "" || s.Body.MaxTokens != 77 || strings.Contains(user, "<|edit_history|>") || strings.Contains(user, "<|excerpt|>") {
		t.Errorf("auth %q max_tokens %d, user message:\n%s", s.Auth, s.Body.MaxTokens, user)
	}
	// 4 lines above the cursor's, 8 below (up to the end), no context.
	if !strings.Contains(user, "from line 7, with the editable region marked:\n\n<|current_file|>\n"+markStart+"\n}\n\nfunc main() {\n") || !strings.Contains(user, "\n}\n"+markEnd+"\n<|/current_file|>") {
		t.Errorf("user message without context:\n%s", user)
	}
}

func TestEndpoint(t *testing.T) {
	srv := newFake(t, func(w http.ResponseWriter, _ *http.Request, _ chatRequest) { reply(w, "") })
	for url, path := range map[string]string{
		srv.URL:                          "/v1/chat/completions",
		srv.URL + "/":                    "/v1/chat/completions",
		srv.URL + "/v1":                  "/v1/chat/completions",
		srv.URL + "/api/v1/":             "/api/v1/chat/completions",
		srv.URL + "/openai":              "/openai/v1/chat/completions",
		srv.URL + "/v1/chat/completions": "/v1/chat/completions",
		srv.URL + "/x/chat/completions?api-version=1": "/x/chat/completions?api-version=1",
	} {
		e := newEngine(t, Config{URL: url, Model: "m"})
		if _, err := e.Suggest(context.Background(), nesagent.Request{Text: "a\n"}); err != nil {
			t.Fatal(err)
		}
		if got := srv.last(t).Path; got != path {
			t.Errorf("URL %s: posted to %s, want %s", url, got, path)
		}
	}
	for _, bad := range []Config{{Model: "m"}, {URL: "http://x"}, {URL: "ftp://x", Model: "m"}, {URL: "127.0.0.1:8080", Model: "m"}, {URL: "http://x", Model: "m", Timeout: -1}} {
		if _, err := New(bad); err == nil {
			t.Errorf("New(%+v) accepted", bad)
		}
	}
	// An address without its scheme is told the URL it means, whether Go's parser takes it
	// (localhost:8012, a scheme "localhost") or not (127.0.0.1:8012).
	for _, addr := range []string{"127.0.0.1:8012", "localhost:8012", "[::1]:8080/v1", "gpu-box"} {
		_, err := New(Config{URL: addr, Model: "m"})
		if want := fmt.Sprintf("model: server URL %q has no scheme: want http://host[:port][/path] or https://…, such as http://%s", addr, addr); err == nil || err.Error() != want {
			t.Errorf("New with URL %q: %v, want %q", addr, err, want)
		}
	}
}

func TestRewrites(t *testing.T) {
	type tc struct {
		name   string
		text   string
		cursor string // the text before the cursor is text up to the first occurrence of this, included
		answer func(region string) string
		want   []nesagent.TextEdit // nil: no suggestion
		after  string              // the text after the edits, when want is not nil
	}
	fence := func(r string) string {
		return "Sure! Here is the rewritten region:\n\n```go\n" + marked(r) + "\n```\n\nI added the missing argument."
	}
	src := "func f() {\n\tx := compute(a)\n\tlog(x)\n}\n"
	at := func(s, sub string) int { return strings.Index(s, sub) }
	cases := []tc{
		{
			name: "one word", text: src, cursor: "log(",
			answer: func(r string) string { return marked(strings.Replace(r, "compute", "calculate", 1)) },
			want:   []nesagent.TextEdit{{Start: at(src, "compute"), End: at(src, "compute") + len("compute"), NewText: "calculate"}},
		},
		{
			name: "word suffix", text: src, cursor: "log(",
			answer: func(r string) string { return marked(strings.Replace(r, "log(x)", "logf(x)", 1)) },
			want:   []nesagent.TextEdit{{Start: at(src, "log") + 3, End: at(src, "log") + 3, NewText: "f"}},
		},
		{
			name: "insertion", text: src, cursor: "log(x)",
			answer: func(r string) string { return marked(strings.Replace(r, "\tlog(x)\n", "\tlog(x)\n\treturn x\n", 1)) },
			want:   []nesagent.TextEdit{{Start: at(src, "}"), End: at(src, "}"), NewText: "\treturn x\n"}},
		},
		{
			name: "deletion", text: src, cursor: "f()",
			answer: func(r string) string { return marked(strings.Replace(r, "\tlog(x)\n", "", 1)) },
			want:   []nesagent.TextEdit{{Start: at(src, "\tlog"), End: at(src, "}"), NewText: ""}},
		},
		{
			name: "two separate changes", text: "a := one(1)\nb := 2\nc := 3\nd := one(4)\n", cursor: "one(",
			answer: func(r string) string { return marked(strings.ReplaceAll(r, "one(", "two(")) },
			want: []nesagent.TextEdit{
				{Start: 5, End: 8, NewText: "two"},
				{Start: at("a := one(1)\nb := 2\nc := 3\nd := one(4)\n", "d := ") + 5, End: at("a := one(1)\nb := 2\nc := 3\nd := one(4)\n", "d := ") + 8, NewText: "two"},
			},
		},
		{
			name: "two changes on one line", text: "v := pair(left, right)\n", cursor: "pair",
			answer: func(r string) string { return marked(strings.Replace(r, "pair(left, right)", "pair(l, r)", 1)) },
			after:  "v := pair(l, r)\n",
		},
		{
			name: "no change", text: src, cursor: "log(",
			answer: func(r string) string { return marked(r) },
		},
		{
			name: "no markers", text: src, cursor: "log(",
			answer: func(r string) string { return "```go\n" + strings.Replace(r, "log", "logf", 1) + "```" },
		},
		{
			name: "no end marker (cut short)", text: src, cursor: "log(",
			answer: func(r string) string { return markStart + "\n" + strings.Replace(r, "log", "logf", 1) },
		},
		{
			name: "empty region", text: src, cursor: "log(",
			answer: func(string) string { return marked("") },
		},
		{
			name: "code fence and chatter", text: src, cursor: "log(",
			answer: func(r string) string { return fence(strings.Replace(r, "log(x)", "log(x, a)", 1)) },
			want:   []nesagent.TextEdit{{Start: at(src, "x)\n}") + 1, End: at(src, "x)\n}") + 1, NewText: ", a"}},
			after:  strings.Replace(src, "log(x)", "log(x, a)", 1),
		},
		{
			name: "code fence inside the markers", text: src, cursor: "log(",
			answer: func(r string) string {
				return markStart + "\n```go\n" + strings.Replace(r, "log(x)", "log(x, a)", 1) + "```\n" + markEnd
			},
			after: strings.Replace(src, "log(x)", "log(x, a)", 1),
		},
		{
			name: "explanation naming the markers first", text: src, cursor: "log(",
			answer: func(r string) string {
				return "I rewrite the text between " + markStart + " and " + markEnd + ":\n" + marked(strings.Replace(r, "log(x)", "log(x, a)", 1))
			},
			after: strings.Replace(src, "log(x)", "log(x, a)", 1),
		},
		{
			name: "thinking", text: src, cursor: "log(",
			answer: func(r string) string {
				return "<think>maybe " + marked("nonsense\n") + "</think>\n" + marked(strings.Replace(r, "log(x)", "log(x, a)", 1))
			},
			after: strings.Replace(src, "log(x)", "log(x, a)", 1),
		},
		{
			name: "cursor marker kept, end marker on the last line", text: src, cursor: "log(",
			answer: func(r string) string {
				r = strings.Replace(r, "log(", "log("+markCursor, 1)
				return markStart + "\n" + strings.TrimSuffix(strings.Replace(r, "x := compute(a)", "x := compute(a, b)", 1), "\n") + markEnd
			},
			after: strings.Replace(src, "compute(a)", "compute(a, b)", 1),
		},
		{
			name: "crlf", text: "func f() {\r\n\tx := compute(a)\r\n\tlog(x)\r\n}\r\n", cursor: "log(",
			answer: func(r string) string {
				if strings.Contains(r, "\r") {
					t.Errorf("the prompt has \\r: %q", r)
				}
				return marked(strings.Replace(strings.Replace(r, "\tlog(x)\n", "\tlog(x)\n\treturn x\n", 1), "compute", "calc", 1))
			},
			want: []nesagent.TextEdit{
				{Start: 18, End: 25, NewText: "calc"},
				{Start: at("func f() {\r\n\tx := compute(a)\r\n\tlog(x)\r\n}\r\n", "}\r\n"), End: at("func f() {\r\n\tx := compute(a)\r\n\tlog(x)\r\n}\r\n", "}\r\n"), NewText: "\treturn x\r\n"},
			},
			after: "func f() {\r\n\tx := calc(a)\r\n\tlog(x)\r\n\treturn x\r\n}\r\n",
		},
		{
			name: "crlf answered with crlf", text: "a\r\nb\r\n", cursor: "b",
			answer: func(r string) string { return strings.ReplaceAll(marked(r+"c\n"), "\n", "\r\n") },
			after:  "a\r\nb\r\nc\r\n",
		},
		{
			name: "non-ASCII", text: "// café ☕ 𐐀\ns := \"naïve\" + \"日本\"\n", cursor: "s :=",
			answer: func(r string) string {
				return marked(strings.NewReplacer("naïve", "naïveté", "café", "cafè", "日本", "日本語", "𐐀", "𐐁").Replace(r))
			},
			want: []nesagent.TextEdit{
				// a replaced word, whole; a replaced symbol; insertions, just them
				{Start: len("// "), End: len("// café"), NewText: "cafè"},
				{Start: len("// café ☕ "), End: len("// café ☕ 𐐀"), NewText: "𐐁"},
				{Start: len("// café ☕ 𐐀\ns := \"naïve"), End: len("// café ☕ 𐐀\ns := \"naïve"), NewText: "té"},
				{Start: len("// café ☕ 𐐀\ns := \"naïve\" + \"日本"), End: len("// café ☕ 𐐀\ns := \"naïve\" + \"日本"), NewText: "語"},
			},
		},
		{
			name: "no final line break", text: "a\nb", cursor: "b",
			answer: func(r string) string { return marked(strings.TrimSuffix(r, "\n") + "c\n") },
			want:   []nesagent.TextEdit{{Start: 3, End: 3, NewText: "c"}},
		},
		{
			name: "no final line break, a line added", text: "a\nb", cursor: "b",
			answer: func(r string) string { return marked(r + "c\n") },
			want:   []nesagent.TextEdit{{Start: 3, End: 3, NewText: "\nc"}},
		},
		{
			name: "cursor on the empty last line", text: "a\nb\n", cursor: "b\n",
			answer: func(r string) string {
				if r != "a\nb\n\n" {
					t.Errorf("region %q", r)
				}
				return marked(r) // copied as shown: no change
			},
		},
		{
			name: "cursor on the empty last line, typed", text: "a\nb\n", cursor: "b\n",
			answer: func(r string) string { return marked(strings.TrimSuffix(r, "\n") + "c\n") },
			after:  "a\nb\nc\n",
		},
		{
			name: "empty document", text: "", cursor: "",
			answer: func(r string) string { return marked("package x\n") },
			after:  "package x",
		},
		{
			name: "whole line rewritten", text: "x\n\treturn a + b\ny\n", cursor: "return",
			answer: func(r string) string {
				return marked(strings.Replace(r, "return a + b", "if err != nil { panic(err) }", 1))
			},
			want: []nesagent.TextEdit{{Start: 3, End: len("x\n\treturn a + b"), NewText: "if err != nil { panic(err) }"}},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := newFake(t, rewriter(t, func(r string) string { return r }, c.answer))
			e := newEngine(t, Config{URL: srv.URL})
			cur := strings.Index(c.text, c.cursor) + len(c.cursor)
			sugs, err := e.Suggest(context.Background(), nesagent.Request{URI: "file:///w/f.go", Text: c.text, Cursor: cur})
			if err != nil {
				t.Fatal(err)
			}
			if c.want == nil && c.after == "" {
				if sugs != nil {
					t.Fatalf("suggestions %+v, want none", sugs)
				}
				return
			}
			if len(sugs) != 1 {
				t.Fatalf("suggestions %+v, want one", sugs)
			}
			if c.want != nil && !equalEdits(sugs[0].Edits, c.want) {
				t.Errorf("edits %+v, want %+v", sugs[0].Edits, c.want)
			}
			if c.after != "" {
				if got := apply(t, c.text, sugs[0].Edits); got != c.after {
					t.Errorf("after the edits %+v: %q, want %q", sugs[0].Edits, got, c.after)
				}
			} else {
				apply(t, c.text, sugs[0].Edits)
			}
		})
	}
}

func equalEdits(a, b []nesagent.TextEdit) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestRegionBounds(t *testing.T) {
	srv := newFake(t, func(w http.ResponseWriter, _ *http.Request, _ chatRequest) { reply(w, "") })
	var b strings.Builder
	for i := range 40 {
		b.WriteString(strings.Repeat("x", 9) + string(rune('a'+i%26)) + "\n") // 11 bytes a line
	}
	text := b.String()
	cur := 20*11 + 3 // line 21
	e := newEngine(t, Config{URL: srv.URL, MaxRegionBytes: 55, ContextLines: 2, ContextBytes: 15})
	if _, err := e.Suggest(context.Background(), nesagent.Request{Text: text, Cursor: cur}); err != nil {
		t.Fatal(err)
	}
	region := regionOf(t, srv.last(t).Body.Messages[1].Content)
	// 5 lines fit: 2 above the cursor's line, 2 below (trimmed from 4 and 8, farthest first).
	if region != text[18*11:23*11] {
		t.Errorf("region %q, want lines 19-23", region)
	}
	user := srv.last(t).Body.Messages[1].Content
	if !strings.Contains(user, "from line 18, with the editable region marked:\n\n<|current_file|>\n"+text[17*11:18*11]+markStart+"\n") || !strings.Contains(user, markEnd+"\n"+text[23*11:24*11]+"<|/current_file|>") {
		t.Errorf("context: want one line each side (15 bytes):\n%s", user)
	}
	// A cursor line longer than the bound: no request, no suggestion.
	n := srv.count()
	long := strings.Repeat("y", 100) + "\n"
	sugs, err := e.Suggest(context.Background(), nesagent.Request{Text: long, Cursor: 5})
	if err != nil || sugs != nil || srv.count() != n {
		t.Errorf("a long line: %+v %v, %d requests", sugs, err, srv.count()-n)
	}
}

func TestTimeout(t *testing.T) {
	srv := newFake(t, func(w http.ResponseWriter, r *http.Request, _ chatRequest) {
		select {
		case <-time.After(5 * time.Second):
		case <-r.Context().Done():
			return
		}
		reply(w, "")
	})
	e := newEngine(t, Config{URL: srv.URL, Timeout: 300 * time.Millisecond})
	began := time.Now()
	_, err := e.Suggest(context.Background(), nesagent.Request{Text: "a\n"})
	took := time.Since(began)
	if err == nil || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "within 300ms") {
		t.Fatalf("error %v", err)
	}
	if took < 250*time.Millisecond || took > 2*time.Second {
		t.Errorf("returned after %s, want about 300ms", took)
	}
	t.Log(err)
}

func TestCancel(t *testing.T) {
	arrived, aborted := make(chan struct{}), make(chan struct{})
	srv := newFake(t, func(w http.ResponseWriter, r *http.Request, _ chatRequest) {
		close(arrived)
		select {
		case <-time.After(5 * time.Second):
		case <-r.Context().Done():
			close(aborted)
			return
		}
		reply(w, "")
	})
	e := newEngine(t, Config{URL: srv.URL, Timeout: 10 * time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-arrived
		cancel()
	}()
	began := time.Now()
	_, err := e.Suggest(ctx, nesagent.Request{Text: "a\n"})
	if err == nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if took := time.Since(began); took > 2*time.Second {
		t.Errorf("returned after %s", took)
	}
	select {
	case <-aborted:
	case <-time.After(2 * time.Second):
		t.Error("the server's request was not aborted")
	}
}

func TestServerErrors(t *testing.T) {
	cases := []struct {
		name, ctype string
		status      int
		body        string
		want        string // in the error; "" for no error and no suggestion
	}{
		{"500 with an OpenAI error", "application/json", 500, `{"error":{"message":"model 'x' not found","type":"invalid_request_error"}}`, "500 Internal Server Error: model 'x' not found"},
		{"401 with a string error", "application/json", 401, `{"error":"invalid api key"}`, "401 Unauthorized: invalid api key"},
		{"403 with FastAPI's detail", "application/json", 403, `{"detail":"Invalid token: not authorized"}`, "403 Forbidden: Invalid token: not authorized"},
		{"422 with FastAPI's validation details", "application/json", 422, `{"detail":[{"loc":["body","model"],"msg":"field required","type":"missing"},{"msg":"extra field"}]}`, "422 Unprocessable Entity: field required; extra field"},
		{"503 plain text", "text/plain", 503, "Loading model", `503 Service Unavailable: "Loading model"`},
		{"404 empty", "text/plain", 404, "", "404 Not Found: (empty body)"},
		{"malformed JSON", "application/json", 200, `{"choices":[`, "malformed body"},
		{"HTML", "text/html", 200, `<html>hello</html>`, "malformed body"},
		{"no choices", "application/json", 200, `{"choices":[]}`, "no choices"},
		{"error in a 200", "application/json", 200, `{"error":{"message":"context length exceeded"}}`, "context length exceeded"},
		{"content of the wrong type", "application/json", 200, `{"choices":[{"message":{"content":42}}]}`, "malformed message content"},
		{"null content", "application/json", 200, `{"choices":[{"message":{"content":null},"finish_reason":"length"}]}`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := newFake(t, func(w http.ResponseWriter, _ *http.Request, _ chatRequest) {
				w.Header().Set("Content-Type", c.ctype)
				w.WriteHeader(c.status)
				io.WriteString(w, c.body)
			})
			e := newEngine(t, Config{URL: srv.URL})
			sugs, err := e.Suggest(context.Background(), nesagent.Request{Text: "a\n"})
			if c.want == "" {
				if err != nil || sugs != nil {
					t.Fatalf("%+v %v, want nothing", sugs, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), srv.URL) {
				t.Fatalf("error %v, want one naming the server and saying %q", err, c.want)
			}
			t.Log(err)
		})
	}
	// Nobody listening.
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	e := newEngine(t, Config{URL: url})
	if _, err := e.Suggest(context.Background(), nesagent.Request{Text: "a\n"}); err == nil || !strings.Contains(err.Error(), url) {
		t.Errorf("error %v", err)
	} else {
		t.Log(err)
	}
}

func TestContentParts(t *testing.T) {
	srv := newFake(t, func(w http.ResponseWriter, _ *http.Request, _ chatRequest) {
		io.WriteString(w, `{"choices":[{"message":{"content":[{"type":"text","text":"`+markStart+`\nb\n"},{"type":"text","text":"`+markEnd+`"}]}}]}`)
	})
	e := newEngine(t, Config{URL: srv.URL})
	sugs, err := e.Suggest(context.Background(), nesagent.Request{Text: "a\n", Cursor: 1})
	if err != nil || len(sugs) != 1 || apply(t, "a\n", sugs[0].Edits) != "b\n" {
		t.Fatalf("%+v %v", sugs, err)
	}
}

func TestHistoryBounds(t *testing.T) {
	e := newEngine(t, Config{URL: "http://127.0.0.1:1"})
	var recent []nesagent.Edit
	for i := range 9 { // one-line edits at lines 1-9, when they were made
		recent = append(recent, nesagent.Edit{Start: 5 * i, Old: "old", New: "new", OldLines: fmt.Sprintf("old%d", i), NewLines: fmt.Sprintf("new%d", i), LineStart: 5 * i})
	}
	recent = append(recent, nesagent.Edit{Start: 0, OldLines: "same", NewLines: "same"}) // typed and undone
	// Then 30 lines pasted at the start of line 3.
	paste := strings.Repeat("pasted\n", 30)
	recent = append(recent, nesagent.Edit{Start: 10, Old: "", New: paste, OldLines: "line", NewLines: paste + "line", LineStart: 10})
	text := strings.Repeat("line\n", 2) + paste + strings.Repeat("line\n", 48)
	h := history(&e.cfg, nesagent.Request{Text: text, Recent: recent}, "f")
	t.Logf("history:\n%s", h)
	if strings.Contains(h, "old3") || strings.Contains(h, "same") || strings.Index(h, "-old4") > strings.Index(h, "-old8") || strings.Index(h, "-old8") > strings.Index(h, "+pasted") {
		t.Errorf("want the 6 newest edits that change something, oldest first")
	}
	// The earlier edits below line 3 are shown where the paste moved them: 30 lines down.
	if !strings.Contains(h, "@@ -35,1 +35,1 @@\n-old4\n+new4\n") || !strings.Contains(h, "@@ -39,1 +39,1 @@\n-old8\n+new8\n") {
		t.Errorf("edits before the paste should have moved")
	}
	if !strings.HasPrefix(h, "--- f\n+++ f\n@@") || !strings.Contains(h, "@@ -3,1 +3,31 @@\n+pasted\n") || !strings.Contains(h, "\n … (16 lines left out)\n") ||
		strings.Count(h, "+pasted") != 14 || !strings.HasSuffix(h, "+pasted\n line\n") {
		t.Errorf("a long hunk is cut in the middle")
	}
}
