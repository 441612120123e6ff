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
	// The shipped file, only the bridge's path changed (in `command` and in the agent it names).
	shipped, err := os.ReadFile(filepath.Join(moduleRoot(t), "editors", "helix", "languages.toml"))
	if err != nil {
		t.Fatal(err)
	}
	toml := strings.ReplaceAll(string(shipped), `command = "acp-lsp-bridge"`, `command = "`+bridge+`"`)
	if strings.Count(toml, bridge) < 2 {
		t.Fatalf("the bridge's path was not found in languages.toml twice (the server and its agent)")
	}
	// The bridge's log goes to this test's folder, in full, and is shown when the test fails.
	bridgeLog := filepath.Join(dir, "bridge.log")
	toml = strings.Replace(toml, `args = ["--log-file", "/tmp/acp-lsp-bridge.log"]`, `args = ["--log-file", "`+bridgeLog+`", "--log-level", "debug"]`, 1)
	if !strings.Contains(toml, bridgeLog) {
		t.Fatalf("the bridge's --log-file was not found in languages.toml")
	}
	if err := os.WriteFile(filepath.Join(config, "helix", "languages.toml"), []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	const text = "package main\n\n// Total adds the prices, in €.\nfunc Total(prices []int) int {\n\tsum := 0 // 日本\n\tfor _, p := range prices {\n\t\t/*é*/ sum += p\n\t}\n\treturn sum\n}\n"
	const mainText = "package main\n\nfunc main() {\n\tprintln(\"日本\", Total([]int{1, 2}), Total(nil))\n}\n"
	file, mainFile := filepath.Join(work, "total.go"), filepath.Join(work, "main.go")
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mainFile, []byte(mainText), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+config, "TERM=xterm-256color", "LANG=C.UTF-8", "LC_ALL=C.UTF-8")
	term := startTmux(t, work, env, 120, 30, hx, "total.go", "main.go")
	defer func() {
		if t.Failed() {
			t.Logf("the screen:\n%s", indentScreen(term.screen()))
			data, _ := os.ReadFile(bridgeLog)
			t.Logf("the bridge's log:\n%s", data)
		}
	}()
	term.waitText(15*time.Second, "1  package main")
	// The user's first edit must reach the built-in agent as a change: wait until the bridge has
	// the document (an edit made before would be part of the text it opens with, and no rename).
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
		// The built-in agent starts in the background: ask again until the menu lists it. Each
		// ask cancels the one before, so on a loaded machine the asks wait longer each time.
		pause := 700 * time.Millisecond
		term.waitScreen("the code action "+want, 40*time.Second, func(s string) bool {
			if strings.Contains(s, want) {
				return true
			}
			term.keys("Escape")
			term.keys("Space", "a")
			_, seen := term.seen(pause, func(s string) bool { return strings.Contains(s, want) })
			pause = min(2*pause, 5*time.Second)
			return seen
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
	pause := 700 * time.Millisecond
	term.waitScreen("the completion item acc", 40*time.Second, func(s string) bool {
		if strings.Contains(s, "acc text") {
			return true
		}
		term.keys("C-x")
		_, seen := term.seen(pause, func(s string) bool { return strings.Contains(s, "acc text") })
		pause = min(2*pause, 5*time.Second)
		return seen
	})
	term.keys("Tab")
	term.waitText(5*time.Second, "`sum` → `acc` (line 9)")
	term.keys("Enter")
	term.keys("Escape")
	term.waitText(5*time.Second, "return acc")

	// :w saves what the user accepted; :q leaves.
	term.keys(":")
	term.text("w")
	term.keys("Enter")
	term.waitText(5*time.Second, "'total.go' written")
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
