//go:build linux

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// "Not signed in" in each editor, with the real GitHub Copilot language server ($COPILOT_LS,
// copilot_real_test.go) through the real bridge (`acp-lsp-bridge --agent copilot`), as a new user
// meets it here: a fresh HOME (no saved sign-in), no network, over SSH (SSH_CONNECTION set, so no
// browser can reach them). What the user must find in the editor: that they are not signed in,
// and how to sign in without a browser on this machine. The bridge asks first
// (window/showMessageRequest), with the code choice; the code choice runs Copilot's device flow,
// which cannot reach GitHub here and asks again with why; "Not now" ends with a message
// (window/showMessage) naming `acp-lsp-bridge sign-in copilot`, a sign-in with Copilot's own tools
// and GH_COPILOT_TOKEN. Each test reads what the editor shows, answers as a user does, and checks
// that no process of the session is left once the editor quits.

// What the user must be shown.
const (
	signInQuestion   = "acp-lsp-bridge: GitHub Copilot needs you to sign in before it can suggest edits."
	signInNoBrowser  = `A browser cannot open for you here (this is an SSH session): choose "Sign in with a code (any device)" to enter a code on any device.`
	signInCodeFailed = "acp-lsp-bridge: signing in to GitHub Copilot with a code failed ("
	signInTryAgain   = "). Try again?"
	signInNotSigned  = "acp-lsp-bridge: GitHub Copilot is not signed in:"
	signInCommand    = "run `acp-lsp-bridge sign-in copilot` in a terminal (a code for any device)"
	signInToken      = "or set GH_COPILOT_TOKEN for the agent"
	signInAgain      = "then acp-lsp-bridge.signIn."
)

var signInChoices = []string{"Sign in with a code (any device)", "Sign in with GitHub", "Not now"}

// numberedChoice is a choice as inputlist() lists it: vim.ui.select's "1: title", or "1. title".
var numberedChoice = regexp.MustCompile(`^\d+[:.] (.*)$`)

// signInSession is the environment of an editor that runs the real server: copilotLS's (a fresh
// HOME, PATH with the server's folder first, SSH_CONNECTION) and the bridge's folder on PATH; and
// its HOME.
func signInSession(t *testing.T) (copilot string, env []string, home string) {
	t.Helper()
	skipIfShort(t, "GitHub Copilot's language server in an editor")
	copilot, env = copilotLS(t)
	bridge, _ := binaries(t)
	for i, kv := range env {
		switch {
		case strings.HasPrefix(kv, "PATH="):
			env[i] = "PATH=" + filepath.Dir(bridge) + string(os.PathListSeparator) + strings.TrimPrefix(kv, "PATH=")
		case strings.HasPrefix(kv, "HOME="):
			home = strings.TrimPrefix(kv, "HOME=")
		}
	}
	return copilot, append(env, "LANG=C.UTF-8", "LC_ALL=C.UTF-8"), home
}

// watchPane records the process tree of the program running in term's pane (the shell that
// startTmux runs it in, and everything below it).
func watchPane(t *testing.T, term *tmuxTerm) *processTree {
	t.Helper()
	pid, err := strconv.Atoi(strings.TrimSpace(term.tmux("list-panes", "-t", "0", "-F", "#{pane_pid}")))
	if err != nil {
		t.Fatalf("the pane's pid: %v", err)
	}
	return watchTree(pid)
}

// reapTmux reaps the tmux servers of this test once they have ended: with subreaper, a tmux
// server (which daemonizes) is this process's child.
func reapTmux(t *testing.T) {
	t.Cleanup(func() {
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			comm, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "comm"))
			if st, ok := procStat(pid); ok && st.ppid == os.Getpid() && st.state == 'Z' && strings.HasPrefix(string(comm), "tmux") {
				var ws syscall.WaitStatus
				_, _ = syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
			}
		}
	})
}

// helixPopup is the text of the popups on a Helix screen (between the borders │ … │), its rows
// joined with spaces, as the popup wrapped it at spaces.
func helixPopup(screen string) string {
	var parts []string
	for _, line := range strings.Split(screen, "\n") {
		i, j := strings.Index(line, "│"), strings.LastIndex(line, "│")
		if i >= 0 && j > i {
			parts = append(parts, strings.TrimSpace(line[i+len("│"):j]))
		}
	}
	return strings.Join(parts, " ")
}

