package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// lspModeEnv returns Emacs and lsp-mode 10's load path, or skips (fails under
// ACP_LSP_BRIDGE_REQUIRE_PEERS=1) when they are not installed.
func lspModeEnv(t *testing.T) (emacs, loadPath string) {
	t.Helper()
	emacs, loadPath = os.Getenv("EMACS"), os.Getenv("LSPMODE_LOAD_PATH")
	if emacs == "" || loadPath == "" {
		skipWithoutPeer(t, `EMACS or LSPMODE_LOAD_PATH is not set; run eval "$(PEERS_LSPMODE=1 bash ../shared/tools/install-test-peers.sh)"`)
	}
	return emacs, loadPath
}

// TestLspModeBesideAnotherServer runs the real lsp-mode 10 in Emacs 30 (testdata/emacs/lsp-mode.el)
// with the shipped editors/emacs/acp-lsp-bridge-lsp-mode.el, the bridge as an add-on beside the
// buffer's own language server (internal/test/testlsp, which takes the client's first position
// encoding, as LSP asks of servers). lsp-mode keeps one position encoding per buffer, the one of the
// server that initialized last, so both servers must take lsp-mode's first choice, utf-32. The
// script types after astral-plane, CJK and combining-mark text (characters, deletions, a new line)
// and checks after each step that both servers' copies of the document equal the buffer: the
// bridge's through its agent's mirror (the agent uses utf-16, so every change is converted), and
// the other server's.
func TestLspModeBesideAnotherServer(t *testing.T) {
	emacs, loadPath := lspModeEnv(t)
	env, p := lspModeFiles(t, loadPath, nil)
	out, ok := emacsBatch(t, emacs, filepath.Join(moduleRoot(t), "testdata", "emacs", "lsp-mode.el"), p("work"), env...)
	if !ok || testing.Verbose() {
		t.Logf("emacs output:\n%s", emacsIndent(out))
	}
	if !ok {
		b, _ := os.ReadFile(p("bridge.log"))
		t.Logf("bridge log:\n%s", emacsIndent(string(b)))
	}
}

