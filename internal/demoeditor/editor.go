// Package demoeditor is the editor of `acp-lsp-bridge demo`: the least LSP client that can take a
// user's part in a next-edit session. It keeps a buffer of each document it opened, in step with
// the bridge; it sends the user's keystrokes as incremental changes, in positions of the encoding
// the bridge chose; it asks for the next edit as the Copilot NES plugins do
// (textDocument/copilotInlineEdit) and accepts one by running its command; and it waits for the
// bridge's word that the agent is ready. It answers what the bridge asks of an editor as a quiet
// one does, and keeps nothing else of what the bridge says.
//
// It is product code, linked into the binary: the tests' own editor is internal/test/fakeeditor,
// which this package does not use.
package demoeditor

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"strings"
	"sync"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
)

// requestTimeout bounds each request the editor sends.
const requestTimeout = 15 * time.Second

// readyMark is in the window/logMessage by which the bridge says its agent is ready
// ("acp-lsp-bridge: NAME is ready (...)"); before it, requests for suggestions answer empty.
const readyMark = " is ready ("

// Pos is an LSP position in the encoding the editor and the bridge agreed on.
type Pos struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

// Range is an LSP range.
type Range struct {
	Start Pos `json:"start"`
	End   Pos `json:"end"`
}

// Command is the LSP command that accepts a suggestion, its arguments kept as the bridge sent
// them, to be sent back so.
type Command struct {
	Command   string          `json:"command"`
	Arguments json.RawMessage `json:"arguments"`
}

// Suggestion is one edit the bridge suggests (an item of textDocument/copilotInlineEdit): Text to
// put in place of Range, accepted by running Command once it is applied.
type Suggestion struct {
	Range   Range    `json:"range"`
	Text    string   `json:"text"`
	Command *Command `json:"command"`
}

// Init is what the editor says of itself in initialize.
type Init struct {
	Root       string   // the workspace folder's URI
	ProcessID  int      // sent as processId
	ClientName string   // sent as clientInfo.name
	Encodings  []string // the position encodings offered, most preferred first
}

type buffer struct {
	text    *encoding.Mapper
	version int
}

// Editor is an LSP client talking to one bridge.
type Editor struct {
	conn jsonrpc2.Conn

	mu    sync.Mutex
	enc   encoding.Kind // utf-16, LSP's default, until the bridge chooses
	bufs  map[string]*buffer
	said  []string      // the bridge's log messages, for the error when it is never ready
	ready chan struct{} // closed at the bridge's word that the agent is ready
}

// pipes is the editor's end of the connection: it reads the bridge's output and writes its input.
type pipes struct {
	io.Reader
	io.WriteCloser
}

// Connect starts an editor reading the bridge's output from r and writing the bridge's input to w,
// which Close closes.
func Connect(r io.Reader, w io.WriteCloser) *Editor {
	e := &Editor{enc: encoding.UTF16, bufs: map[string]*buffer{}, ready: make(chan struct{})}
	e.conn = jsonrpc2.NewConn(jsonrpc2.NewStream(pipes{r, w}))
	e.conn.Go(context.Background(), e.answer)
	return e
}

// Close ends the editor's side of the connection.
func (e *Editor) Close() error { return e.conn.Close() }

