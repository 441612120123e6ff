package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

type doctorResult struct {
	code           int
	stdout, stderr string
	elapsed        time.Duration
}

// runDoctor runs `acp-lsp-bridge doctor ARGS...` in dir with extra environment variables.
func runDoctor(t *testing.T, dir string, env []string, args ...string) doctorResult {
	t.Helper()
	bridge, _ := binaries(t)
	cmd := exec.Command(bridge, append([]string{"doctor"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = strings.NewReader("")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("doctor %q did not finish within 60 s", args)
	}
	r := doctorResult{code: exitCodeOf(err), stdout: stdout.String(), stderr: stderr.String(), elapsed: time.Since(start)}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("doctor %q: exit %d after %v\nstdout:\n%s\nstderr:\n%s", args, r.code, r.elapsed, r.stdout, r.stderr)
		}
	})
	return r
}

// doctorJSON decodes stdout, which must hold exactly one JSON object.
func doctorJSON(t *testing.T, r doctorResult) map[string]any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("stdout is not a JSON object: %v\n%s", err, r.stdout)
	}
	var extra any
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		t.Fatalf("stdout holds more than one JSON object (%v):\n%s", err, r.stdout)
	}
	return m
}

// field walks a decoded JSON object along a dotted path.
func field(m map[string]any, path string) any {
	var v any = m
	for _, k := range strings.Split(path, ".") {
		obj, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = obj[k]
	}
	return v
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

func sdkPeer(t testing.TB) (node, modules string) {
	t.Helper()
	modules = os.Getenv("PEERS_NODE_MODULES")
	if modules == "" {
		skipWithoutPeer(t, "PEERS_NODE_MODULES is not set (eval \"$(../shared/tools/install-test-peers.sh)\")")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		skipWithoutPeer(t, "node is not on PATH")
	}
	return node, modules
}

// TestDoctorSDKAgent: the NES agent written with the official ACP SDK passes, and the JSON report
// says what it asked for; the agent received initialize, nes/start with the current directory as
// the workspace, and nes/close, and is gone when doctor returns.
func TestDoctorSDKAgent(t *testing.T) {
	node, modules := sdkPeer(t)
	script := filepath.Join(moduleRoot(t), "testdata", "peers", "nes-agent.mjs")
	dir := t.TempDir()
	agentLog := filepath.Join(dir, "agent.jsonl")
	env := []string{"PEERS_NODE_MODULES=" + modules, "NES_AGENT_ENCODING=utf-32", "NES_AGENT_SYNC=full", "NES_AGENT_KINDS=1", "NES_AGENT_LOG=" + agentLog}

	r := runDoctor(t, dir, env, "--json", "--", node, script)
	if r.code != 0 {
		t.Fatalf("exit code %d, want 0", r.code)
	}
	if r.stderr != "" {
		t.Errorf("stderr without --verbose: %q", r.stderr)
	}
	m := doctorJSON(t, r)
	want := map[string]any{
		"protocolVersion":                1.0,
		"ok":                             true,
		"failure":                        nil,
		"workspace":                      fileURI(dir),
		"agent.protocolVersion":          1.0,
		"agent.info.name":                "nes-test-agent",
		"agent.info.version":             "0.1.0",
		"agent.positionEncoding":         "utf-32",
		"agent.positionEncodingSource":   "agent",
		"agent.nes.events.didOpen":       true,
		"agent.nes.events.didChange":     true,
		"agent.nes.events.syncKind":      "full",
		"agent.nes.events.didClose":      true,
		"agent.nes.events.didSave":       true,
		"agent.nes.events.didFocus":      true,
		"capabilities.inlineCompletion":  true,
		"capabilities.copilotInlineEdit": true,
		"capabilities.codeAction":        true,
		"capabilities.completion":        true,
		"capabilities.documentSync":      "full",
	}
	for path, w := range want {
		if got := field(m, path); got != w {
			t.Errorf("%s = %#v, want %#v", path, got, w)
		}
	}
	if _, ok := field(m, "agent.nes.context").(map[string]any)["diagnostics"]; !ok {
		t.Errorf("agent.nes.context lacks diagnostics: %v", field(m, "agent.nes.context"))
	}
	if got, _ := json.Marshal(field(m, "capabilities.documentEvents")); string(got) != `["didOpen","didChange","didClose","didSave","didFocus"]` {
		t.Errorf("capabilities.documentEvents = %s", got)
	}
	for _, k := range []string{"initializeMs", "nesStartMs", "closeMs"} {
		if v, ok := field(m, "timings."+k).(float64); !ok || v < 0 {
			t.Errorf("timings.%s = %v", k, field(m, "timings."+k))
		}
	}

	var methods []string
	pid := 0
	for _, e := range readAgentLog(t, agentLog) {
		if e["event"] == "start" {
			pid = int(e["pid"].(float64))
		}
		if e["kind"] == "request" {
			methods = append(methods, e["method"].(string))
			if e["method"] == "nes/start" {
				if got := e["params"].(map[string]any)["workspaceUri"]; got != fileURI(dir) {
					t.Errorf("nes/start workspaceUri %v, want file://%s", got, dir)
				}
			}
		}
		if e["issue"] != nil || e["sdkError"] != nil {
			t.Errorf("the agent found a problem: %v", e)
		}
	}
	if strings.Join(methods, " ") != "initialize nes/start nes/close" {
		t.Errorf("the agent answered %v, want initialize nes/start nes/close", methods)
	}
	if pid == 0 {
		t.Fatal("no start event in the agent's log")
	} else if _, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid))); err == nil {
		if stat, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat")); !bytes.Contains(stat, []byte(") Z ")) {
			t.Errorf("the agent (pid %d) still runs after doctor returned", pid)
		}
	}

	// The human report.
	h := runDoctor(t, dir, env, "--", node, script)
	if h.code != 0 || !strings.HasPrefix(lastLine(h.stdout), "OK ") {
		t.Fatalf("human report: exit %d, last line %q", h.code, lastLine(h.stdout))
	}
	for _, want := range []string{"agent      nes-test-agent 0.1.0\n", "encoding   utf-32", "events     didOpen, didChange (full), didClose, didSave, didFocus\n",
		"surfaces   inline completion, Copilot inline edits, code actions, completion items\n"} {
		if !strings.Contains(h.stdout, want) {
			t.Errorf("human report lacks %q:\n%s", want, h.stdout)
		}
	}
}

