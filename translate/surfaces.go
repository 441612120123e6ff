package translate

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	acp "github.com/coder/acp-go-sdk"
	"go.lsp.dev/protocol"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
)

// The LSP shapes below that carry a URI are the bridge's own: go.lsp.dev's uri type rewrites URIs
// when it encodes them, and a URI must go back to the editor exactly as the editor sent it.

// VersionedDocument is an OptionalVersionedTextDocumentIdentifier: a null version for a document
// the editor does not have open.
type VersionedDocument struct {
	URI     string `json:"uri"`
	Version *int   `json:"version"`
}

// TextDocumentEdit is one document's edits in WorkspaceEdit.documentChanges.
type TextDocumentEdit struct {
	TextDocument VersionedDocument   `json:"textDocument"`
	Edits        []protocol.TextEdit `json:"edits"`
}

// WorkspaceEdit is an LSP WorkspaceEdit: changes, or documentChanges when the client supports them.
type WorkspaceEdit struct {
	Changes         map[string][]protocol.TextEdit `json:"changes,omitempty"`
	DocumentChanges []TextDocumentEdit             `json:"documentChanges,omitempty"`
}

// Command is an LSP Command.
type Command struct {
	Title     string `json:"title"`
	Command   string `json:"command"`
	Arguments []any  `json:"arguments,omitempty"`
}

// CodeAction is an LSP CodeAction.
type CodeAction struct {
	Title       string         `json:"title"`
	Kind        string         `json:"kind,omitempty"`
	IsPreferred bool           `json:"isPreferred,omitempty"`
	Edit        *WorkspaceEdit `json:"edit,omitempty"`
	Command     *Command       `json:"command,omitempty"`
}

// CompletionItem is an LSP CompletionItem.
type CompletionItem struct {
	Label               string              `json:"label"`
	Kind                int                 `json:"kind,omitempty"`
	Detail              string              `json:"detail,omitempty"`
	FilterText          string              `json:"filterText,omitempty"`
	SortText            string              `json:"sortText,omitempty"`
	Preselect           bool                `json:"preselect,omitempty"`
	TextEdit            *protocol.TextEdit  `json:"textEdit,omitempty"`
	AdditionalTextEdits []protocol.TextEdit `json:"additionalTextEdits,omitempty"`
	Command             *Command            `json:"command,omitempty"`
}

// CopilotInlineEdit is one edit of Copilot's textDocument/copilotInlineEdit result.
type CopilotInlineEdit struct {
	Text         string            `json:"text"`
	Range        protocol.Range    `json:"range"`
	TextDocument CopilotDocumentID `json:"textDocument"`
	Command      Command           `json:"command"`
}

// CopilotDocumentID echoes the request's document and version exactly as the editor sent them.
type CopilotDocumentID struct {
	URI     string          `json:"uri"`
	Version json.RawMessage `json:"version"`
}

// ShowDocumentParams are the params of window/showDocument.
type ShowDocumentParams struct {
	URI       string          `json:"uri"`
	TakeFocus bool            `json:"takeFocus,omitempty"`
	Selection *protocol.Range `json:"selection,omitempty"`
}

// Span replaces the bytes [Start, End) of a text by Text.
type Span struct {
	Start, End int
	Text       string
}

// EditsToSpans validates an edit suggestion's edits against the text they were computed for
// (positions in the agent's encoding) and returns them as byte spans sorted by position. The edits
// apply simultaneously: each range refers to the original text; overlapping ranges are an error, as
// are out-of-range positions and a start after an end.
func EditsToSpans(m *encoding.Mapper, edits []acp.UnstableNesTextEdit, agent encoding.Kind) ([]Span, error) {
	if len(edits) == 0 {
		return nil, fmt.Errorf("the suggestion has no edits")
	}
	spans := make([]Span, len(edits))
	for i, e := range edits {
		s, en, err := m.RangeOffsets(RangeFromACP(e.Range), agent)
		if err != nil {
			return nil, fmt.Errorf("edit %d: %w", i, err)
		}
		spans[i] = Span{s, en, e.NewText}
	}
	return sortSpans(spans)
}

