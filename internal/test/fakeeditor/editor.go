// Package fakeeditor is the one LSP editor of the bridge's Go tests (the demo has its own,
// internal/demoeditor, since the binary links no test code). It keeps the text of each open
// document as an editor does (so an edit is given as positions or offsets and the editor works out
// the versions and the encoding), sends typed requests, answers and records what the bridge asks
// of an editor (messages, questions, edits to apply, documents to show, progress), and waits for
// expectations on what it recorded instead of polling, in the manner of gopls' integration tests.
//
// [Editor] returns errors, for tests of bad input; [Env] wraps it for tests and fails the test on
// an error.
package fakeeditor

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
)

// Options set how the editor behaves.
type Options struct {
	// Answer picks the title of the action the user chooses in window/showMessageRequest, or ""
	// to close it unanswered. It may block: the user thinks while the editor keeps working. With
	// no Answer every question is closed unanswered.
	Answer func(message string, actions []string) string
	// Silent lists the requests from the bridge that this editor never answers, as some editors
	// never answer some requests.
	Silent []string
	// Timeout bounds each request the editor sends, and each wait of [Env]; 15 s when zero.
	Timeout time.Duration
}

// Record is what the bridge sent the editor so far, in order of arrival.
type Record struct {
	Messages  []string          // window/showMessage texts
	Logs      []string          // window/logMessage texts
	Said      []string          // window/showMessage and logMessage texts, in the order they came
	Questions []string          // window/showMessageRequest texts
	Applied   []json.RawMessage // workspace/applyEdit params
	Shown     []json.RawMessage // window/showDocument params
	Created   []json.RawMessage // window/workDoneProgress/create params
	Progress  []json.RawMessage // $/progress params
	Cancels   []json.RawMessage // $/cancelRequest params
	Statuses  []Status          // acp-lsp-bridge/status params
	Ready     []json.RawMessage // acp-lsp-bridge/suggestionReady params
	Ended     bool              // the bridge's side of the connection ended
}

// Status is the params of the bridge's acp-lsp-bridge/status notification.
type Status struct {
	State   string `json:"state"`
	Message string `json:"message"`
	URI     string `json:"uri"`
	Agent   string `json:"agent"`
}

func (r *Record) clone() Record {
	return Record{
		Messages:  append([]string(nil), r.Messages...),
		Logs:      append([]string(nil), r.Logs...),
		Said:      append([]string(nil), r.Said...),
		Questions: append([]string(nil), r.Questions...),
		Applied:   append([]json.RawMessage(nil), r.Applied...),
		Shown:     append([]json.RawMessage(nil), r.Shown...),
		Created:   append([]json.RawMessage(nil), r.Created...),
		Progress:  append([]json.RawMessage(nil), r.Progress...),
		Cancels:   append([]json.RawMessage(nil), r.Cancels...),
		Statuses:  append([]Status(nil), r.Statuses...),
		Ready:     append([]json.RawMessage(nil), r.Ready...),
		Ended:     r.Ended,
	}
}

// Progress is one $/progress the bridge sent.
type Progress struct {
	Token string `json:"token"`
	Value struct {
		Kind, Title, Message string
	} `json:"value"`
}

// ProgressOf is the work-done progress whose begin says message: its begin and what followed for
// its token, in order (nil when none began so).
func (r *Record) ProgressOf(message string) []Progress {
	token := ""
	var out []Progress
	for _, raw := range r.Progress {
		var p Progress
		_ = json.Unmarshal(raw, &p)
		if token == "" && p.Value.Kind == "begin" && p.Value.Message == message {
			token = p.Token
		}
		if token != "" && p.Token == token {
			out = append(out, p)
		}
	}
	return out
}

// An Expectation is a condition on what the editor has recorded.
type Expectation struct {
	// Description says what is expected, for the error when it is not met.
	Description string
	Met         func(*Record) bool
}

func containing(list func(*Record) []string, what, substr string) Expectation {
	return Expectation{
		Description: fmt.Sprintf("a %s containing %q", what, substr),
		Met: func(r *Record) bool {
			for _, m := range list(r) {
				if strings.Contains(m, substr) {
					return true
				}
			}
			return false
		},
	}
}

// ShownMessage expects a window/showMessage containing substr.
func ShownMessage(substr string) Expectation {
	return containing(func(r *Record) []string { return r.Messages }, "window/showMessage", substr)
}