// helixChoices are the rows of a Helix screen that are exactly one of the sign-in choices, in
// order.
func helixChoices(screen string) []string {
	var out []string
	for _, line := range strings.Split(screen, "\n") {
		for _, c := range signInChoices {
			if strings.TrimSpace(line) == c {
				out = append(out, c)
			}
		}
	}
	return out
}

// TestCopilotEditorsSignInHelix: Helix 25.07 in a terminal, the bridge started with --agent copilot
// as editors/helix/README.md says. Helix shows the sign-in question in a popup with its three
// choices; the user takes the code (Enter), which fails with no network, and the popup says why and
// asks again; "Not now" (Down, Down, Enter) leaves the last word in the status line, which must say
// that Copilot is not signed in and how to sign in without a browser. :q quits; nothing is left.
func TestCopilotEditorsSignInHelix(t *testing.T) {
	hx := os.Getenv("HX")
	if hx == "" {
		skipWithoutPeer(t, `HX is not set (eval "$(PEERS_HELIX=1 ../shared/tools/install-test-peers.sh)")`)
	}
	copilot, env, home := signInSession(t)
	bridge, _ := binaries(t)
	subreaper(t)
	reapTmux(t)
	dir := t.TempDir()
	work, bridgeLog := filepath.Join(dir, "work"), filepath.Join(dir, "bridge.log")
	config := filepath.Join(home, ".config", "helix") // credentialFreeEnv's XDG_CONFIG_HOME
	for _, d := range []string{work, config} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	languages := fmt.Sprintf(`[language-server.acp]
command = %q
args = ["--agent", "copilot", "--log-file", %q, "--log-level", "debug"]

[[language]]
name = "go"
language-servers = ["acp"]
`, bridge, bridgeLog)
	if err := os.WriteFile(filepath.Join(config, "languages.toml"), []byte(languages), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "main.go"), []byte("package main\n\nfunc main() {\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var tree *processTree
	checked := false
	t.Cleanup(func() {
		if tree != nil && !checked {
			noProcessLeft(t, tree, "")
		}
	})
	term := startTmux(t, work, append(env, "TERM=xterm-256color"), 120, 30, hx, "main.go")
	tree = watchPane(t, term)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the screen:\n%s", indentScreen(term.screen()))
			data, _ := os.ReadFile(bridgeLog)
			t.Logf("the bridge's log:\n%s", data)
		}
	})
	term.waitText(15*time.Second, "1  package main")

	// The question, in a popup, with the choices below it.
	s := term.waitScreen("the sign-in question", 40*time.Second, func(s string) bool {
		return strings.Contains(helixPopup(s), signInQuestion) && len(helixChoices(s)) == len(signInChoices)
	})
	if p := helixPopup(s); !strings.Contains(p, signInNoBrowser) {
		t.Errorf("the question does not say that no browser can open here and what to choose instead; the popup reads %q", p)
	}
	if got := helixChoices(s); strings.Join(got, "|") != strings.Join(signInChoices, "|") {
		t.Errorf("the choices %q, want %q", got, signInChoices)
	}

	// The code: Copilot's device flow cannot reach GitHub; the popup says so and asks again.
	term.keys("Enter")
	s = term.waitScreen("the question after the code sign-in failed", 40*time.Second, func(s string) bool {
		return strings.Contains(helixPopup(s), signInCodeFailed) && len(helixChoices(s)) == len(signInChoices)
	})
	if p := helixPopup(s); !strings.Contains(p, signInTryAgain) || !strings.Contains(p, "github.com") {
		t.Errorf("the question after the code sign-in does not say why it failed (GitHub not reached) and ask again: %q", p)
	}

	// Not now: the last word, in the status line.
	term.keys("Down", "Down", "Enter")
	s = term.waitScreen("word that GitHub Copilot is not signed in", 20*time.Second, func(s string) bool {
		return strings.Contains(s, "GitHub Copilot is not signed in") && helixPopup(s) == ""
	})
	status := lastLine(s)
	if !strings.Contains(status, signInNotSigned) {
		t.Errorf("the status line reads %q, want it to start with %q", status, signInNotSigned)
	}
	// How to sign in without a browser must be on the screen, not only in the bridge's message.
	if !strings.Contains(s, "acp-lsp-bridge sign-in copilot") {
		logged, _ := os.ReadFile(filepath.Join(home, ".cache", "helix", "helix.log"))
		t.Errorf("after \"Not now\", Helix's screen does not show how to sign in without a browser: its status line (one row, 120 columns) reads %q, cut off before the ways the bridge's message (%d characters) goes on to name (`acp-lsp-bridge sign-in copilot`, GH_COPILOT_TOKEN); Helix keeps no message history, and its log (:log-open, %d bytes) has the message: %v. The screen:\n%s",
			status, len(bridgeShowMessage(t, bridgeLog, "is not signed in")), len(logged), strings.Contains(string(logged), "acp-lsp-bridge sign-in copilot"), indentScreen(s))
	}

	term.keys(":")
	term.text("q")
	term.keys("Enter")
	if code := term.waitExit(20 * time.Second); code != 0 {
		t.Errorf("hx exited with %d", code)
	}
	checked = true
	noProcessLeft(t, tree, filepath.Base(copilot))
}