// TestDoctorNoNES: the scripted agent without the nes capability and without sessions fails, and
// says so.
func TestDoctorNoNES(t *testing.T) {
	_, agent := binaries(t)
	dir := t.TempDir()
	r := runDoctor(t, dir, nil, "--json", "--", agent, "--no-nes")
	if r.code != 1 {
		t.Errorf("exit code %d, want 1", r.code)
	}
	m := doctorJSON(t, r)
	if m["ok"] != false || m["failure"] != "no-nes" || m["step"] != "session/new" || !strings.Contains(m["reason"].(string), "nes capability") || !strings.Contains(m["reason"].(string), "no sessions") {
		t.Errorf("ok %v failure %v step %v reason %q", m["ok"], m["failure"], m["step"], m["reason"])
	}
	if field(m, "agent.info.name") != "acp-test-agent" || field(m, "agent.nes") != nil || field(m, "capabilities.inlineCompletion") != false {
		t.Errorf("agent %v capabilities %v", m["agent"], m["capabilities"])
	}

	h := runDoctor(t, dir, nil, "--", agent, "--no-nes")
	if h.code != 1 || !strings.HasPrefix(lastLine(h.stdout), "FAIL ") || !strings.Contains(lastLine(h.stdout), "nes") {
		t.Errorf("human report: exit %d, last line %q", h.code, lastLine(h.stdout))
	}
	if h.stderr != "" {
		t.Errorf("stderr without --verbose: %q", h.stderr)
	}
}

