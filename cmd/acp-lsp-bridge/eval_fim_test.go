package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/cmd/eval"
)

// fakeFIM answers fill-in-the-middle requests for the scenarios of the FIM set as llama-server
// does (GET /props, POST /infill), or, for raw FIM tokens, as any /v1/completions server does. It
// finds the scenario a request is of by the text before and after the cursor, and answers its
// expected completion (the oracle), or nothing at all (empty).
type fakeFIM struct {
	t         *testing.T
	scenarios []*eval.Scenario
	empty     bool
	// noise answers what follows the cursor again, as a model that lost the thread does.
	noise bool
	// pastLine answers a new line (a break, the cursor's line's indentation, a call) as a model
	// that goes on writing after a finished line does; lineAbove, where the cursor's line is
	// blank, the line above it again.
	pastLine, lineAbove bool

	// tokens are the FIM tokens of a raw prompt at /v1/completions.
	tokens struct{ pre, suf, mid string }

	mu     sync.Mutex
	paths  []string         // of each POST
	bodies []map[string]any // of each POST to /infill
	asked  map[string]int   // requests per scenario
}

func newFakeFIM(t *testing.T, scenarios []*eval.Scenario, empty bool) *fakeFIM {
	return &fakeFIM{t: t, scenarios: scenarios, empty: empty, asked: map[string]int{}}
}

// completion is what the scenario expects inserted at the cursor ("" where nothing is).
func completion(s *eval.Scenario) string {
	if !s.WantChange {
		return ""
	}
	return s.Expected[s.CursorOffset : len(s.Expected)-(len(s.Last())-s.CursorOffset)]
}

// answer finds the scenario whose document reads before then after around its cursor, and
// answers as a model that knows the completion would. A prompt may leave out the indentation
// before the cursor when nothing else is on its line (llama.vim's way): the model then writes the
// line whole, the indentation first.
func (f *fakeFIM) answer(before, after string) string {
	var found *eval.Scenario
	lead := ""
	for _, s := range f.scenarios {
		last := s.Last()
		head, tail := last[:s.CursorOffset], last[s.CursorOffset:]
		if !strings.HasPrefix(tail, after) {
			continue
		}
		lineStart := strings.LastIndexByte(head, '\n') + 1
		indent := head[lineStart:]
		switch {
		case strings.HasSuffix(head, before) && (before != "" || head == ""):
			lead = ""
		case strings.TrimSpace(indent) == "" && strings.HasSuffix(head[:lineStart], before):
			lead = indent
		default:
			continue
		}
		if found != nil {
			f.t.Errorf("a prompt fits both %s and %s", found.Name, s.Name)
		}
		found = s
	}
	if found == nil {
		f.t.Errorf("a prompt of no scenario: before the cursor %q, after it %q", before, after)
		return ""
	}
	f.mu.Lock()
	f.asked[found.Name]++
	f.mu.Unlock()
	if f.noise {
		return after
	}
	last := found.Last()
	lineStart := strings.LastIndexByte(last[:found.CursorOffset], '\n') + 1
	line := last[lineStart:found.CursorOffset]
	switch {
	case f.pastLine:
		return "\n" + line[:len(line)-len(strings.TrimLeft(line, " \t"))] + "log(\"here\")"
	case f.lineAbove && strings.TrimSpace(line) == "":
		above := strings.Split(strings.TrimRight(last[:lineStart], "\n"), "\n")
		return strings.TrimSpace(above[len(above)-1])
	case f.lineAbove:
		return ""
	}
	if f.empty || !found.WantChange {
		return ""
	}
	return lead + completion(found)
}

func (f *fakeFIM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && r.URL.Path == "/props" {
		fmt.Fprint(w, `{"default_generation_settings":{}}`)
		return
	}
	if r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.paths = append(f.paths, r.URL.Path)
	f.mu.Unlock()
	str := func(k string) string { s, _ := body[k].(string); return s }
	switch r.URL.Path {
	case "/infill":
		f.mu.Lock()
		f.bodies = append(f.bodies, body)
		f.mu.Unlock()
		content := f.answer(str("input_prefix")+str("prompt"), str("input_suffix"))
		_ = json.NewEncoder(w).Encode(map[string]any{"content": content, "stop_type": "eos",
			"timings": map[string]any{"prompt_n": 40, "cache_n": 12, "predicted_n": 6, "prompt_ms": 3.5, "predicted_ms": 20.1}})
	case "/v1/completions":
		// The family's tokens: PRE prefix SUF suffix MID.
		p, tk := str("prompt"), f.tokens
		i, j := strings.Index(p, tk.suf), strings.LastIndex(p, tk.mid)
		if !strings.HasPrefix(p, tk.pre) || i < 0 || j < i || j+len(tk.mid) != len(p) {
			f.t.Errorf("a raw prompt not written with %s…%s…%s: %q", tk.pre, tk.suf, tk.mid, p)
			http.Error(w, "bad prompt", http.StatusBadRequest)
			return
		}
		text := f.answer(p[len(tk.pre):i], p[i+len(tk.suf):j])
		_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"text": text, "finish_reason": "stop"}}})
	default:
		http.NotFound(w, r)
	}
}

