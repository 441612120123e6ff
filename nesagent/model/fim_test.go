package model

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/andybalholm/brotli"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent"
)

// testKey is the API key of the request tests: no byte a request writes may hold it but the
// Authorization header's.
const testKey = "sk-TEST-0123456789abcdef"

// recorded is one request a fake service received: its method and path, its headers, and its
// body as sent and, for a brotli body, decoded.
type recorded struct {
	method, path string
	header       http.Header
	raw, body    []byte
}

// service is a fake model server that records each request and answers by path.
type service struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []recorded
}

func newService(t *testing.T, answer func(w http.ResponseWriter, r *http.Request, body []byte)) *service {
	t.Helper()
	s := &service{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		body := raw
		if r.Header.Get("Content-Encoding") == "br" {
			var err error
			if body, err = io.ReadAll(brotli.NewReader(bytes.NewReader(raw))); err != nil {
				http.Error(w, "not brotli: "+err.Error(), http.StatusBadRequest)
				return
			}
		}
		s.mu.Lock()
		s.reqs = append(s.reqs, recorded{method: r.Method, path: r.URL.Path, header: r.Header.Clone(), raw: raw, body: body})
		s.mu.Unlock()
		answer(w, r, body)
	}))
	t.Cleanup(func() {
		// A handler still writing to a client that went away (an answer the client cut short)
		// ends with its connection: Close alone waits for it, and under Wine a client's close
		// does not end a write the server is blocked in.
		s.CloseClientConnections()
		s.Close()
	})
	return s
}

// posts are the POST requests received.
func (s *service) posts() []recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []recorded
	for _, r := range s.reqs {
		if r.method == http.MethodPost {
			out = append(out, r)
		}
	}
	return out
}

// llamaServer answers as llama-server does: /props, and /infill with content.
func llamaServer(content string) func(w http.ResponseWriter, r *http.Request, body []byte) {
	return func(w http.ResponseWriter, r *http.Request, body []byte) {
		switch r.URL.Path {
		case "/props":
			fmt.Fprint(w, `{"default_generation_settings":{"n_ctx":4096},"build_info":"b1-test"}`)
		case "/infill":
			json.NewEncoder(w).Encode(map[string]any{"content": content, "stop_type": "eos", "timings": map[string]any{"prompt_n": 12, "cache_n": 30, "predicted_n": 4}})
		default:
			http.NotFound(w, r)
		}
	}
}

// fimCase is a document with the cursor at "|".
func fimCase(uri, text string) nesagent.Request {
	at := strings.Index(text, "|")
	return nesagent.Request{URI: uri, Root: "/home/ana/shop", LanguageID: "go", Text: text[:at] + text[at+1:], Cursor: at}
}

// applied is the request's text with the suggestion's edits made.
func applied(t *testing.T, req nesagent.Request, sugs []nesagent.Suggestion) string {
	t.Helper()
	if len(sugs) != 1 {
		t.Fatalf("%d suggestions, want 1", len(sugs))
	}
	return applyEdits(req.Text, sugs[0].Edits)
}

