package doctor

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"
	"github.com/rs/zerolog"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/acpside"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testagent"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testutil"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/workspace"
)

func ms(v float64) *float64 { return &v }
func str(s string) *string  { return &s }

func initResponse(t *testing.T, raw string) *acp.InitializeResponse {
	t.Helper()
	var resp acp.InitializeResponse
	if err := json.Unmarshal([]byte(raw), &resp); err != nil {
		t.Fatal(err)
	}
	return &resp
}

// goldenReports are the reports whose renderings are compared byte for byte below.
func goldenReports(t *testing.T) map[string]*Report {
	cmd := acpside.Command{Path: "my-agent", Args: []string{"--acp", "two words"}}
	const ws = "file:///home/me/project"

	ok := newReport(cmd, ws, "0.1.0-dev")
	resp := initResponse(t, `{
		"protocolVersion": 1,
		"agentInfo": {"name": "my-agent", "title": "My Agent", "version": "2.1.0"},
		"authMethods": [
			{"id": "login", "name": "Log in", "description": "browser sign-in"},
			{"id": "key", "name": "API key", "type": "env_var", "vars": [{"name": "MY_KEY"}]}
		],
		"agentCapabilities": {
			"positionEncoding": "utf-32",
			"nes": {
				"events": {"document": {"didOpen": {}, "didChange": {"syncKind": "full"}, "didClose": {}, "didFocus": {}}},
				"context": {"recentFiles": {"maxCount": 10}, "editHistory": {}, "diagnostics": {}}
			}
		}
	}`)
	ok.Agent = describeAgent(resp, encoding.UTF32)
	ok.OK, ok.Reason = true, "the agent can do Next Edit Suggestions"
	ok.Timings = timingsReport{InitializeMs: ms(182.4), NESStartMs: ms(2.1), CloseMs: ms(15)}
	ok.Capabilities = capsReport{
		InlineCompletion: true, CopilotInlineEdit: true, CodeAction: true, Completion: true,
		SuggestionKinds: []string{"edit", "jump", "rename", "searchAndReplace"},
		DocumentEvents:  []string{"didOpen", "didChange", "didClose", "didFocus"},
		DocumentSync:    str("full"),
		SuggestContext:  []string{"recentFiles", "editHistory", "diagnostics"},
	}

	refused := newReport(acpside.Command{Path: "codex-acp"}, ws, "0.1.0-dev")
	refused.Agent = describeAgent(initResponse(t, `{
		"protocolVersion": 1,
		"agentInfo": {"name": "codex-acp", "version": "0.3.0"},
		"authMethods": [],
		"agentCapabilities": {"nes": {}}
	}`), encoding.UTF16)
	refused.Timings = timingsReport{InitializeMs: ms(1234.5), NESStartMs: ms(0.4), CloseMs: ms(3)}
	refused.Error = &errorReport{Method: "nes/start", Code: -32601, Message: "Method not found", Data: map[string]any{"method": "nes/start"}}
	refused.fail("nes/start", failNESStartRefused, `the agent refused nes/start: -32601 Method not found (it does not implement Next Edit Suggestions sessions)`)

	notFound := newReport(acpside.Command{Path: "no-such-agent"}, ws, "0.1.0-dev")
	notFound.fail("start", failNotFound, `cannot start the agent: command "no-such-agent" not found (no executable on $PATH)`)

	exited := newReport(acpside.Command{Path: "node", Args: []string{"agent.mjs"}}, ws, "0.1.0-dev")
	exited.Agent = describeAgent(initResponse(t, `{"protocolVersion": 2, "authMethods": [], "agentCapabilities": {"nes": {"events": {"document": {}}}}}`), encoding.UTF16)
	exited.Warnings = warnings(initResponse(t, `{"protocolVersion": 2, "authMethods": []}`), []encoding.Kind{encoding.UTF8, encoding.UTF32, encoding.UTF16})
	exited.Timings = timingsReport{InitializeMs: ms(40), CloseMs: ms(1)}
	exited.AgentExit = str("exit status 3")
	exited.AgentStderr = []string{"line 1", "line 2", "line 3", "line 4", "line 5", "Error: no model configured"}
	exited.fail("nes/start", failExited, "the agent exited (exit status 3) before answering nes/start")

	for _, r := range []*Report{ok, refused, notFound, exited} {
		r.Exclusions.Globs = []string{".env", "*.pem"}
	}
	ok.Exclusions.HeldBack = []heldReport{{Path: ".env", Glob: ".env"}}
	return map[string]*Report{"ok": ok, "refused": refused, "not-found": notFound, "exited": exited}
}

