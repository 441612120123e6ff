package lspside_test

import (
	"context"
	"strings"
	"testing"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testagent"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/lspside"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/workspace"
)

// lastStatus is the latest acp-lsp-bridge/status the editor got.
func lastStatus(e *editor) fakeeditor.Status {
	st := e.Record().Statuses
	if len(st) == 0 {
		return fakeeditor.Status{}
	}
	return st[len(st)-1]
}

// TestStatusFollowsTheBridge: the editor hears acp-lsp-bridge/status whenever what the user
// should see changes: ready once the agent is; asking while a request is slow, ready again once it
// is answered; off for the document whose suggestions while typing are off; excluded in a file
// kept from the agent; starting, then ready, when the agent is restarted. The same state is not
// sent twice in a row.
func TestStatusFollowsTheBridge(t *testing.T) {
	ws, _ := beside(t, map[string]string{"ws/main.go": "x := f\n", "ws/.env": "KEY=sk-0\n"})
	root := workspace.Host.FileURI(ws)
	mainURI, envURI := root+"/main.go", root+"/.env"
	release := make(chan struct{})
	slow := func(ctx context.Context, req acp.UnstableSuggestNesRequest, _ string) (any, *acp.RequestError) {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return insertAt("s1", req.Uri, req.Position.Line, req.Position.Character, "()"), nil
	}
	e := newEditor(t, harnessOpts{agentCfg: testagent.Config{Encoding: "utf-16", Suggest: slow}})
	e.root = root
	e.initialize("utf-16")
	e.WaitReady()
	e.Await(fakeeditor.StatusIs(lspside.StatusReady, ""))
	if st := lastStatus(e); !strings.Contains(st.Message, "is ready") || st.Agent == "" {
		t.Errorf("ready status %+v", st)
	}

	e.Open(mainURI, "x := f\n")
	p := e.Start("textDocument/inlineCompletion", fakeeditor.InlineParams(mainURI, fakeeditor.At(0, 6), 2), nil)
	e.Await(fakeeditor.StatusIs(lspside.StatusAsking, mainURI))
	if st := lastStatus(e); !strings.Contains(st.Message, "asking ") {
		t.Errorf("asking status %+v", st)
	}
	close(release)
	if err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	e.Await(fakeeditor.StatusIs(lspside.StatusReady, mainURI))

	e.Execute(switchCmd(lspside.CommandDisable, map[string]any{"uri": mainURI}))
	e.Await(fakeeditor.StatusIs(lspside.StatusOff, mainURI))
	if st := lastStatus(e); !strings.Contains(st.Message, "off for main.go") || !strings.Contains(st.Message, lspside.CommandEnable) {
		t.Errorf("off status %+v", st)
	}
	e.Execute(switchCmd(lspside.CommandEnable, map[string]any{"uri": mainURI}))
	e.Await(fakeeditor.StatusIs(lspside.StatusReady, mainURI))

	// The user enters the .env file: kept from the agent, which the status says, naming the glob.
	e.Open(envURI, "KEY=sk-0\n")
	e.Notify("acp-lsp-bridge/didFocus", map[string]any{"textDocument": map[string]any{"uri": envURI}, "position": fakeeditor.At(0, 0)})
	e.Await(fakeeditor.StatusIs(lspside.StatusExcluded, envURI))
	if st := lastStatus(e); !strings.Contains(st.Message, `".env"`) || strings.Contains(st.Message, "sk-0") {
		t.Errorf("excluded status %+v", st)
	}
	e.Notify("acp-lsp-bridge/didFocus", map[string]any{"textDocument": map[string]any{"uri": mainURI}, "position": fakeeditor.At(0, 0)})
	e.Await(fakeeditor.StatusIs(lspside.StatusReady, mainURI))

	// A restart: starting, then ready again.
	n := len(e.Record().Statuses)
	e.Execute(fakeeditor.Command{Command: lspside.CommandRestart})
	e.Await(fakeeditor.Expectation{Description: "starting, then ready, after the restart", Met: func(r *fakeeditor.Record) bool {
		seen := ""
		for _, st := range r.Statuses[min(n, len(r.Statuses)):] {
			seen += st.State + " "
		}
		return strings.Contains(seen, "starting ready")
	}})

	statuses := e.Record().Statuses
	for i := 1; i < len(statuses); i++ {
		if statuses[i] == statuses[i-1] {
			t.Errorf("status %d repeats the one before: %+v", i, statuses[i])
		}
	}
}

// TestStatusSaysTheAgentFailed: with no agent to start, the status is failed, with the reason.
func TestStatusSaysTheAgentFailed(t *testing.T) {
	e := newEditor(t, harnessOpts{noAgent: true})
	e.initialize("utf-16")
	e.Await(fakeeditor.StatusIs(lspside.StatusFailed, ""))
	if st := lastStatus(e); st.Message == "" {
		t.Errorf("failed status without a message: %+v", st)
	}
}
