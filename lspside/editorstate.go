package lspside

import (
	"encoding/json"
	"strings"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/acpside"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/editorstate"
)

// The editor-state methods, advertised in clientCapabilities.workspace.
const (
	methodOpenDocuments   = acpside.MethodOpenDocuments
	methodRecentDocuments = acpside.MethodRecentDocuments
	methodActiveDocument  = acpside.MethodActiveDocument
)

type documentRef struct {
	URI        string `json:"uri"`
	LanguageID string `json:"languageId"`
}

func fileRefs(refs []editorstate.DocumentRef) []documentRef {
	out := []documentRef{}
	for _, r := range refs {
		// Only documents that map to absolute file paths, as the proposal requires.
		if !strings.HasPrefix(r.URI, "file:///") {
			continue
		}
		lang := r.LanguageID
		if lang == "" {
			lang = "plaintext"
		}
		out = append(out, documentRef{URI: r.URI, LanguageID: lang})
	}
	return out
}

// editorState answers workspace/open_documents (every open document), workspace/recent_documents
// {limit} (most recently focused or edited first, closed ones included) and
// workspace/active_document (the document the user is in, or null).
func (s *Server) editorState(method string, raw json.RawMessage) (any, *acp.RequestError) {
	var p struct {
		Limit *int `json:"limit"`
	}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, acp.NewInvalidParams(map[string]any{"error": err.Error()})
		}
	}
	switch method {
	case methodOpenDocuments:
		var refs []editorstate.DocumentRef
		for _, snap := range s.docs.All() {
			refs = append(refs, editorstate.DocumentRef{URI: snap.URI, LanguageID: snap.LanguageID})
		}
		return map[string]any{"documents": fileRefs(refs)}, nil
	case methodRecentDocuments:
		refs := fileRefs(s.ed.Recent(0))
		if p.Limit != nil {
			if *p.Limit < 0 {
				return nil, acp.NewInvalidParams(map[string]any{"limit": *p.Limit, "error": "limit must not be negative"})
			}
			refs = refs[:min(*p.Limit, len(refs))]
		}
		return map[string]any{"documents": refs}, nil
	default: // methodActiveDocument
		ref, ok := s.ed.Active()
		if !ok {
			return map[string]any{"document": nil}, nil
		}
		refs := fileRefs([]editorstate.DocumentRef{ref})
		if len(refs) == 0 {
			return map[string]any{"document": nil}, nil
		}
		return map[string]any{"document": refs[0]}, nil
	}
}
