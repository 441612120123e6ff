package lspside

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"go.lsp.dev/protocol"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/workspace"
)

// heldBack are the open documents kept from the agent because an exclusion glob matches their
// file (a .env, a key): URI → the glob. Such a document is never mirrored: it is not in the
// document store, so nothing that reads the store (document events, the replay after a restart,
// the open files, recent files, snippets and edit history of a context, the editor-state answers)
// can carry it to the agent. Requests for it are answered empty without asking the agent.
type heldBack struct {
	mu   sync.Mutex
	uris map[string]string
}

func (h *heldBack) hold(uri, glob string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.uris == nil {
		h.uris = map[string]string{}
	}
	h.uris[uri] = glob
}

// glob is the glob that holds uri back, if any.
func (h *heldBack) glob(uri string) (string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	g, ok := h.uris[uri]
	return g, ok
}

func (h *heldBack) has(uri string) bool {
	_, ok := h.glob(uri)
	return ok
}

// release forgets a closed document; it reports whether it was held back.
func (h *heldBack) release(uri string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, ok := h.uris[uri]
	delete(h.uris, uri)
	return ok
}

// excludedDocument reports the exclusion glob that matches a document's file, as the editor names
// it or with its links resolved; only file: documents have one.
func (s *Server) excludedDocument(uri string) (string, bool) {
	if !strings.HasPrefix(uri, "file:") {
		return "", false
	}
	return s.workspace().files.ExcludedFile(uriPath(uri))
}

// holdBack keeps a document from the agent and says so in the log and the editor's log, naming the
// glob and never the text.
func (s *Server) holdBack(ctx context.Context, uri, glob string) {
	s.secret.hold(uri, glob)
	s.log.Info().Str("uri", uri).Str("glob", glob).Msg("document kept from the agent: it matches an exclusion glob")
	s.logMessage(ctx, protocol.MessageTypeInfo, fmt.Sprintf(
		"acp-lsp-bridge: %s is kept from the agent (exclusion glob %q); no suggestions for it. See --exclude and initializationOptions.exclude.",
		workspace.Host.Base(uriPath(uri)), glob))
}

// excludes makes the exclusions from the command line and the editor's initializationOptions:
// the defaults unless either clears them, and the globs of both. A glob of the editor's that does
// not parse is left out and reported; the others still apply.
func (s *Server) excludes(ctx context.Context, o *initOptions) *workspace.Excludes {
	defaults := !s.cfg.NoDefaultExcludes
	globs := append([]string(nil), s.cfg.Exclude...)
	if o != nil {
		if o.DefaultExcludes != nil && !*o.DefaultExcludes {
			defaults = false
		}
		for _, g := range o.Exclude {
			if _, err := workspace.NewExcludes(false, []string{g}); err != nil {
				s.log.Error().Str("glob", g).Err(err).Msg("initializationOptions.exclude: a glob left out")
				go s.showMessage(context.WithoutCancel(ctx), protocol.MessageTypeError, "acp-lsp-bridge: initializationOptions.exclude: "+err.Error())
				continue
			}
			globs = append(globs, g)
		}
	}
	ex, err := workspace.NewExcludes(defaults, globs)
	if err != nil { // the command line's globs were checked at start
		s.log.Error().Err(err).Msg("exclusion globs")
		ex, _ = workspace.NewExcludes(defaults, nil)
	}
	return ex
}
