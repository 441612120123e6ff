package lspside_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testagent"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/lspside"
)

// TestSuggestTimeoutFromInitializationOptions: initializationOptions.suggestTimeout bounds the
// wait for an agent that answers in 400 ms, unless the flag (Config.SuggestTimeout) says
// otherwise; a value that cannot be read is told to the user and the default is used.
func TestSuggestTimeoutFromInitializationOptions(t *testing.T) {
	for _, tc := range []struct {
		option  any
		flag    time.Duration
		shown   bool
		warning string
	}{
		{100, 0, false, ""},
		{"100ms", 0, false, ""},
		{100, 5 * time.Second, true, ""}, // the flag wins
		{2000, 0, true, ""},
		{"later", 0, true, `"later" is neither milliseconds`},
		{5, 0, true, "not between 100ms and 10m0s"},
	} {
		t.Run(fmt.Sprintf("%v/%v", tc.option, tc.flag), func(t *testing.T) {
			a := &appendAtCursor{}
			slow := func(ctx context.Context, req acp.UnstableSuggestNesRequest, doc string) (any, *acp.RequestError) {
				select {
				case <-time.After(400 * time.Millisecond):
				case <-ctx.Done():
				}
				return a.suggest(ctx, req, doc)
			}
			e := newEditor(t, harnessOpts{agentCfg: testagent.Config{Encoding: "utf-16", Suggest: slow}, cfg: lspside.Config{SuggestTimeout: tc.flag}})
			e.InitializeWith(fakeeditor.InitParams{Root: e.root, Encodings: []string{"utf-16"}, Options: map[string]any{"suggestTimeout": tc.option}})
			if tc.warning != "" {
				e.WaitMessage("initializationOptions.suggestTimeout: ")
				e.WaitMessage(tc.warning)
			}
			e.WaitReady()
			const uri = "file:///work/project/a.go"
			e.Open(uri, "x := f\n")
			items, err := e.InlineTriggered(uri, fakeeditor.At(0, 6), 1)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(items) == 1; got != tc.shown {
				t.Errorf("suggestTimeout %v, flag %v: %d items from an agent answering in 400 ms, want shown=%v", tc.option, tc.flag, len(items), tc.shown)
			}
		})
	}
}

// TestStatsRequest: acp-lsp-bridge/stats answers the bridge's runtime figures, which grow with
// its work.
func TestStatsRequest(t *testing.T) {
	e := newEditor(t, harnessOpts{agentCfg: testagent.Config{Encoding: "utf-16"}})
	e.InitializeWith(fakeeditor.InitParams{Root: e.root, Encodings: []string{"utf-16"}})
	var before, after map[string]uint64
	if err := e.Call(lspside.RequestStats, nil, &before); err != nil {
		t.Fatal(err)
	}
	e.Open("file:///work/project/a.go", strings.Repeat("x := f\n", 10000))
	if err := e.Call(lspside.RequestStats, nil, &after); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"allocBytes", "allocObjects", "gcCycles", "goroutines"} {
		if _, ok := after[k]; !ok {
			t.Errorf("no %s in %v", k, after)
		}
	}
	if after["allocBytes"] < before["allocBytes"]+70000 || after["goroutines"] == 0 {
		t.Errorf("stats before %v, after opening a 70 KB document %v", before, after)
	}
}
