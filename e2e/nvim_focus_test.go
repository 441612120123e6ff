package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestNeovimFocusAndDiagnostics loads the shipped editors/neovim/acp.lua in Neovim 0.12 as a user
// would (vim.g.acp_agent naming the test agent) and checks what the agent receives: a
// document/didFocus on entering each buffer, with the visible lines, and the diagnostics Neovim
// shows, converted from Neovim's byte columns to the agent's UTF-16, in the nes/suggest context.
func TestNeovimFocusAndDiagnostics(t *testing.T) {
	nvim := os.Getenv("NVIM")
	if nvim == "" {
		skipWithoutPeer(t, `NVIM is not set; run eval "$(bash ../shared/tools/install-test-peers.sh)"`)
	}
	root := moduleRoot(t)
	bridge, agent := binaries(t)
	dir := t.TempDir()
	work := filepath.Join(dir, "work")
	xdg := filepath.Join(dir, "xdg")
	for _, d := range []string{work, xdg} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, nvim, "--headless", "--clean", "-c", "lua dofile(vim.env.NVIM_TEST_SCRIPT)")
	cmd.Dir = work
	cmd.Env = append(os.Environ(),
		"NVIM_TEST_SCRIPT="+filepath.Join(root, "testdata", "nvim", "focus.lua"),
		"ACP_CONFIG="+filepath.Join(root, "editors", "neovim", "acp.lua"),
		"ACP_LSP_BRIDGE="+bridge,
		"ACP_TEST_AGENT="+agent,
		"NVIM_TEST_DIR="+work,
		"XDG_CONFIG_HOME="+filepath.Join(xdg, "config"),
		"XDG_DATA_HOME="+filepath.Join(xdg, "data"),
		"XDG_STATE_HOME="+filepath.Join(xdg, "state"),
		"XDG_CACHE_HOME="+filepath.Join(xdg, "cache"),
	)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "DONE") {
		log, _ := os.ReadFile(filepath.Join(xdg, "state", "nvim", "acp-lsp-bridge.log"))
		t.Fatalf("neovim: %v\n%s\nbridge log:\n%s", err, out, log)
	}

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
