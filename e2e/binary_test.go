package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.lsp.dev/uri"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testutil"
)

var buildOnce struct {
	sync.Once
	dir string
	err error
}

// TestMain removes the binaries the tests built (tens of megabytes a run), and leaves alone the
// ones ACP_LSP_BRIDGE_E2E_BIN named. Started as a small parent (commandWithOwnPeak), the test binary
// runs its one program instead.
func TestMain(m *testing.M) {
	runAsSmallParent()
	code := m.Run()
	if buildOnce.dir != "" && os.Getenv("ACP_LSP_BRIDGE_E2E_BIN") == "" {
		_ = os.RemoveAll(buildOnce.dir)
	}
	os.Exit(code)
}

// binaries builds the bridge and the test agent (and the second language server) once, into a
// temporary folder, and returns the bridge's and the agent's paths. With ACP_LSP_BRIDGE_E2E_BIN
// set, they are the ones already built in that folder instead (for the Windows tests under Wine,
// where there is no go to build them).
func binaries(t testing.TB) (bridge, agent string) {
	t.Helper()
	buildOnce.Do(func() {
		if dir := os.Getenv("ACP_LSP_BRIDGE_E2E_BIN"); dir != "" {
			buildOnce.dir = dir
			for _, b := range []string{"acp-lsp-bridge", "acp-test-agent", "acp-test-lsp"} {
				if _, err := os.Stat(filepath.Join(dir, b+exeSuffix)); err != nil {
					buildOnce.err = fmt.Errorf("ACP_LSP_BRIDGE_E2E_BIN=%s: %v", dir, err)
				}
			}
			return
		}
		root := moduleRoot(t)
		dir, err := os.MkdirTemp("", "acp-lsp-bridge-e2e-")
		if err != nil {
			buildOnce.err = err
			return
		}
		buildOnce.dir = dir
		for _, b := range [][2]string{{"acp-lsp-bridge", "./cmd/acp-lsp-bridge"}, {"acp-test-agent", "./internal/test/testagent/cmd/acp-test-agent"}, {"acp-test-lsp", "./internal/test/testlsp/cmd/acp-test-lsp"}} {
			cmd := exec.Command("go", "build", "-o", filepath.Join(dir, b[0]+exeSuffix), b[1])
			cmd.Dir = root
			if out, err := cmd.CombinedOutput(); err != nil {
				buildOnce.err = fmt.Errorf("go build %s: %v\n%s", b[1], err, out)
				return
			}
		}
	})
	if buildOnce.err != nil {
		t.Fatal(buildOnce.err)
	}
	return filepath.Join(buildOnce.dir, "acp-lsp-bridge"+exeSuffix), filepath.Join(buildOnce.dir, "acp-test-agent"+exeSuffix)
}

// exeSuffix ends the name of a program on Windows.
var exeSuffix = map[bool]string{true: ".exe"}[runtime.GOOS == "windows"]

// fileURI is the file: URI of a path, as an editor sends it.
func fileURI(path string) string { return string(uri.File(path)) }

// skipOnWindows skips a test that cannot run on Windows, saying why.
func skipOnWindows(t testing.TB, why string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skipf("not on Windows: %s", why)
	}
}

// testLSP is the second language server of the editor tests (internal/test/testlsp), built with the
// bridge.
func testLSP(t testing.TB) string {
	t.Helper()
	binaries(t)
	return filepath.Join(buildOnce.dir, "acp-test-lsp"+exeSuffix)
}

// frameCheck records everything the bridge writes to stdout, to check that it is only LSP frames.
type frameCheck struct{ testutil.SyncBuffer }

var frameHeader = regexp.MustCompile(`^Content-Length: (\d+)\r\n\r\n`)

// verify reports the first byte of stdout that is not part of a Content-Length frame.
func (f *frameCheck) verify() error {
	b := f.Bytes()
	for len(b) > 0 {
		m := frameHeader.FindSubmatch(b)
		if m == nil {
			return fmt.Errorf("stdout carries something that is not an LSP frame: %q", preview(b))
		}
		n, _ := strconv.Atoi(string(m[1]))
		body := b[len(m[0]):]
		if len(body) < n || !json.Valid(body[:n]) {
			return fmt.Errorf("stdout frame body is not JSON: %q", preview(body))
		}
		b = body[n:]
	}
	return nil
}

func preview(b []byte) string {
	if len(b) > 120 {
		return string(b[:120]) + "…"
	}
	return string(b)
}