// TestDoctorNESRefused: agents written with the official ACP SDK that initialize but cannot start
// an NES session, as codex-acp does.
func TestDoctorNESRefused(t *testing.T) {
	node, modules := sdkPeer(t)
	script := filepath.Join(moduleRoot(t), "testdata", "peers", "no-nes-agent.mjs")
	for _, tc := range []struct {
		mode, failure, step string
		reason              []string
		code                float64
	}{
		{mode: "refuse", failure: "nes-start-refused", step: "nes/start", code: -32601,
			reason: []string{"refused nes/start", "-32601", "Method not found", "does not implement"}},
		// No nes and no session/new: nothing to ask through prompts either.
		{mode: "chat", failure: "no-nes", step: "session/new", reason: []string{"no nes capability", "no sessions"}},
		{mode: "auth", failure: "nes-start-refused", step: "nes/start", code: -32000,
			reason: []string{"-32000 Authentication required", "sign in", "chatgpt, api-key"}},
		{mode: "exit", failure: "agent-exited", step: "nes/start", reason: []string{"exited (exit status 3) before answering nes/start"}},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			dir := t.TempDir()
			agentLog := filepath.Join(dir, "agent.jsonl")
			env := []string{"PEERS_NODE_MODULES=" + modules, "NO_NES_AGENT_MODE=" + tc.mode, "NO_NES_AGENT_LOG=" + agentLog}
			r := runDoctor(t, dir, env, "--json", "--", node, script)
			if r.code != 1 {
				t.Errorf("exit code %d, want 1", r.code)
			}
			m := doctorJSON(t, r)
			if m["ok"] != false || m["failure"] != tc.failure || m["step"] != tc.step {
				t.Errorf("ok %v failure %v step %v, want false %s %s", m["ok"], m["failure"], m["step"], tc.failure, tc.step)
			}
			for _, w := range tc.reason {
				if !strings.Contains(m["reason"].(string), w) {
					t.Errorf("reason %q lacks %q", m["reason"], w)
				}
			}
			if tc.code != 0 {
				if field(m, "error.code") != tc.code || field(m, "error.method") != "nes/start" {
					t.Errorf("error %v, want code %v", m["error"], tc.code)
				}
			} else if m["error"] != nil {
				t.Errorf("error %v, want null", m["error"])
			}
			if field(m, "agent.info.name") != "no-nes-agent" || field(m, "agent.info.title") != "No NES test agent" {
				t.Errorf("agent.info %v", field(m, "agent.info"))
			}
			switch tc.mode {
			case "chat", "auth":
				// The auth mode offers its terminal method too, to a client that says it handles
				// terminal sign-in, as the bridge (and so doctor) does.
				want := map[string]int{"chat": 2, "auth": 3}[tc.mode]
				methods := field(m, "agent.authMethods").([]any)
				if n := len(methods); n != want {
					t.Errorf("%d auth methods, want %d", n, want)
				}
				if tc.mode == "auth" {
					// What the sign-in question would tell the user to run.
					got, _ := json.Marshal(methods[len(methods)-1])
					if want := `{"args":["--login"],"description":null,"env":{"AGENT_LOGIN":"1"},"id":"login","name":"Log in in a terminal","type":"terminal","vars":null}`; string(got) != want {
						t.Errorf("the terminal method reads %s, want %s", got, want)
					}
				}
			case "exit":
				if m["agentExit"] != "exit status 3" || !strings.Contains(strings.Join(toStrings(m["agentStderr"]), "\n"), "no model is configured") {
					t.Errorf("agentExit %v agentStderr %v", m["agentExit"], m["agentStderr"])
				}
			}
			var methods []string
			for _, e := range readAgentLog(t, agentLog) {
				if m, ok := e["method"].(string); ok { // the first line is the agent's pid
					methods = append(methods, m)
				}
			}
			want := "initialize nes/start" // no nes/close for a session that never started
			if tc.mode == "chat" {
				want = "initialize session/new" // like the bridge: an agent without nes is asked for a prompt session
			}
			if strings.Join(methods, " ") != want {
				t.Errorf("the agent received %v, want %s", methods, want)
			}

			h := runDoctor(t, dir, env, "--", node, script)
			if h.code != 1 || !strings.HasPrefix(lastLine(h.stdout), "FAIL ") || !strings.Contains(lastLine(h.stdout), tc.reason[0]) {
				t.Errorf("human report: exit %d, last line %q", h.code, lastLine(h.stdout))
			}
		})
	}
}