func TestDoctorRenderHuman(t *testing.T) {
	want := map[string]string{
		"ok": `command    my-agent --acp 'two words'
workspace  file:///home/me/project
secrets    kept from the agent: .env (.env)
agent      my-agent 2.1.0 ("My Agent")
protocol   ACP 1
encoding   utf-32 (the agent's choice)
auth       Log in [login, agent], API key [key, env_var]
events     didOpen, didChange (full), didClose, didFocus
context    recentFiles (maxCount 10), editHistory, diagnostics
timings    initialize 182 ms after process start, nes/start 2.1 ms, close 15 ms
surfaces   inline completion, Copilot inline edits, code actions, completion items
           (completion items by default only for editors without inline completion)
           the agent gets didOpen, didChange (full), didClose, didFocus from the editor
           and with each nes/suggest: recentFiles, editHistory, diagnostics
OK         the agent can do Next Edit Suggestions
`,
		"refused": `command    codex-acp
workspace  file:///home/me/project
secrets    no file here matches the 2 exclusion globs (.env, keys, ...; --exclude adds)
agent      codex-acp 0.3.0
protocol   ACP 1
encoding   utf-16 (the protocol's default: the agent named none)
auth       none
events     none
context    none
timings    initialize 1234 ms after process start, nes/start 0.4 ms, close 3.0 ms
surfaces   none: the bridge would tell the editor once and answer with empty results
FAIL       the agent refused nes/start: -32601 Method not found (it does not implement Next Edit Suggestions sessions)
`,
		"not-found": `command    no-such-agent
workspace  file:///home/me/project
secrets    no file here matches the 2 exclusion globs (.env, keys, ...; --exclude adds)
surfaces   none: the bridge would tell the editor once and answer with empty results
FAIL       cannot start the agent: command "no-such-agent" not found (no executable on $PATH)
`,
		"exited": `command    node agent.mjs
workspace  file:///home/me/project
secrets    no file here matches the 2 exclusion globs (.env, keys, ...; --exclude adds)
agent      (no agentInfo)
protocol   ACP 2
encoding   utf-16 (the protocol's default: the agent named none)
auth       none
events     none
context    none
timings    initialize 40 ms after process start, close 1.0 ms
surfaces   none: the bridge would tell the editor once and answer with empty results
stderr     line 2
           line 3
           line 4
           line 5
           Error: no model configured
warning    the agent answered ACP protocol version 2; the bridge speaks 1
warning    the agent sent no agentInfo (name and version)
FAIL       the agent exited (exit status 3) before answering nes/start
`,
	}
	for name, rep := range goldenReports(t) {
		if got := rep.Human(false); got != want[name] {
			t.Errorf("%s: human report:\n%s\nwant:\n%s", name, got, want[name])
		}
	}
	colored := goldenReports(t)["not-found"].Human(true)
	if !strings.HasSuffix(colored, "\x1b[1;31mFAIL\x1b[0m       cannot start the agent: command \"no-such-agent\" not found (no executable on $PATH)\n") {
		t.Errorf("colored verdict: %q", colored)
	}
}

