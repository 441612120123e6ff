package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/cmd/eval"
)

func TestEvalArgs(t *testing.T) {
	t.Setenv("EVAL_ARGS_KEY", "k")
	for _, tc := range []struct {
		args   []string
		code   int
		done   bool
		agent  string
		dir    string
		set    string // the built-in set that runs, when given
		stdout string
		stderr string
		env    map[string]string
	}{
		{args: []string{"--model-url", "http://h:1", "--model", "m"},
			agent: "agent --model-url http://h:1 --model m --model-format auto --model-server auto --model-context 0 --timeout 30s --verbose --no-prefetch", set: "nes"},
		// A format that completes at the cursor: the FIM set, and the FIM flags passed on, with
		// the agent's defaults unless given.
		{args: []string{"--model-url", "http://h:1", "--model", "m", "--model-format", "fim"},
			agent: "agent --model-url http://h:1 --model m --model-format fim --model-server auto --model-context 0 --timeout 30s --fim-tokens auto --fim-sampling llama.vim --fim-chunks 16 --fim-chunk-lines 64 --verbose --no-prefetch", set: "fim"},
		{args: []string{"--model-url", "http://h:1", "--model", "m", "--model-format", "codestral", "--fim-tokens", "starcoder", "--fim-sampling", "server", "--fim-chunks", "0", "--fim-chunk-lines", "8"}, env: map[string]string{"CODESTRAL_API_KEY": "k"},
			agent: "agent --model-url http://h:1 --model m --model-format codestral --model-server auto --model-context 0 --timeout 30s --api-key-env CODESTRAL_API_KEY --fim-tokens starcoder --fim-sampling server --fim-chunks 0 --fim-chunk-lines 8 --verbose --no-prefetch", set: "fim"},
		{args: []string{"--model-url", "http://h:1", "--model", "m", "--model-format", "fim", "--set", "nes"},
			agent: "agent --model-url http://h:1 --model m --model-format fim --model-server auto --model-context 0 --timeout 30s --fim-tokens auto --fim-sampling llama.vim --fim-chunks 16 --fim-chunk-lines 64 --verbose --no-prefetch", set: "nes"},
		{args: []string{"--model-url", "http://h:1", "--model", "zeta-2", "--set", "fim"},
			agent: "agent --model-url http://h:1 --model zeta-2 --model-format auto --model-server auto --model-context 0 --timeout 30s --verbose --no-prefetch", set: "fim"},
		{args: []string{"--model-url", "http://h:1", "--model", "m", "--model-format", "fim", "mine"},
			agent: "agent --model-url http://h:1 --model m --model-format fim --model-server auto --model-context 0 --timeout 30s --fim-tokens auto --fim-sampling llama.vim --fim-chunks 16 --fim-chunk-lines 64 --verbose --no-prefetch", dir: "mine"},
		{args: []string{"--model-url", "http://h:1", "--model", "m", "--model-format", "zeta1", "--fim-sampling", "server"}, code: 2, done: true,
			stderr: "--fim-sampling is for the formats that complete at the cursor (--model-format fim or codestral); the agent would not use it with --model-format zeta1"},
		{args: []string{"--model-url", "http://h:1", "--model", "m", "--fim-chunks", "4"}, code: 2, done: true, stderr: "--fim-chunks is for the formats that complete at the cursor"},
		{args: []string{"--model-url", "http://h:1", "--model", "m", "--model-format", "fim", "--fim-sampling", "greedy"}, code: 2, done: true, stderr: `--fim-sampling "greedy": want llama.vim or server`},
		{args: []string{"--model-url", "http://h:1", "--model", "m", "--model-format", "fim", "--fim-tokens", "gpt"}, code: 2, done: true, stderr: `--fim-tokens "gpt": want auto or one of`},
		{args: []string{"--model-url", "http://h:1", "--model", "m", "--model-format", "fim", "--fim-chunks", "-1"}, code: 2, done: true, stderr: "--fim-chunks takes 0 or more"},
		{args: []string{"--model-url", "http://h:1", "--model", "m", "--set", "all"}, code: 2, done: true, stderr: `--set "all": want auto, nes or fim`},
		{args: []string{"--model-url", "http://h:1", "--model", "m", "--set", "fim", "mine"}, code: 2, done: true, stderr: "--set fim and the directory mine: give one of them"},
		{args: []string{"--model-url", "http://h:1", "--model", "m", "--model-format", "zeta1", "--model-server", "openai", "--model-context", "4096", "--api-key-env", "EVAL_ARGS_KEY", "--timeout", "9s", "--verbose", "--json", "scen"},
			agent: "agent --model-url http://h:1 --model m --model-format zeta1 --model-server openai --model-context 4096 --timeout 9s --api-key-env EVAL_ARGS_KEY --verbose --no-prefetch", dir: "scen"},
		{args: []string{"--help"}, done: true, stdout: "acp-lsp-bridge eval --model-url URL --model NAME"},
		{args: []string{"--model", "m"}, code: 2, done: true, stderr: "--model-url and --model are required"},
		// A hosted service's format needs neither: its address, model and key variable are its
		// own unless given, as for agent.
		{args: []string{"--model-format", "mercury"}, env: map[string]string{"INCEPTION_API_KEY": "k"},
			agent: "agent --model-url https://api.inceptionlabs.ai --model mercury-edit --model-format mercury --model-server auto --model-context 0 --timeout 30s --api-key-env INCEPTION_API_KEY --verbose --no-prefetch", set: "nes"},
		{args: []string{"--model-format", "codestral", "--model-url", "http://h:1"}, env: map[string]string{"CODESTRAL_API_KEY": "k"},
			agent: "agent --model-url http://h:1 --model codestral-latest --model-format codestral --model-server auto --model-context 0 --timeout 30s --api-key-env CODESTRAL_API_KEY --fim-tokens auto --fim-sampling llama.vim --fim-chunks 16 --fim-chunk-lines 64 --verbose --no-prefetch", set: "fim"},
		{args: []string{"--model-format", "sweep-api"}, env: map[string]string{"SWEEP_AI_TOKEN": ""}, code: 2, done: true,
			stderr: "--model-format sweep-api reads its key from SWEEP_AI_TOKEN, which is empty or unset"},
		{args: []string{"--model-url", "http://h:1", "--model", "m", "a", "b"}, code: 2, done: true, stderr: `unexpected argument "b"`},
		{args: []string{"--model-url", "http://h:1", "--model", "m", "--model-format", "gpt"}, code: 2, done: true, stderr: `--model-format "gpt"`},
		{args: []string{"--model-url", "ftp://h", "--model", "m"}, code: 2, done: true, stderr: `server URL "ftp://h"`},
		{args: []string{"--model-url", "127.0.0.1:8012", "--model", "m"}, code: 2, done: true, stderr: `server URL "127.0.0.1:8012" has no scheme: want http://host[:port][/path] or https://…, such as http://127.0.0.1:8012`},
		{args: []string{"--model-url", "http://h:1", "--model", "m", "--api-key-env", "EVAL_ARGS_UNSET"}, code: 2, done: true, stderr: "EVAL_ARGS_UNSET: the variable is empty or unset"},
		{args: []string{"--model-url", "http://h:1", "--model", "m", "--timeout", "0s"}, code: 2, done: true, stderr: "--timeout 0s"},
		{args: []string{"--bogus"}, code: 2, done: true, stderr: "flag provided but not defined"},
	} {
		for k, v := range tc.env {
			t.Setenv(k, v)
		}
		var stdout, stderr bytes.Buffer
		opts, code, done := parseEvalArgs(tc.args, &stdout, &stderr)
		if code != tc.code || done != tc.done {
			t.Errorf("%q: code %d done %v, want %d %v (stderr %q)", tc.args, code, done, tc.code, tc.done, stderr.String())
			continue
		}
		if !done && (strings.Join(opts.agentArgs(), " ") != tc.agent || opts.dir != tc.dir) {
			t.Errorf("%q: agent %q dir %q, want %q %q", tc.args, strings.Join(opts.agentArgs(), " "), opts.dir, tc.agent, tc.dir)
		}
		if tc.set != "" && opts.scenarioSet() != tc.set {
			t.Errorf("%q: the %s set runs, want the %s set", tc.args, opts.scenarioSet(), tc.set)
		}
		if !strings.Contains(stdout.String(), tc.stdout) || !strings.Contains(stderr.String(), tc.stderr) {
			t.Errorf("%q: stdout %q stderr %q", tc.args, stdout.String(), stderr.String())
		}
	}
}

