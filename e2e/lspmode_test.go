package e2e

import (
	"os"
	"path/filepath"
	"testing"
)

// lspModeEnv returns Emacs and lsp-mode 10's load path, or skips (fails under
// ACP_LSP_BRIDGE_REQUIRE_PEERS=1) when they are not installed.
func lspModeEnv(t *testing.T) (emacs, loadPath string) {
	t.Helper()
	emacs, loadPath = os.Getenv("EMACS"), os.Getenv("LSPMODE_LOAD_PATH")
	if emacs == "" || loadPath == "" {
		skipWithoutPeer(t, `EMACS or LSPMODE_LOAD_PATH is not set; run eval "$(PEERS_LSPMODE=1 bash ../shared/tools/install-test-peers.sh)"`)
	}
	return emacs, loadPath
}

// TestLspModeBesideAnotherServer runs the real lsp-mode 10 in Emacs 30 (testdata/emacs/lsp-mode.el)
// with the shipped editors/emacs/acp-lsp-bridge-lsp-mode.el, the bridge as an add-on beside the
// buffer's own language server (internal/testlsp, which takes the client's first position
// encoding, as LSP asks of servers). lsp-mode keeps one position encoding per buffer, the one of the
// server that initialized last, so both servers must take lsp-mode's first choice, utf-32. The
// script types after astral-plane, CJK and combining-mark text (characters, deletions, a new line)
// and checks after each step that both servers' copies of the document equal the buffer: the
// bridge's through its agent's mirror (the agent uses utf-16, so every change is converted), and
// the other server's.
func TestLspModeBesideAnotherServer(t *testing.T) {
	emacs, loadPath := lspModeEnv(t)
	bridge, agent := binaries(t)
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	for _, d := range []string{"work", "home", "scratch", "bridge-mirror", "main-mirror"} {
		if err := os.MkdirAll(p(d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	out, ok := emacsBatch(t, emacs, filepath.Join(moduleRoot(t), "testdata", "emacs", "lsp-mode.el"), p("work"),
		"HOME="+p("home"),
		"LSPMODE_LOAD_PATH="+loadPath,
		"ACP_EMACS_LSP_CONFIG="+filepath.Join(moduleRoot(t), "editors", "emacs", "acp-lsp-bridge-lsp-mode.el"),
		"ACP_LSP_BRIDGE="+bridge,
		"ACP_TEST_AGENT="+agent,
		"ACP_TEST_LSP="+testLSP(t),
		"EMACS_TEST_DIR="+p("work"),
		"EMACS_TEST_SCRATCH="+p("scratch"),
		"EMACS_TEST_BRIDGE_MIRROR="+p("bridge-mirror"),
		"EMACS_TEST_MAIN_MIRROR="+p("main-mirror"),
		"EMACS_TEST_BRIDGE_LOG="+p("bridge.log"),
		"EMACS_TEST_AGENT_LOG="+p("agent.log"),
	)
	if !ok || testing.Verbose() {
		t.Logf("emacs output:\n%s", emacsIndent(out))
	}
	if !ok {
		b, _ := os.ReadFile(p("bridge.log"))
		t.Logf("bridge log:\n%s", emacsIndent(string(b)))
	}
}
