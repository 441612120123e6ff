// Package acpside is the bridge's connection to the agent: it starts and ends the agent process,
// runs ACP initialize and the NES session (nes/start, nes/close), forwards document events, asks
// for suggestions (nes/suggest) and reports their fate (nes/accept, nes/reject).
package acpside

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	acp "github.com/coder/acp-go-sdk"
	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/rs/zerolog"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
)

// Options configure an agent connection.
type Options struct {
	Log           zerolog.Logger
	ClientName    string
	ClientVersion string
	// Encodings are offered to the agent in this order of preference.
	Encodings []encoding.Kind
	// Kinds lists the suggestion kinds beyond "edit" that the bridge can present; only these are
	// advertised in clientCapabilities.nes.
	Kinds ClientKinds
	// FS advertises fs/read_text_file and fs/write_text_file, which Handler must answer.
	FS bool
	// EditorState advertises workspace/open_documents, workspace/recent_documents and
	// workspace/active_document (the editor-state proposal), which Handler must answer.
	EditorState bool
	// Handler answers the agent's requests to the client; nil answers "method not found". It
	// receives only the notifications listed in Notifications.
	Handler acp.MethodHandler
	// Notifications are the methods of the notifications from the agent that Handler takes; any
	// other notification is dropped before the SDK, logged once per method.
	Notifications []string
	// Late receives the suggestions of a nes/suggest that the bridge gave up on (cancelled) but
	// that the agent answered anyway, so that their ids can still end.
	Late func([]Suggestion)
	// Trace, when set, receives every line on the agent's wire: dir is "bridge→agent" or
	// "agent→bridge".
	Trace func(dir string, line []byte)
	// Events, when set, receives what happens to the agent as it happens (its stderr lines, its
	// exit, the faults on its wire), for a program that reports on the agent (doctor) rather than
	// reading the log. It must not block.
	Events func(Event)
	// Prompts, when set, keeps an agent without Next Edit Suggestions and asks it for suggestions
	// through an ACP session instead (PromptOptions); without it, Initialize returns ErrNoNES.
	Prompts *PromptOptions
	// StuckAfter is how long the agent may read nothing of what waits for it before it is
	// treated as stuck and ended (its process killed; the caller sees it end, with Stuck saying
	// why); 0 means DefaultStuckAfter.
	StuckAfter time.Duration
}

// ClientOptions are the options the bridge connects to every agent with: its name, the position
// encodings in its order of preference, every optional suggestion kind, the file system and the
// editor-state methods. The bridge (lspside) and doctor both start from them, so that doctor's
// initialize is the bridge's; Handler must answer fs/* and the editor-state requests.
func ClientOptions(log zerolog.Logger, version string) Options {
	return Options{
		Log:           log,
		ClientName:    "acp-lsp-bridge",
		ClientVersion: version,
		Encodings:     []encoding.Kind{encoding.UTF8, encoding.UTF32, encoding.UTF16},
		// Every kind is presented: edits inline, as Copilot inline edits, code actions and
		// completion items; jumps, renames and search-and-replace as code actions.
		Kinds: ClientKinds{Jump: true, Rename: true, SearchAndReplace: true},
		// The agent may read and write files inside the workspace, and ask what the editor has
		// open, what was recent, and where the user is.
		FS:          true,
		EditorState: true,
	}
}

// The editor-state methods (../shared/spec/acp-editor-state-rfd.txt) that Options.EditorState
// advertises in clientCapabilities.workspace.
const (
	MethodOpenDocuments   = "workspace/open_documents"
	MethodRecentDocuments = "workspace/recent_documents"
	MethodActiveDocument  = "workspace/active_document"
)

// EventKind is what an Event reports.
type EventKind int

const (
	// EventStderr is a line the agent wrote to stderr (Line).
	EventStderr EventKind = iota + 1
	// EventExited is the agent's process ending (Status, such as "exit status 1").
	EventExited
	// EventFault is a fault on the agent's wire (Fault, one of the kinds in the log's "fault"
	// field; Method for unknown methods; Line, shortened, for a line that is not JSON). Every
	// occurrence is an event, though the log notes a kind once.
	EventFault
)

