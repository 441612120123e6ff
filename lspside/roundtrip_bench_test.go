package lspside_test

import (
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"

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
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testagent"
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
// that answers at once, and, as the baseline, the same nes/suggest sent directly to the same kind
// of agent over its own pipes. Each iteration makes one request of each, one after the other, so
// that both see the same load on a shared machine. It reports the median ratio (bridge/direct) and
// the bridge's added time at the 99th percentile; the budgets are 2.0 and 1 ms.
func BenchmarkRoundTrip(b *testing.B) {
	const uri = "file:///work/project/rt.go"
	doc := roundTripDoc()
	ctx := context.Background()

	ag := testagent.New(testagent.Config{Encoding: "utf-16", Suggest: instantSuggest})
	toR, toW := io.Pipe()
	fromR, fromW := io.Pipe()
	go func() { ag.Serve(toR, fromW); fromW.Close() }()
	a := acpside.Connect(fromR, toW, acpside.Options{Log: zerolog.Nop(), ClientName: "bench"})
	defer a.Close(context.Background())
	if _, err := a.Initialize(ctx); err != nil {
		b.Fatal(err)
	}
	if err := a.StartNES(ctx, acp.UnstableStartNesRequest{}); err != nil {
		b.Fatal(err)
	}
	if err := a.DidOpen(ctx, acp.UnstableDidOpenDocumentNotification{Uri: uri, LanguageId: "go", Version: 1, Text: doc}); err != nil {
		b.Fatal(err)
	}
	req := acp.UnstableSuggestNesRequest{Uri: uri, Version: 1, Position: acp.UnstablePosition{Line: 1999, Character: 6}, TriggerKind: acp.UnstableNesTriggerKindManual}

	e := newEditor(b, harnessOpts{quietLog: true, agentCfg: testagent.Config{Encoding: "utf-16", Suggest: instantSuggest}})
	e.initialize("utf-16")
	e.WaitReady()
	e.Open(uri, doc)
	e.waitMirror(uri, doc)

	direct := make([]time.Duration, 0, b.N)
	bridged := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if _, err := a.Suggest(ctx, req); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		// Invoked, so that the agent is asked each time (an automatic request at the same text and
		// position is answered from the suggestion shown).
		items, err := e.InlineTriggered(uri, fakeeditor.At(1999, 6), 1)
		if err != nil || len(items) != 1 {
			b.Fatalf("items %v, err %v", items, err)
		}
		direct, bridged = append(direct, t1.Sub(t0)), append(bridged, time.Since(t1))
	}
	b.StopTimer()
	d50, d99 := percentile(direct, 0.5), percentile(direct, 0.99)
	b50, b99 := percentile(bridged, 0.5), percentile(bridged, 0.99)
	b.ReportMetric(float64(b50)/float64(d50), "median-ratio")
	b.ReportMetric(float64(b99-d99)/1e3, "added-p99-µs")
	b.Logf("%d requests each: direct p50 %s p99 %s; through the bridge p50 %s p99 %s", b.N, d50, d99, b50, b99)
}
