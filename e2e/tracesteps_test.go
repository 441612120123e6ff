package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// The steps of an inline completion that reaches the agent, as an execution trace of the bridge
// (--exec-trace) shows them, each from the end of the one before: the goroutine states the Go
// runtime records, told apart by the bridge's and go.lsp.dev/jsonrpc2's functions on their stacks.
const (
	stepRelease   = "editor's message read → the next reader started (jsonrpc2.Async)"
	stepQueue     = "→ nes/suggest queued"
	stepWriter    = "→ the queue's writer writing"
	stepWrite     = "→ written to the agent (the write)"
	stepAgent     = "→ the agent's answer read (the agent's time)"
	stepHandOver  = "→ handed to the request, and it running again"
	stepResult    = "→ the result being written"
	stepResultOut = "→ written to the editor (the write)"
)

// requestSteps are the steps above, in order.
var requestSteps = []string{stepRelease, stepQueue, stepWriter, stepWrite, stepAgent, stepHandOver, stepResult, stepResultOut}

// traceSteps reads the execution trace at path through go tool trace -d=parsed (Go's own reading of
// it, event by event with their stacks, read as it comes: about 100 MB for the benchmark) and returns
// the durations of each step of every request the bridge answered after its agent's answer, in
// order. A request the trace does not show whole is left out.
func traceSteps(tb testing.TB, path string) map[string][]time.Duration {
	tb.Helper()
	cmd := exec.Command("go", "tool", "trace", "-d=parsed", path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	steps := readTraceSteps(out)
	_, _ = io.Copy(io.Discard, out)
	if err := cmd.Wait(); err != nil {
		tb.Fatalf("go tool trace -d=parsed %s: %v\n%s", path, err, preview(stderr.Bytes()))
	}
	return steps
}

// traceEvent is one goroutine state change of go tool trace -d=parsed: "M=… P=… G=… StateTransition
// Time=… GoID=… From->To …", then its stack frames, a tab before each.
type traceEvent struct {
	g, goID  string // the goroutine running, the one changing state
	from, to string
	at       int64 // nanoseconds
	stack    []string
}

// in says whether fn (a part of a function's name) is on the event's stack.
func (e *traceEvent) in(fn string) bool {
	return slices.ContainsFunc(e.stack, func(f string) bool { return strings.Contains(f, fn) })
}

// readTraceSteps is traceSteps on go tool trace -d=parsed's output.
func readTraceSteps(r io.Reader) map[string][]time.Duration {
	steps := map[string][]time.Duration{}
	// marks are the moments that end the steps, after the first, "read". (A request is also
	// marked "handed" when the answer wakes it.)
	marks := []string{"read", "released", "queued", "writing", "written", "answer", "resumed", "result", "out"}
	// A mark seen before the one it follows (a goroutine on the other CPU got there first, or a
	// wake-up was not needed) also stands for the one missed: that step reads 0.
	type request map[string]int64 // when each of its marks came
	var (
		readers      = map[string]bool{}    // goroutines that have read the editor's messages
		writer, pump string                 // the agent queue's writer, the wire tap's pump
		reqs         = map[string]request{} // the requests under way, by the goroutine handling each
		flight       request                // the last one released: its nes/suggest is the next to go
	)
	handle := func(e *traceEvent) {
		if e.goID == e.g && e.from == "Running" && e.to == "Syscall" {
			switch {
			case e.in("lspside.(*editorStream).readHeader"):
				readers[e.goID] = true
			case e.in("acpside.(*outQueue).run"):
				writer = e.goID
			case e.in("acpside.(*wireTap).pump"):
				pump = e.goID
			}
		}
		syscallEnd := e.from == "Syscall" && (e.to == "Running" || e.to == "Runnable")
		req := reqs[e.goID] // the request of the goroutine changing state, if any
		has := func(r request, mark string) bool { _, ok := r[mark]; return ok }
		switch {
		case e.to == "NotExist":
			delete(reqs, e.goID)
		case syscallEnd && readers[e.goID]:
			switch {
			case has(req, "result"): // the result is written
				req["out"] = e.at
				for i, s := range requestSteps {
					steps[s] = append(steps[s], time.Duration(req[marks[i+1]]-req[marks[i]]))
				}
				delete(reqs, e.goID)
			case !has(req, "released"):
				// The standard input blocks, so a read that returns has read a message: it
				// starts a request (which may end without the agent: a notification).
				reqs[e.goID] = request{"read": e.at}
			}
		case e.from == "NotExist" && e.in("jsonrpc2.(*releaser).release"):
			if r := reqs[e.g]; r != nil && !has(r, "released") {
				r["released"], flight = e.at, r
			}
		case e.goID == writer && e.from == "Waiting" && e.in("acpside.(*outQueue).enqueue"):
			if r := reqs[e.g]; has(r, "released") && !has(r, "queued") {
				r["queued"] = e.at
			}
		case e.goID == writer && e.from == "Running" && e.to == "Syscall":
			if has(flight, "released") && !has(flight, "writing") {
				if !has(flight, "queued") { // the writer was awake already: no wake-up to see
					flight["queued"] = e.at
				}
				flight["writing"] = e.at
			}
		case e.goID == writer && syscallEnd:
			if has(flight, "writing") && !has(flight, "written") {
				flight["written"] = e.at
			}
		case e.goID == pump && syscallEnd:
			if has(flight, "writing") && !has(flight, "answer") {
				if !has(flight, "written") { // the answer came before the write returned
					flight["written"] = e.at
				}
				flight["answer"] = e.at
			}
		case e.from == "Waiting" && e.in("acpside.(*wireTap).answer"):
			if has(req, "answer") && !has(req, "handed") {
				req["handed"] = e.at
			}
		case e.from == "Runnable" && e.to == "Running":
			if has(req, "handed") && !has(req, "resumed") {
				req["resumed"] = e.at
			}
		case e.from == "Running" && e.to == "Syscall" && e.in("jsonrpc2.(*headerStream)"):
			if has(req, "answer") && !has(req, "result") {
				if !has(req, "handed") { // the answer came before the request waited for it
					req["handed"], req["resumed"] = req["answer"], req["answer"]
				}
				req["result"] = e.at
			}
		}
	}
	var ev *traceEvent
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "M="):
			if ev != nil {
				handle(ev)
			}
			ev = parseTraceEvent(line)
		case ev != nil && strings.HasPrefix(line, "\t") && !strings.HasPrefix(line, "\t\t"):
			fn, _, _ := strings.Cut(strings.TrimSpace(line), " @")
			ev.stack = append(ev.stack, fn)
		}
	}
	if ev != nil {
		handle(ev)
	}
	return steps
}

