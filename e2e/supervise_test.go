package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"
)

// TestBinaryRestartsAKilledAgent: the agent process is killed (SIGKILL) while the editor works.
// The bridge says so, restarts it, and the new process gets initialize, nes/start and a didOpen
// with the text the killed one had, then the edit made while it was down as a change.
func TestBinaryRestartsAKilledAgent(t *testing.T) {
	skipOnWindows(t, "finds the agent's process in /proc")
	_, agent := binaries(t)
	dir := t.TempDir()
	agentLog := filepath.Join(dir, "agent.jsonl")
	b := startBridge(t)
	root := fileURI(dir)
	b.InitializeWith(fakeeditor.InitParams{Root: root, ProcessID: os.Getpid(), Options: agentOption(agent, "--log", agentLog)})
	uri := root + "/a.go"
	b.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": "go", "version": 1, "text": "package a\n"}})
	waitAgentLog(t, agentLog, "document/didOpen")
	pids := agentPIDs(agent)
	if len(pids) != 1 {
		t.Fatalf("agent processes %v, want one", pids)
	}
	if p, err := os.FindProcess(pids[0]); err != nil || p.Kill() != nil {
		t.Fatalf("kill the agent %d: %v", pids[0], err)
	}
	b.waitMessage("acp-test-agent exited")
	b.Notify("textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": uri, "version": 2},
		"contentChanges": []any{map[string]any{"text": "package a // é\n"}},
	})
	b.waitMessage("acp-test-agent is ready")

	// The new agent logs the replayed didOpen when it handles it, maybe after "ready" reached us.
	var inits, opens, changes []map[string]any
	for deadline := time.Now().Add(10 * time.Second); len(changes) < 1 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		inits, opens, changes = nil, nil, nil
		for _, m := range readAgentLog(t, agentLog) {
			switch m["method"] {
			case "initialize":
				inits = append(inits, m)
			case "document/didOpen":
				opens = append(opens, m)
			case "document/didChange":
				changes = append(changes, m)
			}
		}
	}
	if len(inits) != 2 || len(opens) != 2 || len(changes) != 1 {
		t.Fatalf("initialize ×%d, didOpen ×%d, didChange ×%d; want 2, 2 (before and after the kill) and the outage's edit", len(inits), len(opens), len(changes))
	}
	p := opens[1]["params"].(map[string]any)
	if p["text"] != "package a\n" || p["version"] != float64(1) {
		t.Errorf("didOpen after the restart %v: want version 1, the text the killed agent had", p)
	}
	// The edit as one change: the bridge's (a range) or, had the new agent been ready before the
	// edit came, the editor's own (the whole text).
	c := changes[0]["params"].(map[string]any)
	ranged := fmt.Sprint(c["contentChanges"]) == "[map[range:map[end:map[character:9 line:0] start:map[character:9 line:0]] text: // é]]"
	whole := fmt.Sprint(c["contentChanges"]) == "[map[text:package a // é\n]]"
	if c["version"] != float64(2) || !ranged && !whole {
		t.Errorf("didChange after the restart %v: want version 2 with the edit made during the outage", c)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(agentPIDs(agent)) != 1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := len(agentPIDs(agent)); n != 1 {
		t.Errorf("%d agent processes after the restart, want 1", n)
	}
	// The killed process was reaped: no zombie child of the bridge.
	if z := zombieChildren(b.cmd.Process.Pid); len(z) > 0 {
		t.Errorf("zombie children of the bridge: %v", z)
	}
}

// zombieChildren lists the processes in state Z whose parent is pid.
func zombieChildren(pid int) []string {
	entries, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range entries {
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may hold spaces, so read after the last ')'.
		s := string(stat)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 1 && f[0] == "Z" && f[1] == strconv.Itoa(pid) {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestBinaryKilledTakesTheAgentAlong: when the bridge itself is killed (SIGKILL, no chance to clean
// up), its agent does not outlive it.
func TestBinaryKilledTakesTheAgentAlong(t *testing.T) {
	_, agent := binaries(t)
	dir := t.TempDir()
	agentLog := filepath.Join(dir, "agent.jsonl")
	b := startBridge(t)
	b.InitializeWith(fakeeditor.InitParams{Root: fileURI(dir), ProcessID: os.Getpid(), Options: agentOption(agent, "--log", agentLog)})
	waitAgentLog(t, agentLog, "nes/start")
	if n := len(agentPIDs(agent)); n != 1 {
		t.Fatalf("%d agent processes, want 1", n)
	}
	if err := b.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	waitAgentGone(t, agent)
}

// TestBinaryRestartThatCannotStartSaysWhy: the agent crashes, and when started again it exits
// before answering initialize, saying why on stderr (its sign-in expired meanwhile). The user is
// told as at a first start: its exit status and what it wrote, not a JSON-RPC error.
func TestBinaryRestartThatCannotStartSaysWhy(t *testing.T) {
	_, agent := binaries(t)
	dir := t.TempDir()
	expired := filepath.Join(t.TempDir(), "expired")
	b := startBridge(t)
	root := fileURI(dir)
	b.InitializeWith(fakeeditor.InitParams{Root: root, ProcessID: os.Getpid(), Options: agentOption(agent, "--fault", "exit", "--cannot-start-if", expired)})
	b.WaitReady()
	if err := os.WriteFile(expired, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	uri := root + "/a.go"
	b.Open(uri, "package a\n")
	_, _ = b.InlineTriggered(uri, fakeeditor.At(0, 0), 1) // the agent exits 3 on it
	b.waitMessage("acp-test-agent exited")
	said := b.waitMessage("Restarting it.")
	m := said[len(said)-1]
	for _, want := range []string{"exited (exit status 41) before answering initialize.", "It wrote: acp-test-agent: cannot start | Your session expired; run acp-test-agent login. Restarting it."} {
		if !strings.Contains(m, want) {
			t.Errorf("the message %q does not say %q", m, want)
		}
	}
	for _, raw := range []string{"jsonrpc", "peer", "initialize: ", "code"} {
		if strings.Contains(m, raw) {
			t.Errorf("the message %q shows the protocol's error (%q)", m, raw)
		}
	}
}
