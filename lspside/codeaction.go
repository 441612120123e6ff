package lspside

import (
	"context"
	"encoding/json"
	"sort"
	"strings"

	acp "github.com/coder/acp-go-sdk"
	"go.lsp.dev/jsonrpc2"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/translate"
)

// nearLines is how far, in lines, an edit may lie from the requested range and still be offered
// as a code action there.
const nearLines = 3

type lspDiagnostic struct {
	Range    lspRange `json:"range"`
	Severity int      `json:"severity"`
	Message  string   `json:"message"`
}

// codeAction offers every live suggestion of the document near the requested range as a code
// action, asking the agent first when the document has none for its current version. Diagnostics in
// the request make it a "diagnostic" trigger.
func (s *Server) codeAction(ctx context.Context, req *jsonrpc2.Request) (any, error) {
	var p struct {
		TextDocument struct {
			URI string `json:"uri"`
		} `json:"textDocument"`
		Range   lspRange `json:"range"`
		Context struct {
			Diagnostics []lspDiagnostic `json:"diagnostics"`
			Only        []string        `json:"only"`
			TriggerKind int             `json:"triggerKind"`
		} `json:"context"`
	}
	if err := json.Unmarshal(req.Params(), &p); err != nil {
		return nil, invalidParams("textDocument/codeAction: %v", err)
	}
	snap, ok := s.docs.Get(p.TextDocument.URI)
	if !ok {
		if s.secret.has(p.TextDocument.URI) {
			s.reqs.enter(p.TextDocument.URI)
			return []any{}, nil // kept from the agent: nothing to offer
		}
		return nil, invalidParams("textDocument/codeAction: document not open: %s", p.TextDocument.URI)
	}
	editor := s.editorEncoding()
	start, end, err := snap.Mapper.RangeOffsets(p.Range.toRange(), editor)
	if err != nil {
		return nil, invalidParams("textDocument/codeAction: range in %s: %v", snap.URI, err)
	}
	s.requestAt(jsonrpc2.DetachContext(ctx), snap, start)
	documentChanges := s.clientSupports(func(c clientCaps) bool { return c.documentChanges })
	rctx, done := s.track(req.ID())
	jsonrpc2.Async(ctx)
	defer done()

	lives := s.sugs.forDocument(snap.URI, snap.Version)
	if len(lives) == 0 {
		trig := acp.UnstableNesTriggerKindAutomatic
		if p.Context.TriggerKind == 1 {
			trig = acp.UnstableNesTriggerKindManual
		}
		if len(p.Context.Diagnostics) > 0 {
			trig = acp.UnstableNesTriggerKindDiagnostic
		}
		// Every code action request is the user's but the editor's automatic ones (triggerKind 2,
		// such as VS Code's light bulb on every cursor move).
		explicit := p.Context.TriggerKind != 2
		lives, err = s.requestSuggestions(rctx, suggestRequest{snap: snap, cursor: start, trigger: trig, diagnostics: p.Context.Diagnostics, explicit: explicit})
		if err != nil {
			return nil, err
		}
	}
	// The user may have come here from the file where the agent proposed it (by its jump).
	lives = append(lives, s.sugs.editing(snap.URI, snap.Version)...)
	kind := "refactor.rewrite"
	if len(p.Context.Diagnostics) > 0 {
		kind = "quickfix"
	}
	if !kindWanted(kind, p.Context.Only) {
		return []translate.CodeAction{}, nil
	}
	firstLine, lastLine := snap.Mapper.LineOf(start), snap.Mapper.LineOf(end)
	type ranked struct {
		action translate.CodeAction
		dist   int
	}
	var found []ranked
	for _, l := range lives {
		dist := 0
		if l.repl != nil && l.kind == "edit" {
			a, b := l.base.Mapper.LineOf(l.repl.Start), l.base.Mapper.LineOf(l.repl.End)
			switch {
			case b < firstLine:
				dist = firstLine - b
			case a > lastLine:
				dist = a - lastLine
			}
			if dist > nearLines {
				continue
			}
		}
		cmd := acceptCommand(l.id)
		action := translate.CodeAction{Title: l.title, Kind: kind, Command: &cmd}
		if len(l.files) > 0 {
			we, err := translate.ToWorkspaceEdit(l.files, editor, documentChanges)
			if err != nil {
				s.log.Warn().Str("id", l.id).Err(err).Msg("cannot offer the suggestion as a code action")
				continue
			}
			action.Edit = we
		}
		found = append(found, ranked{action, dist})
	}
	sort.SliceStable(found, func(i, j int) bool { return found[i].dist < found[j].dist })
	actions := make([]translate.CodeAction, len(found))
	for i, f := range found {
		actions[i] = f.action
	}
	if len(actions) > 0 {
		actions[0].IsPreferred = true
	}
	return actions, nil
}

// kindWanted applies CodeActionContext.only: kinds are hierarchical ("refactor" covers
// "refactor.rewrite").
func kindWanted(kind string, only []string) bool {
	if len(only) == 0 {
		return true
	}
	for _, o := range only {
		if kind == o || strings.HasPrefix(kind, o+".") {
			return true
		}
	}
	return false
}
