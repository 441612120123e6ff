package lspside_test

import (
	"context"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testagent"
)

// heldAgent answers each nes/suggest with a fix for the first diagnostic of its context ("fix-"
// and the diagnostic's message as the suggestion's id), holding the answer about held until
// release is closed (or the request is cancelled).
type heldAgent struct {
	held    string
	calls   chan string // the diagnostic message of each nes/suggest, as it arrives
	release chan struct{}
}

func newHeldAgent(held string) *heldAgent {
	return &heldAgent{held: held, calls: make(chan string, 10), release: make(chan struct{})}
}

func (h *heldAgent) suggest(ctx context.Context, req acp.UnstableSuggestNesRequest, _ string) (any, *acp.RequestError) {
	msg := ""
	if req.Context != nil && len(req.Context.Diagnostics) > 0 {
		msg = req.Context.Diagnostics[0].Message
	}
	h.calls <- msg
	if msg == h.held {
		select {
		case <-h.release:
		case <-ctx.Done():
			return nil, acp.NewRequestCancelled(nil)
		}
	}
	return map[string]any{"suggestions": []any{editSug("fix-"+msg, req.Uri, 0, 0, 0, 1, "z")}}, nil
}

// next is the diagnostic of the next nes/suggest, or false when none comes within d.
func (h *heldAgent) next(d time.Duration) (string, bool) {
	select {
	case m := <-h.calls:
		return m, true
	case <-time.After(d):
		return "", false
	}
}

// offered is the ids of the suggestions a menu offers.
func offered(actions []fakeeditor.CodeAction) []string {
	var ids []string
	for _, a := range actions {
		if a.Command != nil && len(a.Command.Arguments) > 0 {
			id, _ := a.Command.Arguments[0].(string)
			ids = append(ids, id)
		}
	}
	return ids
}

func diagnosticAt(char int, message string) map[string]any {
	return map[string]any{
		"range": map[string]any{"start": fakeeditor.At(0, char), "end": fakeeditor.At(0, char+1)}, "severity": 1, "message": message,
	}
}

const heldURI = "file:///work/project/d.go"

// heldMenu opens heldURI in an editor whose agent is h and asks for code actions on the
// diagnostic h holds; it returns once that menu's nes/suggest is with the agent, and the channel
// that gets the menu.
func heldMenu(t *testing.T, h *heldAgent) (*editor, chan []fakeeditor.CodeAction) {
	t.Helper()
	e := newEditor(t, harnessOpts{agentCfg: testagent.Config{Encoding: "utf-16", ContextDiagnostics: true, Suggest: h.suggest}})
	e.initialize("utf-16")
	e.WaitReady()
	e.Open(heldURI, "x := y + z\n")
	menu := make(chan []fakeeditor.CodeAction, 1)
	go func() { a, _ := e.CodeActions(heldURI, lineStart(0), diagnosticAt(5, h.held)); menu <- a }()
	if m, ok := h.next(10 * time.Second); !ok || m != h.held {
		t.Fatalf("the first menu's nes/suggest: diagnostic %q (asked %v)", m, ok)
	}
	return e, menu
}

// TestCodeActionOnAnotherDiagnosticAsksAnew: a code action request that comes while one for the
// same version of the document is with the agent joins it only when it carries the same
// diagnostics. With others (the menu opened on another diagnostic) it asks anew, with its own
// diagnostics in the context, and its menu offers the fix for them; the newer request supersedes
// the older, as a newer request for a document does.
func TestCodeActionOnAnotherDiagnosticAsksAnew(t *testing.T) {
	h := newHeldAgent("undefined: y")
	e, first := heldMenu(t, h)
	second := make(chan []fakeeditor.CodeAction, 1)
	go func() { a, _ := e.CodeActions(heldURI, lineStart(0), diagnosticAt(9, "undefined: z")); second <- a }()
	if m, ok := h.next(2 * time.Second); !ok {
		t.Error("the menu on another diagnostic did not ask the agent: it joined the request in flight")
	} else if m != "undefined: z" {
		t.Errorf("the menu on another diagnostic asked with %q", m)
	}
	close(h.release)
	if got := offered(<-second); len(got) != 1 || got[0] != "fix-undefined: z" {
		t.Errorf("the menu on the second diagnostic offers %q, want its fix", got)
	}
	<-first // superseded: whatever it got
}

// TestCodeActionOnTheSameDiagnosticsJoins: a code action request with the same diagnostics as the
// one in flight for the same version waits for it: the agent is asked once, and both menus offer
// its answer.
func TestCodeActionOnTheSameDiagnosticsJoins(t *testing.T) {
	h := newHeldAgent("undefined: y")
	e, first := heldMenu(t, h)
	second := make(chan []fakeeditor.CodeAction, 1)
	go func() { a, _ := e.CodeActions(heldURI, lineStart(0), diagnosticAt(5, "undefined: y")); second <- a }()
	if m, ok := h.next(300 * time.Millisecond); ok {
		t.Errorf("the menu on the same diagnostic asked the agent again (%q)", m)
	}
	close(h.release)
	for i, menu := range []chan []fakeeditor.CodeAction{first, second} {
		if got := offered(<-menu); len(got) != 1 || got[0] != "fix-undefined: y" {
			t.Errorf("menu %d offers %q, want the fix for the diagnostic", i+1, got)
		}
	}
	n := 0
	for _, m := range e.agent.Received() {
		if m.Method == acp.AgentMethodNesSuggest {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the agent was asked %d times, want once", n)
	}
}

// TestCodeActionOnANewDiagnosticAfterTheAnswerAsksAnew: once the answer to a menu is in, a menu
// opened at the same text on another diagnostic is not offered that answer, asked about the first
// one: it asks with its own and offers its fix. A menu on the first diagnostic again asks nothing.
func TestCodeActionOnANewDiagnosticAfterTheAnswerAsksAnew(t *testing.T) {
	h := newHeldAgent("")
	e := newEditor(t, harnessOpts{agentCfg: testagent.Config{Encoding: "utf-16", ContextDiagnostics: true, Suggest: h.suggest}})
	e.initialize("utf-16")
	e.WaitReady()
	e.Open(heldURI, "x := y + z\n")
	if a, err := e.CodeActions(heldURI, lineStart(0), diagnosticAt(5, "undefined: y")); err != nil || len(offered(a)) != 1 {
		t.Fatalf("the first menu: %v %v", offered(a), err)
	}
	h.next(time.Second)
	a, err := e.CodeActions(heldURI, lineStart(0), diagnosticAt(9, "undefined: z"))
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := h.next(time.Second); !ok || m != "undefined: z" {
		t.Errorf("the menu on another diagnostic asked %v with %q, want asked with it", ok, m)
	}
	if got := offered(a); len(got) != 1 || got[0] != "fix-undefined: z" {
		t.Errorf("the menu on the second diagnostic offers %q, want its fix", got)
	}
	if _, err := e.CodeActions(heldURI, lineStart(0), diagnosticAt(9, "undefined: z")); err != nil {
		t.Fatal(err)
	}
	if m, ok := h.next(300 * time.Millisecond); ok {
		t.Errorf("a menu on the diagnostic just answered asked again (%q)", m)
	}
}
