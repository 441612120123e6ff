package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/lspside"
)

// BenchmarkNeovimTyping is issue 37's first speed budget, measured as a user meets it: real
// Neovim 0.12, headless, with the shipped plugin installed by vim.pack and set up at its defaults
// but for the agent (the model agent, `acp-lsp-bridge agent --model-url … --model-format zeta2`,
// itself at its defaults), in front of a fake Zeta 2 server that takes 300 ms per answer. The
// driver (testdata/nvim/typing_bench.lua) opens a fresh line in the middle of the document and
// types a 12-letter word there, a key every 125 ms (8 keys a second); the fake's answer completes
// the cursor's line with "(ctx)", and the figure is the time from the last change (TextChangedI)
// to that ghost text, polled every 2 ms. Then <Esc>, a wait until the fake is idle, `u`, and a
// pause and a wait again before the next word.
//
// Two ways the fake answers, alternating word by word in each Neovim: "stream" sends the
// rewritten region (about 21 lines, the cursor's line in its middle) a line an event, the events
// spread evenly over the 300 ms, the last one (the end marker, [DONE]) at 300 ms; "whole" sends
// one JSON answer after 300 ms, stream or not (the agent reads a JSON answer to a streamed request
// as it reads an answer asked whole, as soon as it comes).
//
// Configurations, each its own Neovim, all in the same run: "today", the bridge with
// --ask-ahead 0 (the baseline: the model is asked when Neovim asks, 200 ms after the last key),
// and the shipped defaults (--ask-ahead 150ms). ACP_BENCH_ASK_AHEAD="150ms,100ms" sweeps other
// values (each a bridge started with that --ask-ahead by a wrapper script given to setup() as
// `bridge`); ACP_BENCH_WORDS sets the words per configuration and way of answering (12).
//
// Model time thrown away per word is the sum of (end − start) of every request to the fake while
// that word was typed and looked at, except the one whose answer was shown (the first request for
// the whole word whose changed line reached the agent): requests aborted (the client closed them)
// and requests answered and never shown, such as the agent's request for the suggestion after the
// one shown, as if it were accepted (its --no-prefetch is off by default). The requests the
// bridge asks ahead after the driver's `u` (the document back as it was) are the driver's, not the
// word's: the fake answers them NO_EDITS at once and they are not counted.
//
// Reported, per configuration and way (the defaults' unprefixed, the baseline's "today-", a
// swept value's "ahead<value>-"): the median and the 90th percentile of last key → ghost text
// (ms; a word without ghost text within 3 s counts as 3 s, and is counted in -no-ghost-words),
// the model time thrown away per word (ms), and for all words of a configuration thrown-ms/word;
// the ratios of the medians to today's; the words whose whole-word request the fake answered and
// that showed no ghost text (-answered-unshown-words, 0 when every answer that comes is shown);
// and the first word of each Neovim (a warm-up word, left out of the rest): its ghost text
// (first-word-ghost-ms) and its ratio to the later words' median (first-word-ghost/median, about
// 1 when it is asked ahead as they are: the plugin says initializationOptions.asksItself). A line a configuration and way (b.Logf) splits the time
// thrown away into what was asked while typing and what after the ghost text. Each configuration
// takes about 80 s: a sweep wants a -timeout above the default 10 minutes.
func BenchmarkNeovimTyping(b *testing.B) {
	if os.Getenv("NVIM") == "" {
		b.Skip(`NVIM is not set; run eval "$(bash ../shared/tools/install-test-peers.sh)"`)
	}
	if runtime.GOOS != "linux" {
		b.Skip("Linux only: the bridge's flags go through a shell script")
	}
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("git is not on the PATH; vim.pack installs plugins with it")
	}
	aheads, err := typingAheads(os.Getenv("ACP_BENCH_ASK_AHEAD"))
	if err != nil {
		b.Fatal(err)
	}
	words := 12
	if s := os.Getenv("ACP_BENCH_WORDS"); s != "" {
		if words, err = strconv.Atoi(s); err != nil || words < 1 {
			b.Fatalf("ACP_BENCH_WORDS=%q: want a number of words, 1 or more", s)
		}
	}
	bridge, _ := binaries(b)
	repo := typingPluginRepo(b)
	configs := []typingConfig{{name: "today", prefix: "today-", ahead: 0, flags: []string{"--ask-ahead", "0"}}}
	for _, a := range aheads {
		c := typingConfig{name: "defaults", ahead: a}
		if a != lspside.SuggestedAskAhead {
			c.name = "ask-ahead " + a.String()
			c.prefix = "ahead" + a.String() + "-"
			c.flags = []string{"--ask-ahead", a.String()}
		}
		configs = append(configs, c)
	}
	results := map[string][]typingWord{}
	firsts := map[string][]typingWord{}
	for range b.N {
		for _, c := range configs {
			first, ws := runTyping(b, bridge, repo, c, words)
			results[c.name] = append(results[c.name], ws...)
			firsts[c.name] = append(firsts[c.name], first)
		}
	}
	b.StopTimer()
	medians := map[string]float64{}
	for _, c := range configs {
		ws := results[c.name]
		var all []float64
		for _, mode := range []string{"stream", "whole"} {
			s := typingSummarize(ws, mode)
			all = append(all, s.thrown...)
			b.ReportMetric(s.median, c.prefix+mode+"-ghost-ms")
			b.ReportMetric(s.p90, c.prefix+mode+"-ghost-p90-ms")
			b.ReportMetric(typingMean(s.thrown), c.prefix+mode+"-thrown-ms/word")
			if s.missed > 0 {
				b.ReportMetric(float64(s.missed), c.prefix+mode+"-no-ghost-words")
			}
			// Answers that came and were never shown: the fake answered the whole word, and no
			// ghost text appeared.
			b.ReportMetric(float64(s.unshownAnswers), c.prefix+mode+"-answered-unshown-words")
			if mode == firsts[c.name][0].mode {
				// The first word of each Neovim (a warm-up word, not among the measured):
				// asked ahead like every later word, its ghost text comes as soon as theirs.
				f := typingSummarize(firsts[c.name], mode)
				b.ReportMetric(f.median, c.prefix+"first-word-ghost-ms")
				if s.median > 0 {
					b.ReportMetric(f.median/s.median, c.prefix+"first-word-ghost/median")
				}
				b.ReportMetric(float64(f.unshownAnswers), c.prefix+"first-word-answered-unshown")
			}
			medians[c.prefix+mode] = s.median
			b.Logf("%-18s %-6s last key → ghost: median %4.0f ms, p90 %4.0f ms (%d words, %d without ghost text); thrown away %4.0f ms/word (while typing %4.0f, after the ghost text %4.0f); requests/word %.1f, %d aborted, %d answered and never shown; %d after the driver's undo, left out; region %s",
				c.name, mode, s.median, s.p90, len(s.ghosts), s.missed, typingMean(s.thrown), typingMean(s.typing), typingMean(s.after), s.requests, s.aborted, s.unshown, s.resets, s.region)
		}
		b.ReportMetric(typingMean(all), c.prefix+"thrown-ms/word")
	}
	for _, c := range configs[1:] {
		for _, mode := range []string{"stream", "whole"} {
			if t := medians["today-"+mode]; t > 0 {
				b.ReportMetric(medians[c.prefix+mode]/t, c.prefix+mode+"-ghost/today")
			}
		}
	}
}