// agentOption is the initializationOptions that names the agent to run.
func agentOption(command string, args ...string) map[string]any {
	return map[string]any{"agent": map[string]any{"command": command, "args": args}}
}

// bridgeProc is the real binary, started as an editor starts its language server, with the fake
// editor (internal/test/fakeeditor) on its stdio.
type bridgeProc struct {
	*fakeeditor.Env
	t       testing.TB
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	stdout  *frameCheck
	logFile string
	waited  chan error

	mu sync.Mutex
	// answer, when set, answers window/showMessageRequest (it may block: the editor keeps working);
	// without it the question is closed unanswered.
	answer func(message string, titles []string) string
	said   int // how many of the editor's messages waitMessage has read
}

func startBridge(t testing.TB, args ...string) *bridgeProc {
	t.Helper()
	return startBridgeEnv(t, nil, args...)
}

// startBridgeEnv is startBridge with the bridge's environment (which its agent inherits) set to
// env; nil means this process's.
func startBridgeEnv(t testing.TB, env []string, args ...string) *bridgeProc {
	t.Helper()
	bridge, _ := binaries(t)
	logFile := filepath.Join(t.TempDir(), "bridge.log")
	cmd := exec.Command(bridge, append([]string{"--log-file", logFile, "--log-level", "debug"}, args...)...)
	cmd.Env = env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	b := &bridgeProc{t: t, cmd: cmd, stdin: stdin, stdout: &frameCheck{}, logFile: logFile, waited: make(chan error, 1)}
	ed := fakeeditor.Connect(io.TeeReader(stdout, b.stdout), stdin, fakeeditor.Options{
		Answer: func(message string, titles []string) string {
			b.mu.Lock()
			answer := b.answer
			b.mu.Unlock()
			if answer == nil {
				return ""
			}
			return answer(message, titles)
		},
	})
	b.Env = fakeeditor.NewEnv(t, ed)
	go func() { b.waited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = stdin.Close()
		select {
		case <-b.waited:
		case <-time.After(exitWait):
			_ = cmd.Process.Kill()
			t.Errorf("the bridge did not exit within %v after its stdin closed; %s", exitWait, whereItStopped(logFile))
		}
		_ = ed.Close()
		if t.Failed() {
			log, _ := os.ReadFile(logFile)
			t.Logf("bridge stderr:\n%s\nbridge log:\n%s", stderr.String(), log)
		}
	})
	return b
}

// exitWait is how long the tests wait for the bridge to exit. Its own bounds on leaving add up to
// some 20 s at worst (an agent start under way, an agent that answers nothing and then outlives
// its kill); it normally takes milliseconds. Past exitWait it hangs.
const exitWait = 30 * time.Second

// whereItStopped says, on one line, where a bridge that does not exit got to: whether it saw its
// input end, and the last lines of its log.
func whereItStopped(logFile string) string {
	data, _ := os.ReadFile(logFile)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	lines = lines[max(0, len(lines)-3):]
	for i, l := range lines {
		if len(l) > 300 {
			lines[i] = l[:300] + "…"
		}
	}
	saw := "it never logged that the editor closed the connection"
	if strings.Contains(string(data), "editor closed the connection") {
		saw = "it logged that the editor closed the connection"
	}
	return fmt.Sprintf("%s; its log ends with: %s", saw, strings.Join(lines, " | "))
}

// waitMessage waits for a window/showMessage or logMessage containing want among those that came
// after the last one an earlier waitMessage read, and returns them up to that one.
func (b *bridgeProc) waitMessage(want string) []string {
	b.t.Helper()
	b.mu.Lock()
	from := b.said
	b.mu.Unlock()
	b.Await(fakeeditor.SaidAfter(from, want))
	said := b.Record().Said[from:]
	for i, m := range said {
		if strings.Contains(m, want) {
			b.mu.Lock()
			b.said = from + i + 1
			b.mu.Unlock()
			return said[:i+1]
		}
	}
	return nil // not reached: Await saw it
}

func (b *bridgeProc) setAnswer(f func(message string, titles []string) string) {
	b.mu.Lock()
	b.answer = f
	b.mu.Unlock()
}

