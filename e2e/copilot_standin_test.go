package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testutil"
)

// The bridge with the Copilot stand-in (acp-test-agent --copilot, internal/test/testagent/copilot.go):
// an agent that behaves as GitHub Copilot's language server 1.539.0 does in --acp mode (one NES
// session, incremental sync it checks strictly, suggestions of kind "edit" without a cursor
// position, nes/suggest refused when its copy of the document is not at the requested version),
// signed in through GH_COPILOT_TOKEN, suggesting from rules. The real server needs the network
// to suggest; the stand-in is how its rules meet real editors here.

// copilotRules are the stand-in's suggestions in these tests.
const copilotRules = `[{"when":"retur","find":"retur","replace":"return nil"},` +
	`{"when":"fmt.Prin","find":"fmt.Prin","replace":"fmt.Println(err)"},` +
	`{"when":"log.Pri","find":"log.Pri","replace":"log.Printf(\"%v\", err)"}]`

// copilotDoc is the document the tests edit: three empty lines to type on (4, 5 and 6).
const copilotDoc = "package main\n\nfunc f() error {\n\t\n\t\n\t\n}\n"

// TestCopilotStandinNeovimGhostText: Neovim with the plugin, the bridge running the stand-in:
// ghost text as the user types; <Tab> accepts it (the buffer, and the cursor at the end of the
// inserted text, since the suggestion has no cursorPosition), <C-]> dismisses another (nes/reject
// "rejected", which the stand-in counts as a rejection), typing over a third ends it otherwise
// (a reason the stand-in counts as ignored) (testdata/nvim/copilot_standin.lua, case ghost).
func TestCopilotStandinNeovimGhostText(t *testing.T) {
	out, work := runNeovimPlugin(t, "copilot_standin.lua", "ALL PASSED", "GH_COPILOT_TOKEN=test", "COPILOT_CASE=ghost")
	wantSteps(t, out, "accept", "dismiss", "type over")
	log := readAgentLog(t, filepath.Join(work, "agent.log"))
	copilotSessionStarted(t, log)
	accepted, rejected := map[string]bool{}, map[string]string{}
	sawDiagnostic := false
	for _, m := range log {
		p, _ := m["params"].(map[string]any)
		switch m["method"] {
		case "nes/accept":
			accepted[fmt.Sprint(p["id"])] = true
		case "nes/reject":
			rejected[fmt.Sprint(p["id"])] = fmt.Sprint(p["reason"])
		case "nes/suggest":
			// The diagnostic the script put on line 7, as Copilot asks for it (context.diagnostics).
			ctx, _ := p["context"].(map[string]any)
			diags, _ := ctx["diagnostics"].([]any)
			for _, d := range diags {
				d, _ := d.(map[string]any)
				r, _ := d["range"].(map[string]any)
				start, _ := r["start"].(map[string]any)
				if d["message"] == "missing return" && d["severity"] == "error" && d["uri"] == fileURI(filepath.Join(work, "main.go")) && start["line"] == float64(6) {
					sawDiagnostic = true
				}
			}
		}
	}
	if len(accepted) != 1 {
		t.Errorf("nes/accept for %v, want one suggestion", accepted)
	}
	n := 0
	for id, reason := range rejected {
		if accepted[id] {
			t.Errorf("suggestion %s was accepted and rejected (%s)", id, reason)
		}
		if reason == "rejected" {
			n++
		}
	}
	if n < 1 {
		t.Errorf("no nes/reject \"rejected\" reached the stand-in; the reasons: %v", rejected)
	}
	if !sawDiagnostic {
		t.Errorf("no nes/suggest carried the diagnostic Neovim showed (context.diagnostics)")
	}
	if got, _ := os.ReadFile(filepath.Join(work, "buffer.txt")); string(got) != "package main\n\nfunc f() error {\n\treturn nil\n\tfmt.Prin\n\tlog.Priz\n}\n" {
		t.Errorf("the buffer at the end:\n%s", got)
	}
}

