package lspside_test

import (
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"

	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testagent"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/lspside"
)

// BenchmarkKeystrokeBurst replays a burst of 30 keystrokes at 30 per second, each followed by an
// inline-completion request that the editor does not cancel, against an agent that takes 100 ms
// per answer. It reports the nes/suggest calls the agent received per burst (agentCalls, against
// the 30 keystrokes), and the most that were in flight at once (maxInFlight): a newer request
// supersedes the one in flight, and one that supersedes waits CoalesceDelay, so the calls stay
// bounded however long the burst. The baseline, in the same run, supersedes without waiting.
func BenchmarkKeystrokeBurst(b *testing.B) {
	b.Run("coalesced", func(b *testing.B) { keystrokeBurst(b, 0) })
	b.Run("baseline-no-wait", func(b *testing.B) { keystrokeBurst(b, time.Nanosecond) })
}

func keystrokeBurst(b *testing.B, coalesce time.Duration) {
	const (
		keys     = 30
		interval = time.Second / 30
		latency  = 100 * time.Millisecond
	)
	var calls, inFlight, maxInFlight atomic.Int64
	suggest := func(ctx context.Context, _ acp.UnstableSuggestNesRequest, _ string) (any, *acp.RequestError) {
		calls.Add(1)
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			m := maxInFlight.Load()
			if n <= m || maxInFlight.CompareAndSwap(m, n) {
				break
			}
		}
		select {
		case <-time.After(latency):
		case <-ctx.Done():
		}
		return map[string]any{"suggestions": []any{}}, nil
	}
	e := newEditor(b, harnessOpts{agentCfg: testagent.Config{Encoding: "utf-16", Suggest: suggest}, cfg: lspside.Config{CoalesceDelay: coalesce}})
	e.initialize("utf-16")
	e.WaitReady()
	const uri = "file:///work/project/burst.go"
	e.Open(uri, "x\n")
	e.waitMirror(uri, "x\n")
	version, col := 1, 1
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var wg sync.WaitGroup
		tick := time.NewTicker(interval)
		for k := 0; k < keys; k++ {
			<-tick.C
			version++
			e.ChangeAt(uri, version, fakeeditor.Replace(fakeeditor.At(0, col), fakeeditor.At(0, col), "a"))
			col++
			wg.Add(1)
			go func(c int) {
				defer wg.Done()
				_, _ = e.Inline(uri, fakeeditor.At(0, c))
			}(col)
		}
		tick.Stop()
		wg.Wait()
	}
	b.StopTimer()
	b.ReportMetric(float64(calls.Load())/float64(b.N), "agentCalls/burst")
	b.ReportMetric(keys, "keystrokes/burst")
	b.ReportMetric(float64(maxInFlight.Load()), "maxInFlight")
}
