package lspside_test

import (
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"

	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testagent"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testutil"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/lspside"
)

// watchedEditor is an editor whose bridge the test can look into.
func watchedEditor(t *testing.T, o harnessOpts) (*editor, func() lspside.Held) {
	var mu sync.Mutex
	var srv *lspside.Server
	o.cfg = lspside.WatchServer(o.cfg, func(s *lspside.Server) {
		mu.Lock()
		srv = s
		mu.Unlock()
	})
	e := newEditor(t, o)
	return e, func() lspside.Held {
		mu.Lock()
		defer mu.Unlock()
		return srv.Held()
	}
}

// TestStateBoundedOverManyDocuments: a long session opens, works in and closes hundreds of
// documents (focus, typing, diagnostics, inline completions, two requests at once, code actions,
// a cancellation). What the bridge keeps per document or per request (the mirror, cursors, requests
// in flight, live suggestions) follows the documents open now, and the recency list its bound.
func TestStateBoundedOverManyDocuments(t *testing.T) {
	docs := 300
	if testing.Short() {
		docs = 60
	}
	e, held := watchedEditor(t, harnessOpts{
		quietLog: true,
		agentCfg: testagent.Config{Encoding: "utf-16", DidFocus: true, ContextDiagnostics: true, Rules: []testagent.Rule{{When: "hel", Find: "hel", Replace: "hello"}}},
		cfg:      lspside.Config{CoalesceDelay: time.Millisecond},
	})
	e.initialize("utf-16")
	e.WaitReady()
	const keepOpen = 20
	text := "package p // é 𐐀\nhel\n"
	shown := 0
	for i := range docs {
		u := fmt.Sprintf("file:///work/project/d%03d.go", i)
		e.Open(u, text)
		e.Notify("acp-lsp-bridge/didFocus", map[string]any{"textDocument": map[string]any{"uri": u}, "position": fakeeditor.At(1, 3)})
		e.Notify("acp-lsp-bridge/diagnostics", map[string]any{"textDocument": map[string]any{"uri": u}, "diagnostics": []any{
			map[string]any{"range": map[string]any{"start": fakeeditor.At(1, 0), "end": fakeeditor.At(1, 3)}, "severity": 1, "message": "undefined: hel"},
		}})
		e.ChangeAt(u, 2, fakeeditor.Replace(fakeeditor.At(1, 3), fakeeditor.At(1, 3), "l\n"))
		e.ChangeAt(u, 3, fakeeditor.Replace(fakeeditor.At(1, 3), fakeeditor.At(2, 0), ""))
		if i%10 == 0 {
			// Two requests at once: the second supersedes the first.
			var wg sync.WaitGroup
			for range 2 {
				wg.Go(func() { _, _ = e.Inline(u, fakeeditor.At(1, 3)) })
			}
			wg.Wait()
		}
		items, err := e.Inline(u, fakeeditor.At(1, 3))
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		shown += len(items)
		var actions []any
		e.MustCall("textDocument/codeAction", map[string]any{
			"textDocument": map[string]any{"uri": u},
			"range":        map[string]any{"start": fakeeditor.At(1, 0), "end": fakeeditor.At(1, 0)},
			"context":      map[string]any{"diagnostics": []any{}},
		}, &actions)
		e.Notify("$/cancelRequest", map[string]any{"id": 1_000_000 + i}) // a request long answered
		if i >= keepOpen {
			e.Notify("textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": fmt.Sprintf("file:///work/project/d%03d.go", i-keepOpen)}})
		}
	}
	if shown < docs {
		t.Errorf("%d suggestions shown in %d documents", shown, docs)
	}
	// A request answered means every notification before it was handled.
	_, _ = e.Inline(fmt.Sprintf("file:///work/project/d%03d.go", docs-1), fakeeditor.At(1, 3))
	h := held()
	t.Logf("after %d documents, %d open: %+v", docs, keepOpen, h)
	if h.Open != keepOpen || h.Cursors > keepOpen || h.Live > keepOpen || h.Inflight != 0 || h.Suggesting != 0 || h.Recent > 100 {
		t.Errorf("with %d documents open the bridge holds %+v", keepOpen, h)
	}
	for i := docs - keepOpen; i < docs; i++ {
		e.Notify("textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": fmt.Sprintf("file:///work/project/d%03d.go", i)}})
	}
	e.Open("file:///work/project/last.go", text)
	_, _ = e.Inline("file:///work/project/last.go", fakeeditor.At(1, 3))
	e.Notify("textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": "file:///work/project/last.go"}})
	var actions []any
	_ = e.Call("textDocument/codeAction", map[string]any{"textDocument": map[string]any{"uri": "file:///work/project/last.go"}}, &actions) // document not open: answered, in order
	if h := held(); h.Open != 0 || h.Cursors != 0 || h.Live != 0 || h.Inflight != 0 || h.Suggesting != 0 || h.ActiveIsSet || h.Recent > 100 {
		t.Errorf("with every document closed the bridge holds %+v", h)
	}
}

// TestLiveSuggestionsHoldNoTextCopies: edit suggestions with a cursorPosition (where the cursor
// goes after accepting) keep that position, not the text after the edit: twenty of them live on a
// 1 MiB document cost nothing like twenty copies of it.
func TestLiveSuggestionsHoldNoTextCopies(t *testing.T) {
	const n = 20
	e := newEditor(t, harnessOpts{quietLog: true, agentCfg: testagent.Config{Encoding: "utf-8",
		Suggest: func(_ context.Context, req acp.UnstableSuggestNesRequest, _ string) (any, *acp.RequestError) {
			var sugs []any
			for k := range n {
				line := 10 + 20*k
				sugs = append(sugs, map[string]any{
					"kind": "edit", "id": fmt.Sprintf("s%d", k), "uri": req.Uri,
					"edits": []any{map[string]any{
						"range":   map[string]any{"start": map[string]any{"line": line, "character": 0}, "end": map[string]any{"line": line, "character": 0}},
						"newText": "// é\n",
					}},
					"cursorPosition": map[string]any{"line": line + 1, "character": 0},
				})
			}
			return map[string]any{"suggestions": sugs}, nil
		}}})
	e.initialize("utf-16")
	e.WaitReady()
	u := "file:///work/project/big.go"
	text := testutil.SourceLike(1 << 20)
	e.Open(u, text)
	e.waitMirror(u, text)
	heap := testutil.LiveHeap
	before := heap()
	var actions []struct {
		Title string `json:"title"`
	}
	e.MustCall("textDocument/codeAction", map[string]any{
		"textDocument": map[string]any{"uri": u},
		"range":        map[string]any{"start": fakeeditor.At(10, 0), "end": fakeeditor.At(10+20*n, 0)},
		"context":      map[string]any{"diagnostics": []any{}},
	}, &actions)
	after := heap()
	if len(actions) != n {
		t.Fatalf("%d code actions, want %d live suggestions", len(actions), n)
	}
	t.Logf("heap %d bytes before, %d with %d live suggestions on a document of %d bytes", before, after, n, len(text))
	if after > before+uint64(4*len(text)) {
		t.Errorf("%d live suggestions took %d bytes of heap: they keep copies of the %d-byte document", n, after-before, len(text))
	}
}