// TestCopilotStandinNeovimDroppedChange: the stand-in drops the second didChange (the "e" of
// "retur", typed a key at a time), as Copilot ignores a change it judged stale; its copy then
// lacks the "e", every later change is invalid on it, and its nes/suggest refuses the editor's
// version. The bridge sends the document again (didClose, then didOpen with the text as the
// editor has it) and asks once more: the user still sees "return nil" as ghost text, takes it,
// and the stand-in's copy ends as the buffer (testdata/nvim/copilot_standin.lua, case drop).
func TestCopilotStandinNeovimDroppedChange(t *testing.T) {
	out, work := runNeovimPlugin(t, "copilot_standin.lua", "ALL PASSED", "GH_COPILOT_TOKEN=test", "COPILOT_CASE=drop", "COPILOT_DROP=2")
	wantSteps(t, out, "accept", "drop")
	log := readAgentLog(t, filepath.Join(work, "agent.log"))
	copilotSessionStarted(t, log)
	uri := fileURI(filepath.Join(work, "main.go"))
	copilotRepaired(t, log, uri, func(line string) bool { return slices.Contains([]string{"\tre", "\tret", "\tretu", "\tretur"}, line) })
}

// TestCopilotStandinHelix: Helix 25.07 in a terminal, the bridge running the stand-in: the user
// types "retur" and takes "return nil" from the code-action menu (space a, Enter); types "fmt.Prin"
// and takes "fmt.Println(err)" from the completion menu (Ctrl-x, Tab, Enter); types "log.Pri",
// sees its suggestion in the code-action menu, leaves the menu and dismisses every suggestion with
// :lsp-workspace-command acp-lsp-bridge.reject (Helix's one way to reject): the stand-in gets
// nes/reject "rejected" and counts a rejection, and the line stays as typed. :w saves what was
// taken.
func TestCopilotStandinHelix(t *testing.T) {
	term, work, agentLog := startCopilotHelix(t, 0)

	// Code action.
	helixTypeAtEnd(term, 4, "retur")
	term.keys("Escape")
	helixAction(term, "Next edit: `retur` → `return nil` (line 4)")
	term.keys("Enter")
	term.waitText(5*time.Second, "4      return nil")

	// Completion item.
	helixTypeAtEnd(term, 5, "fmt.Prin")
	term.askUntil("the completion item fmt.Println(err)", "fmt.Println(err) text", func() { term.keys("C-x") })
	term.takeItem("`fmt.Prin` → `fmt.Println(err)` (line 5)", "5      fmt.Println(err)")

	// Shown, then dismissed.
	helixTypeAtEnd(term, 6, "log.Pri")
	term.keys("Escape")
	helixAction(term, "Next edit: `log.Pri` → `log.Printf(\"%v\", err)` (line 6)")
	term.keys("Escape")
	if n := copilotCounted(t, agentLog, "rejected"); n != 0 {
		t.Errorf("the stand-in counted %d rejections before the user dismissed anything", n)
	}
	term.keys(":")
	term.text("lsp-workspace-command acp-lsp-bridge.reject")
	term.keys("Enter")
	for deadline := time.Now().Add(5 * time.Second); copilotCounted(t, agentLog, "rejected") == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the stand-in counted no rejection after :lsp-workspace-command acp-lsp-bridge.reject")
		}
	}
	for _, m := range readAgentLog(t, agentLog) {
		if p, _ := m["params"].(map[string]any); m["method"] == "nes/reject" && p["reason"] != "rejected" && p["reason"] != "ignored" && p["reason"] != "replaced" {
			t.Errorf("nes/reject with reason %v", p["reason"])
		}
	}
	term.waitText(5*time.Second, "6      log.Pri\n")

	term.save("main.go")
	want := "package main\n\nfunc f() error {\n\treturn nil\n\tfmt.Println(err)\n\tlog.Pri\n}\n"
	if got, err := os.ReadFile(filepath.Join(work, "main.go")); err != nil || string(got) != want {
		t.Errorf("the saved file:\n%s\nwant:\n%s (%v)", got, want, err)
	}
	copilotSessionStarted(t, readAgentLog(t, agentLog))
}

