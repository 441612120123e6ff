package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkEndToEndRoundTrip measures what the bridge costs a request as users run it: the real
// binary, started as an editor starts it, with a real agent process on pipes (the NES agent on the
// official ACP SDK doing no work of its own, testdata/peers/bench-agent.mjs) and a 2,000-line document. Three clients take
// turns, one request each in a rotating order, so that all three see the same moments of a shared
// machine:
//
//   - bridge: an inline completion (invoked, so that it always reaches the agent) through the
//     bridge, with its own agent process;
//   - direct: the same nes/suggest sent by a client that speaks ACP to another process of the same
//     agent, with no bridge code in between (the baseline);
//   - relay: the same nes/suggest through internal/test/testrelay, a process that only converts the
//     framing (the floor of one extra hop).
//
// It reports the medians, the median ratio bridge/direct, the time the bridge and the relay add at
// the median and their ratio, what the bridge and the relay add at the 99th percentile and how far
// the bridge's 99th percentile lies above the relay's, the bridge's and the relay's CPU and context
// switches per request (the kernel's accounting of each process's threads, /proc/PID/task/*) and
// the bytes and objects the bridge allocates per request (acp-lsp-bridge/stats before and after).
// With ACP_LSP_BRIDGE_BENCH_PROFILE=FILE the bridge writes a CPU profile of the run there
// (--cpu-profile); with ACP_LSP_BRIDGE_BENCH_TRACE=FILE, a Go execution trace (--exec-trace), and
// the benchmark then prints the median of each step of a request through the bridge (traceSteps).
// The trace slows the bridge down: the figures above are not comparable with a run without it.
func BenchmarkEndToEndRoundTrip(b *testing.B) {
	skipOnWindows(b, "reads the processes' CPU time in /proc")
	node, modules := sdkPeer(b)
	bridgeBin, _ := binaries(b)
	relayBin := filepath.Join(b.TempDir(), "testrelay")
	build := exec.Command("go", "build", "-o", relayBin, "./internal/test/testrelay")
	build.Dir = moduleRoot(b)
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build ./internal/test/testrelay: %v\n%s", err, out)
	}
	script := filepath.Join(moduleRoot(b), "testdata", "peers", "bench-agent.mjs")
	env := append(os.Environ(), "PEERS_NODE_MODULES="+modules)
	root := b.TempDir()
	doc := fileURI(filepath.Join(root, "main.go"))
	var text strings.Builder
	text.WriteString("package main\n\n")
	for i := 2; i < 2000; i++ {
		if i == 1000 {
			text.WriteString("\t// TODO: return the total\n")
			continue
		}
		fmt.Fprintf(&text, "\tv%d := compute(%d, \"é\") // line %d\n", i, i, i)
	}

	direct := startRPC(b, false, env, node, script)
	relay := startRPC(b, true, env, relayBin, node, script)
	for _, c := range []*rpcPeer{direct, relay} {
		c.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{"positionEncodings": []string{"utf-16"}}})
		start := c.call("nes/start", map[string]any{"workspaceUri": fileURI(root)})
		var s struct {
			SessionID string `json:"sessionId"`
		}
		_ = json.Unmarshal(start, &s)
		c.session = s.SessionID
		c.notify("document/didOpen", map[string]any{"sessionId": c.session, "uri": doc, "languageId": "go", "version": 1, "text": text.String()})
	}
	args := []string{"--", node, script}
	if prof := os.Getenv("ACP_LSP_BRIDGE_BENCH_PROFILE"); prof != "" {
		args = append([]string{"--cpu-profile", prof}, args...)
	}
	if tr := os.Getenv("ACP_LSP_BRIDGE_BENCH_TRACE"); tr != "" {
		args = append([]string{"--exec-trace", tr}, args...)
	}
	bridge := startRPC(b, true, env, bridgeBin, args...)
	bridge.call("initialize", map[string]any{"processId": os.Getpid(), "rootUri": fileURI(root), "capabilities": map[string]any{
		"general":      map[string]any{"positionEncodings": []string{"utf-16"}},
		"textDocument": map[string]any{"inlineCompletion": map[string]any{}},
	}})
	bridge.notify("initialized", map[string]any{})
	bridge.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": doc, "languageId": "go", "version": 1, "text": text.String()}})

	suggest := func(c *rpcPeer) func() json.RawMessage {
		params := map[string]any{"sessionId": c.session, "uri": doc, "version": 1, "position": map[string]any{"line": 1000, "character": 8}, "triggerKind": "manual"}
		return func() json.RawMessage { return c.call("nes/suggest", params) }
	}
	inline := func() json.RawMessage {
		return bridge.call("textDocument/inlineCompletion", map[string]any{
			"textDocument": map[string]any{"uri": doc}, "position": map[string]any{"line": 1000, "character": 8},
			"context": map[string]any{"triggerKind": 1},
		})
	}
	// The bridge answers empty until its agent is ready.
	for deadline := time.Now().Add(30 * time.Second); !bytes.Contains(inline(), []byte("DONE")); {
		if time.Now().After(deadline) {
			b.Fatal("the bridge's agent never suggested")
		}
		time.Sleep(20 * time.Millisecond)
	}
	paths := []struct {
		name string
		ask  func() json.RawMessage
	}{{"bridge", inline}, {"direct", suggest(direct)}, {"relay", suggest(relay)}}
	times := make([][]time.Duration, len(paths))
	round := func(i int, record bool) {
		for k := range paths {
			p := (i + k) % len(paths) // a rotating order
			t0 := time.Now()
			res := paths[p].ask()
			d := time.Since(t0)
			if !bytes.Contains(res, []byte("DONE")) {
				b.Fatalf("%s answered without the suggestion: %s", paths[p].name, res)
			}
			if record {
				times[p] = append(times[p], d)
			}
		}
	}
	for i := range 500 { // warm: the agents' JIT, the processes' caches
		round(i, false)
	}
	rounds := 4000 * b.N
	stats0 := bridge.call("acp-lsp-bridge/stats", nil)
	cpu0, relayCPU0 := processCPU(b, bridge.cmd.Process.Pid), processCPU(b, relay.cmd.Process.Pid)
	sw0, relaySw0 := contextSwitches(b, bridge.cmd.Process.Pid), contextSwitches(b, relay.cmd.Process.Pid)
	b.ResetTimer()
	for i := range rounds {
		round(i, true)
	}
	b.StopTimer()
	cpu, relayCPU := processCPU(b, bridge.cmd.Process.Pid)-cpu0, processCPU(b, relay.cmd.Process.Pid)-relayCPU0
	sw, relaySw := contextSwitches(b, bridge.cmd.Process.Pid)-sw0, contextSwitches(b, relay.cmd.Process.Pid)-relaySw0
	stats := bridge.call("acp-lsp-bridge/stats", nil)

	pct := func(ds []time.Duration, p float64) float64 {
		s := slices.Clone(ds)
		slices.Sort(s)
		return float64(s[int(p*float64(len(s)-1))].Nanoseconds()) / 1e3
	}
	br, di, re := times[0], times[1], times[2]
	added, floor := pct(br, 0.5)-pct(di, 0.5), pct(re, 0.5)-pct(di, 0.5)
	b.ReportMetric(pct(br, 0.5), "bridge-p50-µs")
	b.ReportMetric(pct(di, 0.5), "direct-p50-µs")
	b.ReportMetric(pct(re, 0.5), "relay-p50-µs")
	b.ReportMetric(pct(br, 0.5)/pct(di, 0.5), "median-ratio")
	b.ReportMetric(added, "added-p50-µs")
	b.ReportMetric(floor, "floor-p50-µs")
	b.ReportMetric(added/max(floor, 1), "added/floor")
	b.ReportMetric(pct(br, 0.99)-pct(di, 0.99), "added-p99-µs")
	b.ReportMetric(pct(re, 0.99)-pct(di, 0.99), "floor-p99-µs")
	b.ReportMetric(pct(br, 0.99)-pct(re, 0.99), "over-relay-p99-µs")
	b.ReportMetric(float64(cpu.Microseconds())/float64(rounds), "cpu-µs/req")
	b.ReportMetric(float64(relayCPU.Microseconds())/float64(rounds), "relay-cpu-µs/req")
	b.ReportMetric(float64(sw)/float64(rounds), "switches/req")
	b.ReportMetric(float64(relaySw)/float64(rounds), "relay-switches/req")
	var s0, s1 struct {
		AllocBytes   float64 `json:"allocBytes"`
		AllocObjects float64 `json:"allocObjects"`
	}
	_ = json.Unmarshal(stats0, &s0)
	_ = json.Unmarshal(stats, &s1)
	b.ReportMetric((s1.AllocBytes-s0.AllocBytes)/float64(rounds), "alloc-B/req")
	b.ReportMetric((s1.AllocObjects-s0.AllocObjects)/float64(rounds), "allocs/req")
	b.ReportMetric(float64(rounds), "samples")
	if tr := os.Getenv("ACP_LSP_BRIDGE_BENCH_TRACE"); tr != "" {
		// The trace is whole once the bridge has exited.
		bridge.call("shutdown", nil)
		bridge.notify("exit", nil)
		if err := bridge.cmd.Wait(); err != nil {
			b.Fatalf("the bridge after exit: %v", err)
		}
		steps := traceSteps(b, tr)
		if len(steps[stepResultOut]) < rounds {
			b.Errorf("the trace shows %d of the %d requests on their way through the bridge: the functions that tell its steps apart (e2e/tracesteps_test.go) may have changed", len(steps[stepResultOut]), rounds)
		}
		b.Logf("the bridge's steps of a request, from its execution trace (%s): %s", tr, stepTable(steps))
	}
}

