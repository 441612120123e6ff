//go:build linux

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"
)

// realAgent is a real coding agent from npm (tools/install-real-agents.sh), and what it does
// without credentials, as probed by hand (docs/real-agents.md).
type realAgent struct {
	name    string   // the subtest's name
	pkg     string   // the npm package, in $REAL_AGENTS/..
	version string   // the package version these expectations were probed with
	command string   // in $REAL_AGENTS
	args    []string // its arguments for ACP
	title   string   // agentInfo.title: what the bridge calls it
	// signIn are the buttons of the sign-in question: the names of initialize's authMethods, in
	// the agent's order (as the bridge sends clientCapabilities.auth.terminal), then "Not now".
	signIn []string
	// askedAt is the request the agent first answers auth_required (-32000): session/new, so
	// the question comes as the agent starts, or session/prompt (session/new succeeds without
	// credentials), so it comes after the first request that the bridge prompts.
	askedAt string
}

var realAgents = []realAgent{
	{
		name: "codex", pkg: "@zed-industries/codex-acp", version: "0.16.0", command: "codex-acp", title: "Codex",
		// chatgpt (type agent), codex-api-key and openai-api-key (env_var)
		signIn:  []string{"Login with ChatGPT", "Use CODEX_API_KEY", "Use OPENAI_API_KEY", "Not now"},
		askedAt: "session/new", // -32000 "Authentication required"
	},
	{
		name: "claude", pkg: "@zed-industries/claude-agent-acp", version: "0.23.1", command: "claude-agent-acp", title: "Claude Agent",
		// claude-login (type terminal, args --cli), offered to clients with auth.terminal only
		signIn:  []string{"Log in with Claude", "Not now"},
		askedAt: "session/prompt", // -32000 "Authentication required"
	},
	{
		name: "gemini", pkg: "@google/gemini-cli", version: "0.61.0", command: "gemini", args: []string{"--acp"}, title: "Gemini CLI",
		// oauth-personal, gemini-api-key, vertex-ai, gateway (all of type agent)
		signIn:  []string{"Log in with Google", "Gemini API key", "Vertex AI", "AI API Gateway", "Not now"},
		askedAt: "session/new", // -32000 "Gemini API key is missing or not configured."
	},
}

// What the user is told, and what the test looks for.
const (
	// viaPrompts is in the message saying that the agent is asked through prompts.
	viaPrompts = "through prompts"
	// noNES is in the message of a bridge that ends an agent without Next Edit Suggestions.
	noNES = "does not offer Next Edit Suggestions"
)

// startFailures are in the messages of an agent that could not start, or refused, or ended.
var startFailures = []string{"cannot start the agent", "did not initialize", "refused to start", "exited (", "stopped restarting"}

// atOnce bounds the answer to a request while the agent waits for the user to sign in: well under
// the bridge's prompt timeout (30 s) and its --suggest-timeout (1 m here), so that a request held
// until either ends fails.
const atOnce = 5 * time.Second

// TestRealAgentsWithoutCredentials runs the real coding agents (Codex, Claude, Gemini over ACP,
// from npm) through the real bridge with no credentials at all, as in CI: a fresh HOME and XDG
// folders, and an environment holding nothing but PATH, the locale and TMPDIR. None offers Next
// Edit Suggestions, so the bridge asks them through prompts. For each, what the user sees:
//
//	(a) the bridge keeps the agent: no "does not offer Next Edit Suggestions", and a message
//	    saying that it is asked through prompts;
//	(b) a sign-in question whose buttons are the agent's own auth methods, then "Not now" (which
//	    the user picks);
//	(c) an invoked inline completion and a code action answer empty at once: nothing waits for
//	    the prompt timeout;
//	(d) after shutdown and exit, the bridge exits 0 and every process of its tree seen while it
//	    ran (the agent, what the agent started, the guard) is gone.
func TestRealAgentsWithoutCredentials(t *testing.T) {
	skipIfShort(t, "the real agents from npm")
	bin := os.Getenv("REAL_AGENTS")
	if bin == "" {
		skipWithoutPeer(t, `REAL_AGENTS is not set: eval "$(bash tools/install-real-agents.sh)"`)
	}
	subreaper(t)
	for _, ra := range realAgents {
		t.Run(ra.name, func(t *testing.T) { testRealAgent(t, bin, ra) })
	}
}