// typingAheads are the --ask-ahead values of ACP_BENCH_ASK_AHEAD ("150ms,100ms"), the default
// when it is empty.
func typingAheads(env string) ([]time.Duration, error) {
	if strings.TrimSpace(env) == "" {
		return []time.Duration{lspside.SuggestedAskAhead}, nil
	}
	var out []time.Duration
	for _, f := range strings.Split(env, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(f))
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("ACP_BENCH_ASK_AHEAD=%q: want durations above 0, comma-separated, e.g. 150ms,100ms", env)
		}
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out, nil
}

// typingConfig is one Neovim of the benchmark: the bridge with flags (none: the shipped
// defaults), its --ask-ahead, and the prefix of its metrics.
type typingConfig struct {
	name, prefix string
	ahead        time.Duration
	flags        []string
}

// typingWord is one word typed, as the driver and the fake saw it.
type typingWord struct {
	word, mode string
	ghostMS    float64 // last change → ghost text; negative: none within 3 s
	requests   []typingRequest
}

// typingRequest is one request to the fake.
type typingRequest struct {
	start, end time.Time
	line       string // the cursor's line in the region, the marker taken out
	kind       string // "typing" (a prefix of the word), "prefetch" (the word completed), "reset"
	aborted    bool
	sent       time.Time // when the changed line and the two after it were sent (stream), or the answer
	region     string    // the region's lines and the cursor's row in it
}

