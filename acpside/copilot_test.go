package acpside

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testagent"
)

// TestStartNESTwiceOnOneConnection: GitHub Copilot refuses a second NES session on a connection
// ("Only one active NES session is supported per ACP connection"); a session asked for again, as
// after a sign-in the running one needed, closes the first before, and the new one serves.
func TestStartNESTwiceOnOneConnection(t *testing.T) {
	ag := testagent.New(testagent.Config{
		Copilot: true, Stderr: io.Discard,
		Getenv: func(k string) string { return map[string]string{"GH_COPILOT_TOKEN": "t"}[k] },
		Rules:  []testagent.Rule{{When: "hel", Find: "hel", Replace: "hello"}},
	})
	a, ctx := startedInProcess(t, ag)
	first := a.Session()
	if err := a.StartNES(ctx, acp.UnstableStartNesRequest{}); err != nil {
		t.Fatalf("the second nes/start: %v", err)
	}
	if a.Session() == first || a.Session() == "" {
		t.Fatalf("session %q after the second nes/start, first %q", a.Session(), first)
	}
	var got []string
	for _, m := range ag.Received() {
		if strings.HasPrefix(m.Method, "nes/") {
			got = append(got, m.Method)
		}
	}
	if want := "nes/start nes/close nes/start"; strings.Join(got, " ") != want {
		t.Errorf("the agent received %v, want %s", got, want)
	}
	if err := a.DidOpen(ctx, acp.UnstableDidOpenDocumentNotification{Uri: "file:///a", LanguageId: "go", Version: 1, Text: "hel"}); err != nil {
		t.Fatal(err)
	}
	sugs, err := a.Suggest(ctx, acp.UnstableSuggestNesRequest{Uri: "file:///a", Version: 1, Position: acp.UnstablePosition{Line: 0, Character: 3}})
	if err != nil || len(sugs) != 1 {
		t.Fatalf("in the new session: %v, %v", sugs, err)
	}
	if !a.IsCopilot() || !a.Billed() {
		t.Errorf("IsCopilot %v, Billed %v: Copilot's plans count requests", a.IsCopilot(), a.Billed())
	}
}

func TestOutOfSync(t *testing.T) {
	for msg, want := range map[string]bool{
		"Document version mismatch for file:///a: expected 2, received 3": true,
		"Document is not open: file:///a":                                 true,
		"Failed to get next edit suggestion":                              false,
	} {
		if got := OutOfSync(&acp.RequestError{Code: -32602, Message: msg}); got != want {
			t.Errorf("OutOfSync(%q) = %v", msg, got)
		}
	}
	if OutOfSync(errors.New("Document is not open")) {
		t.Error("an error that is not the agent's answer counted")
	}
}

func TestCopilotNames(t *testing.T) {
	for c, want := range map[string]bool{
		"copilot-language-server":                            true,
		"/usr/lib/node_modules/.bin/copilot-language-server": true,
		`C:\npm\copilot-language-server.cmd`:                 true,
		"gemini":                                             false,
	} {
		if got := IsCopilotCommand(Command{Path: c, Args: []string{"--acp"}}); got != want {
			t.Errorf("IsCopilotCommand(%q) = %v", c, got)
		}
	}
	if !IsCopilotCommand(Command{Path: "node", Args: []string{"/x/@github/copilot-language-server/dist/language-server.js", "--acp"}}) {
		t.Error("node running Copilot's script is not recognised")
	}
	if got := CopilotLSPCommand(Command{Path: "c", Args: []string{"--acp", "--x"}}).Args; strings.Join(got, " ") != "--x --stdio" {
		t.Errorf("LSP mode args %v", got)
	}
}

func TestFindCopilotSignIn(t *testing.T) {
	home := t.TempDir()
	// XDG_CONFIG_HOME, absolute, names the store on every platform.
	env := map[string]string{"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, ".config"), "GH_COPILOT_TOKEN": "", "GITHUB_COPILOT_TOKEN": ""}
	s := FindCopilotSignIn(env)
	if s.TokenVar != "" || s.Saved || s.Store != filepath.Join(home, ".config", "github-copilot") {
		t.Fatalf("an empty home: %+v", s)
	}
	if err := os.MkdirAll(s.Store, 0o700); err != nil {
		t.Fatal(err)
	}
	// Copilot's database, made at its first start whether or not anyone signs in.
	if err := os.WriteFile(filepath.Join(s.Store, "auth.db"), make([]byte, 8192), 0o600); err != nil {
		t.Fatal(err)
	}
	if s := FindCopilotSignIn(env); s.Saved {
		t.Fatalf("an empty auth.db counted as a saved sign-in: %+v", s)
	}
	if err := os.WriteFile(filepath.Join(s.Store, "apps.json"), []byte(`{"github.com:Iv1":{"user":"me","oauth_token":"gho_x"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	env["GH_COPILOT_TOKEN"] = "a=b" // Copilot ignores it
	env["GITHUB_COPILOT_TOKEN"] = "tok"
	if s := FindCopilotSignIn(env); s.TokenVar != "GITHUB_COPILOT_TOKEN" || !s.Saved {
		t.Fatalf("a token and a saved sign-in: %+v", s)
	}
	if why := NoBrowserHere(func(k string) string { return map[string]string{"SSH_TTY": "/dev/pts/1", "DISPLAY": ":0"}[k] }); why == "" {
		t.Error("an SSH session with a forwarded display counted as having a browser for the agent")
	}
}