func TestDoctorRenderJSON(t *testing.T) {
	want := map[string]string{
		"ok": `{
  "protocolVersion": 1,
  "ok": true,
  "reason": "the agent can do Next Edit Suggestions",
  "failure": null,
  "step": null,
  "bridge": {
    "name": "acp-lsp-bridge",
    "version": "0.1.0-dev"
  },
  "command": [
    "my-agent",
    "--acp",
    "two words"
  ],
  "workspace": "file:///home/me/project",
  "agent": {
    "protocolVersion": 1,
    "info": {
      "name": "my-agent",
      "title": "My Agent",
      "version": "2.1.0"
    },
    "positionEncoding": "utf-32",
    "positionEncodingSource": "agent",
    "authMethods": [
      {
        "id": "login",
        "name": "Log in",
        "type": "agent",
        "description": "browser sign-in",
        "vars": null,
        "args": null,
        "env": null
      },
      {
        "id": "key",
        "name": "API key",
        "type": "env_var",
        "description": null,
        "vars": [
          "MY_KEY"
        ],
        "args": null,
        "env": null
      }
    ],
    "model": null,
    "nes": {
      "events": {
        "didOpen": true,
        "didChange": true,
        "syncKind": "full",
        "didClose": true,
        "didSave": false,
        "didFocus": true
      },
      "context": {
        "recentFiles": {
          "maxCount": 10
        },
        "editHistory": {},
        "diagnostics": {}
      }
    }
  },
  "error": null,
  "agentExit": null,
  "agentStderr": [],
  "timings": {
    "initializeMs": 182.4,
    "nesStartMs": 2.1,
    "sessionNewMs": null,
    "closeMs": 15
  },
  "capabilities": {
    "inlineCompletion": true,
    "copilotInlineEdit": true,
    "codeAction": true,
    "completion": true,
    "suggestionKinds": [
      "edit",
      "jump",
      "rename",
      "searchAndReplace"
    ],
    "documentEvents": [
      "didOpen",
      "didChange",
      "didClose",
      "didFocus"
    ],
    "documentSync": "full",
    "suggestContext": [
      "recentFiles",
      "editHistory",
      "diagnostics"
    ]
  },
  "prompts": null,
  "sample": null,
  "exclusions": {
    "globs": [
      ".env",
      "*.pem"
    ],
    "heldBack": [
      {
        "path": ".env",
        "glob": ".env"
      }
    ],
    "more": false
  },
  "warnings": [],
  "advice": null
}
`,
		"refused": `{
  "protocolVersion": 1,
  "ok": false,
  "reason": "the agent refused nes/start: -32601 Method not found (it does not implement Next Edit Suggestions sessions)",
  "failure": "nes-start-refused",
  "step": "nes/start",
  "bridge": {
    "name": "acp-lsp-bridge",
    "version": "0.1.0-dev"
  },
  "command": [
    "codex-acp"
  ],
  "workspace": "file:///home/me/project",
  "agent": {
    "protocolVersion": 1,
    "info": {
      "name": "codex-acp",
      "title": null,
      "version": "0.3.0"
    },
    "positionEncoding": "utf-16",
    "positionEncodingSource": "default",
    "authMethods": [],
    "model": null,
    "nes": {
      "events": {
        "didOpen": false,
        "didChange": false,
        "syncKind": null,
        "didClose": false,
        "didSave": false,
        "didFocus": false
      },
      "context": {}
    }
  },
  "error": {
    "method": "nes/start",
    "code": -32601,
    "message": "Method not found",
    "data": {
      "method": "nes/start"
    }
  },
  "agentExit": null,
  "agentStderr": [],
  "timings": {
    "initializeMs": 1234.5,
    "nesStartMs": 0.4,
    "sessionNewMs": null,
    "closeMs": 3
  },
  "capabilities": {
    "inlineCompletion": false,
    "copilotInlineEdit": false,
    "codeAction": false,
    "completion": false,
    "suggestionKinds": [],
    "documentEvents": [],
    "documentSync": null,
    "suggestContext": []
  },
  "prompts": null,
  "sample": null,
  "exclusions": {
    "globs": [
      ".env",
      "*.pem"
    ],
    "heldBack": [],
    "more": false
  },
  "warnings": [],
  "advice": null
}
`,
		"not-found": `{
  "protocolVersion": 1,
  "ok": false,
  "reason": "cannot start the agent: command \"no-such-agent\" not found (no executable on $PATH)",
  "failure": "not-found",
  "step": "start",
  "bridge": {
    "name": "acp-lsp-bridge",
    "version": "0.1.0-dev"
  },
  "command": [
    "no-such-agent"
  ],
  "workspace": "file:///home/me/project",
  "agent": null,
  "error": null,
  "agentExit": null,
  "agentStderr": [],
  "timings": {
    "initializeMs": null,
    "nesStartMs": null,
    "sessionNewMs": null,
    "closeMs": null
  },
  "capabilities": {
    "inlineCompletion": false,
    "copilotInlineEdit": false,
    "codeAction": false,
    "completion": false,
    "suggestionKinds": [],
    "documentEvents": [],
    "documentSync": null,
    "suggestContext": []
  },
  "prompts": null,
  "sample": null,
  "exclusions": {
    "globs": [
      ".env",
      "*.pem"
    ],
    "heldBack": [],
    "more": false
  },
  "warnings": [],
  "advice": null
}
`,
	}
	reports := goldenReports(t)
	for name, w := range want {
		if got := string(reports[name].JSON()); got != w {
			t.Errorf("%s: JSON report:\n%s\nwant:\n%s", name, got, w)
		}
	}
	// The exited report: the fields that only it fills.
	var got map[string]any
	if err := json.Unmarshal(reports["exited"].JSON(), &got); err != nil {
		t.Fatal(err)
	}
	if got["agentExit"] != "exit status 3" || got["failure"] != "agent-exited" || len(got["agentStderr"].([]any)) != 6 || len(got["warnings"].([]any)) != 2 {
		t.Errorf("exited report: %v", got)
	}
	if got["agent"].(map[string]any)["info"] != nil {
		t.Errorf("agent.info of an agent without agentInfo: %v, want null", got["agent"])
	}
}