// LoggedMessage expects a window/logMessage containing substr.
func LoggedMessage(substr string) Expectation {
	return containing(func(r *Record) []string { return r.Logs }, "window/logMessage", substr)
}

// AnyMessage expects a window/showMessage or window/logMessage containing substr.
func AnyMessage(substr string) Expectation {
	return containing(func(r *Record) []string { return r.Said }, "window/showMessage or logMessage", substr)
}

// Question expects a window/showMessageRequest containing substr.
func Question(substr string) Expectation {
	return containing(func(r *Record) []string { return r.Questions }, "window/showMessageRequest", substr)
}

// Ready expects the bridge's word that the agent is ready, the window/logMessage
// "acp-lsp-bridge: NAME is ready (...)", which a user waits for before expecting suggestions:
// requests before it answer empty at once.
func Ready() Expectation { return LoggedMessage(" is ready (") }

// SaidAfter expects a window/showMessage or logMessage containing substr, after the first n of
// them.
func SaidAfter(n int, substr string) Expectation {
	return containing(func(r *Record) []string {
		if n > len(r.Said) {
			return nil
		}
		return r.Said[n:]
	}, fmt.Sprintf("window/showMessage or logMessage (after the first %d)", n), substr)
}

// Applied expects n workspace/applyEdit requests.
func Applied(n int) Expectation {
	return atLeast(n, "workspace/applyEdit requests", func(r *Record) int { return len(r.Applied) })
}

// StatusIs expects the bridge's latest acp-lsp-bridge/status to have this state, and to concern
// uri when uri is not empty.
func StatusIs(state, uri string) Expectation {
	return Expectation{
		Description: fmt.Sprintf("acp-lsp-bridge/status %q for %q as the latest", state, uri),
		Met: func(r *Record) bool {
			if len(r.Statuses) == 0 {
				return false
			}
			last := r.Statuses[len(r.Statuses)-1]
			return last.State == state && (uri == "" || last.URI == uri)
		},
	}
}

// Disconnected expects the bridge to have ended the connection.
func Disconnected() Expectation {
	return Expectation{Description: "the end of the connection", Met: func(r *Record) bool { return r.Ended }}
}

type document struct {
	text     *encoding.Mapper
	version  int
	language string
}

// Editor is an LSP client connected to a bridge.
type Editor struct {
	conn jsonrpc2.Conn
	opts Options
	stop chan struct{} // closed by Close: silent requests stop waiting

	mu      sync.Mutex
	rec     Record
	changed chan struct{} // closed, and replaced, at each change of rec
	docs    map[string]*document
	enc     encoding.Kind
	closed  bool
}

type readWriteCloser struct {
	io.Reader
	io.WriteCloser
}

// Connect starts an editor talking LSP to a bridge that reads what the editor writes to w and
// writes to r what the editor reads.
func Connect(r io.Reader, w io.WriteCloser, o Options) *Editor {
	if o.Timeout == 0 {
		o.Timeout = 15 * time.Second
	}
	e := &Editor{opts: o, stop: make(chan struct{}), changed: make(chan struct{}), docs: map[string]*document{}, enc: encoding.UTF16}
	e.conn = jsonrpc2.NewConn(idStream{jsonrpc2.NewStream(readWriteCloser{r, w})})
	e.conn.Go(context.Background(), e.handle)
	go func() {
		<-e.conn.Done()
		e.record(func(r *Record) { r.Ended = true })
	}()
	return e
}

// Close ends the editor's side of the connection.
func (e *Editor) Close() error {
	e.mu.Lock()
	if !e.closed {
		e.closed = true
		close(e.stop)
	}
	e.mu.Unlock()
	return e.conn.Close()
}

// Done is closed when the connection has ended.
func (e *Editor) Done() <-chan struct{} { return e.conn.Done() }

func (e *Editor) record(f func(*Record)) {
	e.mu.Lock()
	f(&e.rec)
	close(e.changed)
	e.changed = make(chan struct{})
	e.mu.Unlock()
}

