package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/cmd/eval"
)

// TestEvalBinaryModelTime: against a server that takes 150 ms to say it is no Ollama (GET
// /api/version, which the agent asks before its first raw prompt) and 200 ms to answer each
// prompt, eval's report gives per scenario and in its totals the model's time (200 ms and a
// little, not the 150 ms before it), the part of the request before the prompt reached the
// server (the 150 ms: the agent's first connection and its question), and the agent's start,
// apart from the latency of nes/suggest, which holds the first two; the table has them too.
func TestEvalBinaryModelTime(t *testing.T) {
	const probeDelay, modelDelay = 150 * time.Millisecond, 200 * time.Millisecond
	bin := buildBridge(t)
	dir, scenarios := copyScenarios(t, "scenarios", "go-finish-line-mean", "py-nothing-clamp")
	fake := newFakeModel(t, scenarios, func(*eval.Scenario) behaviour { return answerRight })
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			time.Sleep(probeDelay)
			http.NotFound(w, r) // no Ollama here
			return
		}
		time.Sleep(modelDelay)
		fake.ServeHTTP(w, r)
	}))
	defer srv.Close()
	args := []string{"--model-url", srv.URL, "--model", "fake-coder", "--model-format", "zeta1", dir}

	code, stdout, stderr := runBin(t, bin, nil, append([]string{"eval", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	var j struct {
		Results []struct {
			Name      string   `json:"name"`
			Error     *string  `json:"error"`
			LatencyMs *float64 `json:"latencyMs"`
			ModelMs   *float64 `json:"modelMs"`
			ConnectMs *float64 `json:"connectMs"`
			StartMs   *float64 `json:"startMs"`
		} `json:"results"`
		Total map[string]any `json:"total"`
	}
	if err := json.Unmarshal([]byte(stdout), &j); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	ms := func(d time.Duration) float64 { return float64(d.Milliseconds()) }
	if len(j.Results) != 2 {
		t.Fatalf("%d results", len(j.Results))
	}
	for _, r := range j.Results {
		if r.Error != nil || r.LatencyMs == nil || r.ModelMs == nil || r.ConnectMs == nil || r.StartMs == nil {
			t.Fatalf("%s: error %v, latency %v, model %v, connect %v, start %v\n%s", r.Name, r.Error, r.LatencyMs, r.ModelMs, r.ConnectMs, r.StartMs, stdout)
		}
		lat, mod, conn, start := *r.LatencyMs, *r.ModelMs, *r.ConnectMs, *r.StartMs
		t.Logf("%s: latency %.1f ms, model %.1f ms, connect %.1f ms, start %.1f ms", r.Name, lat, mod, conn, start)
		if mod < ms(modelDelay) || mod >= ms(modelDelay+probeDelay) {
			t.Errorf("%s: the model's time %.1f ms, want the server's %v and not its %v before", r.Name, mod, modelDelay, probeDelay)
		}
		if conn < ms(probeDelay) || conn >= ms(probeDelay+modelDelay) {
			t.Errorf("%s: the first connection %.1f ms, want the %v of the question before the prompt", r.Name, conn, probeDelay)
		}
		if lat < conn+mod-1 {
			t.Errorf("%s: the latency %.1f ms is less than the first connection %.1f ms and the model's %.1f ms", r.Name, lat, conn, mod)
		}
		if start <= 0 {
			t.Errorf("%s: the agent's start %.1f ms", r.Name, start)
		}
	}
	for _, key := range []string{"modelP50Ms", "modelP90Ms", "connectP50Ms", "connectP90Ms", "startP50Ms", "startP90Ms", "latencyP50Ms", "latencyP90Ms"} {
		if _, ok := j.Total[key].(float64); !ok {
			t.Errorf("total.%s: %v", key, j.Total[key])
		}
	}
	if v, _ := j.Total["modelP50Ms"].(float64); v < ms(modelDelay) || v >= ms(modelDelay+probeDelay) {
		t.Errorf("total.modelP50Ms %.1f", v)
	}
	if v, _ := j.Total["connectP50Ms"].(float64); v < ms(probeDelay) {
		t.Errorf("total.connectP50Ms %.1f", v)
	}

	code, stdout, stderr = runBin(t, bin, nil, append([]string{"eval"}, args...)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	human := strings.Join(strings.Fields(stdout), " ")
	for _, want := range []string{"SUGGEST MS MODEL MS CONNECT MS START MS", "model's time p50 2", "first connection p50 1", "agent start p50 "} {
		if !strings.Contains(human, want) {
			t.Errorf("the table does not say %q:\n%s", want, stdout)
		}
	}
}
