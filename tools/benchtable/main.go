// Command benchtable reads the output of `go test -bench` on its standard input and prints the
// performance budgets of the bridge as a table: each budget's figure from this run, its limit and
// whether the run kept it. `make bench` pipes the benchmarks into it.
//
// Every figure is a ratio against a baseline measured in the same run, or a quantity the budget
// names (microseconds added, megabytes resident), never a time compared with a fixed number from
// another machine. Two kinds of limit: a target (the budget an issue set, which the bridge may not
// meet yet) is reported OVER when over it; a guard (what the bridge measured once a budget's work
// was done, with a margin) marks the row REGRESSED and makes the exit status 1, so that a
// regression fails the table. It also exits with status 1 when a budget's benchmark did not run.
// A few figures are shown after the budgets without a limit of their own ("reported").
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"text/tabwriter"
)

// budget is one row: metric unit of benchmark name, compared with limit.
type budget struct {
	what      string
	benchmark string
	unit      string
	limit     float64
	atLeast   bool // the figure must be at least limit (otherwise at most)
	guard     bool // a figure past limit is a regression: the exit status is 1
}

var budgets = []budget{
	// Guards: the figures the work on the bridge's own cost brought it to (median ratio 1.76-1.82,
	// 229-391 µs of CPU, 5.6 KB), with a margin; at p99, what the bridge adds beyond what the
	// framed relay adds in the same run (its own p99 swings with the machine's load).
	{"1. End to end: median, bridge / direct", "BenchmarkEndToEndRoundTrip", "median-ratio", 1.9, false, true},
	{"1. End to end: added at the median / the framed relay's", "BenchmarkEndToEndRoundTrip", "added/floor", 2, false, false},
	{"1. End to end: added at p99 beyond the relay's (µs)", "BenchmarkEndToEndRoundTrip", "over-relay-p99-µs", 500, false, true},
	{"1. End to end: the bridge's CPU per request (µs)", "BenchmarkEndToEndRoundTrip", "cpu-µs/req", 300, false, true},
	{"1. End to end: bytes the bridge allocates per request", "BenchmarkEndToEndRoundTrip", "alloc-B/req", 8192, false, true},
	{"1. Round trip in one process: median, bridge / direct", "BenchmarkRoundTrip", "median-ratio", 2.0, false, false},
	{"1. Round trip in one process: added at p99 (µs)", "BenchmarkRoundTrip", "added-p99-µs", 1000, false, false},
	{"2. Keystroke, mirror: 10 MB / 100 KB", "BenchmarkApplyOneCharChange/10MB", "10MB/100KB", 3, false, false},
	{"2. Keystroke to an incremental agent: 10 MB / 100 KB", "BenchmarkKeystroke/10MB", "10MB/100KB", 3, false, false},
	{"3. Type-through: fewer agent calls (%)", "BenchmarkTypeThrough", "fewer-agent-calls-%", 80, true, false},
	{"4. Memory, 200 × 100 KB open: RSS / budget", "BenchmarkMemory200Docs", "rss/budget", 1, false, false},
	{"5. Start-up: initialize with a 1 s agent (ms)", "BenchmarkStartup/agent-1s", "initialize-ms", 50, false, false},
	{"6. A 4 MiB answer, the wire tap / one reading", "BenchmarkTapLargeAnswer", "median-ratio", 2.5, false, false},
	{"6. A 4 MiB answer, bytes the tap allocates", "BenchmarkTapLargeAnswer", "tap-B/answer", 64 << 10, false, false},
	{"7. Model prompt, 10,000 lines: slowest format (µs)", "BenchmarkPromptBuild", "slowest-format-µs", 1000, false, false},
	{"8. Model agent: added at the median (µs)", "BenchmarkModelAgentOverhead", "added-p50-µs", 1000, false, false},
	{"9. Typing against a 300 ms model: most in flight", "BenchmarkTypingAgainstASlowModel", "max-in-flight", 1, false, false},
	{"9. Typing against a 300 ms model: last key to suggestion, over the model (ms)", "BenchmarkTypingAgainstASlowModel", "over-model-ms", 20, false, false},
	// A server streaming at 10 ms a token after 50 ms, a 21-line region changed on line 2: the
	// limit is the time to stream through the hunk and its two confirming lines.
	{"10. Early answer: request to suggestion / the limit", "BenchmarkEarlyAnswer", "early/limit", 1.25, false, false},
	{"10. Next at the accept: accept to the next suggestion (ms)", "BenchmarkEarlyAnswer", "accept-to-next-ms", 30, false, false},
	// A stream of 1 MiB of blank lines, a line a piece (a model looping on line breaks, or a
	// hostile server): the early reader's CPU, and over 256 answers of 4 KB in the same run.
	{"10. Early reader: 1 MiB of blank lines (ms of CPU)", "BenchmarkEarlyReader/blank/1MiB-vs-4KB", "1MiB-blank-ms", 50, false, false},
	{"10. Early reader: 1 MiB at once / 256 answers of 4 KB", "BenchmarkEarlyReader/blank/1MiB-vs-4KB", "1MiB/4KB", 1.5, false, false},
	// A format that does not stream (chat): the next suggestion prefetched as if the first
	// were accepted, answered while the user read the first.
	{"10. Next at the accept, prefetched: accept to the next suggestion (ms)", "BenchmarkNextAtTheAcceptPrefetched", "prefetched-accept-to-next-ms", 30, false, false},
	// The real llama-server, 40 edits in one file with two other files open: the median share of
	// a prompt's tokens the server evaluates anew (the rest it takes from its cache). The next-edit
	// models' prompts are laid out as they were trained: reported, and explained in
	// docs/model-agent.md ("The server's prompt cache").
	{"11. Prompt cache, fim: share of a prompt evaluated anew", "BenchmarkPromptCache", "fim-new-share", 0.35, false, false},
	{"11. Prompt cache, chat: share of a prompt evaluated anew", "BenchmarkPromptCache", "chat-new-share", 0.35, false, false},
	// Real Neovim, the plugin at its defaults, a 300 ms Zeta 2 server, a 12-letter word typed at 8
	// keys a second (medians of words); today's figures (--ask-ahead 0) are reported below.
	{"12. Neovim, streamed answer: last key to ghost text (ms)", "BenchmarkNeovimTyping", "stream-ghost-ms", 260, false, false},
	{"12. Neovim, whole answer: last key to ghost text (ms)", "BenchmarkNeovimTyping", "whole-ghost-ms", 370, false, false},
	{"12. Neovim: model time thrown away per word (ms)", "BenchmarkNeovimTyping", "thrown-ms/word", 350, false, false},
}

