// Package translate holds the pure conversions between the editor's and the agent's views: positions
// and ranges between encodings, LSP content changes to ACP document events, and agent suggestions
// to what the editor can show. It takes values and returns values: no connections, clocks or logs.
package translate

import (
	"fmt"

	acp "github.com/coder/acp-go-sdk"
	"github.com/go-json-experiment/json/jsontext"
	"go.lsp.dev/protocol"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/document"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
)

// PositionToACP converts a position to an ACP position.
func PositionToACP(p encoding.Position) acp.UnstablePosition {
	return acp.UnstablePosition{Line: p.Line, Character: p.Character}
}

// RangeToACP converts a range to an ACP range.
func RangeToACP(r encoding.Range) acp.UnstableRange {
	return acp.UnstableRange{Start: PositionToACP(r.Start), End: PositionToACP(r.End)}
}

// PositionFromACP converts an ACP position.
func PositionFromACP(p acp.UnstablePosition) encoding.Position {
	return encoding.Position{Line: p.Line, Character: p.Character}
}

// RangeFromACP converts an ACP range.
func RangeFromACP(r acp.UnstableRange) encoding.Range {
	return encoding.Range{Start: PositionFromACP(r.Start), End: PositionFromACP(r.End)}
}

// PositionToLSP converts a position to an LSP position.
func PositionToLSP(p encoding.Position) protocol.Position {
	return protocol.Position{Line: uint32(p.Line), Character: uint32(p.Character)}
}

// RangeToLSP converts a range to an LSP range.
func RangeToLSP(r encoding.Range) protocol.Range {
	return protocol.Range{Start: PositionToLSP(r.Start), End: PositionToLSP(r.End)}
}

// OffsetToACP converts a byte offset of m's text to a position in the agent's encoding.
func OffsetToACP(m *encoding.Mapper, off int, agent encoding.Kind) (acp.UnstablePosition, error) {
	p, err := m.OffsetPosition(off, agent)
	return PositionToACP(p), err
}

// ChangesToACP turns LSP content changes, as the document mirror applied them, into the content
// changes of an ACP document/didChange in the agent's encoding: one ranged change per LSP change for
// an incremental agent, or a single whole-text change (final) for an agent that asked for "full".
func ChangesToACP(applied []document.Applied, final *encoding.Mapper, agent encoding.Kind, full bool) ([]acp.UnstableTextDocumentContentChangeEvent, error) {
	if full {
		return []acp.UnstableTextDocumentContentChangeEvent{{Text: final.Text()}}, nil
	}
	out := make([]acp.UnstableTextDocumentContentChangeEvent, 0, len(applied))
	for i, a := range applied {
		if a.Full {
			out = append(out, acp.UnstableTextDocumentContentChangeEvent{Text: a.Text})
			continue
		}
		r, err := a.Before.OffsetsRange(a.Start, a.End, agent)
		if err != nil {
			return nil, fmt.Errorf("content change %d: %w", i, err)
		}
		ar := RangeToACP(r)
		out = append(out, acp.UnstableTextDocumentContentChangeEvent{Range: &ar, Text: a.Text})
	}
	return out, nil
}

// ChangesFromACP turns the content changes of an ACP document/didChange into document changes, to
// apply with document.Apply in the encoding the agent negotiated (the agent's side of ChangesToACP).
func ChangesFromACP(events []acp.UnstableTextDocumentContentChangeEvent) []document.Change {
	changes := make([]document.Change, len(events))
	for i, c := range events {
		changes[i].Text = c.Text
		if c.Range != nil {
			r := RangeFromACP(*c.Range)
			changes[i].Range = &r
		}
	}
	return changes
}

// Replacement is a single replacement of the bytes [Start, End) of a snapshot's text by Text.
type Replacement struct {
	Start, End int
	Text       string
}

// EditsToReplacement validates an edit suggestion's edits against the text they were computed for
// (positions in the agent's encoding) and merges them into the one replacement that covers them
// all. The edits apply simultaneously: each range refers to the original text; overlapping ranges
// are an error, as are out-of-range positions and a start after an end.
func EditsToReplacement(m *encoding.Mapper, edits []acp.UnstableNesTextEdit, agent encoding.Kind) (Replacement, error) {
	spans, err := EditsToSpans(m, edits, agent)
	if err != nil {
		return Replacement{}, err
	}
	return Merge(m.Text(), spans), nil
}

// FitsInline reports whether a replacement can be shown as an inline completion at cursor: it
// starts and ends on the cursor's line and contains the cursor. That is the shape every
// inline-completion client supports (the inserted text itself may span lines).
func FitsInline(m *encoding.Mapper, r Replacement, cursor int) bool {
	line := m.LineOf(cursor)
	return r.Start <= cursor && cursor <= r.End && m.LineOf(r.Start) == line && m.LineOf(r.End) == line
}

// Apply returns text with the replacement made.
func (r Replacement) Apply(text string) string {
	return text[:r.Start] + r.Text + text[r.End:]
}

// ReplacementToInlineItem makes the inline completion item that shows r, in the editor's encoding,
// with a command that accepts suggestion id.
func ReplacementToInlineItem(m *encoding.Mapper, r Replacement, editor encoding.Kind, acceptCommand, id string) (protocol.InlineCompletionItem, error) {
	rng, err := m.OffsetsRange(r.Start, r.End, editor)
	if err != nil {
		return protocol.InlineCompletionItem{}, err
	}
	lr := RangeToLSP(rng)
	arg, _ := jsontext.AppendQuote(nil, id)
	return protocol.InlineCompletionItem{
		InsertText: protocol.String(r.Text),
		Range:      &lr,
		Command: protocol.Command{
			Title:     "Accept next edit",
			Command:   acceptCommand,
			Arguments: []protocol.LSPAny{arg},
		},
	}, nil
}