// The help explains the scenario format, the metrics, and gives an example command.
func TestEvalHelp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := Run(t.Context(), []string{"eval", "--help"}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("code %d", code)
	}
	for _, want := range []string{
		"--model-url http://127.0.0.1:8080 --model",
		"-- before --", "-- edit --", "-- expect --", "-- open: lib/util.go --", "expect: none", "‸",
		"exact matches", "chrF", "changed lines", "shown where expected", "quiet where none", "p50 and p90",
		"-model-context", "-api-key-env", "-json",
		// Which built-in set runs, and the FIM flags passed to the agent.
		"the FIM set   for the formats that complete at the cursor (--model-format fim or codestral)",
		"the NES set   for every other format", "--set nes or --set fim", "With DIR, the *.txtar files",
		"-fim-tokens family", "-fim-sampling sampling", "-fim-chunks chunks", "-fim-chunk-lines lines", "-set set",
		"finish-line, same-change, new-parameter, rename, fix, complete",
	} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("eval --help does not say %q", want)
		}
	}
	stdout.Reset()
	Run(t.Context(), []string{"--help"}, nil, &stdout, &stderr)
	if !strings.Contains(stdout.String(), "acp-lsp-bridge eval --model-url URL --model NAME") {
		t.Errorf("the bridge's usage does not name eval")
	}
}

