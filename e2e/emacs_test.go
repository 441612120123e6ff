package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testutil"
)

// emacsScenario is what testdata/emacs/code-action.el does: open File with Text, put the cursor
// after the first CursorAfter, type Type, and apply the "Next edit: …" code action; the buffer
// must then read Expected. It travels as a JSON file, so that no text goes through the locale.
type emacsScenario struct {
	File        string `json:"file"`
	Text        string `json:"text"`
	CursorAfter string `json:"cursorAfter"`
	Type        string `json:"type"`
	Expected    string `json:"expected"`
}

// The file has astral-plane (𐐀, 😀, 🎉), CJK and combining-mark (e + U+0301, n + U+0303) text
// before the edit, on the edited line and the line above, and after the cursor. Typing "o" makes
// the line contain "𐐀 = fo;", and the rule replaces "𐐀 = fo" (an edit that starts at an astral
// character and ends at the cursor) with text that has astral, CJK and combining characters.
var emacsCodeActionScenario = emacsScenario{
	File:        "main.txt",
	Text:        "// 日本語のメモ: e\u0301, n\u0303, 𐐀 and 😀\n\tlabel := \"e\u0301 中文 𐐀\"; 𐐀 = f; // 🎉 終\n}\n",
	CursorAfter: "𐐀 = f",
	Type:        "o",
	Expected:    "// 日本語のメモ: e\u0301, n\u0303, 𐐀 and 😀\n\tlabel := \"e\u0301 中文 𐐀\"; 𐐁 = foo(日本, e\u0301, 😀); // 🎉 終\n}\n",
}

var emacsCodeActionRules = []map[string]string{
	{"when": "𐐀 = fo;", "find": "𐐀 = fo", "replace": "𐐁 = foo(日本, e\u0301, 😀)"},
}

// TestEmacsEglotCodeAction runs Emacs 30's own LSP client, Eglot, in batch mode, configured by
// the shipped editors/emacs/acp-lsp-bridge-eglot.el (loaded as a user loads it, its variables
// naming the built bridge and the scripted test agent), against the bridge and the agent: Eglot
// opens a file with non-ASCII text, M-x eglot starts the bridge through the configuration's
// eglot-server-programs entry (the server of the configuration's class, languageId
// "plaintext"), the script types so that an agent rule fires, presses the configuration's C-c n a
// (eglot-code-actions at point) and picks the bridge's "Next edit: …" action, which Eglot applies
// as it does for any server (the WorkspaceEdit, then the action's command through
// workspace/executeCommand). The script checks the negotiated encoding, the action and the
// buffer; this test checks that the agent got nes/accept for the suggestion, and nothing else for
// it. Once with Eglot's own offer (utf-32, utf-8, utf-16: the bridge picks utf-32, Eglot's first), once offering
// only utf-16 and only utf-32, the agent's encoding always different from the editor's; and once
// without workspace.workspaceEdit.documentChanges (Eglot advertises it), so that the bridge's
// WorkspaceEdit uses `changes`. The Eglot behaviour relied on is in testdata/emacs/NOTES.md.
//
// EMACS is set by `eval "$(PEERS_EMACS=1 bash ../shared/tools/install-test-peers.sh)"`.
func TestEmacsEglotCodeAction(t *testing.T) {
	emacs := os.Getenv("EMACS")
	if emacs == "" {
		skipWithoutPeer(t, `EMACS is not set; run eval "$(PEERS_EMACS=1 bash ../shared/tools/install-test-peers.sh)"`)
	}
	script := filepath.Join(moduleRoot(t), "testdata", "emacs", "code-action.el")
	if _, err := os.Stat(script); err != nil {
		t.Fatal(err)
	}
	bridge, agent := binaries(t)
	for _, tc := range []struct {
		name, offer, want, agent string
		documentChanges          bool
	}{
		{"eglot-offer", "", "utf-32", "utf-16", true},
		{"utf-16", "utf-16", "utf-16", "utf-32", true},
		{"utf-32", "utf-32", "utf-32", "utf-8", true},
		// Eglot without workspace.workspaceEdit.documentChanges: the edit comes as `changes`.
		{"no-documentChanges", "", "utf-32", "utf-8", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			emacsRun(t, emacs, script, bridge, agent, tc.offer, tc.want, tc.agent, tc.documentChanges)
		})
	}
}

