package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"
	"github.com/rs/zerolog"
	"go.lsp.dev/uri"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/acpside"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"
)

// chatRegionAnswer answers a chat-format prompt (the model agent's own, for a model name that is
// no next-edit model's) with its region, the cursor marker replaced by ins.
func chatRegionAnswer(prompt, ins string) string {
	region, ok := between(prompt, "<|editable_region_start|>\n", "<|editable_region_end|>")
	if !ok {
		return "no region"
	}
	return "<|editable_region_start|>\n" + strings.Replace(region, "<|user_cursor_is_here|>", ins, 1) + "<|editable_region_end|>"
}

func chatCompletion(content string) []byte {
	b, _ := json.Marshal(map[string]any{"object": "chat.completion", "choices": []any{map[string]any{
		"index": 0, "message": map[string]any{"role": "assistant", "content": content}, "finish_reason": "stop",
	}}})
	return b
}

// BenchmarkModelAgentOverhead measures what the model agent adds to a request besides the model's
// own time: against a fake server that answers at once, nes/suggest sent to the real agent process
// (`acp-lsp-bridge agent --model-url … --model …`, over its stdin and stdout, for a 2,000-line
// document with edits to remember) against the same request body posted directly to the server
// by a plain HTTP client, the baseline, in the same run. It reports the medians of both, their
// ratio, and what the agent adds at the median (budget: under 1 ms) and the 90th percentile.
func BenchmarkModelAgentOverhead(b *testing.B) {
	// The ACP SDK logs the connection's end through slog's default logger, which would split
	// this benchmark's line of results.
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.DiscardHandler))
	bridge, _ := binaries(b)
	var mu sync.Mutex
	var lastBody []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Messages []struct{ Content string } `json:"messages"`
		}
		_ = json.Unmarshal(body, &req)
		if r.Header.Get("X-Direct") == "" {
			mu.Lock()
			lastBody = body
			mu.Unlock()
		}
		prompt := ""
		if n := len(req.Messages); n > 0 {
			prompt = req.Messages[n-1].Content
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(chatCompletion(chatRegionAnswer(prompt, "+1")))
	}))
	defer srv.Close()

	root := b.TempDir()
	// --no-prefetch: the same request again and again, each answer followed by a request for
	// the next suggestion (prefetch) that the next one cancels, would measure that instead.
	agent, err := acpside.Start(acpside.Command{Path: bridge, Args: []string{"agent", "--model-url", srv.URL, "--model", "fake-coder", "--no-prefetch"}, Dir: root},
		acpside.ClientOptions(zerolog.Nop(), "bench"))
	if err != nil {
		b.Fatal(err)
	}
	defer agent.Close(context.Background())
	ctx := context.Background()
	if _, err := agent.Initialize(ctx); err != nil {
		b.Fatal(err)
	}
	ws := string(uri.File(root))
	if err := agent.StartNES(ctx, acp.UnstableStartNesRequest{WorkspaceUri: &ws, WorkspaceFolders: []acp.UnstableWorkspaceFolder{{Uri: ws, Name: "w"}}}); err != nil {
		b.Fatal(err)
	}
	var text strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&text, "\tv%d := compute(%d, \"é\") // line %d\n", i, i, i)
	}
	doc := string(uri.File(filepath.Join(root, "main.go")))
	if err := agent.DidOpen(ctx, acp.UnstableDidOpenDocumentNotification{Uri: doc, LanguageId: "go", Version: 1, Text: text.String()}); err != nil {
		b.Fatal(err)
	}
	for v := 2; v <= 6; v++ { // a few edits for the history
		line := 1000 + v
		if err := agent.DidChange(ctx, acp.UnstableDidChangeDocumentNotification{Uri: doc, Version: v, ContentChanges: []acp.UnstableTextDocumentContentChangeEvent{{
			Range: &acp.UnstableRange{Start: acp.UnstablePosition{Line: line, Character: 1}, End: acp.UnstablePosition{Line: line, Character: 1}}, Text: "x",
		}}}); err != nil {
			b.Fatal(err)
		}
	}
	req := acp.UnstableSuggestNesRequest{Uri: doc, Version: 6, Position: acp.UnstablePosition{Line: 1005, Character: 10}, TriggerKind: acp.UnstableNesTriggerKindAutomatic}
	viaAgent := func() time.Duration {
		t0 := time.Now()
		sugs, err := agent.Suggest(ctx, req)
		d := time.Since(t0)
		if err != nil || len(sugs) != 1 || sugs[0].Edit == nil {
			b.Fatalf("nes/suggest: %+v, %v", sugs, err)
		}
		return d
	}
	viaAgent() // warm: the agent's connection to the server, and the request body to replay
	mu.Lock()
	body := lastBody
	mu.Unlock()
	client := &http.Client{}
	direct := func() time.Duration {
		t0 := time.Now()
		hreq, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/chat/completions", bytes.NewReader(body))
		hreq.Header.Set("Content-Type", "application/json")
		hreq.Header.Set("X-Direct", "1")
		resp, err := client.Do(hreq)
		if err != nil {
			b.Fatal(err)
		}
		var out struct {
			Choices []struct {
				Message struct{ Content string } `json:"message"`
			} `json:"choices"`
		}
		err = json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		d := time.Since(t0)
		if err != nil || len(out.Choices) != 1 {
			b.Fatalf("direct: %v", err)
		}
		return d
	}
	direct()
	var agentTimes, directTimes []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// Interleaved, so that both see the same moments of a shared machine.
		for range 20 {
			agentTimes = append(agentTimes, viaAgent())
			directTimes = append(directTimes, direct())
		}
	}
	b.StopTimer()
	pct := func(ds []time.Duration, p float64) float64 {
		s := slices.Clone(ds)
		slices.Sort(s)
		return float64(s[int(p*float64(len(s)-1))].Microseconds())
	}
	b.ReportMetric(pct(agentTimes, 0.5), "agent-p50-µs")
	b.ReportMetric(pct(directTimes, 0.5), "direct-p50-µs")
	b.ReportMetric(pct(agentTimes, 0.5)-pct(directTimes, 0.5), "added-p50-µs")
	b.ReportMetric(pct(agentTimes, 0.5)/pct(directTimes, 0.5), "median-ratio")
	b.ReportMetric(pct(agentTimes, 0.9)-pct(directTimes, 0.9), "added-p90-µs")
	b.ReportMetric(float64(len(agentTimes)), "samples")
}

