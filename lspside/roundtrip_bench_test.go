package lspside_test

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"
	"github.com/rs/zerolog"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/acpside"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/testagent"
)

// roundTripDoc is a 2,000-line document; the request is on its last line.
func roundTripDoc() string {
	var b strings.Builder
	for i := 0; i < 1999; i++ {
		fmt.Fprintf(&b, "\tvalue%d := compute(ctx, %d) // é\n", i, i)
	}
	b.WriteString("\tretur\n")
	return b.String()
}

// instantSuggest answers at once with one edit on the cursor's line.
func instantSuggest(_ context.Context, req acp.UnstableSuggestNesRequest, _ string) (any, *acp.RequestError) {
	p := map[string]any{"line": req.Position.Line, "character": req.Position.Character}
	start := map[string]any{"line": req.Position.Line, "character": 1}
	return map[string]any{"suggestions": []any{map[string]any{
		"kind": "edit", "id": "rt", "uri": req.Uri,
		"edits": []any{map[string]any{"range": map[string]any{"start": start, "end": p}, "newText": "return nil"}},
	}}}, nil
}

func percentile(ds []time.Duration, p float64) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[min(len(s)-1, int(p*float64(len(s))))]
}

// BenchmarkRoundTrip measures an inline-completion request through the bridge against an agent
// that answers at once, and, as the baseline in the same run, the same nes/suggest sent directly to
// the same kind of agent over its own pipes. It reports the median and 99th percentile of each, the
// median ratio (bridge/direct) and the bridge's added time at the 99th percentile.
func BenchmarkRoundTrip(b *testing.B) {
	const uri = "file:///work/project/rt.go"
	doc := roundTripDoc()
	var direct, bridged []time.Duration

	b.Run("direct", func(b *testing.B) {
		ag := testagent.New(testagent.Config{Encoding: "utf-16", Suggest: instantSuggest})
		toR, toW := io.Pipe()
		fromR, fromW := io.Pipe()
		go func() { ag.Serve(toR, fromW); fromW.Close() }()
		a := acpside.Connect(fromR, toW, acpside.Options{Log: zerolog.Nop(), ClientName: "bench"})
		defer a.Close(context.Background())
		ctx := context.Background()
		if _, err := a.Initialize(ctx); err != nil {
			b.Fatal(err)
		}
		if err := a.StartNES(ctx, acp.UnstableStartNesRequest{}); err != nil {
			b.Fatal(err)
		}
		if err := a.DidOpen(ctx, acp.UnstableDidOpenDocumentNotification{Uri: uri, LanguageId: "go", Version: 1, Text: doc}); err != nil {
			b.Fatal(err)
		}
		req := acp.UnstableSuggestNesRequest{Uri: uri, Version: 1, Position: acp.UnstablePosition{Line: 1999, Character: 6}, TriggerKind: acp.UnstableNesTriggerKindAutomatic}
		direct = direct[:0]
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			t0 := time.Now()
			if _, err := a.Suggest(ctx, req); err != nil {
				b.Fatal(err)
			}
			direct = append(direct, time.Since(t0))
		}
	})
	b.Run("bridge", func(b *testing.B) {
		e := newEditor(b, harnessOpts{quietLog: true, agentCfg: testagent.Config{Encoding: "utf-16", Suggest: instantSuggest}})
		e.initialize("utf-16")
		e.waitReady()
		e.open(uri, doc)
		e.waitMirror(uri, doc)
		bridged = bridged[:0]
		calls0 := len(e.theAgent().Received())
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			t0 := time.Now()
			items, err := e.inline(uri, pos{1999, 6})
			if err != nil || len(items) != 1 {
				b.Fatalf("items %v, err %v", items, err)
			}
			bridged = append(bridged, time.Since(t0))
		}
		b.StopTimer()
		if len(direct) == 0 {
			return
		}
		// Reported here: a parent benchmark's own metrics are not printed.
		d50, d99 := percentile(direct, 0.5), percentile(direct, 0.99)
		b50, b99 := percentile(bridged, 0.5), percentile(bridged, 0.99)
		b.ReportMetric(float64(b50)/float64(d50), "median-ratio")
		b.ReportMetric(float64(b99-d99)/1e3, "added-p99-µs")
		b.Logf("%d messages reached the agent for %d requests; direct p50 %s p99 %s; through the bridge p50 %s p99 %s",
			len(e.theAgent().Received())-calls0, b.N, d50, d99, b50, b99)
	})
}