// exitCode waits for the process to end and returns its exit code.
func (b *bridgeProc) exitCode() int {
	b.t.Helper()
	select {
	case err := <-b.waited:
		b.waited <- err
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		if err != nil {
			b.t.Fatal(err)
		}
		return 0
	case <-time.After(exitWait):
		b.t.Fatalf("the bridge did not exit within %v; %s", exitWait, whereItStopped(b.logFile))
		return -1
	}
}

// agentPIDs lists the live processes whose command line starts with path.
func agentPIDs(path string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.HasPrefix(cmdline, []byte(path+"\x00")) {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if f := strings.Fields(string(stat)); len(f) > 2 && f[2] == "Z" {
			continue
		}
		pids = append(pids, pid)
	}
	return pids
}

func waitAgentGone(t *testing.T, agent string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(agentPIDs(agent)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the agent still runs after the bridge exited: pids %v", agentPIDs(agent))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func waitAgentLog(t *testing.T, path, method string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if b, err := os.ReadFile(path); err == nil && bytes.Contains(b, []byte(`"method":"`+method+`"`)) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the agent never received %s", method)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func readAgentLog(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	lines := bytes.Split(b, []byte("\n"))
	// The last piece is empty, or a line the agent is still writing: skip it.
	for _, line := range lines[:len(lines)-1] {
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("agent log line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

// TestBinaryInlineCompletionRoundTrip drives the real binary, with the agent named in
// initializationOptions.agent and started as a real child process: suggestion shown, accepted,
// nes/accept received; shutdown and exit end with code 0 and leave no agent process; stdout
// carries only LSP frames.
func TestBinaryInlineCompletionRoundTrip(t *testing.T) {
	_, agent := binaries(t)
	dir := t.TempDir()
	rules := filepath.Join(dir, "rules.json")
	agentLog := filepath.Join(dir, "agent.jsonl")
	if err := os.WriteFile(rules, []byte(`[{"when":"𐐀 = fo","find":"fo","replace":"foo(日本, 😀)"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	b := startBridge(t)
	root := fileURI(dir)
	init := b.InitializeWith(fakeeditor.InitParams{Root: root, ProcessID: os.Getpid(), Encodings: []string{"utf-16"}, Options: agentOption(agent, "--encoding", "utf-32", "--rules", rules, "--log", agentLog)})
	if init.Capabilities.PositionEncoding != "utf-16" {
		t.Fatalf("positionEncoding %q", init.Capabilities.PositionEncoding)
	}
	uri := root + "/a%40b.go"
	b.Open(uri, "package p\n\tx := \"é\"; 𐐀 = f\n")
	// Edits made before the agent is ready are folded into the didOpen it gets when it is: wait
	// for that, so that the edit below reaches the agent as a didChange.
	waitAgentLog(t, agentLog, "document/didOpen")
	// Type the "o": the utf-16 column of the end of "\tx := \"é\"; 𐐀 = f" is 17 (𐐀 counts two).
	b.Change(uri, fakeeditor.Insert(fakeeditor.At(1, 17), "o"))
	items, err := b.Inline(uri, fakeeditor.At(1, 18))
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 1 {
		log, _ := os.ReadFile(agentLog)
		t.Fatalf("items %+v; agent log:\n%s", items, log)
	}
	it := items[0]
	if it.InsertText != "foo(日本, 😀)" || it.Range == nil || *it.Range != fakeeditor.Span(fakeeditor.At(1, 16), fakeeditor.At(1, 18)) {
		t.Fatalf("item %+v, want foo(日本, 😀) over 1:16-1:18", it)
	}
	b.Accept(uri, it)
	if got := b.Text(uri); got != "package p\n\tx := \"é\"; 𐐀 = foo(日本, 😀)\n" {
		t.Errorf("the editor's text after accepting: %q", got)
	}
	// The bridge asks for the next suggestion at once after the accept's change (asking ahead).
	deadline := time.Now().Add(10 * time.Second)
	for b, _ := os.ReadFile(agentLog); bytes.Count(b, []byte(`"method":"nes/suggest"`)) < 2; b, _ = os.ReadFile(agentLog) {
		if time.Now().After(deadline) {
			t.Fatalf("the agent was not asked for the next suggestion after the accept:\n%s", b)
		}
		time.Sleep(10 * time.Millisecond)
	}
	b.Shutdown()
	if code := b.exitCode(); code != 0 {
		t.Errorf("exit code %d after shutdown and exit, want 0", code)
	}
	waitAgentGone(t, agent)
	var got []string
	for _, m := range readAgentLog(t, agentLog) {
		got = append(got, m["method"].(string))
		if m["method"] == "nes/accept" {
			if id := m["params"].(map[string]any)["id"]; id != it.Command.Arguments[0] {
				t.Errorf("nes/accept for %v, want %v", id, it.Command.Arguments[0])
			}
		}
	}
	// The editor applies the item (a didChange), then runs its command; the bridge asks for the
	// next suggestion at once after that change, so before or after the command (and ends that
	// one, never shown, with a nes/reject at the close, left out here).
	got = slices.DeleteFunc(got, func(m string) bool { return m == "nes/reject" })
	want := []string{
		"initialize nes/start document/didOpen document/didChange nes/suggest document/didChange nes/accept nes/suggest nes/close",
		"initialize nes/start document/didOpen document/didChange nes/suggest document/didChange nes/suggest nes/accept nes/close",
	}
	if j := strings.Join(got, " "); j != want[0] && j != want[1] {
		t.Errorf("the agent received %v, want %s", got, want[0])
	}
	if err := b.stdout.verify(); err != nil {
		t.Error(err)
	}
}

// TestBinaryEndsAgentOnEOF: when the editor goes away without shutdown, the bridge exits 1 and
// ends the agent's process group.
func TestBinaryEndsAgentOnEOF(t *testing.T) {
	_, agent := binaries(t)
	b := startBridge(t, "--", agent)
	b.InitializeWith(fakeeditor.InitParams{})
	deadline := time.Now().Add(10 * time.Second)
	for len(agentPIDs(agent)) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the agent never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
	_ = b.stdin.Close()
	if code := b.exitCode(); code != 1 {
		t.Errorf("exit code %d when the editor went away without shutdown, want 1", code)
	}
	waitAgentGone(t, agent)
}

// TestBinaryWithoutAgent: with no agent configured the bridge starts its own built-in agent, and
// says so in the editor's log.
func TestBinaryWithoutAgent(t *testing.T) {
	b := startBridge(t)
	b.InitializeWith(fakeeditor.InitParams{})
	// In this order, and nothing between them.
	b.waitMessage("no agent is configured; using the built-in agent")
	if seen := b.waitMessage("acp-lsp-bridge-builtin is ready (positions utf-8"); len(seen) != 1 {
		t.Errorf("messages before the one saying the built-in agent is ready: %q", seen[:len(seen)-1])
	}
	b.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": "file:///x.go", "languageId": "go", "version": 1, "text": "x"}})
	var res struct {
		Items []any `json:"items"`
	}
	if err := b.Call("textDocument/inlineCompletion", map[string]any{
		"textDocument": map[string]any{"uri": "file:///x.go"}, "position": map[string]any{"line": 0, "character": 1},
	}, &res); err != nil || len(res.Items) != 0 {
		t.Fatalf("items %v err %v, want an empty list", res.Items, err)
	}
	// Bad input from the editor gets an error and the bridge keeps serving.
	err := b.Call("textDocument/inlineCompletion", map[string]any{
		"textDocument": map[string]any{"uri": "file:///unknown.go"}, "position": map[string]any{"line": 0, "character": 0},
	}, nil)
	if err == nil || !strings.Contains(err.Error(), "document not open") {
		t.Errorf("unknown document: %v", err)
	}
	if err := b.Call("shutdown", nil, nil); err != nil {
		t.Fatal(err)
	}
}

// TestBinaryMalformedFrameKeepsServing: a frame that is not JSON is answered with a parse error and
// the next request is still served.
func TestBinaryMalformedFrameKeepsServing(t *testing.T) {
	bridge, _ := binaries(t)
	cmd := exec.Command(bridge)
	in := strings.Join([]string{
		frame(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}`),
		frame(`{"jsonrpc":"2.0","id":2,"method":`),
		frame(`{"jsonrpc":"2.0","id":3,"method":"shutdown"}`),
		frame(`{"jsonrpc":"2.0","method":"exit"}`),
	}, "")
	cmd.Stdin = strings.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if code := exitCodeOf(err); code != 0 {
		t.Fatalf("exit code %d, want 0\nstderr: %s", code, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{`"code":-32700`, `"id":3,"result":null`} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %s:\n%s", want, out)
		}
	}
	if !strings.Contains(stderr.String(), "malformed message from the editor") {
		t.Errorf("no log line about the malformed message:\n%s", stderr.String())
	}
}

func frame(body string) string {
	return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body)
}

func exitCodeOf(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return -1
		}
		return ee.ExitCode()
	}
	if err != nil {
		return -2
	}
	return 0
}

