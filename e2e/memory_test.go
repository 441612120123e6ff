package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testutil"
)

// The memory budget of the bridge: with memDocs open documents of memDocSize bytes each, its
// resident memory stays within twice their total size plus memSlack.
const (
	memDocs     = 200
	memDocSize  = 100 << 10
	memSlack    = 30 << 20
	memTotal    = memDocs * memDocSize
	memBudget   = 2*memTotal + memSlack
	memRounds   = 150 // rounds of the session after the documents are open
	memInserted = "/* ¿日本? */"
)

// memoryReport is what a memory session measured of the bridge process, in bytes.
type memoryReport struct {
	afterOpens int64 // VmRSS right after the last didOpen was answered by a request
	maxSession int64 // the largest VmRSS sampled from then to the end of the session
	settled    int64 // VmRSS once the session has been idle for a moment
	peak       int64 // VmHWM: the largest VmRSS of the process's whole life, opens included
	anon       int64 // RssAnon when settled: the heap and stacks, without the mapped binary
	samples    int
	inline     int // inline completion requests answered with the agent's suggestion
	actions    int // code action requests answered with at least one action
}

// procStatus reads fields of /proc/PID/status, in bytes.
func procStatus(pid int, fields ...string) (map[string]int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		for _, f := range fields {
			if name != f {
				continue
			}
			v := strings.Fields(rest) // "12345 kB"
			if len(v) != 2 || v[1] != "kB" {
				return nil, fmt.Errorf("/proc/%d/status: %s: %q", pid, name, rest)
			}
			n, err := strconv.ParseInt(v[0], 10, 64)
			if err != nil {
				return nil, err
			}
			out[name] = n << 10
		}
	}
	for _, f := range fields {
		if _, ok := out[f]; !ok {
			return nil, fmt.Errorf("/proc/%d/status has no %s", pid, f)
		}
	}
	return out, nil
}

func rssOf(t testing.TB, pid int) int64 {
	t.Helper()
	st, err := procStatus(pid, "VmRSS")
	if err != nil {
		t.Fatal(err)
	}
	return st["VmRSS"]
}

// rssSampler samples a process's VmRSS every few milliseconds and keeps the largest.
type rssSampler struct {
	stop chan struct{}
	done chan struct{}
	mu   sync.Mutex
	max  int64
	n    int
}

func sampleRSS(pid int) *rssSampler {
	r := &rssSampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(r.done)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			if st, err := procStatus(pid, "VmRSS"); err == nil {
				r.mu.Lock()
				r.max = max(r.max, st["VmRSS"])
				r.n++
				r.mu.Unlock()
			}
			select {
			case <-r.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return r
}

func (r *rssSampler) end() (largest int64, samples int) {
	close(r.stop)
	<-r.done
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.max, r.n
}

// memoryDocument is document i of a memory session: memDocSize bytes of Go-like source that
// starts with a comment of non-ASCII text of its own (Cyrillic, a character outside the BMP, CJK),
// so that no document is like another and utf-16 positions differ from byte offsets.
func memoryDocument(i int) string {
	head := fmt.Sprintf("// Файл %d 𐐀 — 日本語のコメント, naïve café.\n", i)
	body := testutil.SourceLike(memDocSize)
	text := head + body
	cut := strings.LastIndexByte(text[:memDocSize-1], '\n') + 1
	return text[:cut] + strings.Repeat("/", memDocSize-cut-1) + "\n"
}

// memoryLines returns the lines of text, which holds only "\n" line endings, that a rule of the
// memory session's agent matches: those that call compute(ctx, ...).
func memoryLines(text string) []int {
	var out []int
	for i, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "\tvalue") && strings.Contains(line, "compute(ctx") {
			out = append(out, i)
		}
	}
	return out
}

