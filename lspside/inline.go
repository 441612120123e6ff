package lspside

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	acp "github.com/coder/acp-go-sdk"
	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/acpside"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/document"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/translate"
)

// positionParams are the params every position request shares.
type positionParams struct {
	TextDocument struct {
		URI     string         `json:"uri"`
		Version jsontext.Value `json:"version"`
	} `json:"textDocument"`
	Position lspPosition `json:"position"`
	Context  *struct {
		TriggerKind int `json:"triggerKind"`
	} `json:"context"`
}

// snapshotAt decodes position params and takes the document's snapshot and the position's offset,
// in order, before the request runs.
func (s *Server) snapshotAt(method string, raw json.RawMessage) (positionParams, *document.Snapshot, int, error) {
	p, ok := decodePositionParams(raw)
	if !ok {
		p = positionParams{}
		if err := jsonv2.Unmarshal(raw, &p, acpside.LenientJSON); err != nil {
			return p, nil, 0, invalidParams("%s: %v", method, err)
		}
	}
	snap, ok := s.docs.Get(p.TextDocument.URI)
	if !ok {
		if s.secret.has(p.TextDocument.URI) {
			s.reqs.enter(p.TextDocument.URI)
			return p, nil, 0, errHeldBack
		}
		return p, nil, 0, invalidParams("%s: document not open: %s", method, p.TextDocument.URI)
	}
	cursor, err := snap.Mapper.PositionOffset(encoding.Position{Line: p.Position.Line, Character: p.Position.Character}, s.editorEncoding())
	if err != nil {
		return p, nil, 0, invalidParams("%s: position %d:%d in %s: %v", method, p.Position.Line, p.Position.Character, p.TextDocument.URI, err)
	}
	s.requestAt(context.Background(), snap, cursor)
	return p, snap, cursor, nil
}

// errHeldBack is a request for a document kept from the agent (secrets.go): it is answered empty.
var errHeldBack = errors.New("the document is kept from the agent")

// trigger maps an LSP trigger kind (1 is Invoked for both inline completion and completion) to
// the NES one.
func trigger(p positionParams) acp.UnstableNesTriggerKind {
	if p.Context != nil && p.Context.TriggerKind == 1 {
		return acp.UnstableNesTriggerKindManual
	}
	return acp.UnstableNesTriggerKindAutomatic
}

// positionRequest is what a position request took in order: its params, the snapshot and the
// position's offset in it.
type positionRequest struct {
	params positionParams
	snap   *document.Snapshot
	cursor int
}

// automatic reports whether the editor asked by itself (not the user by hand).
func (pr positionRequest) automatic() bool {
	return trigger(pr.params) == acp.UnstableNesTriggerKindAutomatic
}

// suggestionsAt is the shared flow of the requests at a position: take the snapshot in order, then
// release the read loop and ask the agent (cancellable by $/cancelRequest). When skip, given the
// snapshot, says so, nothing is asked and skipped is true.
func (s *Server) suggestionsAt(ctx context.Context, req *jsonrpc2.Request, skip func(positionRequest) bool) (pr positionRequest, lives []*live, skipped bool, err error) {
	p, snap, cursor, err := s.snapshotAt(req.Method(), json.RawMessage(req.Params()))
	pr = positionRequest{p, snap, cursor}
	if errors.Is(err, errHeldBack) {
		return pr, nil, true, nil // kept from the agent: nothing to ask
	}
	if err != nil {
		return pr, nil, false, err
	}
	if skip != nil && skip(pr) {
		return pr, nil, true, nil
	}
	rctx, done := s.track(req.ID())
	s.releaseReader(ctx)
	defer done()
	// The inline edit surface shows the suggestion nearest the cursor anywhere in the document:
	// what was asked ahead at the change serves it wherever the cursor is.
	anywhere := req.Method() == "textDocument/copilotInlineEdit"
	if s.joinAhead(rctx, snap, cursor, trigger(p) == acp.UnstableNesTriggerKindAutomatic, anywhere) {
		// The bridge asked ahead at this very place: its answer, not a second request.
		s.log.Debug().Str("uri", snap.URI).Msg("answered from the request asked ahead")
		return pr, s.sugs.forDocument(snap.URI, snap.Version), false, nil
	}
	lives, err = s.requestSuggestions(rctx, suggestRequest{snap: snap, cursor: cursor, trigger: trigger(p), explicit: trigger(p) == acp.UnstableNesTriggerKindManual})
	return pr, lives, false, err
}

