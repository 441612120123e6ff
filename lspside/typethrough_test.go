package lspside_test

import (
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"

	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testagent"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/lspside"
)

// typingSession types "return nil" one character at a time after a tab, asking for an inline
// completion after each key, against an agent that always proposes to complete the word before
// the cursor to "return nil". It returns the items shown after each key and the agent's calls.
func typingSession(t testing.TB, cfg lspside.Config) (shown []string, calls int64) {
	const u = "file:///work/project/tt.go"
	var n atomic.Int64
	suggest := func(_ context.Context, req acp.UnstableSuggestNesRequest, doc string) (any, *acp.RequestError) {
		n.Add(1)
		lines := strings.Split(doc, "\n")
		if req.Position.Line >= len(lines) {
			return map[string]any{"suggestions": []any{}}, nil
		}
		before := lines[req.Position.Line][:req.Position.Character] // utf-8 agent, ASCII text
		word := strings.TrimLeft(before, "\t")
		if word == "" || !strings.HasPrefix("return nil", word) || word == "return nil" {
			return map[string]any{"suggestions": []any{}}, nil
		}
		start := map[string]any{"line": req.Position.Line, "character": req.Position.Character - len(word)}
		end := map[string]any{"line": req.Position.Line, "character": req.Position.Character}
		return map[string]any{"suggestions": []any{map[string]any{
			"kind": "edit", "id": fmt.Sprintf("s%d", n.Load()), "uri": u,
			"edits": []any{map[string]any{"range": map[string]any{"start": start, "end": end}, "newText": "return nil"}},
		}}}, nil
	}
	e := newEditor(t, harnessOpts{agentCfg: testagent.Config{Encoding: "utf-8", Suggest: suggest}, cfg: cfg})
	e.initialize("utf-16")
	e.WaitReady()
	e.Open(u, "func f() error {\n\t\n}\n")
	e.waitMirror(u, "func f() error {\n\t\n}\n")
	col := 1
	for i, r := range "return nil" {
		e.ChangeAt(u, 2+i, fakeeditor.Replace(fakeeditor.At(1, col), fakeeditor.At(1, col), string(r)))
		col++
		items, err := e.Inline(u, fakeeditor.At(1, col))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, it := range items {
			got = append(got, it.InsertText+" @"+rangeString(it))
		}
		shown = append(shown, strings.Join(got, "|"))
	}
	return shown, n.Load()
}

func rangeString(it fakeeditor.InlineItem) string {
	if it.Range == nil {
		return "?"
	}
	return fmt.Sprintf("%d:%d-%d:%d", it.Range.Start.Line, it.Range.Start.Character, it.Range.End.Line, it.Range.End.Character)
}

// While the user types the start of a suggestion that is shown, the bridge answers from it: the
// same items the agent would give, with at least 80% fewer agent calls.
func TestTypeThroughAnswersFromTheShownSuggestion(t *testing.T) {
	with, callsWith := typingSession(t, lspside.Config{})
	without, callsWithout := typingSession(t, lspside.Config{NoTypeThrough: true})
	if strings.Join(with, "\n") != strings.Join(without, "\n") {
		t.Errorf("shown with type-through:\n%s\nwithout:\n%s", strings.Join(with, "\n"), strings.Join(without, "\n"))
	}
	if callsWithout != 10 {
		t.Errorf("%d agent calls without type-through, want one per key (10)", callsWithout)
	}
	if callsWith*5 > callsWithout {
		t.Errorf("%d agent calls with type-through against %d without: want at least 80%% fewer", callsWith, callsWithout)
	}
	t.Logf("agent calls: %d with type-through, %d without; shown after each key: %q", callsWith, callsWithout, with)
}

// BenchmarkTypeThrough runs the typing session with and without type-through and reports how many
// fewer agent calls type-through makes, in percent ("fewer-agent-calls-%"; the budget is 80). The
// text shown must be identical.
func BenchmarkTypeThrough(b *testing.B) {
	var with, without int64
	for b.Loop() {
		shownWith, n := typingSession(b, lspside.Config{})
		shownWithout, m := typingSession(b, lspside.Config{NoTypeThrough: true})
		if strings.Join(shownWith, "\n") != strings.Join(shownWithout, "\n") {
			b.Fatalf("shown with type-through:\n%s\nwithout:\n%s", strings.Join(shownWith, "\n"), strings.Join(shownWithout, "\n"))
		}
		with, without = with+n, without+m
	}
	b.ReportMetric(100*(1-float64(with)/float64(without)), "fewer-agent-calls-%")
}