// TestEvalBinaryFIM: eval --model-format fim runs the built-in FIM set through the real agent
// against a fake llama-server. One that answers each scenario's completion scores every metric in
// full, in the table and the JSON, the report naming the FIM set; one that answers nothing is
// quiet everywhere: right where nothing was to be inserted, a miss everywhere else. The sampling
// the agent asks /infill for is --fim-sampling's.
func TestEvalBinaryFIM(t *testing.T) {
	bin := buildBridge(t)
	scenarios, err := eval.BuiltIn(eval.SetFIM)
	if err != nil {
		t.Fatal(err)
	}
	n := len(scenarios)
	expectChange, expectNothing := expectCounts(scenarios)
	run := func(t *testing.T, fake *fakeFIM, extra ...string) (evalJSON, string) {
		t.Helper()
		srv := httptest.NewServer(fake)
		t.Cleanup(srv.Close)
		args := append([]string{"eval", "--json", "--model-url", srv.URL, "--model", "qwen2.5-coder-1.5b", "--model-format", "fim"}, extra...)
		code, stdout, stderr := runBin(t, bin, nil, args...)
		var j evalJSON
		if err := json.Unmarshal([]byte(stdout), &j); err != nil || code != 0 {
			t.Fatalf("%v: exit %d, %v\nstdout:\n%s\nstderr:\n%s", args, code, err, stdout, stderr)
		}
		if !strings.Contains(stderr, fmt.Sprintf("eval: %d scenarios (the built-in FIM set), model \"qwen2.5-coder-1.5b\"", n)) {
			t.Errorf("stderr does not say the FIM set runs:\n%s", stderr)
		}
		// Each scenario asked /infill once, and nothing else was asked.
		fake.mu.Lock()
		defer fake.mu.Unlock()
		for _, s := range scenarios {
			if fake.asked[s.Name] != 1 {
				t.Errorf("%s: asked %d times, want once", s.Name, fake.asked[s.Name])
			}
		}
		for _, p := range fake.paths {
			if p != "/infill" {
				t.Errorf("a request to %s, want /infill only", p)
			}
		}
		if j.Agent.Format != "fim" || j.Set != "fim" || j.Scenarios != n || j.Total.Evaluated != n || j.Total.Failed != 0 || len(j.Results) != n {
			t.Errorf("agent %+v, totals %+v", j.Agent, j.Total)
		}
		return j, stderr
	}

	t.Run("oracle", func(t *testing.T) {
		fake := newFakeFIM(t, scenarios, false)
		j, stderr := run(t, fake, "--fim-sampling", "server")
		if tot := j.Total; tot.Exact != n || tot.ExpectChange != expectChange || tot.Shown != expectChange ||
			tot.ExpectNothing != expectNothing || tot.Quiet != expectNothing || tot.ChrF == nil || *tot.ChrF != 100 {
			t.Errorf("totals %+v, want every scenario exact", tot)
		}
		for i, r := range j.Results {
			if i >= n || r.Name != scenarios[i].Name || !r.Exact || r.KeptBack != nil {
				t.Errorf("result %d: %+v (kept back %+v)", i, r, r.KeptBack)
			}
		}
		for i, s := range scenarios {
			want := "quiet, as expected ("
			if s.WantChange {
				want = "exact ("
			}
			if line := fmt.Sprintf("eval: %d/%d %s … %s", i+1, n, s.Name, want); !strings.Contains(stderr, line) {
				t.Errorf("stderr has no %q", line)
			}
		}
		// --fim-sampling server: the server's own sampling, none of llama.vim's.
		fake.mu.Lock()
		for _, b := range fake.bodies {
			if _, ok := b["samplers"]; ok || b["top_k"] != nil || b["cache_prompt"] != true {
				t.Errorf("an /infill request with --fim-sampling server: %v", b)
			}
		}
		fake.mu.Unlock()

		// The table a person reads says the same, per kind.
		srv := httptest.NewServer(newFakeFIM(t, scenarios, false))
		defer srv.Close()
		code, stdout, stderr := runBin(t, bin, nil, "eval", "--model-url", srv.URL, "--model", "qwen2.5-coder-1.5b", "--model-format", "fim")
		if code != 0 {
			t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
		}
		table := strings.Join(strings.Fields(stdout), " ")
		for _, want := range []string{
			fmt.Sprintf("acp-lsp-bridge eval: %d scenarios, model \"qwen2.5-coder-1.5b\" at %s, prompt format fim; the built-in FIM set", n, srv.URL),
			fmt.Sprintf("complete %d/%d 100.0 %d/%d - 0", expectChange, expectChange, expectChange, expectChange),
			fmt.Sprintf("nothing %d/%d - - %d/%d 0", expectNothing, expectNothing, expectNothing, expectNothing),
			fmt.Sprintf("exact matches %d/%d (100.0%%)", n, n),
		} {
			if !strings.Contains(table, want) {
				t.Errorf("the table does not say %q:\n%s", want, stdout)
			}
		}
	})

	// A model that writes again what follows the cursor: the gate's repeats-suffix rule keeps
	// every such answer back (none of the oracle's right answers above: it loses nothing), and
	// --no-gate shows them.
	t.Run("noise", func(t *testing.T) {
		fake := newFakeFIM(t, scenarios, false)
		fake.noise = true
		// (An answer that is only the line break and brackets after the cursor is cleaned to
		// nothing before the gate: no-change.)
		j, _ := run(t, fake)
		gated := j.Total
		if gated.Shown != 0 || gated.Quiet != expectNothing || gated.KeptBack["repeats-suffix"] < n/2 {
			t.Errorf("totals %+v, want no answer shown, most kept back as repeats-suffix", gated)
		}
		off := newFakeFIM(t, scenarios, false)
		off.noise = true
		j, _ = run(t, off, "--no-gate")
		if tot := j.Total; tot.Shown != gated.KeptBackWanted || tot.KeptBack["repeats-suffix"] != 0 || tot.Exact != 0 && tot.Exact > expectNothing {
			t.Errorf("totals %+v with --no-gate, want the %d answers kept back where an edit was shown, none right", tot, gated.KeptBackWanted)
		}
	})

	// A model that goes on past a finished line (where the document goes on below it): the
	// past-line rule keeps it back in the scenarios that expect nothing there, and --no-gate shows
	// it; the oracle above has the rule lose nothing, a body after a colon or a brace included.
	t.Run("past a finished line", func(t *testing.T) {
		fake := newFakeFIM(t, scenarios, false)
		fake.pastLine = true
		j, _ := run(t, fake)
		byName := map[string]evalResult{}
		for _, r := range j.Results {
			byName[r.Name] = r
		}
		for _, name := range []string{"go-nothing-return-complete", "java-nothing-next-line-there", "py-nothing-loop-exists", "rs-nothing-sum-complete", "c-nothing-free-done", "go-nothing-after-open"} {
			if r := byName[name]; r.Shown || r.KeptBack == nil || r.KeptBack.Rule != "past-line" {
				t.Errorf("%s: shown %v, kept back %+v; want it kept back by past-line", name, r.Shown, r.KeptBack)
			}
		}
		off := newFakeFIM(t, scenarios, false)
		off.pastLine = true
		j, _ = run(t, off, "--no-gate")
		for _, r := range j.Results {
			if r.KeptBack != nil && r.KeptBack.Rule == "past-line" {
				t.Errorf("%s with --no-gate: kept back by past-line", r.Name)
			}
		}
		if j.Total.Shown == 0 {
			t.Error("with --no-gate no answer was shown")
		}
	})

	// A model that writes the line above again on a blank line: the repeats-above rule keeps it
	// back wherever it comes, and --no-gate shows it.
	t.Run("the line above again", func(t *testing.T) {
		fake := newFakeFIM(t, scenarios, false)
		fake.lineAbove = true
		j, _ := run(t, fake)
		if tot := j.Total; tot.Shown != 0 || tot.KeptBack["repeats-above"] == 0 {
			t.Errorf("totals %+v, want none shown, some kept back by repeats-above", tot)
		}
		off := newFakeFIM(t, scenarios, false)
		off.lineAbove = true
		j, _ = run(t, off, "--no-gate")
		if tot := j.Total; tot.Shown == 0 || tot.KeptBack["repeats-above"] != 0 {
			t.Errorf("totals %+v with --no-gate, want the copies shown", tot)
		}
	})

	t.Run("empty", func(t *testing.T) {
		fake := newFakeFIM(t, scenarios, true)
		j, _ := run(t, fake)
		if tot := j.Total; tot.Exact != expectNothing || tot.Shown != 0 || tot.Quiet != expectNothing || tot.ExpectNothing != expectNothing ||
			tot.ChrF == nil || *tot.ChrF != 0 || tot.KeptBackWanted != 0 {
			t.Errorf("totals %+v, want quiet everywhere", tot)
		}
		for _, r := range j.Results {
			if r.Shown {
				t.Errorf("%s: shown from an empty answer", r.Name)
			}
		}
		// Every answer changed nothing: counted as such, not as kept back, and said.
		if tot := j.Total; tot.NoChange != n || tot.NoChangeWanted != expectChange || len(tot.KeptBack) != 0 {
			t.Errorf("totals %+v, want all %d answers counted as no change (%d where an edit was expected), none kept back", tot, n, expectChange)
		}
		srv := httptest.NewServer(newFakeFIM(t, scenarios, true))
		defer srv.Close()
		_, stdout, _ := runBin(t, bin, nil, "eval", "--model-url", srv.URL, "--model", "qwen2.5-coder-1.5b", "--model-format", "fim")
		if table := strings.Join(strings.Fields(stdout), " "); !strings.Contains(table, fmt.Sprintf("no change %d answers of the model that changed nothing", n)) ||
			!strings.Contains(table, fmt.Sprintf("; %d where an edit was expected", expectChange)) {
			t.Errorf("the table does not count the answers that changed nothing:\n%s", stdout)
		}
		// The default sampling is llama.vim's.
		fake.mu.Lock()
		for _, b := range fake.bodies {
			if s, _ := b["samplers"].([]any); !slices.Equal(s, []any{"top_k", "top_p", "infill"}) || b["top_k"] != 40.0 {
				t.Errorf("an /infill request with the default sampling: samplers %v top_k %v", b["samplers"], b["top_k"])
			}
		}
		fake.mu.Unlock()
	})
}