// parseTraceEvent reads the first line of a goroutine's state change; nil for any other event.
func parseTraceEvent(line string) *traceEvent {
	f := strings.Fields(line)
	if len(f) < 7 || f[3] != "StateTransition" || !strings.HasPrefix(f[5], "GoID=") {
		return nil
	}
	from, to, ok := strings.Cut(f[6], "->")
	at, err := strconv.ParseInt(strings.TrimPrefix(f[4], "Time="), 10, 64)
	if !ok || err != nil {
		return nil
	}
	return &traceEvent{g: strings.TrimPrefix(f[2], "G="), goID: strings.TrimPrefix(f[5], "GoID="), from: from, to: to, at: at}
}

// stepTable is the median and the 90th percentile of each step, one line each, after a line that
// says how many requests they come from.
func stepTable(steps map[string][]time.Duration) string {
	width := 0
	for _, s := range requestSteps {
		width = max(width, utf8.RuneCountInString(s))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d requests, with the trace on (it slows each step down a little):", len(steps[stepRelease]))
	for _, s := range requestSteps {
		ds := slices.Clone(steps[s])
		if len(ds) == 0 {
			continue
		}
		slices.Sort(ds)
		pad := strings.Repeat(" ", width-utf8.RuneCountInString(s))
		fmt.Fprintf(&b, "\n  %s%s  median %6.1f µs, p90 %6.1f µs", s, pad, float64(ds[len(ds)/2].Nanoseconds())/1e3, float64(ds[len(ds)*9/10].Nanoseconds())/1e3)
	}
	return b.String()
}
