package lspside_test

import (
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"

	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testagent"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/lspside"
)

// A document too large for the agent's messages is never sent to it: the user is told once, its
// requests answer empty without asking the agent, its didClose is not forwarded, and other
// documents work as usual. Once edited small enough, the agent gets it with its current text.
func TestDocumentTooLargeForTheAgent(t *testing.T) {
	for _, sync := range []string{"incremental", "full"} {
		t.Run(sync, func(t *testing.T) {
			e := newEditor(t, harnessOpts{
				agentCfg: testagent.Config{Encoding: "utf-16", Sync: sync, DidFocus: true, Rules: []testagent.Rule{{When: "hel", Find: "hel", Replace: "hello"}}},
				cfg:      lspside.Config{MaxMessageBytes: 64 << 10},
			})
			e.initialize("utf-16")
			e.WaitReady()
			big := "file:///work/project/big.log"
			huge := strings.Repeat("hel\n", 20<<10) // 80 KiB
			e.Open(big, huge)
			// Fits by its length, not once written as JSON: every "<" takes six bytes.
			escaped := "file:///work/project/markup.html"
			e.Open(escaped, "hel\n"+strings.Repeat("<", 30<<10))
			small := "file:///work/project/small.go"
			e.Open(small, "hel\n")
			e.waitMirror(small, "hel\n")
			e.Await(fakeeditor.LoggedMessage(big + " (0.1 MB) is too large to send to the agent"))
			e.Await(fakeeditor.LoggedMessage(escaped + " (0.0 MB) is too large"))

			for _, u := range []string{big, escaped} {
				if items, err := e.Inline(u, fakeeditor.At(0, 3)); err != nil || len(items) != 0 {
					t.Errorf("%s: items %v, err %v; want an empty answer", u, items, err)
				}
				e.Notify("acp-lsp-bridge/didFocus", map[string]any{"textDocument": map[string]any{"uri": u}, "position": fakeeditor.At(0, 3)})
				e.Notify("textDocument/didSave", map[string]any{"textDocument": map[string]any{"uri": u}})
			}
			if items, err := e.Inline(small, fakeeditor.At(0, 3)); err != nil || len(items) != 1 || items[0].InsertText != "hello" {
				t.Fatalf("small document: items %v, err %v; want hello", items, err)
			}
			e.Notify("textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": escaped}})

			// Cut the large one down to a few lines: the agent gets it, with its current text.
			e.ChangeAt(big, 2, fakeeditor.Replace(fakeeditor.At(3, 0), fakeeditor.At(20<<10, 0), ""))
			e.waitMirror(big, "hel\nhel\nhel\n")
			if items, err := e.Inline(big, fakeeditor.At(0, 3)); err != nil || len(items) != 1 {
				t.Fatalf("the document made small: items %v, err %v; want the suggestion", items, err)
			}
			for _, m := range e.theAgent().Received() {
				if strings.Contains(string(m.Params), escaped) {
					t.Errorf("the agent got %s for the document it cannot read: %.200s", m.Method, m.Params)
				}
				if strings.Contains(string(m.Params), big) && m.Method != "document/didOpen" && m.Method != "nes/suggest" && m.Method != "document/didFocus" && m.Method != "nes/reject" {
					t.Errorf("the agent got %s for the document before it had it", m.Method)
				}
			}
			if n := strings.Count(strings.Join(e.Record().Logs, "\n"), "too large"); n != 2 {
				t.Errorf("%d messages about documents too large, want one for each of the two", n)
			}

			// The small document grows past the limit. An incremental agent keeps it (each change
			// is small); a full-sync agent would get the whole text with every change, so it is
			// told to forget the document instead.
			e.ChangeAt(small, 2, fakeeditor.Replace(fakeeditor.At(1, 0), fakeeditor.At(1, 0), huge))
			e.ChangeAt(small, 3, fakeeditor.Replace(fakeeditor.At(0, 3), fakeeditor.At(0, 3), ""))
			items, err := e.Inline(small, fakeeditor.At(0, 3))
			if err != nil {
				t.Fatal(err)
			}
			closedAt := func(m testagent.Message) bool {
				return m.Method == "document/didClose" && strings.Contains(string(m.Params), small)
			}
			if sync == "full" {
				// The bridge's messages reach the agent through its queue: nothing answered to the
				// editor waits for this one.
				e.waitAgent("document/didClose of the grown document", closedAt)
			}
			closed := false
			for _, m := range e.theAgent().Received() {
				closed = closed || closedAt(m)
			}
			if sync == "incremental" && (closed || len(items) != 1) {
				t.Errorf("incremental agent: didClose %v, items %v; want the document kept and the suggestion", closed, items)
			}
			if sync == "full" && (!closed || len(items) != 0) {
				t.Errorf("full-sync agent: didClose %v, items %v; want the document closed at the agent and no items", closed, items)
			}
		})
	}
}

// The size of a text written as a JSON string is counted as encoding/json writes it.
func TestJSONStringBytes(t *testing.T) {
	pieces := []string{"a", "\"", "\\", "\n", "\r", "\t", "\x00", "\x1f", "<", ">", "&", "é", "😀", "\u2028", "\u2029", "\xff", "\xe6\x97", "\b", "\f", "\x7f"}
	rng := rand.New(rand.NewPCG(3, 5))
	for range 2000 {
		var b strings.Builder
		for range rng.IntN(12) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		s := b.String()
		want, _ := json.Marshal(s)
		if got := lspside.JSONStringBytes(s); got != len(want) {
			t.Fatalf("JSONStringBytes(%q) = %d; encoding/json writes %d bytes: %s", s, got, len(want), want)
		}
	}
}
