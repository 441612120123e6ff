package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"
)

// bigText is a Go file of size bytes whose line n says n; marker changes its last line.
func bigText(marker string, size int) string {
	var b strings.Builder
	b.WriteString("package big\n\n")
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "var v%05d = %q // 日本\n", i, "value")
	}
	b.WriteString("// " + marker + "\n")
	return b.String()
}

// busySession starts the bridge (with args) and the test agent (with agentArgs, a log and a mirror
// folder), opens a 300 KB document once the agent is ready, and changes it n times, each change the
// whole text; it returns the document's URI, its final text, the agent's log and mirror folder.
func busySession(t *testing.T, args, agentArgs []string, changes int) (b *bridgeProc, uri, text, agentLog, mirror string) {
	return busySessionOf(t, 300<<10, args, agentArgs, changes)
}

// busySessionOf is busySession with a document of size bytes.
func busySessionOf(t *testing.T, size int, args, agentArgs []string, changes int) (b *bridgeProc, uri, text, agentLog, mirror string) {
	t.Helper()
	_, agent := binaries(t)
	dir := t.TempDir()
	agentLog, mirror = filepath.Join(dir, "agent.jsonl"), filepath.Join(dir, "mirror")
	if err := os.Mkdir(mirror, 0o755); err != nil {
		t.Fatal(err)
	}
	b = startBridge(t, args...)
	root := fileURI(dir)
	b.InitializeWith(fakeeditor.InitParams{Root: root, ProcessID: os.Getpid(),
		Options: agentOption(agent, append([]string{"--log", agentLog, "--mirror-dir", mirror}, agentArgs...)...)})
	b.waitMessage("acp-test-agent is ready")
	uri = root + "/big.go"
	text = bigText("edit 0", size)
	b.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": "go", "version": 1, "text": text}})
	for i := 1; i <= changes; i++ {
		text = bigText(fmt.Sprintf("edit %d", i), size)
		b.Notify("textDocument/didChange", map[string]any{
			"textDocument":   map[string]any{"uri": uri, "version": i + 1},
			"contentChanges": []any{map[string]any{"text": text}},
		})
	}
	return b, uri, text, agentLog, mirror
}

// logHas reports whether the agent's log names method.
func logHas(path, method string) bool {
	b, _ := os.ReadFile(path)
	return bytes.Contains(b, []byte(`"method":"`+method+`"`))
}

// waitMirror waits until the agent's copy of the document reads text.
func waitMirror(t *testing.T, mirror, name, text string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		got, _ := os.ReadFile(filepath.Join(mirror, name))
		if string(got) == text {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the agent's copy of %s (%d bytes, ends %q) is not the editor's (%d bytes, ends %q)", name, len(got), lastBytes(string(got)), len(text), lastBytes(text))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func lastBytes(s string) string {
	return s[max(len(s)-20, 0):]
}

// codeActions asks for code actions at the document's start and fails the test on an error.
func codeActions(t *testing.T, b *bridgeProc, uri string) {
	t.Helper()
	var res any
	if err := b.Call("textDocument/codeAction", map[string]any{
		"textDocument": map[string]any{"uri": uri},
		"range":        map[string]any{"start": map[string]any{"line": 0, "character": 0}, "end": map[string]any{"line": 0, "character": 0}},
		"context":      map[string]any{"diagnostics": []any{}},
	}, &res); err != nil {
		t.Fatalf("codeAction: %v", err)
	}
}

// TestBinaryBusyAgentDoesNotHoldTheEditor: an agent that stops reading its input for a few seconds
// (its stdin a real pipe) while the editor opens a 300 KB file and changes it ten times. The
// editor's code-action request is answered while the agent still reads nothing (within the
// suggestion timeout), the ten whole texts a full-sync agent would get collapse to fewer, and once
// the agent reads again its copy is the editor's text.
func TestBinaryBusyAgentDoesNotHoldTheEditor(t *testing.T) {
	b, uri, text, agentLog, mirror := busySession(t, []string{"--suggest-timeout", "300ms"}, []string{"--stall", "4s", "--sync", "full"}, 10)
	codeActions(t, b, uri)
	if logHas(agentLog, "test/stallEnded") {
		t.Fatal("the code action was answered only once the agent read again")
	}
	waitAgentLog(t, agentLog, "test/stallEnded")
	waitMirror(t, mirror, "big.go", text, 15*time.Second)
	n := 0
	for _, m := range readAgentLog(t, agentLog) {
		if m["method"] == "document/didChange" {
			n++
		}
	}
	if n >= 10 {
		t.Errorf("the agent got %d whole texts of the 10 changes made while it read nothing; want them collapsed", n)
	}
}

// TestBinaryShutdownWhileTheAgentReadsNothing: shutdown is answered, and the bridge exits, while
// the agent reads nothing of a 300 KB document for a minute.
func TestBinaryShutdownWhileTheAgentReadsNothing(t *testing.T) {
	b, _, _, agentLog, _ := busySession(t, nil, []string{"--stall", "60s"}, 3)
	b.Shutdown()
	if code := b.exitCode(); code != 0 {
		t.Errorf("exit code %d", code)
	}
	if logHas(agentLog, "test/stallEnded") {
		t.Fatal("shutdown waited for the agent")
	}
}

// TestBinaryStuckAgentIsRestarted: an agent that reads nothing for longer than --agent-stuck-after
// is ended and started again; the user is told why, and the new agent gets the editor's current
// text.
func TestBinaryStuckAgentIsRestarted(t *testing.T) {
	once := filepath.Join(t.TempDir(), "stalled")
	b, uri, text, _, mirror := busySession(t, []string{"--agent-stuck-after", "1s", "--suggest-timeout", "300ms"}, []string{"--stall", "60s", "--stall-once", once}, 2)
	codeActions(t, b, uri)
	b.waitMessage("read nothing of its input for 1s")
	b.waitMessage("acp-test-agent is ready")
	waitMirror(t, mirror, "big.go", text, 15*time.Second)
}

// TestBinaryTricklingAgent: a full-sync agent that reads one byte at a time; the editor's requests
// are answered meanwhile and the agent's copy ends as the editor's text.
func TestBinaryTricklingAgent(t *testing.T) {
	size := 300 << 10
	if runtime.GOOS == "windows" {
		size = 20 << 10 // each one-byte read costs a round trip through Wine's server
	}
	b, uri, text, _, mirror := busySessionOf(t, size, []string{"--suggest-timeout", "300ms"}, []string{"--trickle", "--sync", "full"}, 5)
	codeActions(t, b, uri)
	waitMirror(t, mirror, "big.go", text, 60*time.Second)
}
