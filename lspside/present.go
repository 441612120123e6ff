package lspside

import (
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/acpside"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/document"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/translate"
)

// location is a place to show the user (window/showDocument): a range in the editor's encoding,
// converted when the location is made so that it holds no text. A live suggestion keeps its
// locations for as long as it lives; the text after an edit, say, is a whole copy of a document.
type location struct {
	uri string
	sel encoding.Range
}

// locate is the location of the bytes [start, end) of m's text, in encoding k.
func locate(uri string, m *encoding.Mapper, start, end int, k encoding.Kind) (*location, error) {
	r, err := m.OffsetsRange(start, end, k)
	if err != nil {
		return nil, err
	}
	return &location{uri: uri, sel: r}, nil
}

// live is a suggestion id that has not ended yet, with everything each surface needs to show it.
type live struct {
	id, kind string
	uri      string             // the document whose request produced it
	base     *document.Snapshot // that document when it was asked
	cursor   int                // the request's position in base

	// What accepting it changes (edit, rename, searchAndReplace), one entry per document.
	files []translate.FileEdit
	// For a change of the requesting document: its spans on base, and them merged.
	spans []translate.Span
	repl  *translate.Replacement

	title string // how a code action names it (read it with label)
	// makeTitle makes the title on first use, for an edit: most suggestions are shown as ghost
	// text and never named, and naming one reads its text.
	makeTitle func() string
	titled    sync.Once
	jump      *location // a jump's target
	after     *location // where the cursor goes after accepting an edit
	// applied: the documents now read as the suggestion proposed; the accept command follows.
	applied bool
	// accepted: nes/accept was sent (at the change that applied it, or at its command); the
	// tracker's, under its lock.
	accepted bool
	// What the user has typed into each file edit (nil until the file changes); the tracker's.
	progress []*progress
	// inlineOnly: more of the same answer replaced it everywhere but in ghost text, where that
	// does not fit (growing.go).
	inlineOnly atomic.Bool
}

// label is the suggestion's title: how a code action or a question names it.
func (l *live) label() string {
	l.titled.Do(func() {
		if l.makeTitle != nil {
			l.title = l.makeTitle()
		}
	})
	return l.title
}