func (s *Server) inlineCompletion(ctx context.Context, req *jsonrpc2.Request) (any, error) {
	editor := s.editorEncoding()
	var through []protocol.InlineCompletionItem
	typedThrough := func(pr positionRequest) bool {
		if !pr.automatic() {
			// Asked by hand: the agent answers (the alternatives VS Code shows with its arrows,
			// Neovim's cycling), as a request by hand is the way to ask for another.
			return false
		}
		// The agent already answered for this text and this position (a code action's answer that
		// came after the menu opened, or the editor asking again): that answer, without asking
		// again. Not while the switch is off: then only typing through what was asked for by hand
		// shows.
		if s.reqs.automatic(pr.snap.URI) {
			if through = s.inlineItems(s.sugs.forDocument(pr.snap.URI, pr.snap.Version), pr.snap, pr.cursor, editor, true); len(through) > 0 {
				s.log.Debug().Str("uri", pr.snap.URI).Msg("inline completion answered from the agent's answer for this text and position")
				return true
			}
		}
		if s.cfg.NoTypeThrough {
			return false
		}
		through = s.typeThrough(pr.snap, pr.cursor, editor)
		return len(through) > 0
	}
	pr, lives, skipped, err := s.suggestionsAt(ctx, req, typedThrough)
	if skipped {
		return inlineResult(through)
	}
	if err != nil {
		return nil, err
	}
	return inlineResult(s.inlineItems(lives, pr.snap, pr.cursor, editor, false))
}

// inlineItems are the inline completion items of lives at cursor in snap, in their order: the edits
// of this document on the cursor's line around the cursor. With sameCursor, only those the agent
// computed for this very position (lives are of snap's version).
func (s *Server) inlineItems(lives []*live, snap *document.Snapshot, cursor int, editor encoding.Kind, sameCursor bool) []protocol.InlineCompletionItem {
	items := []protocol.InlineCompletionItem{}
	for _, l := range lives {
		if sameCursor && l.cursor != cursor {
			continue
		}
		if l.kind != "edit" || l.repl == nil || !translate.FitsInline(snap.Mapper, *l.repl, cursor) {
			s.log.Debug().Str("id", l.id).Str("kind", l.kind).Msg("suggestion not shown inline: it is not an edit of this document on the cursor's line around the cursor; other surfaces can show it")
			continue
		}
		item, err := translate.ReplacementToInlineItem(snap.Mapper, *l.repl, editor, CommandAccept, l.id)
		if err != nil {
			s.log.Warn().Str("id", l.id).Err(err).Msg("cannot show the suggestion inline")
			continue
		}
		items = append(items, item)
	}
	return items
}

// typeThrough answers an inline request without asking the agent while the user types the start of
// an edit suggestion that is shown: the document reads as the text it was computed on with the
// edit's region replaced by what was typed so far (a prefix of the suggestion), and the cursor is at
// the end of what was typed. The item is the rest of the same suggestion (same id), over the typed
// part, exactly what the agent's own answer would show.
func (s *Server) typeThrough(snap *document.Snapshot, cursor int, editor encoding.Kind) []protocol.InlineCompletionItem {
	for _, th := range s.typedThrough(snap, cursor) {
		item, err := translate.ReplacementToInlineItem(snap.Mapper, th.rest, editor, CommandAccept, th.l.id)
		if err != nil {
			continue
		}
		s.log.Debug().Str("id", th.l.id).Int("typed", th.typed).Msg("inline completion answered from the suggestion being typed through")
		return []protocol.InlineCompletionItem{item}
	}
	return nil
}

// through is a shown edit suggestion the user is typing through: typed bytes of it are in, and
// rest is what remains of it, as inline completion shows it.
type through struct {
	l     *live
	typed int
	rest  translate.Replacement
}

// typedThrough are the edit suggestions of snap's document that the user is typing through with
// the cursor at the end of what was typed (typeThrough).
func (s *Server) typedThrough(snap *document.Snapshot, cursor int) []through {
	var out []through
	for _, l := range s.sugs.forURI(snap.URI) {
		// Only once the user has typed: a request for the version the suggestion was made for is
		// a new question for the agent.
		if l.kind != "edit" || l.repl == nil || l.applied || len(l.files) != 1 || l.files[0].URI != snap.URI || l.base.Version == snap.Version {
			continue
		}
		region, ok := s.sugs.typedInto(l, snap)
		typed := len(region)
		if !ok || !strings.HasPrefix(l.repl.Text, region) || region == l.repl.Text || typed == 0 || cursor != l.repl.Start+typed {
			continue
		}
		rest := translate.Replacement{Start: l.repl.Start, End: l.repl.Start + typed, Text: l.repl.Text}
		if strings.Contains(region, "\n") {
			// Typed (or taken a line at a time) past a line break: the rest is inserted at the
			// cursor, on the cursor's line, as inline completion shows it.
			rest = translate.Replacement{Start: cursor, End: cursor, Text: l.repl.Text[typed:]}
		}
		if !translate.FitsInline(snap.Mapper, rest, cursor) {
			continue
		}
		out = append(out, through{l: l, typed: typed, rest: rest})
	}
	return out
}