// bridgeShowMessage is the text of the first window/showMessage the bridge logged (--log-level
// debug) that contains substr, or "". Its log line names the text "message" first and the method
// "message" last, so the line is read key by key.
func bridgeShowMessage(t *testing.T, bridgeLog, substr string) string {
	t.Helper()
	data, _ := os.ReadFile(bridgeLog)
	for _, line := range strings.Split(string(data), "\n") {
		if !strings.Contains(line, `"message":"window/showMessage"`) {
			continue
		}
		dec := json.NewDecoder(strings.NewReader(line))
		if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
			continue
		}
		for dec.More() {
			key, err := dec.Token()
			if err != nil {
				break
			}
			var v any
			if err := dec.Decode(&v); err != nil {
				break
			}
			if s, ok := v.(string); ok && key == "message" && strings.Contains(s, substr) {
				return s
			}
		}
	}
	return ""
}

// TestCopilotEditorsSignInNeovim: headless Neovim 0.12 with the plugin, setup({ agent = 'copilot' })
// (testdata/nvim/copilot-signin.lua). vim.lsp lists the sign-in question's choices with inputlist();
// the user types the code's number: the device flow fails with no network and the question comes
// back saying why; the user types "Not now"'s number. :messages then holds the message that
// Copilot is not signed in, with `acp-lsp-bridge sign-in copilot`, GH_COPILOT_TOKEN and the
// command to ask again. Neovim quits; nothing is left.
func TestCopilotEditorsSignInNeovim(t *testing.T) {
	nvim := os.Getenv("NVIM")
	if nvim == "" {
		skipWithoutPeer(t, `NVIM is not set; run eval "$(bash ../shared/tools/install-test-peers.sh)"`)
	}
	if _, err := exec.LookPath("git"); err != nil {
		skipWithoutPeer(t, "git is not on the PATH; vim.pack installs plugins with it")
	}
	copilot, env, _ := signInSession(t)
	bridge, _ := binaries(t)
	subreaper(t)
	root := moduleRoot(t)
	dir := t.TempDir()
	work, none := filepath.Join(dir, "work"), filepath.Join(dir, "none")
	for _, d := range []string{work, none} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	run := "lua local ok, err = pcall(dofile, vim.env.NVIM_TEST_SCRIPT) " +
		"if not ok then io.stdout:write('FAIL loading the script: ', tostring(err), '\\n') vim.cmd('cquit 3') end"
	cmd := exec.CommandContext(ctx, nvim, "--headless", "-i", "NONE", "-c", run)
	cmd.Dir = work
	cmd.Env = append(env,
		"ACP_PLUGIN_REPO="+pluginRepo(t),
		"ACP_LSP_BRIDGE="+bridge,
		"NVIM_TEST_SCRIPT="+filepath.Join(root, "testdata", "nvim", "copilot-signin.lua"),
		"NVIM_TEST_LIB="+filepath.Join(root, "testdata", "nvim", "shipped_lib.lua"),
		"NVIM_TEST_DIR="+work,
		"XDG_CONFIG_DIRS="+none,
		"XDG_DATA_DIRS="+none,
		"COPILOT_ANSWERS=Sign in with a code (any device)|Not now",
	)
	cmd.WaitDelay = 5 * time.Second
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tree := watchTree(cmd.Process.Pid)
	err := cmd.Wait()
	t.Cleanup(func() {
		if t.Failed() {
			data, _ := os.ReadFile(filepath.Join(work, "bridge.log"))
			t.Logf("the bridge's log:\n%s", data)
		}
	})
	if err != nil || !strings.Contains(out.String(), "ALL PASSED") {
		t.Errorf("neovim: %v\n%s", err, out.String())
	} else if testing.Verbose() {
		t.Logf("neovim:\n%s", out.String())
	}
	var res struct {
		Questions [][]string `json:"questions"`
		Messages  string     `json:"messages"`
	}
	b, rerr := os.ReadFile(filepath.Join(work, "result.json"))
	if rerr == nil {
		rerr = json.Unmarshal(b, &res)
	}
	if rerr != nil {
		t.Errorf("result.json: %v", rerr)
	}
	// Each question as inputlist() showed it: the message, then the numbered choices.
	wantQuestion := func(i int, text string) {
		t.Helper()
		if i >= len(res.Questions) {
			t.Errorf("question %d was never shown; the questions: %q", i+1, res.Questions)
			return
		}
		q := res.Questions[i]
		if len(q) == 0 || !strings.Contains(q[0], text) {
			t.Errorf("question %d reads %q, want it to contain %q", i+1, q, text)
		}
		var choices []string
		for _, line := range q[1:] {
			if m := numberedChoice.FindStringSubmatch(line); m != nil {
				choices = append(choices, m[1])
			}
		}
		if strings.Join(choices, "|") != strings.Join(signInChoices, "|") {
			t.Errorf("question %d offers %q, want %q", i+1, choices, signInChoices)
		}
	}
	wantQuestion(0, signInQuestion)
	if len(res.Questions) > 0 && len(res.Questions[0]) > 0 && !strings.Contains(res.Questions[0][0], signInNoBrowser) {
		t.Errorf("the question does not say that no browser can open here and what to choose instead: %q", res.Questions[0][0])
	}
	wantQuestion(1, signInCodeFailed)
	if len(res.Questions) > 1 && len(res.Questions[1]) > 0 && (!strings.Contains(res.Questions[1][0], "github.com") || !strings.Contains(res.Questions[1][0], signInTryAgain)) {
		t.Errorf("the question after the code sign-in does not say why it failed (GitHub not reached) and ask again: %q", res.Questions[1][0])
	}
	if len(res.Questions) != 2 {
		t.Errorf("%d questions, want 2 (the sign-in, then again after the code failed): %q", len(res.Questions), res.Questions)
	}
	// The last word, in :messages.
	for _, w := range []string{signInNotSigned, signInCommand, signInToken, signInAgain} {
		if !strings.Contains(res.Messages, w) {
			t.Errorf(":messages lacks %q; it reads:\n%s", w, res.Messages)
		}
	}
	noProcessLeft(t, tree, filepath.Base(copilot))
}