func TestFIMAtLlamaServerInfill(t *testing.T) {
	srv := newService(t, llamaServer("a + b\n}\n\nfunc other() {"))
	eng, err := New(Config{URL: srv.URL, Model: "qwen2.5-coder:1.5b", Format: "fim", APIKey: testKey, APIKeyEnv: "K"})
	if err != nil {
		t.Fatal(err)
	}
	req := fimCase("file:///home/ana/shop/add.go", "package shop\n\nfunc add(a, b int) int {\n\treturn |\n}\n")
	req.Open = []nesagent.OpenDocument{{URI: "file:///home/ana/shop/use.go", Text: "package shop\n\nvar x = add(1, 2)\n", Visit: 20}}
	sugs, err := eng.Suggest(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	// The answer ends at the block's end (the line indented less than the cursor's).
	if got, want := applied(t, req, sugs), "package shop\n\nfunc add(a, b int) int {\n\treturn a + b\n}\n"; got != want {
		t.Errorf("after accepting:\n%q\nwant\n%q", got, want)
	}
	if c := sugs[0].Cursor; c == nil || *c != len("package shop\n\nfunc add(a, b int) int {\n\treturn a + b") {
		t.Errorf("cursor %v, want after the completion", c)
	}
	posts := srv.posts()
	if len(posts) != 1 || posts[0].path != "/infill" {
		t.Fatalf("posts %+v, want one to /infill", posts)
	}
	var body infillRequest
	if err := json.Unmarshal(posts[0].body, &body); err != nil {
		t.Fatal(err)
	}
	if body.InputPrefix != "package shop\n\nfunc add(a, b int) int {\n" || body.Prompt != "\treturn " || body.InputSuffix != "\n}\n" || body.NIndent != 1 || !body.CachePrompt {
		t.Errorf("the /infill request: %+v", body)
	}
	if len(body.InputExtra) != 1 || body.InputExtra[0].Filename != "use.go" || !strings.Contains(body.InputExtra[0].Text, "add(1, 2)") {
		t.Errorf("input_extra %+v, want the other open file's chunk", body.InputExtra)
	}
}

// TestFIMRequestsGolden pins the request each FIM family and each hosted service gets: the method,
// the path, the headers that say what the body is, and the body (decoded when compressed). The
// key is in the Authorization header and in no byte of any body. Run with -update to rewrite
// testdata/golden/requests after a deliberate change, and read the diff.
func TestFIMRequestsGolden(t *testing.T) {
	other := nesagent.OpenDocument{URI: "file:///home/ana/shop/receipt.go", LanguageID: "go", Text: "package shop\n\nfunc Receipt() {\n\tprintln(Total(nil))\n}\n", Visit: 30}
	base := fimCase("file:///home/ana/shop/total.go", "package shop\n\n// Total adds the prices.\nfunc Total(prices []int) int {\n\tsum := 0\n\tfor _, p := range prices {\n\t\tsum += |\n\t}\n\treturn sum\n}\n")
	base.Open = []nesagent.OpenDocument{other}
	base.Recent = []nesagent.Edit{{Start: 80, Old: "", New: "p", OldLines: "\t\tsum += ", NewLines: "\t\tsum += p", LineStart: strings.Index(base.Text, "\t\tsum"), Seq: 2}}
	base.Diagnostics = []nesagent.Diagnostic{{Line: 6, Severity: "error", Message: "expected operand"}}
	ollama := func(w http.ResponseWriter, r *http.Request, _ []byte) {
		switch r.URL.Path {
		case "/api/version":
			fmt.Fprint(w, `{"version":"0.12.0"}`)
		case "/api/generate":
			fmt.Fprint(w, `{"response":"p","done":true,"done_reason":"stop"}`)
		}
	}
	openai := func(w http.ResponseWriter, r *http.Request, _ []byte) {
		switch r.URL.Path {
		case "/v1/completions":
			fmt.Fprint(w, `{"choices":[{"text":"p","finish_reason":"stop"}]}`)
		default:
			http.NotFound(w, r)
		}
	}
	hosted := func(w http.ResponseWriter, r *http.Request, _ []byte) {
		switch r.URL.Path {
		case "/v1/fim/completions":
			fmt.Fprint(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":"p"},"finish_reason":"stop"}]}`)
		case "/v1/edit/completions":
			fmt.Fprint(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":"None"},"finish_reason":"stop"}]}`)
		case "/backend/next_edit_autocomplete":
			fmt.Fprint(w, `{"autocomplete_id":"a1","start_index":0,"end_index":0,"completion":""}`)
		}
	}
	cases := []struct {
		name, format, model, fimTokens, server string
		serve                                  func(w http.ResponseWriter, r *http.Request, body []byte)
	}{
		{"infill", "fim", "qwen2.5-coder-1.5b", "", "", llamaServer("p")},
		{"ollama", "fim", "qwen2.5-coder:1.5b", "", "", ollama},
		{"qwen", "fim", "qwen2.5-coder-1.5b", "", "openai", openai},
		{"codegemma", "fim", "codegemma-2b", "", "openai", openai},
		{"starcoder", "fim", "starcoder2-3b", "", "openai", openai},
		{"granite", "fim", "m", "granite", "openai", openai},
		{"deepseek", "fim", "deepseek-coder-1.3b-base", "", "openai", openai},
		{"codellama", "fim", "codellama-7b", "", "openai", openai},
		{"codestral-raw", "fim", "codestral-22b", "", "openai", openai},
		{"codestral", "codestral", "codestral-latest", "", "", hosted},
		{"mercury", "mercury", "mercury-edit", "", "", hosted},
		{"sweep-api", "sweep-api", "sweep-next-edit", "", "", hosted},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newService(t, tc.serve)
			eng, err := New(Config{URL: srv.URL, Model: tc.model, Format: tc.format, FIMTokens: tc.fimTokens, Server: tc.server, APIKey: testKey, APIKeyEnv: "K"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := eng.Suggest(context.Background(), base); err != nil {
				t.Fatal(err)
			}
			var got strings.Builder
			for _, r := range srv.reqs {
				fmt.Fprintf(&got, "%s %s\n", r.method, r.path)
				for _, h := range []string{"Content-Type", "Content-Encoding"} {
					if v := r.header.Get(h); v != "" {
						fmt.Fprintf(&got, "%s: %s\n", h, v)
					}
				}
				if a := r.header.Get("Authorization"); a != "Bearer "+testKey {
					t.Errorf("%s %s: Authorization %q, want the key as a Bearer token", r.method, r.path, a)
				}
				for name, vs := range r.header {
					if name != "Authorization" && strings.Contains(strings.Join(vs, " "), testKey) {
						t.Errorf("the key in header %s", name)
					}
				}
				if bytes.Contains(r.raw, []byte(testKey)) || bytes.Contains(r.body, []byte(testKey)) || strings.Contains(r.path, testKey) {
					t.Errorf("%s %s: the key in the request's body or path", r.method, r.path)
				}
				if len(r.body) > 0 {
					var v any
					if err := json.Unmarshal(r.body, &v); err != nil {
						t.Fatalf("%s %s: the body is no JSON: %v", r.method, r.path, err)
					}
					enc := json.NewEncoder(&got)
					enc.SetEscapeHTML(false)
					enc.SetIndent("", "  ")
					enc.Encode(v)
				}
			}
			// The time of the user's actions changes from run to run.
			out := timestamps.ReplaceAllString(got.String(), `"timestamp": 0`)
			path := filepath.Join("testdata", "golden", "requests", tc.name+".txt")
			if *update {
				os.MkdirAll(filepath.Dir(path), 0o755)
				if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -run TestFIMRequestsGolden -update)", err)
			}
			if out != string(want) {
				t.Errorf("%s: the request changed (go test -run TestFIMRequestsGolden -update, then read the diff):\n%s", path, out)
			}
		})
	}
}

func TestCleanFIM(t *testing.T) {
	qwen := fimFamilies["qwen"]
	p := func(line, suffix string) *FIMPrompt {
		return &FIMPrompt{Line: line, Suffix: suffix, Indent: indentWidth(line), Tokens: &qwen}
	}
	cases := []struct {
		name       string
		p          *FIMPrompt
		answer     string
		cut        bool
		want, rule string
	}{
		{"whole", p("\tx := ", "\n}\n"), "compute(a)", false, "compute(a)", ""},
		{"a stop token", p("\tx := ", "\n}\n"), "compute(a)<|endoftext|>garbage", false, "compute(a)", ""},
		{"a file separator", p("\tx := ", "\n}\n"), "1\n<|file_sep|>other.go\npackage x", false, "1", ""},
		{"cut short: the last line goes", p("\tx := ", "\n}\n"), "f(a)\n\ty := g(", true, "f(a)", ""},
		{"cut short in its first line", p("\tx := ", "\n}\n"), "f(a, b, c, d", true, "f(a, b, c, d", RuleCutShort},
		{"cut short, but ended at a stop token", p("\tx := ", "\n}\n"), "f(a)<|endoftext|>", true, "f(a)", ""},
		{"empty", p("\tx := ", "\n}\n"), "", false, "", RuleNoChange},
		{"blank lines only", p("\tx := ", "\n}\n"), "\n\n  \n", false, "", RuleNoChange},
		{"only the suffix again", p("\tx := f(", ")\n}\n"), ")", false, ")", RuleRepeatsSuffix},
		{"the rest of the line dropped", p("\tx := f(", ")\n}\n"), "a, b)", false, "a, b", ""},
		{"the next lines again", p("\tsum += ", "\n\treturn sum\n}\n"), "p\n\treturn sum\n}", false, "p", ""},
		{"the cursor's line made the next one", p("\treturn ", "\n\treturn sum\n}\n"), "sum", false, "sum", RuleRepeatsSuffix},
		{"the end of the block", p("\t\tsum += ", "\n\t}\n"), "p\n\t\tn++\n\t}\n\treturn sum", false, "p\n\t\tn++", ""},
		{"a closing bracket of its own kept", p("\tif ok ", "\n\treturn\n}\n"), "{\n\t\tlog()\n\t}", false, "{\n\t\tlog()\n\t}", ""},
		{"a leading break at the line's start", p("", "func b() {}\n"), "\nfunc a() {}\n", false, "func a() {}", ""},
		{"trailing blank lines", p("\tx := ", "\n}\n"), "1\n\n\n", false, "1", ""},
		{"indentation the line has", &FIMPrompt{Line: "", Lead: 1, Indent: 1, Suffix: "\n}\n", Tokens: &qwen}, "\treturn x\n}", false, "return x", ""},
		{"line breaks as the server wrote them", p("\tx := ", "\n}\n"), "f(\r\n\t\ta)", false, "f(\n\t\ta)", ""},
		// A new line after a finished one, with code below: kept back; after a line that wants
		// its next one (a brace, a colon, an if, a comment), shown.
		{"past a finished line", p("\treturn a - b", "\n}\n\nfunc g() {}\n"), "\n\tfmt.Println(a)", false, "\n\tfmt.Println(a)", RulePastLine},
		{"past a finished statement", p("        this.name = name;", "\n        this.age = age;\n    }\n"), "\n        this.id = id;", false, "\n        this.id = id;", RulePastLine},
		{"after an opening brace", p("\tfor _, x := range xs {", "\n\treturn total\n}\n"), "\n\t\ttotal += x\n\t}", false, "\n\t\ttotal += x\n\t}", ""},
		{"after a colon", p("    if n < 0:", "\n    return n\n"), "\n        raise ValueError(n)", false, "\n        raise ValueError(n)", ""},
		{"after an if without braces", p("    if (n < 0)", "\n    return n;\n"), "\n        n = -n;", false, "\n        n = -n;", ""},
		{"after a comment", p("\t// the total", "\n\treturn total\n"), "\n\ttotal := sum(xs)", false, "\n\ttotal := sum(xs)", ""},
		{"on the line, after a finished one", p("\treturn a", "\n}\n"), " - b", false, " - b", ""},
		{"at the end of the document", p("\treturn a - b", "\n"), "\n\tfmt.Println(a)", false, "\n\tfmt.Println(a)", ""},
		// The cursor's line made a copy of the one above.
		{"the line above again", &FIMPrompt{Prefix: "func f() {\n\tx := load()\n", Line: "\t", Indent: 1, Suffix: "\n\tuse(x)\n}\n", Tokens: &qwen}, "x := load()", false, "x := load()", RuleRepeatsAbove},
		{"a line like the one above", &FIMPrompt{Prefix: "func f() {\n\tx := load()\n", Line: "\t", Indent: 1, Suffix: "\n\tuse(x)\n}\n", Tokens: &qwen}, "y := load()", false, "y := load()", ""},
	}
	for _, tc := range cases {
		got, rule, _ := cleanFIM(tc.p, tc.answer, tc.cut)
		if rule != tc.rule || rule != RuleNoChange && got != tc.want {
			t.Errorf("%s: %q, rule %q; want %q, rule %q", tc.name, got, rule, tc.want, tc.rule)
		}
	}
}

// TestFIMAnswersOfEachKind: what a user sees of each kind of answer from llama-server's /infill:
// a completion; nothing for an empty one, the suffix again, a copied token, a runaway; an error
// body; a huge answer; an answer that never ends.
func TestFIMAnswersOfEachKind(t *testing.T) {
	req := fimCase("file:///w/a.go", "package a\n\nfunc f() int {\n\treturn |\n}\n")
	// The agent's timeout is 10 s, time enough to read a huge answer under Wine; an answer that
	// never ends is asked with 1 s.
	ask := func(t *testing.T, serve func(w http.ResponseWriter, r *http.Request, body []byte), noGate bool) ([]nesagent.Suggestion, *nesagent.Quiet, error) {
		timeout := 10 * time.Second
		if strings.HasSuffix(t.Name(), "never_ends") {
			timeout = time.Second
		}
		srv := newService(t, serve)
		eng, err := New(Config{URL: srv.URL, Model: "qwen", Format: "fim", Timeout: timeout, NoGate: noGate})
		if err != nil {
			t.Fatal(err)
		}
		return eng.(nesagent.Reasoned).SuggestWithReason(context.Background(), req)
	}
	for _, tc := range []struct {
		name, content, rule string
	}{
		{"empty", "", RuleNoChange},
		{"the suffix again", "\n}", RuleNoChange},
		{"a copied token", "1 <|fim_middle|>", ""},
		{"runaway", "x +\n\t\tx +\n\t\tx +\n\t\tx +\n\t\tx", RuleRunaway},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sugs, quiet, err := ask(t, llamaServer(tc.content), false)
			if err != nil {
				t.Fatal(err)
			}
			if tc.rule == "" {
				if len(sugs) != 0 && !strings.Contains(sugs[0].Edits[0].NewText, "fim_middle") {
					return // the stop token ended it: a plain "1"
				}
				if len(sugs) == 1 && strings.Contains(sugs[0].Edits[0].NewText, "fim_middle") {
					t.Errorf("a copied token shown: %+v", sugs)
				}
				return
			}
			if len(sugs) != 0 || quiet == nil || quiet.Rule != tc.rule {
				t.Errorf("suggestions %+v, quiet %+v; want none by %s", sugs, quiet, tc.rule)
			}
		})
	}
	t.Run("an error body", func(t *testing.T) {
		_, _, err := ask(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
			if r.URL.Path == "/props" {
				llamaServer("")(w, r, nil)
				return
			}
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":{"code":400,"message":"the request exceeds the available context size","type":"exceed_context_size_error"}}`)
		}, false)
		if err == nil || !strings.Contains(err.Error(), "exceeds the available context size") {
			t.Errorf("error %v, want the server's message", err)
		}
	})
	t.Run("huge", func(t *testing.T) {
		_, _, err := ask(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
			if r.URL.Path == "/props" {
				llamaServer("")(w, r, nil)
				return
			}
			fmt.Fprint(w, `{"content":"`+strings.Repeat("x", maxAnswerBytes+10)+`"}`)
		}, false)
		if err == nil || !strings.Contains(err.Error(), "more than") {
			t.Errorf("error %v, want the answer refused as too large", err)
		}
	})
	t.Run("never ends", func(t *testing.T) {
		_, _, err := ask(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
			if r.URL.Path == "/props" {
				llamaServer("")(w, r, nil)
				return
			}
			w.(http.Flusher).Flush()
			for r.Context().Err() == nil {
				w.Write([]byte(" "))
				w.(http.Flusher).Flush()
				time.Sleep(20 * time.Millisecond)
			}
		}, false)
		if err == nil || !strings.Contains(err.Error(), "within") {
			t.Errorf("error %v, want the request cut at the timeout", err)
		}
	})
	t.Run("without the gate", func(t *testing.T) {
		sugs, _, err := ask(t, llamaServer("x +\n\t\tx +\n\t\tx +\n\t\tx"), true)
		if err != nil || len(sugs) != 1 {
			t.Errorf("suggestions %+v, %v; want the runaway shown with the gate off", sugs, err)
		}
	})
}