// answer handles what the bridge sends the editor: it notes the log messages, says yes to an edit
// or a document to show, and answers every other request with null, as the user dismissing it.
func (e *Editor) answer(_ context.Context, req *jsonrpc2.Request) (any, error) {
	switch req.Method() {
	case "window/logMessage":
		var p struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(req.Params(), &p)
		e.mu.Lock()
		e.said = append(e.said, p.Message)
		if strings.Contains(p.Message, readyMark) && !isClosed(e.ready) {
			close(e.ready)
		}
		e.mu.Unlock()
	case "workspace/applyEdit":
		return map[string]bool{"applied": true}, nil
	case "window/showDocument":
		return map[string]bool{"success": true}, nil
	}
	return nil, nil
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func (e *Editor) call(ctx context.Context, method string, params, result any) error {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	_, err := e.conn.Call(ctx, method, params, result)
	return err
}

// Initialize sends initialize and initialized, and from then on the editor speaks in the position
// encoding the bridge chose.
func (e *Editor) Initialize(ctx context.Context, in Init) error {
	caps := map[string]any{
		"window":  map[string]any{"showDocument": map[string]any{"support": true}},
		"general": map[string]any{"positionEncodings": in.Encodings},
	}
	folder := map[string]any{"uri": in.Root, "name": path.Base(in.Root)}
	params := map[string]any{
		"processId":        in.ProcessID,
		"capabilities":     caps,
		"rootUri":          in.Root,
		"workspaceFolders": []any{folder},
		"clientInfo":       map[string]any{"name": in.ClientName},
	}
	var res struct {
		Capabilities struct {
			PositionEncoding string `json:"positionEncoding"`
		} `json:"capabilities"`
	}
	if err := e.call(ctx, "initialize", params, &res); err != nil {
		return err
	}
	if k, ok := encoding.ParseKind(res.Capabilities.PositionEncoding); ok {
		e.mu.Lock()
		e.enc = k
		e.mu.Unlock()
	}
	return e.conn.Notify(ctx, "initialized", map[string]any{})
}

// WaitReady waits for the bridge's word that the agent is ready, or for ctx to end.
func (e *Editor) WaitReady(ctx context.Context) error {
	select {
	case <-e.ready:
		return nil
	case <-ctx.Done():
		e.mu.Lock()
		said := append([]string(nil), e.said...)
		e.mu.Unlock()
		return fmt.Errorf("waited in vain for a window/logMessage containing %q; the bridge logged %q", readyMark, said)
	}
}

// Open opens the document uri in language with text, at version 1.
func (e *Editor) Open(ctx context.Context, uri, language, text string) error {
	e.mu.Lock()
	e.bufs[uri] = &buffer{text: encoding.NewMapper(text), version: 1}
	e.mu.Unlock()
	doc := map[string]any{"uri": uri, "languageId": language, "version": 1, "text": text}
	return e.conn.Notify(ctx, "textDocument/didOpen", map[string]any{"textDocument": doc})
}

// Edit replaces bytes start..end of the buffer of uri with text and sends the change, as the
// document's next version, as an editor does when the user types.
func (e *Editor) Edit(ctx context.Context, uri string, start, end int, text string) error {
	e.mu.Lock()
	b, ok := e.bufs[uri]
	if !ok {
		e.mu.Unlock()
		return fmt.Errorf("%s is not open in the editor", uri)
	}
	r, err := b.text.OffsetsRange(start, end, e.enc)
	if err != nil {
		e.mu.Unlock()
		return err
	}
	b.text = b.text.Edit(start, end, text)
	b.version++
	version := b.version
	e.mu.Unlock()
	change := map[string]any{"range": rangeOf(r), "text": text}
	return e.conn.Notify(ctx, "textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": uri, "version": version},
		"contentChanges": []any{change},
	})
}

func rangeOf(r encoding.Range) Range {
	return Range{Start: Pos{r.Start.Line, r.Start.Character}, End: Pos{r.End.Line, r.End.Character}}
}

// Text is the buffer of uri ("" when it is not open).
func (e *Editor) Text(uri string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if b, ok := e.bufs[uri]; ok {
		return b.text.Text()
	}
	return ""
}

// snapshot is the buffer of uri and the encoding in force.
func (e *Editor) snapshot(uri string) (*buffer, encoding.Kind, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	b, ok := e.bufs[uri]
	if !ok {
		return nil, e.enc, fmt.Errorf("%s is not open in the editor", uri)
	}
	return &buffer{text: b.text, version: b.version}, e.enc, nil
}

// PosOf is the position of byte offset off in the buffer of uri.
func (e *Editor) PosOf(uri string, off int) (Pos, error) {
	b, k, err := e.snapshot(uri)
	if err != nil {
		return Pos{}, err
	}
	p, err := b.text.OffsetPosition(off, k)
	return Pos{p.Line, p.Character}, err
}

// OffsetOf is the byte offset of p in the buffer of uri.
func (e *Editor) OffsetOf(uri string, p Pos) (int, error) {
	b, k, err := e.snapshot(uri)
	if err != nil {
		return 0, err
	}
	return b.text.PositionOffset(encoding.Position{Line: p.Line, Character: p.Character}, k)
}

// Suggestions asks for the next edits at p in uri (textDocument/copilotInlineEdit, for the version
// the editor last sent).
func (e *Editor) Suggestions(ctx context.Context, uri string, p Pos) ([]Suggestion, error) {
	b, _, err := e.snapshot(uri)
	if err != nil {
		return nil, err
	}
	params := map[string]any{"textDocument": map[string]any{"uri": uri, "version": b.version}, "position": p}
	var res struct {
		Edits []Suggestion `json:"edits"`
	}
	if err := e.call(ctx, "textDocument/copilotInlineEdit", params, &res); err != nil {
		return nil, err
	}
	return res.Edits, nil
}

// Execute runs c through workspace/executeCommand, as an editor does to accept a suggestion (with
// an empty list of arguments when c has none).
func (e *Editor) Execute(ctx context.Context, c Command) error {
	if len(c.Arguments) == 0 || string(c.Arguments) == "null" {
		c.Arguments = json.RawMessage("[]")
	}
	return e.call(ctx, "workspace/executeCommand", c, nil)
}

// Shutdown sends shutdown, then exit.
func (e *Editor) Shutdown(ctx context.Context) error {
	if err := e.call(ctx, "shutdown", nil, nil); err != nil {
		return err
	}
	return e.conn.Notify(ctx, "exit", nil)
}