func (e *Editor) handle(ctx context.Context, req *jsonrpc2.Request) (any, error) {
	params := json.RawMessage(append([]byte(nil), req.Params()...))
	for _, m := range e.opts.Silent {
		if m == req.Method() && req.IsCall() {
			jsonrpc2.Async(ctx)
			<-e.stop
			return nil, nil
		}
	}
	var msg struct {
		Message string `json:"message"`
		Actions []struct {
			Title string `json:"title"`
		} `json:"actions"`
	}
	switch req.Method() {
	case "window/showMessageRequest":
		jsonrpc2.Async(ctx) // the user thinks; the editor keeps working
		_ = json.Unmarshal(params, &msg)
		e.record(func(r *Record) { r.Questions = append(r.Questions, msg.Message) })
		if e.opts.Answer == nil {
			return nil, nil
		}
		titles := make([]string, len(msg.Actions))
		for i, a := range msg.Actions {
			titles[i] = a.Title
		}
		if t := e.opts.Answer(msg.Message, titles); t != "" {
			return map[string]any{"title": t}, nil
		}
		return nil, nil
	case "window/showMessage":
		_ = json.Unmarshal(params, &msg)
		e.record(func(r *Record) { r.Messages, r.Said = append(r.Messages, msg.Message), append(r.Said, msg.Message) })
	case "window/logMessage":
		_ = json.Unmarshal(params, &msg)
		e.record(func(r *Record) { r.Logs, r.Said = append(r.Logs, msg.Message), append(r.Said, msg.Message) })
	case "$/cancelRequest":
		e.record(func(r *Record) { r.Cancels = append(r.Cancels, params) })
	case "acp-lsp-bridge/status":
		var st Status
		_ = json.Unmarshal(params, &st)
		e.record(func(r *Record) { r.Statuses = append(r.Statuses, st) })
	case "acp-lsp-bridge/suggestionReady":
		e.record(func(r *Record) { r.Ready = append(r.Ready, params) })
	case "window/workDoneProgress/create":
		e.record(func(r *Record) { r.Created = append(r.Created, params) })
		return nil, nil
	case "$/progress":
		e.record(func(r *Record) { r.Progress = append(r.Progress, params) })
	case "window/showDocument":
		e.record(func(r *Record) { r.Shown = append(r.Shown, params) })
		return map[string]any{"success": true}, nil
	case "workspace/applyEdit":
		e.record(func(r *Record) { r.Applied = append(r.Applied, params) })
		return map[string]any{"applied": true}, nil
	}
	return nil, nil
}

// Record returns a copy of what the bridge sent the editor so far.
func (e *Editor) Record() Record {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.rec.clone()
}

// Await waits until every expectation is met, or ctx ends.
func (e *Editor) Await(ctx context.Context, exps ...Expectation) error {
	for {
		e.mu.Lock()
		ch := e.changed
		var unmet []string
		for _, x := range exps {
			if !x.Met(&e.rec) {
				unmet = append(unmet, x.Description)
			}
		}
		rec := e.rec.clone()
		e.mu.Unlock()
		if unmet == nil {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("waited in vain for %s; the editor got messages %q, log messages %q, questions %q",
				strings.Join(unmet, " and "), rec.Messages, rec.Logs, rec.Questions)
		}
	}
}

// Call sends a request with untyped params, for what the typed methods do not cover (and for bad
// input), and decodes its result into result unless that is nil.
func (e *Editor) Call(ctx context.Context, method string, params, result any) error {
	ctx, cancel := context.WithTimeout(ctx, e.opts.Timeout)
	defer cancel()
	_, err := e.conn.Call(ctx, method, params, result)
	return err
}

// Notify sends a notification with untyped params.
func (e *Editor) Notify(ctx context.Context, method string, params any) error {
	return e.conn.Notify(ctx, method, params)
}

// InitParams are what an editor says of itself in initialize.
type InitParams struct {
	// Root is the workspace folder's URI, sent as rootUri and as the one workspace folder; none
	// when empty.
	Root string
	// Encodings are the position encodings offered, most preferred first; none offered when nil
	// (LSP's default, utf-16).
	Encodings []string
	// Capabilities are sent as the client's capabilities, merged over the defaults (showDocument
	// supported) one top-level key at a time.
	Capabilities map[string]any
	// Options are sent as initializationOptions.
	Options any
	// ClientName is sent as clientInfo.name when set.
	ClientName string
	// ProcessID is sent as processId when not zero.
	ProcessID int
}

