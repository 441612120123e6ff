package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"
)

// The prompt fallback (acpside/prompts.go, lspside/prompts.go) through the real binary, with an
// agent on the official ACP SDK that has sessions and no Next Edit Suggestions
// (testdata/peers/session-agent.mjs), as Codex, Claude and Gemini's ACP agents are. Each test
// asserts what the user sees in the editor, and what the agent received (its log).

// promptText is the document of these tests: the user typed "fo" and the agent predicts "foo(".
const promptText = "package main\n\nfunc f() {\n\tfo(1)\n}\n"

// promptWant is promptText after the suggestion.
const promptWant = "package main\n\nfunc f() {\n\tfoo(1)\n}\n"

// promptCursor is the cursor in promptText, after "fo".
var promptCursor = fakeeditor.At(3, 3)

// promptRules is the agent's prediction (SESSION_AGENT_RULES).
const promptRules = `[{"find":"fo(","replace":"foo("}]`

type promptConfig struct {
	mode    string            // SESSION_AGENT_MODE
	env     map[string]string // more of the agent's environment
	args    []string          // the bridge's flags
	options map[string]any    // more initializationOptions
	caps    map[string]any    // the client's capabilities, over fakeeditor's defaults
	answer  func(message string, titles []string) string
	noReady bool // do not wait for the agent to be ready
}

// promptSession is the bridge with session-agent.mjs, started as an editor configured to run it
// does, and main.go (promptText) open in the workspace.
type promptSession struct {
	*bridgeProc
	dir      string // the workspace
	file     string // main.go in it, on disk
	uri      string
	agentLog string // outside the workspace: the bridge watches the workspace's files during a prompt
}

func startPromptSession(t *testing.T, c promptConfig) *promptSession {
	t.Helper()
	node, _ := sdkPeer(t)
	script := filepath.Join(moduleRoot(t), "testdata", "peers", "session-agent.mjs")
	dir := t.TempDir()
	file := filepath.Join(dir, "main.go")
	if err := os.WriteFile(file, []byte(promptText), 0o644); err != nil {
		t.Fatal(err)
	}
	agentLog := filepath.Join(t.TempDir(), "agent.jsonl")
	env := map[string]string{"SESSION_AGENT_MODE": c.mode, "SESSION_AGENT_LOG": agentLog, "SESSION_AGENT_RULES": promptRules}
	for k, v := range c.env {
		env[k] = v
	}
	options := map[string]any{"agent": map[string]any{"command": node, "args": []string{script}, "env": env}}
	for k, v := range c.options {
		options[k] = v
	}
	b := startBridge(t, c.args...)
	if c.answer != nil {
		b.setAnswer(c.answer)
	}
	b.InitializeWith(fakeeditor.InitParams{Root: fileURI(dir), ProcessID: os.Getpid(), Options: options, Capabilities: c.caps})
	s := &promptSession{bridgeProc: b, dir: dir, file: file, uri: fileURI(file), agentLog: agentLog}
	b.Open(s.uri, promptText)
	if !c.noReady {
		b.WaitReady()
	}
	return s
}

// inline asks for inline completions at the cursor with triggerKind (1 invoked, 2 automatic) and
// returns the items and how long the answer took.
func (s *promptSession) inline(triggerKind int) ([]fakeeditor.InlineItem, time.Duration, error) {
	began := time.Now()
	items, err := s.InlineTriggered(s.uri, promptCursor, triggerKind)
	return items, time.Since(began), err
}

// startInline sends an inline request at the cursor and returns without its answer.
func (s *promptSession) startInline(triggerKind int) (*fakeeditor.Pending, *fakeeditor.InlineResult) {
	var res fakeeditor.InlineResult
	return s.Start("textDocument/inlineCompletion", fakeeditor.InlineParams(s.uri, promptCursor, triggerKind), &res), &res
}

