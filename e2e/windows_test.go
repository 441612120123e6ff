package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"
)

func onlyOnWindows(t *testing.T, what string) {
	t.Helper()
	if runtime.GOOS != "windows" {
		t.Skipf("Windows only: %s", what)
	}
}

// copyFile copies a program.
func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err == nil {
		err = os.WriteFile(to, b, 0o755)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestWindowsNpmShimRunsNodeNotCmd: an agent installed by npm on Windows is a cmd shim. The bridge
// runs what the shim runs (the node.exe beside it, with the package's script) and never cmd.exe,
// so arguments that cmd.exe would read (&, %PATH%, ^) reach the agent as written. Here node.exe
// is the test agent, which logs the arguments it got.
func TestWindowsNpmShimRunsNodeNotCmd(t *testing.T) {
	onlyOnWindows(t, "npm's cmd shims")
	_, agent := binaries(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "npm")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	copyFile(t, agent, filepath.Join(bin, "node.exe"))
	shim := "@ECHO off\r\nGOTO start\r\n:find_dp0\r\nSET dp0=%~dp0\r\nEXIT /b\r\n:start\r\nSETLOCAL\r\nCALL :find_dp0\r\n\r\n" +
		"IF EXIST \"%dp0%\\node.exe\" (\r\n  SET \"_prog=%dp0%\\node.exe\"\r\n) ELSE (\r\n  SET \"_prog=node\"\r\n  SET PATHEXT=%PATHEXT:;.JS;=;%\r\n)\r\n\r\n" +
		"endLocal & goto #_undefined_# 2>NUL || title %COMSPEC% & \"%_prog%\"  \"%dp0%\\node_modules\\test-agent\\bin\\agent.js\" %*\r\n"
	if err := os.WriteFile(filepath.Join(bin, "test-agent.cmd"), []byte(shim), 0o644); err != nil {
		t.Fatal(err)
	}
	agentLog := filepath.Join(dir, "agent.jsonl")
	args := []string{"a&b", "%PATH%", "x ^& y", "two words"}
	b := startBridge(t)
	b.InitializeWith(fakeeditor.InitParams{Root: fileURI(dir), ProcessID: os.Getpid(), Options: map[string]any{"agent": map[string]any{
		"command": filepath.Join(bin, "test-agent.cmd"), "args": args, "env": map[string]string{"ACP_TEST_AGENT_LOG": agentLog},
	}}})
	b.waitMessage("acp-test-agent is ready")
	var got []string
	for _, m := range readAgentLog(t, agentLog) {
		if m["method"] == "test/args" {
			raw, _ := json.Marshal(m["params"])
			_ = json.Unmarshal(raw, &got)
		}
	}
	want := append([]string{filepath.Join(bin, "node_modules", "test-agent", "bin", "agent.js")}, args...)
	if !slices.Equal(got, want) {
		t.Errorf("the agent got %q, want %q", got, want)
	}
}

// TestWindowsBatchFileAgent: a batch file that is not an npm shim runs through cmd.exe with its
// arguments quoted; an argument cmd.exe would read specially is refused, with the reason.
func TestWindowsBatchFileAgent(t *testing.T) {
	onlyOnWindows(t, "batch files")
	_, agent := binaries(t)
	dir := t.TempDir()
	bat := filepath.Join(dir, "agent.bat")
	if err := os.WriteFile(bat, []byte("@\""+agent+"\" %*\r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	agentLog := filepath.Join(dir, "agent log.jsonl")
	b := startBridge(t)
	b.InitializeWith(fakeeditor.InitParams{Root: fileURI(dir), ProcessID: os.Getpid(), Options: agentOption(bat, "--log", agentLog)})
	b.waitMessage("acp-test-agent is ready")
	waitAgentLog(t, agentLog, "nes/start")

	b2 := startBridge(t)
	b2.InitializeWith(fakeeditor.InitParams{Root: fileURI(dir), ProcessID: os.Getpid(), Options: agentOption(bat, "--log", filepath.Join(dir, "x&copy nul pwned.jsonl"))})
	said := b2.waitMessage("cmd.exe reads specially")
	if !strings.Contains(said[len(said)-1], "name the program the batch file runs instead") {
		t.Errorf("the message %q does not say what to do", said[len(said)-1])
	}
	time.Sleep(200 * time.Millisecond)
	if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
		t.Error("cmd.exe ran the argument")
	}
}

// TestBinaryEndsTheAgentsJob: on Windows the agent runs in a Job Object that ends with the bridge:
// its helper (a process the agent started) is gone once the bridge is killed.
func TestBinaryEndsTheAgentsJob(t *testing.T) {
	onlyOnWindows(t, "Job Objects")
	_, agent := binaries(t)
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pids")
	b := startBridge(t)
	b.InitializeWith(fakeeditor.InitParams{Root: fileURI(dir), ProcessID: os.Getpid(), Options: agentOption(agent, "--pid-file", pidFile, "--spawn-helper")})
	b.waitMessage("acp-test-agent is ready")
	pids := waitPIDs(t, pidFile, "agent", "helper")
	if err := b.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		var alive []int
		for _, pid := range pids {
			if p, err := os.FindProcess(pid); err == nil {
				alive = append(alive, pid)
				p.Release()
			}
		}
		if len(alive) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the bridge was killed, still running: %v", alive)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
