// Package lspside is the language server the editor talks to. It owns the editor-facing state (the
// document mirror, the negotiated encoding, the live suggestions) and orchestrates every request
// end to end: a request takes a snapshot in wire order, then runs asynchronously.
//
// One file per LSP method family: lifecycle.go (initialize, shutdown, exit), sync.go (document
// synchronization), inline.go (textDocument/inlineCompletion), command.go
// (workspace/executeCommand), cancel.go ($/cancelRequest), agent.go (the agent's start and
// status), suggestions.go (the lifecycle of suggestion ids).
package lspside

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/acpside"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/document"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/editorstate"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/wiretrace"
)

// Commands the bridge implements through workspace/executeCommand.
const (
	// CommandAccept [id] takes a suggestion: nes/accept, and the cursor to where it leads.
	CommandAccept = "acp-lsp-bridge.accept"
	// CommandReject [id] | [] | [{uri}] dismisses suggestions: nes/reject "rejected".
	CommandReject = "acp-lsp-bridge.reject"
	// CommandSuggest [{uri, position}] asks for a suggestion by hand and offers the best one.
	CommandSuggest = "acp-lsp-bridge.suggest"
)

// Config configures a server.
type Config struct {
	// Agent is the agent to start; when nil, initializationOptions.agent is used, and without it
	// DefaultAgent (the bridge's built-in agent).
	Agent        *acpside.Command
	DefaultAgent *acpside.Command
	// Version is reported in serverInfo and to the agent.
	Version string
	Log     zerolog.Logger
	// SuggestTimeout bounds one nes/suggest; zero means initializationOptions.suggestTimeout,
	// else DefaultSuggestTimeout (slow.go).
	SuggestTimeout time.Duration
	// StuckAfter is how long the agent may read nothing of what the bridge sends it before it is
	// ended and started again (acpside.Options.StuckAfter); zero means acpside.DefaultStuckAfter.
	StuckAfter time.Duration
	// StartTimeout bounds the agent's initialize and nes/start; zero means 30 s.
	StartTimeout time.Duration
	// ClientWait bounds the bridge's own requests to the editor (window/showDocument,
	// workspace/applyEdit: some editors never answer them); zero means 10 s.
	ClientWait time.Duration
	// NoTypeThrough turns off answering inline requests from the suggestion the user is typing
	// through (inline.go); it exists for comparison in tests.
	NoTypeThrough bool
	// CoalesceDelay is how long a request that supersedes one still in flight for the same
	// document, asked for less than CoalesceDelay before it (a burst: key repeat, a fast typist),
	// waits before asking the agent (a newer one in that time replaces it); zero means 75 ms
	// (longer than the gap between keys of a fast typist). Any other request is sent at once: the
	// one after a typist's last key is not delayed.
	CoalesceDelay time.Duration
	// Delay is how long a document must be still before an automatic request asks the agent
	// (automatic.go); zero means initializationOptions.delay, else none for an agent with Next
	// Edit Suggestions and PromptDebounce for one asked through prompts.
	Delay time.Duration
	// AskAhead is how long a document must be still after a change before the bridge asks the
	// agent itself, at the end of that change, before the editor asks (ahead.go); 0: never.
	// AskAheadBilled asks ahead agents billed per request too.
	AskAhead       time.Duration
	AskAheadBilled bool
	// CodeActionWait is the longest a code action request waits for the agent (codeaction.go):
	// editors open their menu once every language server has answered, so a slow agent would
	// hold back the language's own fixes. After it the request is answered with what is live,
	// and the agent's later answer stays live for the next request. Zero means
	// DefaultCodeActionWait.
	CodeActionWait time.Duration
	// AutomaticOff starts with automatic suggestions off (automatic.go), as
	// initializationOptions.automatic false does.
	AutomaticOff bool
	// RestartDelays are the waits before restarting an agent that exited: the first exit waits
	// RestartDelays[0], and so on, the last repeating; nil means 0.5 s, 1 s, 2 s, 4 s, 8 s.
	RestartDelays []time.Duration
	// RestartLimit is how many exits within RestartWindow are restarted before the bridge gives
	// up and tells the user; zero means 5.
	RestartLimit int
	// UserWait bounds a question to the user (window/showMessageRequest: permission, sign-in, a
	// manual suggestion); zero means 2 minutes. Unanswered, the question counts as declined.
	UserWait time.Duration
	// ConnectAgent, when set, replaces starting a process: tests connect an in-process agent.
	ConnectAgent func(acpside.Options) (*acpside.Agent, error)
	// Trace, when set, records every message on both wires.
	Trace *wiretrace.Writer
	// Prompts is how an agent without Next Edit Suggestions is asked (prompts.go): PromptsExplicit,
	// PromptsAuto or PromptsOff; "" means initializationOptions.prompts, else PromptsExplicit.
	Prompts string
	// PromptTimeout bounds a request answered through a prompt; zero means
	// initializationOptions.promptTimeout, else DefaultPromptTimeout (slow.go).
	PromptTimeout time.Duration
	// PromptDebounce is how long an automatic request waits before it is prompted (PromptsAuto);
	// a newer one in that time replaces it. Zero means DefaultPromptDebounce.
	PromptDebounce time.Duration
	// PromptTurns is how many prompts one session of the agent takes before a new one is opened;
	// zero means acpside.DefaultPromptTurns.
	PromptTurns int
	// Exclude are globs of files kept from the agent besides workspace.DefaultExcludes (which
	// NoDefaultExcludes clears); initializationOptions.exclude and .defaultExcludes add to them
	// (secrets.go).
	Exclude           []string
	NoDefaultExcludes bool
	// MaxEditorMessageBytes is the largest message read from the editor; a larger one ends the
	// connection before its memory is taken (frames.go). Zero means DefaultMaxEditorMessageBytes.
	MaxEditorMessageBytes int
	// MaxMessageBytes is the largest message the agent is sent; a document whose text does not
	// fit is kept from it (toolarge.go). Zero means DefaultMaxMessageBytes.
	MaxMessageBytes int

	// started, when set, is given the server as Serve starts it (tests look at its state).
	started func(*Server)
}