// slowModel is a fake model server that takes a fixed time per request unless the client goes
// away first, and keeps count: requests started, requests aborted (the connection closed before
// the answer), the model time they took before that, and the most in flight at once.
type slowModel struct {
	took time.Duration
	mu   sync.Mutex
	// starts and aborts are the times each request began and, for an aborted one, ended.
	starts, aborts []time.Time
	wasted         time.Duration
	// ends are when each request in flight was seen to end, by its start (zero while in flight);
	// most is the most in flight at once.
	ends map[time.Time]time.Time
	most int
}

// closeSeen is how long after the agent closes a request's connection the server may see it
// closed: the agent starts the next generation once it has closed the one before, and the server
// can see the new request a moment before the old one's end (within the same millisecond, on a
// busy machine a few). A request still running past that is a second generation in flight.
const closeSeen = 5 * time.Millisecond

// inFlightAt counts the requests in flight when one started at t0 (itself included): those that
// started before it and had not ended closeSeen after it. Under m.mu.
func (m *slowModel) inFlightAt(t0 time.Time) int {
	n := 1
	for start, end := range m.ends {
		if start.Before(t0) && (end.IsZero() || end.Sub(t0) > closeSeen) {
			n++
		}
	}
	return n
}

func (m *slowModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req struct {
		Messages []struct{ Content string } `json:"messages"`
	}
	_ = json.Unmarshal(body, &req)
	t0 := time.Now()
	m.mu.Lock()
	m.starts = append(m.starts, t0)
	if m.ends == nil {
		m.ends = map[time.Time]time.Time{}
	}
	m.ends[t0] = time.Time{}
	m.mu.Unlock()
	defer func() {
		// Counted once this request's end is known: a request that started before it ended,
		// and was still running closeSeen after this one started, makes two.
		m.mu.Lock()
		m.most = max(m.most, m.inFlightAt(t0))
		m.mu.Unlock()
	}()
	// The generation ends when its answer is written (a server's slot is free once it has the
	// last token, before the client has read it): the request the agent makes on reading the
	// answer (the next suggestion, prefetched) is not two at once.
	select {
	case <-time.After(m.took):
		m.mu.Lock()
		m.ends[t0] = time.Now()
		m.mu.Unlock()
	case <-r.Context().Done():
		m.mu.Lock()
		m.ends[t0] = time.Now()
		m.aborts = append(m.aborts, time.Now())
		m.wasted += time.Since(t0)
		m.mu.Unlock()
		return
	}
	prompt := ""
	if n := len(req.Messages); n > 0 {
		prompt = req.Messages[n-1].Content
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(chatCompletion(chatRegionAnswer(prompt, "_done")))
}

// BenchmarkTypingAgainstASlowModel: an editor types 8 characters a second for 10 s into a
// document, asking for an inline completion after each key and cancelling the one before (as
// Neovim does), then pauses; the real bridge runs the real model agent against a fake server that
// takes 300 ms per request. A local model shares the user's CPU or GPU, so a generation nobody
// waits for any more must stop at once. It reports the requests the server started and saw
// aborted, the model time thrown away, the most in flight at once (budget: 1), how long after the
// superseding key an aborted request's connection closed (the largest), and the time from the last
// key to the suggestion, with its excess over the model's 300 ms (budget: 20 ms).
func BenchmarkTypingAgainstASlowModel(b *testing.B) {
	const (
		keys     = 80
		interval = time.Second / 8
		took     = 300 * time.Millisecond
	)
	bridge, _ := binaries(b)
	var last time.Duration
	var m *slowModel
	var keyTimes []time.Time
	for b.Loop() {
		m = &slowModel{took: took}
		srv := httptest.NewServer(m)
		p := startBridge(b, "--", bridge, "agent", "--model-url", srv.URL, "--model", "fake-coder", "--timeout", "10s")
		root := b.TempDir()
		p.Initialize(fileURI(root), "utf-16")
		p.waitMessage("acp-lsp-bridge-model is ready")
		doc := fileURI(filepath.Join(root, "main.go"))
		text := "package main\n\nfunc main() {\n\tname := \n}\n"
		p.Open(doc, text)
		col := len("\tname := ")
		type inlineResult struct {
			Items []struct {
				InsertText string `json:"insertText"`
			} `json:"items"`
		}
		var pending *fakeeditor.Pending
		var res *inlineResult
		keyTimes = keyTimes[:0]
		tick := time.NewTicker(interval)
		for k := range keys {
			<-tick.C
			keyTimes = append(keyTimes, time.Now())
			p.ChangeAt(doc, k+2, fakeeditor.Replace(fakeeditor.At(3, col), fakeeditor.At(3, col), string(rune('a'+k%26))))
			col++
			if pending != nil {
				_ = pending.Cancel()
			}
			res = &inlineResult{}
			pending = p.Start("textDocument/inlineCompletion", fakeeditor.InlineParams(doc, fakeeditor.At(3, col), 2), res)
		}
		tick.Stop()
		// The request after the last key is answered with the suggestion, after the model's time.
		if err := pending.Wait(); err != nil {
			b.Fatalf("the request after the last key: %v", err)
		}
		last = time.Since(keyTimes[len(keyTimes)-1])
		if len(res.Items) != 1 || res.Items[0].InsertText == "" || !strings.HasSuffix(res.Items[0].InsertText, "_done") {
			b.Fatalf("after the last key the editor got %+v, want the model's suggestion", res.Items)
		}
		srv.Close()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	// How long after the key that superseded it each aborted request's connection closed.
	var lag time.Duration
	for _, a := range m.aborts {
		// The key that superseded it: the last one sent before the connection closed.
		k := len(keyTimes) - 1
		for k > 0 && keyTimes[k].After(a) {
			k--
		}
		lag = max(lag, a.Sub(keyTimes[k]))
	}
	b.ReportMetric(float64(len(m.starts)), "started")
	b.ReportMetric(float64(len(m.aborts)), "aborted")
	b.ReportMetric(float64(m.wasted.Milliseconds()), "wasted-model-ms")
	b.ReportMetric(float64(m.most), "max-in-flight")
	b.ReportMetric(float64(lag.Microseconds())/1000, "abort-lag-max-ms")
	b.ReportMetric(float64(last.Microseconds())/1000, "last-key-to-suggestion-ms")
	b.ReportMetric(float64((last-took).Microseconds())/1000, "over-model-ms")
}
