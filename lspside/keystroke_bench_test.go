package lspside_test

import (
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"

	"context"
	"strings"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testagent"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testutil"
)

// BenchmarkKeystroke measures one keystroke through the bridge: from the editor's one-character
// didChange to the agent (incremental sync, utf-16) having the change applied, on a 100 KB and a
// 10 MB document, in the middle of each, while the user types through a suggestion that is shown
// (so the tracker follows the keystroke too). Sizes are decimal (10 MB is 10,000,000 bytes). The budget is that 10 MB costs at most 3 times 100 KB:
// the bridge's work is in proportion to the edit, not the document. It reports the ratio as
// "10MB/100KB".
func BenchmarkKeystroke(b *testing.B) {
	perOp := map[string]float64{}
	for _, size := range []struct {
		name  string
		bytes int
	}{{"100KB", 100_000}, {"10MB", 10_000_000}} {
		b.Run(size.name, func(b *testing.B) {
			perOp[size.name] = keystrokes(b, size.bytes)
			// Reported here: a parent benchmark's own metrics are not printed.
			if small := perOp["100KB"]; size.name == "10MB" && small > 0 {
				b.ReportMetric(perOp["10MB"]/small, "10MB/100KB")
			}
		})
	}
}

// keystrokes types into a document of size bytes and returns the time per keystroke.
func keystrokes(b *testing.B, size int) float64 {
	const uri = "file:///work/project/big.go"
	text := plainSource(size)
	// The agent suggests inserting "return nil" at the cursor; typing "r" and deleting it again
	// keeps the document reading as a prefix of that suggestion, so it stays live.
	suggest := func(_ context.Context, req acp.UnstableSuggestNesRequest, _ string) (any, *acp.RequestError) {
		p := map[string]any{"line": req.Position.Line, "character": req.Position.Character}
		return map[string]any{"suggestions": []any{map[string]any{
			"kind": "edit", "id": "k1", "uri": req.Uri,
			"edits": []any{map[string]any{"range": map[string]any{"start": p, "end": p}, "newText": "return nil"}},
		}}}, nil
	}
	e := newEditor(b, harnessOpts{quietLog: true, agentCfg: testagent.Config{Encoding: "utf-16", Sync: "incremental", Suggest: suggest}})
	e.initialize("utf-16")
	e.WaitReady()
	e.Open(uri, text)
	agent := e.theAgent()
	waitVersion := func(v int) {
		deadline := time.After(30 * time.Second)
		for {
			ch := agent.Changed()
			if got, _ := agent.Version(uri); got >= v {
				return
			}
			select {
			case <-ch:
			case <-deadline:
				b.Fatalf("the agent never got version %d", v)
			}
		}
	}
	waitVersion(1)
	at := fakeeditor.At(countLines(text)/2, 0)
	if items, err := e.Inline(uri, at); err != nil || len(items) != 1 {
		b.Fatalf("inline completion: %v, %v", items, err)
	}
	version := 1
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		version++
		if i%2 == 0 {
			e.ChangeAt(uri, version, fakeeditor.Replace(at, at, "r"))
		} else {
			e.ChangeAt(uri, version, fakeeditor.Replace(at, fakeeditor.At(at.Line, at.Character+1), ""))
		}
		waitVersion(version)
	}
	b.StopTimer()
	for _, m := range agent.Received() {
		if m.Method == "nes/reject" || m.Method == "nes/accept" {
			b.Fatalf("the suggestion being typed through ended: %s %s", m.Method, m.Params)
		}
	}
	return float64(b.Elapsed().Nanoseconds()) / float64(b.N)
}

// plainSource returns size bytes of source-like text that JSON carries almost unescaped (spaces
// for tabs, no quotes): a Go ACP SDK agent reads messages of at most 10 MiB, so the 10 MB document
// must reach it in under that.
func plainSource(size int) string {
	text := strings.NewReplacer("\t", "    ", `"`, "`").Replace(testutil.SourceLike(size))
	return text[:strings.LastIndexByte(text[:size], '\n')+1]
}

func countLines(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			n++
		}
	}
	return n
}