// Event is one thing that happened to the agent (Options.Events).
type Event struct {
	Kind   EventKind
	Line   string
	Status string
	Fault  string
	Method string
	At     time.Time
}

// ClientKinds are the optional suggestion kinds the client can present.
type ClientKinds struct {
	Jump, Rename, SearchAndReplace bool
}

// Events says which document events the agent asked for.
type Events struct {
	DidOpen, DidChange, DidClose, DidSave, DidFocus bool
	// FullSync is set when the agent wants the whole text in every didChange.
	FullSync bool
}

// ContextWanted says which nes/suggest context keys the agent asked for, with the maxCount it gave
// (0 when it gave none).
type ContextWanted struct {
	Diagnostics, OpenFiles, RecentFiles, EditHistory, UserActions, RelatedSnippets bool
	RecentMax, HistoryMax, ActionsMax                                              int
}

// Names are the context keys the agent asked for, in the order of the NES proposal. The bridge
// sends every one of them (lspside's suggestContext hands them all to editorstate), so these are
// also the keys that doctor reports as sent.
func (c ContextWanted) Names() []string {
	out := []string{}
	for _, k := range []struct {
		on   bool
		name string
	}{{c.RecentFiles, "recentFiles"}, {c.RelatedSnippets, "relatedSnippets"}, {c.EditHistory, "editHistory"}, {c.UserActions, "userActions"}, {c.OpenFiles, "openFiles"}, {c.Diagnostics, "diagnostics"}} {
		if k.on {
			out = append(out, k.name)
		}
	}
	return out
}

// Names are the document events the agent asked for. The bridge sends each of them to any editor
// (didFocus when the editor says the user entered a file, or when a request comes for another
// file than the last), so these are also the events that doctor reports as sent.
func (e Events) Names() []string {
	out := []string{}
	for _, k := range []struct {
		on   bool
		name string
	}{{e.DidOpen, "didOpen"}, {e.DidChange, "didChange"}, {e.DidClose, "didClose"}, {e.DidSave, "didSave"}, {e.DidFocus, "didFocus"}} {
		if k.on {
			out = append(out, k.name)
		}
	}
	return out
}

// Any reports whether the agent asked for any context at all.
func (c ContextWanted) Any() bool {
	return c.Diagnostics || c.OpenFiles || c.RecentFiles || c.EditHistory || c.UserActions || c.RelatedSnippets
}

func maxCount(p *int) int {
	if p == nil || *p < 0 {
		return 0
	}
	return *p
}

// ErrNoNES reports an agent that does not advertise the NES capability.
var ErrNoNES = errors.New("the agent does not offer Next Edit Suggestions (no agentCapabilities.nes)")

// ErrCancelled reports a request the bridge cancelled.
var ErrCancelled = errors.New("request cancelled")

// Agent is one connection to an agent.
type Agent struct {
	opts  Options
	log   zerolog.Logger
	conn  *acp.Connection
	tap   *wireTap
	proc  *process  // nil when connected over plain pipes
	cmd   Command   // how the process was started (Path empty over plain pipes)
	queue *outQueue // the agent's input
	in    io.Closer // the agent's output

	suggestSeq atomic.Uint64 // the bridge's own nes/suggest ids

	mu      sync.Mutex
	init    *acp.InitializeResponse
	enc     encoding.Kind
	events  Events
	context ContextWanted
	session acp.SessionId
	closed  bool
	stuck   string // why the bridge ended a stuck agent
	// closeDone is closed when the first Close has finished.
	closeDone chan struct{}

	// For an agent prompted for suggestions (PromptOptions): the in-process NES agent's
	// connection, its input, and the prompter it asks.
	front   *acp.Connection
	frontIn io.Closer
	prompts *prompter
}

// Start starts the agent command and connects to it.
func Start(c Command, opts Options) (*Agent, error) {
	p, err := startProcess(c, opts.Log, opts.Events)
	if err != nil {
		return nil, err
	}
	a := connect(p.stdout, p.stdin, opts)
	a.proc, a.cmd = p, c
	return a, nil
}

// Command is how the agent was started; ok is false for an agent connected over plain streams.
func (a *Agent) Command() (c Command, ok bool) { return a.cmd, a.cmd.Path != "" }