// TestEvalBinaryFIMTokens: on a server that is neither llama-server nor Ollama, the agent writes
// the prompt with the FIM tokens eval's --fim-tokens names, at /v1/completions; its scenarios
// come from the directory given, and a right answer is exact there too.
func TestEvalBinaryFIMTokens(t *testing.T) {
	bin := buildBridge(t)
	dir, scenarios := copyScenarios(t, "fim", "py-complete-dict-key", "rs-complete-call-args", "java-nothing-next-line-there")
	fake := newFakeFIM(t, scenarios, false)
	fake.tokens.pre, fake.tokens.suf, fake.tokens.mid = "<fim_prefix>", "<fim_suffix>", "<fim_middle>"
	srv := httptest.NewServer(fake)
	defer srv.Close()
	code, stdout, stderr := runBin(t, bin, nil, "eval", "--json", "--model-url", srv.URL, "--model", "my-code-model",
		"--model-format", "fim", "--model-server", "openai", "--fim-tokens", "starcoder", dir)
	var j evalJSON
	if err := json.Unmarshal([]byte(stdout), &j); err != nil || code != 0 {
		t.Fatalf("exit %d, %v\nstdout:\n%s\nstderr:\n%s", code, err, stdout, stderr)
	}
	if j.Set != "" || j.Total.Evaluated != 3 || j.Total.Exact != 3 || j.Total.Shown != 2 || j.Total.Quiet != 1 {
		t.Errorf("totals %+v, want all 3 exact", j.Total)
	}
	if !strings.Contains(stderr, "eval: 3 scenarios ("+dir+")") {
		t.Errorf("stderr does not name the directory:\n%s", stderr)
	}
	fake.mu.Lock()
	defer fake.mu.Unlock()
	if !slices.Equal(fake.paths, []string{"/v1/completions", "/v1/completions", "/v1/completions"}) {
		t.Errorf("requests to %v, want three to /v1/completions", fake.paths)
	}
	for _, s := range scenarios {
		if fake.asked[s.Name] != 1 {
			t.Errorf("%s: asked %d times, want once", s.Name, fake.asked[s.Name])
		}
	}
}
