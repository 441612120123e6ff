package lspside

import (
	"context"
	"encoding/json"
	"fmt"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/document"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/editorstate"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/translate"
)

// Notifications the editor configurations in editors/ send, beyond LSP.
const (
	// NotifyDidFocus {textDocument: {uri}, position?, visibleRange?}: the user entered a buffer
	// (or scrolled it). Positions are in the negotiated encoding.
	NotifyDidFocus = "acp-lsp-bridge/didFocus"
	// NotifyDiagnostics {textDocument: {uri}, diagnostics: [LSP Diagnostic]}: the diagnostics the
	// editor shows for a document (from every language server), replacing the previous ones.
	NotifyDiagnostics = "acp-lsp-bridge/diagnostics"
	// NotifyAsking {textDocument: {uri}, automatic: bool}: whether the editor asks for
	// suggestions while the user changes the document from now on (Neovim's ghost text: only in
	// insert mode). The bridge asks ahead only while it does (ahead.go).
	NotifyAsking = "acp-lsp-bridge/asking"
)

// bridgeDidFocus handles acp-lsp-bridge/didFocus.
func (s *Server) bridgeDidFocus(ctx context.Context, raw json.RawMessage) error {
	var p struct {
		TextDocument struct {
			URI string `json:"uri"`
		} `json:"textDocument"`
		Position     *lspPosition `json:"position"`
		VisibleRange *lspRange    `json:"visibleRange"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return fmt.Errorf("bad params: %w", err)
	}
	s.fwd.Lock()
	defer s.fwd.Unlock()
	snap, ok := s.docs.Get(p.TextDocument.URI)
	if !ok {
		if s.secret.has(p.TextDocument.URI) {
			s.reqs.enter(p.TextDocument.URI) // the status says why nothing comes
		}
		// Editors enter buffers the bridge does not sync (help, terminals): nothing to say.
		return nil
	}
	editor := s.editorEncoding()
	cursor := -1
	if p.Position != nil {
		cursor = clampedOffset(snap.Mapper, encoding.Position{Line: p.Position.Line, Character: p.Position.Character}, editor)
	}
	var visible *editorstate.LineRange
	if p.VisibleRange != nil {
		first, last := p.VisibleRange.Start.Line, p.VisibleRange.End.Line
		n := snap.Mapper.LineCount()
		first, last = max(0, min(first, n-1)), max(0, min(last, n-1))
		if first <= last {
			visible = &editorstate.LineRange{Start: first, End: last}
		}
	}
	s.focus(ctx, snap, cursor, visible)
	return nil
}

// clampedOffset is the offset of p, with a line past the end taken as the end of the text and a
// column past the end of its line as the line's end.
func clampedOffset(m *encoding.Mapper, p encoding.Position, k encoding.Kind) int {
	if p.Line < 0 {
		return 0
	}
	if p.Line >= m.LineCount() {
		return m.Len()
	}
	off, err := m.PositionOffset(p, k)
	if err != nil {
		return m.LineStart(p.Line)
	}
	return off
}

// focus records that snap's document is the active one, with the cursor (a byte offset, -1 when
// unknown: the document's last known cursor is used) and the visible lines when known, and sends
// document/didFocus when the agent asked for it. The caller holds s.fwd.
func (s *Server) focus(ctx context.Context, snap *document.Snapshot, cursor int, visible *editorstate.LineRange) {
	cursor = s.reqs.focus(snap.URI, cursor, snap.Mapper.Len())
	s.ed.Focused(snap.URI, snap.Mapper, cursor, true, visible)
	agent := s.currentAgent()
	if agent == nil || !agent.Events().DidFocus || s.isWithheld(snap.URI) {
		return
	}
	enc := agent.Encoding()
	pos, err := translate.OffsetToACP(snap.Mapper, cursor, enc)
	if err != nil {
		pos, _ = translate.OffsetToACP(snap.Mapper, snap.Mapper.LineStart(snap.Mapper.LineOf(cursor)), enc)
	}
	// The visible range is whole lines, written as the RFD's example and the openFiles context
	// write it (character 0 at both ends); unknown, it is the cursor's point.
	vr := acp.UnstableRange{Start: pos, End: pos}
	if visible != nil {
		vr = acp.UnstableRange{Start: acp.UnstablePosition{Line: visible.Start}, End: acp.UnstablePosition{Line: visible.End}}
	}
	if err := agent.DidFocus(ctx, acp.UnstableDidFocusDocumentNotification{
		Uri: snap.URI, Version: snap.Version, Position: pos, VisibleRange: vr,
	}); err != nil {
		s.sendFailed(agent, "document/didFocus", err)
	}
}

// Where the user is (the document the status is about, and the focus the agent hears of): the
// document the editor last said the user entered (acp-lsp-bridge/didFocus, Copilot's
// textDocument/didFocus), or the user last asked in. An editor that says nothing of the focus
// (lsp-mode, Helix, Kakoune) has the user in the document they last changed, too. A request asks
// in its document when the user made it by hand, or when it asks at the cursor while the user types
// (inline completion, completion, copilotInlineEdit); a code action the editor asks for by itself
// (context.triggerKind 2, or none) does not: editors ask for every visible document, and ask in the
// background. Neither moves the user to its document.

// reading is told of each message from the editor as it is read, before its handler runs.
func (s *Server) reading(method string, params json.RawMessage) {
	focus := method == NotifyDidFocus || method == "textDocument/didFocus"
	s.reqs.reading(passingBy(method, params), focus)
}

// passingBy is the document a request names without the user being in it: an automatic code
// action's; "" for any other message.
func passingBy(method string, params json.RawMessage) string {
	if method != "textDocument/codeAction" {
		return ""
	}
	var p struct {
		TextDocument struct {
			URI string `json:"uri"`
		} `json:"textDocument"`
		Context struct {
			TriggerKind int `json:"triggerKind"`
		} `json:"context"`
	}
	if json.Unmarshal(params, &p) != nil || p.Context.TriggerKind == 1 {
		return ""
	}
	return p.TextDocument.URI
}

// requestAt records a request's position: a cursor movement for the context, and, when the request
// asks in another document than the active one, a focus change (the editor told nothing, but the
// user is there now). A request that names its document in passing records nothing.
func (s *Server) requestAt(ctx context.Context, snap *document.Snapshot, cursor int) {
	// Callers took snap in the read loop, where every change is applied too: it is current.
	s.fwd.Lock()
	defer s.fwd.Unlock()
	if s.reqs.inPassing(snap.URI) {
		return
	}
	if s.reqs.at(snap.URI, cursor) {
		s.focus(ctx, snap, cursor, nil) // records the cursor too
		return
	}
	s.ed.Cursor(snap.URI, snap.Mapper, cursor)
}

// changedIn is told of a change of uri the editor sent: snap is the document after it (nil for one
// kept from the agent), and cursor the end of the change. In an editor that says nothing of the
// focus, the user is in the document they change. The caller holds s.fwd, and has sent the change
// to the agent (the focus names its version).
func (s *Server) changedIn(ctx context.Context, uri string, snap *document.Snapshot, cursor int) {
	if !s.reqs.followsChanges(uri) {
		return
	}
	if snap == nil {
		s.reqs.enter(uri) // the status says why nothing comes
		return
	}
	s.focus(ctx, snap, cursor, nil)
}

// bridgeDiagnostics handles acp-lsp-bridge/diagnostics.
func (s *Server) bridgeDiagnostics(raw json.RawMessage) error {
	var p struct {
		TextDocument struct {
			URI string `json:"uri"`
		} `json:"textDocument"`
		Diagnostics []lspDiagnostic `json:"diagnostics"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return fmt.Errorf("bad params: %w", err)
	}
	if p.TextDocument.URI == "" {
		return fmt.Errorf("bad params: no textDocument.uri")
	}
	if s.secret.has(p.TextDocument.URI) {
		return nil // not even its diagnostics reach the agent
	}
	s.ed.SetDiagnostics(p.TextDocument.URI, toStateDiagnostics(p.Diagnostics))
	return nil
}

func toStateDiagnostics(ds []lspDiagnostic) []editorstate.Diagnostic {
	out := make([]editorstate.Diagnostic, len(ds))
	for i, d := range ds {
		out[i] = editorstate.Diagnostic{Range: d.Range.toRange(), Severity: d.Severity, Message: d.Message}
	}
	return out
}