// lspModeFiles makes the folders and files of an lsp-mode session in a fresh directory and returns
// the environment that lsp-mode-setup.el reads and a function naming the
// session's files: "work" (the project), "bridge.log", "agent.log", "bridge-mirror",
// "main-mirror".
func lspModeFiles(t *testing.T, loadPath string, rules []map[string]string) (env []string, p func(string) string) {
	t.Helper()
	bridge, agent := binaries(t)
	dir := t.TempDir()
	p = func(name string) string { return filepath.Join(dir, name) }
	for _, d := range []string{"work", "home", "scratch", "bridge-mirror", "main-mirror"} {
		if err := os.MkdirAll(p(d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env = []string{
		"HOME=" + p("home"),
		"LSPMODE_LOAD_PATH=" + loadPath,
		"ACP_EMACS_LSP_CONFIG=" + filepath.Join(moduleRoot(t), "editors", "emacs", "acp-lsp-bridge-lsp-mode.el"),
		"ACP_LSP_BRIDGE=" + bridge,
		"ACP_TEST_AGENT=" + agent,
		"ACP_TEST_LSP=" + testLSP(t),
		"EMACS_TEST_DIR=" + p("work"),
		"EMACS_TEST_SCRATCH=" + p("scratch"),
		"EMACS_TEST_BRIDGE_MIRROR=" + p("bridge-mirror"),
		"EMACS_TEST_MAIN_MIRROR=" + p("main-mirror"),
		"EMACS_TEST_BRIDGE_LOG=" + p("bridge.log"),
		"EMACS_TEST_AGENT_LOG=" + p("agent.log"),
	}
	if rules != nil {
		b, err := json.Marshal(rules)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p("rules.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		env = append(env, "EMACS_TEST_RULES="+p("rules.json"))
	}
	return env, p
}

// TestLspModeInTheTerminal drives the real lsp-mode 10 in `emacs -nw` in tmux, as a person uses
// it, with the shipped configuration and the bridge beside the buffer's own server
// (testdata/emacs/lsp-mode-tmux.el is the init file). What the test reads is the screen, the
// saved file and what the agent heard:
//
//   - the mode line's lighter shows the bridge's state (acp-lsp-bridge/status): NES when ready,
//     NES:off after C-c n t, which says so in the echo area, and NES after it again;
//   - typing "o" after non-ASCII text, lsp-inline-completion-mode shows the agent's suggestion as
//     ghost text after lsp-mode's idle delay, with its keys in the echo area; C-<return> (as a
//     terminal with extended keys sends it) accepts it, and the agent hears nes/accept;
//   - on a line that already reads "retur", the shipped C-c n i asks by hand (the agent gets
//     triggerKind "manual") and shows the ghost text; C-g hides it;
//   - C-c n a applies the bridge's code action there (lsp-mode runs a lone action at once), and
//     the agent hears nes/accept for it;
//   - C-x C-s saves what the user accepted; both servers' copies equal the saved file; C-x C-c
//     ends Emacs, and neither server, nor the agent, is left running.
func TestLspModeInTheTerminal(t *testing.T) {
	skipIfShort(t, "Emacs in a terminal")
	emacs, loadPath := lspModeEnv(t)
	env, p := lspModeFiles(t, loadPath, []map[string]string{
		{"when": "𐐀 = fo", "find": "𐐀 = fo", "replace": "𐐀 = foo(日本, é, 😀)"},
		{"when": "retur", "find": "retur", "replace": "return nil"},
	})
	const text = "// 日本語のメモ: é, ñ, 𐐀 and 😀\n\tlabel := \"é 中文 𐐀\"; 𐐀 = f\n\tretur\n}\n"
	const want = "// 日本語のメモ: é, ñ, 𐐀 and 😀\n\tlabel := \"é 中文 𐐀\"; 𐐀 = foo(日本, é, 😀)\n\treturn nil\n}\n"
	file := filepath.Join(p("work"), "main.txt")
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	env = append(os.Environ(), append([]string{"LANG=C.UTF-8", "LC_ALL=C.UTF-8", "TERM=xterm-256color"}, env...)...)
	term := startTmux(t, p("work"), env, 160, 24, emacs, "-nw", "-Q", "-l",
		filepath.Join(moduleRoot(t), "testdata", "emacs", "lsp-mode-tmux.el"), "main.txt")
	defer func() {
		if t.Failed() {
			t.Logf("the screen:\n%s", indentScreen(term.screen()))
			for _, f := range []string{"bridge.log", "agent.log"} {
				b, _ := os.ReadFile(p(f))
				t.Logf("%s:\n%s", f, emacsIndent(string(b)))
			}
		}
	}()
	agentLog := p("agent.log")
	lifecycle := func() []string {
		msgs, _ := emacsReadAgentLog(agentLog)
		var out []string
		for _, m := range msgs {
			if m.Method == "nes/accept" || m.Method == "nes/reject" {
				out = append(out, m.Method+" "+m.Params.ID)
			}
		}
		return out
	}
	waitAgent := func(what string, ok func([]emacsAgentMessage) bool) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for {
			msgs, _ := emacsReadAgentLog(agentLog)
			if ok(msgs) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the agent never heard %s", what)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	count := func(method string) func([]emacsAgentMessage) bool {
		return func(msgs []emacsAgentMessage) bool {
			return slices.ContainsFunc(msgs, func(m emacsAgentMessage) bool { return m.Method == method })
		}
	}

	// lsp-mode starts both servers; the mode line names them.
	term.waitText(30*time.Second, "[acp-lsp-bridge:", "[acp-test-main:")
	waitAgent("document/didOpen", count("document/didOpen"))

	// The shipped file's lighter shows the bridge's state: ready, then off and on again with
	// C-c n t, which says so in the echo area.
	term.waitText(15*time.Second, " NES")
	term.keys("C-c", "n", "t")
	term.waitText(10*time.Second, " NES:off", "suggestions while typing are off for main.txt")
	term.keys("C-c", "n", "t")
	term.waitScreen("the lighter back to NES", 10*time.Second, func(s string) bool {
		return strings.Contains(s, " NES") && !strings.Contains(s, " NES:off") && strings.Contains(s, "suggestions while typing are on for main.txt")
	})

	// Ghost text while typing, accepted with C-<return>.
	term.keys("M-g", "g", "2", "Enter", "C-e", "o")
	term.waitText(15*time.Second, "𐐀 = foo(日本, é, 😀)", "Accept: [C-<return>]")
	term.keys("C-Enter")
	term.waitScreen("the ghost text's keys to leave the echo area", 10*time.Second, func(s string) bool {
		return !strings.Contains(s, "Accept: [C-<return>]") && strings.Contains(s, "𐐀 = foo(日本, é, 😀)")
	})
	waitAgent("nes/accept", count("nes/accept"))

	// The manual trigger on the next line, then C-g.
	term.keys("C-n", "C-e", "C-c", "n", "i")
	term.waitText(15*time.Second, "return nil", "Accept: [C-<return>]")
	msgs, _ := emacsReadAgentLog(agentLog)
	manual := slices.ContainsFunc(msgs, func(m emacsAgentMessage) bool {
		return m.Method == "nes/suggest" && strings.Contains(m.raw, `"triggerKind":"manual"`)
	})
	if !manual {
		t.Errorf("C-c n i did not ask the agent with triggerKind manual")
	}
	// In a terminal, C-g is also Emacs's quit character: pressed while Emacs is busy (lsp-mode's
	// timers run after the overlay is shown), it quits what runs ("Quit" in the echo area) and
	// never reaches the overlay's keymap, and the ghost text stays, as it does for a user. The
	// user then presses C-g again; so does the test, a few times at most.
	hidden := func(s string) bool { return !strings.Contains(s, "return nil") && strings.Contains(s, "retur") }
	for try := 1; ; try++ {
		term.keys("C-g")
		if try == 3 {
			term.waitScreen("C-g to hide the ghost text", 10*time.Second, hidden)
			break
		}
		s, ok := term.seen(3*time.Second, hidden)
		if ok {
			break
		}
		t.Logf("the ghost text is still shown after C-g (echo area: %q); pressing C-g again", lastLine(s))
	}

	// The code action.
	accepted := len(slices.DeleteFunc(lifecycle(), func(s string) bool { return !strings.HasPrefix(s, "nes/accept") }))
	term.keys("C-c", "n", "a")
	term.waitText(15*time.Second, "return nil")
	waitAgent("nes/accept for the code action", func([]emacsAgentMessage) bool {
		return len(slices.DeleteFunc(lifecycle(), func(s string) bool { return !strings.HasPrefix(s, "nes/accept") })) == accepted+1
	})

	// Save, compare, quit.
	term.keys("C-x", "C-s")
	term.waitText(10*time.Second, "Wrote ")
	saved, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if string(saved) != want {
		t.Errorf("saved file %q, want %q", saved, want)
	}
	for _, m := range []string{"bridge-mirror", "main-mirror"} {
		deadline := time.Now().Add(10 * time.Second)
		for {
			b, _ := os.ReadFile(filepath.Join(p(m), "main.txt"))
			if string(b) == want {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("%s has %q, want the saved file", m, b)
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	term.keys("C-x", "C-c")
	if code := term.waitExit(20 * time.Second); code != 0 {
		t.Errorf("emacs exited with %d", code)
	}
	// Each id ended once.
	seen := map[string]int{}
	for _, l := range lifecycle() {
		seen[strings.Fields(l)[1]]++
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("suggestion %s ended %d times: %v", id, n, lifecycle())
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		left := append(append(processesWith(p("bridge.log")), processesWith(agentLog)...), processesWith(p("main-mirror"))...)
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes left after Emacs exited: %v", left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