// Connect connects to an agent over an existing pair of streams: r is what the agent writes, w is
// what it reads.
func Connect(r io.ReadCloser, w io.WriteCloser, opts Options) *Agent {
	return connect(r, w, opts)
}

func connect(r io.ReadCloser, w io.WriteCloser, opts Options) *Agent {
	if len(opts.Encodings) == 0 {
		opts.Encodings = []encoding.Kind{encoding.UTF8, encoding.UTF32, encoding.UTF16}
	}
	a := &Agent{opts: opts, log: opts.Log, in: r, enc: encoding.UTF16, closeDone: make(chan struct{})}
	a.queue = newOutQueue(w, opts.StuckAfter, a.stuckNow)
	a.tap = newWireTap(opts.Log, a.lateAnswer)
	a.tap.faults.events = opts.Events
	a.tap.trace = opts.Trace
	a.tap.reply = func(line []byte) {
		if opts.Trace != nil {
			opts.Trace("bridge→agent", line)
		}
		_, _ = a.queue.Write(line)
	}
	for _, m := range opts.Notifications {
		a.tap.notifications[m] = true
	}
	// A prompted agent streams its answers in session/update (prompts.go); any other agent's are
	// noted below as a notification the bridge does not take (there is no session of the
	// bridge's to update), once the handler knows whether the agent is prompted.
	a.tap.notifications[acp.ClientMethodSessionUpdate] = true
	pr, pw := io.Pipe()
	go a.tap.pump(r, pw)
	inner := opts.Handler
	if inner == nil {
		inner = func(_ context.Context, method string, _ json.RawMessage) (any, *acp.RequestError) {
			return nil, acp.NewMethodNotFound(method)
		}
	}
	// The SDK answers a request the bridge does not implement without a word: log it, once per
	// method.
	handler := func(ctx context.Context, method string, params json.RawMessage) (any, *acp.RequestError) {
		if p := a.prompter(); p != nil {
			if res, err, ok := p.handle(method, params); ok {
				return res, err
			}
		} else if method == acp.ClientMethodSessionUpdate && !slices.Contains(opts.Notifications, method) {
			a.tap.faults.note(zerolog.WarnLevel, FaultUnknownNotification, method, "the agent sent a notification the bridge does not take; ignored", nil)
			return nil, nil // no session of the bridge's: nothing to update
		}
		res, err := inner(ctx, method, params)
		if err != nil && err.Code == acp.NewMethodNotFound("").Code {
			a.tap.faults.note(zerolog.WarnLevel, FaultUnknownRequest, method, "the agent sent a request the bridge does not implement; answered method not found", nil)
		}
		return res, err
	}
	// The SDK's own diagnostics go to slog's default logger, which main points at the bridge's
	// log: Connection.SetLogger races with the goroutines NewConnection has already started.
	a.conn = acp.NewConnection(handler, tapWriter{t: a.tap, w: a.queue}, pr)
	go func() {
		// Nothing more is read from an agent whose output ended: stop writing to it.
		<-a.conn.Done()
		_ = a.queue.Close()
	}()
	return a
}

// stuckNow ends an agent that reads nothing of what waits for it: its process group is killed
// (or, over plain streams, the connection closed), so that it ends as if it had exited, and Stuck
// says why.
func (a *Agent) stuckNow(reason string) {
	a.mu.Lock()
	a.stuck = reason
	a.mu.Unlock()
	a.log.Warn().Str("reason", reason).Msg("the agent is stuck; ending it")
	if a.proc != nil {
		a.proc.kill()
		return
	}
	go func() {
		_ = a.in.Close()
		_ = a.queue.Close()
	}()
}

// Stuck says why the bridge ended the agent as stuck; "" when it did not.
func (a *Agent) Stuck() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.stuck
}

// Done is closed when the connection to the agent has ended.
func (a *Agent) Done() <-chan struct{} { return a.conn.Done() }

// Ended reports whether the connection to the agent has ended.
func (a *Agent) Ended() bool {
	select {
	case <-a.conn.Done():
		return true
	default:
		return false
	}
}

