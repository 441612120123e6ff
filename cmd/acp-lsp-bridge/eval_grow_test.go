package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/cmd/eval"
)

// growScenario: the user changed g( to k( on one line; the same change is expected on two lines
// below it, far apart.
const growScenario = `kind: same-change
language: go
path: p/calls.go
description: g( became k( on the first call; the same change on the others that need it

-- before --
package p

func f() {
	a := g(1)
	b := g(2)
	c := m(3)
	d := m(4)
	e := m(5)
	h := m(6)
	i := m(7)
	j := g(8)
}
-- edit --
package p

func f() {
	a := k(1)‸
	b := g(2)
	c := m(3)
	d := m(4)
	e := m(5)
	h := m(6)
	i := m(7)
	j := g(8)
}
-- expect --
package p

func f() {
	a := k(1)
	b := k(2)
	c := m(3)
	d := m(4)
	e := m(5)
	h := m(6)
	i := m(7)
	j := k(8)
}
`

// TestEvalBinaryFirstAndSettled: against a Zeta 2 server that streams its rewrite a line every
// 30 ms, eval scores the first suggestion (the first change, answered while the model writes)
// and the settled one (the whole answer, asked again at the same place while the agent says the
// answer grows) apart: the first is not exact, the settled one is, and the first came sooner.
func TestEvalBinaryFirstAndSettled(t *testing.T) {
	bin := buildBridge(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Prompt string `json:"prompt"`
			Stream bool   `json:"stream"`
		}
		if r.URL.Path != "/v1/completions" || json.NewDecoder(r.Body).Decode(&req) != nil || !req.Stream {
			http.Error(w, "want a streamed /v1/completions", http.StatusBadRequest)
			return
		}
		_, rest, ok := strings.Cut(req.Prompt, "<<<<<<< CURRENT\n")
		region, _, ok2 := strings.Cut(rest, "=======\n")
		if !ok || !ok2 {
			http.Error(w, "not a Zeta 2 prompt", http.StatusBadRequest)
			return
		}
		region = strings.ReplaceAll(region, "<|user_cursor|>", "")
		w.Header().Set("Content-Type", "text/event-stream")
		send := func(text string) {
			b, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"text": text}}})
			fmt.Fprintf(w, "data: %s\n\n", b)
			w.(http.Flusher).Flush()
		}
		for _, l := range strings.SplitAfter(region, "\n") {
			if l == "" {
				continue
			}
			time.Sleep(30 * time.Millisecond)
			send(strings.Replace(strings.Replace(l, "g(2)", "k(2)", 1), "g(8)", "k(8)", 1))
		}
		send(">>>>>>> UPDATED\n")
		fmt.Fprint(w, "data: {\"choices\":[{\"text\":\"\",\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go-same-change-calls.txtar"), []byte(growScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runBin(t, bin, nil, "eval", "--json", "--model-url", srv.URL, "--model", "zeta-2", "--model-server", "openai", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	var j struct {
		Results []struct {
			Exact     bool     `json:"exact"`
			ChrF      *float64 `json:"chrF"`
			LatencyMs *float64 `json:"latencyMs"`
			Grew      int      `json:"grew"`
			First     struct {
				Exact     *bool    `json:"exact"`
				ChrF      *float64 `json:"chrF"`
				LatencyMs *float64 `json:"latencyMs"`
			} `json:"first"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(stdout), &j); err != nil || len(j.Results) != 1 {
		t.Fatalf("%v\n%s", err, stdout)
	}
	r := j.Results[0]
	if !r.Exact || r.Grew == 0 || r.First.Exact == nil || *r.First.Exact || *r.First.ChrF >= *r.ChrF || *r.First.LatencyMs >= *r.LatencyMs {
		t.Errorf("settled exact %v chrF %v in %v ms, grew %d; first exact %v chrF %v in %v ms: want the first partial and sooner, the settled exact",
			r.Exact, *r.ChrF, *r.LatencyMs, r.Grew, *r.First.Exact, *r.First.ChrF, *r.First.LatencyMs)
	}
	code, stdout, _ = runBin(t, bin, nil, "eval", "--model-url", srv.URL, "--model", "zeta-2", "--model-server", "openai", dir)
	if code != 0 || !strings.Contains(stdout, "first suggestion") || !strings.Contains(stdout, "(1 of 1 grew after the first)") {
		t.Errorf("the table does not report the first suggestion apart:\n%s", stdout)
	}
	// Speed is when the first of it appears: the headline latency is the first suggestion's,
	// sooner than the settled one's line beside it.
	var first, settled int
	for _, line := range strings.Split(stdout, "\n") {
		var p50 int
		switch {
		case strings.HasPrefix(line, "nes/suggest latency ") && strings.Contains(line, "to the first suggestion shown"):
			if _, err := fmt.Sscanf(strings.TrimSpace(strings.TrimPrefix(line, "nes/suggest latency")), "p50 %d ms", &p50); err == nil {
				first = p50
			}
		case strings.HasPrefix(line, "settled "):
			if _, err := fmt.Sscanf(strings.TrimSpace(strings.TrimPrefix(line, "settled")), "p50 %d ms", &p50); err == nil {
				settled = p50
			}
		}
	}
	if first == 0 || settled == 0 || first >= settled {
		t.Errorf("nes/suggest latency p50 %d ms (the first suggestion's), settled p50 %d ms: want both, the first sooner:\n%s", first, settled, stdout)
	}
}

// TestEvalBinaryStreamedSettlesAsWhole: on every built-in NES scenario, a Zeta 2 model that
// writes the expected rewrite a line every 10 ms ends, once the answer has settled, exactly as
// the whole answer does (every scenario exact, as TestEvalBinary's oracle), though the first
// suggestion of an answer with changes far apart is only its first change.
func TestEvalBinaryStreamedSettlesAsWhole(t *testing.T) {
	bin := buildBridge(t)
	scenarios, err := eval.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	fake := newFakeModel(t, scenarios, func(*eval.Scenario) behaviour { return answerRight })
	fake.zeta2, fake.lineDelay = true, 10*time.Millisecond
	srv := httptest.NewServer(fake)
	defer srv.Close()
	code, stdout, stderr := runBin(t, bin, nil, "eval", "--json", "--model-url", srv.URL, "--model", "zeta-2", "--model-server", "openai")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	var j struct {
		Results []struct {
			Name  string   `json:"name"`
			Exact bool     `json:"exact"`
			ChrF  *float64 `json:"chrF"`
			Grew  int      `json:"grew"`
			First struct {
				Exact *bool    `json:"exact"`
				ChrF  *float64 `json:"chrF"`
			} `json:"first"`
		} `json:"results"`
		Total struct {
			Exact int `json:"exact"`
			Grew  int `json:"grew"`
			First struct {
				ExactN *int `json:"exactCount"`
			} `json:"first"`
		} `json:"total"`
	}
	if err := json.Unmarshal([]byte(stdout), &j); err != nil {
		t.Fatal(err)
	}
	for _, r := range j.Results {
		if !r.Exact {
			t.Errorf("%s: the settled suggestion is not the whole answer (grew %d)", r.Name, r.Grew)
		}
		if r.ChrF != nil && r.First.ChrF != nil && *r.First.ChrF > *r.ChrF {
			t.Errorf("%s: the first suggestion scores %.1f, above the settled %.1f", r.Name, *r.First.ChrF, *r.ChrF)
		}
	}
	if j.Total.Exact != len(scenarios) || j.Total.Grew == 0 || *j.Total.First.ExactN >= j.Total.Exact {
		t.Errorf("totals: %d exact of %d, %d grew, %d first exact; want all exact, some grown from a partial first", j.Total.Exact, len(scenarios), j.Total.Grew, *j.Total.First.ExactN)
	}
	t.Logf("%d of %d answers grew; first suggestions exact %d, settled %d", j.Total.Grew, len(scenarios), *j.Total.First.ExactN, j.Total.Exact)
}