// connectTestAgent runs a testagent in process over pipes, as the bridge would a child process.
func connectTestAgent(cfg testagent.Config) func(acpside.Options) (*acpside.Agent, error) {
	return func(o acpside.Options) (*acpside.Agent, error) {
		fromAgent, agentOut := io.Pipe()
		agentIn, toAgent := io.Pipe()
		go func() {
			testagent.New(cfg).Serve(agentIn, agentOut)
			_ = agentOut.Close()
		}()
		return acpside.Connect(fromAgent, toAgent, o), nil
	}
}

func checkInProcess(t *testing.T, timeout time.Duration, start func(acpside.Options) (*acpside.Agent, error)) *Report {
	t.Helper()
	dir := t.TempDir()
	return Check(context.Background(), Run{
		Command: acpside.Command{Path: "in-process"},
		Dir:     dir,
		Timeout: timeout,
		Log:     zerolog.Nop(),
		Version: "test",
		Start:   start,
	})
}

func TestDoctorCheckInProcess(t *testing.T) {
	t.Run("ok", func(t *testing.T) {
		rep := checkInProcess(t, 5*time.Second, connectTestAgent(testagent.Config{Encoding: "utf-8", Sync: "full", DidFocus: true, ContextDiagnostics: true}))
		if !rep.OK || rep.Failure != nil || rep.Agent == nil || rep.Agent.PositionEncoding != "utf-8" {
			t.Fatalf("report %s", rep.JSON())
		}
		c := rep.Capabilities
		if strings.Join(c.DocumentEvents, ",") != "didOpen,didChange,didClose,didSave,didFocus" || c.DocumentSync == nil || *c.DocumentSync != "full" ||
			strings.Join(c.SuggestContext, ",") != "diagnostics" || !c.InlineCompletion || !c.CopilotInlineEdit || !c.CodeAction || !c.Completion {
			t.Errorf("capabilities %+v", c)
		}
		if rep.Timings.InitializeMs == nil || rep.Timings.NESStartMs == nil || rep.Timings.CloseMs == nil {
			t.Errorf("timings %+v", rep.Timings)
		}
	})
	t.Run("no-nes", func(t *testing.T) {
		rep := checkInProcess(t, 5*time.Second, connectTestAgent(testagent.Config{NoNES: true}))
		// No NES and no sessions either (the test agent answers session/new "method not found").
		if rep.OK || rep.Failure == nil || *rep.Failure != failNoNES || *rep.Step != "session/new" || rep.Agent == nil || rep.Agent.NES != nil {
			t.Fatalf("report %s", rep.JSON())
		}
		if rep.Timings.NESStartMs != nil {
			t.Errorf("nes/start was timed although it was never sent")
		}
	})
	t.Run("auth-required", func(t *testing.T) {
		rep := checkInProcess(t, 5*time.Second, connectTestAgent(testagent.Config{StartError: acp.NewAuthRequired(map[string]any{"reason": "auth_required"})}))
		if rep.OK || *rep.Failure != failNESStartRefused || rep.Error == nil || rep.Error.Code != -32000 {
			t.Fatalf("report %s", rep.JSON())
		}
		if want := "the agent refused nes/start: -32000 Authentication required (sign in with the agent first)"; rep.Reason != want {
			t.Errorf("reason %q, want %q", rep.Reason, want)
		}
	})
	t.Run("silent", func(t *testing.T) {
		rep := checkInProcess(t, 200*time.Millisecond, func(o acpside.Options) (*acpside.Agent, error) {
			fromAgent, agentOut := io.Pipe()
			agentIn, toAgent := io.Pipe()
			go func() { _, _ = io.Copy(io.Discard, agentIn); _ = agentOut.Close() }()
			return acpside.Connect(fromAgent, toAgent, o), nil
		})
		if rep.OK || *rep.Failure != failInitializeTimeout || rep.Reason != "the agent did not answer initialize within 200ms" || rep.Agent != nil {
			t.Fatalf("report %s", rep.JSON())
		}
	})
	t.Run("interrupted", func(t *testing.T) {
		// signal.NotifyContext cancels with a cause naming the signal; the SDK passes the cause on.
		ctx, cancel := context.WithCancelCause(context.Background())
		time.AfterFunc(100*time.Millisecond, func() { cancel(errors.New("interrupt signal received")) })
		rep := Check(ctx, Run{Command: acpside.Command{Path: "in-process"}, Dir: t.TempDir(), Timeout: 5 * time.Second, Log: zerolog.Nop(),
			Start: func(o acpside.Options) (*acpside.Agent, error) {
				fromAgent, agentOut := io.Pipe()
				agentIn, toAgent := io.Pipe()
				go func() { _, _ = io.Copy(io.Discard, agentIn); _ = agentOut.Close() }()
				return acpside.Connect(fromAgent, toAgent, o), nil
			}})
		if rep.OK || *rep.Failure != failInterrupted || rep.Error != nil {
			t.Fatalf("report %s", rep.JSON())
		}
	})
	t.Run("hangs-up", func(t *testing.T) {
		rep := checkInProcess(t, 5*time.Second, func(o acpside.Options) (*acpside.Agent, error) {
			fromAgent, agentOut := io.Pipe()
			agentIn, toAgent := io.Pipe()
			go func() {
				// Read the initialize request, then go away.
				_, _ = bufio.NewReader(agentIn).ReadString('\n')
				_ = agentOut.Close()
				_, _ = io.Copy(io.Discard, agentIn)
			}()
			return acpside.Connect(fromAgent, toAgent, o), nil
		})
		if rep.OK || *rep.Failure != failExited || rep.Reason != "the agent closed its connection before answering initialize" {
			t.Fatalf("report %s", rep.JSON())
		}
	})
	t.Run("not-found", func(t *testing.T) {
		cmd := acpside.Command{Path: "acp-lsp-bridge-no-such-agent"}
		rep := Check(context.Background(), Run{Command: cmd, Dir: t.TempDir(), Timeout: time.Second, Log: zerolog.Nop(),
			Start: func(o acpside.Options) (*acpside.Agent, error) { return acpside.Start(cmd, o) }})
		if rep.OK || *rep.Failure != failNotFound || !strings.Contains(rep.Reason, `"acp-lsp-bridge-no-such-agent" not found`) {
			t.Fatalf("report %s", rep.JSON())
		}
	})
}

