package e2e

import (
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestBinarySignIn: an agent that requires authentication, through the real binary. The user is
// asked with the agent's auth method while the editor keeps working (a request answers empty at
// once, though the suggestion timeout is a minute); after the answer the bridge authenticates,
// starts the NES session again, replays the document, and suggestions work.
func TestBinarySignIn(t *testing.T) {
	_, agent := binaries(t)
	dir := t.TempDir()
	rules := filepath.Join(dir, "rules.json")
	agentLog := filepath.Join(dir, "agent.jsonl")
	if err := os.WriteFile(rules, []byte(`[{"when":"hel","find":"hel","replace":"hello"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	b := startBridge(t, "--suggest-timeout", "1m")
	asked := make(chan []string, 1)
	release := make(chan struct{})
	b.setAnswer(func(message string, titles []string) string {
		if !strings.Contains(message, "acp-test-agent needs you to sign in") {
			t.Errorf("question %q", message)
			return ""
		}
		asked <- titles
		<-release
		return "Sign in with Test"
	})
	root := fileURI(dir)
	b.InitializeWith(fakeeditor.InitParams{Root: root, ProcessID: os.Getpid(), Options: agentOption(agent, "--auth", "--rules", rules, "--log", agentLog)})
	uri := root + "/a.go"
	b.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": "go", "version": 1, "text": "hel\n"}})

	var titles []string
	select {
	case titles = <-asked:
	case <-time.After(15 * time.Second):
		t.Fatal("the user was never asked to sign in")
	}
	if !slices.Equal(titles, []string{"Sign in with Test", "Not now"}) {
		t.Errorf("choices %q", titles)
	}
	inline := func() []any {
		var res struct {
			Items []any `json:"items"`
		}
		if err := b.Call("textDocument/inlineCompletion", map[string]any{
			"textDocument": map[string]any{"uri": uri}, "position": map[string]any{"line": 0, "character": 3},
		}, &res); err != nil {
			t.Fatalf("inlineCompletion: %v", err)
		}
		return res.Items
	}
	if items := inline(); len(items) != 0 {
		t.Fatalf("while the question waits: items %v", items)
	}
	// The editor's status says why nothing comes.
	b.Await(fakeeditor.StatusIs("signingIn", ""))
	close(release)
	b.waitMessage("signed in to acp-test-agent")
	b.waitMessage("acp-test-agent is ready")
	b.Await(fakeeditor.StatusIs("ready", ""))
	if items := inline(); len(items) != 1 {
		t.Fatalf("after sign-in: items %v, want the agent's suggestion", items)
	}
	var got []string
	for _, m := range readAgentLog(t, agentLog) {
		got = append(got, m["method"].(string))
	}
	i := slices.Index(got, "authenticate")
	if i < 0 || !slices.Contains(got[i:], "nes/start") || !slices.Contains(got[i:], "document/didOpen") || slices.Contains(got[:i], "document/didOpen") {
		t.Errorf("the agent received %q; want nes/start refused, authenticate, nes/start, then document/didOpen", got)
	}
}
