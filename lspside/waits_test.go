package lspside_test

import (
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"

	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testagent"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/lspside"
)

// An editor that never answers workspace/applyEdit or window/showDocument does not hold the bridge:
// the agent's write fails after ClientWait with a clear error, accepting a jump returns, and the
// bridge keeps serving.
func TestEditorThatNeverAnswersIsNotWaitedForForever(t *testing.T) {
	root, dir := workspaceDir(t, map[string]string{"disk.go": "old\n"})
	sc := newScripted()
	e := newEditor(t, harnessOpts{agentCfg: testagent.Config{Encoding: "utf-16", Suggest: sc.suggest}, cfg: lspside.Config{ClientWait: 200 * time.Millisecond},
		silent: []string{"workspace/applyEdit", "window/showDocument"}})
	e.root = root
	e.initialize("utf-16")
	u := root + "/disk.go"
	e.Open(u, "old\n")
	e.waitMirror(u, "old\n")
	start := time.Now()
	_, err := e.agentCall("fs/write_text_file", map[string]any{"sessionId": "test-session", "path": filepath.Join(dir, "disk.go"), "content": "new\n"})
	if err == nil || !strings.Contains(err.Error(), "did not answer") {
		t.Errorf("write through an editor that never answers: %v", err)
	}
	// A jump: accepting it asks for window/showDocument, which is never answered.
	res := e.inlineAsync(u, fakeeditor.At(0, 1))
	sc.nextCall(t)
	sc.answers <- map[string]any{"suggestions": []any{map[string]any{"kind": "jump", "id": "j1", "uri": u, "position": map[string]any{"line": 0, "character": 2}}}}
	waitResult(t, res)
	e.MustCall("workspace/executeCommand", map[string]any{"command": "acp-lsp-bridge.accept", "arguments": []any{"j1"}}, nil)
	e.waitAgent("nes/accept j1", method("nes/accept"))
	if d := time.Since(start); d > 8*time.Second {
		t.Errorf("took %s", d)
	}
	res = e.inlineAsync(u, fakeeditor.At(0, 0))
	sc.nextCall(t)
	sc.answers <- map[string]any{"suggestions": []any{}}
	if r := waitResult(t, res); r.err != nil {
		t.Fatalf("after: %v", r.err)
	}
}
