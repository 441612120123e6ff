package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestHelixInTheTerminal runs the real Helix 25.07 ($HX) in a terminal (tmux), with the shipped
// editors/helix/languages.toml copied into its configuration as its README says, only the
// bridge's path changed, and the bridge's built-in agent that file names. As a user would, it
// renames `sum` to `acc` where it is declared, takes the next use's rename from the code-action
// menu (`space a`, Enter), takes the last one as a completion item (Ctrl-x, Tab, Enter) and saves
// with `:w`. Then it renames the function Total, which another open file calls: the code-action
// menu offers that file's rename and a jump to it; it takes the jump, which shows the other file,
// takes the rename there from the menu, saves both with `:wa`, turns suggestions while typing off
// with `:lsp-workspace-command acp-lsp-bridge.toggle` and quits with `:q`. It reads the
// screen at each step, then the saved files, and checks that neither the bridge nor its agent is
// left running.
func TestHelixInTheTerminal(t *testing.T) {
	const text = "package main\n\n// Total adds the prices, in €.\nfunc Total(prices []int) int {\n\tsum := 0 // 日本\n\tfor _, p := range prices {\n\t\t/*é*/ sum += p\n\t}\n\treturn sum\n}\n"
	const mainText = "package main\n\nfunc main() {\n\tprintln(\"日本\", Total([]int{1, 2}), Total(nil))\n}\n"
	// The shipped file, only the bridge's path changed (in `command` and in the agent it names),
	// and the bridge's log in this test's folder, in full.
	shipped, err := os.ReadFile(filepath.Join(moduleRoot(t), "editors", "helix", "languages.toml"))
	if err != nil {
		t.Fatal(err)
	}
	term, work, bridgeLog := startHelix(t, func(bridge, bridgeLog string) string {
		toml := strings.ReplaceAll(string(shipped), `command = "acp-lsp-bridge"`, `command = "`+bridge+`"`)
		if strings.Count(toml, bridge) < 2 {
			t.Fatalf("the bridge's path was not found in languages.toml twice (the server and its agent)")
		}
		toml = strings.Replace(toml, `args = ["--log-file", "/tmp/acp-lsp-bridge.log"]`, `args = ["--log-file", "`+bridgeLog+`", "--log-level", "debug"]`, 1)
		if !strings.Contains(toml, bridgeLog) {
			t.Fatalf("the bridge's --log-file was not found in languages.toml")
		}
		return toml
	}, map[string]string{"total.go": text, "main.go": mainText}, "total.go", "main.go")
	bridge, _ := binaries(t)
	file, mainFile := filepath.Join(work, "total.go"), filepath.Join(work, "main.go")
	// The user's first edit reaches the built-in agent as the user makes it: wait until the bridge
	// has the document (an edit made before would be part of the text it opens with, and no
	// rename) and the agent is ready (an edit made before that reaches it later, as one change:
	// TestBinaryEditsWhileTheAgentStarts).
	waitLogLine := func(what string, match func(line string) bool) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); ; {
			data, _ := os.ReadFile(bridgeLog)
			for _, line := range strings.Split(string(data), "\n") {
				if match(line) {
					return
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("the bridge's log never said %s", what)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	waitLogLine("that it opened total.go", func(l string) bool {
		return strings.Contains(l, `"message":"opened"`) && strings.Contains(l, "total.go")
	})
	waitLogLine("that the agent is ready", func(l string) bool {
		return strings.Contains(l, `"message":"agent ready"`)
	})

	// Rename sum where it is declared.
	term.keys("/")
	term.text("sum")
	term.keys("Enter")
	term.keys("c")
	term.text("acc")
	term.keys("Escape")
	term.waitText(5*time.Second, "acc := 0 // 日本")

	// space a lists the next use's rename; Enter applies it.
	waitAction := func(want string) {
		t.Helper()
		term.askUntil("the code action "+want, want, func() {
			term.keys("Escape")
			term.keys("Space", "a")
		})
	}
	waitAction("Next edit: `sum` → `acc` (line 7)")
	term.keys("Enter")
	term.waitText(5*time.Second, "/*é*/ acc += p")

	// The last use as a completion item: at the end of line 9, Ctrl-x lists it, Tab selects it
	// and Enter takes it.
	term.keys(":")
	term.text("9")
	term.keys("Enter")
	term.keys("A")
	term.askUntil("the completion item acc", "acc text", func() { term.keys("C-x") })
	term.takeItem("`sum` → `acc` (line 9)", "return acc")

	// :w saves what the user accepted; :q leaves.
	term.save("total.go")
	saved := strings.ReplaceAll(text, "sum", "acc")
	if got, err := os.ReadFile(file); err != nil || string(got) != saved {
		t.Errorf("the saved file:\n%s\nwant:\n%s (%v)", got, saved, err)
	}

	// Rename the function, which main.go calls: the menu offers the rename in main.go and a
	// jump there. The jump (the second item) shows main.go, where the menu offers the rename.
	term.keys("/")
	term.text(`Total\(`)
	term.keys("Enter")
	term.keys("c")
	term.text("Sum(")
	term.keys("Escape")
	term.waitText(5*time.Second, "func Sum(prices []int) int {")
	waitAction("Next edit: `Total` → `Sum` (2 places from main.go:4)")
	term.waitText(5*time.Second, "Next edit: go to main.go:4")
	term.keys("Down")
	term.keys("Enter")
	term.waitText(5*time.Second, `println("日本", Total([]int{1, 2}), Total(nil))`)
	term.waitText(5*time.Second, "main.go")
	waitAction("Next edit: `Total` → `Sum` (2 places from main.go:4)")
	term.keys("Enter")
	term.waitText(5*time.Second, `println("日本", Sum([]int{1, 2}), Sum(nil))`)
	term.keys(":")
	term.text("wa")
	term.keys("Enter")
	saved = strings.Replace(saved, "func Total", "func Sum", 1)
	for f, want := range map[string]string{file: saved, mainFile: strings.ReplaceAll(mainText, "Total", "Sum")} {
		got, _ := os.ReadFile(f)
		for deadline := time.Now().Add(5 * time.Second); string(got) != want && time.Now().Before(deadline); {
			time.Sleep(100 * time.Millisecond)
			got, _ = os.ReadFile(f)
		}
		if string(got) != want {
			t.Errorf("the saved %s:\n%s\nwant:\n%s", filepath.Base(f), got, want)
		}
	}
	// The switch, as the README binds it: the bridge turns the asking while typing off.
	term.keys(":")
	term.text("lsp-workspace-command acp-lsp-bridge.toggle")
	term.keys("Enter")
	waitLogLine("that :lsp-workspace-command acp-lsp-bridge.toggle turned suggestions off", func(l string) bool {
		return strings.Contains(l, `"for":"every document","on":false,`)
	})
	term.keys(":")
	term.text("q")
	term.keys("Enter")
	if code := term.waitExit(10 * time.Second); code != 0 {
		t.Errorf("hx exited with %d", code)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(agentPIDs(bridge)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the bridge or its agent still runs after hx quit: pids %v", agentPIDs(bridge))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// startHelix runs the real Helix ($HX) in a terminal (tmux) of 120×30 cells, in a fresh workspace
// holding files (name → text), with args on its command line and languages.toml in its
// configuration: what languages returns, given the built bridge's path and the file the bridge is
// to log to. It waits until Helix shows the first file, and shows the screen and the bridge's log
// when the test fails. It returns the terminal, the workspace and the bridge's log file.
func startHelix(t *testing.T, languages func(bridge, bridgeLog string) string, files map[string]string, args ...string) (term *tmuxTerm, work, bridgeLog string) {
	t.Helper()
	skipIfShort(t, "Helix in a terminal")
	hx := os.Getenv("HX")
	if hx == "" {
		skipWithoutPeer(t, `HX is not set (eval "$(PEERS_HELIX=1 ../shared/tools/install-test-peers.sh)")`)
	}
	bridge, _ := binaries(t)
	dir := t.TempDir()
	config, work := filepath.Join(dir, "config"), filepath.Join(dir, "work")
	for _, d := range []string{filepath.Join(config, "helix"), work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bridgeLog = filepath.Join(dir, "bridge.log")
	if err := os.WriteFile(filepath.Join(config, "helix", "languages.toml"), []byte(languages(bridge, bridgeLog)), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(work, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+config, "TERM=xterm-256color", "LANG=C.UTF-8", "LC_ALL=C.UTF-8")
	term = startTmux(t, work, env, 120, 30, append([]string{hx}, args...)...)
	// Run before the terminal's own cleanup (last registered, first run): the screen is still there.
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the screen:\n%s", indentScreen(term.screen()))
			data, _ := os.ReadFile(bridgeLog)
			t.Logf("the bridge's log:\n%s", data)
		}
	})
	term.waitText(15*time.Second, "1  package main")
	return term, work, bridgeLog
}

// askUntil asks (ask: the keys that ask) until the screen shows want, and fails the test after
// 40 s. The agent starts in the background, so the first asks may get nothing; each ask cancels
// the one before, so on a loaded machine the asks wait longer each time.
func (m *tmuxTerm) askUntil(what, want string, ask func()) {
	m.t.Helper()
	pause := 700 * time.Millisecond
	m.waitScreen(what, 40*time.Second, func(s string) bool {
		if strings.Contains(s, want) {
			return true
		}
		ask()
		_, seen := m.seen(pause, func(s string) bool { return strings.Contains(s, want) })
		pause = min(2*pause, 5*time.Second)
		return seen
	})
}

// takeItem takes the completion item the menu has, as a user does, each key once the screen shows
// what the last one did (Enter and Escape sent at once left Helix in insert mode now and then, on
// a loaded machine): Tab selects it, which shows it in the line and its detail beside the menu;
// Enter takes it, which closes the menu on the line holding line; Escape goes back to normal mode.
func (m *tmuxTerm) takeItem(detail, line string) {
	m.t.Helper()
	m.keys("Tab")
	m.waitText(5*time.Second, detail)
	m.keys("Enter")
	m.waitScreen("the menu closed on "+line, 5*time.Second, func(s string) bool {
		return !strings.Contains(s, detail) && strings.Contains(s, line)
	})
	m.keys("Escape")
	m.waitText(5*time.Second, "NOR ")
}

// save writes the file shown with :w and waits until Helix says it wrote name.
func (m *tmuxTerm) save(name string) {
	m.t.Helper()
	m.keys(":")
	m.text("w")
	m.keys("Enter")
	m.waitText(5*time.Second, "'"+name+"' written")
}