const (
	typingModelTime = 300 * time.Millisecond
	typingKey       = 125 * time.Millisecond
	typingDone      = "(ctx)" // what the fake adds at the end of the cursor's line
	typingRow       = 40      // the line below which each word is typed
	typingGhostWait = 3000    // ms the driver waits for the ghost text (typing_bench.lua)
)

// typingDoc is the document typed into: lines of 52 bytes, so that Zeta 2's editable region
// (350 estimated tokens of 3 bytes) is about 21 lines around the cursor's.
func typingDoc() string {
	var b strings.Builder
	b.WriteString("package main\nfunc compute(int, string) int { return 0 }\nfunc main() {\n")
	for i := range 80 {
		fmt.Fprintf(&b, "\tv%02d := compute(%02d, \"abcdefghijklmnopqrstuvwxyz012\")\n", i, i)
	}
	b.WriteString("}\n")
	return b.String()
}

// typingWords are distinct 12-letter words, two syllables of letters a six.
func typingWords(n int) []string {
	syl := []string{"ba", "ke", "mi", "lo", "tu", "ra", "se", "di", "no", "fu", "ga", "pe"}
	out := make([]string, 0, n)
	for x := uint32(1); len(out) < n; {
		var w strings.Builder
		for range 6 {
			x = x*1664525 + 1013904223
			w.WriteString(syl[(x>>16)%uint32(len(syl))])
		}
		if !slices.Contains(out, w.String()) {
			out = append(out, w.String())
		}
	}
	return out
}

// typingZeta2 is the fake Zeta 2 server (OpenAI-compatible /v1/completions; GET /api/version is
// 404, as it is at vLLM or llama-server). The driver writes the way it answers ("stream" or
// "whole") to the control file before each word; the fake writes the requests in flight and the
// time of its last request's start or end (µs since the epoch) to the state file, for the driver
// to wait until it is idle.
type typingZeta2 struct {
	srv            *httptest.Server
	control, state string
	orig           map[string]bool // the document's lines: a cursor on one is the driver's reset
	mu             sync.Mutex
	reqs           []*typingRequest
	inFlight       int
}

func newTypingZeta2(b *testing.B, dir string) *typingZeta2 {
	z := &typingZeta2{control: filepath.Join(dir, "control"), state: filepath.Join(dir, "state.json"), orig: map[string]bool{}}
	for _, l := range strings.Split(typingDoc(), "\n") {
		z.orig[l] = true
	}
	z.touch(0)
	z.srv = httptest.NewServer(http.HandlerFunc(z.serve))
	b.Cleanup(z.srv.Close)
	return z
}

// touch counts a request in (+1) or out (-1) and writes the state file.
func (z *typingZeta2) touch(d int) {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.inFlight += d
	data, _ := json.Marshal(map[string]int64{"inflight": int64(z.inFlight), "last_us": time.Now().UnixMicro()})
	tmp := z.state + ".tmp"
	if os.WriteFile(tmp, data, 0o644) == nil {
		_ = os.Rename(tmp, z.state)
	}
}

// set changes a request's record under the lock requests reads it with.
func (z *typingZeta2) set(f func()) {
	z.mu.Lock()
	defer z.mu.Unlock()
	f()
}