// present turns one suggestion into a live record, or says why it cannot be shown anywhere. It
// reads the documents the suggestion refers to: open buffers first, then disk, inside the
// workspace only.
func (s *Server) present(agentEnc encoding.Kind, base *document.Snapshot, cursor int, sg acpside.Suggestion) (*live, error) {
	if sg.Problem != "" {
		return nil, fmt.Errorf("%s", sg.Problem)
	}
	l := &live{id: sg.ID, kind: sg.Kind, uri: base.URI, base: base, cursor: cursor}
	switch {
	case sg.Edit != nil:
		t, err := s.targetFor(base, sg.Edit.Uri)
		if err != nil {
			return nil, err
		}
		spans, err := translate.EditsToSpans(t.mapper, sg.Edit.Edits, agentEnc)
		if err != nil {
			return nil, err
		}
		merged := translate.Merge(t.mapper.Text(), spans)
		if t.mapper.Text()[merged.Start:merged.End] == merged.Text {
			return nil, fmt.Errorf("the edit changes nothing")
		}
		l.files = []translate.FileEdit{{URI: t.uri, Version: t.version, Mapper: t.mapper, Spans: spans}}
		file := ""
		if t.uri != base.URI {
			file = filepath.Base(uriPath(t.uri))
		}
		l.makeTitle = func() string { return translate.SpansTitle(t.mapper, spans, file) }
		if t.uri == base.URI {
			l.spans, l.repl = spans, &merged
		}
		if sg.Edit.CursorPosition != nil || t.uri != base.URI {
			after := t.mapper.Edit(merged.Start, merged.End, merged.Text)
			off := merged.Start
			if cp := sg.Edit.CursorPosition; cp != nil {
				if off, err = after.PositionOffset(translate.PositionFromACP(*cp), agentEnc); err != nil {
					return nil, fmt.Errorf("cursorPosition: %w", err)
				}
			}
			if l.after, err = locate(t.uri, after, off, off, s.editorEncoding()); err != nil {
				return nil, fmt.Errorf("cursor after the edit: %w", err)
			}
		}
	case sg.Jump != nil:
		t, err := s.targetFor(base, sg.Jump.Uri)
		if err != nil {
			return nil, err
		}
		off, err := t.mapper.PositionOffset(translate.PositionFromACP(sg.Jump.Position), agentEnc)
		if err != nil {
			return nil, err
		}
		if l.jump, err = locate(t.uri, t.mapper, off, off, s.editorEncoding()); err != nil {
			return nil, err
		}
		l.title = fmt.Sprintf("Next edit: go to %s:%d", filepath.Base(uriPath(t.uri)), t.mapper.LineOf(off)+1)
	case sg.Rename != nil:
		t, err := s.targetFor(base, sg.Rename.Uri)
		if err != nil {
			return nil, err
		}
		off, err := t.mapper.PositionOffset(translate.PositionFromACP(sg.Rename.Position), agentEnc)
		if err != nil {
			return nil, err
		}
		old, spans, err := translate.RenameSpans(t.mapper.Text(), off, sg.Rename.NewName)
		if err != nil {
			return nil, err
		}
		l.files = []translate.FileEdit{{URI: t.uri, Version: t.version, Mapper: t.mapper, Spans: spans}}
		l.title = fmt.Sprintf("Rename `%s` → `%s` in %s (%d whole-identifier matches)",
			translate.Snippet(old, 40), translate.Snippet(sg.Rename.NewName, 40), filepath.Base(uriPath(t.uri)), len(spans))
		if t.uri == base.URI {
			l.spans = spans
			r := translate.Merge(t.mapper.Text(), spans)
			l.repl = &r
		}
	case sg.SearchAndReplace != nil:
		sar := sg.SearchAndReplace
		searcher, err := translate.NewSearcher(sar.Search, sar.Replace, sar.IsRegex != nil && *sar.IsRegex)
		if err != nil {
			return nil, err
		}
		targets, err := s.searchTargets(base, sar.Uri)
		if err != nil {
			return nil, err
		}
		matches := 0
		for _, t := range targets {
			spans := searcher.Spans(t.mapper.Text())
			if len(spans) == 0 {
				continue
			}
			matches += len(spans)
			l.files = append(l.files, translate.FileEdit{URI: t.uri, Version: t.version, Mapper: t.mapper, Spans: spans})
			if t.uri == base.URI {
				l.spans = spans
				r := translate.Merge(t.mapper.Text(), spans)
				l.repl = &r
			}
		}
		if matches == 0 {
			return nil, fmt.Errorf("search %q matches nothing in %s", sar.Search, sar.Uri)
		}
		how := "literal"
		if sar.IsRegex != nil && *sar.IsRegex {
			how = "regex"
		}
		l.title = fmt.Sprintf("Replace `%s` → `%s` (%s, %d matches in %d files)",
			translate.Snippet(sar.Search, 40), translate.Snippet(sar.Replace, 40), how, matches, len(l.files))
		if len(l.files) == 1 {
			l.title = fmt.Sprintf("Replace `%s` → `%s` (%s, %d matches in %s)",
				translate.Snippet(sar.Search, 40), translate.Snippet(sar.Replace, 40), how, matches, filepath.Base(uriPath(l.files[0].URI)))
		}
	default:
		return nil, fmt.Errorf("a %q suggestion, a kind the bridge does not present", sg.Kind)
	}
	return l, nil
}

// targetFor reads the document a suggestion names, which is usually the one asked about: that one
// as it was asked about, any other only inside the workspace.
func (s *Server) targetFor(base *document.Snapshot, u string) (target, error) {
	if u == "" || u == base.URI {
		return snapshotTarget(base), nil
	}
	return s.readTarget(u)
}
