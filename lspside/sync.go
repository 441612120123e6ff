package lspside

import (
	"context"
	"encoding/json"
	"fmt"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/acpside"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/document"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/translate"
)

type lspPosition struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

type lspRange struct {
	Start lspPosition `json:"start"`
	End   lspPosition `json:"end"`
}

func (r lspRange) toRange() encoding.Range {
	return encoding.Range{
		Start: encoding.Position{Line: r.Start.Line, Character: r.Start.Character},
		End:   encoding.Position{Line: r.End.Line, Character: r.End.Character},
	}
}

type textDocumentID struct {
	URI     string `json:"uri"`
	Version int    `json:"version"`
}

func (s *Server) editorEncoding() encoding.Kind { return s.session().editorEnc }

func (s *Server) didOpen(ctx context.Context, raw json.RawMessage) error {
	var p struct {
		TextDocument struct {
			URI        string `json:"uri"`
			LanguageID string `json:"languageId"`
			Version    int    `json:"version"`
			Text       string `json:"text"`
		} `json:"textDocument"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return fmt.Errorf("bad params: %w", err)
	}
	td := p.TextDocument
	if td.URI == "" {
		return fmt.Errorf("bad params: no textDocument.uri")
	}
	s.fwd.Lock()
	defer s.fwd.Unlock()
	if glob, ok := s.excludedDocument(td.URI); ok {
		s.holdBack(ctx, td.URI, glob)
		return nil
	}
	snap, reopened := s.docs.Open(td.URI, td.LanguageID, td.Version, td.Text)
	if reopened {
		s.log.Warn().Str("uri", td.URI).Msg("didOpen for a document that is already open; its text is replaced")
	}
	s.log.Debug().Str("uri", td.URI).Int("version", td.Version).Int("bytes", len(td.Text)).Msg("opened")
	s.ed.Opened(snap)
	agent := s.currentAgent()
	if agent == nil {
		s.openedUnseen(snap)
	} else if agent.Events().DidOpen {
		s.sendDidOpen(ctx, agent, snap)
	}
	return nil
}

func (s *Server) sendDidOpen(ctx context.Context, agent *acpside.Agent, snap *document.Snapshot) {
	if !s.fitsAgent(snap) {
		s.withhold(ctx, snap)
		return
	}
	s.release(snap.URI)
	lang := snap.LanguageID
	if lang == "" {
		lang = "plaintext"
	}
	err := agent.DidOpen(ctx, acp.UnstableDidOpenDocumentNotification{
		Uri: snap.URI, LanguageId: lang, Version: snap.Version, Text: snap.Text(),
	})
	if err != nil {
		s.sendFailed(agent, "document/didOpen", err)
	}
}

func (s *Server) didChange(ctx context.Context, raw json.RawMessage) error {
	var p struct {
		TextDocument   textDocumentID `json:"textDocument"`
		ContentChanges []struct {
			Range *lspRange `json:"range"`
			Text  string    `json:"text"`
		} `json:"contentChanges"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return fmt.Errorf("bad params: %w", err)
	}
	changes := make([]document.Change, len(p.ContentChanges))
	for i, c := range p.ContentChanges {
		changes[i].Text = c.Text
		if c.Range != nil {
			r := c.Range.toRange()
			changes[i].Range = &r
		}
	}
	uri := p.TextDocument.URI
	s.fwd.Lock()
	defer s.fwd.Unlock()
	if s.secret.has(uri) {
		s.changedIn(ctx, uri, nil, 0)
		return nil // kept from the agent, and not mirrored
	}
	before, after, applied, err := s.docs.Change(uri, p.TextDocument.Version, changes, s.editorEncoding())
	if err != nil {
		return fmt.Errorf("%s: %w", uri, err)
	}
	if n := len(applied); n > 0 {
		last := applied[n-1]
		defer s.changedIn(ctx, uri, after, last.Start+len(last.Text)) // once the agent has the change
	}
	s.still.change(uri)
	if p.TextDocument.Version <= before.Version {
		s.log.Warn().Str("uri", uri).Int("version", p.TextDocument.Version).Int("previous", before.Version).Msg("didChange did not increase the version")
	}
	s.ed.Changed(uri, applied)
	agent := s.currentAgent()
	completed := s.sugs.documentChanged(ctx, agent, after, applied)
	// Once the agent has the change (deferred: whatever way it takes below), and still under fwd,
	// so before the request asked ahead after it.
	defer s.sugs.acceptApplied(ctx, agent, completed)
	s.ahead.changed(uri)
	s.growth.changed(uri)
	if n := len(applied); n > 0 {
		// Asked ahead at the end of the last change (where the editor's cursor is after typing).
		last := applied[n-1]
		s.askAheadAfter(after, last.Start+len(last.Text), len(completed) > 0)
	}
	if agent == nil || !agent.Events().DidChange {
		return nil
	}
	ev := agent.Events()
	switch {
	case s.isWithheld(uri):
		// The agent does not have the document; it may fit now.
		if ev.DidOpen && s.fitsAgent(after) {
			s.sendDidOpen(ctx, agent, after)
		}
		return nil
	case ev.FullSync && !s.fitsAgent(after):
		// Every change would carry the whole text: the agent forgets the document instead.
		if ev.DidClose {
			if err := agent.DidClose(ctx, acp.UnstableDidCloseDocumentNotification{Uri: uri}); err != nil {
				s.sendFailed(agent, "document/didClose", err)
			}
		}
		s.withhold(ctx, after)
		return nil
	}
	acpChanges, err := translate.ChangesToACP(applied, after.Mapper, agent.Encoding(), ev.FullSync)
	if err != nil {
		return fmt.Errorf("%s: convert changes for the agent: %w", uri, err)
	}
	if err := agent.DidChange(ctx, acp.UnstableDidChangeDocumentNotification{
		Uri: uri, Version: after.Version, ContentChanges: acpChanges,
	}); err != nil {
		s.sendFailed(agent, "document/didChange", err)
	}
	return nil
}