func (z *typingZeta2) requests() []typingRequest {
	z.mu.Lock()
	defer z.mu.Unlock()
	out := make([]typingRequest, len(z.reqs))
	for i, r := range z.reqs {
		out[i] = *r
	}
	return out
}

func (z *typingZeta2) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/completions" {
		http.NotFound(w, r)
		return
	}
	start := time.Now()
	var req struct {
		Prompt string `json:"prompt"`
	}
	region, ok := "", false
	if json.NewDecoder(r.Body).Decode(&req) == nil {
		region, ok = between(req.Prompt, "<<<<<<< CURRENT\n", "=======\n")
	}
	lines := strings.Split(strings.TrimSuffix(region, "\n"), "\n")
	row := slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, "<|user_cursor|>") })
	if !ok || row < 0 {
		http.Error(w, "not a Zeta 2 prompt with the cursor in its region", http.StatusBadRequest)
		return
	}
	lines[row] = strings.Replace(lines[row], "<|user_cursor|>", "", 1)
	rec := &typingRequest{start: start, line: lines[row], kind: "typing", region: fmt.Sprintf("%d lines, the cursor's the %dth", len(lines), row+1)}
	mode := "stream"
	if data, err := os.ReadFile(z.control); err == nil && strings.TrimSpace(string(data)) == "whole" {
		mode = "whole"
	}
	switch {
	case z.orig[rec.line]:
		rec.kind = "reset"
	case strings.Contains(rec.line, typingDone):
		rec.kind = "prefetch" // the suggestion taken as accepted: nothing more to add
	default:
		lines[row] += typingDone
	}
	z.mu.Lock()
	z.reqs = append(z.reqs, rec)
	z.mu.Unlock()
	z.touch(1)
	defer func() {
		z.set(func() { rec.end = time.Now() })
		z.touch(-1)
	}()
	send := func(text string) {
		b, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"text": text}}})
		fmt.Fprintf(w, "data: %s\n\n", b)
	}
	wait := func(until time.Time) bool {
		select {
		case <-time.After(time.Until(until)):
			return true
		case <-r.Context().Done():
			z.set(func() { rec.aborted = true })
			return false
		}
	}
	answer := strings.Join(lines, "\n") + "\n"
	switch {
	case rec.kind == "reset":
		answer = "NO_EDITS\n"
	case mode == "whole":
		if !wait(start.Add(typingModelTime)) {
			return
		}
	default:
		w.Header().Set("Content-Type", "text/event-stream")
		w.(http.Flusher).Flush()
		n := len(lines) + 1 // a line an event, then the end
		for i, l := range lines {
			if !wait(start.Add(typingModelTime * time.Duration(i+1) / time.Duration(n))) {
				return
			}
			send(l + "\n")
			w.(http.Flusher).Flush()
			if i == min(row+2, len(lines)-1) {
				z.set(func() { rec.sent = time.Now() })
			}
		}
		if !wait(start.Add(typingModelTime)) {
			return
		}
		send(">>>>>>> UPDATED\n")
		fmt.Fprint(w, "data: {\"choices\":[{\"text\":\"\",\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
		w.(http.Flusher).Flush()
		return
	}
	w.Header().Set("Content-Type", "application/json")
	b, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"text": answer + ">>>>>>> UPDATED\n", "finish_reason": "stop"}}})
	_, _ = w.Write(b)
	z.set(func() { rec.sent = time.Now() })
}

// typingPluginRepo is a git repository of the plugin's files as they are in the working tree, for
// vim.pack to clone, as runNeovimPlugin's.
func typingPluginRepo(b *testing.B) string {
	repo := b.TempDir()
	cmd := exec.Command("sh", "-c", `for d in lsp lua doc plugin; do if [ -d "$0/$d" ]; then cp -R "$0/$d" .; fi; done
git init -q && git add -A && git -c user.name=bench -c user.email=bench@example.com -c commit.gpgsign=false commit -q -m plugin`, moduleRoot(b))
	cmd.Dir = repo
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("the plugin's repository: %v\n%s", err, out)
	}
	return repo
}