func TestBinaryFlags(t *testing.T) {
	bridge, _ := binaries(t)
	for _, tc := range []struct {
		args     []string
		code     int
		stdout   string
		stderr   string
		noStdout bool
	}{
		{args: []string{"--help"}, code: 0, stdout: "acp-lsp-bridge [flags] -- AGENT [ARGS...]"},
		{args: []string{"--version"}, code: 0, stdout: "acp-lsp-bridge "},
		{args: []string{"--no-such-flag"}, code: 2, stderr: "flag provided but not defined", noStdout: true},
		{args: []string{"stray"}, code: 2, stderr: `put the agent command after "--"`, noStdout: true},
		{args: []string{"--"}, code: 2, stderr: `"--" must be followed by the agent command`, noStdout: true},
		{args: []string{"--log-level", "loud"}, code: 2, stderr: "--log-level", noStdout: true},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			cmd := exec.Command(bridge, tc.args...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			cmd.Stdin = strings.NewReader("")
			code := exitCodeOf(cmd.Run())
			if code != tc.code {
				t.Errorf("exit code %d, want %d", code, tc.code)
			}
			if !strings.Contains(stdout.String(), tc.stdout) || !strings.Contains(stderr.String(), tc.stderr) {
				t.Errorf("stdout %q stderr %q", stdout.String(), stderr.String())
			}
			if tc.args[0] == "--help" && (stderr.Len() > 0 || strings.Count(stdout.String(), "Usage:") != 1) {
				t.Errorf("--help must print the usage once, to stdout only: stderr %q", stderr.String())
			}
			if tc.noStdout && stdout.Len() > 0 {
				t.Errorf("an error wrote to stdout, which belongs to LSP: %q", stdout.String())
			}
		})
	}
}

