package fakeeditor

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
)

// Pos is an LSP position, in the encoding the editor and the bridge agreed on.
type Pos struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

// At is the position at line and character (both from 0).
func At(line, character int) Pos { return Pos{Line: line, Character: character} }

// Range is an LSP range.
type Range struct {
	Start Pos `json:"start"`
	End   Pos `json:"end"`
}

// Span is the range from start to end.
func Span(start, end Pos) Range { return Range{Start: start, End: end} }

// Change is one entry of textDocument/didChange's contentChanges: a range replaced, or with no
// range the whole text.
type Change struct {
	Range *Range `json:"range,omitempty"`
	Text  string `json:"text"`
}

// Replace is the change that replaces start..end with text.
func Replace(start, end Pos, text string) Change {
	r := Span(start, end)
	return Change{Range: &r, Text: text}
}

// Insert is the change that inserts text at p.
func Insert(p Pos, text string) Change { return Replace(p, p, text) }

// Whole is the change that replaces the whole text (full sync).
func Whole(text string) Change { return Change{Text: text} }

// Command is an LSP command, as the bridge attaches it to what it shows.
type Command struct {
	Title     string `json:"title,omitempty"`
	Command   string `json:"command"`
	Arguments []any  `json:"arguments,omitempty"`
}

// InlineItem is one textDocument/inlineCompletion item (insertText as a plain string).
type InlineItem struct {
	InsertText string   `json:"insertText"`
	FilterText string   `json:"filterText,omitempty"`
	Range      *Range   `json:"range,omitempty"`
	Command    *Command `json:"command,omitempty"`
}

// TextEdit is an LSP text edit.
type TextEdit struct {
	Range   Range  `json:"range"`
	NewText string `json:"newText"`
}

// WorkspaceEdit is an LSP workspace edit, in either of its forms.
type WorkspaceEdit struct {
	Changes         map[string][]TextEdit `json:"changes,omitempty"`
	DocumentChanges []DocumentChange      `json:"documentChanges,omitempty"`
}

// DocumentChange is one entry of documentChanges: a TextDocumentEdit (TextDocument and Edits), or
// a file operation (Kind "create", "rename", "delete").
type DocumentChange struct {
	TextDocument *struct {
		URI     string `json:"uri"`
		Version *int   `json:"version"`
	} `json:"textDocument,omitempty"`
	Edits  []TextEdit `json:"edits,omitempty"`
	Kind   string     `json:"kind,omitempty"`
	URI    string     `json:"uri,omitempty"`
	OldURI string     `json:"oldUri,omitempty"`
	NewURI string     `json:"newUri,omitempty"`
}

// EditsFor returns the text edits of w for uri, from either form.
func (w *WorkspaceEdit) EditsFor(uri string) []TextEdit {
	if w == nil {
		return nil
	}
	out := append([]TextEdit(nil), w.Changes[uri]...)
	for _, dc := range w.DocumentChanges {
		if dc.TextDocument != nil && dc.TextDocument.URI == uri {
			out = append(out, dc.Edits...)
		}
	}
	return out
}

// CodeAction is one textDocument/codeAction result.
type CodeAction struct {
	Title       string          `json:"title"`
	Kind        string          `json:"kind,omitempty"`
	IsPreferred bool            `json:"isPreferred,omitempty"`
	Diagnostics json.RawMessage `json:"diagnostics,omitempty"`
	Edit        *WorkspaceEdit  `json:"edit,omitempty"`
	Command     *Command        `json:"command,omitempty"`
	Data        json.RawMessage `json:"data,omitempty"`
}

// CompletionItem is one textDocument/completion item.
type CompletionItem struct {
	Label      string          `json:"label"`
	Kind       int             `json:"kind,omitempty"`
	Detail     string          `json:"detail,omitempty"`
	FilterText string          `json:"filterText,omitempty"`
	SortText   string          `json:"sortText,omitempty"`
	InsertText string          `json:"insertText,omitempty"`
	TextEdit   *TextEdit       `json:"textEdit,omitempty"`
	Additional []TextEdit      `json:"additionalTextEdits,omitempty"`
	Command    *Command        `json:"command,omitempty"`
	Data       json.RawMessage `json:"data,omitempty"`
}

// InlineEdit is one edit of textDocument/copilotInlineEdit, the request of the Copilot NES
// plugins (sidekick.nvim, copilot-lsp).
type InlineEdit struct {
	Text         string `json:"text"`
	Range        Range  `json:"range"`
	TextDocument struct {
		URI     string `json:"uri"`
		Version int    `json:"version"`
	} `json:"textDocument"`
	Command *Command `json:"command,omitempty"`
}

// ApplyEdits applies LSP text edits to text, positions in encoding k, as an editor does: every
// range is read against the text before any edit.
func ApplyEdits(text string, edits []TextEdit, k encoding.Kind) (string, error) {
	m := encoding.NewMapper(text)
	type span struct {
		start, end int
		text       string
	}
	spans := make([]span, 0, len(edits))
	for _, e := range edits {
		s, en, err := m.RangeOffsets(e.Range.encoding(), k)
		if err != nil {
			return "", fmt.Errorf("edit %+v: %w", e.Range, err)
		}
		spans = append(spans, span{s, en, e.NewText})
	}
	sort.SliceStable(spans, func(i, j int) bool { return spans[i].start > spans[j].start })
	for _, sp := range spans {
		text = text[:sp.start] + sp.text + text[sp.end:]
	}
	return text, nil
}

func (p Pos) encoding() encoding.Position {
	return encoding.Position{Line: p.Line, Character: p.Character}
}

func (r Range) encoding() encoding.Range {
	return encoding.Range{Start: r.Start.encoding(), End: r.End.encoding()}
}

// PosOf is the position of byte offset off in text, in encoding k.
func PosOf(text string, off int, k encoding.Kind) (Pos, error) {
	p, err := encoding.NewMapper(text).OffsetPosition(off, k)
	return Pos{Line: p.Line, Character: p.Character}, err
}

// OffsetOf is the byte offset of p in text, in encoding k.
func OffsetOf(text string, p Pos, k encoding.Kind) (int, error) {
	return encoding.NewMapper(text).PositionOffset(p.encoding(), k)
}
