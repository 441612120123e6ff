//go:build linux

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"
)

// GitHub Copilot's language server (@github/copilot-language-server, installed by
// install-test-peers.sh with PEERS_COPILOT=1 as COPILOT_LS), the real one, through the real
// bridge, as a new user meets it here: no network, no sign-in, a fresh HOME.

// copilotVersion is the version the expectations below were read from (its dist/main.js) and
// measured with.
const copilotVersion = "1.539.0"

// copilotLS is the real server's command, its folder put first on PATH in env (so that
// `--agent copilot` finds it by name), in a fresh HOME.
func copilotLS(t *testing.T) (command string, env []string) {
	t.Helper()
	command = os.Getenv("COPILOT_LS")
	if command == "" {
		skipWithoutPeer(t, `COPILOT_LS is not set: eval "$(PEERS_COPILOT=1 bash ../shared/tools/install-test-peers.sh)"`)
	}
	if _, err := os.Stat(command); err != nil {
		t.Fatalf("COPILOT_LS=%s: %v", command, err)
	}
	if v := installedVersion(t, filepath.Dir(command), "@github/copilot-language-server"); v != copilotVersion {
		t.Fatalf("@github/copilot-language-server %s is installed, but these expectations were read from %s: read its code again (docs/real-agents.md) and update them", v, copilotVersion)
	}
	env = credentialFreeEnv(t.TempDir())
	for i, kv := range env {
		if strings.HasPrefix(kv, "PATH=") {
			env[i] = "PATH=" + filepath.Dir(command) + string(os.PathListSeparator) + strings.TrimPrefix(kv, "PATH=")
		}
	}
	// No browser can reach the user: what a user over SSH has.
	env = append(env, "SSH_CONNECTION=10.0.0.1 50000 10.0.0.2 22")
	return command, env
}

// TestRealCopilotSignInThroughTheBridge: the real server through the real bridge (`--agent
// copilot`), not signed in. The user is asked at once, in the editor, with a way that needs no
// browser; the code sign-in runs Copilot's own device flow and, with no network, says why it
// failed and asks again; "Not now" ends with the ways to sign in without a browser; requests
// answer empty at once meanwhile; no process is left once the editor leaves.
func TestRealCopilotSignInThroughTheBridge(t *testing.T) {
	skipIfShort(t, "GitHub Copilot's language server")
	command, env := copilotLS(t)
	subreaper(t)
	var tree *processTree
	checked := false
	t.Cleanup(func() {
		if tree != nil && !checked {
			noProcessLeft(t, tree, "")
		}
	})
	b := startBridgeEnv(t, env, "--agent", "copilot")
	tree = watchTree(b.cmd.Process.Pid)
	type question struct {
		message string
		titles  []string
	}
	questions := make(chan question, 8)
	answers := []string{"Sign in with a code (any device)", "Not now"}
	b.setAnswer(func(message string, titles []string) string {
		questions <- question{message, titles}
		if len(answers) == 0 {
			return "Not now"
		}
		a := answers[0]
		answers = answers[1:]
		return a
	})
	ws := t.TempDir()
	root := fileURI(ws)
	b.InitializeWith(fakeeditor.InitParams{Root: root, ProcessID: os.Getpid()})
	uri := root + "/main.go"
	text := "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n"
	b.Open(uri, text)

	next := func(what string) question {
		t.Helper()
		select {
		case q := <-questions:
			return q
		case <-time.After(40 * time.Second):
			r := b.Record()
			t.Fatalf("%s: no question within 40 s; the editor got messages %q, logs %q", what, r.Messages, r.Logs)
		}
		return question{}
	}
	// Asked at once, with the code first, and why the browser would not do here.
	q := next("the sign-in question")
	if !strings.Contains(q.message, "GitHub Copilot needs you to sign in") || !strings.Contains(q.message, "this is an SSH session") {
		t.Errorf("the question %q does not say that GitHub Copilot needs a sign-in and that no browser can open here", q.message)
	}
	if want := []string{"Sign in with a code (any device)", "Sign in with GitHub", "Not now"}; !slices.Equal(q.titles, want) {
		t.Errorf("the sign-in question offers %q, want %q", q.titles, want)
	}
	// The code: Copilot's device flow, which cannot reach GitHub here; the user is told why.
	q = next("the question after the code sign-in failed")
	if !strings.Contains(q.message, "signing in to GitHub Copilot with a code failed") || !strings.Contains(q.message, "github.com") {
		t.Errorf("after the code sign-in, the question %q does not say that it failed and why (GitHub not reached)", q.message)
	}
	// Meanwhile, and after "Not now": requests answer empty at once.
	start := time.Now()
	items, err := b.InlineTriggered(uri, fakeeditor.At(3, 14), 1)
	if d := time.Since(start); err != nil || len(items) != 0 || d > atOnce {
		t.Errorf("inline completion while not signed in: %v, error %v, after %v; want no items within %v", items, err, d, atOnce)
	}
	// The last word: not signed in, and how without a browser.
	b.AwaitFor(20*time.Second, fakeeditor.Expectation{
		Description: "a message saying GitHub Copilot is not signed in, with `acp-lsp-bridge sign-in copilot`",
		Met: func(r *fakeeditor.Record) bool {
			m := said(r.Messages, "GitHub Copilot is not signed in")
			return strings.Contains(m, "acp-lsp-bridge sign-in copilot") && strings.Contains(m, "GH_COPILOT_TOKEN") && strings.Contains(m, "acp-lsp-bridge.signIn")
		},
	})
	if m := said(b.Record().Messages, startFailures...); m != "" {
		t.Errorf("the agent did not run: %q", m)
	}

	b.Shutdown()
	if code := b.exitCode(); code != 0 {
		t.Errorf("exit code %d after shutdown and exit, want 0", code)
	}
	checked = true
	// Copilot's LSP mode, run for the code, is the same program: seen, and gone too.
	noProcessLeft(t, tree, filepath.Base(command))
}