// buildBridge builds the command into dir.
func buildBridge(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	exe := ""
	if runtime.GOOS == "windows" {
		exe = ".exe"
	}
	// Under Wine there is no go: the binaries are built beforehand (tools/windows-tests.sh).
	if dir := os.Getenv("ACP_LSP_BRIDGE_E2E_BIN"); dir != "" {
		return filepath.Join(dir, "acp-lsp-bridge"+exe)
	}
	bin := filepath.Join(t.TempDir(), "acp-lsp-bridge"+exe)
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// runBin runs the binary in an empty directory and returns its exit code, stdout and stderr.
func runBin(t *testing.T, bin string, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = t.TempDir() // the built-in scenarios run from any directory
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, stdout.String(), stderr.String()
}

// Markers of the region in the chat and Zeta 1 prompts, and of the cursor in it.
const (
	regionStart = "<|editable_region_start|>"
	regionEnd   = "<|editable_region_end|>"
	cursorMark  = "<|user_cursor_is_here|>"
)

// behaviour is how the fake model answers a scenario.
type behaviour int

const (
	answerRight     behaviour = iota // the region as the expected text has it
	answerWrong                      // the region with a line that does not belong
	answerUnchanged                  // the region as it is
	answerUndo                       // the region as it read before the last recorded edit
	// The noise the quality gate is for:
	answerWhitespace // the region with its lines re-indented and trailing spaces added
	answerRunaway    // the region, then its last line with text repeated 300 times
	answerPromptCopy // the region with a marker of the prompt copied into it
	answerGibberish  // something else than the region
	answerCutShort   // the start of the region, cut by the bound on tokens (finish "length")
)

// fakeModel answers prompts whose editable region comes from one of the scenarios.
type fakeModel struct {
	t         *testing.T
	scenarios []*eval.Scenario
	behave    func(*eval.Scenario) behaviour

	mu       sync.Mutex
	paths    []string // of each request
	models   []string
	auth     []string
	prompts  map[string]string // the last prompt of each scenario
	wrongGot map[string]string // the document after the wrong answer of each scenario

	// zeta2 answers Zeta 2's prompts (the region between its CURRENT and ======= markers) with
	// the region rewritten and its end marker, streamed a line every lineDelay when the request
	// asks for a stream.
	zeta2     bool
	lineDelay time.Duration
}

// markers are the region's start and end and the cursor's marker in the prompts f answers, and
// the answer's start and end around the region rewritten.
func (f *fakeModel) markers() (start, end, cursor, answerStart, answerEnd string) {
	if f.zeta2 {
		return "<<<<<<< CURRENT", "=======\n", "<|user_cursor|>", "", ">>>>>>> UPDATED\n"
	}
	return regionStart, regionEnd, cursorMark, regionStart + "\n", regionEnd
}

func newFakeModel(t *testing.T, scenarios []*eval.Scenario, behave func(*eval.Scenario) behaviour) *fakeModel {
	return &fakeModel{t: t, scenarios: scenarios, behave: behave, prompts: map[string]string{}, wrongGot: map[string]string{}}
}

// commonEnds are the lengths of the longest common prefix of a and b, and of their longest
// common suffix in what is left.
func commonEnds(a, b string) (prefix, suffix int) {
	for prefix < len(a) && prefix < len(b) && a[prefix] == b[prefix] {
		prefix++
	}
	for suffix < len(a)-prefix && suffix < len(b)-prefix && a[len(a)-1-suffix] == b[len(b)-1-suffix] {
		suffix++
	}
	return prefix, suffix
}

// answer reads the editable region from the prompt, finds the scenario it belongs to, and
// writes the region as the behaviour wants it.
func (f *fakeModel) answer(prompt string) string {
	start, end, cursor, answerStart, answerEnd := f.markers()
	i := strings.Index(prompt, start+"\n")
	if i < 0 {
		f.t.Errorf("a prompt without an editable region:\n%s", prompt)
		return ""
	}
	body := prompt[i+len(start)+1:]
	j := strings.Index(body, end)
	if j < 0 {
		f.t.Errorf("a prompt without the region's end:\n%s", prompt)
		return ""
	}
	region := strings.ReplaceAll(body[:j], cursor, "")
	// The format may have ended the region with a line break the document does not have there.
	var sc *eval.Scenario
	at, trimmed := -1, false
	for _, cand := range []string{region, strings.TrimSuffix(region, "\n")} {
		for _, s := range f.scenarios {
			if k := strings.Index(s.Last(), cand); k >= 0 {
				if sc != nil && sc != s {
					f.t.Errorf("the region %q is in %s and %s", cand, sc.Name, s.Name)
				}
				sc, at, trimmed = s, k, cand != region
			}
		}
		if sc != nil {
			region = cand
			break
		}
	}
	if sc == nil {
		f.t.Errorf("the region %q is in no scenario", region)
		return ""
	}
	last, exp := sc.Last(), sc.Expected
	f.mu.Lock()
	f.prompts[sc.Name] = prompt
	f.mu.Unlock()
	f.mu.Lock()
	b := f.behave(sc)
	f.mu.Unlock()
	var newRegion string
	switch b {
	case answerRight:
		// Where the expected text differs from the last version must lie inside the region.
		pre, suf := commonEnds(last, exp)
		end := at + len(region)
		if at > pre || end < len(last)-suf {
			f.t.Errorf("%s: the expected change [%d, %d) lies outside the region the agent gave the model [%d, %d)", sc.Name, pre, len(last)-suf, at, end)
			newRegion = region
			break
		}
		newRegion = exp[at : len(exp)-(len(last)-end)]
	case answerWrong:
		newRegion = "WRONG = 1\n" + region
		f.mu.Lock()
		f.wrongGot[sc.Name] = last[:at] + newRegion + last[at+len(region):]
		f.mu.Unlock()
	case answerUnchanged, answerWhitespace, answerRunaway, answerPromptCopy, answerGibberish, answerCutShort:
		newRegion = region // the noise is made of it below
	case answerUndo:
		// The last edit changed [pre, len(last)-suf) of last; the region reads as before it.
		prev := sc.Versions[len(sc.Versions)-2]
		pre, suf := commonEnds(last, prev)
		end := at + len(region)
		if at > pre || end < len(last)-suf {
			f.t.Errorf("%s: the last edit lies outside the region", sc.Name)
			newRegion = region
			break
		}
		newRegion = prev[at : len(prev)-(len(last)-end)]
	}
	if trimmed {
		newRegion += "\n"
	}
	switch b {
	case answerWhitespace:
		lines := strings.Split(newRegion, "\n")
		for i, l := range lines {
			if strings.TrimSpace(l) != "" {
				lines[i] = "  " + l + "  "
			}
		}
		newRegion = strings.Join(lines, "\n")
	case answerRunaway:
		lines := strings.Split(strings.TrimRight(region, "\n"), "\n")
		newRegion = region + strings.Repeat(lines[len(lines)-1]+"\n", 300)
	case answerPromptCopy:
		newRegion = region + "<|edit_history|>\n"
	case answerGibberish:
		newRegion = "magazines Cyr Cyr ogle\nmagazines ogle\nCyr\n"
	case answerCutShort:
		return answerStart + region[:len(region)/2]
	}
	return answerStart + newRegion + answerEnd
}

func (f *fakeModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model    string `json:"model"`
		Prompt   string `json:"prompt"`
		Stream   bool   `json:"stream"`
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.paths = append(f.paths, r.URL.Path)
	f.models = append(f.models, req.Model)
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	f.mu.Unlock()
	switch r.URL.Path {
	case "/v1/chat/completions":
		if len(req.Messages) == 0 {
			http.Error(w, "no messages", http.StatusBadRequest)
			return
		}
		answer := f.answer(req.Messages[len(req.Messages)-1].Content)
		finish := "stop"
		if !strings.Contains(answer, regionEnd) {
			finish = "length" // cut short
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{
			"message": map[string]any{"role": "assistant", "content": answer}, "finish_reason": finish}}})
	case "/v1/completions":
		answer := f.answer(req.Prompt)
		if req.Stream {
			w.Header().Set("Content-Type", "text/event-stream")
			for _, l := range strings.SplitAfter(answer, "\n") {
				time.Sleep(f.lineDelay)
				b, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"text": l}}})
				fmt.Fprintf(w, "data: %s\n\n", b)
				w.(http.Flusher).Flush()
			}
			fmt.Fprint(w, "data: {\"choices\":[{\"text\":\"\",\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"text": answer, "finish_reason": "stop"}}})
	default:
		http.NotFound(w, r)
	}
}