// InitResult is what the editor reads of the bridge's answer to initialize.
type InitResult struct {
	Capabilities struct {
		PositionEncoding         string          `json:"positionEncoding"`
		TextDocumentSync         json.RawMessage `json:"textDocumentSync"`
		InlineCompletionProvider json.RawMessage `json:"inlineCompletionProvider"`
		CodeActionProvider       json.RawMessage `json:"codeActionProvider"`
		CompletionProvider       json.RawMessage `json:"completionProvider"`
		ExecuteCommandProvider   struct {
			Commands []string `json:"commands"`
		} `json:"executeCommandProvider"`
	} `json:"capabilities"`
	ServerInfo struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"serverInfo"`
}

// Params are the params of initialize for p.
func (p InitParams) Params() map[string]any {
	caps := map[string]any{"window": map[string]any{"showDocument": map[string]any{"support": true}}}
	if p.Encodings != nil {
		caps["general"] = map[string]any{"positionEncodings": p.Encodings}
	}
	for k, v := range p.Capabilities {
		caps[k] = v
	}
	params := map[string]any{"processId": nil, "capabilities": caps}
	if p.ProcessID != 0 {
		params["processId"] = p.ProcessID
	}
	if p.Root != "" {
		params["rootUri"] = p.Root
		params["workspaceFolders"] = []any{map[string]any{"uri": p.Root, "name": path.Base(p.Root)}}
	}
	if p.Options != nil {
		params["initializationOptions"] = p.Options
	}
	if p.ClientName != "" {
		params["clientInfo"] = map[string]any{"name": p.ClientName}
	}
	return params
}

// Initialize sends initialize and initialized, and from then on converts positions in the encoding
// the bridge chose.
func (e *Editor) Initialize(ctx context.Context, p InitParams) (*InitResult, error) {
	params := p.Params()
	var res InitResult
	if err := e.Call(ctx, "initialize", params, &res); err != nil {
		return nil, err
	}
	if k, ok := encoding.ParseKind(res.Capabilities.PositionEncoding); ok {
		e.mu.Lock()
		e.enc = k
		e.mu.Unlock()
	}
	return &res, e.Notify(ctx, "initialized", map[string]any{})
}

// Encoding is the position encoding the bridge chose (utf-16 before initialize).
func (e *Editor) Encoding() encoding.Kind {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.enc
}

var languages = map[string]string{".go": "go", ".py": "python", ".ts": "typescript", ".js": "javascript", ".rs": "rust", ".md": "markdown", ".txt": "plaintext"}

// Open opens uri with this text, its language taken from the file name's extension (go when not
// known, as most of the tests' documents are Go).
func (e *Editor) Open(ctx context.Context, uri, text string) error {
	lang, ok := languages[path.Ext(uri)]
	if !ok {
		lang = "go"
	}
	return e.OpenAs(ctx, uri, lang, text)
}

// DidOpenParams are the params of textDocument/didOpen for uri at version 1.
func DidOpenParams(uri, language, text string) map[string]any {
	return map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": language, "version": 1, "text": text}}
}

// OpenAs opens uri in this language with this text, at version 1.
func (e *Editor) OpenAs(ctx context.Context, uri, language, text string) error {
	e.mu.Lock()
	e.docs[uri] = &document{text: encoding.NewMapper(text), version: 1, language: language}
	e.mu.Unlock()
	return e.Notify(ctx, "textDocument/didOpen", DidOpenParams(uri, language, text))
}

// CloseDoc tells the bridge the editor closed uri.
func (e *Editor) CloseDoc(ctx context.Context, uri string) error {
	e.mu.Lock()
	delete(e.docs, uri)
	e.mu.Unlock()
	return e.Notify(ctx, "textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": uri}})
}

// ChangeAt sends textDocument/didChange with this version, exactly as given (for tests of versions
// and of bad ranges), and applies the changes to the editor's copy when they fit it.
func (e *Editor) ChangeAt(ctx context.Context, uri string, version int, changes ...Change) error {
	e.mu.Lock()
	if d := e.docs[uri]; d != nil {
		d.version = version
		for _, c := range changes {
			if c.Range == nil {
				d.text = encoding.NewMapper(c.Text)
				continue
			}
			s, en, err := d.text.RangeOffsets(c.Range.encoding(), e.enc)
			if err != nil || s > en {
				break
			}
			d.text = d.text.Edit(s, en, c.Text)
		}
	}
	e.mu.Unlock()
	return e.Notify(ctx, "textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": uri, "version": version},
		"contentChanges": changes,
	})
}

// Change sends the changes as the document's next version.
func (e *Editor) Change(ctx context.Context, uri string, changes ...Change) error {
	return e.ChangeAt(ctx, uri, e.Version(uri)+1, changes...)
}

// Edit replaces the bytes start..end of the editor's copy of uri with text, and tells the bridge
// in positions of the agreed encoding, as an editor does when the user types.
func (e *Editor) Edit(ctx context.Context, uri string, start, end int, text string) error {
	e.mu.Lock()
	d := e.docs[uri]
	if d == nil {
		e.mu.Unlock()
		return fmt.Errorf("%s is not open in the editor", uri)
	}
	r, err := d.text.OffsetsRange(start, end, e.enc)
	e.mu.Unlock()
	if err != nil {
		return err
	}
	rng := Range{Start: Pos(r.Start), End: Pos(r.End)}
	return e.Change(ctx, uri, Change{Range: &rng, Text: text})
}

// Text is the editor's copy of uri.
func (e *Editor) Text(uri string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if d := e.docs[uri]; d != nil {
		return d.text.Text()
	}
	return ""
}

// Version is the version of uri the editor last sent.
func (e *Editor) Version(uri string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	if d := e.docs[uri]; d != nil {
		return d.version
	}
	return 0
}

// PosOf is the position of byte offset off in the editor's copy of uri.
func (e *Editor) PosOf(uri string, off int) (Pos, error) {
	return PosOf(e.Text(uri), off, e.Encoding())
}

// OffsetOf is the byte offset of p in the editor's copy of uri.
func (e *Editor) OffsetOf(uri string, p Pos) (int, error) {
	return OffsetOf(e.Text(uri), p, e.Encoding())
}

// Inline sends textDocument/inlineCompletion at p, triggered automatically (as while typing).
func (e *Editor) Inline(ctx context.Context, uri string, p Pos) ([]InlineItem, error) {
	return e.InlineTriggered(ctx, uri, p, 2)
}

// InlineTriggered sends textDocument/inlineCompletion at p with this triggerKind (1 invoked, 2
// automatic).
func (e *Editor) InlineTriggered(ctx context.Context, uri string, p Pos, triggerKind int) ([]InlineItem, error) {
	var res InlineResult
	err := e.Call(ctx, "textDocument/inlineCompletion", InlineParams(uri, p, triggerKind), &res)
	return res.Items, err
}

// InlineResult is the answer to textDocument/inlineCompletion.
type InlineResult struct {
	Items []InlineItem `json:"items"`
}

// InlineParams are the params of textDocument/inlineCompletion at p with this triggerKind (1
// invoked, 2 automatic).
func InlineParams(uri string, p Pos, triggerKind int) map[string]any {
	return map[string]any{
		"textDocument": map[string]any{"uri": uri},
		"position":     p,
		"context":      map[string]any{"triggerKind": triggerKind},
	}
}

// CodeActions sends textDocument/codeAction for r with these diagnostics and no triggerKind.
func (e *Editor) CodeActions(ctx context.Context, uri string, r Range, diagnostics ...any) ([]CodeAction, error) {
	return e.CodeActionsTriggered(ctx, uri, r, 0, diagnostics...)
}

// CodeActionsTriggered sends textDocument/codeAction for r with this context.triggerKind (1
// invoked: the user asked; 2 automatic: the editor asks by itself, as VS Code's light bulb does;
// 0: none sent) and these diagnostics.
func (e *Editor) CodeActionsTriggered(ctx context.Context, uri string, r Range, triggerKind int, diagnostics ...any) ([]CodeAction, error) {
	var actions []CodeAction
	if diagnostics == nil {
		diagnostics = []any{}
	}
	actx := map[string]any{"diagnostics": diagnostics}
	if triggerKind != 0 {
		actx["triggerKind"] = triggerKind
	}
	err := e.Call(ctx, "textDocument/codeAction", map[string]any{
		"textDocument": map[string]any{"uri": uri},
		"range":        r,
		"context":      actx,
	}, &actions)
	return actions, err
}

// Completion sends textDocument/completion at p.
func (e *Editor) Completion(ctx context.Context, uri string, p Pos) ([]CompletionItem, error) {
	var res struct {
		Items []CompletionItem `json:"items"`
	}
	err := e.Call(ctx, "textDocument/completion", map[string]any{
		"textDocument": map[string]any{"uri": uri},
		"position":     p,
	}, &res)
	return res.Items, err
}

// InlineEdits sends textDocument/copilotInlineEdit at p, as the Copilot NES plugins do.
func (e *Editor) InlineEdits(ctx context.Context, uri string, p Pos) ([]InlineEdit, error) {
	var res struct {
		Edits []InlineEdit `json:"edits"`
	}
	err := e.Call(ctx, "textDocument/copilotInlineEdit", map[string]any{
		"textDocument": map[string]any{"uri": uri, "version": e.Version(uri)},
		"position":     p,
	}, &res)
	return res.Edits, err
}

// Execute runs a command through workspace/executeCommand.
func (e *Editor) Execute(ctx context.Context, c Command) error {
	args := c.Arguments
	if args == nil {
		args = []any{}
	}
	return e.Call(ctx, "workspace/executeCommand", map[string]any{"command": c.Command, "arguments": args}, nil)
}

// Accept applies an inline item to the editor's copy of uri and tells the bridge, then runs the
// item's command: what an editor does when the user accepts ghost text.
func (e *Editor) Accept(ctx context.Context, uri string, it InlineItem) error {
	if it.Range != nil {
		s, err := e.OffsetOf(uri, it.Range.Start)
		if err != nil {
			return err
		}
		en, err := e.OffsetOf(uri, it.Range.End)
		if err != nil {
			return err
		}
		if err := e.Edit(ctx, uri, s, en, it.InsertText); err != nil {
			return err
		}
	}
	if it.Command == nil {
		return nil
	}
	return e.Execute(ctx, *it.Command)
}

// ApplyAction does what an editor does when the user picks a code action: its edit applied to the
// open documents it names (one didChange each, its edits last first so that each range still
// reads as when it was made), then its command run.
func (e *Editor) ApplyAction(ctx context.Context, a CodeAction) error {
	if w := a.Edit; w != nil {
		var uris []string
		for u := range w.Changes {
			uris = append(uris, u)
		}
		for _, dc := range w.DocumentChanges {
			if dc.TextDocument == nil {
				return fmt.Errorf("code action %q: the file operation %q is not supported here", a.Title, dc.Kind)
			}
			uris = append(uris, dc.TextDocument.URI)
		}
		sort.Strings(uris)
		uris = slices.Compact(uris)
		for _, u := range uris {
			if e.Version(u) == 0 {
				return fmt.Errorf("code action %q edits %s, which is not open", a.Title, u)
			}
			edits := w.EditsFor(u)
			sort.SliceStable(edits, func(i, j int) bool {
				a, b := edits[i].Range.Start, edits[j].Range.Start
				return a.Line > b.Line || (a.Line == b.Line && a.Character > b.Character)
			})
			changes := make([]Change, len(edits))
			for i, ed := range edits {
				changes[i] = Replace(ed.Range.Start, ed.Range.End, ed.NewText)
			}
			if err := e.Change(ctx, u, changes...); err != nil {
				return err
			}
		}
	}
	if a.Command == nil {
		return nil
	}
	return e.Execute(ctx, *a.Command)
}

// Shutdown sends shutdown, then exit.
func (e *Editor) Shutdown(ctx context.Context) error {
	if err := e.Call(ctx, "shutdown", nil, nil); err != nil {
		return err
	}
	return e.Notify(ctx, "exit", nil)
}

func atLeast(n int, what string, count func(*Record) int) Expectation {
	return Expectation{Description: fmt.Sprintf("%d %s", n, what), Met: func(r *Record) bool { return count(r) >= n }}
}

// Questions expects n window/showMessageRequest questions.
func Questions(n int) Expectation {
	return atLeast(n, "window/showMessageRequest questions", func(r *Record) int { return len(r.Questions) })
}

// Cancelled expects n $/cancelRequest notifications from the bridge.
func Cancelled(n int) Expectation {
	return atLeast(n, "$/cancelRequest notifications", func(r *Record) int { return len(r.Cancels) })
}