func sortSpans(spans []Span) ([]Span, error) {
	// By start, then end: an insertion at the start of a replacement comes first, whichever order
	// the agent listed them in.
	sort.SliceStable(spans, func(i, j int) bool {
		if spans[i].Start != spans[j].Start {
			return spans[i].Start < spans[j].Start
		}
		return spans[i].End < spans[j].End
	})
	for i := 1; i < len(spans); i++ {
		if spans[i].Start < spans[i-1].End || (spans[i].Start == spans[i-1].Start && spans[i].Start == spans[i].End && spans[i-1].Start == spans[i-1].End) {
			return nil, fmt.Errorf("edits overlap at byte %d", spans[i].Start)
		}
	}
	return spans, nil
}

// Merge turns sorted, non-overlapping spans of text into the one replacement that covers them all.
func Merge(text string, spans []Span) Replacement {
	start, end := spans[0].Start, spans[len(spans)-1].End
	var b strings.Builder
	at := start
	for _, s := range spans {
		b.WriteString(text[at:s.Start])
		b.WriteString(s.Text)
		at = s.End
	}
	b.WriteString(text[at:end])
	return Replacement{Start: start, End: end, Text: b.String()}
}

// ApplySpans returns text with the spans made.
func ApplySpans(text string, spans []Span) string {
	if len(spans) == 0 {
		return text
	}
	return Merge(text, spans).Apply(text)
}

// SpansToTextEdits converts spans of m's text to LSP text edits in the editor's encoding.
func SpansToTextEdits(m *encoding.Mapper, spans []Span, editor encoding.Kind) ([]protocol.TextEdit, error) {
	out := make([]protocol.TextEdit, len(spans))
	for i, s := range spans {
		r, err := m.OffsetsRange(s.Start, s.End, editor)
		if err != nil {
			return nil, err
		}
		out[i] = protocol.TextEdit{Range: RangeToLSP(r), NewText: s.Text}
	}
	return out, nil
}

// FileEdit is what a suggestion changes in one document: spans of the text Mapper holds. Version
// is the editor's version of the document when it is open, nil otherwise.
type FileEdit struct {
	URI     string
	Version *int
	Mapper  *encoding.Mapper
	Spans   []Span
}

// ToWorkspaceEdit makes the WorkspaceEdit that applies files, in the editor's encoding, as
// documentChanges when the client supports them and as changes otherwise.
func ToWorkspaceEdit(files []FileEdit, editor encoding.Kind, documentChanges bool) (*WorkspaceEdit, error) {
	we := &WorkspaceEdit{}
	if !documentChanges {
		we.Changes = map[string][]protocol.TextEdit{}
	}
	for _, f := range files {
		edits, err := SpansToTextEdits(f.Mapper, f.Spans, editor)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.URI, err)
		}
		if documentChanges {
			we.DocumentChanges = append(we.DocumentChanges, TextDocumentEdit{
				TextDocument: VersionedDocument{URI: f.URI, Version: f.Version}, Edits: edits,
			})
		} else {
			we.Changes[f.URI] = append(we.Changes[f.URI], edits...)
		}
	}
	return we, nil
}

// isIdentRune reports a rune that continues an identifier: letters, digits, underscore, and the
// combining marks that Unicode's identifier rules (and most languages) allow after a letter.
func isIdentRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.In(r, unicode.Mn, unicode.Mc)
}

// IdentifierAt returns the bounds of the identifier (letters, digits, underscore, combining marks) that contains
// offset or ends at it.
func IdentifierAt(text string, offset int) (start, end int, ok bool) {
	start, end = offset, offset
	for start > 0 {
		r, size := utf8.DecodeLastRuneInString(text[:start])
		if !isIdentRune(r) {
			break
		}
		start -= size
	}
	for end < len(text) {
		r, size := utf8.DecodeRuneInString(text[end:])
		if !isIdentRune(r) {
			break
		}
		end += size
	}
	return start, end, start < end
}

