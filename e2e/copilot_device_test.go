//go:build linux

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"
)

// The bridge's sign-in with a code (GitHub's device flow), for GitHub Copilot, through the real
// binary with the Copilot stand-in (acp-test-agent --copilot, internal/test/testagent/copilot.go)
// in a fresh HOME over SSH, where no browser can reach the user. The bridge runs the agent's
// command in its LSP mode (--acp replaced by --stdio), whose device flow shows the code
// WXYZ-1234 and waits until the file ACP_TEST_COPILOT_CODE_ENTERED names exists (the user
// entering the code on their phone), then saves the sign-in in Copilot's store, which the ACP
// mode reads.

const (
	copilotCodeTitle  = "Sign in with a code (any device)"
	copilotDeviceCode = "WXYZ-1234"
)

// copilotDeviceDoc is the document of these tests: lines 3 and 4 to type on.
const copilotDeviceDoc = "package main\n\nfunc f() error {\n\tretur\n\tfmt.Prin\n}\n"

// copilotDevice is one bridge running the stand-in, its process tree watched.
type copilotDevice struct {
	*bridgeProc
	t         *testing.T
	tree      *processTree
	home      string // the fresh HOME
	agentLog  string
	entered   string // the file that says the code was entered
	uri       string
	questions chan copilotQuestion
}

type copilotQuestion struct {
	message string
	titles  []string
}

// copilotStore is Copilot's store of sign-ins in the fresh HOME (XDG_CONFIG_HOME is home/.config).
func (d *copilotDevice) copilotStore() string {
	return filepath.Join(d.home, ".config", "github-copilot")
}