// documentURI reads the params of a notification that only names a document.
func documentURI(raw json.RawMessage) (string, error) {
	var p struct {
		TextDocument textDocumentID `json:"textDocument"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return "", fmt.Errorf("bad params: %w", err)
	}
	return p.TextDocument.URI, nil
}

func (s *Server) didClose(ctx context.Context, raw json.RawMessage) error {
	uri, err := documentURI(raw)
	if err != nil {
		return err
	}
	s.fwd.Lock()
	defer s.fwd.Unlock()
	if s.secret.release(uri) {
		return nil
	}
	if _, ok := s.docs.Close(uri); !ok {
		return fmt.Errorf("%s: %w", uri, document.ErrNotOpen)
	}
	delete(s.unseen, uri)
	s.reqs.closed(uri)
	s.still.closed(uri)
	s.ahead.closed(uri)
	s.growth.changed(uri)
	s.ed.Closed(uri)
	agent := s.currentAgent()
	s.sugs.documentClosed(ctx, agent, uri)
	withheld := s.isWithheld(uri)
	s.release(uri)
	if agent != nil && agent.Events().DidClose && !withheld {
		if err := agent.DidClose(ctx, acp.UnstableDidCloseDocumentNotification{Uri: uri}); err != nil {
			s.sendFailed(agent, "document/didClose", err)
		}
	}
	return nil
}

func (s *Server) didSave(ctx context.Context, raw json.RawMessage) error {
	uri, err := documentURI(raw)
	if err != nil {
		return err
	}
	s.fwd.Lock()
	defer s.fwd.Unlock()
	if s.secret.has(uri) {
		return nil
	}
	if _, ok := s.docs.Get(uri); !ok {
		return fmt.Errorf("%s: %w", uri, document.ErrNotOpen)
	}
	if agent := s.currentAgent(); agent != nil && agent.Events().DidSave && !s.isWithheld(uri) {
		if err := agent.DidSave(ctx, acp.UnstableDidSaveDocumentNotification{Uri: uri}); err != nil {
			s.sendFailed(agent, "document/didSave", err)
		}
	}
	return nil
}
