package e2e

import (
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBinaryLogHasNoDocumentText: a whole session (open, edits, suggestions, accept, a suggestion
// the bridge drops, shutdown) leaves no document text in the log, at the default level and at
// debug, which --help promises logs methods, never text.
func TestBinaryLogHasNoDocumentText(t *testing.T) {
	_, agent := binaries(t)
	const secret = "hunter2-ZQXJ"
	for _, level := range []string{"info", "debug"} {
		t.Run(level, func(t *testing.T) {
			dir := t.TempDir()
			rules := filepath.Join(dir, "rules.json")
			if err := os.WriteFile(rules, []byte(`[{"when":"`+secret+`","find":"`+secret+`","replace":"`+secret+`!"}]`), 0o644); err != nil {
				t.Fatal(err)
			}
			b := startBridge(t, "--log-level", level)
			root := fileURI(dir)
			b.InitializeWith(fakeeditor.InitParams{Root: root, ProcessID: os.Getpid(), Options: agentOption(agent, "--rules", rules)})
			uri := root + "/a.go"
			b.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": "go", "version": 1, "text": "x := \"" + secret + "\"\n"}})
			b.Notify("textDocument/didChange", map[string]any{
				"textDocument":   map[string]any{"uri": uri, "version": 2},
				"contentChanges": []any{map[string]any{"text": "y := \"" + secret + "\"\n"}},
			})
			var res struct {
				Items []struct {
					Command struct {
						Arguments []any `json:"arguments"`
					} `json:"command"`
				} `json:"items"`
			}
			b.waitMessage("acp-test-agent is ready")
			if err := b.Call("textDocument/inlineCompletion", map[string]any{
				"textDocument": map[string]any{"uri": uri}, "position": map[string]any{"line": 0, "character": 18},
			}, &res); err != nil || len(res.Items) != 1 {
				t.Fatalf("inlineCompletion: %+v, %v", res, err)
			}
			if err := b.Call("workspace/executeCommand", map[string]any{"command": "acp-lsp-bridge.accept", "arguments": res.Items[0].Command.Arguments}, nil); err != nil {
				t.Fatal(err)
			}
			// A bad position: the error names the position, not the text.
			_ = b.Call("textDocument/inlineCompletion", map[string]any{
				"textDocument": map[string]any{"uri": uri}, "position": map[string]any{"line": 9, "character": 0},
			}, nil)
			if err := b.Call("shutdown", nil, nil); err != nil {
				t.Fatal(err)
			}
			b.Notify("exit", nil)
			b.exitCode()
			log, err := os.ReadFile(b.logFile)
			if err != nil {
				t.Fatal(err)
			}
			if len(log) == 0 {
				t.Fatal("empty log")
			}
			if strings.Contains(string(log), secret) {
				for _, line := range strings.Split(string(log), "\n") {
					if strings.Contains(line, secret) {
						t.Errorf("document text in the log at level %s: %s", level, line)
					}
				}
			}
		})
	}
}