// evalJSON is the part of eval --json the tests read.
// evalResult is a result of eval --json.
type evalResult struct {
	Name      string   `json:"name"`
	Kind      string   `json:"kind"`
	Error     *string  `json:"error"`
	Shown     bool     `json:"shown"`
	Exact     bool     `json:"exact"`
	ChrF      *float64 `json:"chrF"`
	LatencyMs *float64 `json:"latencyMs"`
	KeptBack  *struct {
		Rule, Why string
	} `json:"keptBack"`
}

type evalJSON struct {
	Model string `json:"model"`
	Agent struct {
		Name   string `json:"name"`
		Format string `json:"format"`
	} `json:"agent"`
	Set       string       `json:"set"`
	Scenarios int          `json:"scenarios"`
	Stopped   *string      `json:"stopped"`
	Results   []evalResult `json:"results"`
	Total     struct {
		Scenarios      int            `json:"scenarios"`
		Evaluated      int            `json:"evaluated"`
		Failed         int            `json:"failed"`
		Exact          int            `json:"exact"`
		ExpectChange   int            `json:"expectChange"`
		Shown          int            `json:"shownWhereExpected"`
		ExpectNothing  int            `json:"expectNothing"`
		Quiet          int            `json:"quietWhereNone"`
		ChrF           *float64       `json:"chrF"`
		P50            *float64       `json:"latencyP50Ms"`
		P90            *float64       `json:"latencyP90Ms"`
		KeptBack       map[string]int `json:"keptBack"`
		KeptBackWanted int            `json:"keptBackWhereExpected"`
		NoChange       int            `json:"noChange"`
		NoChangeWanted int            `json:"noChangeWhereExpected"`
	} `json:"total"`
}