func TestDoctorAgentError(t *testing.T) {
	for _, tc := range []struct {
		err   error
		agent bool
	}{
		{acp.NewMethodNotFound("nes/start"), true},
		{acp.NewInternalError(map[string]any{"error": "model overloaded"}), true},
		{acp.NewInternalError(map[string]any{"error": "peer disconnected before response"}), false},
		{acp.NewInternalError(map[string]any{"error": "write |1: broken pipe"}), false},
		{acp.NewInternalError(map[string]any{"error": "io: read/write on closed pipe"}), false},
		{acp.NewInternalError(map[string]any{"error": "the model's pipe is broken"}), true},
		{acp.NewInternalError(map[string]any{"error": context.DeadlineExceeded.Error()}), false},
		{acp.NewRequestCancelled(map[string]any{"error": context.Canceled.Error()}), false},
		{context.DeadlineExceeded, false},
	} {
		if got := agentError(tc.err) != nil; got != tc.agent {
			t.Errorf("%v: agent's own error %v, want %v", tc.err, got, tc.agent)
		}
	}
}

func TestCollector(t *testing.T) {
	c := newCollector()
	for i := range stderrLines + 2 {
		c.event(acpside.Event{Kind: acpside.EventStderr, Line: fmt.Sprintf("line %d", i), At: time.Now()})
	}
	for _, line := range []string{"Welcome!", "Loading…", "Ready"} {
		c.event(acpside.Event{Kind: acpside.EventFault, Fault: acpside.FaultNotJSON, Line: line})
	}
	c.event(acpside.Event{Kind: acpside.EventFault, Fault: acpside.FaultUnknownNotification, Method: "x/y"})
	c.event(acpside.Event{Kind: acpside.EventExited, Status: "exit status 3"})
	c.event(acpside.Event{Kind: acpside.EventExited, Status: "exit status 4"})
	tail := c.stderrTail()
	if len(tail) != stderrLines || tail[0] != "line 2" || tail[len(tail)-1] != "line 21" {
		t.Errorf("stderr tail %q", tail)
	}
	if s := c.waitExit(time.Second); s != "exit status 3" {
		t.Errorf("exit status %q", s)
	}
	if w := c.stdoutWarning(); w != `the agent wrote 3 lines to stdout that are not JSON (ignored), the first: "Welcome!"` {
		t.Errorf("stdout warning %q", w)
	}
	if newCollector().stdoutWarning() != "" {
		t.Error("a stdout warning without any bad line")
	}
	if s := newCollector().waitExit(10 * time.Millisecond); s != "" {
		t.Errorf("exit status %q before any exit", s)
	}
}