func toStrings(v any) []string {
	var out []string
	for _, s := range v.([]any) {
		out = append(out, s.(string))
	}
	return out
}

// TestDoctorCommandNotFound: a command that does not exist, on $PATH or at a path.
func TestDoctorCommandNotFound(t *testing.T) {
	dir := t.TempDir()
	for _, command := range []string{"acp-lsp-bridge-no-such-agent", filepath.Join(dir, "no", "such-agent")} {
		r := runDoctor(t, dir, nil, "--json", "--", command, "--acp")
		if r.code != 1 {
			t.Errorf("%s: exit code %d, want 1", command, r.code)
		}
		m := doctorJSON(t, r)
		if m["ok"] != false || m["failure"] != "not-found" || m["step"] != "start" || m["agent"] != nil ||
			!strings.Contains(m["reason"].(string), `command "`+command+`" not found`) {
			t.Errorf("%s: ok %v failure %v step %v agent %v reason %q", command, m["ok"], m["failure"], m["step"], m["agent"], m["reason"])
		}
		h := runDoctor(t, dir, nil, "--", command)
		if h.code != 1 || !strings.HasPrefix(lastLine(h.stdout), "FAIL ") || !strings.Contains(lastLine(h.stdout), "not found") {
			t.Errorf("%s: human report: exit %d, last line %q", command, h.code, lastLine(h.stdout))
		}
	}
}

// processesWith lists the live processes whose command line contains s.
func processesWith(s string) []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(cmdline, []byte(s)) {
			continue
		}
		if stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); bytes.Contains(stat, []byte(") Z ")) {
			continue
		}
		out = append(out, e.Name()+": "+strings.ReplaceAll(string(cmdline), "\x00", " "))
	}
	return out
}