// TestCopilotStandinHelixDroppedChange: Helix sends a didChange per key; the stand-in drops the
// second (the "e" of "retur"), so the later ones are invalid on its copy and its nes/suggest
// refuses Helix's version. The user asks with space a: the bridge sends the document again
// (didClose, didOpen with the text Helix has) and asks once more, the menu offers "return nil",
// Enter takes it and :w saves it.
func TestCopilotStandinHelixDroppedChange(t *testing.T) {
	term, work, agentLog := startCopilotHelix(t, 2)
	helixTypeAtEnd(term, 4, "retur")
	term.keys("Escape")
	term.waitText(5*time.Second, "4      retur\n")
	helixAction(term, "Next edit: `retur` → `return nil` (line 4)")
	term.keys("Enter")
	term.waitText(5*time.Second, "4      return nil")
	term.save("main.go")
	want := strings.Replace(copilotDoc, "{\n\t\n", "{\n\treturn nil\n", 1)
	if got, err := os.ReadFile(filepath.Join(work, "main.go")); err != nil || string(got) != want {
		t.Errorf("the saved file:\n%s\nwant:\n%s (%v)", got, want, err)
	}
	log := readAgentLog(t, agentLog)
	copilotSessionStarted(t, log)
	copilotRepaired(t, log, fileURI(filepath.Join(work, "main.go")), func(line string) bool {
		return slices.Contains([]string{"\tre", "\tret", "\tretu", "\tretur"}, line)
	})
}

// helixAction asks for code actions (space a) until the menu offers want.
func helixAction(term *tmuxTerm, want string) {
	term.t.Helper()
	term.askUntil("the code action "+want, want, func() {
		term.keys("Escape")
		term.keys("Space", "a")
	})
}

// copilotCounted is how many suggestions the stand-in counted as how ("rejected", "ignored") on
// nes/reject so far.
func copilotCounted(t *testing.T, agentLog, how string) int {
	t.Helper()
	n := 0
	for _, m := range readAgentLog(t, agentLog) {
		if p, _ := m["params"].(map[string]any); m["method"] == "test/copilotReject" && p["counted"] == how {
			n++
		}
	}
	return n
}

// startCopilotHelix starts Helix on main.go (copilotDoc) with the bridge running the stand-in,
// signed in through GH_COPILOT_TOKEN in config.agent.env, dropping the dropChange-th didChange
// when it is not 0, and waits until the stand-in has the document. It returns the terminal, the
// workspace and the stand-in's log.
func startCopilotHelix(t *testing.T, dropChange int) (term *tmuxTerm, work, agentLog string) {
	t.Helper()
	_, agent := binaries(t)
	dir := t.TempDir()
	rules, agentLog := filepath.Join(dir, "rules.json"), filepath.Join(dir, "agent.jsonl")
	if err := os.WriteFile(rules, []byte(copilotRules), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"--copilot", "--rules", rules, "--log", agentLog}
	if dropChange > 0 {
		args = append(args, "--drop-change", fmt.Sprint(dropChange))
	}
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = fmt.Sprintf("%q", a)
	}
	term, work, _ = startHelix(t, func(bridge, bridgeLog string) string {
		return fmt.Sprintf(`[language-server.acp]
command = %q
args = ["--log-file", %q, "--log-level", "debug"]
config = { agent = { command = %q, args = [%s], env = { GH_COPILOT_TOKEN = "test" } } }

[[language]]
name = "go"
language-servers = ["acp"]
`, bridge, bridgeLog, agent, strings.Join(quoted, ", "))
	}, map[string]string{"main.go": copilotDoc}, "main.go")
	t.Cleanup(func() {
		if t.Failed() {
			data, _ := os.ReadFile(agentLog)
			t.Logf("the stand-in's log:\n%s", data)
		}
	})
	waitAgentLog(t, agentLog, "document/didOpen")
	return term, work, agentLog
}

// helixTypeAtEnd goes to line (1-based) in normal mode and types text at its end, in insert mode.
func helixTypeAtEnd(term *tmuxTerm, line int, text string) {
	term.t.Helper()
	term.keys(":")
	term.text(fmt.Sprint(line))
	term.keys("Enter")
	term.keys("A")
	term.text(text)
}

// copilotSessionStarted checks that the bridge started a session with the stand-in: initialize,
// nes/start, and the document opened in it.
func copilotSessionStarted(t *testing.T, log []map[string]any) {
	t.Helper()
	var methods []string
	for _, m := range log {
		methods = append(methods, m["method"].(string))
	}
	for _, want := range []string{"initialize", "nes/start", "document/didOpen", "nes/suggest"} {
		if !slices.Contains(methods, want) {
			t.Errorf("the stand-in never received %s; it received %v", want, methods)
		}
	}
}