// Initialize runs ACP initialize and records what the agent offers. It returns ErrNoNES (with the
// response) when the agent has no NES capability.
func (a *Agent) Initialize(ctx context.Context) (*acp.InitializeResponse, error) {
	encs := make([]acp.PositionEncodingKind, len(a.opts.Encodings))
	for i, k := range a.opts.Encodings {
		encs[i] = acp.PositionEncodingKind(k.String())
	}
	nes := &acp.ClientNesCapabilities{}
	if a.opts.Kinds.Jump {
		nes.Jump = &acp.NesJumpCapabilities{}
	}
	if a.opts.Kinds.Rename {
		nes.Rename = &acp.NesRenameCapabilities{}
	}
	if a.opts.Kinds.SearchAndReplace {
		nes.SearchAndReplace = &acp.NesSearchAndReplaceCapabilities{}
	}
	req := acp.InitializeRequest{
		ProtocolVersion: acp.ProtocolVersionNumber,
		ClientInfo:      &acp.Implementation{Name: a.opts.ClientName, Version: a.opts.ClientVersion},
		ClientCapabilities: acp.ClientCapabilities{
			PositionEncodings: encs,
			Nes:               nes,
			Fs:                acp.FileSystemCapabilities{ReadTextFile: a.opts.FS, WriteTextFile: a.opts.FS},
			// The bridge tells the user the command to run for a terminal sign-in method (some
			// agents offer their login only to clients that say so).
			Auth: acp.AuthCapabilities{Terminal: true},
		},
	}
	resp, err := acp.SendRequest[acp.InitializeResponse](a.conn, ctx, acp.AgentMethodInitialize, a.initializeParams(req))
	if err != nil {
		return nil, fmt.Errorf("initialize: %w", err)
	}
	if err := a.recordInit(&resp); err != nil {
		return &resp, err
	}
	switch nesCaps := resp.AgentCapabilities.Nes; {
	case nesCaps != nil:
		a.mu.Lock()
		a.adopt(nesCaps)
		a.mu.Unlock()
		return &resp, nil
	case a.opts.Prompts != nil:
		// Asked through prompts: the in-process NES agent in front says what it wants.
		return &resp, a.initializeFront(ctx, req)
	}
	return &resp, ErrNoNES
}

// recordInit keeps the agent's initialize answer and the position encoding it chose.
func (a *Agent) recordInit(resp *acp.InitializeResponse) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.init = resp
	k, err := chosenEncoding(resp)
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	if resp.AgentCapabilities.PositionEncoding != nil && !offered(a.opts.Encodings, k) {
		a.log.Warn().Str("encoding", k.String()).Msg("the agent chose a position encoding the bridge did not offer; using it anyway")
	}
	a.enc = k
	return nil
}

// chosenEncoding is the position encoding an initialize answer chose: utf-16 when it names none.
func chosenEncoding(resp *acp.InitializeResponse) (encoding.Kind, error) {
	pe := resp.AgentCapabilities.PositionEncoding
	if pe == nil {
		return encoding.UTF16, nil
	}
	k, ok := encoding.ParseKind(string(*pe))
	if !ok {
		return encoding.UTF16, fmt.Errorf("the agent chose position encoding %q, which is not one of utf-8, utf-16, utf-32", *pe)
	}
	return k, nil
}