func testRealAgent(t *testing.T, bin string, ra realAgent) {
	command := filepath.Join(bin, ra.command)
	if _, err := os.Stat(command); err != nil {
		t.Fatalf("REAL_AGENTS=%s has no %s (tools/install-real-agents.sh installs it): %v", bin, ra.command, err)
	}
	// The expectations hold for the version probed: a new pin needs a new probe.
	if v := installedVersion(t, bin, ra.pkg); v != ra.version {
		t.Fatalf("%s %s is installed, but these expectations were probed with %s: probe it again (docs/real-agents.md) and update realAgents", ra.pkg, v, ra.version)
	}

	// (d) runs after the bridge's end in any case: registered before startBridgeEnv, this cleanup
	// runs after the one that closes the bridge's stdin and waits for it to exit, so that a test
	// failing early checks for processes left all the same.
	var tree *processTree
	checked := false
	t.Cleanup(func() {
		if tree != nil && !checked {
			noProcessLeft(t, tree, "")
		}
	})
	b := startBridgeEnv(t, credentialFreeEnv(t.TempDir()), "--suggest-timeout", "1m")
	tree = watchTree(b.cmd.Process.Pid)
	type question struct {
		message string
		titles  []string
	}
	questions := make(chan question, 8)
	b.setAnswer(func(message string, titles []string) string {
		select {
		case questions <- question{message, titles}:
		default:
		}
		return "Not now"
	})

	ws := t.TempDir()
	root := fileURI(ws)
	b.InitializeWith(fakeeditor.InitParams{Root: root, ProcessID: os.Getpid(), Options: agentOption(command, ra.args...)})
	uri := root + "/main.go"
	text := "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n"
	if err := os.WriteFile(filepath.Join(ws, "main.go"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	b.Open(uri, text)
	at := fakeeditor.At(3, 14)

	// (a) Kept: the agent is started, initialized, and neither ended nor failed.
	b.AwaitFor(time.Minute, fakeeditor.Expectation{
		Description: fmt.Sprintf("a sign-in question, a message containing %q, or word that %s was ended or failed", viaPrompts, ra.title),
		Met: func(r *fakeeditor.Record) bool {
			return len(r.Questions) > 0 || said(r.Said, viaPrompts) != "" || said(r.Said, noNES) != "" || said(r.Said, startFailures...) != ""
		},
	})
	if m := said(b.Record().Said, noNES); m != "" {
		t.Fatalf("(a) the bridge did not keep %s, which has no Next Edit Suggestions; it said: %q", ra.title, m)
	}
	if m := said(b.Record().Said, startFailures...); m != "" {
		t.Fatalf("(a) %s did not run: %q", ra.title, m)
	}

	// requestEmpty sends an invoked inline completion and a code action (requests the user made,
	// which the bridge prompts for) and checks that each answers empty at once.
	requestEmpty := func(step string) {
		t.Helper()
		start := time.Now()
		items, err := b.InlineTriggered(uri, at, 1)
		if d := time.Since(start); err != nil || len(items) != 0 || d > atOnce {
			t.Errorf("%s: inline completion answered %v, error %v, after %v; want no items within %v", step, items, err, d.Round(time.Millisecond), atOnce)
		}
		start = time.Now()
		actions, err := b.CodeActionsTriggered(uri, fakeeditor.Span(at, at), 1)
		if d := time.Since(start); err != nil || len(actions) != 0 || d > atOnce {
			t.Errorf("%s: code action answered %v, error %v, after %v; want no actions within %v", step, actions, err, d.Round(time.Millisecond), atOnce)
		}
	}

	// (b) The sign-in question, with the agent's own methods.
	if ra.askedAt == "session/prompt" {
		// The agent opened its session without credentials: the first prompt finds out.
		b.AwaitFor(time.Minute, fakeeditor.Expectation{
			Description: fmt.Sprintf("word that %s is ready, or a sign-in question", ra.title),
			Met:         func(r *fakeeditor.Record) bool { return fakeeditor.Ready().Met(r) || len(r.Questions) > 0 },
		})
		requestEmpty("(c) the first request, which the agent refuses for want of credentials")
	}
	var q question
	select {
	case q = <-questions:
	case <-time.After(time.Minute):
		r := b.Record()
		t.Fatalf("(b) the user was never asked to sign in to %s (it answers %s with auth_required); the editor got messages %q, log messages %q",
			ra.title, ra.askedAt, r.Messages, r.Logs)
	}
	if !strings.Contains(q.message, ra.title) || !strings.Contains(q.message, "sign in") {
		t.Errorf("(b) the question %q does not ask to sign in to %s", q.message, ra.title)
	}
	if !slices.Equal(q.titles, ra.signIn) {
		t.Errorf("(b) the sign-in question offers %q, want %q (the agent's authMethods, then Not now)", q.titles, ra.signIn)
	}

	// (c) Declined: nothing is held.
	requestEmpty("(c) after Not now")

	// (a) The word that suggestions come through prompts, by now.
	if m := said(b.Record().Said, viaPrompts); m == "" {
		t.Errorf("(a) no message says that %s is asked %s; the editor got %q", ra.title, viaPrompts, b.Record().Said)
	}

	// (d) No process left.
	b.Shutdown()
	if code := b.exitCode(); code != 0 {
		t.Errorf("(d) exit code %d after shutdown and exit, want 0", code)
	}
	checked = true
	noProcessLeft(t, tree, command)
}

// noProcessLeft checks, once the bridge has exited, that every process seen in its tree is gone
// within 10 s. With command set, a process running it must have been seen.
func noProcessLeft(t *testing.T, tree *processTree, command string) {
	t.Helper()
	tree.stop()
	seen := tree.seen()
	if command != "" && !slices.ContainsFunc(seen, func(p treeProc) bool { return strings.Contains(p.cmdline, command) }) {
		t.Fatalf("(d) no process of %s was seen in the bridge's tree while it ran (seen: %v): the check for processes left would prove nothing", command, seen)
	}
	var pids []int
	for _, p := range seen {
		if p.alive() {
			pids = append(pids, p.pid)
		}
	}
	t.Logf("(d) processes seen in the bridge's tree: %v", seen)
	waitGone(t, 10*time.Second, pids)
}

// said returns the first message containing one of substrs, or "".
func said(messages []string, substrs ...string) string {
	for _, m := range messages {
		for _, s := range substrs {
			if strings.Contains(m, s) {
				return m
			}
		}
	}
	return ""
}

// installedVersion reads the version of the npm package pkg installed beside the folder of its
// commands (node_modules/.bin).
func installedVersion(t *testing.T, bin, pkg string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(bin, "..", pkg, "package.json"))
	if err != nil {
		t.Fatalf("the version of %s: %v", pkg, err)
	}
	var m struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s's package.json: %v", pkg, err)
	}
	return m.Version
}

