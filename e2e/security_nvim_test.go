package e2e

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestNeovimAppliesNoEscapingURI: the agent suggests an edit, a rename and a search-and-replace of
// file://<workspace>/x?/../../outside/secret.txt while the workspace holds a folder named "x?",
// and an honest edit of x?/y.txt. Real Neovim 0.12 applies every code action it is offered and
// writes every buffer (testdata/nvim/security_escape.lua): the file outside is unchanged, the
// honest edit is in x?/y.txt, and the file x (what URL parsing reads the URI as) is unchanged.
func TestNeovimAppliesNoEscapingURI(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip(`no "?" in a Windows file name; the URI checks are the same (package workspace)`)
	}
	out, work := runShippedNeovim(t, "security_escape.lua", "ALL PASSED")
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if got := read(filepath.Join(filepath.Dir(work), "outside", "secret.txt")); got != "old secret\n" {
		t.Errorf("the file outside the workspace now reads %q\n%s", got, out)
	}
	if got := read(filepath.Join(work, "x")); got != "old x\n" {
		t.Errorf("x now reads %q", got)
	}
	if got := read(filepath.Join(work, "x?", "y.txt")); got != "new y\n" {
		t.Errorf("the honest edit: x?/y.txt reads %q, want %q\n%s", got, "new y\n", out)
	}
	if !strings.Contains(out, `ACTIONS ["Next edit: `) || strings.Count(out, "EDIT ") != 1 || !strings.Contains(out, "EDIT file://"+filepath.ToSlash(work)+"/x%3F/y.txt") {
		t.Errorf("want one action, the honest edit, under the URI built from its checked path:\n%s", out)
	}
	log := read(filepath.Join(work, "bridge.log"))
	if n := strings.Count(log, "query or a fragment"); n < 3 {
		t.Errorf("the bridge logged %d refusals of the URI with a query, want 3", n)
	}
}

// TestNeovimPluginKeepsSecrets: .env (a default glob) and private/own.go (the user's own,
// setup({ exclude = { 'private/**' } })) are open in real Neovim 0.12 beside main.go, typed into
// and saved, while the agent asks for every kind of context and ghost text works in main.go
// (testdata/nvim/plugin_secrets.lua). The agent's log holds nothing of either file: not its name,
// not a byte of its text; the bridge's log names the glob that kept each.
func TestNeovimPluginKeepsSecrets(t *testing.T) {
	out, work := runNeovimPlugin(t, "plugin_secrets.lua", "ALL PASSED")
	wantSteps(t, out, "secrets typed", "accept")
	agentLog, err := os.ReadFile(filepath.Join(work, "agent.log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{"sk-live", "sk-LEAK", ".env", "own.go", "PRIVATE-MARKER", "private/"} {
		if strings.Contains(string(agentLog), leak) {
			t.Errorf("the agent received %q:\n%s", leak, agentLog)
		}
	}
	if !strings.Contains(string(agentLog), `"method":"nes/suggest"`) || !strings.Contains(string(agentLog), `"openFiles"`) {
		t.Errorf("the agent was never asked with its context:\n%s", agentLog)
	}
	bridgeLog, err := os.ReadFile(filepath.Join(work, "bridge.log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"glob":".env"`, `"glob":"private/**"`, "document kept from the agent"} {
		if !strings.Contains(string(bridgeLog), want) {
			t.Errorf("the bridge's log does not say %s", want)
		}
	}
	if strings.Contains(string(bridgeLog), "sk-live") {
		t.Error("the bridge's log holds the secret")
	}
}