func TestFIMFamilyFromTheModelsName(t *testing.T) {
	for model, want := range map[string]string{
		"qwen2.5-coder:7b-base": "qwen", "Qwen3-Coder-30B-A3B": "qwen", "codegemma:2b-code": "codegemma",
		"starcoder2:3b": "starcoder", "granite-code:3b": "starcoder", "deepseek-coder:1.3b-base": "deepseek",
		"codellama:7b-code": "codellama", "codestral-latest": "codestral", "llama3.2": "",
	} {
		if got := fimFamilyOf(model); got != want {
			t.Errorf("%s: %q, want %q", model, got, want)
		}
	}
	srv := newService(t, func(w http.ResponseWriter, r *http.Request, _ []byte) { http.NotFound(w, r) })
	eng, err := New(Config{URL: srv.URL, Model: "llama3.2", Format: "fim", Server: "openai"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = eng.Suggest(context.Background(), fimCase("file:///w/a.go", "x := |\n"))
	if err == nil || !strings.Contains(err.Error(), "--fim-tokens") {
		t.Errorf("error %v, want one that says to name the tokens with --fim-tokens", err)
	}
	if len(srv.posts()) != 0 {
		t.Error("a prompt without FIM tokens was sent")
	}
	if _, err := New(Config{URL: srv.URL, Model: "m", Format: "fim", FIMTokens: "qwen9"}); err == nil || !strings.Contains(err.Error(), "codellama") {
		t.Errorf("an unknown --fim-tokens: %v", err)
	}
}

func TestFIMRingKeepsChunksInOrder(t *testing.T) {
	var r fimRing
	cfg := ringConfig{n: 2, lines: 4}
	docA := nesagent.OpenDocument{URI: "file:///w/a.go", Text: "a1\na2\na3\na4\na5\n", Visit: 0}
	docB := nesagent.OpenDocument{URI: "file:///w/b.go", Text: "b1\nb2\nb3\n", Visit: 0}
	docC := nesagent.OpenDocument{URI: "file:///w/c.go", Text: "c1\nc2\n", Visit: 0}
	req := func(open ...nesagent.OpenDocument) *input {
		return prepare(nesagent.Request{URI: "file:///w/main.go", Root: "/w", Text: "x\n", Open: open})
	}
	names := func(cs []FIMChunk) string {
		var out []string
		for _, c := range cs {
			out = append(out, c.Filename)
		}
		return strings.Join(out, " ")
	}
	if got := names(r.update(req(docA), cfg, 0, 2, 1<<20)); got != "a.go" {
		t.Errorf("first: %s", got)
	}
	// A second file comes after the first: the prompt's start stays the same.
	if got := names(r.update(req(docB, docA), cfg, 0, 2, 1<<20)); got != "a.go b.go" {
		t.Errorf("second: %s", got)
	}
	// A third pushes out the oldest.
	if got := names(r.update(req(docC, docB, docA), cfg, 0, 2, 1<<20)); got != "b.go c.go" {
		t.Errorf("third: %s", got)
	}
	// The same file changed a little replaces its chunk, no copy kept.
	docC.Text = "c1\nc2\n"
	if got := names(r.update(req(docC), cfg, 0, 2, 1<<20)); got != "b.go c.go" {
		t.Errorf("again: %s", got)
	}
	// The budget keeps the newest.
	if got := names(r.update(req(), cfg, 0, 2, len("c.go")+len("c1\nc2\n"))); got != "c.go" {
		t.Errorf("within budget: %s", got)
	}
	if got := r.update(req(docA), ringConfig{}, 0, 2, 1<<20); got != nil {
		t.Errorf("with no chunks asked: %v", got)
	}
}

func TestFIMRawPromptLayout(t *testing.T) {
	p := &FIMPrompt{Prefix: "a\n", Line: "b", Suffix: "c\n", Path: "x.py", Repo: "shop", Extra: []FIMChunk{{Filename: "y.py", Text: "import x\n"}}}
	for name, want := range map[string]string{
		"qwen":      "<|repo_name|>shop\n<|file_sep|>y.py\nimport x\n<|file_sep|>x.py\n<|fim_prefix|>a\nb<|fim_suffix|>c\n<|fim_middle|>",
		"starcoder": "<repo_name>shop\n<file_sep>y.py\nimport x\n<file_sep>x.py\n<fim_prefix>a\nb<fim_suffix>c\n<fim_middle>",
		"codellama": "<PRE> a\nb <SUF>c\n <MID>",
		"deepseek":  "<｜fim▁begin｜>a\nb<｜fim▁hole｜>c\n<｜fim▁end｜>",
		"codestral": "[SUFFIX]c\n[PREFIX]a\nb",
		"codegemma": "<|fim_prefix|>a\nb<|fim_suffix|>c\n<|fim_middle|>",
	} {
		f := fimFamilies[name]
		if got := f.raw(p); got != want {
			t.Errorf("%s:\n%q\nwant\n%q", name, got, want)
		}
	}
}

// timestamps are the times of the user's actions in Sweep's request.
var timestamps = regexp.MustCompile(`"timestamp": \d+`)

// FuzzCleanFIM: whatever a model answers, in whatever line, cleaning never fails, and what it
// keeps to insert comes from the answer: no text of its own, no stop token left.
func FuzzCleanFIM(f *testing.F) {
	f.Add("\treturn ", "\n}\n", 1, "a + b\n}\n<|endoftext|>x", false)
	f.Add("", "\n", 2, "\n\t\tx\r\n\ty", true)
	f.Add("f(", ")\n", 0, ")", false)
	f.Add("  ", "ü\n", 4, "  \t", true)
	qwen := fimFamilies["qwen"]
	f.Fuzz(func(t *testing.T, line, suffix string, lead int, answer string, cut bool) {
		p := &FIMPrompt{Line: line, Suffix: suffix, Indent: indentWidth(line), Tokens: &qwen}
		if strings.TrimSpace(line) == "" && lead > 0 {
			p.Line, p.Lead = "", lead%8
		}
		text, rule, _ := cleanFIM(p, answer, cut)
		if rule == "" && strings.TrimSpace(text) == "" {
			t.Fatalf("an empty completion kept: %q", text)
		}
		if rule == "" {
			for _, s := range qwen.stop {
				if strings.Contains(text, s) {
					t.Fatalf("the stop token %q kept in %q", s, text)
				}
			}
			if strings.Contains(text, "\r\n") {
				t.Fatalf("a CRLF kept in %q", text)
			}
		}
	})
}

// FuzzReadSweepAPI: whatever Sweep's service answers, reading it never fails, and an answer read
// has its replacements within the file, on whole characters, none overlapping.
func FuzzReadSweepAPI(f *testing.F) {
	f.Add(`{"autocomplete_id":"a","start_index":1,"end_index":3,"completion":"x"}`, "hëllo\n")
	f.Add(`{"completions":[{"start_index":0,"end_index":0,"completion":"a"},{"start_index":0,"end_index":1,"completion":"b"}]}`, "abc")
	f.Add("{\"start_index\":2,\"end_index\":2,\"completion\":\"\"}\n{\"start_index\":1}\n", "ab")
	f.Fuzz(func(t *testing.T, body, text string) {
		reps, _, err := readSweepAPI(body)
		if err != nil {
			return
		}
		if _, _, err := applyReplacements(text, reps); err != nil {
			return
		}
		for _, r := range reps {
			if r.start < 0 || r.end > len(text) || r.start > r.end {
				t.Fatalf("a replacement outside the file applied: %+v", r)
			}
		}
	})
}
