package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"
)

// TestBinaryModelGateSaysWhy: the model's answer puts back the "o" the user just deleted, which the
// quality gate keeps back as an undo of the last edit. Asked by hand, the user is told in one line
// why nothing shows; while typing, nothing is said. With the agent's --no-gate, the same answer
// is shown.
func TestBinaryModelGateSaysWhy(t *testing.T) {
	undo := func(w http.ResponseWriter, r *http.Request, body []byte) {
		var req struct {
			Messages []struct {
				Content string `json:"content"`
			} `json:"messages"`
		}
		_ = json.Unmarshal(body, &req)
		user := req.Messages[len(req.Messages)-1].Content
		const start, end, cursor = "<|editable_region_start|>\n", "<|editable_region_end|>", "<|user_cursor_is_here|>"
		region, _ := between(user, start, end)
		region = strings.ReplaceAll(region, cursor, "")
		answer := start + strings.Replace(region, "x := f\n", "x := fo\n", 1) + end
		_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": answer}}}})
	}
	session := func(t *testing.T, args ...string) *modelSession {
		m := newFakeModel(t)
		m.set(undo)
		s := startModelSession(t, m.srv.URL, "fake-coder", args...)
		// The user deletes the "o" of "x := fo".
		s.Notify("textDocument/didChange", map[string]any{
			"textDocument":   map[string]any{"uri": modelURI, "version": 2},
			"contentChanges": []any{map[string]any{"range": map[string]any{"start": map[string]any{"line": 2, "character": 6}, "end": map[string]any{"line": 2, "character": 7}}, "text": ""}},
		})
		return s
	}
	t.Run("gate", func(t *testing.T) {
		t.Parallel()
		s := session(t)
		if items, err := s.Inline(modelURI, fakeeditor.At(2, 6)); err != nil || len(items) != 0 {
			t.Fatalf("while typing: items %+v, error %v; want nothing", items, err)
		}
		if n := s.messagesWith("has no suggestion here"); n != 0 {
			t.Errorf("told %d times why while typing: %q", n, s.Record().Messages)
		}
		items, err := s.InlineTriggered(modelURI, fakeeditor.At(2, 6), 1)
		if err != nil || len(items) != 0 {
			t.Fatalf("asked by hand: items %+v, error %v; want nothing", items, err)
		}
		s.Await(fakeeditor.ShownMessage("acp-lsp-bridge: acp-lsp-bridge-model has no suggestion here: it undoes the most recent edit."))
		if !strings.Contains(s.log(), `"rule":"undo"`) {
			t.Errorf("the bridge's log does not name the rule")
		}
	})
	t.Run("no gate", func(t *testing.T) {
		t.Parallel()
		s := session(t, "--no-gate")
		items, err := s.InlineTriggered(modelURI, fakeeditor.At(2, 6), 1)
		if err != nil || len(items) != 1 || items[0].InsertText == "" || !strings.HasSuffix("x := fo", items[0].InsertText) {
			t.Fatalf("with --no-gate: items %+v, error %v; want the answer shown", items, err)
		}
		if n := s.messagesWith("has no suggestion here"); n != 0 {
			t.Errorf("told why nothing shows, with a suggestion shown: %q", s.Record().Messages)
		}
	})
}

// TestNeovimPluginModelGate: in real Neovim with the plugin and the model agent, a model that
// fixes a slip (the "u" of return deleted by accident) and one that finishes a change the user
// began (a list accumulator made a dict, most of the function rewritten) are shown: the first as
// ghost text taken with <Tab>, the second, below the cursor, offered at <M-CR> and applied; the
// gate used to keep both back (testdata/nvim/plugin_model_gate.lua).
func TestNeovimPluginModelGate(t *testing.T) {
	skipOnWindows(t, "Neovim runs on Linux here")
	fix := strings.NewReplacer(
		"\tretrn total", "\treturn total",
		"        totals.append(order.amount)", "        totals[order.id] = order.amount",
		"    seen = []", "    seen = {}",
		"        seen.append(order.id)", "        seen[order.id] = True",
		"    first = totals[0]", "    first = next(iter(totals.values()))",
		"    return totals, seen, first", "    return dict(totals), seen, first",
	)
	m := newFakeModel(t)
	m.set(func(w http.ResponseWriter, r *http.Request, body []byte) {
		var req struct {
			Messages []struct {
				Content string `json:"content"`
			} `json:"messages"`
		}
		if json.Unmarshal(body, &req) != nil || len(req.Messages) == 0 {
			http.NotFound(w, r)
			return
		}
		user := req.Messages[len(req.Messages)-1].Content
		const start, end, cursor = "<|editable_region_start|>\n", "<|editable_region_end|>", "<|user_cursor_is_here|>"
		region, _ := between(user, start, end)
		region = strings.ReplaceAll(region, cursor, "")
		// The fix of the slip, and the end of the change once the user has begun it.
		answer := region
		if strings.Contains(region, "retrn") || strings.Contains(region, "totals = {}") {
			answer = fix.Replace(region)
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": start + answer + end}}}})
	})
	out, _ := runNeovimPlugin(t, "plugin_model_gate.lua", "ALL PASSED", "MODEL_URL="+m.srv.URL)
	wantSteps(t, out, "slip", "refactor")
}