// TestEvalBinary runs the built-in scenarios through the real binary and its real model agent
// against a fake OpenAI-compatible server that answers a third of them right, a third wrong, and
// leaves the rest unchanged; the totals printed are those that follow.
func TestEvalBinary(t *testing.T) {
	bin := buildBridge(t)
	scenarios, err := eval.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	behaviours := map[string]behaviour{}
	for i, s := range scenarios {
		behaviours[s.Name] = behaviour(i % 3)
	}
	fake := newFakeModel(t, scenarios, func(s *eval.Scenario) behaviour { return behaviours[s.Name] })
	srv := httptest.NewServer(fake)
	defer srv.Close()

	// What the answers must give.
	var exact, expectChange, shown, expectNothing, quiet int
	for _, s := range scenarios {
		b := behaviours[s.Name]
		if b == answerRight || (b == answerUnchanged && !s.WantChange) {
			exact++
		}
		if s.WantChange {
			expectChange++
			if b != answerUnchanged {
				shown++
			}
		} else {
			expectNothing++
			if b != answerWrong {
				quiet++
			}
		}
	}
	n := len(scenarios)

	code, stdout, stderr := runBin(t, bin, nil, "eval", "--model-url", srv.URL, "--model", "fake-coder")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	t.Logf("stdout:\n%s\nstderr:\n%s", stdout, stderr)
	for _, want := range []string{
		fmt.Sprintf("acp-lsp-bridge eval: %d scenarios, model \"fake-coder\" at %s, prompt format chat", n, srv.URL),
		fmt.Sprintf("scenarios              %d run of %d: %d evaluated, 0 failed", n, n, n),
		fmt.Sprintf("exact matches          %d/%d (", exact, n),
		fmt.Sprintf("shown where expected   %d/%d (", shown, expectChange),
		fmt.Sprintf("quiet where none       %d/%d (", quiet, expectNothing),
		"nes/suggest latency    p50 ",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout has no %q", want)
		}
	}
	// Progress: a line per scenario, with its result.
	for i, s := range scenarios {
		var want string
		switch b := behaviours[s.Name]; {
		case b == answerRight && s.WantChange:
			want = "exact ("
		case b == answerWrong && s.WantChange:
			want = "shown, not exact, chrF "
		case b == answerUnchanged && s.WantChange:
			want = "quiet, an edit was expected; the model's answer changed nothing (no change) ("
		case b == answerWrong:
			want = "shown, nothing was expected ("
		default:
			want = "quiet, as expected ("
		}
		if line := fmt.Sprintf("eval: %d/%d %s … %s", i+1, n, s.Name, want); !strings.Contains(stderr, line) {
			t.Errorf("stderr has no %q:\n%s", line, stderr)
		}
	}

	// The agent's prompts: the recorded edits reached it as its edit history, the diagnostics
	// and the other open files as context.
	fake.mu.Lock()
	for _, s := range scenarios {
		p, ok := fake.prompts[s.Name]
		if !ok {
			t.Errorf("%s: the model was not asked", s.Name)
			continue
		}
		if !strings.Contains(p, "<|edit_history|>") {
			t.Errorf("%s: the prompt shows no edit history:\n%s", s.Name, p)
		}
		for _, d := range s.Diagnostics {
			if !strings.Contains(p, d.Message) {
				t.Errorf("%s: the prompt does not show the problem %q", s.Name, d.Message)
			}
		}
		for _, o := range s.Open {
			if !strings.Contains(p, "<|excerpt|> "+o.Path) {
				t.Errorf("%s: the prompt has no excerpt of %s", s.Name, o.Path)
			}
		}
	}
	for i, m := range fake.models {
		if m != "fake-coder" || fake.paths[i] != "/v1/chat/completions" {
			t.Errorf("request %d: model %q path %q", i, m, fake.paths[i])
		}
	}
	wrongGot := fake.wrongGot
	fake.mu.Unlock()

	// The same run as JSON: the same totals, and chrF as the texts give it.
	code, stdout, _ = runBin(t, bin, nil, "eval", "--json", "--model-url", srv.URL, "--model", "fake-coder")
	if code != 0 {
		t.Fatalf("--json: exit %d", code)
	}
	var j evalJSON
	if err := json.Unmarshal([]byte(stdout), &j); err != nil {
		t.Fatalf("--json: %v\n%s", err, stdout)
	}
	tot := j.Total
	if j.Model != "fake-coder" || j.Agent.Name != "acp-lsp-bridge-model" || j.Agent.Format != "chat" || j.Scenarios != n || j.Stopped != nil ||
		tot.Scenarios != n || tot.Evaluated != n || tot.Failed != 0 || tot.Exact != exact || tot.ExpectChange != expectChange ||
		tot.Shown != shown || tot.ExpectNothing != expectNothing || tot.Quiet != quiet || tot.P50 == nil || tot.P90 == nil || *tot.P90 < *tot.P50 {
		t.Errorf("--json totals %+v (agent %+v)", tot, j.Agent)
	}
	sum, count := 0.0, 0
	for i, r := range j.Results {
		s := scenarios[i]
		if r.Name != s.Name || r.Kind != s.Kind || r.Error != nil || r.LatencyMs == nil {
			t.Errorf("result %d: %+v", i, r)
			continue
		}
		if (r.ChrF != nil) != s.WantChange {
			t.Errorf("%s: chrF %v for a scenario that expects a change: %v", s.Name, r.ChrF, s.WantChange)
			continue
		}
		if !s.WantChange {
			continue
		}
		got := s.Last()
		switch behaviours[s.Name] {
		case answerRight:
			got = s.Expected
		case answerWrong:
			got = wrongGot[s.Name]
		}
		want, have := eval.ChangedLines(s.Last(), s.Expected, got)
		score := eval.ChrF(have, want)
		if math.Abs(*r.ChrF-score) > 0.051 {
			t.Errorf("%s: chrF %v, want %.1f", s.Name, *r.ChrF, score)
		}
		sum += score
		count++
	}
	if tot.ChrF == nil || math.Abs(*tot.ChrF-sum/float64(count)) > 0.051 {
		t.Errorf("total chrF %v, want %.1f", tot.ChrF, sum/float64(count))
	}

	// A model that answers every scenario right scores every metric in full: each expected edit
	// lies in the region the agent gives the model (the fake says so when one does not).
	fake.mu.Lock()
	for name := range behaviours {
		behaviours[name] = answerRight
	}
	fake.mu.Unlock()
	code, stdout, stderr = runBin(t, bin, nil, "eval", "--json", "--model-url", srv.URL, "--model", "fake-coder")
	j = evalJSON{}
	if err := json.Unmarshal([]byte(stdout), &j); err != nil || code != 0 {
		t.Fatalf("all right: exit %d, %v\n%s", code, err, stderr)
	}
	if tot := j.Total; tot.Exact != n || tot.Shown != expectChange || tot.Quiet != expectNothing || tot.ChrF == nil || *tot.ChrF != 100 {
		t.Errorf("all right: totals %+v\nstderr:\n%s", tot, stderr)
	}
}

