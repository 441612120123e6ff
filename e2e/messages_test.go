package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"
)

// noNESAgent returns node and testdata/peers/no-nes-agent.mjs (the official ACP SDK).
func noNESAgent(t *testing.T) (node, script string) {
	t.Helper()
	node, _ = sdkPeer(t)
	return node, filepath.Join(moduleRoot(t), "testdata", "peers", "no-nes-agent.mjs")
}

// startNoNESAgent starts the bridge with no-nes-agent.mjs in mode, named in initializationOptions
// as an editor's configuration names it, and returns the bridge and the agent's log.
func startNoNESAgent(t *testing.T, mode string, env map[string]string) (b *bridgeProc, dir, agentLog string) {
	t.Helper()
	node, script := noNESAgent(t)
	dir = t.TempDir()
	agentLog = filepath.Join(dir, "agent.jsonl")
	agentEnv := map[string]string{"NO_NES_AGENT_MODE": mode, "NO_NES_AGENT_LOG": agentLog}
	for k, v := range env {
		agentEnv[k] = v
	}
	b = startBridge(t)
	b.InitializeWith(fakeeditor.InitParams{Root: fileURI(dir), ProcessID: os.Getpid(),
		Options: map[string]any{"agent": map[string]any{"command": node, "args": []string{script}, "env": agentEnv}}})
	return b, dir, agentLog
}

// TestBinaryMessagesSayWhatToDo: what the editor shows when the agent cannot give suggestions,
// through the real binary and agents on the official ACP SDK that behave as the popular agents do.
func TestBinaryMessagesSayWhatToDo(t *testing.T) {
	// An agent without NES and without sessions to prompt, that ignores its stdin's end and
	// SIGTERM, as codex-acp's native binary does: the user is told, by the agent's title and with
	// what to do, while the agent still runs (closing it takes seconds).
	t.Run("no NES", func(t *testing.T) {
		b, _, agentLog := startNoNESAgent(t, "chat", map[string]string{"NO_NES_AGENT_LINGER": "1"})
		b.WaitMessage("No NES test agent does not offer Next Edit Suggestions, nor ACP sessions to ask it through prompts, so there will be no suggestions.")
		pid := agentPID(t, agentLog)
		if !processAlive(pid) {
			t.Errorf("the agent (pid %d) was closed before the user was told", pid)
		}
		msg := b.Record().Messages[0]
		for _, want := range []string{"remove the agent setting to use the bridge's built-in agent", "a model agent", "acp-lsp-bridge doctor -- COMMAND"} {
			if !strings.Contains(msg, want) {
				t.Errorf("the message does not say %q: %q", want, msg)
			}
		}
		if strings.Contains(msg, "no-nes-agent") {
			t.Errorf("the message names the agent by its package name: %q", msg)
		}
	})

	// An agent that exits before answering initialize (gemini without --acp and no API key): its
	// exit status and its last stderr lines, whole, instead of a JSON-RPC error.
	t.Run("exits before initialize", func(t *testing.T) {
		b, _, _ := startNoNESAgent(t, "early", nil)
		b.WaitMessage("exited (exit status 41) before answering initialize.")
		msg := b.Record().Messages[0]
		if !strings.Contains(msg, "no-nes-agent.mjs` exited") || !strings.Contains(msg, "It wrote: no-nes-agent: starting | When using no-nes-agent") ||
			!strings.Contains(msg, "(this line is long on purpose)") || strings.Contains(msg, "jsonrpc") {
			t.Errorf("message %q", msg)
		}
		// doctor's report shows the same line whole.
		node, script := noNESAgent(t)
		h := runDoctor(t, t.TempDir(), []string{"NO_NES_AGENT_MODE=early"}, "--", node, script)
		if h.code != 1 || !strings.Contains(h.stdout, "(this line is long on purpose)\n") || !strings.Contains(lastLine(h.stdout), "exit status 41") {
			t.Errorf("doctor: exit %d:\n%s", h.code, h.stdout)
		}
	})

	t.Run("command not found", func(t *testing.T) {
		b := startBridge(t)
		b.InitializeWith(fakeeditor.InitParams{Options: agentOption("no-such-agent-acp")})
		b.WaitMessage("acp-lsp-bridge: cannot start the agent: ")
		msg := b.Record().Messages[0]
		for _, want := range []string{`"no-such-agent-acp"`, "executable file not found", "on the PATH the editor starts the bridge with", "absolute path", "npx"} {
			if !strings.Contains(msg, want) {
				t.Errorf("the message does not say %q: %q", want, msg)
			}
		}
	})

	// claude-agent-acp offers its login only to a client that says it handles terminal sign-in:
	// the bridge says so, and tells the user the command to run, and where.
	t.Run("terminal sign-in", func(t *testing.T) {
		node, script := noNESAgent(t)
		var titles []string
		b, dir, _ := startNoNESAgentAnswering(t, func(_ string, offered []string) string {
			titles = offered
			return "Log in in a terminal"
		})
		b.WaitMessage("to sign in to No NES test agent with \"Log in in a terminal\"")
		if strings.Join(titles, "|") != "Log in with ChatGPT|Use an API key|Log in in a terminal|Not now" {
			t.Errorf("the sign-in choices %q", titles)
		}
		want := "run `AGENT_LOGIN=1 " + node + " " + script + " --login` in a terminal, in the folder " + dir + ", then run the command acp-lsp-bridge.restart."
		if msg := b.Record().Messages; !strings.Contains(strings.Join(msg, "\n"), want) {
			t.Errorf("messages %q, want one saying %q", msg, want)
		}
	})
}

// startNoNESAgentAnswering is startNoNESAgent in the auth mode, with the user answering the
// sign-in question with answer.
func startNoNESAgentAnswering(t *testing.T, answer func(string, []string) string) (*bridgeProc, string, string) {
	t.Helper()
	node, script := noNESAgent(t)
	dir := t.TempDir()
	agentLog := filepath.Join(dir, "agent.jsonl")
	b := startBridge(t)
	b.setAnswer(answer)
	b.InitializeWith(fakeeditor.InitParams{Root: fileURI(dir), ProcessID: os.Getpid(),
		Options: map[string]any{"agent": map[string]any{"command": node, "args": []string{script},
			"env": map[string]string{"NO_NES_AGENT_MODE": "auth", "NO_NES_AGENT_LOG": agentLog}}}})
	return b, dir, agentLog
}

// agentPID reads the pid no-nes-agent.mjs writes first to its log.
func agentPID(t *testing.T, agentLog string) int {
	t.Helper()
	data, err := os.ReadFile(agentLog)
	if err != nil {
		t.Fatal(err)
	}
	var first struct {
		PID int `json:"pid"`
	}
	line, _, _ := strings.Cut(string(data), "\n")
	if err := json.Unmarshal([]byte(line), &first); err != nil || first.PID == 0 {
		t.Fatalf("agent log %q: %v", line, err)
	}
	return first.PID
}

// processAlive reports whether pid runs (and is not a zombie).
func processAlive(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	f := strings.Fields(string(stat))
	return len(f) > 2 && f[2] != "Z"
}
