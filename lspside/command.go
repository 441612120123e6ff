package lspside

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	acp "github.com/coder/acp-go-sdk"
	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/translate"
)

func (s *Server) executeCommand(ctx context.Context, req *jsonrpc2.Request) (any, error) {
	var p struct {
		Command   string            `json:"command"`
		Arguments []json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(req.Params(), &p); err != nil {
		return nil, invalidParams("workspace/executeCommand: %v", err)
	}
	// Commands call back into the editor (showDocument, applyEdit): release the read loop first.
	rctx, done := s.track(req.ID())
	s.releaseReader(ctx)
	defer done()
	switch p.Command {
	case CommandAccept:
		var id string
		if len(p.Arguments) != 1 || json.Unmarshal(p.Arguments[0], &id) != nil || id == "" {
			return nil, invalidParams("%s takes one argument: the suggestion id", CommandAccept)
		}
		return nil, s.accept(rctx, id)
	case CommandReject:
		return nil, s.rejectCommand(rctx, p.Arguments)
	case CommandSuggest:
		return nil, s.suggestCommand(rctx, p.Arguments)
	case CommandSignIn:
		return nil, s.signInCommand(rctx)
	case CommandRestart:
		return nil, s.restartCommand(rctx)
	case CommandEnable, CommandDisable, CommandToggle:
		return s.switchCommand(rctx, p.Command, p.Arguments)
	}
	return nil, invalidParams("unknown command %q", p.Command)
}

// accept sends nes/accept for a live suggestion (unless the change that applied it already did)
// and takes the user to where it leads: a jump's target, the other file an edit changed, or the
// edit's cursorPosition. An id that already ended is logged and ignored: it must not end twice.
func (s *Server) accept(ctx context.Context, id string) error {
	l, ok := s.sugs.take(id)
	if !ok {
		s.log.Warn().Str("id", id).Msg("accept for a suggestion that is not live (unknown or already ended); ignored")
		return nil
	}
	agent := s.currentAgent()
	if agent == nil {
		s.log.Warn().Str("id", id).Msg("accept with no agent running")
		return nil
	}
	s.sugs.accept(ctx, agent, l, "nes/accept")
	switch {
	case l.jump != nil:
		s.showDocument(ctx, *l.jump)
	case l.after != nil:
		s.showDocument(ctx, *l.after)
	}
	return nil
}

// showDocument asks the editor to show a location (window/showDocument), when it can.
func (s *Server) showDocument(ctx context.Context, loc location) {
	if !s.clientSupports(func(c clientCaps) bool { return c.showDocument }) {
		s.log.Debug().Str("uri", loc.uri).Msg("the editor does not support window/showDocument")
		return
	}
	sel := translate.RangeToLSP(loc.sel)
	var res struct {
		Success bool `json:"success"`
	}
	if err := s.callEditor(ctx, s.cfg.ClientWait, "window/showDocument", translate.ShowDocumentParams{URI: loc.uri, TakeFocus: true, Selection: &sel}, &res); err != nil {
		s.log.Warn().Str("dir", "bridge→editor").Err(err).Msg("window/showDocument")
	} else if !res.Success {
		s.log.Info().Str("uri", loc.uri).Msg("the editor could not show the document")
	}
}

// rejectCommand dismisses suggestions explicitly: [id] that one, [{"uri": U}] those of a document,
// [] every live one.
func (s *Server) rejectCommand(ctx context.Context, args []json.RawMessage) error {
	var ended []*live
	switch {
	case len(args) == 0:
		ended = s.sugs.takeWhere(func(*live) bool { return true })
	case len(args) == 1:
		var id string
		var doc struct {
			URI string `json:"uri"`
		}
		switch {
		case json.Unmarshal(args[0], &id) == nil && id != "":
			if l, ok := s.sugs.take(id); ok {
				ended = []*live{l}
			}
		case json.Unmarshal(args[0], &doc) == nil && doc.URI != "":
			ended = s.sugs.takeWhere(func(l *live) bool { return l.uri == doc.URI })
		default:
			return invalidParams("%s takes a suggestion id, {\"uri\": ...}, or nothing", CommandReject)
		}
	default:
		return invalidParams("%s takes a suggestion id, {\"uri\": ...}, or nothing", CommandReject)
	}
	agent := s.currentAgent()
	for _, l := range ended {
		s.sugs.reject(ctx, agent, l.id, acp.UnstableNesRejectReasonRejected)
	}
	return nil
}

// suggestCommand asks for a suggestion by hand (triggerKind "manual") at [{"uri": U, "position": P}],
// shows the best one where it applies and asks the user: Apply (workspace/applyEdit, then accept)
// or Dismiss (reject). Without an answer it stays live and is offered as a code action.
func (s *Server) suggestCommand(ctx context.Context, args []json.RawMessage) error {
	// {uri, position}, or LSP's TextDocumentPositionParams {textDocument: {uri}, position}, which
	// some clients (Sublime's lsp_execute) fill in by themselves.
	var p struct {
		URI          string `json:"uri"`
		TextDocument struct {
			URI string `json:"uri"`
		} `json:"textDocument"`
		Position lspPosition `json:"position"`
	}
	if len(args) == 1 && json.Unmarshal(args[0], &p) == nil && p.URI == "" {
		p.URI = p.TextDocument.URI
	}
	if len(args) != 1 || p.URI == "" {
		return invalidParams("%s takes one argument: {\"uri\": ..., \"position\": {\"line\": L, \"character\": C}} or {\"textDocument\": {\"uri\": ...}, \"position\": ...}", CommandSuggest)
	}
	snap, ok := s.docs.Get(p.URI)
	if !ok {
		if glob, held := s.secret.glob(p.URI); held {
			s.showMessage(ctx, protocol.MessageTypeInfo, fmt.Sprintf("acp-lsp-bridge: this file is kept from the agent (exclusion glob %q); no suggestions for it.", glob))
			return nil
		}
		return invalidParams("%s: document not open: %s", CommandSuggest, p.URI)
	}
	editor := s.editorEncoding()
	cursor, err := snap.Mapper.PositionOffset(encoding.Position{Line: p.Position.Line, Character: p.Position.Character}, editor)
	if err != nil {
		return invalidParams("%s: position: %v", CommandSuggest, err)
	}
	if s.currentAgent() == nil {
		// Asked by hand: say why there is nothing rather than "no suggestion here".
		s.showMessage(ctx, protocol.MessageTypeInfo, s.notReady())
		return nil
	}
	var told bool
	lives, err := s.requestSuggestions(ctx, suggestRequest{snap: snap, cursor: cursor, trigger: acp.UnstableNesTriggerKindManual, explicit: true, toldWhy: &told})
	if err != nil {
		return err
	}
	best := bestSuggestion(lives, cursor)
	if best == nil {
		if !told {
			s.showMessage(ctx, protocol.MessageTypeInfo, "acp-lsp-bridge: the agent has no suggestion here.")
		}
		return nil
	}
	if loc, err := best.where(editor); err != nil {
		s.log.Warn().Str("id", best.id).Err(err).Msg("cannot show where the suggestion applies")
	} else if loc != nil {
		s.showDocument(ctx, *loc)
	}
	answer, err := s.ask(ctx, protocol.MessageTypeInfo, best.label()+"?", "Apply", "Dismiss")
	switch {
	case err != nil:
		s.log.Warn().Err(err).Msg("window/showMessageRequest; the suggestion stays available as a code action")
		return nil
	case answer == "Dismiss":
		return s.rejectCommand(ctx, []json.RawMessage{mustJSON(best.id)})
	case answer != "Apply":
		return nil // closed without choosing: still live
	}
	// The user may have answered late: the suggestion may have ended meanwhile (accepted through a
	// code action, invalidated by typing), or its documents moved on. Its edits then no longer fit.
	if !s.sugs.isLive(best.id) || !s.unchanged(best.files) {
		s.log.Info().Str("id", best.id).Msg("Apply came after the suggestion ended or its documents changed; nothing applied")
		s.showMessage(ctx, protocol.MessageTypeInfo, "acp-lsp-bridge: that suggestion no longer applies; the document changed.")
		return nil
	}
	if len(best.files) > 0 {
		for _, f := range best.files {
			if err := s.recheck(f.URI); err != nil {
				s.log.Warn().Str("id", best.id).Err(err).Msg("Apply refused: a file the suggestion edits is no longer inside the workspace")
				s.showMessage(ctx, protocol.MessageTypeWarning, "acp-lsp-bridge: that suggestion was not applied: "+err.Error())
				return nil
			}
		}
		we, err := translate.ToWorkspaceEdit(best.files, editor, s.clientSupports(func(c clientCaps) bool { return c.documentChanges }))
		if err != nil {
			return err
		}
		var res struct {
			Applied       bool   `json:"applied"`
			FailureReason string `json:"failureReason"`
		}
		if err := s.callEditor(ctx, s.cfg.ClientWait, "workspace/applyEdit", map[string]any{"label": best.label(), "edit": we}, &res); err != nil || !res.Applied {
			s.log.Warn().Err(err).Str("reason", res.FailureReason).Msg("workspace/applyEdit was not applied; the suggestion stays live")
			return nil
		}
	}
	return s.accept(ctx, best.id)
}

// unchanged reports whether the open documents a suggestion edits still read as when it was
// presented.
func (s *Server) unchanged(files []translate.FileEdit) bool {
	for _, f := range files {
		if f.Version == nil {
			continue
		}
		cur, ok := s.docs.Get(f.URI)
		if !ok || cur.Version != *f.Version || !cur.Mapper.Equal(f.Mapper) {
			return false
		}
	}
	return true
}

// bestSuggestion picks what a manual request offers: an edit of the document nearest the cursor,
// else the first other suggestion.
func bestSuggestion(lives []*live, cursor int) *live {
	var best *live
	for _, l := range lives {
		if l.repl != nil && l.kind == "edit" && (best == nil || best.repl == nil || distance(*l.repl, cursor) < distance(*best.repl, cursor)) {
			best = l
		}
	}
	if best == nil && len(lives) > 0 {
		best = lives[0]
	}
	return best
}

// where is the location a suggestion concerns, to show before asking about it, in encoding k; nil
// when there is none.
func (l *live) where(k encoding.Kind) (*location, error) {
	switch {
	case l.jump != nil:
		return l.jump, nil
	case len(l.files) > 0:
		f := l.files[0]
		return locate(f.URI, f.Mapper, f.Spans[0].Start, f.Spans[0].End, k)
	}
	return nil, nil
}

// ask puts a question to the user with window/showMessageRequest and returns the chosen title ("" when
// the user closed it). It waits at most Config.UserWait; when ctx ends or the wait is over, the editor is
// told to drop the question ($/cancelRequest) and ask returns ctx's error.
func (s *Server) ask(ctx context.Context, typ protocol.MessageType, question string, options ...string) (string, error) {
	actions := make([]map[string]string, len(options))
	for i, o := range options {
		actions[i] = map[string]string{"title": o}
	}
	var res *struct {
		Title string `json:"title"`
	}
	if err := s.callEditor(ctx, s.cfg.UserWait, "window/showMessageRequest", map[string]any{
		"type": typ, "message": question, "actions": actions,
	}, &res); err != nil {
		return "", err
	}
	if res == nil {
		return "", nil
	}
	return res.Title, nil
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// idValue is a request id as a JSON value (jsonrpc2.ID does not marshal by itself).
func idValue(id jsonrpc2.ID) any {
	if n, ok := id.Number(); ok {
		return n
	}
	str, _ := id.StringValue()
	return str
}

// callEditor sends a request to the editor and waits at most wait for its answer: some editors
// never answer some requests (workspace/applyEdit, window/showMessageRequest). When the wait is
// over, or ctx ends, the editor is told to drop the request ($/cancelRequest) and the error says
// which request went unanswered.
func (s *Server) callEditor(ctx context.Context, wait time.Duration, method string, params, result any) error {
	cctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	id, err := s.conn.Call(cctx, method, params, result)
	if err == nil {
		return nil
	}
	if cctx.Err() != nil {
		if nerr := s.conn.Notify(context.Background(), "$/cancelRequest", map[string]any{"id": idValue(id)}); nerr != nil {
			s.log.Debug().Err(nerr).Msg("$/cancelRequest to the editor")
		}
		if ctx.Err() == nil {
			return fmt.Errorf("the editor did not answer %s within %s", method, wait)
		}
	}
	return fmt.Errorf("%s: %w", method, err)
}
