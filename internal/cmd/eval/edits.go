package eval

import (
	"fmt"
	"unicode/utf8"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/translate"
)

// Change is the one replacement that turns old into new: the bytes [Start, End) of old replaced
// by Text, as small as the two texts allow (their common start and end are kept), on character
// boundaries. It is what an editor sends for a recorded edit.
type Change struct {
	Start, End int
	Text       string
}

// VersionChange is the change from one version of a document to the next.
func VersionChange(old, new string) Change {
	pre := 0
	for pre < len(old) && pre < len(new) && old[pre] == new[pre] {
		pre++
	}
	for pre > 0 && pre < len(old) && !utf8.RuneStart(old[pre]) {
		pre--
	}
	suf := 0
	for suf < len(old)-pre && suf < len(new)-pre && old[len(old)-1-suf] == new[len(new)-1-suf] {
		suf++
	}
	for suf > 0 && !utf8.RuneStart(old[len(old)-suf]) {
		suf--
	}
	return Change{Start: pre, End: len(old) - suf, Text: new[pre : len(new)-suf]}
}

// ChangeToACP is the content change of document/didChange for the change from old to new, in the
// agent's position encoding; full sends the whole new text (an agent that asked for full sync).
func ChangeToACP(old, new string, agent encoding.Kind, full bool) (acp.UnstableTextDocumentContentChangeEvent, error) {
	if full {
		return acp.UnstableTextDocumentContentChangeEvent{Text: new}, nil
	}
	c := VersionChange(old, new)
	r, err := encoding.NewMapper(old).OffsetsRange(c.Start, c.End, agent)
	if err != nil {
		return acp.UnstableTextDocumentContentChangeEvent{}, err
	}
	ar := translate.RangeToACP(r)
	return acp.UnstableTextDocumentContentChangeEvent{Range: &ar, Text: c.Text}, nil
}

// ApplyEdits applies an edit suggestion's edits to text, the text they were computed for, as the
// bridge does: positions in the agent's encoding, all edits at once (each range refers to text),
// overlapping or out-of-range edits an error.
func ApplyEdits(text string, edits []acp.UnstableNesTextEdit, agent encoding.Kind) (string, error) {
	spans, err := translate.EditsToSpans(encoding.NewMapper(text), edits, agent)
	if err != nil {
		return "", fmt.Errorf("the suggestion's edits cannot be applied: %w", err)
	}
	return translate.ApplySpans(text, spans), nil
}
