package eval

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/acpside"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent/model"
)

// The test binary is also the agent Run starts in TestRunTimesTheModelApartFromTheStart: with
// EVAL_TEST_AGENT set to a model server's URL, it waits EVAL_TEST_AGENT_DELAY, then serves ACP on
// stdin and stdout as the model agent does (nesagent with the model engine, the chat format), its
// log at debug level on stderr, as `acp-lsp-bridge agent --verbose` writes it.
func TestMain(m *testing.M) {
	if url := os.Getenv("EVAL_TEST_AGENT"); url != "" {
		if d, err := time.ParseDuration(os.Getenv("EVAL_TEST_AGENT_DELAY")); err == nil {
			time.Sleep(d)
		}
		log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
		engine, err := model.New(model.Config{URL: url, Model: "fake-coder", Format: "chat", Timeout: 10 * time.Second, Log: log})
		if err != nil {
			log.Error(err.Error())
			os.Exit(2)
		}
		nesagent.New(engine, nesagent.Options{Name: "eval-test-agent", Version: "1"}).Serve(os.Stdin, os.Stdout)
		os.Exit(0)
	}
	// The ACP SDK logs through slog's default logger: not in the tests' output.
	slog.SetDefault(slog.New(slog.DiscardHandler))
	os.Exit(m.Run())
}

// slowChat is a chat model's server that answers each chat completion after delay with the
// editable region of the prompt as it is (no edit).
func slowChat(t *testing.T, delay time.Duration) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct{ Content string } `json:"messages"`
		}
		if r.URL.Path != "/v1/chat/completions" || json.NewDecoder(r.Body).Decode(&req) != nil || len(req.Messages) == 0 {
			http.NotFound(w, r)
			return
		}
		user := req.Messages[len(req.Messages)-1].Content
		const start, end = "<|editable_region_start|>", "<|editable_region_end|>"
		i, j := strings.Index(user, start), strings.Index(user, end)
		if i < 0 || j < i {
			t.Errorf("a chat prompt without its region:\n%s", user)
			http.Error(w, "no region", http.StatusBadRequest)
			return
		}
		region := strings.ReplaceAll(user[i:j+len(end)], "<|user_cursor_is_here|>", "")
		time.Sleep(delay)
		_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": region}}}})
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestRunTimesTheModelApartFromTheStart: each scenario's report gives the model's time (from
// the agent's log line of its answer), the agent's start (process, initialize, nes/start) and
// the first request's time before its prompt reached the server, apart from the latency of
// nes/suggest; and the totals give their percentiles, in the JSON and in the table. The agent
// takes 300 ms to start and the model 200 ms to answer: the start is not in the model's time nor
// in the latency, the model's time is in the latency.
func TestRunTimesTheModelApartFromTheStart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts agents")
	}
	const startDelay, modelDelay = 300 * time.Millisecond, 200 * time.Millisecond
	srv := slowChat(t, modelDelay)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	s, err := Parse("example.txtar", []byte(Example))
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{
		Agent:   acpside.Command{Path: self, Env: map[string]string{"EVAL_TEST_AGENT": srv.URL, "EVAL_TEST_AGENT_DELAY": startDelay.String()}},
		Version: "test", Log: zerolog.Nop(), AgentVerbose: true,
	}
	rep, err := Run(t.Context(), cfg, []*Scenario{s, s})
	if err != nil {
		t.Fatal(err)
	}
	rep.Model, rep.URL = "fake-coder", srv.URL
	var j struct {
		Results []struct {
			Error     *string  `json:"error"`
			LatencyMs *float64 `json:"latencyMs"`
			ModelMs   *float64 `json:"modelMs"`
			ConnectMs *float64 `json:"connectMs"`
			StartMs   *float64 `json:"startMs"`
		} `json:"results"`
		Total map[string]any `json:"total"`
	}
	if err := json.Unmarshal(rep.JSON(), &j); err != nil {
		t.Fatal(err)
	}
	ms := func(d time.Duration) float64 { return float64(d.Milliseconds()) }
	for i, r := range j.Results {
		if r.Error != nil || r.LatencyMs == nil || r.ModelMs == nil || r.ConnectMs == nil || r.StartMs == nil {
			t.Fatalf("result %d: error %v, latency %v, model %v, connect %v, start %v", i, r.Error, r.LatencyMs, r.ModelMs, r.ConnectMs, r.StartMs)
		}
		lat, mod, conn, start := *r.LatencyMs, *r.ModelMs, *r.ConnectMs, *r.StartMs
		t.Logf("result %d: latency %.1f ms, model %.1f ms, connect %.1f ms, start %.1f ms", i, lat, mod, conn, start)
		if mod < ms(modelDelay) || mod > lat {
			t.Errorf("result %d: the model's time %.1f ms, want at least the server's %v and at most the latency %.1f ms", i, mod, modelDelay, lat)
		}
		if conn < 0 || conn+mod > lat+1 {
			t.Errorf("result %d: the first connection %.1f ms and the model's %.1f ms are more than the latency %.1f ms", i, conn, mod, lat)
		}
		if start < ms(startDelay) {
			t.Errorf("result %d: the agent's start %.1f ms, want at least its %v", i, start, startDelay)
		}
		if lat >= ms(startDelay+modelDelay) {
			t.Errorf("result %d: the latency %.1f ms holds the agent's start", i, lat)
		}
	}
	for _, key := range []string{"modelP50Ms", "modelP90Ms", "connectP50Ms", "connectP90Ms", "startP50Ms", "startP90Ms"} {
		v, ok := j.Total[key].(float64)
		if !ok {
			t.Errorf("total.%s: %v", key, j.Total[key])
			continue
		}
		if strings.HasPrefix(key, "model") && v < ms(modelDelay) || strings.HasPrefix(key, "start") && v < ms(startDelay) {
			t.Errorf("total.%s %.1f", key, v)
		}
	}
	human := strings.Join(strings.Fields(rep.Human()), " ")
	for _, want := range []string{"SUGGEST MS MODEL MS CONNECT MS START MS", "first connection p50 "} {
		if !strings.Contains(human, want) {
			t.Errorf("the table does not say %q:\n%s", want, rep.Human())
		}
	}
	// The figures themselves, at least the delays (a machine under load, or Wine starting a
	// process, takes longer).
	for label, least := range map[string]time.Duration{"model's time p50 ": modelDelay, "agent start p50 ": startDelay} {
		m := regexp.MustCompile(regexp.QuoteMeta(label) + `([0-9.]+)`).FindStringSubmatch(human)
		if m == nil {
			t.Errorf("the table does not say %q:\n%s", label, rep.Human())
			continue
		}
		if v, err := strconv.ParseFloat(m[1], 64); err != nil || v < ms(least) {
			t.Errorf("the table says %s%s, want at least %v", label, m[1], least)
		}
	}
}
