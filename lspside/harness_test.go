package lspside_test

import (
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"

	"context"
	"encoding/json"
	"io"
	"sync"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"
	"github.com/rs/zerolog"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/acpside"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testagent"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testutil"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/lspside"
)

// editor is the fake editor (internal/test/fakeeditor) talking LSP to an in-process bridge, which talks
// ACP to an in-process scripted agent, all over pipes.
type editor struct {
	*fakeeditor.Env
	t      testing.TB
	exit   chan int
	toSrv  *io.PipeWriter
	logBuf *testutil.SyncBuffer
	root   string // the workspace folder's URI; initialize sends it

	mu sync.Mutex
	// answer is what the user picks in window/showMessageRequest; hold, when set, delays the
	// answer until it is closed.
	answer string
	hold   chan struct{}
	agent  *testagent.Agent
	starts int           // agents started
	kill   func()        // ends the connection to the current agent, as a crash would
	served chan struct{} // closed when the current agent's connection has ended
}

type harnessOpts struct {
	noAgent  bool
	cfg      lspside.Config
	agentCfg testagent.Config
	// quietLog keeps only warnings and errors in the in-memory log (long tests).
	quietLog bool
	// silent lists the requests this editor never answers.
	silent []string
}

func newEditor(t testing.TB, o harnessOpts) *editor {
	t.Helper()
	e := &editor{t: t, exit: make(chan int, 1), logBuf: &testutil.SyncBuffer{}, root: "file:///work/project"}
	cfg := o.cfg
	level := zerolog.DebugLevel
	if o.quietLog {
		level = zerolog.WarnLevel
	}
	cfg.Log = zerolog.New(e.logBuf).Level(level)
	if cfg.CodeActionWait == 0 {
		// Tests that script the agent answer when they choose: code actions wait for it. Those
		// of the wait itself set it.
		cfg.CodeActionWait = time.Minute
	}
	cfg.Version = "test"
	if !o.noAgent {
		e.agent = testagent.New(o.agentCfg)
		cfg.ConnectAgent = func(opts acpside.Options) (*acpside.Agent, error) {
			toAgentR, toAgentW := io.Pipe()
			fromAgentR, fromAgentW := io.Pipe()
			e.mu.Lock()
			if e.starts > 0 {
				// A restart: a new agent process would know nothing of the old one.
				e.agent = testagent.New(o.agentCfg)
			}
			e.starts++
			agent := e.agent
			e.kill = func() {
				toAgentR.CloseWithError(io.ErrUnexpectedEOF)
				fromAgentW.CloseWithError(io.ErrUnexpectedEOF)
			}
			served := make(chan struct{})
			e.served = served
			e.mu.Unlock()
			go func() {
				agent.Serve(toAgentR, fromAgentW)
				fromAgentW.Close()
				close(served)
			}()
			return acpside.Connect(fromAgentR, toAgentW, opts), nil
		}
	}
	srvInR, srvInW := io.Pipe()
	srvOutR, srvOutW := io.Pipe()
	e.toSrv = srvInW
	go func() {
		e.exit <- lspside.Serve(context.Background(), srvInR, srvOutW, cfg)
		srvOutW.Close()
	}()
	ed := fakeeditor.Connect(srvOutR, srvInW, fakeeditor.Options{
		Silent:  o.silent,
		Timeout: 10 * time.Second,
		Answer: func(string, []string) string {
			e.mu.Lock()
			hold, answer := e.hold, e.answer
			e.mu.Unlock()
			if hold != nil {
				<-hold
			}
			return answer
		},
	})
	e.Env = fakeeditor.NewEnv(t, ed)
	t.Cleanup(func() {
		srvInW.Close()
		select {
		case <-e.exit:
		case <-time.After(10 * time.Second):
			t.Error("the bridge did not end after the editor closed its stream")
		}
		_ = ed.Close()
		if t.Failed() {
			t.Logf("bridge log:\n%s", e.logBuf.String())
		}
	})
	return e
}

// initialize runs initialize and initialized with the test workspace, offering these encodings
// (none: nothing offered), and returns the one the bridge chose.
func (e *editor) initialize(encodings ...string) string {
	e.t.Helper()
	return e.Initialize(e.root, encodings...)
}

// initializeWith runs initialize and initialized with the test workspace and these client
// capabilities (over the fake editor's defaults).
func (e *editor) initializeWith(caps map[string]any) string {
	e.t.Helper()
	return e.InitializeWith(fakeeditor.InitParams{Root: e.root, Capabilities: caps}).Capabilities.PositionEncoding
}

// waitAgent waits until the agent has received a message for which match is true.
func (e *editor) waitAgent(what string, match func(testagent.Message) bool) testagent.Message {
	e.t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		ag := e.theAgent() // one agent per look, as in waitMirror
		ch := ag.Changed()
		for _, m := range ag.Received() {
			if match(m) {
				return m
			}
		}
		select {
		case <-ch:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			e.t.Fatalf("the agent never received %s; it received %v", what, methods(e.theAgent().Received()))
		}
	}
}

func methods(ms []testagent.Message) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Method
	}
	return out
}

func method(name string) func(testagent.Message) bool {
	return func(m testagent.Message) bool { return m.Method == name }
}

// rejectOf matches nes/reject for id with reason.
func rejectOf(id string, reason acp.UnstableNesRejectReason) func(testagent.Message) bool {
	return func(m testagent.Message) bool {
		if m.Method != "nes/reject" {
			return false
		}
		var p acp.UnstableRejectNesNotification
		_ = json.Unmarshal(m.Params, &p)
		return p.Id == id && p.Reason != nil && *p.Reason == reason
	}
}

// ended returns, for each suggestion id, how many times it ended (accept or reject).
func ended(ms []testagent.Message) map[string]int {
	out := map[string]int{}
	for _, m := range ms {
		if m.Method == "nes/accept" || m.Method == "nes/reject" {
			var p struct {
				ID string `json:"id"`
			}
			_ = json.Unmarshal(m.Params, &p)
			out[p.ID]++
		}
	}
	return out
}

// waitMirror waits until the agent's mirror of uri equals want.
func (e *editor) waitMirror(uri, want string) {
	e.t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		// One agent per look: a restart may replace it between two calls to theAgent, and the
		// new one's changes would not wake a wait on the old one's channel (hence the tick too).
		ag := e.theAgent()
		ch := ag.Changed()
		if got, _ := ag.Mirror(uri); got == want {
			return
		}
		select {
		case <-ch:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			got, _ := e.theAgent().Mirror(uri)
			e.t.Fatalf("agent mirror of %s:\n got %q\nwant %q", uri, got, want)
		}
	}
}

// setAnswer sets what the user picks in the next window/showMessageRequest.
func (e *editor) setAnswer(a string) {
	e.mu.Lock()
	e.answer = a
	e.mu.Unlock()
}

// theAgent is the agent the bridge talks to now (a restart replaces it).
func (e *editor) theAgent() *testagent.Agent {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.agent
}