// TestDemo: the README's first command runs a session through the real bridge and its built-in
// agent, and prints what a user would see.
func TestDemo(t *testing.T) {
	bridge, _ := binaries(t)
	cmd := exec.Command(bridge, "demo")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("demo: %v\nstderr: %s", err, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{
		// rename propagation: the two other uses of sum, nearest first
		"The agent suggests the next edit, on line 8:\n      8 - \t\tsum += p\n      8 + \t\tacc += p\n",
		"The agent suggests the next edit, on line 10:\n     10 - \treturn sum\n     10 + \treturn acc\n",
		// the repeated edit on the next two lines
		"     15 + \tfmt.Println(\"total:\", total([]int{3, 4}))\n",
		"     16 + \tfmt.Println(\"total:\", total([]int{5, 6}))\n",
		// the buffer after accepting
		"    \tacc := 0\n    \tfor _, p := range prices {\n    \t\tacc += p\n    \t}\n    \treturn acc\n",
		"    \tfmt.Println(\"total:\", total([]int{1, 2}))\n    \tfmt.Println(\"total:\", total([]int{3, 4}))\n    \tfmt.Println(\"total:\", total([]int{5, 6}))\n",
		// what the agent received, from the bridge's own trace
		"What the agent received, in order (from the bridge's --trace): initialize, nes/start, document/didOpen,",
		"nes/accept", "nes/close",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
	// A suggestion ended unaccepted is shown with why, not as a bare nes/reject that reads as
	// the user's refusal.
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "What the agent received") {
			continue
		}
		if strings.Contains(line, "nes/reject,") || strings.Contains(line, "nes/reject ×") {
			t.Errorf("the transcript shows a nes/reject without its reason: %s", line)
		}
		// One order from run to run: each accept right after the change that applied it, before
		// the request the bridge asks at once after that change.
		heard := strings.Split(strings.TrimPrefix(line, "What the agent received, in order (from the bridge's --trace): "), ", ")
		for i, m := range heard {
			if m == "nes/accept" && (i == 0 || heard[i-1] != "document/didChange" || i+1 == len(heard) || heard[i+1] != "nes/suggest") {
				t.Errorf("the transcript's nes/accept at %d is not between the change that applied it and the next nes/suggest: %s", i, line)
			}
		}
	}
	if n := strings.Count(out, "You accept it"); n != 4 {
		t.Errorf("%d suggestions accepted, want 4:\n%s", n, out)
	}
	if strings.Contains(out, "\x1b[") {
		t.Error("demo output is colored although stdout is not a terminal")
	}
}

