package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/cmd/eval"
)

// TestRealLlamaServerEvalFIM runs `acp-lsp-bridge eval --model-format fim` as a user would against
// the real llama-server: every scenario of the built-in FIM set goes through the real model agent
// to the server's /infill and is evaluated, and the agent's log (eval --verbose) shows each
// answer with the server's timings. The tiny model's text is gibberish, so the scores say nothing:
// the test holds the run to its structure, not its figures.
func TestRealLlamaServerEvalFIM(t *testing.T) {
	l := startLlamaServer(t)
	bridge, _ := binaries(t)
	scenarios, err := eval.BuiltIn(eval.SetFIM)
	if err != nil {
		t.Fatal(err)
	}
	n := len(scenarios)

	cmd := exec.Command(bridge, "eval", "--json", "--verbose", "--model-url", l.URL, "--model", "tiny-qwen2",
		"--model-format", "fim", "--fim-sampling", "server", "--timeout", "60s")
	cmd.Dir = t.TempDir()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	if err != nil {
		t.Fatalf("eval exited %d\nstdout:\n%s\nstderr:\n%s", ee.ExitCode(), stdout.String(), logTail(stderr.String()))
	}

	var rep struct {
		Set   string `json:"set"`
		Agent struct {
			Format string `json:"format"`
		} `json:"agent"`
		Scenarios int     `json:"scenarios"`
		Stopped   *string `json:"stopped"`
		Results   []struct {
			Name      string   `json:"name"`
			Error     *string  `json:"error"`
			LatencyMs *float64 `json:"latencyMs"`
		} `json:"results"`
		Total struct {
			Evaluated int `json:"evaluated"`
			Failed    int `json:"failed"`
		} `json:"total"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("eval --json: %v\n%s", err, stdout.String())
	}
	if rep.Set != eval.SetFIM || rep.Agent.Format != "fim" || rep.Scenarios != n || rep.Stopped != nil ||
		rep.Total.Evaluated != n || rep.Total.Failed != 0 || len(rep.Results) != n {
		t.Errorf("set %q, format %q, %d scenarios, stopped %v, totals %+v, %d results; want the %d of the FIM set all evaluated\nstderr:\n%s",
			rep.Set, rep.Agent.Format, rep.Scenarios, rep.Stopped, rep.Total, len(rep.Results), n, logTail(stderr.String()))
	}
	for i, r := range rep.Results {
		if i < n && r.Name != scenarios[i].Name {
			t.Errorf("result %d is %s, want %s", i, r.Name, scenarios[i].Name)
		}
		if r.Error != nil {
			t.Errorf("%s: not evaluated: %s", r.Name, *r.Error)
		} else if r.LatencyMs == nil {
			t.Errorf("%s: no latency", r.Name)
		}
	}

	// The agent's log: each scenario's document asked at /infill, and answered with the server's
	// timings.
	log := stderr.String()
	if !strings.Contains(log, fmt.Sprintf("eval: %d scenarios (the built-in FIM set)", n)) {
		t.Errorf("eval does not say the FIM set runs:\n%s", logTail(log))
	}
	var answers []string
	for _, line := range strings.Split(log, "\n") {
		if strings.HasPrefix(line, "agent: ") && strings.Contains(line, `msg="model: answer"`) {
			answers = append(answers, line)
		}
	}
	for i, s := range scenarios {
		found := false
		for _, a := range answers {
			if strings.Contains(a, "/"+s.Path+" ") {
				found = true
				for _, want := range []string{"endpoint=" + l.URL + "/infill ", " prompt_n=", " cache_n=", " predicted_n="} {
					if !strings.Contains(a, want) {
						t.Errorf("%s: the agent's answer line has no %q: %s", s.Name, want, a)
					}
				}
			}
		}
		if !found {
			t.Errorf("%s: the agent logged no answer for %s", s.Name, s.Path)
		}
		if line := fmt.Sprintf("eval: %d/%d %s: ", i+1, n, s.Name); !strings.Contains(log, line) {
			t.Errorf("no progress line %q", line)
		}
	}
	if len(answers) != n {
		t.Errorf("%d answers logged, want one per scenario (%d)", len(answers), n)
	}
	for _, a := range answers {
		t.Log(a[strings.Index(a, "endpoint="):])
	}

	// Without --verbose, the report still has the server's prompt cache: the agent runs verbose
	// for eval whatever it copies.
	dir := t.TempDir()
	for _, name := range []string{"go-complete-call-args.txtar", "go-complete-loop-body.txtar"} {
		data, err := os.ReadFile(filepath.Join(moduleRoot(t), "internal", "cmd", "eval", "testdata", "fim", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	quiet := exec.Command(bridge, "eval", "--json", "--model-url", l.URL, "--model", "tiny-qwen2",
		"--model-format", "fim", "--fim-sampling", "server", "--timeout", "60s", dir)
	out, err := quiet.Output()
	if err != nil {
		t.Fatalf("eval without --verbose: %v\n%s", err, out)
	}
	var cache struct {
		Total struct {
			PromptTokens   *int     `json:"promptTokens"`
			NewShareMedian *float64 `json:"newShareMedian"`
		} `json:"total"`
	}
	if err := json.Unmarshal(out, &cache); err != nil || cache.Total.PromptTokens == nil || cache.Total.NewShareMedian == nil {
		t.Errorf("eval without --verbose: no prompt cache in the report (%v):\n%s", err, out)
	}
}
