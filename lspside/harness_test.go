package lspside_test

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"
	"github.com/rs/zerolog"
	"go.lsp.dev/jsonrpc2"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/acpside"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/testagent"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/testutil"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/lspside"
)

// editor is a fake editor talking LSP to an in-process bridge, which talks ACP to an in-process
// scripted agent, all over pipes.
type editor struct {
	t      testing.TB
	conn   jsonrpc2.Conn
	agent  *testagent.Agent
	exit   chan int
	toSrv  *io.PipeWriter
	logBuf *testutil.SyncBuffer

	root   string // the workspace folder's URI; initialize sends it
	answer string // what the user picks in window/showMessageRequest
	// hold, when set, delays the answer to window/showMessageRequest until it is closed.
	hold chan struct{}

	mu        sync.Mutex
	messages  []string // window/showMessage texts
	logged    []string // window/logMessage texts
	shown     []json.RawMessage
	applied   []json.RawMessage
	questions []string
	cancels   []json.RawMessage // $/cancelRequest from the bridge
	starts    int               // agents started
	kill      func()            // ends the connection to the current agent, as a crash would
	served    chan struct{}     // closed when the current agent's connection has ended
	silent    map[string]bool   // requests this editor never answers
	notified  chan struct{}     // closed, and replaced, at each window/showMessage or logMessage
}

type harnessOpts struct {
	noAgent  bool
	cfg      lspside.Config
	agentCfg testagent.Config
	// quietLog keeps only warnings and errors in the in-memory log (long tests).
	quietLog bool
}

func newEditor(t testing.TB, o harnessOpts) *editor {
	t.Helper()
	e := &editor{t: t, exit: make(chan int, 1), logBuf: &testutil.SyncBuffer{}, root: "file:///work/project", notified: make(chan struct{})}
	cfg := o.cfg
	level := zerolog.DebugLevel
	if o.quietLog {
		level = zerolog.WarnLevel
	}
	cfg.Log = zerolog.New(e.logBuf).Level(level)
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
	e.conn = jsonrpc2.NewConn(jsonrpc2.NewStream(pipeRWC{srvOutR, srvInW}))
	never := make(chan struct{})
	t.Cleanup(func() { close(never) })
	e.conn.Go(context.Background(), func(ctx context.Context, req *jsonrpc2.Request) (any, error) {
		e.mu.Lock()
		silent := e.silent[req.Method()]
		e.mu.Unlock()
		if silent && req.IsCall() {
			jsonrpc2.Async(ctx) // some editors never answer some requests
			<-never
			return nil, nil
		}
		if req.Method() == "window/showMessageRequest" {
			jsonrpc2.Async(ctx) // the user thinks; the editor keeps working
			var p struct {
				Message string `json:"message"`
			}
			_ = json.Unmarshal(req.Params(), &p)
			e.mu.Lock()
			e.questions = append(e.questions, p.Message)
			hold, answer := e.hold, e.answer
			e.mu.Unlock()
			if hold != nil {
				<-hold
			}
			if answer == "" {
				return nil, nil
			}
			return map[string]any{"title": answer}, nil
		}
		e.mu.Lock()
		defer e.mu.Unlock()
		params := json.RawMessage(append([]byte(nil), req.Params()...))
		switch req.Method() {
		case "window/logMessage":
			var p struct {
				Message string `json:"message"`
			}
			_ = json.Unmarshal(params, &p)
			e.logged = append(e.logged, p.Message)
			close(e.notified)
			e.notified = make(chan struct{})
		case "window/showMessage":
			var p struct {
				Message string `json:"message"`
			}
			_ = json.Unmarshal(params, &p)
			e.messages = append(e.messages, p.Message)
			close(e.notified)
			e.notified = make(chan struct{})
		case "$/cancelRequest":
			e.cancels = append(e.cancels, params)
		case "window/showDocument":
			e.shown = append(e.shown, params)
			return map[string]any{"success": true}, nil
		case "workspace/applyEdit":
			e.applied = append(e.applied, params)
			return map[string]any{"applied": true}, nil
		}
		return nil, nil
	})
	t.Cleanup(func() {
		srvInW.Close()
		select {
		case <-e.exit:
		case <-time.After(10 * time.Second):
			t.Error("the bridge did not end after the editor closed its stream")
		}
		if t.Failed() {
			t.Logf("bridge log:\n%s", e.logBuf.String())
		}
	})
	return e
}

type pipeRWC struct {
	io.Reader
	io.WriteCloser
}

func (e *editor) call(method string, params, result any) error {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := e.conn.Call(ctx, method, params, result)
	return err
}

