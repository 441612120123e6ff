package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestNeovimFocusAndDiagnostics installs the plugin in Neovim 0.12 as a user would (vim.pack, then
// setup() naming the test agent) and checks what the agent receives: a document/didFocus on
// entering each buffer, with the visible lines, and the diagnostics Neovim shows, converted from
// Neovim's byte columns to the agent's UTF-16, in the nes/suggest context.
func TestNeovimFocusAndDiagnostics(t *testing.T) {
	_, work := runNeovimPlugin(t, "plugin_focus.lua", "DONE")

	msgs := readAgentLog(t, filepath.Join(work, "agent.log"))
	focused := map[string]map[string]any{}
	var suggest map[string]any
	for _, m := range msgs {
		p, _ := m["params"].(map[string]any)
		switch m["method"] {
		case "document/didFocus":
			focused[filepath.Base(p["uri"].(string))] = p
		case "nes/suggest":
			suggest = p
		}
	}
	for _, name := range []string{"a.go", "b.go"} {
		p := focused[name]
		if p == nil {
			t.Fatalf("no document/didFocus for %s; the agent received %d messages", name, len(msgs))
		}
		vr, _ := json.Marshal(p["visibleRange"])
		if !strings.Contains(string(vr), `"start":{"character":0,"line":0}`) || !strings.Contains(string(vr), `"end":{"character":`) {
			t.Errorf("%s: visibleRange %s, want the window's lines from the first", name, vr)
		}
	}
	if suggest == nil {
		t.Fatal("no nes/suggest reached the agent")
	}
	c, _ := json.Marshal(suggest["context"])
	want := `"diagnostics":[{"message":"undefined: y","range":{"end":{"character":15,"line":1},"start":{"character":14,"line":1}},"severity":"error"`
	if !strings.Contains(string(c), want) {
		t.Errorf("nes/suggest context %s\nwant it to contain %s", c, want)
	}
	if !strings.Contains(string(c), `"openFiles":[`) || !strings.Contains(string(c), "/a.go") {
		t.Errorf("nes/suggest context %s: want openFiles with a.go and b.go", c)
	}
}