// copilotRepaired checks, in the stand-in's log, that it dropped a didChange of uri made while
// typing (a version above the didOpen's), and that after it the bridge closed the document and
// opened it again with a text whose line 4 is one the user had after the dropped change (lineOK).
func copilotRepaired(t *testing.T, log []map[string]any, uri string, lineOK func(line string) bool) {
	t.Helper()
	dropped := -1
	for i, m := range log {
		if m["method"] == "test/droppedChange" {
			p := m["params"].(map[string]any)
			if p["uri"] != uri || p["version"].(float64) < 2 {
				t.Errorf("the stand-in dropped %v, want a change of %s made while typing", p, uri)
			}
			dropped = i
			break
		}
	}
	if dropped < 0 {
		t.Fatalf("the stand-in dropped no change (no test/droppedChange)")
	}
	closed, reopened := false, false
	for _, m := range log[dropped+1:] {
		p, _ := m["params"].(map[string]any)
		if p == nil || p["uri"] != uri {
			continue
		}
		switch m["method"] {
		case "document/didClose":
			closed = true
		case "document/didOpen":
			if !closed {
				t.Errorf("a didOpen of %s after the dropped change without a didClose before it", uri)
				continue
			}
			text, _ := p["text"].(string)
			lines := strings.Split(text, "\n")
			if len(lines) < 4 || !lineOK(lines[3]) || strings.Replace(text, lines[3], "\t", 1) != copilotDoc {
				t.Errorf("the document was opened again with %q, not a text the user had after the dropped change", text)
			}
			reopened = true
		}
		if reopened {
			break
		}
	}
	if !reopened {
		t.Errorf("after the dropped change the bridge never sent the document again (document/didClose, then document/didOpen with the current text): the repair on \"Document version mismatch\" is missing")
	}
}