func emacsRun(t *testing.T, emacs, script, bridge, agent, offer, wantEnc, agentEnc string, documentChanges bool) {
	dir := t.TempDir()
	work := filepath.Join(dir, "work") // the project: Eglot's transient project is the file's directory
	home := filepath.Join(dir, "home")
	for _, d := range []string{work, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p := func(name string) string { return filepath.Join(dir, name) }
	writeJSON := func(name string, v any) {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p(name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeJSON("scenario.json", emacsCodeActionScenario)
	writeJSON("rules.json", emacsCodeActionRules)

	out, ok := emacsBatch(t, emacs, script, work,
		"HOME="+home, // keep ~/.emacs.d and the like inside the test's directory
		"ACP_EMACS_CONFIG="+emacsEglotConfig(t),
		"ACP_LSP_BRIDGE="+bridge,
		"ACP_TEST_AGENT="+agent,
		"EMACS_TEST_DIR="+work,
		"EMACS_TEST_SCENARIO="+p("scenario.json"),
		"EMACS_TEST_RULES="+p("rules.json"),
		"EMACS_TEST_ENCODING="+offer,
		"EMACS_TEST_DOCUMENT_CHANGES="+map[bool]string{true: "1", false: "0"}[documentChanges],
		"EMACS_TEST_WANT_ENCODING="+wantEnc,
		"EMACS_TEST_AGENT_ENCODING="+agentEnc,
		"EMACS_TEST_BRIDGE_LOG="+p("bridge.log"),
		"EMACS_TEST_AGENT_LOG="+p("agent.log"),
		"EMACS_TEST_RESULT="+p("result.json"),
	)
	t.Logf("Eglot offers %q, documentChanges %v; agent %s", offer, documentChanges, agentEnc)

	failed := !ok
	fail := func(format string, args ...any) {
		t.Errorf(format, args...)
		failed = true
	}
	defer func() {
		if !failed && !t.Failed() {
			if testing.Verbose() {
				t.Logf("emacs output:\n%s", emacsIndent(out))
			}
			return
		}
		t.Logf("emacs output:\n%s", emacsIndent(out))
		for _, f := range []struct{ name, path string }{
			{"bridge log (--log-file, debug)", p("bridge.log")},
			{"agent log (messages the agent received)", p("agent.log")},
		} {
			b, rerr := os.ReadFile(f.path)
			if rerr != nil {
				t.Logf("%s: %v", f.name, rerr)
				continue
			}
			t.Logf("%s, %s:\n%s", f.name, f.path, emacsIndent(string(b)))
		}
	}()
	if !ok {
		return
	}

	var res struct {
		Encoding, ID, Title, Kind, Buffer string
	}
	b, err := os.ReadFile(p("result.json"))
	if err == nil {
		err = json.Unmarshal(b, &res)
	}
	if err != nil {
		fail("result.json: %v", err)
		return
	}
	t.Logf("negotiated %s; applied %q (%s), suggestion %s", res.Encoding, res.Title, res.Kind, res.ID)
	if res.Encoding != wantEnc {
		fail("positionEncoding %q, want %q", res.Encoding, wantEnc)
	}
	if res.Buffer != emacsCodeActionScenario.Expected {
		fail("buffer %q, want %q", res.Buffer, emacsCodeActionScenario.Expected)
	}

	// The suggestion ends exactly once, with nes/accept. Emacs shut the bridge down politely
	// before exiting: nes/close is the last message the agent received (its log is in wire order).
	msgs := emacsWaitForClose(t, p("agent.log"))
	var lifecycle []string
	for _, m := range msgs {
		if (m.Method == "nes/accept" || m.Method == "nes/reject") && m.Params.ID == res.ID {
			lifecycle = append(lifecycle, m.raw)
		}
	}
	if len(lifecycle) != 1 || !strings.Contains(lifecycle[0], `"method":"nes/accept"`) {
		fail("suggestion %q: want exactly one nes/accept, the agent received %d lifecycle messages for it: %s",
			res.ID, len(lifecycle), strings.Join(lifecycle, " "))
	}
	closed := false
	for i, m := range msgs {
		closed = closed || m.Method == "nes/close"
		if closed && m.Method != "nes/close" {
			fail("the agent received %s after nes/close (message %d)", m.Method, i)
		}
	}
	if !closed {
		fail("the agent never received nes/close after Eglot shut the bridge down")
	}
}

type emacsAgentMessage struct {
	Method string `json:"method"`
	Params struct {
		ID string `json:"id"`
	} `json:"params"`
	raw string
}

func emacsReadAgentLog(path string) ([]emacsAgentMessage, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var msgs []emacsAgentMessage
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var m emacsAgentMessage
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			// The agent may be writing the last line right now.
			break
		}
		m.raw = line
		msgs = append(msgs, m)
	}
	return msgs, sc.Err()
}

func emacsIndent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ")
}

