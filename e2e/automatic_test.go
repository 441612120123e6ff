package e2e

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/lspside"
)

// suggestTriggers are the trigger kinds of the nes/suggest in an agent's log, in order.
func suggestTriggers(t *testing.T, agentLog string) []string {
	t.Helper()
	var out []string
	for _, m := range readAgentLog(t, agentLog) {
		if m["method"] == "nes/suggest" {
			out = append(out, m["params"].(map[string]any)["triggerKind"].(string))
		}
	}
	return out
}

// TestBinaryAutomaticSwitchAndDelay runs the real binary, started as a user who wants quiet
// (--automatic=false --delay 800), with a real agent process that logs what it receives. While the
// switch is off, requests made while typing reach the agent not at all, and one invoked by hand
// does at once. After acp-lsp-bridge.enable, a request made while typing reaches the agent only
// once the document has been still for the delay; a keystroke within it means the agent never
// hears of the text before it.
func TestBinaryAutomaticSwitchAndDelay(t *testing.T) {
	const delay = 800 * time.Millisecond
	_, agent := binaries(t)
	dir := t.TempDir()
	rules, agentLog := filepath.Join(dir, "rules.json"), filepath.Join(dir, "agent.jsonl")
	if err := os.WriteFile(rules, []byte(`[{"when":"total := su","find":"su","replace":"sum(prices)"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	b := startBridge(t, "--automatic=false", "--delay", "800", "--", agent, "--rules", rules, "--log", agentLog)
	root := fileURI(dir)
	b.Initialize(root, "utf-16")
	uri := root + "/shop.go"
	b.Open(uri, "package shop\n\ntotal := s\n")
	waitAgentLog(t, agentLog, "document/didOpen")
	b.Change(uri, fakeeditor.Insert(fakeeditor.At(2, 10), "u"))
	at := fakeeditor.At(2, 11)

	// Off: typing asks nothing; asking by hand goes at once.
	for range 3 {
		if items, err := b.Inline(uri, at); err != nil || len(items) != 0 {
			t.Fatalf("with suggestions off, a request while typing got %v %v", items, err)
		}
	}
	began := time.Now()
	items, err := b.InlineTriggered(uri, at, 1)
	if err != nil || len(items) != 1 || items[0].InsertText != "sum(prices)" {
		t.Fatalf("invoked by hand: %+v %v", items, err)
	}
	if took := time.Since(began); took >= delay {
		t.Errorf("the request invoked by hand took %v: it waited for the %v delay", took, delay)
	}
	if got := suggestTriggers(t, agentLog); len(got) != 1 || got[0] != "manual" {
		t.Fatalf("with suggestions off the agent received nes/suggest %v, want only the manual one", got)
	}

	// The user dismisses it (else typing through it would answer from it, without the agent).
	b.MustCall("workspace/executeCommand", map[string]any{"command": lspside.CommandReject}, nil)

	// On: the request waits until the document has been still for the delay.
	var res map[string]any
	b.MustCall("workspace/executeCommand", map[string]any{"command": lspside.CommandEnable}, &res)
	if res["automatic"] != true {
		t.Fatalf("%s answered %v", lspside.CommandEnable, res)
	}
	p := b.Start("textDocument/inlineCompletion", fakeeditor.InlineParams(uri, at, 2), nil)
	time.Sleep(delay / 3)
	if got := suggestTriggers(t, agentLog); len(got) != 1 {
		t.Errorf("within the delay the agent received nes/suggest %v", got)
	}
	// A keystroke within the delay: the request for the text before it is never sent.
	b.Change(uri, fakeeditor.Insert(at, "m"))
	if err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	if got := suggestTriggers(t, agentLog); len(got) != 1 {
		t.Errorf("the agent was asked about a text that changed within the delay: %v", got)
	}
	// The request after the keystroke: answered once the delay has passed.
	b.Change(uri, fakeeditor.Replace(fakeeditor.At(2, 11), fakeeditor.At(2, 12), ""))
	began = time.Now()
	items, err = b.Inline(uri, at)
	if err != nil || len(items) != 1 || items[0].InsertText != "sum(prices)" {
		t.Fatalf("after the delay: %+v %v", items, err)
	}
	if took := time.Since(began); took < delay {
		t.Errorf("the automatic request was answered after %v, within the %v delay", took, delay)
	}
	if got := suggestTriggers(t, agentLog); len(got) != 2 || got[1] != "automatic" {
		t.Errorf("the agent received nes/suggest %v, want manual then automatic", got)
	}
}
