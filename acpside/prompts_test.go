package acpside_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"
	"github.com/rs/zerolog"
	"go.lsp.dev/uri"

	. "github.com/acp-lsp-bridge/acp-lsp-bridge/acpside"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/promptagent"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testutil"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent/model"
)

// sessionAgent is a coding agent without NES, in-process: sessions, modes, and a prompt answered
// by answer (which may call the client through conn first).
type sessionAgent struct {
	t      *testing.T
	conn   *acp.Connection
	answer func(ctx context.Context, conn *acp.Connection, session acp.SessionId, prompt string) (acp.StopReason, error)

	// authErr, when set, answers every session/prompt.
	authErr *acp.RequestError

	mu       sync.Mutex
	running  map[acp.SessionId]context.CancelFunc
	methods  []string
	modeSet  string
	prompts  []string
	sessions int
}

func (s *sessionAgent) handle(ctx context.Context, method string, params json.RawMessage) (any, *acp.RequestError) {
	s.mu.Lock()
	s.methods = append(s.methods, method)
	s.mu.Unlock()
	switch method {
	case acp.AgentMethodInitialize:
		return acp.InitializeResponse{ProtocolVersion: 1, AgentInfo: &acp.Implementation{Name: "session-agent", Version: "1"}}, nil
	case acp.AgentMethodSessionNew:
		s.mu.Lock()
		s.sessions++
		id := acp.SessionId("s" + string(rune('0'+s.sessions)))
		s.mu.Unlock()
		return acp.NewSessionResponse{SessionId: id, Modes: &acp.SessionModeState{CurrentModeId: "default", AvailableModes: []acp.SessionMode{
			{Id: "default", Name: "Default"}, {Id: "plan", Name: "Plan Mode"}, {Id: "bypassPermissions", Name: "Bypass Permissions"},
		}}}, nil
	case acp.AgentMethodSessionSetMode:
		var p acp.SetSessionModeRequest
		_ = json.Unmarshal(params, &p)
		s.mu.Lock()
		s.modeSet = string(p.ModeId)
		s.mu.Unlock()
		return acp.SetSessionModeResponse{}, nil
	case acp.AgentMethodSessionPrompt:
		if s.authErr != nil {
			return nil, s.authErr
		}
		var p acp.PromptRequest
		_ = json.Unmarshal(params, &p)
		text := ""
		for _, b := range p.Prompt {
			if b.Text != nil {
				text += b.Text.Text
			}
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		s.mu.Lock()
		s.prompts = append(s.prompts, text)
		if s.running == nil {
			s.running = map[acp.SessionId]context.CancelFunc{}
		}
		s.running[p.SessionId] = cancel
		s.mu.Unlock()
		stop, err := s.answer(ctx, s.conn, p.SessionId, text)
		if err != nil {
			return nil, acp.NewInternalError(map[string]any{"error": err.Error()})
		}
		return acp.PromptResponse{StopReason: stop}, nil
	case acp.AgentMethodSessionCancel:
		var p acp.CancelNotification
		_ = json.Unmarshal(params, &p)
		s.mu.Lock()
		if cancel := s.running[p.SessionId]; cancel != nil {
			cancel()
		}
		s.mu.Unlock()
		return nil, nil
	}
	return nil, acp.NewMethodNotFound(method)
}

// connectSessionAgent connects a prompted Agent to a sessionAgent over pipes.
func connectSessionAgent(t *testing.T, opts PromptOptions, answer func(context.Context, *acp.Connection, acp.SessionId, string) (acp.StopReason, error), handler acp.MethodHandler) (*Agent, *sessionAgent) {
	t.Helper()
	agentIn, clientOut := io.Pipe()
	clientIn, agentOut := io.Pipe()
	sa := &sessionAgent{t: t, answer: answer}
	sa.conn = acp.NewConnection(sa.handle, agentOut, agentIn)
	var log testutil.SyncBuffer
	o := ClientOptions(zerolog.New(&log), "test")
	opts.Serve = promptagent.Serve("test", model.Config{}, nil)
	o.Prompts = &opts
	o.Handler = handler
	a := Connect(clientIn, clientOut, o)
	t.Cleanup(func() {
		a.Close(context.Background())
		_ = agentOut.Close()
		if t.Failed() {
			t.Logf("log:\n%s", log.String())
		}
	})
	return a, sa
}

// say streams text as agent_message_chunk updates, a few bytes at a time.
func say(ctx context.Context, conn *acp.Connection, session acp.SessionId, text string) error {
	for len(text) > 0 {
		n := min(7, len(text))
		if err := conn.SendNotification(ctx, acp.ClientMethodSessionUpdate, acp.SessionNotification{SessionId: session, Update: acp.UpdateAgentMessageText(text[:n])}); err != nil {
			return err
		}
		text = text[n:]
	}
	return nil
}

// docPath is the document of these tests, an absolute path on this platform (C:\w\a.go on
// Windows), and docURI its file: URI: the agent's edits name the path, the editor the URI.
var docPath = func() string { p, _ := filepath.Abs(filepath.FromSlash("/w/a.go")); return p }()
var docURI = string(uri.File(docPath))

var regionRE = regexp.MustCompile(`(?s)<\|editable_region_start\|>\n(.*?)<\|editable_region_end\|>`)

// rewrite answers a prompt with its editable region, every "fo(" made "foo(".
func rewrite(ctx context.Context, conn *acp.Connection, session acp.SessionId, prompt string) (acp.StopReason, error) {
	// The instructions show the form of an answer too: the region is the one with the cursor.
	var m []string
	for _, c := range regionRE.FindAllStringSubmatch(prompt, -1) {
		if strings.Contains(c[1], "<|user_cursor_is_here|>") {
			m = c
		}
	}
	if m == nil {
		return acp.StopReasonEndTurn, say(ctx, conn, session, "I do not see a region.")
	}
	region := strings.ReplaceAll(strings.ReplaceAll(m[1], "<|user_cursor_is_here|>", ""), "fo(", "foo(")
	return acp.StopReasonEndTurn, say(ctx, conn, session, "Here it is:\n<|editable_region_start|>\n"+region+"<|editable_region_end|>\n")
}

func startPrompted(t *testing.T, a *Agent, text string) {
	t.Helper()
	ctx := context.Background()
	if _, err := a.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	if !a.Prompted() {
		t.Fatal("an agent without NES is not prompted")
	}
	if err := a.StartNES(ctx, acp.UnstableStartNesRequest{}); err != nil {
		t.Fatal(err)
	}
	if err := a.DidOpen(ctx, acp.UnstableDidOpenDocumentNotification{Uri: docURI, LanguageId: "go", Version: 1, Text: text}); err != nil {
		t.Fatal(err)
	}
}

func suggestAt(t *testing.T, a *Agent, ctx context.Context, line, char int) ([]Suggestion, error) {
	t.Helper()
	return a.Suggest(ctx, acp.UnstableSuggestNesRequest{Uri: docURI, Version: 1, Position: acp.UnstablePosition{Line: line, Character: char}, TriggerKind: acp.UnstableNesTriggerKindManual})
}

// TestPromptedAgentSuggestsFromItsText: an agent without NES is kept; a suggestion is asked with a
// prompt holding the marked region and read from the streamed text; a read-only mode is chosen.
func TestPromptedAgentSuggestsFromItsText(t *testing.T) {
	a, sa := connectSessionAgent(t, PromptOptions{}, rewrite, nil)
	startPrompted(t, a, "package p\n\nfunc f() {\n\tfo(1)\n}\n")
	sugs, err := suggestAt(t, a, context.Background(), 3, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(sugs) != 1 || sugs[0].Edit == nil || len(sugs[0].Edit.Edits) != 1 || sugs[0].Edit.Edits[0].NewText != "o" {
		b, _ := json.Marshal(sugs)
		t.Fatalf("suggestions %s, want one edit inserting \"o\"", b)
	}
	sa.mu.Lock()
	defer sa.mu.Unlock()
	if sa.modeSet != "plan" {
		t.Errorf("mode set %q, want plan (the only read-only one listed)", sa.modeSet)
	}
	if len(sa.prompts) != 1 || !strings.Contains(sa.prompts[0], "Do not run commands") || !strings.Contains(sa.prompts[0], "\tfo<|user_cursor_is_here|>(1)") {
		t.Errorf("prompts %q", sa.prompts)
	}
}

// TestPromptedEditsComeFromToolCallsAndWrites: a proposed edit (a permission request's diff, a
// fs/write_text_file) becomes the suggestion; the permission is refused and nothing is written.
func TestPromptedEditsComeFromToolCallsAndWrites(t *testing.T) {
	for _, how := range []string{"permission", "write"} {
		t.Run(how, func(t *testing.T) {
			var outcome acp.RequestPermissionResponse
			var writeErr error
			answer := func(ctx context.Context, conn *acp.Connection, session acp.SessionId, _ string) (acp.StopReason, error) {
				old := "fo(1)"
				if how == "permission" {
					var err error
					outcome, err = acp.SendRequest[acp.RequestPermissionResponse](conn, ctx, acp.ClientMethodSessionRequestPermission, acp.RequestPermissionRequest{
						SessionId: session,
						ToolCall: acp.ToolCallUpdate{ToolCallId: "t1", Content: []acp.ToolCallContent{
							{Diff: &acp.ToolCallContentDiff{Type: "diff", Path: docPath, OldText: &old, NewText: "foo(1)"}},
						}},
						Options: []acp.PermissionOption{{OptionId: "yes", Name: "Allow", Kind: acp.PermissionOptionKindAllowOnce}, {OptionId: "no", Name: "Reject", Kind: acp.PermissionOptionKindRejectOnce}},
					})
					if err != nil {
						return "", err
					}
				} else {
					_, writeErr = acp.SendRequest[acp.WriteTextFileResponse](conn, ctx, acp.ClientMethodFsWriteTextFile, acp.WriteTextFileRequest{SessionId: session, Path: docPath, Content: "package p\n\nfunc f() {\n\tfoo(1)\n}\n"})
				}
				return acp.StopReasonEndTurn, say(ctx, conn, session, "Done.")
			}
			written := false
			handler := func(_ context.Context, method string, _ json.RawMessage) (any, *acp.RequestError) {
				if method == acp.ClientMethodFsWriteTextFile {
					written = true
				}
				return nil, acp.NewMethodNotFound(method)
			}
			a, _ := connectSessionAgent(t, PromptOptions{}, answer, handler)
			startPrompted(t, a, "package p\n\nfunc f() {\n\tfo(1)\n}\n")
			sugs, err := suggestAt(t, a, context.Background(), 3, 3)
			if err != nil {
				t.Fatal(err)
			}
			if len(sugs) != 1 || sugs[0].Edit == nil || len(sugs[0].Edit.Edits) != 1 || sugs[0].Edit.Edits[0].NewText != "o" {
				t.Fatalf("suggestions %+v, want one edit inserting \"o\"", sugs)
			}
			if how == "permission" && (outcome.Outcome.Selected == nil || outcome.Outcome.Selected.OptionId != "no") {
				t.Errorf("the permission was answered %+v, want the reject option", outcome.Outcome)
			}
			if how == "write" && (writeErr != nil || written) {
				t.Errorf("fs/write_text_file: error %v, passed on to the editor: %v; want it taken as the suggestion", writeErr, written)
			}
		})
	}
}

// TestPromptCancelled: a request given up on cancels the prompt with session/cancel and returns
// at once; the next prompt is answered.
func TestPromptCancelled(t *testing.T) {
	cancelled := make(chan struct{})
	var once sync.Once
	answer := func(ctx context.Context, conn *acp.Connection, session acp.SessionId, prompt string) (acp.StopReason, error) {
		if strings.Contains(prompt, "slow") {
			select {
			case <-ctx.Done():
			case <-time.After(20 * time.Second):
			}
			once.Do(func() { close(cancelled) })
			return acp.StopReasonCancelled, nil
		}
		return rewrite(ctx, conn, session, prompt)
	}
	a, sa := connectSessionAgent(t, PromptOptions{}, answer, nil)
	startPrompted(t, a, "package p\n\n// slow\nfunc f() {\n\tfo(1)\n}\n")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	began := time.Now()
	if _, err := suggestAt(t, a, ctx, 4, 3); !errors.Is(err, ErrCancelled) {
		t.Fatalf("a suggestion given up on: %v, want ErrCancelled", err)
	}
	if d := time.Since(began); d > 2*time.Second {
		t.Errorf("the cancelled request took %v", d)
	}
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the agent's prompt was never cancelled")
	}
	sa.mu.Lock()
	got := strings.Join(sa.methods, " ")
	sa.mu.Unlock()
	if !strings.Contains(got, "session/cancel") {
		t.Errorf("the agent received %s, want session/cancel", got)
	}
}

// TestAgentWritingOnDiskStopsPrompts: an agent that changes a workspace file by itself during a
// prompt is reported once, and asked nothing more.
func TestAgentWritingOnDiskStopsPrompts(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a.go")
	if err := os.WriteFile(file, []byte("package p\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	answer := func(ctx context.Context, conn *acp.Connection, session acp.SessionId, prompt string) (acp.StopReason, error) {
		if err := os.WriteFile(file, []byte("package p // changed by the agent\n"), 0o644); err != nil {
			return "", err
		}
		return rewrite(ctx, conn, session, prompt)
	}
	var tainted []string
	var mu sync.Mutex
	a, sa := connectSessionAgent(t, PromptOptions{Workspace: func() string { return dir }, Tainted: func(p string) {
		mu.Lock()
		tainted = append(tainted, p)
		mu.Unlock()
	}}, answer, nil)
	startPrompted(t, a, "package p\n\nfunc f() {\n\tfo(1)\n}\n")
	_, _ = suggestAt(t, a, context.Background(), 3, 3)
	if _, err := suggestAt(t, a, context.Background(), 3, 3); !errors.Is(err, ErrPromptsStopped) {
		t.Errorf("the request after the write: %v, want ErrPromptsStopped", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(tainted) != 1 || tainted[0] != file {
		t.Errorf("reported %q, want %s once", tainted, file)
	}
	sa.mu.Lock()
	defer sa.mu.Unlock()
	if len(sa.prompts) != 1 {
		t.Errorf("%d prompts, want 1: none after the agent wrote the file", len(sa.prompts))
	}
}

// TestPromptSessionsRenewed: a session takes Turns prompts, then the next opens a new one.
func TestPromptSessionsRenewed(t *testing.T) {
	a, sa := connectSessionAgent(t, PromptOptions{Turns: 2}, rewrite, nil)
	startPrompted(t, a, "package p\n\nfunc f() {\n\tfo(1)\n}\n")
	for i := 0; i < 3; i++ {
		if _, err := suggestAt(t, a, context.Background(), 3, 3); err != nil {
			t.Fatal(err)
		}
	}
	sa.mu.Lock()
	defer sa.mu.Unlock()
	if sa.sessions != 2 {
		t.Errorf("%d sessions for 3 prompts at 2 a session, want 2", sa.sessions)
	}
}

// TestPromptAuthRequired: an agent that opens its session before sign-in and refuses the prompt
// (claude-agent-acp) gives Suggest its auth_required answer, so that the bridge asks the user to
// sign in; -32000 counts whatever its message (gemini's names an API key).
func TestPromptAuthRequired(t *testing.T) {
	answer := func(context.Context, *acp.Connection, acp.SessionId, string) (acp.StopReason, error) {
		return "", errors.New("unused")
	}
	a, sa := connectSessionAgent(t, PromptOptions{}, answer, nil)
	sa.authErr = &acp.RequestError{Code: -32000, Message: "Gemini API key is missing or not configured."}
	startPrompted(t, a, "package p\n\nfunc f() {\n\tfo(1)\n}\n")
	_, err := suggestAt(t, a, context.Background(), 3, 3)
	if !AuthRequired(err) {
		t.Fatalf("Suggest: %v, want the agent's auth_required answer", err)
	}
}

// TestPromptSessionKeptAfterCancel: a prompt the agent ends when cancelled (stopReason
// "cancelled", in time) leaves its session for the next prompt, as cancels come with every newer
// request; one it does not end in time is left, and the next prompt opens a new session.
func TestPromptSessionKeptAfterCancel(t *testing.T) {
	for _, ends := range []bool{true, false} {
		name := map[bool]string{true: "ended", false: "not ended"}[ends]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var prompts atomic.Int32
			release := make(chan struct{}) // at the test's end, so that no handler outlives it
			t.Cleanup(func() { close(release) })
			answer := func(ctx context.Context, conn *acp.Connection, session acp.SessionId, prompt string) (acp.StopReason, error) {
				if prompts.Add(1) == 1 { // the first is slow
					<-ctx.Done() // session/cancel
					if !ends {
						select { // past the bridge's grace
						case <-time.After(10 * time.Second):
						case <-release:
						}
					}
					return acp.StopReasonCancelled, nil
				}
				return rewrite(ctx, conn, session, prompt)
			}
			a, sa := connectSessionAgent(t, PromptOptions{}, answer, nil)
			startPrompted(t, a, "package p\n\nfunc f() {\n\tfo(1)\n}\n")
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			if _, err := suggestAt(t, a, ctx, 3, 3); !errors.Is(err, ErrCancelled) {
				t.Fatalf("a suggestion given up on: %v, want ErrCancelled", err)
			}
			sugs, err := suggestAt(t, a, context.Background(), 3, 3)
			if err != nil || len(sugs) != 1 {
				t.Fatalf("the prompt after the cancelled one: %v, %v", sugs, err)
			}
			sa.mu.Lock()
			defer sa.mu.Unlock()
			if want := map[bool]int{true: 1, false: 2}[ends]; sa.sessions != want {
				t.Errorf("%d sessions, want %d", sa.sessions, want)
			}
		})
	}
}

// TestToolsWritingDuringAPromptAreNotTheAgent: build output, editors' swap files and a file the
// editor saved (Saved) change during a prompt without stopping prompts.
func TestToolsWritingDuringAPromptAreNotTheAgent(t *testing.T) {
	dir := t.TempDir()
	saved := filepath.Join(dir, "a.go")
	if err := os.WriteFile(saved, []byte("package p\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "target"), 0o755); err != nil {
		t.Fatal(err)
	}
	answer := func(ctx context.Context, conn *acp.Connection, session acp.SessionId, prompt string) (acp.StopReason, error) {
		for _, f := range []string{saved, filepath.Join(dir, "target", "out.o"), filepath.Join(dir, ".a.go.swp"), filepath.Join(dir, "a.go~"), filepath.Join(dir, "#a.go#")} {
			if err := os.WriteFile(f, []byte(time.Now().String()), 0o644); err != nil {
				return "", err
			}
		}
		return rewrite(ctx, conn, session, prompt)
	}
	tainted := false
	a, sa := connectSessionAgent(t, PromptOptions{
		Workspace: func() string { return dir },
		Saved:     func(p string) bool { return p == saved },
		Tainted:   func(string) { tainted = true },
	}, answer, nil)
	startPrompted(t, a, "package p\n\nfunc f() {\n\tfo(1)\n}\n")
	for i := 0; i < 2; i++ {
		if _, err := suggestAt(t, a, context.Background(), 3, 3); err != nil {
			t.Fatal(err)
		}
	}
	sa.mu.Lock()
	defer sa.mu.Unlock()
	if tainted || len(sa.prompts) != 2 {
		t.Errorf("tainted %v after %d prompts; want untouched, 2 prompts", tainted, len(sa.prompts))
	}
}

// TestPromptRefusesTerminalsAndRenewsAfterAnError: a terminal the agent asks for during a prompt
// is refused; a prompt that fails leaves its session, and the next prompt opens a new one.
func TestPromptRefusesTerminalsAndRenewsAfterAnError(t *testing.T) {
	var terminalErr error
	calls := 0
	answer := func(ctx context.Context, conn *acp.Connection, session acp.SessionId, prompt string) (acp.StopReason, error) {
		calls++
		if calls == 1 {
			_, terminalErr = acp.SendRequest[acp.CreateTerminalResponse](conn, ctx, acp.ClientMethodTerminalCreate, acp.CreateTerminalRequest{SessionId: session, Command: "rm", Args: []string{"-rf", "/"}})
			return "", errors.New("the model is overloaded")
		}
		return rewrite(ctx, conn, session, prompt)
	}
	a, sa := connectSessionAgent(t, PromptOptions{}, answer, nil)
	startPrompted(t, a, "package p\n\nfunc f() {\n\tfo(1)\n}\n")
	if _, err := suggestAt(t, a, context.Background(), 3, 3); err == nil {
		t.Error("a failed prompt gave no error")
	}
	if terminalErr == nil || !strings.Contains(terminalErr.Error(), "runs no commands") {
		t.Errorf("terminal/create answered %v, want a refusal", terminalErr)
	}
	sugs, err := suggestAt(t, a, context.Background(), 3, 3)
	if err != nil || len(sugs) != 1 {
		t.Fatalf("after the error: %+v, %v; want the suggestion", sugs, err)
	}
	sa.mu.Lock()
	defer sa.mu.Unlock()
	if sa.sessions != 2 {
		t.Errorf("%d sessions, want 2: a new one after the failed prompt", sa.sessions)
	}
}