// initializeFront starts the in-process NES agent for a prompted agent and initializes it with
// the request the agent had; what it answers (encoding, events, context) is what the bridge
// follows.
func (a *Agent) initializeFront(ctx context.Context, req acp.InitializeRequest) error {
	if err := a.startFront(newPrompter(a, *a.opts.Prompts)); err != nil {
		return err
	}
	resp, err := acp.SendRequest[acp.InitializeResponse](a.nesConn(), ctx, acp.AgentMethodInitialize, req)
	if err != nil {
		return fmt.Errorf("initialize (prompts): %w", err)
	}
	k, err := chosenEncoding(&resp)
	if err != nil {
		return fmt.Errorf("initialize (prompts): %w", err)
	}
	if resp.AgentCapabilities.Nes == nil {
		return errors.New("initialize (prompts): no nes capability")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.enc = k
	a.adopt(resp.AgentCapabilities.Nes)
	return nil
}

// adopt records the document events and the suggestion context an NES agent asked for. a.mu is
// held.
func (a *Agent) adopt(nesCaps *acp.NesCapabilities) {
	a.context = ContextWanted{}
	if c := nesCaps.Context; c != nil {
		a.context = ContextWanted{
			Diagnostics:     c.Diagnostics != nil,
			OpenFiles:       c.OpenFiles != nil,
			RelatedSnippets: c.RelatedSnippets != nil,
		}
		if c.RecentFiles != nil {
			a.context.RecentFiles, a.context.RecentMax = true, maxCount(c.RecentFiles.MaxCount)
		}
		if c.EditHistory != nil {
			a.context.EditHistory, a.context.HistoryMax = true, maxCount(c.EditHistory.MaxCount)
		}
		if c.UserActions != nil {
			a.context.UserActions, a.context.ActionsMax = true, maxCount(c.UserActions.MaxCount)
		}
	}
	a.events = Events{}
	if ev := nesCaps.Events; ev != nil && ev.Document != nil {
		d := ev.Document
		a.events = Events{
			DidOpen:   d.DidOpen != nil,
			DidChange: d.DidChange != nil,
			DidClose:  d.DidClose != nil,
			DidSave:   d.DidSave != nil,
			DidFocus:  d.DidFocus != nil,
			FullSync:  d.DidChange != nil && d.DidChange.SyncKind == acp.TextDocumentSyncKindFull,
		}
	}
}

// initializeParams adds what the SDK's types cannot say yet: clientCapabilities.workspace of the
// editor-state proposal.
func (a *Agent) initializeParams(req acp.InitializeRequest) any {
	if !a.opts.EditorState {
		return req
	}
	b, err := json.Marshal(req)
	if err != nil {
		return req
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return req
	}
	caps, _ := m["clientCapabilities"].(map[string]any)
	if caps == nil {
		caps = map[string]any{}
		m["clientCapabilities"] = caps
	}
	caps["workspace"] = map[string]any{
		"openDocuments":   map[string]any{},
		"recentDocuments": map[string]any{},
		"activeDocument":  map[string]any{},
	}
	return m
}

func offered(ks []encoding.Kind, k encoding.Kind) bool {
	for _, o := range ks {
		if o == k {
			return true
		}
	}
	return false
}

// Encoding is the position encoding the agent chose.
func (a *Agent) Encoding() encoding.Kind {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.enc
}

// Events are the document events the agent asked for.
func (a *Agent) Events() Events {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.events
}

// Context is the nes/suggest context the agent asked for.
func (a *Agent) Context() ContextWanted {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.context
}

// StartNES starts the NES session.
func (a *Agent) StartNES(ctx context.Context, req acp.UnstableStartNesRequest) error {
	if p := a.prompter(); p != nil {
		// The session prompts go to comes first: an agent that wants the user to sign in says so
		// here, and the sign-in dialog calls StartNES again.
		if err := p.open(ctx); err != nil {
			var re *acp.RequestError
			if errors.As(err, &re) && re.Code == acp.NewMethodNotFound("").Code {
				return fmt.Errorf("%w, nor sessions to ask it through prompts (%v)", ErrNoNES, err)
			}
			return err
		}
	}
	// One NES session per connection (GitHub Copilot refuses a second one): a session asked for
	// again, after a sign-in the running one needed, replaces the first.
	if old := a.Session(); old != "" {
		if _, err := acp.SendRequest[acp.UnstableCloseNesResponse](a.nesConn(), ctx, acp.AgentMethodNesClose, acp.UnstableCloseNesRequest{SessionId: old}); err != nil {
			a.log.Debug().Err(err).Msg("nes/close of the session replaced")
		}
		a.mu.Lock()
		a.session = ""
		a.mu.Unlock()
	}
	resp, err := acp.SendRequest[acp.UnstableStartNesResponse](a.nesConn(), ctx, acp.AgentMethodNesStart, req)
	if err != nil {
		return fmt.Errorf("nes/start: %w", err)
	}
	if resp.SessionId == "" {
		return errors.New("nes/start: the agent returned no sessionId")
	}
	a.mu.Lock()
	a.session = resp.SessionId
	a.mu.Unlock()
	return nil
}

// Session is the NES session id, empty before nes/start succeeded.
func (a *Agent) Session() acp.SessionId {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.session
}

func (a *Agent) notify(ctx context.Context, method string, params any) error {
	if err := a.nesConn().SendNotification(ctx, method, params); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	return nil
}

// DidOpen forwards document/didOpen.
func (a *Agent) DidOpen(ctx context.Context, p acp.UnstableDidOpenDocumentNotification) error {
	p.SessionId = a.Session()
	return a.notify(ctx, acp.AgentMethodDocumentDidOpen, p)
}

// DidChange forwards document/didChange.
func (a *Agent) DidChange(ctx context.Context, p acp.UnstableDidChangeDocumentNotification) error {
	p.SessionId = a.Session()
	return a.notify(ctx, acp.AgentMethodDocumentDidChange, p)
}

// DidClose forwards document/didClose.
func (a *Agent) DidClose(ctx context.Context, p acp.UnstableDidCloseDocumentNotification) error {
	p.SessionId = a.Session()
	return a.notify(ctx, acp.AgentMethodDocumentDidClose, p)
}

// DidSave forwards document/didSave.
func (a *Agent) DidSave(ctx context.Context, p acp.UnstableDidSaveDocumentNotification) error {
	p.SessionId = a.Session()
	return a.notify(ctx, acp.AgentMethodDocumentDidSave, p)
}

// DidFocus forwards document/didFocus.
func (a *Agent) DidFocus(ctx context.Context, p acp.UnstableDidFocusDocumentNotification) error {
	p.SessionId = a.Session()
	return a.notify(ctx, acp.AgentMethodDocumentDidFocus, p)
}

// Accept sends nes/accept, naming the suggestion as the agent's protocol version does.
func (a *Agent) Accept(ctx context.Context, id string) error {
	if a.Prompted() {
		return a.notify(context.Background(), acp.AgentMethodNesAccept, acp.UnstableAcceptNesNotification{SessionId: a.Session(), Id: id})
	}
	return a.notifyOwn(acp.AgentMethodNesAccept, appendEndParams(nil, a.Session(), a.suggestionKey(), id, ""))
}

// Reject sends nes/reject, naming the suggestion as the agent's protocol version does.
func (a *Agent) Reject(ctx context.Context, id string, reason acp.UnstableNesRejectReason) error {
	if a.Prompted() {
		return a.notify(context.Background(), acp.AgentMethodNesReject, acp.UnstableRejectNesNotification{SessionId: a.Session(), Id: id, Reason: &reason})
	}
	return a.notifyOwn(acp.AgentMethodNesReject, appendEndParams(nil, a.Session(), a.suggestionKey(), id, reason))
}

// suggestionKey is the name nes/accept and nes/reject give the suggestion: "id" in ACP's protocol
// version 1, "suggestionId" in its version 2 draft of NES.
func (a *Agent) suggestionKey() string {
	if a.speaksV2() {
		return "suggestionId"
	}
	return "id"
}

// notifyOwn sends the end of a suggestion (params encoded), a notification of the bridge's own:
// these come with nearly every answer, so they are written as Suggest writes its requests (the
// SDK's way costs more), and lazily: with the next message to the agent, or at most lazyWait
// later. Accept and Reject send them to an agent asked through prompts through the SDK instead,
// to the in-process agent in front.
func (a *Agent) notifyOwn(method string, params []byte) error {
	if err := a.sendEncoded("", method, params, true); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	return nil
}

// speaksV2 reports whether the NES connection speaks ACP's protocol version 2 or later: the agent
// answered initialize with it (an agent asked through prompts has the bridge's own in front, which
// speaks version 1).
func (a *Agent) speaksV2() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.front == nil && a.init != nil && a.init.ProtocolVersion >= 2
}

