package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
)

// faultDoc is the document every fault session opens: the rule below turns "retur" on line 3 into
// "return nil", the one valid suggestion, shown inline as "return nil" over 3:1-3:6.
const faultDoc = "package p\n\nfunc f() error {\n\tretur\n}\n"

const faultRules = `[{"when":"retur","find":"retur","replace":"return nil"}]`

// faultSession is the real bridge with the test agent started as `--fault MODE`.
type faultSession struct {
	t        *testing.T
	b        *bridgeProc
	root     string
	agentLog string
}

func startFaultSession(t *testing.T, mode string, bridgeArgs ...string) *faultSession {
	t.Helper()
	_, agent := binaries(t)
	dir := t.TempDir()
	rules := filepath.Join(dir, "rules.json")
	if err := os.WriteFile(rules, []byte(faultRules), 0o644); err != nil {
		t.Fatal(err)
	}
	s := &faultSession{t: t, b: startBridge(t, bridgeArgs...), root: fileURI(dir), agentLog: filepath.Join(dir, "agent.jsonl")}
	s.b.InitializeWith(fakeeditor.InitParams{Root: s.root, ProcessID: os.Getpid(), Encodings: []string{"utf-16"}, Options: agentOption(agent, "--rules", rules, "--log", s.agentLog, "--fault", mode)})
	s.b.waitMessage("acp-test-agent is ready")
	return s
}

func (s *faultSession) open(name string) string {
	uri := s.root + "/" + name
	s.b.Open(uri, faultDoc)
	waitAgentLog(s.t, s.agentLog, "document/didOpen")
	return uri
}

// inline asks for inline completions at the end of "\tretur" and checks that whatever is shown is
// the one valid suggestion, each id once. It asks as the user does by hand (triggerKind 1), so
// that each call reaches the agent: an automatic request at the same text and position is answered
// from the agent's previous answer.
func (s *faultSession) inline(uri string) ([]fakeeditor.InlineItem, error) {
	s.t.Helper()
	items, err := s.b.InlineTriggered(uri, fakeeditor.At(3, 6), 1)
	seen := map[any]bool{}
	for _, it := range items {
		if it.InsertText != "return nil" || it.Range == nil || *it.Range != fakeeditor.Span(fakeeditor.At(3, 1), fakeeditor.At(3, 6)) {
			s.t.Errorf("corrupt item shown: %+v; want %q over 3:1-3:6", it, "return nil")
		}
		if it.Command == nil || len(it.Command.Arguments) != 1 {
			s.t.Errorf("item without its suggestion id: %+v", it)
			continue
		}
		if id := it.Command.Arguments[0]; seen[id] {
			s.t.Errorf("suggestion id %q shown twice in one answer: %+v", id, items)
		} else {
			seen[id] = true
		}
	}
	return items, err
}

// wantOne asks for inline completions and wants exactly the valid suggestion.
func (s *faultSession) wantOne(uri string) fakeeditor.InlineItem {
	s.t.Helper()
	items, err := s.inline(uri)
	if err != nil || len(items) != 1 {
		s.t.Fatalf("inlineCompletion: items %+v, err %v; want the one valid suggestion", items, err)
	}
	return items[0]
}

// wantNone asks for inline completions and wants an empty list, no error.
func (s *faultSession) wantNone(uri string) {
	s.t.Helper()
	items, err := s.inline(uri)
	if err != nil || len(items) != 0 {
		s.t.Fatalf("inlineCompletion: items %+v, err %v; want an empty list", items, err)
	}
}

// finish shuts the bridge down (exit code 0), checks its stdout, and returns its log.
func (s *faultSession) finish() bridgeLog {
	s.t.Helper()
	s.b.Shutdown()
	if code := s.b.exitCode(); code != 0 {
		s.t.Errorf("exit code %d after shutdown and exit, want 0", code)
	}
	if err := s.b.stdout.verify(); err != nil {
		s.t.Error(err)
	}
	log := readBridgeLog(s.t, s.b.logFile)
	// The ACP SDK logs each message it cannot take: the bridge must keep those away from it.
	for _, flood := range []string{"failed to parse incoming message", "failed to handle notification", "received message with neither id nor method", "failed to canonicalize"} {
		if n := log.count(func(e logEntry) bool { return strings.Contains(e.msg(), flood) }); n > 0 {
			s.t.Errorf("the SDK logged %q %d times: the tap lets through what the SDK cannot take", flood, n)
		}
	}
	return log
}