func (e *editor) mustCall(method string, params, result any) {
	e.t.Helper()
	if err := e.call(method, params, result); err != nil {
		e.t.Fatalf("%s: %v", method, err)
	}
}

func (e *editor) notify(method string, params any) {
	e.t.Helper()
	if err := e.conn.Notify(context.Background(), method, params); err != nil {
		e.t.Fatalf("%s: %v", method, err)
	}
}

// initialize runs initialize/initialized offering encodings and returns the negotiated one.
func (e *editor) initialize(encodings ...string) string {
	e.t.Helper()
	caps := map[string]any{"window": map[string]any{"showDocument": map[string]any{"support": true}}}
	if encodings != nil {
		caps["general"] = map[string]any{"positionEncodings": encodings}
	}
	return e.initializeWith(caps)
}

// initializeWith runs initialize/initialized with these client capabilities.
func (e *editor) initializeWith(caps map[string]any) string {
	e.t.Helper()
	params := map[string]any{
		"processId":        nil,
		"rootUri":          e.root,
		"workspaceFolders": []any{map[string]any{"uri": e.root, "name": "project"}},
		"capabilities":     caps,
	}
	var res struct {
		Capabilities struct {
			PositionEncoding string `json:"positionEncoding"`
		} `json:"capabilities"`
	}
	e.mustCall("initialize", params, &res)
	e.notify("initialized", map[string]any{})
	return res.Capabilities.PositionEncoding
}

func (e *editor) open(uri, text string) {
	e.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": uri, "languageId": "go", "version": 1, "text": text,
	}})
}

type pos struct{ line, char int }

type lspPosition struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

func lspPos(p pos) map[string]any { return map[string]any{"line": p.line, "character": p.char} }

func (e *editor) change(uri string, version int, changes ...map[string]any) {
	e.notify("textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": uri, "version": version},
		"contentChanges": changes,
	})
}

func rangeChange(start, end pos, text string) map[string]any {
	return map[string]any{"range": map[string]any{"start": lspPos(start), "end": lspPos(end)}, "text": text}
}

type inlineItem struct {
	InsertText string `json:"insertText"`
	Range      *struct {
		Start lspPosition `json:"start"`
		End   lspPosition `json:"end"`
	} `json:"range"`
	Command *struct {
		Command   string `json:"command"`
		Arguments []any  `json:"arguments"`
	} `json:"command"`
}

func (e *editor) inline(uri string, p pos) ([]inlineItem, error) {
	var res struct {
		Items []inlineItem `json:"items"`
	}
	err := e.call("textDocument/inlineCompletion", map[string]any{
		"textDocument": map[string]any{"uri": uri},
		"position":     lspPos(p),
		"context":      map[string]any{"triggerKind": 2},
	}, &res)
	return res.Items, err
}

// waitAgent waits until the agent has received a message for which match is true.
func (e *editor) waitAgent(what string, match func(testagent.Message) bool) testagent.Message {
	e.t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		ch := e.theAgent().Changed()
		for _, m := range e.theAgent().Received() {
			if match(m) {
				return m
			}
		}
		select {
		case <-ch:
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

func (e *editor) shownMessages() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.messages...)
}

// waitMirror waits until the agent's mirror of uri equals want.
func (e *editor) waitMirror(uri, want string) {
	e.t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		ch := e.theAgent().Changed()
		if got, _ := e.theAgent().Mirror(uri); got == want {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			got, _ := e.theAgent().Mirror(uri)
			e.t.Fatalf("agent mirror of %s:\n got %q\nwant %q", uri, got, want)
		}
	}
}

// waitMessage waits for a window/showMessage containing substr.
func (e *editor) waitMessage(substr string) {
	e.t.Helper()
	e.waitText("window/showMessage", e.shownMessages, substr)
}

func (e *editor) loggedMessages() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.logged...)
}

// waitReady waits for the bridge's word that the agent is ready, the window/logMessage
// "acp-lsp-bridge: NAME is ready (...)", as a user would before expecting suggestions: requests
// before it answer empty at once.
func (e *editor) waitReady() {
	e.t.Helper()
	e.waitText("window/logMessage", e.loggedMessages, " is ready (")
}

// waitText waits until one of the texts list returns contains substr.
func (e *editor) waitText(what string, list func() []string, substr string) {
	e.t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		e.mu.Lock()
		ch := e.notified
		e.mu.Unlock()
		for _, m := range list() {
			if strings.Contains(m, substr) {
				return
			}
		}
		select {
		case <-ch:
		case <-deadline:
			e.t.Fatalf("no %s containing %q; got %q", what, substr, list())
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
