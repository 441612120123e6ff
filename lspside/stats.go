package lspside

import "runtime/metrics"

// RequestStats is the bridge's own request for its runtime figures, for benchmarks and bug
// reports: {allocBytes, allocObjects, gcCycles, goroutines}, each since the process started
// (goroutines: now). It reads a few counters and never fails.
const RequestStats = "acp-lsp-bridge/stats"

// statsMetrics are the runtime/metrics samples RequestStats answers with, by answer key.
var statsMetrics = [...]struct{ key, name string }{
	{"allocBytes", "/gc/heap/allocs:bytes"},
	{"allocObjects", "/gc/heap/allocs:objects"},
	{"gcCycles", "/gc/cycles/total:gc-cycles"},
	{"goroutines", "/sched/goroutines:goroutines"},
}

func (s *Server) stats() map[string]uint64 {
	samples := make([]metrics.Sample, len(statsMetrics))
	for i, m := range statsMetrics {
		samples[i].Name = m.name
	}
	metrics.Read(samples)
	out := make(map[string]uint64, len(samples))
	for i, smp := range samples {
		if smp.Value.Kind() == metrics.KindUint64 {
			out[statsMetrics[i].key] = smp.Value.Uint64()
		}
	}
	return out
}