// RenameSpans is the bridge's honest reading of a rename suggestion: it cannot see the language's
// scopes, so it replaces every whole-identifier occurrence, in text, of the identifier at offset.
func RenameSpans(text string, offset int, newName string) (oldName string, spans []Span, err error) {
	s, e, ok := IdentifierAt(text, offset)
	if !ok {
		return "", nil, fmt.Errorf("no identifier at byte %d", offset)
	}
	oldName = text[s:e]
	if newName == "" || newName == oldName {
		return oldName, nil, fmt.Errorf("nothing to rename: %q to %q", oldName, newName)
	}
	for i := 0; i <= len(text)-len(oldName); {
		j := strings.Index(text[i:], oldName)
		if j < 0 {
			break
		}
		at := i + j
		before, _ := utf8.DecodeLastRuneInString(text[:at])
		after, _ := utf8.DecodeRuneInString(text[at+len(oldName):])
		if (at == 0 || !isIdentRune(before)) && (at+len(oldName) == len(text) || !isIdentRune(after)) {
			spans = append(spans, Span{at, at + len(oldName), newName})
		}
		i = at + len(oldName)
	}
	return oldName, spans, nil
}

// Searcher finds the matches of a searchAndReplace suggestion.
type Searcher struct {
	literal string
	re      *regexp.Regexp
	replace string
}

// NewSearcher compiles a search: literal, or an RE2 regular expression whose replacement may refer
// to groups as $1 or ${name}.
func NewSearcher(search, replace string, isRegex bool) (*Searcher, error) {
	if search == "" {
		return nil, fmt.Errorf("empty search")
	}
	s := &Searcher{replace: replace}
	if isRegex {
		re, err := regexp.Compile(search)
		if err != nil {
			return nil, fmt.Errorf("search is not a valid RE2 regular expression: %w", err)
		}
		s.re = re
	} else {
		s.literal = search
	}
	return s, nil
}

// Spans returns the replacements in text.
func (s *Searcher) Spans(text string) []Span {
	var out []Span
	if s.re == nil {
		for i := 0; i <= len(text); {
			j := strings.Index(text[i:], s.literal)
			if j < 0 {
				break
			}
			if a, b, ok := wholeLineBreaks(text, i+j, i+j+len(s.literal)); ok {
				out = append(out, Span{a, b, s.replace})
			}
			i += j + len(s.literal)
		}
		return out
	}
	for _, m := range s.re.FindAllStringSubmatchIndex(text, -1) {
		a, b, ok := wholeLineBreaks(text, m[0], m[1])
		if !ok {
			continue // an empty match replaces nothing a person would call a match
		}
		repl := string(s.re.ExpandString(nil, s.replace, text, m))
		out = append(out, Span{a, b, repl})
	}
	return out
}

// wholeLineBreaks keeps a match from splitting a "\r\n" line ending, which no position can
// address: a match that ends after its "\r" stops before it (RE2's . matches "\r"), one that starts
// at its "\n" takes the "\r" too. It reports false for a match that is then empty.
func wholeLineBreaks(text string, start, end int) (int, int, bool) {
	if start == end {
		return start, end, false // an empty match replaces nothing, even between \r and \n
	}
	if end > start && end < len(text) && text[end-1] == '\r' && text[end] == '\n' {
		end--
	}
	if start > 0 && start < len(text) && text[start] == '\n' && text[start-1] == '\r' {
		start--
	}
	return start, end, end > start
}

// Snippet renders text for a one-line title: line breaks shown as ⏎, long text shortened.
func Snippet(text string, max int) string {
	text = strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "⏎"), "\n", "⏎")
	text = strings.ReplaceAll(text, "\r", "⏎")
	text = strings.ReplaceAll(text, "\t", " ")
	if utf8.RuneCountInString(text) > max {
		r := []rune(text)
		return string(r[:max-1]) + "…"
	}
	return text
}

// EditTitle describes a replacement of m's text: "Next edit: `old` → `new` (line N)".
func EditTitle(m *encoding.Mapper, r Replacement, file string) string {
	old := m.Text()[r.Start:r.End]
	where := fmt.Sprintf("line %d", m.LineOf(r.Start)+1)
	if file != "" {
		where = file + ":" + fmt.Sprint(m.LineOf(r.Start)+1)
	}
	switch {
	case old == "":
		return fmt.Sprintf("Next edit: insert `%s` (%s)", Snippet(r.Text, 50), where)
	case r.Text == "":
		return fmt.Sprintf("Next edit: delete `%s` (%s)", Snippet(old, 50), where)
	}
	return fmt.Sprintf("Next edit: `%s` → `%s` (%s)", Snippet(old, 40), Snippet(r.Text, 40), where)
}

