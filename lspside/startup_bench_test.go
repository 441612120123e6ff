package lspside_test

import (
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"
	"testing"
	"time"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testagent"
)

// BenchmarkStartup measures the editor's initialize, from sending it to its answer, with an agent
// that takes 1 s to answer its own initialize (agent-1s), and, as the baseline in the same run,
// with an agent that answers at once (agent-at-once). Each iteration is a new bridge and agent, set
// up and torn down outside the timer. agent-1s reports the median of its initialize in
// milliseconds (initialize-ms; the budget is 50 ms) and the ratio of the medians, its over the
// baseline's (startup-ratio: 1 when the agent's start-up costs the editor nothing). Benchmarks
// report; they do not judge times.
func BenchmarkStartup(b *testing.B) {
	var atOnce []time.Duration
	b.Run("agent-at-once", func(b *testing.B) {
		atOnce = startupLatencies(b, 0)
		b.ReportMetric(float64(percentile(atOnce, 0.5))/float64(time.Millisecond), "initialize-ms")
	})
	b.Run("agent-1s", func(b *testing.B) {
		slow := startupLatencies(b, time.Second)
		s50 := percentile(slow, 0.5)
		b.ReportMetric(float64(s50)/float64(time.Millisecond), "initialize-ms")
		if len(atOnce) == 0 {
			return // the baseline did not run (-bench names only this one)
		}
		a50 := percentile(atOnce, 0.5)
		b.ReportMetric(float64(s50)/float64(a50), "startup-ratio")
		b.Logf("initialize answered in p50 %s p99 %s with an agent that starts at once; p50 %s p99 %s with one that takes 1 s (%d and %d runs)",
			a50, percentile(atOnce, 0.99), s50, percentile(slow, 0.99), len(atOnce), len(slow))
	})
}

func startupLatencies(b *testing.B, delay time.Duration) []time.Duration {
	lat := make([]time.Duration, 0, b.N)
	params := fakeeditor.InitParams{Root: "file:///work/project", Encodings: []string{"utf-16"}}.Params()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		e := newEditor(b, harnessOpts{quietLog: true, agentCfg: testagent.Config{Encoding: "utf-16", StartDelay: delay}})
		b.StartTimer()
		t0 := time.Now()
		e.MustCall("initialize", params, nil)
		lat = append(lat, time.Since(t0))
		b.StopTimer()
		// The editor leaves: the bridge ends, and with it the agent, started or not.
		e.toSrv.Close()
		code := <-e.exit
		e.exit <- code // for the harness's own check at cleanup
		b.StartTimer()
	}
	return lat
}