// TestRealCopilotDoctor: doctor names GitHub Copilot and says how to sign in without a browser,
// within 40 s, in both of its modes: --agent copilot (without the Copilot CLI) and the plain
// command in its default mode, whose first start in a fresh HOME unpacks the CLI.
func TestRealCopilotDoctor(t *testing.T) {
	skipIfShort(t, "GitHub Copilot's language server")
	command, env := copilotLS(t)
	ws := t.TempDir()
	for _, mode := range []struct {
		name string
		args []string
	}{
		{"agent-copilot", []string{"--json", "--agent", "copilot"}},
		{"default-mode", []string{"--json", "--", command, "--acp"}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			r := runDoctorEnv(t, ws, env, mode.args...)
			if r.elapsed > 40*time.Second {
				t.Errorf("doctor took %v, want at most 40 s", r.elapsed)
			}
			m := doctorJSON(t, r)
			if r.code != 1 || field(m, "ok") != false {
				t.Fatalf("doctor exit %d ok %v, want 1 and false (not signed in)", r.code, field(m, "ok"))
			}
			reason, _ := field(m, "reason").(string)
			name, _ := field(m, "agent.info.name").(string)
			if name != "GitHub Copilot" && !strings.Contains(reason, "GitHub Copilot") {
				t.Errorf("doctor does not name GitHub Copilot: agent %q, reason %q", name, reason)
			}
			switch field(m, "failure") {
			case "nes-start-refused":
				// It answered initialize: what it offers, then the sign-in advice.
				if enc := field(m, "agent.positionEncoding"); enc != "utf-16" {
					t.Errorf("encoding %v, want utf-16", enc)
				}
				for path, want := range map[string]any{
					"agent.nes.events.didOpen": true, "agent.nes.events.didChange": true, "agent.nes.events.syncKind": "incremental",
					"agent.nes.events.didClose": true, "agent.nes.events.didFocus": true,
				} {
					if got := field(m, path); got != want {
						t.Errorf("%s = %v, want %v", path, got, want)
					}
				}
				if ms, _ := field(m, "agent.authMethods").([]any); len(ms) != 1 || field(ms[0].(map[string]any), "id") != "github_oauth" {
					t.Errorf("authMethods %v, want the one github_oauth", ms)
				}
				if _, ok := field(m, "agent.nes.context.diagnostics").(map[string]any); !ok {
					t.Errorf("agent.nes.context %v: Copilot asks for diagnostics", field(m, "agent.nes.context"))
				}
				for _, w := range []string{"GitHub Copilot is not signed in", "this is an SSH session", "acp-lsp-bridge sign-in copilot", "GH_COPILOT_TOKEN"} {
					if !strings.Contains(reason, w) {
						t.Errorf("the reason %q lacks %q", reason, w)
					}
				}
			case "initialize-timeout":
				// Only the default mode may be this slow: then doctor says what Copilot needs.
				if mode.name != "default-mode" || !strings.Contains(reason, "GITHUB_COPILOT_ACP_USE_CLI=0") {
					t.Errorf("initialize timed out in mode %s, and the reason %q does not name GITHUB_COPILOT_ACP_USE_CLI=0", mode.name, reason)
				}
			default:
				t.Errorf("failure %v (%q), want nes-start-refused or, in the default mode, initialize-timeout", field(m, "failure"), reason)
			}
			if usesCLI := field(m, "copilot.usesCli"); usesCLI != (mode.name == "default-mode") {
				t.Errorf("copilot.usesCli %v in mode %s", usesCLI, mode.name)
			}
			if nb, _ := field(m, "copilot.noBrowser").(string); nb != "this is an SSH session" {
				t.Errorf("copilot.noBrowser %q, want the SSH session", nb)
			}
		})
	}
}

// TestRealCopilotSignInCommand: `acp-lsp-bridge sign-in copilot` in a terminal runs Copilot's
// device flow; with no network it fails at once, saying why and what else works.
func TestRealCopilotSignInCommand(t *testing.T) {
	skipIfShort(t, "GitHub Copilot's language server")
	_, env := copilotLS(t)
	bridge, _ := binaries(t)
	cmd := exec.Command(bridge, "sign-in", "copilot")
	cmd.Env = env
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if d := time.Since(start); d > 40*time.Second {
		t.Errorf("sign-in took %v", d)
	}
	if exitCodeOf(err) != 1 {
		t.Fatalf("sign-in copilot exit %d, want 1 (no network); output:\n%s", exitCodeOf(err), out)
	}
	for _, w := range []string{"Asking GitHub Copilot", "device flow", "github.com", "GH_COPILOT_TOKEN"} {
		if !strings.Contains(string(out), w) {
			t.Errorf("sign-in's output lacks %q:\n%s", w, out)
		}
	}
}

// runDoctorEnv is runDoctor with exactly env (not the test's environment added to it).
func runDoctorEnv(t *testing.T, dir string, env []string, args ...string) doctorResult {
	t.Helper()
	bridge, _ := binaries(t)
	cmd := exec.Command(bridge, append([]string{"doctor"}, args...)...)
	cmd.Dir = dir
	cmd.Env = env
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err := cmd.Run()
	r := doctorResult{code: exitCodeOf(err), stdout: stdout.String(), stderr: stderr.String(), elapsed: time.Since(start)}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("doctor %q: exit %d after %v\nstdout:\n%s\nstderr:\n%s", args, r.code, r.elapsed, r.stdout, r.stderr)
		}
	})
	return r
}