// startCopilotDevice starts the bridge with the stand-in in a fresh HOME, over SSH. With entered,
// ACP_TEST_COPILOT_CODE_ENTERED names a file (not yet there); without, it is unset (the stand-in's
// LSP mode then fails as the real server does offline). answers are the user's answers to the
// questions, in turn ("Not now" once they run out). prepare, when set, runs on the fresh HOME
// before the bridge starts.
func startCopilotDevice(t *testing.T, entered bool, answers []string, prepare func(home string)) *copilotDevice {
	t.Helper()
	skipOnWindows(t, "processes are watched through /proc")
	_, agent := binaries(t)
	subreaper(t)
	dir := t.TempDir()
	d := &copilotDevice{t: t, home: filepath.Join(dir, "home"), agentLog: filepath.Join(dir, "agent.jsonl"), questions: make(chan copilotQuestion, 8)}
	if err := os.MkdirAll(d.home, 0o755); err != nil {
		t.Fatal(err)
	}
	if prepare != nil {
		prepare(d.home)
	}
	rules := filepath.Join(dir, "rules.json")
	if err := os.WriteFile(rules, []byte(copilotRules), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(credentialFreeEnv(d.home), "SSH_CONNECTION=10.0.0.1 50000 10.0.0.2 22")
	if entered {
		d.entered = filepath.Join(dir, "entered")
		env = append(env, "ACP_TEST_COPILOT_CODE_ENTERED="+d.entered)
	}
	d.bridgeProc = startBridgeEnv(t, env, "--suggest-timeout", "1m")
	d.tree = watchTree(d.cmd.Process.Pid)
	t.Cleanup(d.tree.stop)
	d.setAnswer(func(message string, titles []string) string {
		d.questions <- copilotQuestion{message, titles}
		if len(answers) == 0 {
			return "Not now"
		}
		a := answers[0]
		answers = answers[1:]
		return a
	})
	ws := filepath.Join(dir, "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	root := fileURI(ws)
	d.InitializeWith(fakeeditor.InitParams{Root: root, ProcessID: os.Getpid(),
		Options: agentOption(agent, "--copilot", "--rules", rules, "--log", d.agentLog, "--acp")})
	d.uri = root + "/main.go"
	d.Open(d.uri, copilotDeviceDoc)
	return d
}

// next waits for the next question.
func (d *copilotDevice) next(what string) copilotQuestion {
	d.t.Helper()
	select {
	case q := <-d.questions:
		return q
	case <-time.After(20 * time.Second):
		r := d.Record()
		d.t.Fatalf("%s: no question within 20 s; the editor got messages %q", what, r.Messages)
	}
	return copilotQuestion{}
}

// lspRuns are the stand-in's LSP-mode processes the bridge started (by its log: "agent started"
// with a command ending in --stdio), each with how it exited as the bridge saw it ("" while it
// runs). The process tree may miss one that ran for milliseconds (the sign-in failed at once);
// the bridge's log does not.
func (d *copilotDevice) lspRuns() map[int]string {
	d.t.Helper()
	b, _ := os.ReadFile(d.logFile)
	runs := map[int]string{}
	for _, line := range strings.Split(string(b), "\n") {
		var e struct {
			Message string `json:"message"`
			PID     int    `json:"pid"`
			Command string `json:"command"`
			Status  string `json:"status"`
		}
		if json.Unmarshal([]byte(line), &e) != nil {
			continue
		}
		switch {
		case e.Message == "agent started" && strings.HasSuffix(e.Command, " --stdio"):
			runs[e.PID] = ""
		case e.Message == "agent exited":
			if _, ok := runs[e.PID]; ok {
				runs[e.PID] = e.Status
			}
		}
	}
	return runs
}

// lspGone waits until every LSP-mode process the bridge started (at least one) has exited, as
// the bridge saw it, and is no longer in /proc but as a zombie; each must have exited by itself
// with status 0 (shutdown, then exit), not been killed.
func (d *copilotDevice) lspGone(within time.Duration) {
	d.t.Helper()
	deadline := time.Now().Add(within)
	for {
		runs := d.lspRuns()
		if len(runs) == 0 {
			d.t.Fatalf("the bridge never started the LSP mode (--stdio); its tree: %v", d.tree.seen())
		}
		var left []int
		for pid, status := range runs {
			st, ok := procStat(pid)
			if status == "" || (ok && st.state != 'Z') {
				left = append(left, pid)
			}
		}
		if len(left) == 0 {
			for pid, status := range runs {
				if status != "exit status 0" {
					d.t.Errorf("the LSP-mode process %d ended with %q, want exit status 0 (shutdown, then exit)", pid, status)
				}
			}
			return
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("the LSP-mode process %v still runs %v after the sign-in ended", left, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// logged lists the agent log's records of method (both modes write to it).
func (d *copilotDevice) logged(method string) []map[string]any {
	d.t.Helper()
	var out []map[string]any
	for _, m := range readAgentLog(d.t, d.agentLog) {
		if m["method"] == method {
			p, _ := m["params"].(map[string]any)
			out = append(out, p)
		}
	}
	return out
}

// methods lists the methods of the agent log, in order.
func (d *copilotDevice) methods() []string {
	d.t.Helper()
	var out []string
	for _, m := range readAgentLog(d.t, d.agentLog) {
		out = append(out, m["method"].(string))
	}
	return out
}

// suggests checks that the stand-in's suggestions reach the editor and can be taken: "return nil"
// as an inline completion on line 3, accepted; "fmt.Println(err)" as a code action on line 4,
// applied.
func (d *copilotDevice) suggests() {
	d.t.Helper()
	items, err := d.Inline(d.uri, fakeeditor.At(3, 6))
	if err != nil {
		d.t.Fatalf("inline completion: %v", err)
	}
	if len(items) != 1 || items[0].InsertText != "return nil" {
		d.t.Fatalf("inline completion once signed in: %+v, want the stand-in's return nil; the agent received %v", items, d.methods())
	}
	d.Accept(d.uri, items[0])
	if got, want := d.Text(d.uri), strings.Replace(copilotDeviceDoc, "\tretur\n", "\treturn nil\n", 1); got != want {
		d.t.Errorf("the text after accepting:\n%q\nwant\n%q", got, want)
	}
	waitAgentLog(d.t, d.agentLog, "nes/accept")
	var action *fakeeditor.CodeAction
	for deadline := time.Now().Add(10 * time.Second); action == nil; time.Sleep(50 * time.Millisecond) {
		actions, err := d.CodeActions(d.uri, fakeeditor.Span(fakeeditor.At(4, 9), fakeeditor.At(4, 9)))
		if err != nil {
			d.t.Fatalf("code actions: %v", err)
		}
		for i, a := range actions {
			if strings.Contains(a.Title, "`fmt.Prin` → `fmt.Println(err)`") {
				action = &actions[i]
			}
		}
		if action == nil && time.Now().After(deadline) {
			d.t.Fatalf("no code action for fmt.Println(err) on line 4: %+v", actions)
		}
	}
	d.ApplyAction(*action)
	if got, want := d.Text(d.uri), "package main\n\nfunc f() error {\n\treturn nil\n\tfmt.Println(err)\n}\n"; got != want {
		d.t.Errorf("the text after the code action:\n%q\nwant\n%q", got, want)
	}
}

// end shuts the bridge down and checks that it exits 0 and leaves no process. With seen, a
// process of the LSP mode must have been seen in the bridge's tree (one that waited for the code
// ran long enough).
func (d *copilotDevice) end(seen bool) {
	d.t.Helper()
	d.Shutdown()
	if code := d.exitCode(); code != 0 {
		d.t.Errorf("exit code %d after shutdown and exit, want 0", code)
	}
	command := ""
	if seen {
		command = " --stdio"
	}
	noProcessLeft(d.t, d.tree, command)
}

// TestCopilotDeviceSignIn: not signed in, over SSH. The user is asked with the code first; they
// take it and are shown the address and the code; the bridge waits (the editor keeps working,
// requests answer empty at once) until they have entered it, then says they are signed in as the
// account Copilot names, and suggestions flow: an inline completion and a code action, both
// taken. The LSP-mode process got initialize (naming the bridge), signInInitiate,
// finishDeviceFlow, shutdown and exit, and is gone; its window/showDocument was answered
// {success: false}; the ACP mode then authenticated without a browser and started its session.
func TestCopilotDeviceSignIn(t *testing.T) {
	d := startCopilotDevice(t, true, []string{copilotCodeTitle}, nil)
	q := d.next("the sign-in question")
	if want := []string{copilotCodeTitle, "Sign in with GitHub", "Not now"}; !slices.Equal(q.titles, want) {
		t.Errorf("the sign-in question offers %q, want %q", q.titles, want)
	}
	if !strings.Contains(q.message, "GitHub Copilot needs you to sign in") || !strings.Contains(q.message, "this is an SSH session") {
		t.Errorf("the question %q does not say that GitHub Copilot needs a sign-in and that no browser can open here", q.message)
	}
	want := "acp-lsp-bridge: to sign in to GitHub Copilot, open https://github.com/login/device on any device and enter the code " +
		copilotDeviceCode + " (the code lasts 15m0s). Suggestions start once you have."
	d.AwaitFor(20*time.Second, fakeeditor.ShownMessage(copilotDeviceCode))
	if m := said(d.Record().Messages, copilotDeviceCode); m != want {
		t.Errorf("the code was shown as\n%q\nwant\n%q", m, want)
	}
	// The LSP mode waits for the code, having asked to open the address.
	waitAgentLog(t, d.agentLog, "test/showDocumentAnswer")
	// Meanwhile the editor keeps working: no suggestion, at once.
	start := time.Now()
	items, err := d.Inline(d.uri, fakeeditor.At(3, 6))
	if el := time.Since(start); err != nil || len(items) != 0 || el > atOnce {
		t.Errorf("inline completion while the code waits: %v, error %v, after %v; want none within %v", items, err, el, atOnce)
	}
	time.Sleep(300 * time.Millisecond)
	if m := said(d.Record().Messages, "signed in to GitHub Copilot"); m != "" {
		t.Fatalf("%q before the code was entered", m)
	}
	if _, err := os.Stat(filepath.Join(d.copilotStore(), "apps.json")); err == nil {
		t.Fatal("Copilot's store holds a sign-in before the code was entered")
	}

	// The user enters the code on their phone.
	if err := os.WriteFile(d.entered, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	d.AwaitFor(20*time.Second, fakeeditor.ShownMessage("signed in to GitHub Copilot"))
	if m := said(d.Record().Messages, "signed in to GitHub Copilot"); m != "acp-lsp-bridge: signed in to GitHub Copilot as octocat." {
		t.Errorf("after the code was entered: %q, want signed in as octocat", m)
	}
	d.Await(fakeeditor.StatusIs("ready", ""))
	d.lspGone(10 * time.Second)
	d.suggests()
	select {
	case q := <-d.questions:
		t.Errorf("asked again after signing in: %q", q.message)
	default:
	}

	// What each mode received.
	inits := d.logged("initialize")
	var lspInit map[string]any
	for _, p := range inits {
		if _, ok := p["processId"]; ok {
			lspInit = p
		}
	}
	ci, _ := lspInit["clientInfo"].(map[string]any)
	opts, _ := lspInit["initializationOptions"].(map[string]any)
	if ci["name"] != "acp-lsp-bridge" || opts["editorInfo"] == nil || opts["editorPluginInfo"] == nil {
		t.Errorf("the LSP mode's initialize %v: want clientInfo acp-lsp-bridge and initializationOptions editorInfo, editorPluginInfo", lspInit)
	}
	m := d.methods()
	lsp := slices.DeleteFunc(slices.Clone(m), func(s string) bool {
		return !slices.Contains([]string{"initialized", "signInInitiate", "workspace/executeCommand", "test/showDocumentAnswer", "shutdown", "exit"}, s)
	})
	if want := []string{"initialized", "signInInitiate", "workspace/executeCommand", "test/showDocumentAnswer", "shutdown", "exit"}; !slices.Equal(lsp, want) {
		t.Errorf("the LSP mode received %v, want %v (all: %v)", lsp, want, m)
	}
	if c := d.logged("workspace/executeCommand"); len(c) != 1 || c[0]["command"] != "github.copilot.finishDeviceFlow" {
		t.Errorf("workspace/executeCommand %v, want github.copilot.finishDeviceFlow", c)
	}
	if a := d.logged("test/showDocumentAnswer"); len(a) != 1 || a[0]["success"] != false {
		t.Errorf("the bridge answered window/showDocument with %v, want {success: false}", a)
	}
	// The ACP mode: nes/start refused, then (after the code) authenticate and nes/start.
	i := slices.Index(m, "signInInitiate")
	if i < 0 || slices.Index(m, "nes/start") > i || !slices.Contains(m[i:], "authenticate") || !slices.Contains(m[i:], "nes/start") {
		t.Errorf("the agent received %v: want nes/start, the device flow, then authenticate and nes/start", m)
	}
	if a := d.logged("authenticate"); len(a) != 1 || a[0]["methodId"] != "github_oauth" {
		t.Errorf("authenticate %v, want one github_oauth", a)
	}
	if b, err := os.ReadFile(filepath.Join(d.copilotStore(), "apps.json")); err != nil || !strings.Contains(string(b), `"user":"octocat"`) {
		t.Errorf("Copilot's store after the sign-in: %s %v", b, err)
	}
	d.end(true)
}

// TestCopilotDeviceAlreadySignedIn: Copilot's store holds a sign-in when the bridge starts (saved
// by an earlier sign-in, or by Copilot's own tools): no question at all, suggestions at once, and
// no LSP mode run.
func TestCopilotDeviceAlreadySignedIn(t *testing.T) {
	d := startCopilotDevice(t, true, nil, func(home string) {
		store := filepath.Join(home, ".config", "github-copilot")
		if err := os.MkdirAll(store, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(store, "apps.json"), []byte(`{"github.com:Iv1.b507a08c87ecfe98":{"user":"octocat","oauth_token":"gho_test"}}`), 0o600); err != nil {
			t.Fatal(err)
		}
	})
	d.Await(fakeeditor.StatusIs("ready", ""))
	d.suggests()
	select {
	case q := <-d.questions:
		t.Errorf("asked %q (%q) though Copilot's store holds a sign-in", q.message, q.titles)
	default:
	}
	if r := d.Record(); len(r.Questions) != 0 {
		t.Errorf("questions %q", r.Questions)
	}
	m := d.methods()
	for _, not := range []string{"authenticate", "signInInitiate"} {
		if slices.Contains(m, not) {
			t.Errorf("the agent received %s: %v", not, m)
		}
	}
	if n := len(d.logged("nes/start")); n != 1 {
		t.Errorf("%d nes/start, want 1 (accepted at once): %v", n, m)
	}
	if runs := d.lspRuns(); len(runs) != 0 {
		t.Errorf("the LSP mode ran: pids %v", runs)
	}
	d.end(false)
}

// TestCopilotDeviceOffline: the device flow fails at once (what the real server answers offline,
// here without ACP_TEST_COPILOT_CODE_ENTERED): the question comes back, saying why, with the
// same choices; "Not now" ends with the ways to sign in without a browser. The LSP-mode process
// is gone, and so is every other once the editor leaves.
func TestCopilotDeviceOffline(t *testing.T) {
	d := startCopilotDevice(t, false, []string{copilotCodeTitle, "Not now"}, nil)
	q := d.next("the sign-in question")
	choices := []string{copilotCodeTitle, "Sign in with GitHub", "Not now"}
	if !slices.Equal(q.titles, choices) {
		t.Errorf("the sign-in question offers %q, want %q", q.titles, choices)
	}
	q = d.next("the question after the code failed")
	if want := "acp-lsp-bridge: signing in to GitHub Copilot with a code failed (Could not log in with device flow on https://github.com/: getaddrinfo ENOTFOUND github.com). Try again?"; q.message != want {
		t.Errorf("after the code failed, the question\n%q\nwant\n%q", q.message, want)
	}
	if !slices.Equal(q.titles, choices) {
		t.Errorf("asked again with %q, want %q", q.titles, choices)
	}
	d.AwaitFor(20*time.Second, fakeeditor.ShownMessage("GitHub Copilot is not signed in"))
	if m := said(d.Record().Messages, copilotDeviceCode); m != "" {
		t.Errorf("a code was shown though the device flow failed: %q", m)
	}
	d.lspGone(10 * time.Second)
	if m := d.methods(); !slices.Contains(m, "signInInitiate") || slices.Contains(m, "workspace/executeCommand") || !slices.Contains(m, "shutdown") {
		t.Errorf("the agent received %v: want signInInitiate (failed), no finishDeviceFlow, and shutdown", m)
	}
	if _, err := os.Stat(d.copilotStore() + "/apps.json"); err == nil {
		t.Error("Copilot's store holds a sign-in though the device flow failed")
	}
	d.end(false)
}

// TestCopilotDeviceEditorLeavesWhileWaiting: the editor shuts down while the bridge waits for
// the code: the bridge exits at once with status 0, the LSP-mode process (which still waits) and
// every other process end, and nothing is saved.
func TestCopilotDeviceEditorLeavesWhileWaiting(t *testing.T) {
	d := startCopilotDevice(t, true, []string{copilotCodeTitle}, nil)
	d.next("the sign-in question")
	d.AwaitFor(20*time.Second, fakeeditor.ShownMessage(copilotDeviceCode))
	waitAgentLog(t, d.agentLog, "test/showDocumentAnswer")
	runs := d.lspRuns()
	if len(runs) != 1 {
		t.Fatalf("LSP-mode processes started: %v, want one", runs)
	}
	start := time.Now()
	d.end(false) // the process tree may have missed it: its pid is in the bridge's log
	el := time.Since(start)
	if el > 5*time.Second {
		t.Errorf("the bridge took %v to exit while the code waited", el)
	}
	var pids []int
	for pid := range runs {
		pids = append(pids, pid)
	}
	waitGone(t, 10*time.Second, pids)
	if m := d.methods(); !slices.Contains(m, "shutdown") {
		// Not required: the process is gone all the same. Said for the record.
		t.Logf("the bridge exited (after %v) without asking the LSP mode to shut down; the agent received %v", el, m)
	}
	if _, err := os.Stat(filepath.Join(d.copilotStore(), "apps.json")); err == nil {
		t.Error("Copilot's store holds a sign-in though the code was never entered")
	}
}