// emacsEglotConfig is the shipped Eglot configuration, which the scripts load as a user does.
func emacsEglotConfig(t *testing.T) string {
	t.Helper()
	p := filepath.Join(moduleRoot(t), "editors", "emacs", "acp-lsp-bridge-eglot.el")
	if _, err := os.Stat(p); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestEmacsShippedEglotConfig uses the shipped editors/emacs/acp-lsp-bridge-eglot.el as a user
// does, in Emacs 30 in batch mode (testdata/emacs/shipped.el): it byte-compiles without a
// warning; eglot-ensure starts the bridge through the file's eglot-server-programs entry for two
// files of one project; entering a buffer sends acp-lsp-bridge/didFocus with the cursor (the
// agent gets document/didFocus there; the window-change hook is run by the script, as batch mode
// does not redisplay); its keys send acp-lsp-bridge.suggest (the question answered Apply: the
// edit is applied, nes/accept), acp-lsp-bridge.reject (nes/reject "rejected", the file
// unchanged), acp-lsp-bridge.signIn and acp-lsp-bridge.restart (a second agent process gets
// both files). This test then checks that each of the two suggestions ended exactly once, as
// the script saw, and that the agent got nes/close when Eglot shut the bridge down.
func TestEmacsShippedEglotConfig(t *testing.T) {
	emacs := os.Getenv("EMACS")
	if emacs == "" {
		skipWithoutPeer(t, `EMACS is not set; run eval "$(PEERS_EMACS=1 bash ../shared/tools/install-test-peers.sh)"`)
	}
	bridge, agent := binaries(t)
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	for _, d := range []string{"work", "home", "scratch"} {
		if err := os.MkdirAll(p(d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	rules := []map[string]string{
		{"when": "old(", "find": "old", "replace": "new"},
		{"when": "keep(", "find": "keep", "replace": "hold"},
	}
	b, err := json.Marshal(rules)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p("rules.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, ok := emacsBatch(t, emacs, filepath.Join(moduleRoot(t), "testdata", "emacs", "shipped.el"), p("work"),
		"HOME="+p("home"),
		"ACP_EMACS_CONFIG="+emacsEglotConfig(t),
		"ACP_LSP_BRIDGE="+bridge,
		"ACP_TEST_AGENT="+agent,
		"EMACS_TEST_DIR="+p("work"),
		"EMACS_TEST_SCRATCH="+p("scratch"),
		"EMACS_TEST_RULES="+p("rules.json"),
		"EMACS_TEST_BRIDGE_LOG="+p("bridge.log"),
		"EMACS_TEST_AGENT_LOG="+p("agent.log"),
		"EMACS_TEST_RESULT="+p("result.json"),
	)
	logs := func() {
		t.Logf("emacs output:\n%s", emacsIndent(out))
		for _, f := range []string{"bridge.log", "agent.log"} {
			b, _ := os.ReadFile(p(f))
			t.Logf("%s:\n%s", f, emacsIndent(string(b)))
		}
	}
	if !ok {
		logs()
		t.FailNow()
	}
	var res struct{ Accepted, Rejected string }
	b, err = os.ReadFile(p("result.json"))
	if err == nil {
		err = json.Unmarshal(b, &res)
	}
	if err != nil || res.Accepted == "" || res.Rejected == "" || res.Accepted == res.Rejected {
		logs()
		t.Fatalf("result.json %s: %v", b, err)
	}
	msgs := emacsWaitForClose(t, p("agent.log"))
	for id, want := range map[string]string{res.Accepted: `"method":"nes/accept"`, res.Rejected: `"reason":"rejected"`} {
		var lifecycle []string
		for _, m := range msgs {
			if (m.Method == "nes/accept" || m.Method == "nes/reject") && m.Params.ID == id {
				lifecycle = append(lifecycle, m.raw)
			}
		}
		if len(lifecycle) != 1 || !strings.Contains(lifecycle[0], want) {
			t.Errorf("suggestion %q: want exactly one message with %s, the agent received: %s", id, want, strings.Join(lifecycle, " "))
		}
	}
	if len(msgs) == 0 || msgs[len(msgs)-1].Method != "nes/close" {
		t.Errorf("the agent never received nes/close after Eglot shut the bridge down")
	}
	if t.Failed() || testing.Verbose() {
		logs()
	}
}

// emacsBatch runs `emacs --batch -Q -l script` in dir with env added, for at most 60 s, and
// reports its output and whether it exited 0 having printed PASS.
func emacsBatch(t *testing.T, emacs, script, dir string, env ...string) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, emacs, "--batch", "-Q", "-l", script)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "LANG=C.UTF-8", "LC_ALL=C.UTF-8"), env...)
	// Emacs starts the bridge in a new session; on timeout only Emacs is killed, and the bridge
	// then reads EOF, exits and ends the agent's process group.
	cmd.WaitDelay = 5 * time.Second
	var out testutil.SyncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	t.Logf("emacs -l %s finished in %v", filepath.Base(script), time.Since(start).Round(time.Millisecond))
	switch {
	case ctx.Err() != nil:
		t.Errorf("emacs did not finish within 60 s")
	case err != nil:
		for _, line := range strings.Split(out.String(), "\n") {
			if strings.HasPrefix(line, "FAIL") {
				t.Errorf("%s", line)
			}
		}
		t.Errorf("emacs: %v", err)
	case !strings.Contains(out.String(), "PASS"):
		t.Errorf("emacs exited 0 without PASS")
	default:
		return out.String(), true
	}
	return out.String(), false
}