// runTyping runs the driver in a Neovim of its own for c: a warm-up word per way of answering,
// then words of each, alternating; it returns the measured words with the fake's requests
// while each was typed and looked at.
func runTyping(b *testing.B, bridge, repo string, c typingConfig, n int) (first typingWord, measured []typingWord) {
	dir := b.TempDir()
	work, xdg, none := filepath.Join(dir, "work"), filepath.Join(dir, "xdg"), filepath.Join(dir, "none")
	for _, d := range []string{work, xdg, none} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	z := newTypingZeta2(b, dir)
	wrapper := ""
	if len(c.flags) > 0 {
		wrapper = filepath.Join(dir, "acp-lsp-bridge-flags")
		script := fmt.Sprintf("#!/bin/sh\nexec '%s' %s \"$@\"\n", bridge, strings.Join(c.flags, " "))
		if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
			b.Fatal(err)
		}
	}
	agent, _ := json.Marshal([]string{bridge, "agent", "--model-url", z.srv.URL, "--model", "zeta-2", "--model-format", "zeta2"})
	type plan struct {
		Word string `json:"word"`
		Mode string `json:"mode"`
		Warm bool   `json:"warm"`
	}
	words := typingWords(2 * (n + 1))
	var plans []plan
	for i, w := range words {
		plans = append(plans, plan{Word: w, Mode: [2]string{"stream", "whole"}[i%2], Warm: i < 2})
	}
	planJSON, _ := json.Marshal(plans)
	quiet := max(300*time.Millisecond, c.ahead+250*time.Millisecond)
	root := moduleRoot(b)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	run := "lua local ok, err = pcall(dofile, vim.env.NVIM_TEST_SCRIPT) " +
		"if not ok then io.stdout:write('FAIL loading the script: ', tostring(err), '\\n') vim.cmd('cquit 3') end"
	cmd := exec.CommandContext(ctx, os.Getenv("NVIM"), "--headless", "-i", "NONE", "-c", run)
	cmd.Dir = work
	cmd.Env = append(os.Environ(),
		"NVIM_TEST_SCRIPT="+filepath.Join(root, "testdata", "nvim", "typing_bench.lua"),
		"NVIM_TEST_LIB="+filepath.Join(root, "testdata", "nvim", "shipped_lib.lua"),
		"NVIM_TEST_DIR="+work,
		"ACP_PLUGIN_REPO="+repo,
		"PATH="+filepath.Dir(bridge)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"XDG_CONFIG_DIRS="+none,
		"XDG_DATA_DIRS="+none,
		"TYPING_AGENT="+string(agent),
		"TYPING_BRIDGE="+wrapper,
		"TYPING_DOC="+typingDoc(),
		"TYPING_ROW="+strconv.Itoa(typingRow),
		"TYPING_WORDS="+string(planJSON),
		"TYPING_KEY_MS="+strconv.FormatInt(typingKey.Milliseconds(), 10),
		"TYPING_QUIET_MS="+strconv.FormatInt(quiet.Milliseconds(), 10),
		"TYPING_CONTROL="+z.control,
		"TYPING_STATE="+z.state,
		"TYPING_WANT="+typingDone,
		"TYPING_OUT="+filepath.Join(dir, "words"),
	)
	cmd.Env = append(cmd.Env, xdgDirs(xdg)...)
	out, err := cmd.CombinedOutput()
	results, _ := os.ReadFile(filepath.Join(dir, "words"))
	if err != nil || !strings.HasSuffix(string(results), "DONE\n") {
		log, _ := os.ReadFile(filepath.Join(xdg, "state", "nvim", "acp-lsp-bridge.log"))
		b.Fatalf("%s: neovim: %v\n%s\nthe bridge's log:\n%s", c.name, err, out, log)
	}
	// WORD <i> <word> <mode> <warm|measured> <start, µs since the epoch> <ghost ms>
	var got []typingWord
	var starts []time.Time
	sc := bufio.NewScanner(strings.NewReader(string(results)))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 7 || f[0] != "WORD" {
			continue
		}
		us, err1 := strconv.ParseInt(f[5], 10, 64)
		ms, err2 := strconv.ParseFloat(f[6], 64)
		if err1 != nil || err2 != nil {
			b.Fatalf("%s: the driver's line %q", c.name, sc.Text())
		}
		starts = append(starts, time.UnixMicro(us))
		got = append(got, typingWord{word: f[2], mode: f[3], ghostMS: ms})
		if f[4] == "warm" {
			got[len(got)-1].mode = "" // not measured
		}
	}
	if s := strings.TrimSpace(string(out)); strings.Contains(s, "NOTE ") {
		b.Logf("%s: %s", c.name, s)
	}
	if len(got) != len(plans) {
		b.Fatalf("%s: the driver typed %d words, want %d:\n%s", c.name, len(got), len(plans), results)
	}
	if len(got) == 0 {
		b.Fatalf("%s: the driver typed no word", c.name)
	}
	// Each request belongs to the word typed when it started.
	for _, r := range z.requests() {
		i := len(starts) - 1
		for i >= 0 && starts[i].After(r.start) {
			i--
		}
		if i >= 0 {
			got[i].requests = append(got[i].requests, r)
		}
	}
	first = got[0]
	first.mode = plans[0].Mode
	return first, slices.DeleteFunc(got, func(w typingWord) bool { return w.mode == "" })
}