// credentialFreeEnv is an environment where an agent finds no credentials: HOME and the XDG
// folders in home (empty), and of this process's environment only PATH (for node), the locale and
// TMPDIR. Every API key, cloud token and config folder setting (OPENAI_API_KEY, CODEX_HOME,
// ANTHROPIC_API_KEY, CLAUDE_CONFIG_DIR, GEMINI_API_KEY, GOOGLE_*, AWS_*, ...) stays out, and so
// does IS_SANDBOX, which changes what claude-agent-acp does as root (docs/real-agents.md).
func credentialFreeEnv(home string) []string {
	env := []string{
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
	}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "PATH" || k == "TMPDIR" || k == "LANG" || strings.HasPrefix(k, "LC_") {
			env = append(env, kv)
		}
	}
	return env
}

// treeProc is a process seen in the bridge's tree.
type treeProc struct {
	pid     int
	start   string // its start time (/proc/PID/stat), which tells it from a later process with its pid
	cmdline string
}

func (p treeProc) String() string { return fmt.Sprintf("%d %q", p.pid, p.cmdline) }

// alive reports whether the process still exists (a zombie counts), and is the one seen.
func (p treeProc) alive() bool {
	_, start, ok := procGroupStart(p.pid)
	return ok && start == p.start
}

// processTree records, while it runs, every process descending from a root process, and every
// process in the process group of one of them (which an orphan keeps) but the root's and this
// test's groups.
type processTree struct {
	root int
	skip map[int]bool // process groups not followed
	done chan struct{}
	once sync.Once
	wg   sync.WaitGroup

	mu    sync.Mutex
	procs map[int]treeProc
	pgids map[int]bool
}

func watchTree(root int) *processTree {
	w := &processTree{root: root, skip: map[int]bool{os.Getpid(): true, syscall.Getpgrp(): true}, done: make(chan struct{}), procs: map[int]treeProc{}, pgids: map[int]bool{}}
	if pgid, _, ok := procGroupStart(root); ok {
		w.skip[pgid] = true
	}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		for {
			w.sample()
			select {
			case <-w.done:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	return w
}

func (w *processTree) sample() {
	entries, _ := os.ReadDir("/proc")
	parent, group := map[int]int{}, map[int]int{}
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err != nil {
			continue
		}
		st, ok := procStat(pid)
		if !ok {
			continue
		}
		pgid, _, _ := procGroupStart(pid)
		parent[pid], group[pid] = st.ppid, pgid
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	inTree := func(pid int) bool {
		for p, n := pid, 0; p > 1 && n < 64; p, n = parent[p], n+1 {
			if parent[p] == w.root {
				return true
			}
		}
		return w.pgids[group[pid]]
	}
	for pid := range parent {
		if _, known := w.procs[pid]; known || pid == w.root || !inTree(pid) {
			continue
		}
		pgid, start, ok := procGroupStart(pid)
		if !ok {
			continue
		}
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		line := string(bytes.TrimRight(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}), " "))
		if line == "" { // a process that has ended already, or is replacing its program: its name
			comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
			line = "[" + strings.TrimSpace(string(comm)) + "]"
		}
		w.procs[pid] = treeProc{pid: pid, start: start, cmdline: line}
		if !w.skip[pgid] && pgid > 1 {
			w.pgids[pgid] = true
		}
	}
}

// stop ends the recording.
func (w *processTree) stop() {
	w.once.Do(func() { close(w.done) })
	w.wg.Wait()
}

// seen lists every process recorded, by pid.
func (w *processTree) seen() []treeProc {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]treeProc, 0, len(w.procs))
	for _, p := range w.procs {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b treeProc) int { return a.pid - b.pid })
	return out
}

// procGroupStart reads a process's group and start time from /proc; false when it does not exist.
func procGroupStart(pid int) (pgid int, start string, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, "", false
	}
	// pid (comm) state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime
	// stime cutime cstime priority nice num_threads itrealvalue starttime ...
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 20 {
		return 0, "", false
	}
	if _, err := fmt.Sscan(f[2], &pgid); err != nil {
		return 0, "", false
	}
	return pgid, f[19], true
}
