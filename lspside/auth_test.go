package lspside_test

import (
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"

	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testagent"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/lspside"
)

const authDoc = "file:///work/project/auth.go"

func authAgentConfig() testagent.Config {
	return testagent.Config{
		Encoding:    "utf-16",
		RequireAuth: true,
		AuthMethods: []acp.AuthMethod{{Agent: &acp.AuthMethodAgent{Id: "login", Name: "Sign in with Test"}}},
		Rules:       []testagent.Rule{{When: "hel", Find: "hel", Replace: "hello"}},
	}
}

func count(ms []testagent.Message, method string) int {
	n := 0
	for _, m := range ms {
		if m.Method == method {
			n++
		}
	}
	return n
}

// An agent that answers nes/start with auth_required: the user is asked with the agent's auth
// methods, the bridge authenticates and starts the session again, the open documents reach the
// agent, and suggestions work.
func TestSignInAtStart(t *testing.T) {
	e := newEditor(t, harnessOpts{agentCfg: authAgentConfig()})
	e.setAnswer("Sign in with Test")
	e.initialize("utf-16")
	e.Open(authDoc, "hel\n")
	e.waitAgent("authenticate login", func(m testagent.Message) bool {
		return m.Method == acp.AgentMethodAuthenticate && strings.Contains(string(m.Params), `"login"`)
	})
	e.WaitMessage("signed in to acp-test-agent")
	e.waitMirror(authDoc, "hel\n")
	items, err := e.Inline(authDoc, fakeeditor.At(0, 3))
	if err != nil || len(items) != 1 || items[0].InsertText != "hello" {
		t.Fatalf("after sign-in: items %+v, err %v", items, err)
	}
	if n := count(e.agent.Received(), acp.AgentMethodNesStart); n != 2 {
		t.Errorf("nes/start sent %d times, want 2 (refused, then after authenticate)", n)
	}
	q := e.Record().Questions
	if len(q) != 1 || !strings.Contains(q[0], "acp-test-agent needs you to sign in") {
		t.Errorf("questions %q", q)
	}
	e.WaitMessage("signing in to acp-test-agent (Sign in with Test)")
}

// While the question waits for the user, the editor is not blocked: requests answer empty at
// once. "Not now" says how to sign in later, and the sign-in command asks again.
func TestSignInLaterWithTheCommand(t *testing.T) {
	e := newEditor(t, harnessOpts{agentCfg: authAgentConfig(), cfg: lspside.Config{SuggestTimeout: time.Minute}})
	hold := make(chan struct{})
	e.mu.Lock()
	e.answer, e.hold = "Not now", hold
	e.mu.Unlock()
	e.initialize("utf-16")
	e.Open(authDoc, "hel\n")
	e.waitAgent("nes/start", method(acp.AgentMethodNesStart))
	// The question is pending: a request must not wait for it (SuggestTimeout is a minute, the
	// call's own deadline 10 s).
	e.Await(fakeeditor.Questions(1))
	items, err := e.Inline(authDoc, fakeeditor.At(0, 3))
	if err != nil || len(items) != 0 {
		t.Fatalf("while waiting for sign-in: items %+v, err %v", items, err)
	}
	close(hold)
	e.WaitMessage("run the command acp-lsp-bridge.signIn")
	if n := count(e.agent.Received(), acp.AgentMethodAuthenticate); n != 0 {
		t.Fatalf("authenticate sent %d times after Not now", n)
	}

	e.mu.Lock()
	e.answer, e.hold = "Sign in with Test", nil
	e.mu.Unlock()
	e.MustCall("workspace/executeCommand", map[string]any{"command": "acp-lsp-bridge.signIn"}, nil)
	e.WaitMessage("signed in to acp-test-agent")
	e.waitMirror(authDoc, "hel\n")
	items, err = e.Inline(authDoc, fakeeditor.At(0, 3))
	if err != nil || len(items) != 1 {
		t.Fatalf("after the sign-in command: items %+v, err %v", items, err)
	}
}