// typingSummary is what the words of one way of answering came to.
type typingSummary struct {
	ghosts                []float64 // ms a word, typingGhostWait for one without ghost text
	median, p90           float64
	missed                int
	thrown, typing, after []float64 // ms a word: all thrown away; while typing; after the ghost text
	requests              float64   // requests a word, the driver's resets aside
	aborted, unshown      int
	resets                int // requests after the driver's undo, left out
	// unshownAnswers are the words whose whole-word request the fake answered (the answer, or
	// the changed line and the two after it, sent) and that showed no ghost text.
	unshownAnswers int
	region         string
}

func typingSummarize(ws []typingWord, mode string) typingSummary {
	var s typingSummary
	nreq := 0
	for _, w := range ws {
		if w.mode != mode {
			continue
		}
		if w.ghostMS < 0 {
			// No ghost text within the driver's 3 s: counted as 3 s, a bound from below.
			s.missed++
			s.ghosts = append(s.ghosts, typingGhostWait)
		} else {
			s.ghosts = append(s.ghosts, w.ghostMS)
		}
		// The shown request: of those for the whole word, the first whose change reached the
		// agent.
		shown := -1
		for i, r := range w.requests {
			if r.kind == "typing" && strings.TrimSpace(r.line) == w.word && !r.sent.IsZero() &&
				(shown < 0 || r.sent.Before(w.requests[shown].sent)) {
				shown = i
			}
		}
		if w.ghostMS < 0 && shown >= 0 && !w.requests[shown].aborted {
			s.unshownAnswers++
		}
		var thrown, typing, after float64
		for i, r := range w.requests {
			if r.kind == "reset" {
				s.resets++
				continue
			}
			nreq++
			if s.region == "" && r.kind == "typing" {
				s.region = r.region
			}
			if i == shown {
				continue
			}
			ms := float64(r.end.Sub(r.start).Microseconds()) / 1000
			thrown += ms
			if shown >= 0 && r.start.After(w.requests[shown].start) {
				after += ms
			} else {
				typing += ms
			}
			if r.aborted {
				s.aborted++
			} else {
				s.unshown++
			}
		}
		s.thrown, s.typing, s.after = append(s.thrown, thrown), append(s.typing, typing), append(s.after, after)
	}
	if n := len(s.thrown); n > 0 {
		s.requests = float64(nreq) / float64(n)
	}
	s.median, s.p90 = typingPercentile(s.ghosts, 0.5), typingPercentile(s.ghosts, 0.9)
	return s
}

// typingPercentile is the nearest-rank percentile p of xs (NaN for none); 0.5 is the median (the mean
// of the two middle values of an even number).
func typingPercentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if p == 0.5 && len(s)%2 == 0 {
		return (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return s[max(int(math.Ceil(p*float64(len(s))))-1, 0)]
}

func typingMean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}