// Suggest sends nes/suggest and decodes the answer. When ctx ends first, the agent's request is
// cancelled ($/cancel_request), Suggest returns ErrCancelled at once, and any suggestions the agent
// still sends for it go to Options.Late.
//
// It is the bridge's own request, not the SDK's: on the path of every suggestion, the bridge
// writes it with an id of its own ("nes-N", a string, where the SDK's are numbers) and the wire
// tap hands the answer straight back, read once, without the SDK's second reading of every answer,
// its goroutine per request and the pipe between the tap and the SDK.
func (a *Agent) Suggest(ctx context.Context, req acp.UnstableSuggestNesRequest) ([]Suggestion, error) {
	sugs, _, err := a.SuggestWithNote(ctx, req)
	return sugs, err
}

// SuggestWithNote is Suggest, and for an answer with no suggestion, what the agent said of why
// (its result's _meta["acp-lsp-bridge/quiet"], nil when it said nothing).
func (a *Agent) SuggestWithNote(ctx context.Context, req acp.UnstableSuggestNesRequest) ([]Suggestion, *Quiet, error) {
	sugs, note, _, err := a.SuggestGrowing(ctx, req)
	return sugs, note, err
}

// SuggestGrowing is SuggestWithNote, and whether the agent says its suggestions are what its
// model has written so far (the answer's _meta "acp-lsp-bridge/growing"): the same request
// again is answered with more of the answer, once the model has written it.
func (a *Agent) SuggestGrowing(ctx context.Context, req acp.UnstableSuggestNesRequest) (_ []Suggestion, _ *Quiet, growing bool, _ error) {
	req.SessionId = a.Session()
	if a.Prompted() {
		sugs, note, err := a.suggestFront(ctx, req)
		return sugs, note, false, err
	}
	n := a.suggestSeq.Add(1)
	id := `"nes-` + strconv.FormatUint(n, 10) + `"` // as on the wire
	params, err := appendSuggestParams(nil, &req)
	if err != nil {
		return nil, nil, false, fmt.Errorf("nes/suggest: %w", err)
	}
	answer := make(chan []byte, 1)
	a.tap.own(id, answer)
	if err := a.sendEncoded(id, acp.AgentMethodNesSuggest, params, false); err != nil {
		a.tap.forget(id)
		return nil, nil, false, fmt.Errorf("nes/suggest: %w", err)
	}
	select {
	case line := <-answer:
		a.tap.forget(id)
		sugs, err := decodeAnswer(line)
		if err != nil || len(sugs) > 0 {
			return sugs, nil, err == nil && growingNote(line), err
		}
		return sugs, quietNote(line, true), false, nil
	case <-ctx.Done():
		answered := a.tap.abandon(id)
		if err := a.send("", cancelRequest, map[string]jsontext.Value{"requestId": jsontext.Value(id)}, false); err != nil {
			a.log.Debug().Err(err).Msg("$/cancel_request")
		}
		if answered { // the answer came as ctx ended: its suggestions end as late ones
			go a.lateAnswer(<-answer)
		}
		return nil, nil, false, ErrCancelled
	case <-a.tap.done:
		a.tap.forget(id)
		return nil, nil, false, fmt.Errorf("nes/suggest: %w", errConnectionEnded)
	}
}

