package lspside_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testagent"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/lspside"
)

// TestStatusSlowAfterTimeouts: three suggestions in a row that the agent does not answer within
// the bridge's --suggest-timeout make the status slow, naming the flag to raise; the next answer
// makes it ready again.
func TestStatusSlowAfterTimeouts(t *testing.T) {
	var hang atomic.Bool
	hang.Store(true)
	a := &appendAtCursor{}
	suggest := func(ctx context.Context, req acp.UnstableSuggestNesRequest, doc string) (any, *acp.RequestError) {
		if hang.Load() {
			<-ctx.Done()
			return nil, acp.NewRequestCancelled(nil)
		}
		return a.suggest(ctx, req, doc)
	}
	e := newEditor(t, harnessOpts{agentCfg: testagent.Config{Encoding: "utf-16", Suggest: suggest}, cfg: lspside.Config{SuggestTimeout: 100 * time.Millisecond}})
	e.initialize("utf-16")
	e.WaitReady()
	const uri = "file:///work/project/a.go"
	e.Open(uri, "x := f\n")
	for range 3 {
		if _, err := e.InlineTriggered(uri, fakeeditor.At(0, 6), 1); err != nil {
			t.Fatal(err)
		}
	}
	e.Await(fakeeditor.StatusIs(lspside.StatusSlow, uri))
	if st := lastStatus(e); !strings.Contains(st.Message, "--suggest-timeout") {
		t.Errorf("the slow status does not say what to raise: %+v", st)
	}
	hang.Store(false)
	if _, err := e.InlineTriggered(uri, fakeeditor.At(0, 6), 1); err != nil {
		t.Fatal(err)
	}
	e.Await(fakeeditor.StatusIs(lspside.StatusReady, uri))
}