type serverState int

const (
	stateNew serverState = iota
	stateInitialized
	stateShutdown
)

// Server is one editor connection.
type Server struct {
	// resyncs counts the documents given to the agent again after it said its copy differed.
	resyncs atomic.Int64

	cfg    Config
	log    zerolog.Logger
	conn   jsonrpc2.Conn
	stream *editorStream // the editor's messages (releaseReader marks a new reader)
	docs   *document.Store
	sugs   *tracker
	// ed records what the user does (focus, edits, cursor moves, diagnostics) for the context of
	// nes/suggest and the agent's editor-state questions.
	ed *editorstate.State

	// fwd orders everything that reaches the agent: document events and the agent becoming ready
	// (which replays the open documents) never interleave.
	fwd sync.Mutex

	// life is the connection's serverState: new, initialized, shut down.
	life atomic.Int32
	// sess is what initialize negotiated (nil before it), swapped whole: read without a lock.
	sess atomic.Pointer[session]
	// ws is the workspace, computed at initialize and when its folders change, swapped whole.
	ws atomic.Pointer[workspaceInfo]
	// reqs owns each document's request state (docrequests.go); calls the editor's requests
	// that $/cancelRequest can cancel.
	reqs *docRequests
	// health is what the last requests said of the agent's ability to answer: timeouts, and the
	// failures of its service (health.go).
	health health
	// still is when each document last changed: the delay counts from it (automatic.go).
	still stillness
	// ahead are the requests the bridge asked before the editor (ahead.go).
	ahead aheads
	// growth are the answers the bridge follows while the model writes them (growing.go).
	growth growths
	// editorAsksItself is set once the editor has asked for a suggestion while the user types (an
	// automatic inline completion or completion request), or said it does
	// (initializationOptions.asksItself): only then does the bridge ask ahead.
	editorAsksItself atomic.Bool
	calls            calls
	exited           chan struct{}
	exitOnce         sync.Once
	exitCode         atomic.Int32
	// sup owns the agent's life (supervisor.go).
	sup *supervisor
	// secret are the open documents kept from the agent (secrets.go).
	secret heldBack
	// unseen are the documents opened while no agent was ready, as they were opened: the agent
	// that becomes ready gets that text and then what changed since (catchup.go). Under fwd.
	unseen map[string]*document.Snapshot
	// asks are the code actions' nes/suggest in flight (codeaction.go).
	asks pendingAsks
	// status sends NotifyStatus when the state changes (status.go), from initialized until
	// served is closed, as Serve returns.
	status     *statusPublisher
	statusOnce sync.Once
	served     chan struct{}
}