// TestBinaryTrace: --trace records every message on both wires, one JSON object per line.
func TestBinaryTrace(t *testing.T) {
	_, agent := binaries(t)
	tracePath := filepath.Join(t.TempDir(), "trace.jsonl")
	askAndExit(t, startBridge(t, "--trace", tracePath, "--", agent), 1)
	data, err := os.ReadFile(tracePath)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var rec struct {
			Time    time.Time `json:"time"`
			Dir     string    `json:"dir"`
			Message struct {
				Method string `json:"method"`
			} `json:"message"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil || rec.Time.IsZero() {
			t.Fatalf("trace line %q: %v", line, err)
		}
		seen[rec.Dir+" "+rec.Message.Method] = true
	}
	for _, want := range []string{
		"editor→bridge initialize", "bridge→editor ", "bridge→agent initialize", "agent→bridge ",
		"bridge→agent nes/suggest", "editor→bridge textDocument/inlineCompletion", "bridge→agent nes/close", "editor→bridge exit",
	} {
		if !seen[want] {
			t.Errorf("the trace has no %q; it has %v", want, seen)
		}
	}
}

// askAndExit is a short session with the test agent: once it is ready, a document and n inline
// completions asked for by hand (each reaches the agent as nes/suggest), then shutdown and exit,
// which must end the bridge with 0.
func askAndExit(t *testing.T, b *bridgeProc, n int) {
	t.Helper()
	b.InitializeWith(fakeeditor.InitParams{})
	b.waitMessage("acp-test-agent is ready") // requests before it answer empty, without nes/suggest
	b.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": "file:///t.go", "languageId": "go", "version": 1, "text": "x"}})
	for range n {
		if err := b.Call("textDocument/inlineCompletion", map[string]any{
			"textDocument": map[string]any{"uri": "file:///t.go"}, "position": map[string]any{"line": 0, "character": 1},
			"context": map[string]any{"triggerKind": 1},
		}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Call("shutdown", nil, nil); err != nil {
		t.Fatal(err)
	}
	b.Notify("exit", nil)
	if code := b.exitCode(); code != 0 {
		t.Fatalf("exit code %d", code)
	}
}

// TestBinaryProfileAndExecTrace: --cpu-profile and --exec-trace, the flags for work on the
// bridge's speed, leave files that Go's tools read, and the execution trace shows each request the
// editor made on its way through the bridge (traceSteps).
func TestBinaryProfileAndExecTrace(t *testing.T) {
	bridgeBin, agent := binaries(t)
	dir := t.TempDir()
	profile, execTrace := filepath.Join(dir, "cpu.pprof"), filepath.Join(dir, "exec.trace")
	askAndExit(t, startBridge(t, "--cpu-profile", profile, "--exec-trace", execTrace, "--", agent), 20)
	// What the files start with: gzip (pprof), and the execution trace's header.
	for path, magic := range map[string]string{profile: "\x1f\x8b", execTrace: "go 1."} {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(data), magic) {
			t.Errorf("%s starts %q, want %q", filepath.Base(path), preview(data[:min(len(data), 16)]), magic)
		}
	}
	if runtime.GOOS == "windows" {
		return // Go's tools run on the host, not under Wine: the headers above are what is checked
	}
	out, err := exec.Command("go", "tool", "pprof", "-top", bridgeBin, profile).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Type: cpu") {
		t.Errorf("go tool pprof -top: %v\n%s", err, preview(out))
	}
	// Each request is seen on its way through the bridge, step by step.
	steps := traceSteps(t, execTrace)
	if n := len(steps[stepResultOut]); n != 20 {
		t.Errorf("the execution trace shows %d requests answered after the agent's answer, want 20:\n%s", n, stepTable(steps))
	}
}

// readPIDs reads the "role pid" lines of a test agent's --pid-file.
func readPIDs(path string) []int {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var pids []int
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fs := strings.Fields(sc.Text()); len(fs) == 2 {
			if pid, err := strconv.Atoi(fs[1]); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// waitPIDs waits until the pid file names a process of each role and returns the pids.
func waitPIDs(t *testing.T, path string, roles ...string) []int {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		b, _ := os.ReadFile(path)
		missing := ""
		for _, r := range roles {
			if !bytes.Contains(b, []byte(r+" ")) {
				missing = r
			}
		}
		if missing == "" {
			return readPIDs(path)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s process in %s:\n%s", missing, path, b)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
