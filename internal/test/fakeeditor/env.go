package fakeeditor

import (
	"context"
	"time"
)

// TB is the part of testing.TB that [Env] uses.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
}

// Env is an [Editor] for a test: each method fails the test on an error, and each wait is bounded
// by the editor's timeout.
type Env struct {
	*Editor
	T TB
}

// NewEnv wraps ed for the test t.
func NewEnv(t TB, ed *Editor) *Env { return &Env{Editor: ed, T: t} }

func (e *Env) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), e.opts.Timeout)
}

func (e *Env) must(what string, err error) {
	if err != nil {
		e.T.Helper()
		e.T.Fatalf("%s: %v", what, err)
	}
}

// Initialize runs initialize and initialized offering these encodings (none: nothing offered) and
// returns the encoding the bridge chose.
func (e *Env) Initialize(root string, encodings ...string) string {
	e.T.Helper()
	return e.InitializeWith(InitParams{Root: root, Encodings: encodings}).Capabilities.PositionEncoding
}

// InitializeWith runs initialize and initialized with these params.
func (e *Env) InitializeWith(p InitParams) *InitResult {
	e.T.Helper()
	res, err := e.Editor.Initialize(context.Background(), p)
	e.must("initialize", err)
	return res
}

// Await waits for the expectations, and fails the test when they are not met in time.
func (e *Env) Await(exps ...Expectation) {
	e.T.Helper()
	ctx, cancel := e.ctx()
	defer cancel()
	e.must("waiting", e.Editor.Await(ctx, exps...))
}

// AwaitFor is Await with its own bound.
func (e *Env) AwaitFor(d time.Duration, exps ...Expectation) {
	e.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	e.must("waiting", e.Editor.Await(ctx, exps...))
}

// WaitReady waits for the bridge's word that the agent is ready (see [Ready]).
func (e *Env) WaitReady() {
	e.T.Helper()
	e.Await(Ready())
}

// WaitMessage waits for a window/showMessage containing substr.
func (e *Env) WaitMessage(substr string) {
	e.T.Helper()
	e.Await(ShownMessage(substr))
}

// Call sends a request and returns its error, which the test checks.
func (e *Env) Call(method string, params, result any) error {
	return e.Editor.Call(context.Background(), method, params, result)
}

// MustCall sends a request and fails the test on an error.
func (e *Env) MustCall(method string, params, result any) {
	e.T.Helper()
	e.must(method, e.Call(method, params, result))
}

// Notify sends a notification.
func (e *Env) Notify(method string, params any) {
	e.T.Helper()
	e.must(method, e.Editor.Notify(context.Background(), method, params))
}

// Open opens uri with text (see [Editor.Open]).
func (e *Env) Open(uri, text string) {
	e.T.Helper()
	e.must("didOpen", e.Editor.Open(context.Background(), uri, text))
}

// OpenAs opens uri in language with text.
func (e *Env) OpenAs(uri, language, text string) {
	e.T.Helper()
	e.must("didOpen", e.Editor.OpenAs(context.Background(), uri, language, text))
}

// CloseDoc closes uri.
func (e *Env) CloseDoc(uri string) {
	e.T.Helper()
	e.must("didClose", e.Editor.CloseDoc(context.Background(), uri))
}

// ChangeAt sends didChange with this version (see [Editor.ChangeAt]).
func (e *Env) ChangeAt(uri string, version int, changes ...Change) {
	e.T.Helper()
	e.must("didChange", e.Editor.ChangeAt(context.Background(), uri, version, changes...))
}

// Change sends the changes as the next version.
func (e *Env) Change(uri string, changes ...Change) {
	e.T.Helper()
	e.must("didChange", e.Editor.Change(context.Background(), uri, changes...))
}

// Edit replaces bytes start..end of uri with text (see [Editor.Edit]).
func (e *Env) Edit(uri string, start, end int, text string) {
	e.T.Helper()
	e.must("edit", e.Editor.Edit(context.Background(), uri, start, end, text))
}

// Inline asks for inline completions at p; the test checks the error.
func (e *Env) Inline(uri string, p Pos) ([]InlineItem, error) {
	return e.Editor.Inline(context.Background(), uri, p)
}

// InlineTriggered asks for inline completions at p with this triggerKind.
func (e *Env) InlineTriggered(uri string, p Pos, triggerKind int) ([]InlineItem, error) {
	return e.Editor.InlineTriggered(context.Background(), uri, p, triggerKind)
}

// CodeActions asks for the code actions of r; the test checks the error.
func (e *Env) CodeActions(uri string, r Range, diagnostics ...any) ([]CodeAction, error) {
	return e.Editor.CodeActions(context.Background(), uri, r, diagnostics...)
}

// CodeActionsTriggered asks for the code actions of r with this triggerKind (see
// [Editor.CodeActionsTriggered]); the test checks the error.
func (e *Env) CodeActionsTriggered(uri string, r Range, triggerKind int, diagnostics ...any) ([]CodeAction, error) {
	return e.Editor.CodeActionsTriggered(context.Background(), uri, r, triggerKind, diagnostics...)
}

// Start sends a request without waiting for its answer (see [Editor.Start]).
func (e *Env) Start(method string, params, result any) *Pending {
	return e.Editor.Start(context.Background(), method, params, result)
}

// Completion asks for completion items at p; the test checks the error.
func (e *Env) Completion(uri string, p Pos) ([]CompletionItem, error) {
	return e.Editor.Completion(context.Background(), uri, p)
}

// InlineEdits asks for Copilot-style inline edits at p; the test checks the error.
func (e *Env) InlineEdits(uri string, p Pos) ([]InlineEdit, error) {
	return e.Editor.InlineEdits(context.Background(), uri, p)
}

// Execute runs a command and fails the test on an error.
func (e *Env) Execute(c Command) {
	e.T.Helper()
	e.must("workspace/executeCommand "+c.Command, e.Editor.Execute(context.Background(), c))
}

// Accept accepts an inline item (see [Editor.Accept]).
func (e *Env) Accept(uri string, it InlineItem) {
	e.T.Helper()
	e.must("accept", e.Editor.Accept(context.Background(), uri, it))
}

// ApplyAction applies a code action (see [Editor.ApplyAction]).
func (e *Env) ApplyAction(a CodeAction) {
	e.T.Helper()
	e.must("code action "+a.Title, e.Editor.ApplyAction(context.Background(), a))
}

// Shutdown sends shutdown and exit.
func (e *Env) Shutdown() {
	e.T.Helper()
	e.must("shutdown", e.Editor.Shutdown(context.Background()))
}