// processCPU is the CPU time the process pid has used: the sum of its threads' time on a CPU, in
// nanoseconds, as the scheduler counts it (/proc/PID/task/*/schedstat); /proc/PID/stat's utime and
// stime are sampled at the clock tick, too coarse for a process that runs for microseconds at a
// time.
func processCPU(tb testing.TB, pid int) time.Duration {
	return time.Duration(sumThreads(tb, pid, "schedstat", func(b []byte) int64 {
		v, _ := strconv.ParseInt(strings.Fields(string(b))[0], 10, 64)
		return v
	}))
}

// contextSwitches is how many times the threads of the process pid have left a CPU, willingly
// (to wait) or not: each is a sleep and a wake-up of a thread, the cost a relay between processes
// pays most of its CPU for (/proc/PID/task/*/status).
func contextSwitches(tb testing.TB, pid int) int64 {
	return sumThreads(tb, pid, "status", func(b []byte) int64 {
		var n int64
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.HasSuffix(k, "ctxt_switches") {
				c, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				n += c
			}
		}
		return n
	})
}

// sumThreads sums value over the file /proc/PID/task/*/<file> of each thread of the process pid.
func sumThreads(tb testing.TB, pid int, file string, value func([]byte) int64) int64 {
	tb.Helper()
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/%s", pid, file))
	if err != nil || len(tasks) == 0 {
		tb.Fatalf("no threads of %d in /proc: %v", pid, err)
	}
	var n int64
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue // a thread that ended meanwhile
		}
		n += value(b)
	}
	return n
}

