package lspside

import (
	"context"

	"go.lsp.dev/jsonrpc2"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/translate"
)

// completion answers textDocument/completion for editors without inline completion: each edit of
// the document becomes one item that applies it.
func (s *Server) completion(ctx context.Context, req *jsonrpc2.Request) (any, error) {
	editor := s.editorEncoding()
	pr, lives, _, err := s.suggestionsAt(ctx, req, nil)
	if err != nil {
		return nil, err
	}
	snap, cursor := pr.snap, pr.cursor
	type list struct {
		IsIncomplete bool                       `json:"isIncomplete"`
		Items        []translate.CompletionItem `json:"items"`
	}
	// Incomplete, so that the editor asks again as the user types rather than filtering a stale list.
	out := list{IsIncomplete: true, Items: []translate.CompletionItem{}}
	for _, l := range lives {
		if l.kind != "edit" || len(l.spans) == 0 {
			continue
		}
		item, err := translate.SpansToCompletionItem(snap.Mapper, l.spans, cursor, editor, acceptCommand(l.id))
		if err != nil {
			s.log.Debug().Str("id", l.id).Err(err).Msg("suggestion not shown as a completion item")
			continue
		}
		out.Items = append(out.Items, item)
	}
	return out, nil
}