// errConnectionEnded is a request whose answer can no longer come: the agent's output ended.
var errConnectionEnded = errors.New("the agent's connection ended before it answered")

// send writes a message of the bridge's own to the agent, one line, in order with the SDK's: a
// request when id (as on the wire) is set, else a notification; lazy ones wait for the next
// message (outQueue.WriteLazy).
func (a *Agent) send(id, method string, params any, lazy bool) error {
	p, err := jsonv2.Marshal(params)
	if err != nil {
		return err
	}
	return a.sendEncoded(id, method, p, lazy)
}

// sendEncoded is send with the params encoded.
func (a *Agent) sendEncoded(id, method string, params []byte, lazy bool) error {
	line := appendMessage(make([]byte, 0, len(params)+len(method)+len(id)+48), id, method, params)
	if a.opts.Trace != nil {
		a.opts.Trace("bridge→agent", line)
	}
	if lazy {
		return a.queue.WriteLazy(line)
	}
	return a.queue.writeOwned(line)
}

// suggestFront asks the in-process NES agent of a prompted agent. When ctx ends first, its request
// is cancelled, which cancels the prompt (session/cancel); a late answer is dropped: the prompt
// it came from is over.
func (a *Agent) suggestFront(ctx context.Context, req acp.UnstableSuggestNesRequest) ([]Suggestion, *Quiet, error) {
	raw, err := acp.SendRequest[json.RawMessage](a.nesConn(), ctx, acp.AgentMethodNesSuggest, req)
	if ctx.Err() != nil {
		return nil, nil, ErrCancelled
	}
	if err != nil {
		if failure := a.prompter().takeFailure(); failure != nil {
			// As the prompt failed (auth_required, ErrPromptsStopped), not as text.
			return nil, nil, failure
		}
		return nil, nil, fmt.Errorf("nes/suggest: %w", err)
	}
	sugs, err := DecodeSuggestions(raw)
	if err != nil || len(sugs) > 0 {
		return sugs, nil, err
	}
	return sugs, quietNote(raw, false), nil
}