// SpansTitle describes an edit given as spans of m's text: when it makes the same replacement in
// several places (a rename across a file) "Next edit: `old` → `new` (3 places from line N)", else
// EditTitle of the spans merged.
func SpansTitle(m *encoding.Mapper, spans []Span, file string) string {
	text := m.Text()
	same := len(spans) > 1
	for _, sp := range spans[1:] {
		if sp.Text != spans[0].Text || text[sp.Start:sp.End] != text[spans[0].Start:spans[0].End] {
			same = false
			break
		}
	}
	if !same {
		return EditTitle(m, Merge(text, spans), file)
	}
	where := fmt.Sprintf("%d places from line %d", len(spans), m.LineOf(spans[0].Start)+1)
	if file != "" {
		where = fmt.Sprintf("%d places from %s:%d", len(spans), file, m.LineOf(spans[0].Start)+1)
	}
	old := text[spans[0].Start:spans[0].End]
	switch {
	case old == "":
		return fmt.Sprintf("Next edit: insert `%s` (%s)", Snippet(spans[0].Text, 50), where)
	case spans[0].Text == "":
		return fmt.Sprintf("Next edit: delete `%s` (%s)", Snippet(old, 50), where)
	}
	return fmt.Sprintf("Next edit: `%s` → `%s` (%s)", Snippet(old, 40), Snippet(spans[0].Text, 40), where)
}

// SpansToCompletionItem presents an edit of the document being completed as one completion item.
// LSP requires the item's main textEdit to be on one line and to contain the cursor: that is the
// span around the cursor when there is one, else an empty edit at the cursor; the other spans go to
// additionalTextEdits. It is an error when a span around the cursor crosses lines.
func SpansToCompletionItem(m *encoding.Mapper, spans []Span, cursor int, editor encoding.Kind, cmd Command) (CompletionItem, error) {
	text := m.Text()
	line := m.LineOf(cursor)
	main := Span{cursor, cursor, ""}
	var rest []Span
	for _, s := range spans {
		if s.Start <= cursor && cursor <= s.End && main.Start == cursor && main.End == cursor && main.Text == "" {
			if m.LineOf(s.Start) != line || m.LineOf(s.End) != line {
				return CompletionItem{}, fmt.Errorf("the edit around the cursor crosses lines")
			}
			main = s
			continue
		}
		rest = append(rest, s)
	}
	mainEdits, err := SpansToTextEdits(m, []Span{main}, editor)
	if err != nil {
		return CompletionItem{}, err
	}
	additional, err := SpansToTextEdits(m, rest, editor)
	if err != nil {
		return CompletionItem{}, err
	}
	merged := Merge(text, spans)
	label := Snippet(main.Text, 60)
	if label == "" {
		label = Snippet(merged.Text, 60)
	}
	return CompletionItem{
		Label:               label,
		Kind:                1, // Text
		Detail:              strings.TrimPrefix(EditTitle(m, merged, ""), "Next edit: "),
		FilterText:          text[main.Start:cursor],
		SortText:            "0",
		Preselect:           true,
		TextEdit:            &mainEdits[0],
		AdditionalTextEdits: additional,
		Command:             &cmd,
	}, nil
}

// ToCopilotInlineEdit presents a replacement of m's text as Copilot's inline edit, echoing the
// request's document and version.
func ToCopilotInlineEdit(m *encoding.Mapper, r Replacement, editor encoding.Kind, uri string, version json.RawMessage, cmd Command) (CopilotInlineEdit, error) {
	rng, err := m.OffsetsRange(r.Start, r.End, editor)
	if err != nil {
		return CopilotInlineEdit{}, err
	}
	return CopilotInlineEdit{
		Text: r.Text, Range: RangeToLSP(rng),
		TextDocument: CopilotDocumentID{URI: uri, Version: version},
		Command:      cmd,
	}, nil
}