// auth_required from nes/suggest (a sign-in that expired): the request answers empty, the user is
// asked, and after authenticate a new session starts with the documents replayed.
func TestSignInWhenASuggestionNeedsIt(t *testing.T) {
	cfg := authAgentConfig()
	e := newEditor(t, harnessOpts{agentCfg: cfg})
	e.setAnswer("Sign in with Test")
	e.initialize("utf-16")
	e.Open(authDoc, "hel\n")
	e.WaitMessage("signed in to acp-test-agent")
	e.waitMirror(authDoc, "hel\n")
	e.agent.Revoke()
	items, err := e.Inline(authDoc, fakeeditor.At(0, 3))
	if err != nil || len(items) != 0 {
		t.Fatalf("with an expired sign-in: items %+v, err %v", items, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for count(e.agent.Received(), acp.AgentMethodNesStart) < 3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := count(e.agent.Received(), acp.AgentMethodAuthenticate); n != 2 {
		t.Fatalf("authenticate sent %d times, want 2", n)
	}
	for time.Now().Before(deadline) {
		items, err = e.Inline(authDoc, fakeeditor.At(0, 3))
		if len(items) == 1 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil || len(items) != 1 || items[0].InsertText != "hello" {
		t.Fatalf("after signing in again: items %+v, err %v", items, err)
	}
}

// An agent with no auth methods that requires sign-in: one clear message, and the bridge serves.
func TestSignInWithoutMethods(t *testing.T) {
	cfg := authAgentConfig()
	cfg.AuthMethods = nil
	e := newEditor(t, harnessOpts{agentCfg: cfg})
	e.initialize("utf-16")
	e.Open(authDoc, "hel\n")
	e.WaitMessage("offers no way to do it from the editor")
	if items, err := e.Inline(authDoc, fakeeditor.At(0, 3)); err != nil || len(items) != 0 {
		t.Fatalf("items %+v, err %v", items, err)
	}
}

func askPermission(t *testing.T, e *editor, ctx context.Context) (acp.RequestPermissionResponse, error) {
	t.Helper()
	title := "Write config.json"
	raw, err := e.agent.Call(ctx, acp.ClientMethodSessionRequestPermission, acp.RequestPermissionRequest{
		SessionId: "test-session",
		ToolCall:  acp.ToolCallUpdate{ToolCallId: "t1", Title: &title},
		Options: []acp.PermissionOption{
			{OptionId: "allow", Name: "Allow once", Kind: acp.PermissionOptionKindAllowOnce},
			{OptionId: "deny", Name: "Reject", Kind: acp.PermissionOptionKindRejectOnce},
		},
	})
	var res acp.RequestPermissionResponse
	if err == nil {
		err = json.Unmarshal(raw, &res)
	}
	return res, err
}

// session/request_permission becomes a question with the agent's options; the answer, a closed
// prompt, no answer in time, or the agent cancelling each give the right outcome.
func TestPermissionRequest(t *testing.T) {
	e := newEditor(t, harnessOpts{agentCfg: testagent.Config{Encoding: "utf-16"}, cfg: lspside.Config{UserWait: 300 * time.Millisecond}})
	e.initialize("utf-16")
	e.Open(authDoc, "x\n")
	e.waitMirror(authDoc, "x\n")
	ctx := context.Background()

	e.setAnswer("Reject")
	res, err := askPermission(t, e, ctx)
	if err != nil || res.Outcome.Selected == nil || res.Outcome.Selected.OptionId != "deny" {
		t.Fatalf("answered Reject: %+v, %v", res.Outcome, err)
	}
	qs := e.Record().Questions
	q := qs[len(qs)-1]
	if !strings.Contains(q, `acp-test-agent asks permission for "Write config.json"`) {
		t.Errorf("question %q", q)
	}

	e.setAnswer("") // the user closed the prompt
	if res, err := askPermission(t, e, ctx); err != nil || res.Outcome.Cancelled == nil {
		t.Fatalf("closed prompt: %+v, %v", res.Outcome, err)
	}

	// No answer within UserWait: cancelled, and the editor is told to drop the prompt.
	hold := make(chan struct{})
	defer close(hold)
	e.mu.Lock()
	e.answer, e.hold = "Allow once", hold
	e.mu.Unlock()
	if res, err := askPermission(t, e, ctx); err != nil || res.Outcome.Cancelled == nil {
		t.Fatalf("no answer: %+v, %v", res.Outcome, err)
	}
	e.AwaitFor(5*time.Second, fakeeditor.Cancelled(1))
}

// The agent cancelling its permission request withdraws the question from the editor.
func TestPermissionRequestCancelledByTheAgent(t *testing.T) {
	e := newEditor(t, harnessOpts{agentCfg: testagent.Config{Encoding: "utf-16"}})
	e.initialize("utf-16")
	e.Open(authDoc, "x\n")
	e.waitMirror(authDoc, "x\n")
	hold := make(chan struct{})
	defer close(hold)
	e.mu.Lock()
	e.answer, e.hold = "Allow once", hold
	e.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		_ = e.Editor.Await(context.Background(), fakeeditor.Questions(1))
		cancel()
	}()
	if _, err := askPermission(t, e, ctx); err == nil {
		t.Fatal("a cancelled request returned no error")
	}
	e.AwaitFor(5*time.Second, fakeeditor.Cancelled(1))
}