// rpcPeer is a minimal JSON-RPC client of a process on its stdin and stdout, framed with
// Content-Length headers (LSP) or one message per line (ACP), one request at a time. It answers
// the requests the process sends it with null and skips notifications.
type rpcPeer struct {
	tb      testing.TB
	cmd     *exec.Cmd
	framed  bool
	w       *bufio.Writer
	r       *bufio.Reader
	next    int
	session string
}

func startRPC(tb testing.TB, framed bool, env []string, name string, args ...string) *rpcPeer {
	tb.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = env
	cmd.Stderr = io.Discard
	in, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		_ = in.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
		}
	})
	return &rpcPeer{tb: tb, cmd: cmd, framed: framed, w: bufio.NewWriterSize(in, 64<<10), r: bufio.NewReaderSize(out, 64<<10)}
}

func (c *rpcPeer) write(msg map[string]any) {
	body, err := json.Marshal(msg)
	if err != nil {
		c.tb.Fatal(err)
	}
	if c.framed {
		fmt.Fprintf(c.w, "Content-Length: %d\r\n\r\n", len(body))
		_, _ = c.w.Write(body)
	} else {
		_, _ = c.w.Write(append(body, '\n'))
	}
	if err := c.w.Flush(); err != nil {
		c.tb.Fatalf("write to %s: %v", c.cmd.Path, err)
	}
}

func (c *rpcPeer) read() []byte {
	if !c.framed {
		line, err := c.r.ReadBytes('\n')
		if err != nil {
			c.tb.Fatalf("read from %s: %v", c.cmd.Path, err)
		}
		return line
	}
	n := -1
	for {
		h, err := c.r.ReadSlice('\n')
		if err != nil {
			c.tb.Fatalf("read from %s: %v", c.cmd.Path, err)
		}
		h = bytes.TrimRight(h, "\r\n")
		if len(h) == 0 {
			break
		}
		if v, ok := bytes.CutPrefix(h, []byte("Content-Length: ")); ok {
			n, _ = strconv.Atoi(string(v))
		}
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(c.r, body); err != nil {
		c.tb.Fatalf("read from %s: %v", c.cmd.Path, err)
	}
	return body
}

func (c *rpcPeer) notify(method string, params any) {
	c.write(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

// call sends a request and returns its result; an error answer fails the benchmark.
func (c *rpcPeer) call(method string, params any) json.RawMessage {
	c.next++
	id := c.next
	msg := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	c.write(msg)
	for {
		var m struct {
			ID     *json.RawMessage `json:"id"`
			Method string           `json:"method"`
			Result json.RawMessage  `json:"result"`
			Error  json.RawMessage  `json:"error"`
		}
		if err := json.Unmarshal(c.read(), &m); err != nil {
			c.tb.Fatalf("%s: %v", c.cmd.Path, err)
		}
		switch {
		case m.Method != "" && m.ID != nil: // a request to the client
			c.write(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": nil})
		case m.Method != "": // a notification
		case m.ID != nil && string(*m.ID) == strconv.Itoa(id):
			if len(m.Error) > 0 && string(m.Error) != "null" {
				c.tb.Fatalf("%s %s: %s", c.cmd.Path, method, m.Error)
			}
			return m.Result
		}
	}
}
