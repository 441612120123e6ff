package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// tmuxTerm is a terminal program (Helix, emacs -nw) running in a tmux session of its own, driven as
// a person drives it: keys typed with send-keys, the screen read with capture-pane.
type tmuxTerm struct {
	t      testing.TB
	sock   string
	status string // the file the program's exit status is written to
}

// startTmux starts argv in a new tmux server of the test's own, in a terminal of width×height
// cells, in dir, with env (the program's whole environment). The terminal passes modified keys
// such as C-Enter through (extended-keys), as modern terminals do. The server ends with the test.
func startTmux(t testing.TB, dir string, env []string, width, height int, argv ...string) *tmuxTerm {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		skipWithoutPeer(t, "tmux is not installed (apt-get install tmux)")
	}
	tmp, err := os.MkdirTemp("", "tmux-") // short: a socket path has at most 107 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	conf := filepath.Join(tmp, "tmux.conf")
	err = os.WriteFile(conf, []byte(strings.Join([]string{
		"set -g status off",
		"set -g remain-on-exit on", // the last screen and the exit status stay readable
		"set -s extended-keys always",
		"set -s escape-time 10",
		"set -g history-limit 0",
	}, "\n")+"\n"), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	term := &tmuxTerm{t: t, sock: filepath.Join(tmp, "s"), status: filepath.Join(tmp, "status")}
	// tmux learns a program's exit status only when the program ends before its terminal closes,
	// which is a race for Emacs: a shell waits for it and writes the status down.
	args := append([]string{"-S", term.sock, "-f", conf, "new-session", "-d", "-x", strconv.Itoa(width), "-y", strconv.Itoa(height), "-c", dir, "--",
		"sh", "-c", `"$@"; echo $? >` + shellQuote(term.status), "sh"}, argv...)
	cmd := exec.Command("tmux", args...)
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("tmux", "-S", term.sock, "kill-server").Run() })
	return term
}

func (m *tmuxTerm) tmux(args ...string) string {
	m.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", m.sock}, args...)...).CombinedOutput()
	if err != nil {
		m.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// keys types keys named as tmux names them ("C-x", "Enter", "Escape", "C-Enter", "Space"); a
// name tmux does not know is typed as its characters.
func (m *tmuxTerm) keys(keys ...string) {
	m.t.Helper()
	m.tmux(append([]string{"send-keys", "-t", "0"}, keys...)...)
}

// text types text literally, character by character as a paste would not.
func (m *tmuxTerm) text(s string) {
	m.t.Helper()
	m.tmux("send-keys", "-t", "0", "-l", s)
}

// screen returns what the terminal shows, one line per row, trailing spaces cut.
func (m *tmuxTerm) screen() string {
	m.t.Helper()
	return m.tmux("capture-pane", "-p", "-t", "0")
}

// seen waits until the screen satisfies ok, for at most timeout, and returns the last screen and
// whether it did.
func (m *tmuxTerm) seen(timeout time.Duration, ok func(screen string) bool) (string, bool) {
	deadline := time.Now().Add(timeout)
	for {
		s := m.screen()
		if ok(s) {
			return s, true
		}
		if time.Now().After(deadline) {
			return s, false
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitScreen waits until the screen satisfies ok, for at most timeout, and returns it; on timeout
// the test fails with what the screen showed.
func (m *tmuxTerm) waitScreen(what string, timeout time.Duration, ok func(screen string) bool) string {
	m.t.Helper()
	s, seen := m.seen(timeout, ok)
	if !seen {
		m.t.Fatalf("waited %v for %s; the screen shows:\n%s", timeout, what, indentScreen(s))
	}
	return s
}

// waitText waits until the screen shows every one of texts.
func (m *tmuxTerm) waitText(timeout time.Duration, texts ...string) string {
	m.t.Helper()
	return m.waitScreen(fmt.Sprintf("%q on the screen", texts), timeout, func(s string) bool {
		for _, x := range texts {
			if !strings.Contains(s, x) {
				return false
			}
		}
		return true
	})
}

// waitExit waits until the program has exited and returns its exit status.
func (m *tmuxTerm) waitExit(timeout time.Duration) int {
	m.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if b, err := os.ReadFile(m.status); err == nil && strings.HasSuffix(string(b), "\n") {
			n, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				m.t.Fatalf("exit status %q: %v", b, err)
			}
			return n
		}
		if time.Now().After(deadline) {
			m.t.Fatalf("the program did not exit within %v; the screen shows:\n%s", timeout, indentScreen(m.screen()))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func indentScreen(s string) string {
	return "    |" + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    |")
}

// shellQuote quotes s for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
