package lspside_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/acpside"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testagent"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent"
)

// TestBackendReasonsAgree: the reasons the bridge reads are the ones its agent kit writes.
func TestBackendReasonsAgree(t *testing.T) {
	for bridge, kit := range map[string]string{
		acpside.ReasonCredentialsRefused: nesagent.ReasonCredentialsRefused,
		acpside.ReasonRedirectRefused:    nesagent.ReasonRedirectRefused,
		acpside.ReasonRateLimited:        nesagent.ReasonRateLimited,
		acpside.ReasonBackendTimeout:     nesagent.ReasonBackendTimeout,
		acpside.ReasonBackendError:       nesagent.ReasonBackendError,
	} {
		if bridge != kit {
			t.Errorf("the bridge reads %q where the kit writes %q", bridge, kit)
		}
	}
}

// TestAnyAgentCanSayItsServiceRefusedIt: an agent that is not the bridge's own answers with
// data.reason credentials_refused and words of any length and content: the status is failed with
// its words cleaned and bounded, the user is told once, automatic requests no longer reach the
// agent while explicit ones do and report the same, and the first answer makes it ready again.
func TestAnyAgentCanSayItsServiceRefusedIt(t *testing.T) {
	var refuse atomic.Bool
	refuse.Store(true)
	a := &appendAtCursor{}
	words := "the service refused the token in SVC_TOKEN\x1b[31m" + strings.Repeat(" and more", 1000)
	suggest := func(ctx context.Context, req acp.UnstableSuggestNesRequest, doc string) (any, *acp.RequestError) {
		if refuse.Load() {
			return nil, acp.NewInternalError(map[string]any{"error": words, "reason": "credentials_refused"})
		}
		return a.suggest(ctx, req, doc)
	}
	e := newEditor(t, harnessOpts{agentCfg: testagent.Config{Encoding: "utf-16", Suggest: suggest}})
	e.InitializeWith(fakeeditor.InitParams{Root: e.root, Encodings: []string{"utf-16"}})
	e.WaitReady()
	const uri = "file:///work/project/a.go"
	e.Open(uri, "x := f\n")
	for range 2 {
		_, err := e.InlineTriggered(uri, fakeeditor.At(0, 6), 1)
		if err == nil || !strings.Contains(err.Error(), "SVC_TOKEN") || strings.Contains(err.Error(), "\x1b") || len(err.Error()) > 700 {
			t.Fatalf("an explicit request: error %.200q (%d bytes), want the agent's words cleaned and bounded", err, len(err.Error()))
		}
	}
	e.Await(fakeeditor.StatusIs("failed", ""))
	rec := e.Record()
	if st := rec.Statuses[len(rec.Statuses)-1]; !strings.Contains(st.Message, "SVC_TOKEN") || len(st.Message) > 700 {
		t.Errorf("the failed status %.200q (%d bytes)", st.Message, len(st.Message))
	}
	asked, _ := suggestsReceived(e)
	for range 3 {
		if items, err := e.Inline(uri, fakeeditor.At(0, 6)); err != nil || len(items) != 0 {
			t.Errorf("an automatic request while refused: %v, %v", items, err)
		}
	}
	if n, _ := suggestsReceived(e); n != asked {
		t.Errorf("automatic requests reached the agent while its service refused it: %d, %d before", n, asked)
	}
	told := 0
	for _, m := range e.Record().Messages {
		if strings.Contains(m, "SVC_TOKEN") {
			told++
		}
	}
	if told != 1 {
		t.Errorf("told %d times, want once", told)
	}
	refuse.Store(false)
	if items, err := e.InlineTriggered(uri, fakeeditor.At(0, 6), 1); err != nil || len(items) != 1 {
		t.Fatalf("once the service takes it: %v, %v", items, err)
	}
	e.Await(fakeeditor.StatusIs("ready", ""))
	if items, err := e.Inline(uri, fakeeditor.At(0, 6)); err != nil || len(items) != 1 {
		t.Errorf("an automatic request once ready again: %v, %v", items, err)
	}
}