// emacsScreenText is what an Emacs terminal frame shows, its continued rows (a full row whose last
// column is the continuation glyph \) joined back into one line.
func emacsScreenText(screen string, width int) string {
	var b strings.Builder
	for _, row := range strings.Split(strings.TrimRight(screen, "\n"), "\n") {
		if r := []rune(row); len(r) == width && r[width-1] == '\\' {
			b.WriteString(string(r[:width-1]))
			continue
		}
		b.WriteString(row)
		b.WriteByte('\n')
	}
	return b.String()
}

// TestCopilotEditorsSignInEmacs: emacs -nw in a terminal, the shipped Eglot configuration set up
// for Copilot as editors/emacs/README.md says (testdata/emacs/copilot-signin-eglot.el), Eglot
// started by eglot-ensure on main.txt. Eglot asks the sign-in question with completing-read in the
// minibuffer, the first choice (the code) filled in; Enter takes it, which fails with no network,
// and the minibuffer asks again saying why; the user replaces the answer with "Not now" (C-a C-k,
// typed, Enter), and the echo area shows that Copilot is not signed in and the ways without a
// browser, as *Messages* keeps it. C-x C-c quits; nothing is left.
func TestCopilotEditorsSignInEmacs(t *testing.T) {
	emacs := os.Getenv("EMACS")
	if emacs == "" {
		skipWithoutPeer(t, `EMACS is not set; run eval "$(PEERS_EMACS=1 bash ../shared/tools/install-test-peers.sh)"`)
	}
	copilot, env, _ := signInSession(t)
	bridge, _ := binaries(t)
	subreaper(t)
	reapTmux(t)
	dir := t.TempDir()
	work, bridgeLog := filepath.Join(dir, "work"), filepath.Join(dir, "bridge.log")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "main.txt"), []byte("package main\n\nfunc main() {\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var tree *processTree
	checked := false
	t.Cleanup(func() {
		if tree != nil && !checked {
			noProcessLeft(t, tree, "")
		}
	})
	const width = 160
	env = append(env, "TERM=xterm-256color",
		"ACP_EMACS_CONFIG="+emacsEglotConfig(t),
		"ACP_LSP_BRIDGE="+bridge,
		"EMACS_TEST_BRIDGE_LOG="+bridgeLog)
	term := startTmux(t, work, env, width, 24, emacs, "-nw", "-Q", "-l",
		filepath.Join(moduleRoot(t), "testdata", "emacs", "copilot-signin-eglot.el"), "main.txt")
	tree = watchPane(t, term)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the screen:\n%s", indentScreen(term.screen()))
			data, _ := os.ReadFile(bridgeLog)
			t.Logf("the bridge's log:\n%s", data)
		}
	})
	text := func(s string) string { return emacsScreenText(s, width) }

	// The question, in the minibuffer, the code filled in.
	s := text(term.waitScreen("the sign-in question in the minibuffer", 40*time.Second, func(s string) bool {
		return strings.Contains(text(s), signInQuestion) && strings.Contains(s, "Choose an option: ")
	}))
	if !strings.Contains(s, signInNoBrowser) {
		t.Errorf("the question does not say that no browser can open here and what to choose instead:\n%s", s)
	}
	if !strings.Contains(s, "Choose an option: "+signInChoices[0]) {
		t.Errorf("the minibuffer does not offer %q first:\n%s", signInChoices[0], s)
	}
	// The choices, as completion lists them (TAB on an empty answer), then the code again.
	term.keys("C-a", "C-k", "Tab")
	s = text(term.waitText(10*time.Second, "possible completions"))
	for _, c := range signInChoices {
		if !strings.Contains(s, c) {
			t.Errorf("the completions lack %q:\n%s", c, s)
		}
	}
	term.text(signInChoices[0])
	term.keys("Enter")

	// The code: Copilot's device flow cannot reach GitHub; the minibuffer says so and asks again.
	s = text(term.waitScreen("the question after the code sign-in failed", 40*time.Second, func(s string) bool {
		return strings.Contains(text(s), signInCodeFailed) && strings.Contains(s, "Choose an option: ")
	}))
	if !strings.Contains(s, signInTryAgain) || !strings.Contains(s, "github.com") {
		t.Errorf("the question after the code sign-in does not say why it failed (GitHub not reached) and ask again:\n%s", s)
	}

	// Not now: the last word, in the echo area.
	term.keys("C-a", "C-k")
	term.text("Not now")
	term.keys("Enter")
	s = text(term.waitScreen("word that GitHub Copilot is not signed in", 20*time.Second, func(s string) bool {
		return strings.Contains(text(s), signInAgain)
	}))
	for _, w := range []string{signInNotSigned, signInCommand, signInToken, signInAgain} {
		if !strings.Contains(s, w) {
			t.Errorf("the echo area lacks %q:\n%s", w, s)
		}
	}
	// *Messages* keeps it (C-h e, then C-x o and C-x 1 to read it in the whole frame), for a user
	// who missed the echo area.
	term.keys("C-h", "e")
	term.waitText(10*time.Second, "*Messages*")
	term.keys("C-x", "o", "C-x", "1")
	s = text(term.waitScreen("*Messages* alone in the frame", 10*time.Second, func(s string) bool {
		return strings.Contains(s, "*Messages*") && !strings.Contains(s, "main.txt ")
	}))
	if !strings.Contains(s, signInNotSigned) || !strings.Contains(s, signInCommand) {
		t.Errorf("*Messages* lacks the message that GitHub Copilot is not signed in:\n%s", s)
	}

	term.keys("C-x", "C-c")
	if code := term.waitExit(20 * time.Second); code != 0 {
		t.Errorf("emacs exited with %d", code)
	}
	checked = true
	noProcessLeft(t, tree, filepath.Base(copilot))
}