// TestHandler: doctor answers the agent's requests to the client as the bridge would without an
// editor.
func TestHandler(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.go"), []byte("package a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".env"), []byte("KEY=secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ex, _ := workspace.NewExcludes(true, nil)
	h := handler(workspace.New([]string{dir}, ex))
	call := func(method string, params any) (string, *acp.RequestError) {
		b, _ := json.Marshal(params)
		res, rerr := h(context.Background(), method, b)
		out, _ := json.Marshal(res)
		return string(out), rerr
	}
	if got, err := call(acp.ClientMethodFsReadTextFile, map[string]any{"sessionId": "s", "path": filepath.Join(dir, "a.go")}); err != nil || got != `{"content":"package a\n"}` {
		t.Errorf("read inside the workspace: %s %v", got, err)
	}
	if _, err := call(acp.ClientMethodFsReadTextFile, map[string]any{"sessionId": "s", "path": filepath.Join(dir, "..", "x")}); err == nil {
		t.Error("read outside the workspace succeeded")
	}
	if got, err := call(acp.ClientMethodFsReadTextFile, map[string]any{"sessionId": "s", "path": filepath.Join(dir, ".env")}); err == nil || !strings.Contains(err.Error(), `exclusion glob \".env\"`) {
		t.Errorf("read of a secret: %s %v", got, err)
	}
	// A link inside the folder to a file elsewhere is elsewhere.
	secret := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(secret, []byte("secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(dir, "link.txt")); err != nil {
		t.Logf("no symlink here (%v): its case is left out", err)
	} else if got, err := call(acp.ClientMethodFsReadTextFile, map[string]any{"sessionId": "s", "path": filepath.Join(dir, "link.txt")}); err == nil {
		t.Errorf("read through a link to a file outside the workspace: %s", got)
	}
	if _, err := call(acp.ClientMethodFsWriteTextFile, map[string]any{"sessionId": "s", "path": filepath.Join(dir, "a.go"), "content": "x"}); err == nil {
		t.Error("doctor wrote a file")
	}
	if got, err := call(acpside.MethodOpenDocuments, nil); err != nil || got != `{"documents":[]}` {
		t.Errorf("open documents: %s %v", got, err)
	}
	if got, err := call(acpside.MethodActiveDocument, nil); err != nil || got != `{"document":null}` {
		t.Errorf("active document: %s %v", got, err)
	}
}

// TestDoctorSaysWhatIsKeptBack: the report names the files of the workspace that the exclusion
// globs keep from the agent, each with its glob, in both forms, and never their text.
func TestDoctorSaysWhatIsKeptBack(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, map[string]string{"main.go": "package main\n", ".env": "KEY=sk-live-1\n", "certs/server.pem": "PEM\n", "notes/todo.txt": "x\n"})
	ex, _ := workspace.NewExcludes(true, []string{"notes/**"})
	rep := Check(context.Background(), Run{Command: acpside.Command{Path: "in-process"}, Dir: dir, Timeout: 5 * time.Second, Log: zerolog.Nop(), Version: "test", Start: connectTestAgent(testagent.Config{}), Excludes: ex})
	if !rep.OK {
		t.Fatalf("report %s", rep.JSON())
	}
	human := rep.Human(false)
	if !strings.Contains(human, "secrets    kept from the agent: .env (.env), certs/server.pem (*.pem), notes/ (notes/**)") {
		t.Errorf("the report does not list what is kept back:\n%s", human)
	}
	js := string(rep.JSON())
	if !strings.Contains(js, `{"path": ".env", "glob": ".env"}`) && !strings.Contains(js, `"path": ".env",`) {
		t.Errorf("--json lacks the held back files:\n%s", js)
	}
	if strings.Contains(js+human, "sk-live") {
		t.Error("the report holds a secret's text")
	}
	rep = Check(context.Background(), Run{Command: acpside.Command{Path: "in-process"}, Dir: dir, Timeout: 5 * time.Second, Log: zerolog.Nop(), Version: "test", Start: connectTestAgent(testagent.Config{})})
	if !strings.Contains(rep.Human(false), "secrets    none: the agent may read every file") {
		t.Errorf("without exclusions:\n%s", rep.Human(false))
	}
}