// TestCopilotStandinMatchesRealServer holds the stand-in to the real server: the same messages go
// to GitHub Copilot's language server ($COPILOT_LS --acp, installed with PEERS_COPILOT=1) and to
// acp-test-agent --copilot, and their answers and the lines they write about what they ignored
// ("[acp.nes] Ignoring …") must be the same, session ids aside: initialize, the sign-in errors,
// one session, the document rules and the errors of nes/suggest. Everything here is answered
// offline (a suggestion itself needs GitHub, so the document's state is read back through the
// version mismatch). .ci/run installs the real server (PEERS_COPILOT=1): where the peers are
// required, a missing one fails the test.
func TestCopilotStandinMatchesRealServer(t *testing.T) {
	skipIfShort(t, "the real Copilot language server")
	real := os.Getenv("COPILOT_LS")
	if real == "" {
		skipWithoutPeer(t, `COPILOT_LS is not set (eval "$(PEERS_COPILOT=1 ../shared/tools/install-test-peers.sh)")`)
	}
	skipOnWindows(t, "the real server is installed for Linux here")
	_, agent := binaries(t)
	const u, u2 = "file:///w/main.go", "file:///w/none.go"
	signedIn := []copilotStep{
		{"initialize", `{"protocolVersion":1,"clientCapabilities":{}}`, false},
		{"nes/suggest", `{"sessionId":"none","uri":"` + u + `","version":1,"position":{"line":0,"character":0},"triggerKind":"manual"}`, false},
		{"nes/start", `{}`, false},
		{"nes/start", `{}`, false},
		{"document/didOpen", `{"sessionId":"bogus","uri":"` + u + `","languageId":"go","version":1,"text":"x"}`, true},
		{"nes/suggest", `{"sessionId":"$S","uri":"` + u + `","version":1,"position":{"line":0,"character":0},"triggerKind":"manual"}`, false},
		{"document/didOpen", `{"sessionId":"$S","uri":"` + u + `","languageId":"go","version":1,"text":"package main\n\t\n"}`, true},
		{"document/didOpen", `{"sessionId":"$S","uri":"` + u + `","languageId":"go","version":7,"text":"duplicate"}`, true},
		{"document/didChange", `{"sessionId":"$S","uri":"` + u + `","version":1,"contentChanges":[{"range":{"start":{"line":1,"character":1},"end":{"line":1,"character":1}},"text":"x"}]}`, true},
		{"document/didChange", `{"sessionId":"$S","uri":"` + u + `","version":2,"contentChanges":[{"text":"full"}]}`, true},
		{"document/didChange", `{"sessionId":"$S","uri":"` + u + `","version":2,"contentChanges":[{"range":{"start":{"line":1,"character":2},"end":{"line":1,"character":2}},"text":"x"}]}`, true},
		{"document/didChange", `{"sessionId":"$S","uri":"` + u + `","version":2,"contentChanges":[{"range":{"start":{"line":5,"character":0},"end":{"line":5,"character":0}},"text":"x"}]}`, true},
		{"document/didChange", `{"sessionId":"$S","uri":"` + u + `","version":2,"contentChanges":[{"range":{"start":{"line":1,"character":1},"end":{"line":1,"character":0}},"text":""}]}`, true},
		{"document/didChange", `{"sessionId":"$S","uri":"` + u + `","version":3,"contentChanges":[{"range":{"start":{"line":1,"character":1},"end":{"line":1,"character":1}},"text":"r"},{"range":{"start":{"line":1,"character":2},"end":{"line":1,"character":2}},"text":"e"}]}`, true},
		{"document/didChange", `{"sessionId":"$S","uri":"` + u2 + `","version":4,"contentChanges":[{"range":{"start":{"line":0,"character":0},"end":{"line":0,"character":0}},"text":"x"}]}`, true},
		{"document/didClose", `{"sessionId":"$S","uri":"` + u2 + `"}`, true},
		{"document/didFocus", `{"sessionId":"$S","uri":"` + u + `","version":9,"position":{"line":0,"character":0},"visibleRange":{"start":{"line":0,"character":0},"end":{"line":1,"character":0}}}`, true},
		{"document/didFocus", `{"sessionId":"$S","uri":"` + u + `","version":3,"position":{"line":0,"character":0},"visibleRange":{"start":{"line":0,"character":0},"end":{"line":1,"character":0}}}`, true},
		{"nes/suggest", `{"sessionId":"$S","uri":"` + u + `","version":4,"position":{"line":1,"character":3},"triggerKind":"manual"}`, false},
		{"nes/suggest", `{"sessionId":"$S","uri":"` + u + `","version":2,"position":{"line":1,"character":3},"triggerKind":"manual"}`, false},
		{"nes/suggest", `{"sessionId":"bogus","uri":"` + u + `","version":3,"position":{"line":1,"character":3},"triggerKind":"manual"}`, false},
		{"nes/suggest", `{"sessionId":"$S","uri":"` + u2 + `","version":3,"position":{"line":0,"character":0},"triggerKind":"manual"}`, false},
		{"nes/reject", `{"sessionId":"$S","id":"never-suggested","reason":"rejected"}`, true},
		{"nes/accept", `{"sessionId":"bogus","id":"never-suggested"}`, true},
		{"document/didClose", `{"sessionId":"$S","uri":"` + u + `"}`, true},
		{"nes/suggest", `{"sessionId":"$S","uri":"` + u + `","version":3,"position":{"line":1,"character":3},"triggerKind":"manual"}`, false},
		{"document/didOpen", `{"sessionId":"$S","uri":"` + u + `","languageId":"go","version":3,"text":"package main\n\tre\n"}`, true},
		{"nes/close", `{"sessionId":"bogus"}`, false},
		{"nes/close", `{"sessionId":"$S"}`, false},
		{"nes/close", `{"sessionId":"$S"}`, false},
		{"nes/suggest", `{"sessionId":"$S","uri":"` + u + `","version":3,"position":{"line":1,"character":3},"triggerKind":"manual"}`, false},
		{"nes/start", `{}`, false},
		// nes/close closed every document.
		{"nes/suggest", `{"sessionId":"$S","uri":"` + u + `","version":3,"position":{"line":1,"character":3},"triggerKind":"manual"}`, false},
	}
	signedOut := []copilotStep{
		{"initialize", `{"protocolVersion":1,"clientCapabilities":{}}`, false},
		{"nes/start", `{}`, false},
		{"nes/suggest", `{"sessionId":"none","uri":"` + u + `","version":1,"position":{"line":0,"character":0},"triggerKind":"manual"}`, false},
		{"authenticate", `{"methodId":"login"}`, false},
		{"authenticate", `{"methodId":"github_oauth"}`, false},
	}
	for _, tc := range []struct {
		name  string
		env   []string
		steps []copilotStep
	}{
		{"signed in", []string{"GH_COPILOT_TOKEN=test"}, signedIn},
		{"signed out", nil, signedOut},
	} {
		t.Run(tc.name, func(t *testing.T) {
			realAnswers, realWarns := copilotTranscript(t, []string{real, "--acp"}, tc.env, tc.steps)
			standinAnswers, standinWarns := copilotTranscript(t, []string{agent, "--copilot"}, tc.env, tc.steps)
			for i := range max(len(realAnswers), len(standinAnswers)) {
				r, s := "(none)", "(none)"
				if i < len(realAnswers) {
					r = realAnswers[i]
				}
				if i < len(standinAnswers) {
					s = standinAnswers[i]
				}
				if r != s {
					t.Errorf("answer %d differs:\n  the real server: %s\n  the stand-in:    %s", i+1, r, s)
				}
			}
			if strings.Join(realWarns, "\n") != strings.Join(standinWarns, "\n") {
				t.Errorf("what they said they ignored differs:\nthe real server:\n  %s\nthe stand-in:\n  %s", strings.Join(realWarns, "\n  "), strings.Join(standinWarns, "\n  "))
			}
		})
	}
}