// Serve runs the language server on in/out until the editor sends exit or closes the stream. It
// returns the process exit code: 0 after shutdown, 1 otherwise (the LSP rule).
func Serve(ctx context.Context, in io.Reader, out io.Writer, cfg Config) int {
	if cfg.StartTimeout == 0 {
		cfg.StartTimeout = 30 * time.Second
	}
	if cfg.ClientWait == 0 {
		cfg.ClientWait = 10 * time.Second
	}
	if cfg.CoalesceDelay == 0 {
		cfg.CoalesceDelay = 75 * time.Millisecond
	}
	if cfg.RestartDelays == nil {
		cfg.RestartDelays = []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}
	}
	if cfg.RestartLimit == 0 {
		cfg.RestartLimit = 5
	}
	if cfg.UserWait == 0 {
		cfg.UserWait = 2 * time.Minute
	}
	if cfg.PromptDebounce == 0 {
		cfg.PromptDebounce = DefaultPromptDebounce
	}
	if cfg.CodeActionWait == 0 {
		cfg.CodeActionWait = DefaultCodeActionWait
	}
	s := &Server{
		cfg:    cfg,
		log:    cfg.Log,
		docs:   document.NewStore(),
		reqs:   newDocRequests(),
		exited: make(chan struct{}),
		status: newStatusPublisher(),
		served: make(chan struct{}),
	}
	defer close(s.served)
	s.reqs.changed = s.status.changed
	s.exitCode.Store(1)
	if cfg.AutomaticOff {
		s.reqs.setSwitch("", switchDisable)
	}
	s.sup = newSupervisor(cfg.Log, cfg.RestartLimit, RestartWindow)
	s.sup.changed = s.status.changed
	s.sugs = newTracker(s)
	s.ed = editorstate.New(editorstate.Limits{})
	if cfg.Trace != nil {
		in = io.TeeReader(in, cfg.Trace.Frames(wiretrace.EditorToBridge))
		out = io.MultiWriter(out, cfg.Trace.Frames(wiretrace.BridgeToEditor))
	}
	if cfg.started != nil {
		cfg.started(s)
	}
	s.stream = newEditorStream(in, out, cfg.MaxEditorMessageBytes)
	s.conn = jsonrpc2.NewConn(&tolerantStream{Stream: s.stream, log: cfg.Log})
	s.conn.Go(ctx, s.handle)
	select {
	case <-s.exited:
	case <-s.conn.Done():
		var framing *FramingError
		if err := s.conn.Err(); errors.As(err, &framing) {
			s.log.Error().Str("dir", "editor→bridge").Err(err).Msg("the editor sent a frame the bridge refuses")
		} else if err != nil {
			s.log.Error().Err(err).Msg("editor connection failed")
		} else {
			s.log.Info().Msg("editor closed the connection")
		}
	case <-ctx.Done():
	}
	// Nothing starts any more; an agent starting, waiting or ready is closed.
	s.shutdownAgent()
	return int(s.exitCode.Load())
}

type readWriteCloser struct {
	io.Reader
	io.Writer
}

func (rw readWriteCloser) Close() error {
	var errs []error
	if c, ok := rw.Reader.(io.Closer); ok {
		errs = append(errs, c.Close())
	}
	if c, ok := rw.Writer.(io.Closer); ok {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

// tolerantStream keeps the connection alive through a frame whose body is not a JSON-RPC message:
// it answers it with a parse error (id null), logs it and reads on. jsonrpc2 would otherwise end
// the connection. Framing errors (a broken header) still end it: nothing can be trusted after one.
type tolerantStream struct {
	jsonrpc2.Stream
	log zerolog.Logger
}

func (t *tolerantStream) Read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	for {
		msg, n, err := t.Stream.Read(ctx)
		var rpcErr *jsonrpc2.Error
		if err != nil && errors.As(err, &rpcErr) {
			t.log.Error().Str("dir", "editor→bridge").Err(err).Msg("malformed message from the editor; answered with an error")
			_, _ = t.Stream.Write(ctx, jsonrpc2.NewResponse(jsonrpc2.ID{}, nil, rpcErr))
			continue
		}
		return msg, n, err
	}
}

// Error codes of LSP and JSON-RPC that the bridge answers with.
const (
	codeRequestCancelled = jsonrpc2.Code(-32800)
	codeRequestFailed    = jsonrpc2.Code(-32803)
)

func invalidParams(format string, args ...any) error {
	return jsonrpc2.Errorf(jsonrpc2.InvalidParams, format, args...)
}

// handle is the handler chain. Notifications run inline, in wire order, and never return an
// error (jsonrpc2 would close the connection). Requests that take time take their snapshot here,
// in order, and then release the read loop with jsonrpc2.Async.
func (s *Server) handle(ctx context.Context, req *jsonrpc2.Request) (any, error) {
	method := req.Method()
	s.log.Debug().Str("dir", "editor→bridge").Str("method", method).Bool("call", req.IsCall()).Msg("message")
	s.reading(method, json.RawMessage(req.Params()))
	if !req.IsCall() {
		s.notification(jsonrpc2.DetachContext(ctx), method, json.RawMessage(req.Params()))
		return nil, nil
	}
	state := serverState(s.life.Load())
	switch {
	case method == "initialize":
		if state != stateNew {
			return nil, jsonrpc2.Errorf(jsonrpc2.InvalidRequest, "initialize was already received")
		}
		return s.initialize(ctx, json.RawMessage(req.Params()))
	case state == stateNew:
		return nil, jsonrpc2.Errorf(jsonrpc2.ServerNotInitialized, "the server is not initialized: %s before initialize", method)
	case method == "shutdown":
		return s.shutdown(ctx)
	case state == stateShutdown:
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidRequest, "the server is shutting down: %s after shutdown", method)
	}
	switch method {
	case "textDocument/inlineCompletion":
		return s.inlineCompletion(ctx, req)
	case "textDocument/copilotInlineEdit":
		return s.copilotInlineEdit(ctx, req)
	case "textDocument/codeAction":
		return s.codeAction(ctx, req)
	case "textDocument/completion":
		if s.clientSupports(func(c clientCaps) bool { return c.completion }) {
			return s.completion(ctx, req)
		}
	case "workspace/executeCommand":
		return s.executeCommand(ctx, req)
	case RequestStats:
		return s.stats(), nil
	}
	return nil, jsonrpc2.Errorf(jsonrpc2.MethodNotFound, "method not found: %s", method)
}