// runMemorySession drives the real bridge binary, with the scripted test agent as its agent, the
// way an editor with many large files open does: it opens memDocs documents of memDocSize bytes,
// then, in memRounds rounds over them, focuses a document, types a few characters in it one
// didChange at a time, asks for inline completions there, and every other round types once more,
// reports diagnostics and asks for code actions. It measures the bridge's resident memory.
//
// The bridge binary is built by binaries with a plain go build, never with -race (even when the
// tests run with -race, which would multiply the bridge's memory): what is measured is the
// bridge as users run it.
func runMemorySession(t testing.TB) memoryReport {
	_, agent := binaries(t)
	dir := t.TempDir()
	rules := filepath.Join(dir, "rules.json")
	if err := os.WriteFile(rules, []byte(`[{"when":"compute(ctx","find":"","replace":"`+memInserted+`"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	b := startBridge(t)
	pid := b.cmd.Process.Pid
	root := fileURI(dir)
	// The context a model agent asks for: every key, so that the related-snippet search reads
	// every open document and recentFiles carries whole documents.
	context := `{"diagnostics":{},"openFiles":{},"recentFiles":{},"editHistory":{},"userActions":{},"relatedSnippets":{}}`
	// utf-16 only, as several editors offer: every position is converted.
	b.InitializeWith(fakeeditor.InitParams{Root: root, ProcessID: os.Getpid(), Encodings: []string{"utf-16"},
		Options: agentOption(agent, "--encoding", "utf-16", "--sync", "incremental", "--focus", "--context", context, "--rules", rules)})
	b.waitMessage("acp-test-agent is ready")

	type doc struct {
		uri     string
		version int
		lines   []int // lines the rule matches
		line    int   // the line being typed on
		col     int   // the cursor's utf-16 column on it
	}
	docs := make([]*doc, memDocs)
	for i := range docs {
		text := memoryDocument(i)
		if len(text) != memDocSize {
			t.Fatalf("document %d has %d bytes, want %d", i, len(text), memDocSize)
		}
		d := &doc{uri: fmt.Sprintf("%s/pkg%03d/файл_%03d.go", root, i/20, i), version: 1, lines: memoryLines(text)}
		if len(d.lines) < memRounds {
			t.Fatalf("document %d has %d lines to type on", i, len(d.lines))
		}
		docs[i] = d
		b.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{
			"uri": d.uri, "languageId": "go", "version": 1, "text": text,
		}})
	}

	type pos = map[string]any
	at := func(line, col int) pos { return pos{"line": line, "character": col} }
	inline := func(d *doc) bool {
		var res struct {
			Items []struct {
				InsertText string `json:"insertText"`
			} `json:"items"`
		}
		if err := b.Call("textDocument/inlineCompletion", map[string]any{
			"textDocument": map[string]any{"uri": d.uri}, "position": at(d.line, d.col),
			"context": map[string]any{"triggerKind": 2},
		}, &res); err != nil {
			t.Fatalf("inlineCompletion in %s: %v", d.uri, err)
		}
		return len(res.Items) == 1 && res.Items[0].InsertText == memInserted
	}
	var rep memoryReport
	// What a user sees once every document is open: the suggestion at the cursor, in the first
	// document opened and in the last. The answer to a request also says that the bridge has
	// handled every didOpen before it.
	for _, d := range []*doc{docs[0], docs[memDocs-1]} {
		d.line, d.col = d.lines[0], 1
		if !inline(d) {
			t.Fatalf("no suggestion in %s after %d documents of %d KiB were opened", d.uri, memDocs, memDocSize>>10)
		}
	}
	rep.afterOpens = rssOf(t, pid)
	sampler := sampleRSS(pid)

	typeChar := func(d *doc, ch string) {
		d.version++
		b.Notify("textDocument/didChange", map[string]any{
			"textDocument":   map[string]any{"uri": d.uri, "version": d.version},
			"contentChanges": []any{map[string]any{"range": map[string]any{"start": at(d.line, d.col), "end": at(d.line, d.col)}, "text": ch}},
		})
		d.col++
	}
	edits := 0
	for r := range memRounds {
		d := docs[(r*37)%memDocs] // 37 is prime to 200: the rounds visit documents all over
		// A new place in the document: the next matching line, just after its tab.
		d.line, d.col = d.lines[r%len(d.lines)], 1
		b.Notify("acp-lsp-bridge/didFocus", map[string]any{
			"textDocument": map[string]any{"uri": d.uri}, "position": at(d.line, d.col),
			"visibleRange": map[string]any{"start": at(max(0, d.line-30), 0), "end": at(d.line+30, 0)},
		})
		for _, ch := range []string{"x", "y", "z"} {
			typeChar(d, ch)
			edits++
		}
		if inline(d) {
			rep.inline++
		}
		if r%2 == 1 {
			continue
		}
		typeChar(d, "_")
		edits++
		diags := make([]any, 20)
		for k := range diags {
			l := d.lines[(r+k)%len(d.lines)]
			diags[k] = map[string]any{
				"range":    map[string]any{"start": at(l, 1), "end": at(l, 6)},
				"severity": 1 + k%4, "source": "compiler",
				"message": fmt.Sprintf("value%d declared and not used — ошибка %d", l, k),
			}
		}
		b.Notify("acp-lsp-bridge/diagnostics", map[string]any{"textDocument": map[string]any{"uri": d.uri}, "diagnostics": diags})
		var actions []struct {
			Title string `json:"title"`
		}
		if err := b.Call("textDocument/codeAction", map[string]any{
			"textDocument": map[string]any{"uri": d.uri},
			"range":        map[string]any{"start": at(d.line, d.col), "end": at(d.line, d.col)},
			"context":      map[string]any{"diagnostics": diags[:2]},
		}, &actions); err != nil {
			t.Fatalf("codeAction in %s: %v", d.uri, err)
		}
		if len(actions) > 0 {
			rep.actions++
		}
	}
	rep.maxSession, rep.samples = sampler.end()
	// Settled: nothing happens for a moment; the Go runtime returns what it does not use in the
	// background, a little at a time.
	time.Sleep(2 * time.Second)
	st, err := procStatus(pid, "VmRSS", "VmHWM", "RssAnon")
	if err != nil {
		t.Fatal(err)
	}
	rep.settled, rep.peak, rep.anon = st["VmRSS"], st["VmHWM"], st["RssAnon"]
	rep.maxSession = max(rep.maxSession, rep.afterOpens, rep.settled)
	t.Logf("%d documents of %d KiB (%.1f MiB), %d rounds: %d one-character edits, %d inline requests (%d answered with the suggestion), %d code action requests (%d with actions)",
		memDocs, memDocSize>>10, mib(memTotal), memRounds, edits, memRounds, rep.inline, (memRounds+1)/2, rep.actions)
	if err := b.Call("shutdown", nil, nil); err != nil {
		t.Fatal(err)
	}
	b.Notify("exit", nil)
	return rep
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }

// TestMemory200Docs: with 200 open documents of 100 KiB each (19.5 MiB), the bridge's resident
// memory stays within twice their size plus 30 MiB (69 MiB) through a session of edits, focus
// changes, diagnostics, inline completions and code actions; and the user still gets suggestions.
// The bound applies to the largest of the samples taken every 10 ms from the moment every
// document is open (a user's machine must hold that much), which includes the RSS once the
// session has settled.
//
// Where the memory goes, measured with heap profiles of the bridge at the end of this session:
// the document mirror is what stays live (about 1.3 times the text: each text, rounded up to
// whole pages, and its line-start table of one int per line); the Go runtime lets the heap grow
// to twice what is live when it collects (GOGC=100), and what is live then includes the
// nes/suggest requests in flight (recentFiles carries whole documents, which the ACP SDK
// marshals twice); the executable's own pages add about 9 MiB. GODEBUG=gctrace=1 in the
// environment shows the bridge's collections in its stderr, which a failing test prints.
func TestMemory200Docs(t *testing.T) {
	skipOnWindows(t, "measures the bridge's resident memory in /proc")
	if testing.Short() {
		t.Skip("opens 20 MiB of documents")
	}
	rep := runMemorySession(t)
	t.Logf("bridge VmRSS: %.1f MiB after the opens, at most %.1f MiB during the session (%d samples), %.1f MiB settled (RssAnon %.1f MiB); VmHWM %.1f MiB",
		mib(rep.afterOpens), mib(rep.maxSession), rep.samples, mib(rep.settled), mib(rep.anon), mib(rep.peak))
	t.Logf("budget %.1f MiB (2 × %.1f MiB + %.1f MiB): session max %.2f of it, settled %.2f",
		mib(memBudget), mib(memTotal), mib(memSlack), float64(rep.maxSession)/memBudget, float64(rep.settled)/memBudget)
	if rep.maxSession > memBudget {
		t.Errorf("the bridge's resident memory reached %.1f MiB, over the budget of %.1f MiB", mib(rep.maxSession), mib(memBudget))
	}
	if rep.inline != memRounds {
		t.Errorf("%d of %d inline requests were answered with the agent's suggestion", rep.inline, memRounds)
	}
	if want := (memRounds + 1) / 2; rep.actions != want {
		t.Errorf("%d of %d code action requests offered an action", rep.actions, want)
	}
}

// BenchmarkMemory200Docs reports the bridge's resident memory in the session of TestMemory200Docs,
// in MiB: rss-MB is the largest sample from the moment every document is open, budget-MB the
// budget (2 × 19.5 + 30), rss/budget their ratio, settled-MB the RSS once idle and peak-MB the
// process's VmHWM (the opens included). One iteration is a whole session with a new bridge; the
// figures are those of the last one.
func BenchmarkMemory200Docs(b *testing.B) {
	var rep memoryReport
	for b.Loop() {
		rep = runMemorySession(b)
	}
	b.ReportMetric(mib(rep.maxSession), "rss-MB")
	b.ReportMetric(mib(memBudget), "budget-MB")
	b.ReportMetric(float64(rep.maxSession)/memBudget, "rss/budget")
	b.ReportMetric(mib(rep.settled), "settled-MB")
	b.ReportMetric(mib(rep.peak), "peak-MB")
}
