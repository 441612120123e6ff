package lspside

import (
	"context"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/acpside"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/document"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/translate"
)

// Catching up: a document the editor opened while no agent was ready (the agent starting, most
// often at the editor's start, or restarting) is given to the agent that becomes ready as it was
// opened, then what the user changed since, as one change; a document open when the agent exited,
// as the exited agent last had it, then the change since. The user's edits made while no agent
// was ready reach the next one as edits (a rename to follow through the file, the edit history a
// model is shown), not as part of the text it opens with. Only one text of each document is
// kept, and only until an agent is ready.

// openedUnseen records snap, just opened while no agent is ready to see it; a document opened
// again while it waits keeps its first text only if the editor's text is the same. (While an agent
// is ready, nothing is kept: becomeReady forgot it all.) Under fwd.
func (s *Server) openedUnseen(snap *document.Snapshot) {
	if s.unseen == nil {
		s.unseen = map[string]*document.Snapshot{}
	}
	if old, ok := s.unseen[snap.URI]; ok && old.Text() == snap.Text() {
		return
	}
	s.unseen[snap.URI] = snap
}

// agentGone records, as the agent exits, the text of each open document it had: the next agent
// gets that text and then the change since. Under fwd.
func (s *Server) agentGone() {
	if s.unseen == nil {
		s.unseen = map[string]*document.Snapshot{}
	}
	for _, snap := range s.docs.All() {
		if _, ok := s.unseen[snap.URI]; !ok {
			s.unseen[snap.URI] = snap
		}
	}
}

// catchUp gives the agent, becoming ready, the document of snap: as it was opened and what changed
// since, when it was opened while no agent was ready and has changed; else as it is. Under fwd.
func (s *Server) catchUp(ctx context.Context, agent *acpside.Agent, snap *document.Snapshot) {
	base := s.unseen[snap.URI]
	ev := agent.Events()
	if base == nil || base.Version >= snap.Version || base.LanguageID != snap.LanguageID || !ev.DidChange ||
		!s.fitsAgent(base) || !s.fitsAgent(snap) {
		s.sendDidOpen(ctx, agent, snap)
		return
	}
	change, ok := oneChange(base.Mapper.Text(), snap.Text())
	if !ok {
		s.sendDidOpen(ctx, agent, snap) // the same text again: nothing to tell
		return
	}
	change.Before = base.Mapper
	changes, err := translate.ChangesToACP([]document.Applied{change}, snap.Mapper, agent.Encoding(), ev.FullSync)
	if err != nil {
		s.log.Debug().Str("uri", snap.URI).Err(err).Msg("catching up: the change since the document was opened")
		s.sendDidOpen(ctx, agent, snap)
		return
	}
	s.sendDidOpen(ctx, agent, base)
	s.log.Debug().Str("uri", snap.URI).Int("from", base.Version).Int("to", snap.Version).Msg("catching up: the agent gets the document as opened, then what changed since")
	if err := agent.DidChange(ctx, acp.UnstableDidChangeDocumentNotification{Uri: snap.URI, Version: snap.Version, ContentChanges: changes}); err != nil {
		s.sendFailed(agent, "document/didChange", err)
	}
}

// oneChange is the one replacement that turns before into after: the bytes between their common
// start and common end, on the boundaries a position can address (whole characters, never inside
// a "\r\n"). ok is false when they are the same.
func oneChange(before, after string) (document.Applied, bool) {
	if before == after {
		return document.Applied{}, false
	}
	p := encoding.CommonPrefix(before, after)
	q := encoding.CommonSuffix(before[p:], after[p:])
	return document.Applied{Start: p, End: len(before) - q, Text: after[p : len(after)-q]}, true
}