// acceptOne accepts the one item there must be and checks the buffer reads promptWant.
func (s *promptSession) acceptOne(t *testing.T, items []fakeeditor.InlineItem) {
	t.Helper()
	if len(items) != 1 {
		t.Fatalf("%d inline items, want the agent's edit: %+v", len(items), items)
	}
	s.Accept(s.uri, items[0])
	if got := s.Text(s.uri); got != promptWant {
		t.Fatalf("after accepting %+v the buffer reads %q, want %q", items[0], got, promptWant)
	}
}

// log is what the agent logged so far.
func (s *promptSession) log(t *testing.T) agentLogLines {
	t.Helper()
	return agentLogLines(readAgentLog(t, s.agentLog))
}

// waitEvent waits until the agent logged n lines with this event.
func (s *promptSession) waitEvent(t *testing.T, event string, n int) agentLogLines {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		l := s.log(t)
		if len(l.events(event)) >= n {
			return l
		}
		if time.Now().After(deadline) {
			t.Fatalf("the agent logged %d %q events, want %d; its log:\n%s", len(l.events(event)), event, n, l)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// fileOnDisk is main.go as it is on disk.
func (s *promptSession) fileOnDisk(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(s.file)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

type agentLogLines []map[string]any

func (l agentLogLines) methods(method string) []map[string]any {
	var out []map[string]any
	for _, m := range l {
		if m["method"] == method {
			out = append(out, m)
		}
	}
	return out
}

func (l agentLogLines) events(event string) []map[string]any {
	var out []map[string]any
	for _, m := range l {
		if m["event"] == event {
			out = append(out, m)
		}
	}
	return out
}

// noIssues fails the test for each thing the agent found wrong (a message failing the SDK's
// schema).
func (l agentLogLines) noIssues(t *testing.T) {
	t.Helper()
	for _, m := range l {
		if _, ok := m["issue"]; ok {
			t.Errorf("the agent found: %v", m)
		}
	}
}

func (l agentLogLines) String() string {
	var b strings.Builder
	for _, m := range l {
		line, _ := json.Marshal(m)
		if len(line) > 300 {
			line = append(line[:300], "…"...)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.String()
}

// str reads a string at a path of keys in a log line.
func str(m map[string]any, keys ...string) string {
	var v any = m
	for _, k := range keys {
		o, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		v = o[k]
	}
	s, _ := v.(string)
	return s
}

// TestPromptTextAnswer: an invoked inline completion is asked with a prompt and shows the agent's
// text answer as an item, which accepted changes the buffer; the session was opened in the
// workspace with no MCP servers and put in the agent's read-only mode; an automatic request (as
// while typing) answers empty at once and asks nothing, unless prompts are "auto".
func TestPromptTextAnswer(t *testing.T) {
	t.Run("explicit", func(t *testing.T) {
		t.Parallel()
		s := startPromptSession(t, promptConfig{mode: "text", env: map[string]string{"SESSION_AGENT_MODES": "1"}})
		s.WaitMessage("Session test agent has no Next Edit Suggestions of its own, so the bridge asks it through prompts")

		items, took, err := s.inline(2)
		if err != nil || len(items) != 0 || took > time.Second {
			t.Errorf("an automatic request answered %+v, %v after %v; want nothing at once", items, err, took)
		}
		items, _, err = s.inline(1)
		if err != nil {
			t.Fatal(err)
		}
		s.acceptOne(t, items)

		l := s.log(t)
		if n := len(l.methods("session/prompt")); n != 1 {
			t.Errorf("%d prompts, want 1: the invoked request's, none for the automatic one\n%s", n, l)
		}
		news := l.methods("session/new")
		if len(news) != 1 || str(news[0], "params", "cwd") != s.dir || !strings.Contains(jsonOf(news[0]["params"]), `"mcpServers":[]`) {
			t.Errorf("session/new %v, want one in the workspace %s with no MCP servers", news, s.dir)
		}
		if modes := l.methods("session/set_mode"); len(modes) != 1 || str(modes[0], "params", "modeId") != "read-only" {
			t.Errorf("session/set_mode %v, want the read-only mode", modes)
		}
		prompts := l.events("prompt")
		if len(prompts) != 1 || !strings.Contains(str(prompts[0], "region"), "\tfo(1)\n") || str(prompts[0], "path") != s.file {
			t.Errorf("the agent read in its prompt %v, want the region around \"\\tfo(1)\" of %s", prompts, s.file)
		}
		if p := l.methods("session/prompt"); len(p) == 1 && !strings.Contains(jsonOf(p[0]["params"]), "Do not run commands") {
			t.Errorf("the prompt does not tell the agent to change nothing: %s", jsonOf(p[0]["params"]))
		}
		if rec := s.Record(); len(rec.Created) != 0 || len(rec.Progress) != 0 {
			t.Errorf("progress shown to an editor that did not advertise window.workDoneProgress: %s %s", rec.Created, rec.Progress)
		}
		// The in-process agent and the prompts write nowhere but their pipes and the log.
		if err := s.stdout.verify(); err != nil {
			t.Error(err)
		}
	})

	t.Run("auto", func(t *testing.T) {
		t.Parallel()
		s := startPromptSession(t, promptConfig{mode: "text", options: map[string]any{"prompts": "auto"}})
		s.WaitMessage("Suggestions are asked also while you type")
		items, took, err := s.inline(2)
		if err != nil {
			t.Fatal(err)
		}
		s.acceptOne(t, items)
		if took < 500*time.Millisecond {
			t.Errorf("an automatic request was prompted after %v, sooner than the debounce", took)
		}
		if n := len(s.log(t).methods("session/prompt")); n != 1 {
			t.Errorf("%d prompts, want 1", n)
		}
	})
}

// jsonOf is v as compact JSON.
func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestPromptCancelled: a prompt that takes long is ended when the editor cancels the request
// ($/cancelRequest), when a newer request replaces it, and at --prompt-timeout; each time the
// request answers promptly and the agent receives session/cancel.
func TestPromptCancelled(t *testing.T) {
	t.Run("editor cancels", func(t *testing.T) {
		t.Parallel()
		s := startPromptSession(t, promptConfig{mode: "slow", env: map[string]string{"SESSION_AGENT_SLOW_MS": "1500"}})
		p, res := s.startInline(1)
		s.waitEvent(t, "prompt", 1)
		began := time.Now()
		if err := p.Cancel(); err != nil {
			t.Fatal(err)
		}
		err := p.Wait()
		if took := time.Since(began); took > 2*time.Second {
			t.Errorf("the cancelled request answered after %v", took)
		}
		if code := fakeeditor.ErrorCode(err); code != -32800 && (err != nil || len(res.Items) != 0) {
			t.Errorf("the cancelled request answered %+v, %v; want error -32800 or nothing", res.Items, err)
		}
		l := s.waitEvent(t, "cancelled", 1)
		if len(l.methods("session/cancel")) != 1 {
			t.Errorf("the agent received %d session/cancel, want 1\n%s", len(l.methods("session/cancel")), l)
		}
		// Asked again, the agent answers (after SESSION_AGENT_SLOW_MS), in the same session: it
		// ended the cancelled prompt as ACP asks, so the session is as good as before.
		items, _, err := s.inline(1)
		if err != nil {
			t.Fatal(err)
		}
		s.acceptOne(t, items)
		if n := len(s.log(t).methods("session/new")); n != 1 {
			t.Errorf("%d sessions, want 1: a prompt the agent ended when cancelled leaves its session usable", n)
		}
	})

	t.Run("newer request", func(t *testing.T) {
		t.Parallel()
		s := startPromptSession(t, promptConfig{mode: "slow"})
		older, res := s.startInline(1)
		s.waitEvent(t, "prompt", 1)
		newer, _ := s.startInline(1)
		select {
		case <-older.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("the older request was not answered once a newer one came")
		}
		if err := older.Wait(); err != nil || len(res.Items) != 0 {
			t.Errorf("the replaced request answered %+v, %v; want nothing", res.Items, err)
		}
		l := s.waitEvent(t, "prompt", 2) // the newer request's prompt, once the older one ended
		if c := l.events("cancelled"); len(c) != 1 || len(l.methods("session/cancel")) != 1 {
			t.Errorf("the agent's first prompt was not cancelled (once):\n%s", l)
		}
		if n := len(l.methods("session/new")); n != 1 {
			t.Errorf("%d sessions, want 1: the newer request's prompt goes to the same session", n)
		}
		if err := newer.Cancel(); err != nil {
			t.Fatal(err)
		}
		_ = newer.Wait()
		s.waitEvent(t, "cancelled", 2)
	})

	t.Run("timeout", func(t *testing.T) {
		t.Parallel()
		s := startPromptSession(t, promptConfig{mode: "slow", args: []string{"--prompt-timeout", "2s"}})
		items, took, err := s.inline(1)
		if err != nil || len(items) != 0 {
			t.Errorf("a request past --prompt-timeout answered %+v, %v; want nothing", items, err)
		}
		if took < 2*time.Second || took > 6*time.Second {
			t.Errorf("a request with --prompt-timeout 2s answered after %v", took)
		}
		l := s.waitEvent(t, "cancelled", 1)
		if len(l.methods("session/cancel")) != 1 {
			t.Errorf("the agent did not receive session/cancel (once):\n%s", l)
		}
	})
}

// TestPromptToolCall: an agent that proposes its edit as a tool call and asks permission to make
// it: the code action offers the edit, applying it changes the buffer; the agent's permission
// request was answered with its reject option and the file on disk is unchanged. An automatic
// code action request (VS Code's light bulb) asks nothing.
func TestPromptToolCall(t *testing.T) {
	s := startPromptSession(t, promptConfig{mode: "toolcall", env: map[string]string{"SESSION_AGENT_MODES": "1"}})
	at := fakeeditor.Span(promptCursor, promptCursor)
	actions, err := s.CodeActionsTriggered(s.uri, at, 2)
	if err != nil || len(actions) != 0 {
		t.Errorf("an automatic code action request answered %+v, %v; want nothing", actions, err)
	}
	actions, err = s.CodeActionsTriggered(s.uri, at, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(actions) != 1 || actions[0].Edit == nil {
		t.Fatalf("code actions %+v, want the agent's edit", actions)
	}
	s.ApplyAction(actions[0])
	if got := s.Text(s.uri); got != promptWant {
		t.Errorf("after the code action %q the buffer reads %q, want %q", actions[0].Title, got, promptWant)
	}
	l := s.waitEvent(t, "answered", 1)
	perm := l.events("permission")
	if len(perm) != 1 || str(perm[0], "result", "outcome", "outcome") != "selected" || str(perm[0], "result", "outcome", "optionId") != "reject" {
		t.Errorf("the agent's permission request was answered %v, want its reject option", perm)
	}
	if len(l.methods("session/prompt")) != 1 {
		t.Errorf("%d prompts, want 1: none for the automatic request", len(l.methods("session/prompt")))
	}
	if got := s.fileOnDisk(t); got != promptText {
		t.Errorf("main.go on disk changed: %q", got)
	}
	l.noIssues(t)
}

// TestPromptWrite: an agent that writes its edit with fs/write_text_file: the suggestion comes from
// the write, the file on disk is unchanged, and the agent was told its write succeeded.
func TestPromptWrite(t *testing.T) {
	s := startPromptSession(t, promptConfig{mode: "write"})
	items, _, err := s.inline(1)
	if err != nil {
		t.Fatal(err)
	}
	s.acceptOne(t, items)
	l := s.waitEvent(t, "answered", 1)
	if r := l.events("read"); len(r) != 1 || str(r[0], "result", "content") != promptText {
		t.Errorf("fs/read_text_file answered %v, want the buffer's text", r)
	}
	if w := l.events("write"); len(w) != 1 || w[0]["error"] != nil || w[0]["result"] == nil {
		t.Errorf("fs/write_text_file answered %v, want success", w)
	}
	if got := s.fileOnDisk(t); got != promptText {
		t.Errorf("main.go on disk changed: %q", got)
	}
	l.noIssues(t)
}

// TestPromptAgentWritesOnDisk: an agent that changes a workspace file on disk by itself during a
// prompt: the user is told once which file and how to go on, the agent is asked nothing more, and
// after acp-lsp-bridge.restart it is asked again.
func TestPromptAgentWritesOnDisk(t *testing.T) {
	s := startPromptSession(t, promptConfig{mode: "disk"})
	if _, _, err := s.inline(1); err != nil {
		t.Fatal(err)
	}
	const told = "the agent changed "
	s.WaitMessage(told + s.file + " on disk by itself")
	msg := ""
	for _, m := range s.Record().Messages {
		if strings.Contains(m, told) {
			msg = m
		}
	}
	if !strings.Contains(msg, "acp-lsp-bridge.restart") {
		t.Errorf("the message does not say how to go on: %q", msg)
	}
	s.waitEvent(t, "disk-write", 1)

	// The user types on and asks again: no prompt.
	s.Edit(s.uri, len("package main\n\nfunc f() {\n\tfo(1)"), len("package main\n\nfunc f() {\n\tfo(1)"), " ")
	items, _, err := s.inline(1)
	if err != nil || len(items) != 0 {
		t.Errorf("a request after the agent wrote a file answered %+v, %v; want nothing", items, err)
	}
	time.Sleep(300 * time.Millisecond)
	if n := len(s.log(t).methods("session/prompt")); n != 1 {
		t.Errorf("%d prompts, want 1: none after the agent wrote a file", n)
	}
	if n := countContaining(s.Record().Messages, told); n != 1 {
		t.Errorf("told %d times, want once", n)
	}

	// Restarted, the agent is asked again.
	s.Execute(fakeeditor.Command{Command: "acp-lsp-bridge.restart"})
	s.Await(fakeeditor.Expectation{Description: "the agent ready again", Met: func(r *fakeeditor.Record) bool {
		return countContaining(r.Logs, " is ready (") >= 2
	}})
	if _, _, err := s.inline(1); err != nil {
		t.Fatal(err)
	}
	l := s.waitEvent(t, "prompt", 2)
	if starts := l.events("start"); len(starts) != 2 {
		t.Errorf("%d agent processes, want 2 (one restart):\n%s", len(starts), l)
	}
	if n := len(l.methods("session/prompt")); n != 2 {
		t.Errorf("%d prompts, want 2: one before, one after the restart", n)
	}
}

// TestPromptSignIn: session/new answering auth_required runs the sign-in question with the
// agent's methods; the env_var one tells the user which variable to set; the agent one calls
// authenticate, after which prompts work.
func TestPromptSignIn(t *testing.T) {
	wantTitles := "Log in to Session Agent|Use an API key|Not now"

	t.Run("env_var", func(t *testing.T) {
		t.Parallel()
		var titles []string
		s := startPromptSession(t, promptConfig{mode: "auth", noReady: true, answer: func(_ string, offered []string) string {
			titles = offered
			return "Use an API key"
		}})
		s.WaitMessage(`to sign in to Session test agent with "Use an API key", set SESSION_AGENT_API_KEY`)
		if strings.Join(titles, "|") != wantTitles {
			t.Errorf("the sign-in choices %q, want %q", titles, wantTitles)
		}
		if q := s.Record().Questions; len(q) != 1 || !strings.Contains(q[0], "Session test agent needs you to sign in") {
			t.Errorf("questions %q", q)
		}
		if l := s.log(t); len(l.methods("authenticate")) != 0 || len(l.methods("session/prompt")) != 0 {
			t.Errorf("the agent was asked to authenticate or prompted:\n%s", l)
		}
	})

	t.Run("agent", func(t *testing.T) {
		t.Parallel()
		var titles []string
		s := startPromptSession(t, promptConfig{mode: "auth", answer: func(_ string, offered []string) string {
			titles = offered
			return "Log in to Session Agent"
		}})
		s.WaitMessage("signed in to Session test agent")
		if strings.Join(titles, "|") != wantTitles {
			t.Errorf("the sign-in choices %q, want %q", titles, wantTitles)
		}
		items, _, err := s.inline(1)
		if err != nil {
			t.Fatal(err)
		}
		s.acceptOne(t, items)
		l := s.log(t)
		if a := l.methods("authenticate"); len(a) != 1 || str(a[0], "params", "methodId") != "session-login" {
			t.Errorf("authenticate %v, want the agent method once", a)
		}
		if len(l.events("auth_required")) != 1 || len(l.events("session")) != 1 {
			t.Errorf("want session/new refused once, then made once:\n%s", l)
		}
	})
}

// TestPromptProgress: an editor that advertises window.workDoneProgress sees the wait for the
// agent: a progress created, begun with "asking <agent>…" and ended around the prompt.
func TestPromptProgress(t *testing.T) {
	s := startPromptSession(t, promptConfig{mode: "text", caps: map[string]any{"window": map[string]any{
		"showDocument": map[string]any{"support": true}, "workDoneProgress": true,
	}}})
	items, _, err := s.inline(1)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 1 {
		t.Errorf("%d items, want 1", len(items))
	}
	// The prompt's progress: its token's messages. (The agent's start may have one of its own,
	// "starting the agent…", when it was still starting once the editor said initialized.)
	asking := func(r *fakeeditor.Record) []fakeeditor.Progress { return r.ProgressOf("asking Session test agent…") }
	s.Await(fakeeditor.Expectation{Description: "the prompt's progress created, begun and ended", Met: func(r *fakeeditor.Record) bool {
		return len(asking(r)) == 2
	}})
	rec := s.Record()
	got := asking(&rec)
	created := false
	for _, raw := range rec.Created {
		var c struct {
			Token string `json:"token"`
		}
		_ = json.Unmarshal(raw, &c)
		created = created || c.Token == got[0].Token
	}
	if !created {
		t.Errorf("the prompt's progress %q was never created: %s", got[0].Token, rec.Created)
	}
	if got[0].Value.Title != "acp-lsp-bridge" || got[1].Value.Kind != "end" {
		t.Errorf("progress %+v, want begin \"asking Session test agent…\" then end", got)
	}
}

// TestSDKPeerPrompts runs testdata/peers/lsp-prompts-e2e.mjs: Microsoft's LSP client library
// drives the bridge, whose agent is session-agent.mjs (the official ACP SDK, no NES), named after
// `--`. An automatic inline completion asks nothing; an invoked one and a code action each show
// the agent's edit, which the script applies; one read-only session, two prompts, nothing written,
// a progress per prompt, exit code 0. The script prints each failed check.
func TestSDKPeerPrompts(t *testing.T) {
	node, modules := sdkPeer(t)
	bridge, _ := binaries(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(moduleRoot(t), "testdata", "peers", "lsp-prompts-e2e.mjs"), "--bridge", bridge, "--timeout-ms", "25000")
	cmd.Env = append(os.Environ(), "PEERS_NODE_MODULES="+modules)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Run(); err != nil {
		t.Fatalf("lsp-prompts-e2e.mjs: %v\n%s", err, out.String())
	}
	t.Logf("%s", out.String())
}

// TestPromptEditorSavesDuringAPrompt: while the agent is prompted, the editor saves the file (as
// auto-save does), a build writes into target/ and the editor its swap file: none of it is the
// agent's doing, so nobody is blamed and prompts go on.
func TestPromptEditorSavesDuringAPrompt(t *testing.T) {
	s := startPromptSession(t, promptConfig{mode: "slow", env: map[string]string{"SESSION_AGENT_SLOW_MS": "1500"}})
	p, res := s.startInline(1)
	s.waitEvent(t, "prompt", 1)
	// The buffer as it is, saved; a build's output; Vim's swap file.
	if err := os.WriteFile(s.file, []byte(promptText), 0o644); err != nil {
		t.Fatal(err)
	}
	s.Notify("textDocument/didSave", map[string]any{"textDocument": map[string]any{"uri": s.uri}})
	if err := os.MkdirAll(filepath.Join(s.dir, "target", "debug"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{filepath.Join(s.dir, "target", "debug", "main"), filepath.Join(s.dir, ".main.go.swp")} {
		if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	if len(res.Items) != 1 {
		t.Errorf("the prompt answered %+v, want the agent's edit", res.Items)
	}
	if n := countContaining(s.Record().Messages, "on disk by itself"); n != 0 {
		t.Errorf("the agent was blamed for the editor's save: %q", s.Record().Messages)
	}
	// Asked again, the agent is prompted again.
	if _, _, err := s.inline(1); err != nil {
		t.Fatal(err)
	}
	if n := len(s.waitEvent(t, "prompt", 2).methods("session/prompt")); n != 2 {
		t.Errorf("%d prompts, want 2: prompts go on after the editor saved", n)
	}
}

// TestPromptSessionsAreClosed: an agent that keeps a process per session and offers session/close
// (as one running a CLI per session does) is asked to close each session the bridge stops using,
// after a failed prompt and when sessions are renewed (--prompt-turns), so that it keeps one
// process at a time, not one per abandoned session; an agent that does not offer it is sent none.
func TestPromptSessionsAreClosed(t *testing.T) {
	closing := map[string]string{"SESSION_AGENT_CLOSE": "1", "SESSION_AGENT_CHILD": "1"}
	// ask asks n suggestions by hand, one after the other.
	ask := func(s *promptSession, n int) {
		for range n {
			_, _, _ = s.inline(1)
		}
	}
	// closedAll checks that the sessions closed are the first n opened, and that their processes
	// ended.
	closedAll := func(t *testing.T, l agentLogLines, n int) {
		t.Helper()
		sessions, closed := l.events("session"), l.events("closed")
		if len(closed) != n {
			t.Fatalf("the agent got %d session/close, want %d; its log:\n%s", len(closed), n, l)
		}
		for i, c := range closed {
			if str(c, "sessionId") != str(sessions[i], "sessionId") {
				t.Errorf("session/close %d closed %s, want %s", i, str(c, "sessionId"), str(sessions[i], "sessionId"))
			}
		}
		for _, c := range l.events("child") {
			pid := int(c["pid"].(float64))
			ended := false
			for _, cl := range closed {
				ended = ended || str(cl, "sessionId") == str(c, "sessionId")
			}
			deadline := time.Now().Add(5 * time.Second)
			for ended && processAlive(pid) && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if ended && processAlive(pid) {
				t.Errorf("the process of closed session %s (pid %d) still runs", str(c, "sessionId"), pid)
			}
		}
		l.noIssues(t)
	}
	t.Run("after failed prompts", func(t *testing.T) {
		t.Parallel()
		s := startPromptSession(t, promptConfig{mode: "fail", env: closing})
		ask(s, 3)
		s.waitEvent(t, "prompt-failed", 3)
		l := s.waitEvent(t, "closed", 3)
		if got := len(l.events("session")); got != 3 {
			t.Fatalf("%d sessions opened for 3 failed prompts, want 3; the agent's log:\n%s", got, l)
		}
		closedAll(t, l, 3)
	})
	t.Run("renewed", func(t *testing.T) {
		t.Parallel()
		s := startPromptSession(t, promptConfig{mode: "text", env: closing, args: []string{"--prompt-turns", "2"}})
		ask(s, 5)
		l := s.waitEvent(t, "closed", 2)
		if got := len(l.events("session")); got != 3 {
			t.Fatalf("%d sessions opened for 5 prompts of 2 a session, want 3; the agent's log:\n%s", got, l)
		}
		if got := len(l.events("answered")); got != 5 {
			t.Fatalf("%d prompts answered, want 5; the agent's log:\n%s", got, l)
		}
		closedAll(t, l, 2)
	})
	t.Run("not offered", func(t *testing.T) {
		t.Parallel()
		s := startPromptSession(t, promptConfig{mode: "fail", env: map[string]string{"SESSION_AGENT_CHILD": "1"}})
		ask(s, 2)
		l := s.waitEvent(t, "session", 2)
		s.waitEvent(t, "prompt-failed", 2)
		// The bridge's log says each session was left; by then a session/close would have been sent.
		waitBridgeLog(t, s.logFile, "prompt session left")
		if got := len(s.log(t).methods("session/close")); got != 0 {
			t.Errorf("%d session/close sent to an agent that does not offer it; its log:\n%s", got, l)
		}
	})
}
