package e2e

import (
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestBinaryDocumentTooLargeForTheAgent opens an 11 MiB file next to a small one, with the real
// test agent, which reads messages through the ACP Go SDK (at most 10 MiB a line). With the default
// --max-message-size the large document is not sent: the user is told, the agent keeps running and
// the small document gets its suggestion. With the limit raised past what the SDK reads, the same
// didOpen ends the agent's connection: that is what the default prevents.
func TestBinaryDocumentTooLargeForTheAgent(t *testing.T) {
	_, agent := binaries(t)
	huge := strings.Repeat("log line, nothing to suggest here\n", (11<<20)/34)
	for _, tc := range []struct {
		name  string
		args  []string
		fits  bool // the bridge sends the large document
		lives bool // the agent survives it
	}{
		{"default limit", nil, false, true},
		{"limit raised past the SDK's", []string{"--max-message-size", "100000000"}, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			rules := filepath.Join(dir, "rules.json")
			agentLog := filepath.Join(dir, "agent.jsonl")
			if err := os.WriteFile(rules, []byte(`[{"when":"hel","find":"hel","replace":"hello"}]`), 0o644); err != nil {
				t.Fatal(err)
			}
			args := append(append([]string{}, tc.args...), "--", agent, "--rules", rules, "--log", agentLog)
			b := startBridge(t, args...)
			b.InitializeWith(fakeeditor.InitParams{})
			b.waitMessage("acp-test-agent is ready")
			bigURI, smallURI := fileURI(dir)+"/big.log", fileURI(dir)+"/small.go"
			b.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": bigURI, "languageId": "log", "version": 1, "text": huge}})
			if !tc.fits {
				b.waitMessage(bigURI + " (11.5 MB) is too large to send to the agent")
			}
			b.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": smallURI, "languageId": "go", "version": 1, "text": "hel\n"}})
			var res struct {
				Items []struct {
					InsertText string `json:"insertText"`
				} `json:"items"`
			}
			if err := b.Call("textDocument/inlineCompletion", map[string]any{
				"textDocument": map[string]any{"uri": smallURI}, "position": map[string]any{"line": 0, "character": 3},
				"context": map[string]any{"triggerKind": 1},
			}, &res); err != nil {
				t.Fatal(err)
			}
			logText := func() string {
				data, _ := os.ReadFile(b.logFile)
				return string(data)
			}
			if tc.lives {
				if len(res.Items) != 1 || res.Items[0].InsertText != "hello" {
					t.Errorf("small document: items %+v, want hello", res.Items)
				}
				if strings.Contains(logText(), "agent exited") {
					t.Errorf("the agent exited")
				}
				for _, m := range readAgentLog(t, agentLog) {
					if m["method"] == "document/didOpen" && strings.Contains(m["params"].(map[string]any)["uri"].(string), "big.log") {
						t.Errorf("the agent got the large document")
					}
				}
				return
			}
			deadline := time.Now().Add(15 * time.Second)
			for !strings.Contains(logText(), "agent exited") {
				if time.Now().After(deadline) {
					t.Fatalf("the agent read an 11 MiB message: the Go SDK's limit has changed, and DefaultMaxMessageBytes can be raised")
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
}