// copilotStep is one message of TestCopilotStandinMatchesRealServer: params is JSON, where "$S"
// stands for the session id of the last nes/start answered; note means a notification.
type copilotStep struct {
	method, params string
	note           bool
}

// copilotTranscript runs argv (an ACP agent) with a home of its own and env, sends it steps and
// returns its answers to the requests, each {"result": …} or {"error": …} with session ids
// numbered (S1, S2, …), and the lines of its stderr saying what it ignored.
func copilotTranscript(t *testing.T, argv, env []string, steps []copilotStep) (answers, warns []string) {
	t.Helper()
	home := t.TempDir()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, "config"), "GITHUB_COPILOT_ACP_USE_CLI=0"}, env...)
	ownGroup(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr testutil.SyncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = stdin.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(3 * time.Second):
			_ = signalGroup(cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	}()
	lines := make(chan []byte, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- append([]byte(nil), sc.Bytes()...)
		}
		close(lines)
	}()
	sessions := map[string]string{} // session id → S1, S2, …
	session := ""
	number := func(s string) string {
		for id, n := range sessions {
			s = strings.ReplaceAll(s, id, n)
		}
		return s
	}
	for i, st := range steps {
		params := strings.ReplaceAll(st.params, "$S", session)
		msg := fmt.Sprintf(`{"jsonrpc":"2.0","method":%q,"params":%s}`, st.method, params)
		if !st.note {
			msg = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, i+1, st.method, params)
		}
		if _, err := io.WriteString(stdin, msg+"\n"); err != nil {
			t.Fatalf("%s: writing %s: %v", argv[0], st.method, err)
		}
		if st.note {
			continue
		}
		var answer map[string]any
		for answer == nil {
			select {
			case line, ok := <-lines:
				if !ok {
					t.Fatalf("%s ended before answering %s; stderr:\n%s", argv[0], st.method, stderr.String())
				}
				var m map[string]any
				if json.Unmarshal(line, &m) == nil && m["id"] == float64(i+1) && m["method"] == nil {
					answer = m
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("%s did not answer %s within 30 s; stderr:\n%s", argv[0], st.method, stderr.String())
			}
		}
		delete(answer, "jsonrpc")
		delete(answer, "id")
		if res, ok := answer["result"].(map[string]any); ok && st.method == "nes/start" {
			if id, ok := res["sessionId"].(string); ok && id != "" {
				session = id
				sessions[id] = fmt.Sprintf("S%d", len(sessions)+1)
			}
		}
		b, _ := json.Marshal(answer)
		answers = append(answers, st.method+" "+number(string(b)))
	}
	// What came before the last answer was written down before it (each writes in order).
	for _, line := range strings.Split(stderr.String(), "\n") {
		if i := strings.Index(line, "[acp.nes] Ignoring"); i >= 0 {
			warns = append(warns, number(line[i:]))
		}
	}
	return answers, warns
}
