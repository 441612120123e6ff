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

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/testutil"
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

// TestEmacsEglotCodeAction runs Emacs 30's own LSP client, Eglot, in batch mode against the
// bridge and the scripted test agent: Eglot opens a file with non-ASCII text, the script types
// so that an agent rule fires, runs M-x eglot-code-actions at point and picks the bridge's
// "Next edit: …" action, which Eglot applies as it does for any server (the WorkspaceEdit, then
// the action's command through workspace/executeCommand). The script checks the negotiated
// encoding, the action and the buffer; this test checks that the agent got nes/accept for the
// suggestion, and nothing else for it. Once with Eglot's own offer (utf-32, utf-8, utf-16: the
// bridge picks utf-8), once offering only utf-16 and only utf-32, the agent's encoding always
// different from the editor's; and once without workspace.workspaceEdit.documentChanges (Eglot
// advertises it), so that the bridge's WorkspaceEdit uses `changes`. The Eglot behaviour relied
// on is in testdata/emacs/NOTES.md.
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
		{"eglot-offer", "", "utf-8", "utf-16", true},
		{"utf-16", "utf-16", "utf-16", "utf-32", true},
		{"utf-32", "utf-32", "utf-32", "utf-8", true},
		// Eglot without workspace.workspaceEdit.documentChanges: the edit comes as `changes`.
		{"no-documentChanges", "", "utf-8", "utf-32", false},
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

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, emacs, "--batch", "-Q", "-l", script)
	cmd.Dir = work
	cmd.Env = append(os.Environ(),
		"HOME="+home, // keep ~/.emacs.d and the like inside the test's directory
		"LANG=C.UTF-8", "LC_ALL=C.UTF-8",
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
	// Emacs starts the bridge in a new session (make-process), so on timeout only Emacs is
	// killed; the bridge then reads EOF, exits and ends the agent's process group.
	cmd.WaitDelay = 5 * time.Second
	var out testutil.SyncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	t.Logf("emacs (Eglot offers %q, documentChanges %v; agent %s) finished in %v",
		offer, documentChanges, agentEnc, time.Since(start).Round(time.Millisecond))

	failed := false
	fail := func(format string, args ...any) {
		t.Errorf(format, args...)
		failed = true
	}
	defer func() {
		if !failed && !t.Failed() {
			if testing.Verbose() {
				t.Logf("emacs output:\n%s", emacsIndent(out.String()))
			}
			return
		}
		t.Logf("emacs output:\n%s", emacsIndent(out.String()))
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

	switch {
	case ctx.Err() != nil:
		fail("emacs did not finish within 60 s")
		return
	case err != nil:
		for _, line := range strings.Split(out.String(), "\n") {
			if strings.HasPrefix(line, "FAIL") {
				t.Errorf("%s", line)
			}
		}
		fail("emacs: %v", err)
		return
	case !strings.Contains(out.String(), "PASS "):
		fail("emacs exited 0 without PASS")
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
	// before exiting, so the log is complete once nes/close is there.
	deadline := time.Now().Add(10 * time.Second)
	var msgs []emacsAgentMessage
	for {
		msgs, err = emacsReadAgentLog(p("agent.log"))
		if err != nil {
			fail("agent log: %v", err)
			return
		}
		if len(msgs) > 0 && msgs[len(msgs)-1].Method == "nes/close" || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
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
	if len(msgs) == 0 || msgs[len(msgs)-1].Method != "nes/close" {
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