// A raw format: the flags reach the agent, which asks /v1/completions in Zeta 1's format with
// the API key; with a context too small for any prompt, it asks nothing at all.
func TestEvalBinaryRawFormat(t *testing.T) {
	bin := buildBridge(t)
	dir, scenarios := copyScenarios(t, "scenarios", "go-finish-line-mean", "py-nothing-clamp")
	fake := newFakeModel(t, scenarios, func(*eval.Scenario) behaviour { return answerRight })
	srv := httptest.NewServer(fake)
	defer srv.Close()
	env := []string{"EVAL_TEST_KEY=sekret"}
	args := []string{"eval", "--json", "--model-url", srv.URL, "--model", "fake-coder", "--model-format", "zeta1", "--model-server", "openai", "--api-key-env", "EVAL_TEST_KEY"}

	code, stdout, stderr := runBin(t, bin, env, append(args, dir)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	var j evalJSON
	if err := json.Unmarshal([]byte(stdout), &j); err != nil {
		t.Fatal(err)
	}
	if j.Agent.Format != "zeta1" || j.Total.Scenarios != 2 || j.Total.Exact != 2 || j.Total.Shown != 1 || j.Total.Quiet != 1 {
		t.Errorf("agent %+v totals %+v", j.Agent, j.Total)
	}
	fake.mu.Lock()
	if len(fake.paths) != 2 {
		t.Errorf("%d requests, want 2", len(fake.paths))
	}
	for i, p := range fake.paths {
		if p != "/v1/completions" || fake.models[i] != "fake-coder" || fake.auth[i] != "Bearer sekret" {
			t.Errorf("request %d: %s model %q auth %q", i, p, fake.models[i], fake.auth[i])
		}
	}
	if p := fake.prompts["go-finish-line-mean"]; !strings.Contains(p, "### User Edits:") || !strings.Contains(p, "User edited stats/mean.go:") {
		t.Errorf("the Zeta 1 prompt has no edit history:\n%s", p)
	}
	fake.paths = nil
	fake.mu.Unlock()

	code, stdout, stderr = runBin(t, bin, env, append(args, "--model-context", "64", dir)...)
	if code != 0 {
		t.Fatalf("--model-context 64: exit %d\n%s", code, stderr)
	}
	j = evalJSON{}
	if err := json.Unmarshal([]byte(stdout), &j); err != nil {
		t.Fatal(err)
	}
	if j.Total.Evaluated != 2 || j.Total.Exact != 1 || j.Total.Shown != 0 || j.Total.Quiet != 1 {
		t.Errorf("--model-context 64: totals %+v", j.Total)
	}
	fake.mu.Lock()
	if len(fake.paths) != 0 {
		t.Errorf("--model-context 64: the model was asked %d times; no prompt fits", len(fake.paths))
	}
	fake.mu.Unlock()
}

// copyScenarios copies the named scenarios of a built-in set's folder (internal/cmd/eval/testdata/
// folder) into a new directory, and returns it with the scenarios read.
func copyScenarios(t *testing.T, folder string, names ...string) (string, []*eval.Scenario) {
	t.Helper()
	dir := t.TempDir()
	var scenarios []*eval.Scenario
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join("..", "..", "internal", "cmd", "eval", "testdata", folder, name+eval.Ext))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+eval.Ext), data, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := eval.Parse(name+eval.Ext, data)
		if err != nil {
			t.Fatal(err)
		}
		scenarios = append(scenarios, s)
	}
	return dir, scenarios
}

// expectCounts counts the scenarios that expect an edit and those that expect none.
func expectCounts(scenarios []*eval.Scenario) (change, nothing int) {
	for _, s := range scenarios {
		if s.WantChange {
			change++
		} else {
			nothing++
		}
	}
	return change, nothing
}

// A model server that refuses connections: the first scenario fails with the reason, eval stops
// there, and the exit status says nothing was evaluated.
func TestEvalBinaryServerDown(t *testing.T) {
	bin := buildBridge(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	code, stdout, stderr := runBin(t, bin, nil, "eval", "--model-url", "http://"+addr, "--model", "fake-coder")
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	n := 0
	if ss, err := eval.Embedded(); err == nil {
		n = len(ss)
	}
	for _, want := range []string{
		fmt.Sprintf("eval: 1/%d ", n),
		"failed: model: nothing answers at http://" + addr + " (",
		"is the model's server (llama-server, Ollama, vLLM) running there?",
		fmt.Sprintf("failed, so the other %d were not run (why: above)", n-1),
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr has no %q:\n%s", want, stderr)
		}
	}
	// The failure is said once where eval goes on (the scenario's line) and once in the report.
	if got := strings.Count(stderr, "nothing answers at"); got != 1 {
		t.Errorf("stderr says the failure %d times, want once:\n%s", got, stderr)
	}
	if got := strings.Count(stdout, "nothing answers at"); got != 1 {
		t.Errorf("the report says the failure %d times, want once:\n%s", got, stdout)
	}
	if runtime.GOOS != "windows" && !strings.Contains(stderr, "connection refused") {
		t.Errorf("stderr does not say the connection was refused:\n%s", stderr)
	}
	if strings.Contains(stderr, fmt.Sprintf("eval: 2/%d", n)) {
		t.Errorf("eval went on after the first failure:\n%s", stderr)
	}
	if !strings.Contains(stdout, "FAILED") || !strings.Contains(stdout, "0 evaluated, 1 failed") || !strings.Contains(stdout, "stopped: ") {
		t.Errorf("stdout:\n%s", stdout)
	}
}

