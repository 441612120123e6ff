package lspside_test

import (
	"strings"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testagent"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/lspside"
)

// copilotConfig is the stand-in for GitHub Copilot's language server (testagent's Copilot mode),
// signed in with a token, completing "hel" to "hello".
func copilotConfig(drop int) testagent.Config {
	return testagent.Config{
		Copilot: true, DropChange: drop,
		Getenv: func(k string) string {
			if k == "GH_COPILOT_TOKEN" {
				return "test-token"
			}
			return ""
		},
		Stderr: &strings.Builder{},
		Rules:  []testagent.Rule{{When: "hel", Find: "hel", Replace: "hello"}},
	}
}

const copilotDoc = "file:///work/project/a.go"

// TestCopilotDroppedChangeIsRepaired: Copilot drops a didChange it judges stale, and answers the
// next nes/suggest with "Document version mismatch". The bridge gives it the document again
// (didClose, then didOpen with the editor's text) and asks once more: the user gets the
// suggestion for the text they see, and the resync is counted in the debug log.
func TestCopilotDroppedChangeIsRepaired(t *testing.T) {
	e := newEditor(t, harnessOpts{agentCfg: copilotConfig(1)})
	e.initialize("utf-16")
	e.WaitReady()
	e.Open(copilotDoc, "he\n")
	e.Edit(copilotDoc, 2, 2, "l") // dropped by the agent
	items, err := e.Inline(copilotDoc, fakeeditor.At(0, 3))
	if err != nil || len(items) != 1 || items[0].InsertText != "hello" {
		t.Fatalf("after a dropped change: items %+v, err %v; want the one suggestion \"hello\"", items, err)
	}
	got := methods(e.agent.Received())
	i := indexOfMethod(got, "test/droppedChange")
	if i < 0 {
		t.Fatalf("the stand-in dropped no change: %v", got)
	}
	close, open := indexAfter(got, acp.AgentMethodDocumentDidClose, i), indexAfter(got, acp.AgentMethodDocumentDidOpen, i)
	if close < 0 || open < close {
		t.Fatalf("no didClose then didOpen after the drop: %v", got)
	}
	if text, _ := e.agent.Mirror(copilotDoc); text != "hel\n" {
		t.Errorf("the agent's copy is %q after the resync, want the editor's \"hel\\n\"", text)
	}
	if n := count(e.agent.Received(), acp.AgentMethodNesSuggest); n != 2 {
		t.Errorf("nes/suggest sent %d times, want 2 (the refused one and once more)", n)
	}
	if !strings.Contains(e.logBuf.String(), `"resyncs":1`) {
		t.Errorf("the debug log does not count the resync:\n%s", e.logBuf.String())
	}
}

// TestCopilotOneRepairThenInSync: after the repair, the agent has the editor's text, and what
// the user types next reaches it as changes: no second resync, and the suggestion follows.
func TestCopilotOneRepairThenInSync(t *testing.T) {
	e := newEditor(t, harnessOpts{agentCfg: copilotConfig(1)})
	e.initialize("utf-16")
	e.WaitReady()
	e.Open(copilotDoc, "x\n")
	e.Edit(copilotDoc, 1, 1, "y") // dropped
	if _, err := e.Inline(copilotDoc, fakeeditor.At(0, 2)); err != nil {
		t.Fatal(err)
	}
	e.Edit(copilotDoc, 0, 2, "hel") // "hel\n": taken
	items, err := e.Inline(copilotDoc, fakeeditor.At(0, 3))
	if err != nil || len(items) != 1 || items[0].InsertText != "hello" {
		t.Fatalf("after the repair and a change: items %+v, err %v", items, err)
	}
	if n := count(e.agent.Received(), acp.AgentMethodDocumentDidClose); n != 1 {
		t.Errorf("didClose sent %d times, want 1 (one resync)", n)
	}
	if text, _ := e.agent.Mirror(copilotDoc); text != "hel\n" {
		t.Errorf("the agent's copy is %q, want \"hel\\n\"", text)
	}
}

// TestCopilotIsNotAskedAhead: Copilot's plans count requests, so the bridge does not ask it
// ahead of the editor (only with AskAheadBilled).
func TestCopilotIsNotAskedAhead(t *testing.T) {
	for _, billed := range []bool{false, true} {
		e := newEditor(t, harnessOpts{agentCfg: copilotConfig(0), cfg: lspside.Config{AskAhead: 10 * time.Millisecond, AskAheadBilled: billed}})
		e.initialize("utf-16")
		e.WaitReady()
		e.Open(copilotDoc, "x\n")
		if _, err := e.Inline(copilotDoc, fakeeditor.At(0, 0)); err != nil {
			t.Fatal(err)
		}
		base := count(e.agent.Received(), acp.AgentMethodNesSuggest)
		e.Edit(copilotDoc, 1, 1, "y")
		time.Sleep(150 * time.Millisecond)
		if _, err := e.InlineTriggered(copilotDoc, fakeeditor.At(0, 2), 1); err != nil {
			t.Fatal(err)
		}
		n := count(e.agent.Received(), acp.AgentMethodNesSuggest) - base
		if want := map[bool]int{false: 1, true: 2}[billed]; n != want {
			t.Errorf("AskAheadBilled %v: %d nes/suggest after the change, want %d", billed, n, want)
		}
	}
}

func indexOfMethod(ms []string, m string) int { return indexAfter(ms, m, -1) }

func indexAfter(ms []string, m string, after int) int {
	for i := after + 1; i < len(ms); i++ {
		if ms[i] == m {
			return i
		}
	}
	return -1
}