// ends lists, per suggestion id, how the agent was told it ended: "accept" or the reject reason.
func (s *faultSession) ends() map[string][]string {
	s.t.Helper()
	out := map[string][]string{}
	for _, m := range readAgentLog(s.t, s.agentLog) {
		p, _ := m["params"].(map[string]any)
		id, _ := p["id"].(string)
		switch m["method"] {
		case "nes/accept":
			out[id] = append(out[id], "accept")
		case "nes/reject":
			r, _ := p["reason"].(string)
			out[id] = append(out[id], r)
		}
	}
	return out
}

func (s *faultSession) agentReceived(method string) []map[string]any {
	var out []map[string]any
	for _, m := range readAgentLog(s.t, s.agentLog) {
		if m["method"] == method {
			out = append(out, m)
		}
	}
	return out
}

type logEntry map[string]any

func (e logEntry) msg() string         { s, _ := e["message"].(string); return s }
func (e logEntry) str(k string) string { s, _ := e[k].(string); return s }

type bridgeLog []logEntry

func readBridgeLog(t *testing.T, path string) bridgeLog {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out bridgeLog
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var e logEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("bridge log line %q: %v", preview(sc.Bytes()), err)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func (l bridgeLog) count(match func(logEntry) bool) int {
	n := 0
	for _, e := range l {
		if match(e) {
			n++
		}
	}
	return n
}

func (l bridgeLog) String() string {
	var b bytes.Buffer
	for _, e := range l {
		j, _ := json.Marshal(e)
		b.Write(j)
		b.WriteByte('\n')
	}
	return b.String()
}

// wantFault checks how the bridge logged one kind of wire fault (entries with this "fault" and,
// when method is set, this "method"): its first occurrence once, with details, and the rest in at
// most one summary line (the tests end within the minute between summaries), whose "repeats" says
// how many more there were; min and max bound the occurrences in all.
func wantFault(t *testing.T, log bridgeLog, fault, method string, min, max int) {
	t.Helper()
	var first, summaries, total int
	for _, e := range log {
		if e.str("fault") != fault || (method != "" && e.str("method") != method) {
			continue
		}
		if r, ok := e["repeats"].(float64); ok {
			summaries++
			total += int(r)
		} else {
			first++
			total++
		}
	}
	if first != 1 || summaries > 1 || total < min || total > max {
		t.Errorf("fault %q %s: %d first lines and %d summaries for %d occurrences; want the first logged once, at most one summary, %d to %d in all\n%s",
			fault, method, first, summaries, total, min, max, log)
	}
}

// wantDropped checks that the bridge logged each of these suggestions as dropped exactly once.
func wantDropped(t *testing.T, log bridgeLog, ids ...string) {
	t.Helper()
	for _, id := range ids {
		if n := log.count(func(e logEntry) bool { return e.str("id") == id && e.msg() == "dropping a suggestion" }); n != 1 {
			t.Errorf("suggestion %s: logged as dropped %d times, want once", id, n)
		}
	}
}

// wantEnded checks that each of these suggestion ids ended exactly once, as ignored.
func wantEnded(t *testing.T, ends map[string][]string, ids ...string) {
	t.Helper()
	for _, id := range ids {
		if got := ends[id]; len(got) != 1 || got[0] != "ignored" {
			t.Errorf("suggestion %s ended %v, want once as ignored", id, got)
		}
	}
}

// wantEachEndsOnce checks that no suggestion id ended twice.
func wantEachEndsOnce(t *testing.T, ends map[string][]string, except ...string) {
	t.Helper()
	for id, got := range ends {
		if len(got) > 1 && !contains(except, id) {
			t.Errorf("suggestion %s ended %d times: %v", id, len(got), got)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestAgentFaults: bad input from the agent, one fault mode of the test agent per subtest, through
// the real binary. After each fault the bridge keeps serving (inline completions, shutdown and exit
// with code 0), the editor sees only the valid suggestion, each id at most once, every suggestion
// id ends once, and the bridge's log names the fault once per kind, not once per bad line.
func TestAgentFaults(t *testing.T) {
	binaries(t)

	t.Run("exit", func(t *testing.T) {
		t.Parallel()
		s := startFaultSession(t, "exit")
		uri := s.open("a.go")
		for round := 1; round <= 2; round++ {
			s.wantNone(uri) // the agent exits with the request: an outage, not an error
			said := s.b.waitMessage("acp-test-agent exited")
			// Told as a failure to start is: its exit status and the last words on its stderr.
			if m, want := said[len(said)-1], "acp-lsp-bridge: acp-test-agent exited (exit status 3). It wrote: acp-test-agent: exiting with status 3 on purpose (--fault exit). Restarting it."; m != want {
				t.Errorf("round %d: the editor was told %q, want %q", round, m, want)
			}
			// Said once: nothing more about the exit until the restarted agent is ready.
			if msgs := s.b.waitMessage("acp-test-agent is ready"); countContaining(msgs, "exited") != 0 {
				t.Errorf("round %d: the editor was told again that the agent exited: %q", round, msgs)
			}
		}
		log := s.finish()
		if n := log.count(func(e logEntry) bool { return e.msg() == "agent exited" && e.str("status") == "exit status 3" }); n != 2 {
			t.Errorf("the agent's exit status was logged %d times for 2 exits", n)
		}
		if n := log.count(func(e logEntry) bool { return e.msg() == "agent exited" && e["exits"] != nil }); n != 2 {
			t.Errorf("the restart was logged %d times for 2 exits", n)
		}
		if n := log.count(func(e logEntry) bool { return strings.Contains(e.msg(), "the agent exited before answering") }); n != 2 {
			t.Errorf("the lost request was logged %d times for 2 requests", n)
		}
		if n := len(s.agentReceived("initialize")); n != 3 {
			t.Errorf("the agent was initialized %d times, want 3 (the first start and 2 restarts)", n)
		}
	})

	t.Run("hang", func(t *testing.T) {
		t.Parallel()
		s := startFaultSession(t, "hang", "--suggest-timeout", "500ms")
		uri := s.open("a.go")
		for round := 1; round <= 2; round++ {
			start := time.Now()
			s.wantNone(uri)
			if d := time.Since(start); d < 400*time.Millisecond || d > 5*time.Second {
				t.Errorf("round %d: the request took %v, want about the 500ms suggest timeout", round, d)
			}
		}
		// Requests that do not need the agent's answer are served meanwhile.
		if err := s.b.Call("workspace/executeCommand", map[string]any{"command": "acp-lsp-bridge.reject", "arguments": []any{}}, nil); err != nil {
			t.Errorf("executeCommand while the agent hangs: %v", err)
		}
		log := s.finish()
		if n := log.count(func(e logEntry) bool { return e.msg() == "nes/suggest timed out" }); n != 2 {
			t.Errorf("%d timeouts logged for 2 timed-out requests", n)
		}
	})

	t.Run("junk", func(t *testing.T) {
		t.Parallel()
		s := startFaultSession(t, "junk")
		uri := s.open("a.go")
		for range 3 {
			s.wantOne(uri)
		}
		log := s.finish()
		// 40 lines of text and half an object before each of 3 answers; a bare number before each.
		wantFault(t, log, "not-json", "", 3*41, 3*41)
		wantFault(t, log, "not-jsonrpc", "", 3, 3)
		if n := log.count(func(e logEntry) bool { return e.str("fault") == "not-json" && e.str("line") != "" }); n != 1 {
			t.Errorf("the first junk line is quoted %d times, want once", n)
		}
	})

	t.Run("huge", func(t *testing.T) {
		t.Parallel()
		s := startFaultSession(t, "huge")
		uri := s.open("a.go")
		start := time.Now()
		s.wantOne(uri)
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("the answer after a 50 MiB line took %v", d)
		}
		s.wantOne(uri)
		log := s.finish()
		wantFault(t, log, "too-long", "", 1, 1)
		if n := log.count(func(e logEntry) bool {
			b, _ := e["bytes"].(float64)
			return e.str("fault") == "too-long" && b > 50<<20
		}); n != 1 {
			t.Errorf("the dropped line's size is not logged")
		}
	})

	t.Run("types", func(t *testing.T) {
		t.Parallel()
		s := startFaultSession(t, "types")
		uri := s.open("a.go")
		// The first answer is {"suggestions":"x"}: the request fails, as an LSP RequestFailed.
		items, err := s.inline(uri)
		var werr *jsonrpc2.Error
		if !errors.As(err, &werr) || werr.Code != -32803 || len(items) != 0 {
			t.Errorf("an unreadable answer: items %v, err %v; want RequestFailed (-32803)", items, err)
		}
		s.wantOne(uri)
		log := s.finish()
		var bad []string
		for _, k := range []string{"range", "newtext", "negative", "jump", "kind", "uri"} {
			bad = append(bad, "types-"+k+"-2")
		}
		wantDropped(t, log, bad...)
		// The suggestion with a numeric id and the string where a suggestion belongs cannot end.
		if n := log.count(func(e logEntry) bool { return e.msg() == "dropping a suggestion without an id" }); n != 2 {
			t.Errorf("%d suggestions without an id logged, want 2", n)
		}
		if n := log.count(func(e logEntry) bool { return e.msg() == "nes/suggest failed" }); n != 1 {
			t.Errorf("the unreadable answer was logged %d times, want once", n)
		}
		ends := s.ends()
		wantEnded(t, ends, bad...)
		wantEachEndsOnce(t, ends)
	})

	t.Run("unknown", func(t *testing.T) {
		t.Parallel()
		s := startFaultSession(t, "unknown")
		uri := s.open("a.go")
		s.wantOne(uri)
		s.wantOne(uri)
		answers := s.agentReceived("fault/answer")
		if len(answers) != 2 {
			t.Fatalf("the agent got %d answers to weird/method, want 2", len(answers))
		}
		for _, a := range answers {
			p, _ := a["params"].(map[string]any)
			e, _ := p["error"].(map[string]any)
			if code, _ := e["code"].(float64); code != -32601 {
				t.Errorf("weird/method answered %v, want method not found (-32601)", p)
			}
		}
		log := s.finish()
		wantFault(t, log, "unknown-request", "weird/method", 2, 2)
		// Two weird/notice per answer, one of them sent 20 ms after it: those may come too late.
		wantFault(t, log, "unknown-notification", "weird/notice", 2, 4)
		wantFault(t, log, "unknown-notification", "session/update", 2, 2)
	})

	t.Run("edits", func(t *testing.T) {
		t.Parallel()
		s := startFaultSession(t, "edits")
		uri := s.open("a.go")
		s.wantOne(uri)
		s.wantOne(uri)
		var bad, unknown []string
		for n := 1; n <= 2; n++ {
			for _, k := range []string{"range", "overlap", "reversed", "mixed", "none"} {
				bad = append(bad, fmt.Sprintf("edits-%s-%d", k, n))
			}
			unknown = append(unknown, fmt.Sprintf("edits-kind-%d", n))
		}
		log := s.finish()
		wantDropped(t, log, bad...)
		// A kind the bridge does not know is an open enum's value, not an error: left out quietly.
		for _, id := range unknown {
			if n := log.count(func(e logEntry) bool {
				return e.str("id") == id && e.msg() == "ignoring a suggestion of a kind the bridge does not know" && e.str("level") == "debug"
			}); n != 1 {
				t.Errorf("suggestion %s: logged as ignored at debug level %d times, want once", id, n)
			}
		}
		bad = append(bad, unknown...)
		ends := s.ends()
		wantEnded(t, ends, bad...)
		wantEachEndsOnce(t, ends)
	})

	t.Run("ids", func(t *testing.T) {
		t.Parallel()
		s := startFaultSession(t, "ids")
		a := s.open("a.go")
		b := s.open("b.go")
		// Every answer carries "ids-reused" twice: the editor sees it once, with the first text.
		s.wantOne(a)
		it := s.wantOne(a) // supersedes the first: "ids-reused" ends as replaced, then lives again
		// The same id for another document while a's is live: refused (not shown, not ended), so
		// that a's item, still on screen, accepts a's suggestion.
		s.wantNone(b)
		s.b.Execute(*it.Command)
		// Accepting it again must not end it twice.
		s.b.Execute(*it.Command)
		log := s.finish()
		ends := s.ends()
		// Two lives of the id, each ending once.
		if got := strings.Join(ends["ids-reused"], " "); got != "replaced accept" {
			t.Errorf("ids-reused ended as %q, want %q (one end per life)", got, "replaced accept")
		}
		if n := log.count(func(e logEntry) bool { return strings.Contains(e.str("problem"), "earlier in the same answer") }); n != 3 {
			t.Errorf("the repeated id was logged %d times for 3 answers, want once per answer\n%s", n, log)
		}
		if n := log.count(func(e logEntry) bool { return strings.Contains(e.msg(), "reused a suggestion id that is still live") }); n != 1 {
			t.Errorf("the id reused while live was logged %d times, want once", n)
		}
	})

	t.Run("utf8", func(t *testing.T) {
		t.Parallel()
		s := startFaultSession(t, "utf8")
		uri := s.open("a.go")
		s.wantOne(uri)
		s.wantOne(uri)
		log := s.finish()
		wantFault(t, log, "not-json", "", 2, 2)
		wantDropped(t, log, "utf8-1", "utf8-2")
		if n := log.count(func(e logEntry) bool {
			return e.msg() == "dropping a suggestion" && strings.Contains(e.str("error"), "UTF-8")
		}); n != 2 {
			t.Errorf("the invalid UTF-8 is not named in the log")
		}
		ends := s.ends()
		wantEnded(t, ends, "utf8-1", "utf8-2")
		wantEachEndsOnce(t, ends)
	})
}

func countContaining(msgs []string, s string) int {
	n := 0
	for _, m := range msgs {
		if strings.Contains(m, s) {
			n++
		}
	}
	return n
}