// A scenario directory with a malformed file: exit 2, naming the file and the line.
func TestEvalBinaryBadScenario(t *testing.T) {
	bin := buildBridge(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "broken.txtar"), []byte("kind: finish-line\nlanguage go\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runBin(t, bin, nil, "eval", "--model-url", "http://127.0.0.1:9", "--model", "m", dir)
	if code != 2 || !strings.Contains(stderr, `broken.txtar:2: want "key: value" in the header, got "language go"`) {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = runBin(t, bin, nil, "eval", "--model-url", "http://127.0.0.1:9", "--model", "m", t.TempDir())
	if code != 2 || !strings.Contains(stderr, "no scenario files (*.txtar)") {
		t.Errorf("empty directory: exit %d, stderr %q", code, stderr)
	}
}

// typoScenario is the case of issue 35: the user typed "im" before "from" by accident; the edit
// that should come next puts "from" back, which today's quality gate takes for an undo of the
// last edit and keeps back.
const typoScenario = `kind: fix
language: python
path: app/proxy.py
description: a stray "im" typed before "from" is taken back

-- before --
import os
from werkzeug.local import LocalProxy

current = LocalProxy(lambda: os.environ)
-- edit --
import os
im‸from werkzeug.local import LocalProxy

current = LocalProxy(lambda: os.environ)
-- expect --
import os
from werkzeug.local import LocalProxy

current = LocalProxy(lambda: os.environ)
`

// deletedOnPurpose is the other side of typoScenario: the user deleted a debug line, and a model
// that puts it back is noise the gate keeps back.
const deletedOnPurpose = `kind: nothing
language: python
path: app/total.py
expect: none
description: a debug print deleted on purpose is not put back

-- before --
def total(items):
    print("debug", items)
    return sum(items)
-- edit --
def total(items):
    ‸return sum(items)
`

// TestEvalBinaryKeptBack: eval says which answers the agent kept back and by which rule, per
// scenario and in total, in its table and its JSON; with --no-gate they are shown and scored.
// The model answers each scenario by undoing its last edit: for the stray "im" typed before
// "from" (issue 35's case) that is the right fix, which the gate shows; for a line deleted on
// purpose it is noise, which the gate keeps back as an undo.
func TestEvalBinaryKeptBack(t *testing.T) {
	bin := buildBridge(t)
	dir := t.TempDir()
	var scenarios []*eval.Scenario
	for name, text := range map[string]string{"py-typo-undone.txtar": typoScenario, "py-nothing-readd.txtar": deletedOnPurpose} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := eval.Parse(name, []byte(text))
		if err != nil {
			t.Fatal(err)
		}
		scenarios = append(scenarios, s)
	}
	fake := newFakeModel(t, scenarios, func(*eval.Scenario) behaviour { return answerUndo })
	srv := httptest.NewServer(fake)
	defer srv.Close()
	args := []string{"eval", "--json", "--model-url", srv.URL, "--model", "fake-coder"}
	run := func(extra ...string) map[string]evalResult {
		t.Helper()
		code, stdout, stderr := runBin(t, bin, nil, append(append(args, extra...), dir)...)
		if code != 0 {
			t.Fatalf("eval %v: exit %d\n%s\n%s", extra, code, stdout, stderr)
		}
		var j evalJSON
		if err := json.Unmarshal([]byte(stdout), &j); err != nil {
			t.Fatal(err)
		}
		if j.Total.KeptBack["undo"] != map[bool]int{true: 0, false: 1}[len(extra) > 0] {
			t.Errorf("eval %v: totals %+v", extra, j.Total)
		}
		byName := map[string]evalResult{}
		for _, r := range j.Results {
			byName[r.Name] = r
		}
		return byName
	}
	r := run()
	if typo := r["py-typo-undone"]; !typo.Exact || typo.KeptBack != nil {
		t.Errorf("with the gate, the stray letters taken back: %+v; want the fix shown", typo)
	}
	if readd := r["py-nothing-readd"]; readd.Shown || readd.KeptBack == nil || readd.KeptBack.Rule != "undo" {
		t.Errorf("with the gate, the deleted line put back: %+v; want it kept back as an undo", readd)
	}
	r = run("--no-gate")
	if readd := r["py-nothing-readd"]; !readd.Shown || readd.KeptBack != nil {
		t.Errorf("with --no-gate, the deleted line put back: %+v; want it shown", readd)
	}
	code, stdout, _ := runBin(t, bin, nil, "eval", "--model-url", srv.URL, "--model", "fake-coder", dir)
	if code != 0 || !strings.Contains(strings.Join(strings.Fields(stdout), " "), "kept back 1 (undo 1) answers the agent kept back: 1 where nothing was expected, 0 where an edit was") {
		t.Errorf("the table does not count the answer kept back:\n%s", stdout)
	}
}

// TestEvalBinaryGateKeepsNoiseBack: on every built-in scenario, a model answering with each kind
// of noise the quality gate is for has every answer kept back, by that kind's rule; and where the
// user's last edit was deliberate (the scenarios that expect nothing, and the renames begun), a
// model putting back what it replaced is kept back as an undo. With --no-gate the same answers are shown. Together with
// TestEvalBinary's run where the model answers every expected edit (all exact), this is the gate
// measured both ways on the built-in scenarios.
func TestEvalBinaryGateKeepsNoiseBack(t *testing.T) {
	bin := buildBridge(t)
	scenarios, err := eval.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	// The user's last edit was deliberate where nothing is expected, and in the renames begun by
	// keeping the old name's characters (a slip's shape, which the gate must not take for one).
	nothing := []string{"ts-rename-item-list", "py-rename-username", "go-rename-colour"}
	for _, s := range scenarios {
		if !s.WantChange {
			nothing = append(nothing, s.Name)
		}
	}
	for _, tc := range []struct {
		b     behaviour
		rule  string
		only  []string // the scenarios it applies to; all when nil
		shown bool     // with --no-gate, the answer is shown
	}{
		{answerWhitespace, "whitespace", nil, true},
		{answerRunaway, "runaway", nil, true},
		{answerPromptCopy, "prompt-copy", nil, true},
		{answerGibberish, "rewrite", nil, true},
		{answerCutShort, "cut-short", nil, false},
		{answerUndo, "undo", nothing, true},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			t.Parallel()
			fake := newFakeModel(t, scenarios, func(*eval.Scenario) behaviour { return tc.b })
			srv := httptest.NewServer(fake)
			defer srv.Close()
			dir := t.TempDir()
			for _, s := range scenarios {
				if tc.only != nil && !slices.Contains(tc.only, s.Name) {
					continue
				}
				data, err := os.ReadFile(filepath.Join("..", "..", "internal", "cmd", "eval", "testdata", "scenarios", s.File))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, s.File), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			for _, noGate := range []bool{false, true} {
				args := []string{"eval", "--json", "--model-url", srv.URL, "--model", "fake-coder"}
				if noGate {
					args = append(args, "--no-gate")
				}
				code, stdout, stderr := runBin(t, bin, nil, append(args, dir)...)
				var j evalJSON
				if err := json.Unmarshal([]byte(stdout), &j); err != nil || code != 0 {
					t.Fatalf("%v: exit %d, %v\n%s", args, code, err, stderr)
				}
				for _, r := range j.Results {
					switch {
					case r.Error != nil:
						t.Errorf("%s: %s", r.Name, *r.Error)
					case !noGate && (r.Shown || r.KeptBack == nil || r.KeptBack.Rule != tc.rule):
						t.Errorf("%s: shown %v, kept back %+v; want it kept back by %s", r.Name, r.Shown, r.KeptBack, tc.rule)
					case noGate && tc.shown && !r.Shown:
						t.Errorf("%s with --no-gate: not shown (kept back %+v)", r.Name, r.KeptBack)
					}
				}
				if len(j.Results) == 0 {
					t.Fatal("no scenario ran")
				}
			}
		})
	}
}