func (s *Server) notification(ctx context.Context, method string, params json.RawMessage) {
	if method == "exit" {
		s.exit()
		return
	}
	if serverState(s.life.Load()) != stateInitialized {
		s.log.Debug().Str("method", method).Msg("notification ignored outside the initialized state")
		return
	}
	var err error
	switch method {
	case "initialized":
		s.initialized(ctx)
	case "textDocument/didOpen":
		err = s.didOpen(ctx, params)
	case "textDocument/didChange":
		err = s.didChange(ctx, params)
	case "textDocument/didClose":
		err = s.didClose(ctx, params)
	case "textDocument/didSave":
		err = s.didSave(ctx, params)
	case "$/cancelRequest":
		err = s.cancelRequest(params)
	case "textDocument/didFocus": // Copilot's
		err = s.didFocus(ctx, params)
	case NotifyDidFocus:
		err = s.bridgeDidFocus(ctx, params)
	case NotifyDiagnostics:
		err = s.bridgeDiagnostics(params)
	case NotifyAsking:
		err = s.bridgeAsking(params)
	case "textDocument/didShowInlineEdit": // Copilot's: the client showed an inline edit
		s.log.Debug().Msg("the editor showed an inline edit")
	case "workspace/didChangeWorkspaceFolders":
		err = s.didChangeWorkspaceFolders(params)
	case "$/setTrace", "workspace/didChangeConfiguration":
	default:
		s.log.Debug().Str("method", method).Msg("notification not handled")
	}
	if err != nil {
		s.log.Error().Str("dir", "editor→bridge").Str("method", method).Err(err).Msg("notification failed")
	}
}

// lastCursor is the byte offset of the last request's position in a document, 0 when none.
func (s *Server) lastCursor(uri string) int { return s.reqs.lastCursor(uri) }

// result encodes an LSP result with the protocol package's encoder.
func result(v any) (any, error) {
	b, err := protocol.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode result: %w", err)
	}
	return jsonrpc2.RawMessage(b), nil
}

// logMessage writes to the editor's log of the server (window/logMessage).
func (s *Server) logMessage(ctx context.Context, typ protocol.MessageType, msg string) {
	if err := s.conn.Notify(ctx, "window/logMessage", map[string]any{"type": typ, "message": msg}); err != nil {
		s.log.Debug().Err(err).Msg("window/logMessage")
	}
}

// showMessage tells the user something through window/showMessage.
func (s *Server) showMessage(ctx context.Context, typ protocol.MessageType, msg string) {
	s.log.Info().Str("dir", "bridge→editor").Str("message", msg).Msg("window/showMessage")
	raw, err := protocol.Marshal(protocol.ShowMessageParams{Type: typ, Message: msg})
	if err != nil {
		return
	}
	if err := s.conn.Notify(ctx, "window/showMessage", jsonrpc2.RawMessage(raw)); err != nil {
		s.log.Debug().Err(err).Msg("window/showMessage")
	}
}

// requestStack is about the stack a request for suggestions takes, from the editor's params to
// the agent's decoded answer.
const requestStack = 56 << 10

// releaseReader frees the read loop for the rest of a request that waits (jsonrpc2.Async): a new
// goroutine takes over the reading, and the editor's next request runs on it. Its stack starts
// small and, grown a few kilobytes at a time by the deep calls of the JSON codecs, was copied three
// or four times per request, each copy walking every frame, on the way of the answer. The new
// reader grows it in one step instead (growStack), as it starts, while this request waits for the
// agent.
func (s *Server) releaseReader(ctx context.Context) {
	s.stream.fresh.Store(true)
	jsonrpc2.Async(ctx)
}

// growStack makes the goroutine's stack large enough for a request in one step: one frame this
// large grows it once, while it is still nearly empty.
//
//go:noinline
func growStack() {
	var pad [requestStack]byte
	touchStack(pad[:])
}

// touchStack keeps growStack's array from being optimised away (the array does not escape).
//
//go:noinline
func touchStack(b []byte) { b[len(b)-1] = 1 }
