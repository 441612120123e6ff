package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Emacs with the Copilot stand-in (acp-test-agent --copilot, see copilot_standin_test.go): the
// shipped editors/emacs/acp-lsp-bridge-eglot.el and acp-lsp-bridge-lsp-mode.el, loaded as a user
// loads them, in Emacs 30 in batch mode (testdata/emacs/copilot-eglot.el, copilot-lsp-mode.el),
// the stand-in signed in through GH_COPILOT_TOKEN in the environment Emacs starts the bridge in,
// as editors/emacs/README.md says.

// copilotEmacsDoc is main.txt in the suggest case: the lines 4 to 7 to type on.
const copilotEmacsDoc = "package main\n\nfunc f() error {\n\t\n\t\n\t\n\t\n}\n"

// copilotEmacsResult is what the scripts write on success.
type copilotEmacsResult struct {
	URI       string   `json:"uri"`
	Accepted  []string `json:"accepted"`
	Rejected  string   `json:"rejected"`
	TypedOver string   `json:"typedOver"`
	Closed    string   `json:"closed"`
}

// runCopilotEmacs runs script in a fresh project with main.txt holding doc, the stand-in's
// rules copilotRules and env added, and returns what it wrote, the project and the stand-in's log.
func runCopilotEmacs(t *testing.T, emacs, script, doc string, env ...string) (res copilotEmacsResult, work, agentLog string) {
	t.Helper()
	bridge, agent := binaries(t)
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	for _, d := range []string{"work", "home", "scratch", "main-mirror", "bridge-mirror"} {
		if err := os.MkdirAll(p(d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	work, agentLog = p("work"), p("agent.log")
	if err := os.WriteFile(filepath.Join(work, "main.txt"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p("rules.json"), []byte(copilotRules), 0o644); err != nil {
		t.Fatal(err)
	}
	out, ok := emacsBatch(t, emacs, filepath.Join(moduleRoot(t), "testdata", "emacs", script), work,
		append([]string{
			"HOME=" + p("home"),
			"GH_COPILOT_TOKEN=test",
			"ACP_EMACS_CONFIG=" + emacsEglotConfig(t),
			"ACP_EMACS_LSP_CONFIG=" + filepath.Join(moduleRoot(t), "editors", "emacs", "acp-lsp-bridge-lsp-mode.el"),
			"ACP_LSP_BRIDGE=" + bridge,
			"ACP_TEST_AGENT=" + agent,
			"EMACS_TEST_DIR=" + work,
			"EMACS_TEST_SCRATCH=" + p("scratch"),
			"EMACS_TEST_MAIN_MIRROR=" + p("main-mirror"),
			"EMACS_TEST_BRIDGE_MIRROR=" + p("bridge-mirror"),
			"EMACS_TEST_RULES=" + p("rules.json"),
			"EMACS_TEST_BRIDGE_LOG=" + p("bridge.log"),
			"EMACS_TEST_AGENT_LOG=" + agentLog,
			"EMACS_TEST_RESULT=" + p("result.json"),
		}, env...)...)
	t.Cleanup(func() {
		if t.Failed() || testing.Verbose() {
			t.Logf("emacs output:\n%s", emacsIndent(out))
			for _, f := range []string{"bridge.log", "agent.log"} {
				b, _ := os.ReadFile(p(f))
				t.Logf("%s:\n%s", f, emacsIndent(string(b)))
			}
		}
	})
	if !ok {
		t.FailNow()
	}
	b, err := os.ReadFile(p("result.json"))
	if err == nil {
		err = json.Unmarshal(b, &res)
	}
	if err != nil {
		t.Fatalf("result.json %s: %v", b, err)
	}
	return res, work, agentLog
}

// checkCopilotEmacsSuggest checks, in the stand-in's log, what the suggest case did: the
// accepted suggestions heard nes/accept once and nothing else; the dismissed one was counted
// "rejected", the one typed over and the one left open when the file closed "ignored", and no
// other suggestion "rejected"; the saved file is what the user took.
func checkCopilotEmacsSuggest(t *testing.T, res copilotEmacsResult, work, agentLog string) {
	t.Helper()
	log := readAgentLog(t, agentLog)
	copilotSessionStarted(t, log)
	if len(res.Accepted) != 2 {
		t.Errorf("the script accepted %v, want two suggestions", res.Accepted)
	}
	ended := map[string][]string{} // id → what the stand-in heard of its end, in order
	counted := map[string][]string{}
	for _, m := range log {
		p, _ := m["params"].(map[string]any)
		id := fmt.Sprint(p["id"])
		switch m["method"] {
		case "nes/accept":
			ended[id] = append(ended[id], "accept")
		case "nes/reject":
			ended[id] = append(ended[id], fmt.Sprintf("reject %v", p["reason"]))
		case "test/copilotReject":
			counted[id] = append(counted[id], fmt.Sprint(p["counted"]))
		}
	}
	for _, id := range res.Accepted {
		if !slices.Equal(ended[id], []string{"accept"}) {
			t.Errorf("accepted suggestion %s: the stand-in heard %v, want nes/accept alone", id, ended[id])
		}
	}
	for id, want := range map[string]string{res.Rejected: "rejected", res.TypedOver: "ignored", res.Closed: "ignored"} {
		if !slices.Equal(counted[id], []string{want}) {
			t.Errorf("suggestion %s: the stand-in counted %v, want %s", id, counted[id], want)
		}
	}
	for id, c := range counted {
		if id != res.Rejected && slices.Contains(c, "rejected") {
			t.Errorf("suggestion %s, which the user did not dismiss, was counted rejected (%v; it heard %v)", id, c, ended[id])
		}
	}
	want := "package main\n\nfunc f() error {\n\treturn nil\n\tfmt.Println(err)\n\tlog.Pri\n\treturz\n}\n"
	if got, err := os.ReadFile(filepath.Join(work, "main.txt")); err != nil || string(got) != want {
		t.Errorf("the saved file:\n%s\nwant:\n%s (%v)", got, want, err)
	}
}

// checkCopilotEmacsDrop checks the drop case: the stand-in dropped a change made while typing,
// the bridge sent the document again with the text the user had, and the saved file has the
// suggestion taken.
func checkCopilotEmacsDrop(t *testing.T, res copilotEmacsResult, work, agentLog string) {
	t.Helper()
	log := readAgentLog(t, agentLog)
	copilotSessionStarted(t, log)
	copilotRepaired(t, log, res.URI, func(line string) bool {
		return slices.Contains([]string{"\tre", "\tret", "\tretu", "\tretur"}, line)
	})
	want := strings.Replace(copilotDoc, "{\n\t\n", "{\n\treturn nil\n", 1)
	if got, err := os.ReadFile(filepath.Join(work, "main.txt")); err != nil || string(got) != want {
		t.Errorf("the saved file:\n%s\nwant:\n%s (%v)", got, want, err)
	}
}

// TestCopilotEmacsEglot: Eglot with the shipped configuration and the Copilot stand-in
// (testdata/emacs/copilot-eglot.el, case suggest): "return nil" taken from C-c n a's code
// actions, "fmt.Println(err)" from the completion item C-M-i lists in *Completions* (M-<down>,
// M-RET) (both heard as nes/accept), a third
// suggestion shown and dismissed with C-c n k (counted "rejected" by the stand-in), a fourth
// typed over and a fifth left when the file closed (each counted "ignored"); C-x C-s saves what
// was taken.
func TestCopilotEmacsEglot(t *testing.T) {
	emacs := os.Getenv("EMACS")
	if emacs == "" {
		skipWithoutPeer(t, `EMACS is not set; run eval "$(PEERS_EMACS=1 bash ../shared/tools/install-test-peers.sh)"`)
	}
	res, work, agentLog := runCopilotEmacs(t, emacs, "copilot-eglot.el", copilotEmacsDoc, "EMACS_TEST_CASE=suggest")
	checkCopilotEmacsSuggest(t, res, work, agentLog)
}

// TestCopilotEmacsEglotDroppedChange: the stand-in drops the second didChange Eglot sends while
// the user types "retur" (the "e"), as Copilot ignores a change it judged stale; its copy then
// lacks the "e", and its nes/suggest refuses Eglot's version. C-c n a still offers "return nil":
// the bridge sent the document again (didClose, didOpen with the text Eglot has) and asked once
// more (testdata/emacs/copilot-eglot.el, case drop).
func TestCopilotEmacsEglotDroppedChange(t *testing.T) {
	emacs := os.Getenv("EMACS")
	if emacs == "" {
		skipWithoutPeer(t, `EMACS is not set; run eval "$(PEERS_EMACS=1 bash ../shared/tools/install-test-peers.sh)"`)
	}
	res, work, agentLog := runCopilotEmacs(t, emacs, "copilot-eglot.el", copilotDoc, "EMACS_TEST_CASE=drop", "EMACS_TEST_DROP=2")
	checkCopilotEmacsDrop(t, res, work, agentLog)
}

// TestCopilotEmacsLspMode: the real lsp-mode 10 with the shipped configuration, the bridge beside
// the buffer's own server and running the Copilot stand-in (testdata/emacs/copilot-lsp-mode.el,
// case suggest): "return nil" taken from C-c n a's code action, "fmt.Println(err)" from the ghost
// text C-c n i shows, with C-<return> (both heard as nes/accept); a third ghost text dismissed
// with C-c n k (counted "rejected" by the stand-in), a fourth typed over and a fifth suggestion
// left when the file closed (each counted "ignored"); C-x C-s saves what was taken.
func TestCopilotEmacsLspMode(t *testing.T) {
	emacs, loadPath := lspModeEnv(t)
	res, work, agentLog := runCopilotEmacs(t, emacs, "copilot-lsp-mode.el", copilotEmacsDoc,
		"EMACS_TEST_CASE=suggest", "LSPMODE_LOAD_PATH="+loadPath, "ACP_TEST_LSP="+testLSP(t))
	checkCopilotEmacsSuggest(t, res, work, agentLog)
}

// TestCopilotEmacsLspModeDroppedChange: lsp-mode sends a didChange per key; the stand-in drops
// the second (the "e" of "retur"), so its copy lacks it and its nes/suggest refuses lsp-mode's
// version. C-c n a still applies "return nil": the bridge sent the document again (didClose,
// didOpen with the text lsp-mode has) and asked once more; the stand-in's copy ends as the buffer
// (testdata/emacs/copilot-lsp-mode.el, case drop).
func TestCopilotEmacsLspModeDroppedChange(t *testing.T) {
	emacs, loadPath := lspModeEnv(t)
	res, work, agentLog := runCopilotEmacs(t, emacs, "copilot-lsp-mode.el", copilotDoc,
		"EMACS_TEST_CASE=drop", "EMACS_TEST_DROP=2", "LSPMODE_LOAD_PATH="+loadPath, "ACP_TEST_LSP="+testLSP(t))
	checkCopilotEmacsDrop(t, res, work, agentLog)
}