// emacsWaitForClose reads the agent's log until its last message is nes/close (the bridge
// sends it after Eglot's shutdown, as Emacs exits), for at most 10 s.
func emacsWaitForClose(t *testing.T, path string) []emacsAgentMessage {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		msgs, err := emacsReadAgentLog(path)
		if err != nil {
			t.Fatalf("agent log: %v", err)
		}
		if len(msgs) > 0 && msgs[len(msgs)-1].Method == "nes/close" || time.Now().After(deadline) {
			return msgs
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestEmacsLspModeConfig checks the shipped editors/emacs/acp-lsp-bridge-lsp-mode.el as far as
// Emacs 30 can without lsp-mode, which is not among the test peers (testdata/emacs/lsp-mode-config.el).
// These checks are weaker than running it in lsp-mode: its parentheses balance and every form
// reads; it byte-compiles without a warning against a stand-in that defines only names lsp-mode
// 10.0.1 defines; and, against that stand-in, it registers an add-on client with the server id
// acp-lsp-bridge, the command line from its settings (the agent after "--"), activation in
// prog-mode and text-mode buffers, initializationOptions.completion off when lsp-mode shows
// ghost text, a handler that sends acp-lsp-bridge.accept to the bridge, and keys whose commands
// send workspace/executeCommand to the bridge's workspace only, not to the buffer's other server.
func TestEmacsLspModeConfig(t *testing.T) {
	emacs := os.Getenv("EMACS")
	if emacs == "" {
		skipWithoutPeer(t, `EMACS is not set; run eval "$(PEERS_EMACS=1 bash ../shared/tools/install-test-peers.sh)"`)
	}
	root := moduleRoot(t)
	config := filepath.Join(root, "editors", "emacs", "acp-lsp-bridge-lsp-mode.el")
	if _, err := os.Stat(config); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	out, ok := emacsBatch(t, emacs, filepath.Join(root, "testdata", "emacs", "lsp-mode-config.el"), dir,
		"HOME="+dir,
		"ACP_EMACS_LSP_CONFIG="+config,
		"EMACS_TEST_SCRATCH="+dir,
	)
	if !ok || testing.Verbose() {
		t.Logf("emacs output:\n%s", emacsIndent(out))
	}
}