// TestEvalBinaryGateEffect: --gate-effect runs the scenarios with the gate and without it and sets
// the figures side by side, in the table and the JSON (withoutGate). A model that answers every
// built-in scenario with a repeated line has every answer kept back: quiet everywhere with the
// gate, shown everywhere without it.
func TestEvalBinaryGateEffect(t *testing.T) {
	bin := buildBridge(t)
	scenarios, err := eval.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	fake := newFakeModel(t, scenarios, func(*eval.Scenario) behaviour { return answerRunaway })
	srv := httptest.NewServer(fake)
	defer srv.Close()
	code, stdout, stderr := runBin(t, bin, nil, "eval", "--gate-effect", "--model-url", srv.URL, "--model", "fake-coder")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	expectChange, expectNothing := expectCounts(scenarios)
	table := strings.Join(strings.Fields(stdout), " ")
	for _, want := range []string{
		"THE GATE'S EFFECT WITH THE GATE WITHOUT IT",
		fmt.Sprintf("shown where expected 0/%d (0.0%%) %d/%d (100.0%%)", expectChange, expectChange, expectChange),
		fmt.Sprintf("quiet where none %d/%d (100.0%%) 0/%d (0.0%%)", expectNothing, expectNothing, expectNothing),
	} {
		if !strings.Contains(table, want) {
			t.Errorf("the report does not say %q:\n%s", want, stdout)
		}
	}
	code, stdout, stderr = runBin(t, bin, nil, "eval", "--gate-effect", "--json", "--model-url", srv.URL, "--model", "fake-coder")
	var j struct {
		Total       struct{ ShownWhereExpected int } `json:"total"`
		WithoutGate *struct {
			ShownWhereExpected int `json:"shownWhereExpected"`
		} `json:"withoutGate"`
	}
	if err := json.Unmarshal([]byte(stdout), &j); err != nil || code != 0 || j.WithoutGate == nil || j.WithoutGate.ShownWhereExpected != expectChange {
		t.Errorf("--json: exit %d, %v, withoutGate %+v\n%s", code, err, j.WithoutGate, stderr)
	}
	if code, _, stderr := runBin(t, bin, nil, "eval", "--gate-effect", "--no-gate", "--model-url", srv.URL, "--model", "fake-coder"); code != 2 || !strings.Contains(stderr, "leave out --no-gate") {
		t.Errorf("--gate-effect --no-gate: exit %d, %s", code, stderr)
	}
}