// TestDoctorAgentNeverAnswers: an agent that reads stdin and never writes, ignores SIGTERM and
// the end of its stdin, and has started a child of its own. doctor gives up after --timeout,
// exits 1, and leaves no process behind.
func TestDoctorAgentNeverAnswers(t *testing.T) {
	skipOnWindows(t, "the agent is a POSIX shell script")
	dir := t.TempDir()
	script := filepath.Join(dir, "silent-agent.sh")
	if err := os.WriteFile(script, []byte(`#!/bin/sh
trap '' TERM
[ "$1" = child ] || sh "$0" child &
cat >/dev/null
while :; do sleep 1; done
`), 0o755); err != nil {
		t.Fatal(err)
	}
	r := runDoctor(t, dir, nil, "--json", "--timeout", "2s", "--", script)
	if r.code != 1 {
		t.Errorf("exit code %d, want 1", r.code)
	}
	m := doctorJSON(t, r)
	if m["ok"] != false || m["failure"] != "initialize-timeout" || m["reason"] != "the agent did not answer initialize within 2s" || m["agent"] != nil {
		t.Errorf("ok %v failure %v reason %q agent %v", m["ok"], m["failure"], m["reason"], m["agent"])
	}
	if field(m, "timings.initializeMs") != nil {
		t.Errorf("timings.initializeMs = %v, want null", field(m, "timings.initializeMs"))
	}
	if r.elapsed < 2*time.Second || r.elapsed > 15*time.Second {
		t.Errorf("doctor took %v with --timeout 2s", r.elapsed)
	}
	deadline := time.Now().Add(5 * time.Second)
	for left := processesWith(script); len(left) > 0; left = processesWith(script) {
		if time.Now().After(deadline) {
			t.Fatalf("processes left behind after doctor exited:\n%s", strings.Join(left, "\n"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestDoctorAgentExits: an agent that dies on initialize; the report gives its exit status and
// its last stderr lines.
func TestDoctorAgentExits(t *testing.T) {
	skipOnWindows(t, "the agent is a POSIX shell script")
	dir := t.TempDir()
	script := filepath.Join(dir, "dying-agent.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nread line\necho 'dying-agent: cannot load the model' >&2\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := runDoctor(t, dir, nil, "--json", "--", script)
	if r.code != 1 {
		t.Errorf("exit code %d, want 1", r.code)
	}
	m := doctorJSON(t, r)
	if m["failure"] != "agent-exited" || m["step"] != "initialize" || m["reason"] != "the agent exited (exit status 3) before answering initialize" ||
		m["agentExit"] != "exit status 3" || strings.Join(toStrings(m["agentStderr"]), "|") != "dying-agent: cannot load the model" {
		t.Errorf("failure %v step %v reason %q agentExit %v agentStderr %v", m["failure"], m["step"], m["reason"], m["agentExit"], m["agentStderr"])
	}
	h := runDoctor(t, dir, nil, "--", script)
	if h.code != 1 || !strings.Contains(h.stdout, "stderr     dying-agent: cannot load the model\n") || !strings.HasPrefix(lastLine(h.stdout), "FAIL ") {
		t.Errorf("human report: exit %d:\n%s", h.code, h.stdout)
	}
}

// TestDoctorVerbose: logs go to stderr with --verbose, and stdout still holds only the report.
func TestDoctorVerbose(t *testing.T) {
	_, agent := binaries(t)
	r := runDoctor(t, t.TempDir(), nil, "--json", "--verbose", "--", agent)
	if r.code != 0 {
		t.Fatalf("exit code %d, want 0", r.code)
	}
	if m := doctorJSON(t, r); m["ok"] != true || field(m, "agent.nes.events.syncKind") != "incremental" {
		t.Errorf("ok %v, events %v", m["ok"], field(m, "agent.nes.events"))
	}
	for _, want := range []string{"agent started", "agent exited"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("--verbose stderr lacks %q:\n%s", want, r.stderr)
		}
	}
}

// TestDoctorStdoutNoise: an agent that prints a banner on stdout still passes (the bridge ignores
// lines that are not JSON), with a warning that quotes the first.
func TestDoctorStdoutNoise(t *testing.T) {
	skipOnWindows(t, "the agent is a POSIX shell script")
	_, agent := binaries(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "chatty-agent.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho 'Welcome to chatty-agent!'\nexec '"+agent+"'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := runDoctor(t, dir, nil, "--", script)
	if r.code != 0 || !strings.Contains(r.stdout, `warning    the agent wrote a line to stdout that is not JSON (ignored): "Welcome to chatty-agent!"`) {
		t.Errorf("exit %d:\n%s", r.code, r.stdout)
	}
}

// TestDoctorUsage: --help explains the subcommand on stdout; usage errors exit 2 without touching
// stdout.
func TestDoctorUsage(t *testing.T) {
	dir := t.TempDir()
	h := runDoctor(t, dir, nil, "--help")
	if h.code != 0 {
		t.Errorf("--help: exit code %d", h.code)
	}
	for _, want := range []string{"acp-lsp-bridge doctor [--json] [--timeout 20s] [--verbose] [--prompt] -- AGENT [ARGS...]", "Exit status: 0", "-timeout"} {
		if !strings.Contains(h.stdout, want) {
			t.Errorf("--help lacks %q:\n%s", want, h.stdout)
		}
	}
	// No agent named is not a usage error: the built-in agent is checked (TestDoctorBuiltinAgent).
	for _, args := range [][]string{{"--timeout", "-1s", "--", "x"}, {"--nope", "--", "x"}, {"stray", "--", "x"}} {
		r := runDoctor(t, dir, nil, args...)
		if r.code != 2 || r.stdout != "" || r.stderr == "" {
			t.Errorf("doctor %q: exit %d stdout %q stderr %q, want 2, nothing, a message", args, r.code, r.stdout, r.stderr)
		}
	}
}

// TestDoctorBuiltinAgent: doctor with no agent named checks what the bridge runs then, its
// built-in agent, and finds it can do next edits.
func TestDoctorBuiltinAgent(t *testing.T) {
	r := runDoctor(t, t.TempDir(), nil, "--json")
	if r.code != 0 {
		t.Fatalf("doctor with no agent: exit %d, want 0", r.code)
	}
	m := doctorJSON(t, r)
	if cmd, _ := m["command"].([]any); len(cmd) != 2 || cmd[1] != "agent" {
		t.Errorf("doctor checked %v, want the bridge's own \"agent\"", m["command"])
	}
	if m["ok"] != true {
		t.Errorf("the built-in agent is not OK: %v", m)
	}
}