// lateAnswer passes on the suggestions of the answer (the whole line) to a nes/suggest the bridge
// gave up on, so that their ids still end. An error answer (the agent's own to a cancelled
// request) carries none.
func (a *Agent) lateAnswer(line []byte) {
	sugs, err := decodeAnswer(line)
	var agentErr *acp.RequestError
	if err != nil && !errors.As(err, &agentErr) {
		a.log.Warn().Err(err).Msg("could not read the answer to a cancelled nes/suggest")
	}
	if len(sugs) > 0 && a.opts.Late != nil {
		a.opts.Late(sugs)
	}
}

// Exited waits up to wait for the agent's process to end, and then returns how it ended and the
// last lines it wrote to stderr; ok is false when it still runs (or is not a process).
func (a *Agent) Exited(wait time.Duration) (status string, stderr []string, ok bool) {
	if a.proc == nil {
		return "", nil, false
	}
	select {
	case <-a.proc.exited:
	case <-time.After(wait):
		return "", nil, false
	}
	// The stderr reader may still hold the last line for a moment after the process ended.
	time.Sleep(20 * time.Millisecond)
	return exitStatus(a.proc.err), a.proc.stderrTail(), true
}

// Close ends the NES session (nes/close, bounded by ctx), then the connection and the agent's
// process group. It is safe to call more than once, and from more than one goroutine: a later
// call waits (at most until ctx ends) for the first to finish.
func (a *Agent) Close(ctx context.Context) {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		select {
		case <-a.closeDone:
		case <-ctx.Done():
		}
		return
	}
	a.closed = true
	defer close(a.closeDone)
	session := a.session
	front, frontIn, prompts := a.front, a.frontIn, a.prompts
	a.mu.Unlock()
	if front != nil {
		// The NES session is the in-process agent's; the agent itself had prompts only.
		prompts.close()
		if session != "" {
			cctx, cancel := context.WithTimeout(ctx, time.Second)
			if _, err := acp.SendRequest[acp.UnstableCloseNesResponse](front, cctx, acp.AgentMethodNesClose, acp.UnstableCloseNesRequest{SessionId: session}); err != nil {
				a.log.Debug().Err(err).Msg("nes/close (prompts)")
			}
			cancel()
		}
		_ = frontIn.Close()
		session = ""
	}
	// An agent that does not read its input would not read nes/close, nor see its input end.
	stalled := a.queue.stalled(200 * time.Millisecond)
	if session != "" && !stalled {
		select {
		case <-a.conn.Done():
		default:
			cctx, cancel := context.WithTimeout(ctx, time.Second)
			if _, err := acp.SendRequest[acp.UnstableCloseNesResponse](a.conn, cctx, acp.AgentMethodNesClose, acp.UnstableCloseNesRequest{SessionId: session}); err != nil {
				a.log.Debug().Err(err).Msg("nes/close")
			}
			cancel()
		}
	}
	if a.proc != nil {
		grace := 2 * time.Second
		if stalled {
			grace = 0
		}
		a.proc.stop(grace)
	}
	_ = a.queue.Close()
	_ = a.in.Close()
	// The faults of the agent's last moments are logged before Close returns.
	select {
	case <-a.tap.done:
	case <-time.After(time.Second):
	}
	a.tap.faults.flush()
}
