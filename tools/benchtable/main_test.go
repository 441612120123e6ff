package main

import (
	"strings"
	"testing"
)

const sample = `goos: linux
BenchmarkEndToEndRoundTrip-2        	       1	7298034273 ns/op	       377.1 added-p50-µs	      1610 added-p99-µs	         4.377 added/floor	     14457 alloc-B/req	       201.0 allocs/req	       474.2 cpu-µs/req	         2.279 median-ratio
BenchmarkRoundTrip/direct-2         	     500	     83850 ns/op
BenchmarkRoundTrip-2                	     500	    192815 ns/op	         1.80 median-ratio	       150.0 added-p99-µs
--- BENCH: BenchmarkRoundTrip/bridge-2
BenchmarkApplyOneCharChange/10MB-2  	  242421	      4432 ns/op	  1.35 10MB/100KB	    6024 B/op	      19 allocs/op
BenchmarkKeystroke/10MB-2           	    3000	     45464 ns/op	  3.50 10MB/100KB
BenchmarkTypeThrough-2              	      20	  51000000 ns/op	        80.00 fewer-agent-calls-%
BenchmarkMemory200Docs              	       1	9000000000 ns/op	  0.90 rss/budget
BenchmarkPromptCache-2   	       1	20023712619 ns/op	         0.3318 chat-new-share	         0.1682 fim-new-share	         0.2479 instinct-new-share	         0.3464 sweep-new-share	         0.3550 sweep7b-new-share	         0.7958 zeta1-new-share	         0.4451 zeta2-new-share	         0.4625 zeta21-new-share
PASS
`

func TestTable(t *testing.T) {
	results, err := parse(strings.NewReader(sample), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	status := write(&out, results)
	got := strings.Join(strings.Fields(out.String()), " ") // the columns' padding aside
	for _, want := range []string{
		"1. Round trip in one process: median, bridge / direct 1.80 ≤ 2.00 kept",
		"1. End to end: median, bridge / direct 2.28 ≤ 1.90 REGRESSED",
		"1. End to end: bytes the bridge allocates per request 14457 ≤ 8192 REGRESSED",
		"1. End to end: added at p99 (µs) 1610 - reported",
		"added at p99 (µs) 150 ≤ 1000 kept",
		"fewer agent calls (%) 80.0 ≥ 80.0 kept",
		"2. Keystroke to an incremental agent: 10 MB / 100 KB 3.50 ≤ 3.00 OVER",
		"(BenchmarkStartup/agent-1s did not report initialize-ms) ≤ 50.0 missing",
		"11. Prompt cache, chat: share of a prompt evaluated anew 0.33 ≤ 0.35 kept",
		"11. Prompt cache, zeta1: share evaluated anew 0.80 - reported",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
	if status != 1 {
		t.Errorf("status %d with a budget missing, want 1", status)
	}
}

// TestGuardFailsTheTable: with every figure present, a target over its limit is reported and the
// table passes; a guard past its limit fails it.
func TestGuardFailsTheTable(t *testing.T) {
	all := func() map[string]map[string]float64 {
		r := map[string]map[string]float64{}
		put := func(bench, unit string, v float64) {
			if r[bench] == nil {
				r[bench] = map[string]float64{}
			}
			r[bench][unit] = v
		}
		for _, b := range budgets {
			put(b.benchmark, b.unit, b.limit)
		}
		for _, f := range reported {
			put(f.benchmark, f.unit, 1)
		}
		return r
	}
	var out strings.Builder
	if status := write(&out, all()); status != 0 {
		t.Fatalf("status %d with every budget at its limit:\n%s", status, out.String())
	}
	target := all()
	target["BenchmarkNeovimTyping"]["stream-ghost-ms"] = 338
	out.Reset()
	if status := write(&out, target); status != 0 || !strings.Contains(out.String(), "OVER") {
		t.Errorf("status %d with a target over its limit, want 0 and OVER:\n%s", status, out.String())
	}
	guard := all()
	guard["BenchmarkEndToEndRoundTrip"]["cpu-µs/req"] = 420
	out.Reset()
	if status := write(&out, guard); status != 1 || !strings.Contains(out.String(), "REGRESSED") {
		t.Errorf("status %d with a guard past its limit, want 1 and REGRESSED:\n%s", status, out.String())
	}
}