// figure is a row shown after the budgets, without a limit of its own: metric unit of benchmark
// name.
type figure struct{ what, benchmark, unit string }

// reported are the figures shown beside the budgets: the prompt cache of the next-edit models'
// formats, laid out as their models were trained, which the bridge cannot order for the cache.
var reported = []figure{
	{"11. Prompt cache, zeta1: share evaluated anew", "BenchmarkPromptCache", "zeta1-new-share"},
	{"11. Prompt cache, zeta2: share evaluated anew", "BenchmarkPromptCache", "zeta2-new-share"},
	{"11. Prompt cache, zeta2.1: share evaluated anew", "BenchmarkPromptCache", "zeta21-new-share"},
	{"11. Prompt cache, sweep (1.5B): share evaluated anew", "BenchmarkPromptCache", "sweep-new-share"},
	{"11. Prompt cache, sweep (v2 7B): share evaluated anew", "BenchmarkPromptCache", "sweep7b-new-share"},
	{"11. Prompt cache, instinct: share evaluated anew", "BenchmarkPromptCache", "instinct-new-share"},
	// The baseline of the Neovim budgets (12.), measured in the same run.
	{"12. Neovim today (--ask-ahead 0), streamed: last key to ghost text (ms)", "BenchmarkNeovimTyping", "today-stream-ghost-ms"},
	{"12. Neovim today (--ask-ahead 0), whole: last key to ghost text (ms)", "BenchmarkNeovimTyping", "today-whole-ghost-ms"},
	{"12. Neovim today (--ask-ahead 0): model time thrown away per word (ms)", "BenchmarkNeovimTyping", "today-thrown-ms/word"},
	// What the bridge adds at p99 by itself: the guard above takes away the relay's.
	{"1. End to end: added at p99 (µs)", "BenchmarkEndToEndRoundTrip", "added-p99-µs"},
}

// benchLine matches a result line: name, -GOMAXPROCS suffix, iterations, then value/unit pairs.
var benchLine = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+(.*)$`)

// parse returns, per benchmark name, the value of each unit it reported (the last run wins).
func parse(r io.Reader, echo io.Writer) (map[string]map[string]float64, error) {
	out := map[string]map[string]float64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if echo != nil {
			fmt.Fprintln(echo, line)
		}
		m := benchLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		fields := strings.Fields(m[2])
		units := map[string]float64{}
		for i := 0; i+1 < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				break
			}
			units[fields[i+1]] = v
		}
		out[m[1]] = units
	}
	return out, sc.Err()
}

func main() {
	quiet := len(os.Args) > 1 && os.Args[1] == "-q"
	var echo io.Writer = os.Stdout
	if quiet {
		echo = nil
	}
	results, err := parse(os.Stdin, echo)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
	os.Exit(write(os.Stdout, results))
}

// write prints the table and returns the exit status: 1 when a budget has no figure, or a guard
// is past its limit.
func write(w io.Writer, results map[string]map[string]float64) int {
	status := 0
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "Budget\tThis run\tLimit\tResult")
	for _, b := range budgets {
		v, ok := results[b.benchmark][b.unit]
		limit := "≤ " + format(b.limit)
		if b.atLeast {
			limit = "≥ " + format(b.limit)
		}
		switch {
		case !ok:
			status = 1
			fmt.Fprintf(tw, "%s\t(%s did not report %s)\t%s\tmissing\n", b.what, b.benchmark, b.unit, limit)
		case b.atLeast && v >= b.limit, !b.atLeast && v <= b.limit:
			fmt.Fprintf(tw, "%s\t%s\t%s\tkept\n", b.what, format(v), limit)
		case b.guard:
			status = 1
			fmt.Fprintf(tw, "%s\t%s\t%s\tREGRESSED\n", b.what, format(v), limit)
		default:
			fmt.Fprintf(tw, "%s\t%s\t%s\tOVER\n", b.what, format(v), limit)
		}
	}
	for _, f := range reported {
		if v, ok := results[f.benchmark][f.unit]; ok {
			fmt.Fprintf(tw, "%s\t%s\t-\treported\n", f.what, format(v))
		} else {
			status = 1
			fmt.Fprintf(tw, "%s\t(%s did not report %s)\t-\tmissing\n", f.what, f.benchmark, f.unit)
		}
	}
	tw.Flush()
	return status
}

func format(v float64) string {
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}