// TestDoctorPromptedAgent: an agent without NES but with sessions is reported as asked through
// prompts, in its read-only mode; --prompt asks one suggestion on the sample and reports it, and
// the text report says so, with the cost.
func TestDoctorPromptedAgent(t *testing.T) {
	start := connectTestAgent(testagent.Config{NoNES: true, Sessions: true, Rules: []testagent.Rule{{Find: "return su", Replace: "return sum"}}})
	rep := Check(context.Background(), Run{Command: acpside.Command{Path: "in-process"}, Dir: t.TempDir(), Timeout: 5 * time.Second, Log: zerolog.Nop(), Version: "test", Start: start, Sample: true})
	if !rep.OK || rep.Prompts == nil || rep.Prompts.Mode != "read-only" {
		t.Fatalf("report %s", rep.JSON())
	}
	if s := rep.Sample; s == nil || s.Error != nil || s.Suggestions != 1 || s.First == nil || *s.First != "m" || s.Ms == nil {
		t.Errorf("sample %s", rep.JSON())
	}
	human := rep.Human(false)
	if rep.Agent.PositionEncodingSource != "bridge" {
		t.Errorf("positionEncodingSource %q for an agent asked through prompts, want bridge", rep.Agent.PositionEncodingSource)
	}
	for _, want := range []string{"encoding   utf-8 (the bridge's own: the agent is asked through prompts", "prompts    asked through session/prompt, in mode read-only", "billed to the agent's model", "sample     answered in", `the first writes "m"`, "OK         the agent can give suggestions through prompts"} {
		if !strings.Contains(human, want) {
			t.Errorf("the report lacks %q:\n%s", want, human)
		}
	}
	// Without --prompt, no prompt is sent.
	rep = Check(context.Background(), Run{Command: acpside.Command{Path: "in-process"}, Dir: t.TempDir(), Timeout: 5 * time.Second, Log: zerolog.Nop(), Version: "test", Start: start})
	if !rep.OK || rep.Sample != nil {
		t.Errorf("without --prompt: %s", rep.JSON())
	}
}

// TestSampleAdviceReadsTheStatusNotThePort: the advice goes by the status the agent wrote, never
// by digits of the server's address (a port holding 404 or 500).
func TestSampleAdviceReadsTheStatusNotThePort(t *testing.T) {
	for _, tc := range []struct{ words, want string }{
		{"model: http://127.0.0.1:40467/v1/chat/completions answered 500 Internal Server Error: boom", "HTTP 5xx"},
		{"model: http://127.0.0.1:50404/api/chat answered 404 Not Found: model \"q\" not found, try pulling it first", "ollama pull"},
		{"model: http://127.0.0.1:50099/v1/completions answered 404 Not Found: 404 page not found", "no such endpoint"},
		{"model: request to http://127.0.0.1:40404/v1/completions: dial tcp 127.0.0.1:40404: connect: connection refused", "nothing answers"},
	} {
		if got := sampleAdvice(acpside.ReasonBackendError, tc.words); !strings.Contains(got, tc.want) {
			t.Errorf("%q: advice %q, want it to say %q", tc.words, got, tc.want)
		}
	}
}
