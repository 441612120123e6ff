package translate

// Golden tests: each testdata/golden/*.txtar archive is one case, read as one file. It holds the
// inputs exactly as the peers send them (the document, an agent's suggestion in the agent's
// encoding, the editor's view in params.json) and, in want.json, what the translate functions make
// of them for one editor surface, plus the document as it reads once the editor applies that output.
//
// Run them with
//
//	go test ./translate -run TestGolden
//
// and, after a deliberate change of output, rewrite the want.json sections (and only those) with
//
//	go test ./translate -run TestGolden -update
//
// A new case is an archive without want.json: -update writes it, and then someone reads it.
//
// Sections of an archive (the comment before them says what the case shows):
//
//	doc              the document, uri file:///w/main.go; raw bytes, so "\r\n" stays as written, but
//	                 like every section it ends with "\n"
//	other            optional: a second document, uri file:///w/other.go
//	suggestion.json  one ACP suggestion (edit, rename or searchAndReplace) as the agent sends it
//	changes.json     for surface "changes" instead: LSP content changes, in the editor's encoding
//	params.json      {"agentEncoding", "editorEncoding", "surface", "cursor", ...}: see goldenParams
//	want.json        the output: what the surface shows, or {"error": ...} / {"notShown": ...}, and
//	                 "applied" (or "after"), the documents once the editor applies it, line by line
//
// want.json is pretty-printed in a stable order (see prettyJSON); combining marks and format
// characters are escaped there so that they can be seen. A comment starting "KNOWN BUG" marks a
// case whose want.json pins wrong output, so that the fix shows as a diff.
//
// A searchAndReplace suggestion whose uri is the folder file:///w/ searches doc and other: the
// test stands in for the bridge's reading of a folder.

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	acp "github.com/coder/acp-go-sdk"
	"go.lsp.dev/protocol"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/document"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
)

var update = flag.Bool("update", false, "rewrite the want.json sections of testdata/golden/*.txtar")

const (
	goldenDocURI    = "file:///w/main.go"
	goldenOtherURI  = "file:///w/other.go"
	goldenFolderURI = "file:///w/"
	goldenAccept    = "acp-lsp-bridge.accept"
)

// ---- txtar ----------------------------------------------------------------------------------

// archive is a txtar archive: a comment, then files, each introduced by a line "-- name --".
// A file's data is every line up to the next marker line, so it ends with "\n" (or is empty);
// format adds that "\n" when it is missing.
type archive struct {
	comment string
	files   []archiveFile
}

type archiveFile struct {
	name, data string
}

// markerName reports whether line (with or without its "\n") is a marker line, and its name.
func markerName(line string) (string, bool) {
	l := strings.TrimSuffix(line, "\n")
	if len(l) < len("-- x --") || !strings.HasPrefix(l, "-- ") || !strings.HasSuffix(l, " --") {
		return "", false
	}
	name := strings.TrimSpace(l[3 : len(l)-3])
	return name, name != ""
}

func parseArchive(s string) *archive {
	a := &archive{}
	name, start, inComment := "", 0, true
	for i := 0; i < len(s); {
		end := len(s)
		if j := strings.IndexByte(s[i:], '\n'); j >= 0 {
			end = i + j + 1
		}
		if n, ok := markerName(s[i:end]); ok {
			if inComment {
				a.comment = s[:i]
			} else {
				a.files = append(a.files, archiveFile{name, s[start:i]})
			}
			name, start, inComment = n, end, false
		}
		i = end
	}
	if inComment {
		a.comment = s
	} else {
		a.files = append(a.files, archiveFile{name, s[start:]})
	}
	return a
}

func (a *archive) format() string {
	var b strings.Builder
	b.WriteString(a.comment)
	if a.comment != "" && !strings.HasSuffix(a.comment, "\n") {
		b.WriteByte('\n')
	}
	for _, f := range a.files {
		fmt.Fprintf(&b, "-- %s --\n", f.name)
		b.WriteString(f.data)
		if f.data != "" && !strings.HasSuffix(f.data, "\n") {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func (a *archive) get(name string) (string, bool) {
	for _, f := range a.files {
		if f.name == name {
			return f.data, true
		}
	}
	return "", false
}

// set replaces the data of file name, or appends the file.
func (a *archive) set(name, data string) {
	for i := range a.files {
		if a.files[i].name == name {
			a.files[i].data = data
			return
		}
	}
	a.files = append(a.files, archiveFile{name, data})
}

func TestArchiveFormat(t *testing.T) {
	in := "what it shows\n\n-- doc --\nline\r\nlast\n-- empty --\n-- not -- a marker\n-- x --\n-- x --\n"
	a := parseArchive(in)
	if a.comment != "what it shows\n\n" {
		t.Errorf("comment %q", a.comment)
	}
	want := []archiveFile{{"doc", "line\r\nlast\n"}, {"empty", "-- not -- a marker\n"}, {"x", ""}, {"x", ""}}
	if fmt.Sprint(a.files) != fmt.Sprint(want) {
		t.Errorf("files %q, want %q", a.files, want)
	}
	if got := a.format(); got != in {
		t.Errorf("round trip:\n got %q\nwant %q", got, in)
	}
	a.set("doc", "no newline")
	a.set("new", "n\n")
	if got := a.format(); got != "what it shows\n\n-- doc --\nno newline\n-- empty --\n-- not -- a marker\n-- x --\n-- x --\n-- new --\nn\n" {
		t.Errorf("after set: %q", got)
	}
	if a := parseArchive("only a comment"); a.comment != "only a comment" || len(a.files) != 0 || a.format() != "only a comment\n" {
		t.Errorf("comment only: %+v", a)
	}
}

// ---- the cases ------------------------------------------------------------------------------

type goldenPos struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

type goldenRange struct {
	Start goldenPos `json:"start"`
	End   goldenPos `json:"end"`
}

func (r goldenRange) encoding() encoding.Range {
	return encoding.Range{
		Start: encoding.Position{Line: r.Start.Line, Character: r.Start.Character},
		End:   encoding.Position{Line: r.End.Line, Character: r.End.Character},
	}
}

// goldenParams is params.json.
type goldenParams struct {
	AgentEncoding  string `json:"agentEncoding"`
	EditorEncoding string `json:"editorEncoding"`
	// Surface is inline, copilot, codeAction, completion or changes.
	Surface string `json:"surface"`
	// Cursor is the editor's cursor, in the editor's encoding (inline and completion).
	Cursor *goldenPos `json:"cursor,omitempty"`
	// DocumentChanges: the client supports WorkspaceEdit.documentChanges (codeAction).
	DocumentChanges bool `json:"documentChanges,omitempty"`
	// Version is the textDocument.version of the copilotInlineEdit request, echoed as sent.
	Version json.RawMessage `json:"version,omitempty"`
	// Versions are the editor's versions of the open documents, by URI (codeAction with
	// documentChanges); a document not listed is not open and gets a null version.
	Versions map[string]int `json:"versions,omitempty"`
}

// goldenChange is one LSP TextDocumentContentChangeEvent.
type goldenChange struct {
	Range *goldenRange `json:"range,omitempty"`
	Text  string       `json:"text"`
}

// lspEdit is an LSP TextEdit as the editor reads it off the wire.
type lspEdit struct {
	Range   goldenRange `json:"range"`
	NewText string      `json:"newText"`
}

type goldenCase struct {
	a             *archive
	p             goldenParams
	agent, editor encoding.Kind
	docs          map[string]*encoding.Mapper // by URI
	cursor        int                         // byte offset of the cursor in doc; -1 without one
}

var goldenSections = map[string]bool{
	"doc": true, "other": true, "suggestion.json": true, "changes.json": true, "params.json": true, "want.json": true,
}

func TestGolden(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "golden", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatal("no testdata/golden/*.txtar")
	}
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			a := parseArchive(string(raw))
			got, err := runGolden(t, a, strings.Contains(filepath.Base(path), "crlf"))
			if err != nil {
				t.Fatalf("%s: bad case: %v", path, err)
			}
			want, ok := a.get("want.json")
			if *update {
				if !ok || want != got {
					a.set("want.json", got)
					if err := os.WriteFile(path, []byte(a.format()), 0o644); err != nil {
						t.Fatal(err)
					}
					t.Logf("%s: want.json rewritten", path)
				}
				return
			}
			if !ok {
				t.Fatalf("%s has no want.json section; write it with: go test ./translate -run TestGolden -update", path)
			}
			if want != got {
				t.Errorf("%s: want.json differs (- want, + got):\n%s\nIf the new output is right: go test ./translate -run TestGolden -update",
					path, lineDiff(want, got))
			}
		})
	}
}

// runGolden computes the want.json of an archive. An error means the case itself is malformed;
// what the translate functions return, errors included, is the output.
func runGolden(t *testing.T, a *archive, crlf bool) (string, error) {
	if strings.TrimSpace(a.comment) == "" {
		return "", fmt.Errorf("no comment saying what the case shows")
	}
	seen := map[string]bool{}
	for _, f := range a.files {
		if !goldenSections[f.name] {
			return "", fmt.Errorf("unknown section %q", f.name)
		}
		if seen[f.name] {
			return "", fmt.Errorf("section %q twice", f.name)
		}
		seen[f.name] = true
	}
	c := &goldenCase{a: a, docs: map[string]*encoding.Mapper{}, cursor: -1}
	doc, ok := a.get("doc")
	if !ok {
		return "", fmt.Errorf("no doc section")
	}
	if crlf && !strings.Contains(doc, "\r\n") {
		return "", fmt.Errorf(`a "crlf" case whose doc has no "\r\n": were its line endings converted?`)
	}
	c.docs[goldenDocURI] = encoding.NewMapper(doc)
	if other, ok := a.get("other"); ok {
		c.docs[goldenOtherURI] = encoding.NewMapper(other)
	}
	params, ok := a.get("params.json")
	if !ok {
		return "", fmt.Errorf("no params.json section")
	}
	if err := decodeStrict(params, &c.p); err != nil {
		return "", fmt.Errorf("params.json: %w", err)
	}
	if c.agent, ok = encoding.ParseKind(c.p.AgentEncoding); !ok {
		return "", fmt.Errorf("params.json: agentEncoding %q", c.p.AgentEncoding)
	}
	if c.editor, ok = encoding.ParseKind(c.p.EditorEncoding); !ok {
		return "", fmt.Errorf("params.json: editorEncoding %q", c.p.EditorEncoding)
	}
	if c.p.Cursor != nil {
		off, err := c.docs[goldenDocURI].PositionOffset(encoding.Position{Line: c.p.Cursor.Line, Character: c.p.Cursor.Character}, c.editor)
		if err != nil {
			return "", fmt.Errorf("params.json: cursor: %w", err)
		}
		c.cursor = off
	}

	var out map[string]any
	var err error
	if c.p.Surface == "changes" {
		out, err = c.changes(t)
	} else {
		sg, ok := a.get("suggestion.json")
		if !ok {
			return "", fmt.Errorf("no suggestion.json section")
		}
		var s acp.UnstableNesSuggestion
		if err := json.Unmarshal([]byte(sg), &s); err != nil {
			return "", fmt.Errorf("suggestion.json: %w", err)
		}
		switch c.p.Surface {
		case "inline", "copilot", "completion":
			if c.cursor < 0 && c.p.Surface != "copilot" {
				return "", fmt.Errorf("surface %s needs params.cursor", c.p.Surface)
			}
			if s.Edit == nil || s.Edit.Uri != goldenDocURI {
				return "", fmt.Errorf("surface %s shows edit suggestions of doc (%s) only", c.p.Surface, goldenDocURI)
			}
			switch c.p.Surface {
			case "inline":
				out, err = c.inline(s.Edit)
			case "copilot":
				out, err = c.copilot(s.Edit)
			default:
				out, err = c.completion(s.Edit)
			}
		case "codeAction":
			out, err = c.codeAction(s)
		default:
			return "", fmt.Errorf("params.json: surface %q", c.p.Surface)
		}
	}
	if err != nil {
		return "", err
	}
	return prettyJSON(out)
}

func decodeStrict(s string, v any) error {
	d := json.NewDecoder(strings.NewReader(s))
	d.DisallowUnknownFields()
	return d.Decode(v)
}

func failed(err error) map[string]any { return map[string]any{"error": err.Error()} }

func acceptCmd(id string) Command {
	return Command{Title: "Accept next edit", Command: goldenAccept, Arguments: []any{id}}
}

// wire encodes an LSP result the way the bridge puts it on the wire.
func wire(v any) (json.RawMessage, error) {
	b, err := protocol.Marshal(v)
	return json.RawMessage(b), err
}

// inline: EditsToReplacement, FitsInline, ReplacementToInlineItem.
func (c *goldenCase) inline(e *acp.UnstableNesSuggestionEdit) (map[string]any, error) {
	m := c.docs[goldenDocURI]
	r, err := EditsToReplacement(m, e.Edits, c.agent)
	if err != nil {
		return failed(err), nil
	}
	if !FitsInline(m, r, c.cursor) {
		rng, err := m.OffsetsRange(r.Start, r.End, c.editor)
		if err != nil {
			return failed(err), nil
		}
		return map[string]any{"notShown": fmt.Sprintf("the replacement %v-%v is not on the cursor's line %d around the cursor (0-based, editor encoding)",
			rng.Start, rng.End, m.LineOf(c.cursor))}, nil
	}
	item, err := ReplacementToInlineItem(m, r, c.editor, goldenAccept, e.Id)
	if err != nil {
		return failed(err), nil
	}
	b, err := wire(item)
	if err != nil {
		return nil, err
	}
	var read struct {
		InsertText string       `json:"insertText"`
		Range      *goldenRange `json:"range"`
	}
	if err := json.Unmarshal(b, &read); err != nil || read.Range == nil {
		return nil, fmt.Errorf("reading the item back: %v (range %v)", err, read.Range)
	}
	return map[string]any{"item": b, "applied": applyLSP(m, c.editor, []lspEdit{{*read.Range, read.InsertText}})}, nil
}

// copilot: EditsToReplacement, ToCopilotInlineEdit, as the result {edits: [edit]}.
func (c *goldenCase) copilot(e *acp.UnstableNesSuggestionEdit) (map[string]any, error) {
	m := c.docs[goldenDocURI]
	r, err := EditsToReplacement(m, e.Edits, c.agent)
	if err != nil {
		return failed(err), nil
	}
	version := c.p.Version
	if len(version) == 0 {
		version = json.RawMessage("null")
	}
	ce, err := ToCopilotInlineEdit(m, r, c.editor, goldenDocURI, version, acceptCmd(e.Id))
	if err != nil {
		return failed(err), nil
	}
	b, err := wire(struct {
		Edits []CopilotInlineEdit `json:"edits"`
	}{[]CopilotInlineEdit{ce}})
	if err != nil {
		return nil, err
	}
	var read struct {
		Edits []struct {
			Text  string      `json:"text"`
			Range goldenRange `json:"range"`
		} `json:"edits"`
	}
	if err := json.Unmarshal(b, &read); err != nil || len(read.Edits) != 1 {
		return nil, fmt.Errorf("reading the result back: %v", err)
	}
	return map[string]any{"result": b, "applied": applyLSP(m, c.editor, []lspEdit{{read.Edits[0].Range, read.Edits[0].Text}})}, nil
}

// completion: EditsToSpans, SpansToCompletionItem.
func (c *goldenCase) completion(e *acp.UnstableNesSuggestionEdit) (map[string]any, error) {
	m := c.docs[goldenDocURI]
	spans, err := EditsToSpans(m, e.Edits, c.agent)
	if err != nil {
		return failed(err), nil
	}
	item, err := SpansToCompletionItem(m, spans, c.cursor, c.editor, acceptCmd(e.Id))
	if err != nil {
		return failed(err), nil
	}
	b, err := wire(item)
	if err != nil {
		return nil, err
	}
	var read struct {
		TextEdit            *lspEdit  `json:"textEdit"`
		AdditionalTextEdits []lspEdit `json:"additionalTextEdits"`
	}
	if err := json.Unmarshal(b, &read); err != nil || read.TextEdit == nil {
		return nil, fmt.Errorf("reading the item back: %v", err)
	}
	return map[string]any{"item": b, "applied": applyLSP(m, c.editor, append([]lspEdit{*read.TextEdit}, read.AdditionalTextEdits...))}, nil
}

// codeAction: the spans of an edit, rename or searchAndReplace suggestion as FileEdits, then
// ToWorkspaceEdit (changes, or documentChanges when params.documentChanges).
func (c *goldenCase) codeAction(s acp.UnstableNesSuggestion) (map[string]any, error) {
	out := map[string]any{}
	var files []FileEdit
	fileEdit := func(uri string, spans []Span) FileEdit {
		fe := FileEdit{URI: uri, Mapper: c.docs[uri], Spans: spans}
		if v, ok := c.p.Versions[uri]; ok {
			fe.Version = &v
		}
		return fe
	}
	target := func(uri string) (*encoding.Mapper, error) {
		m, ok := c.docs[uri]
		if !ok {
			return nil, fmt.Errorf("suggestion.json: uri %s is not a document of the archive", uri)
		}
		return m, nil
	}
	switch {
	case s.Edit != nil:
		m, err := target(s.Edit.Uri)
		if err != nil {
			return nil, err
		}
		spans, err := EditsToSpans(m, s.Edit.Edits, c.agent)
		if err != nil {
			return failed(err), nil
		}
		file := ""
		if s.Edit.Uri != goldenDocURI {
			file = filepath.Base(s.Edit.Uri)
		}
		out["title"] = SpansTitle(m, spans, file)
		files = append(files, fileEdit(s.Edit.Uri, spans))
	case s.Rename != nil:
		m, err := target(s.Rename.Uri)
		if err != nil {
			return nil, err
		}
		off, err := m.PositionOffset(PositionFromACP(s.Rename.Position), c.agent)
		if err != nil {
			return failed(err), nil
		}
		old, spans, err := RenameSpans(m.Text(), off, s.Rename.NewName)
		if err != nil {
			return failed(err), nil
		}
		out["oldName"] = old
		out["matches"] = map[string]int{s.Rename.Uri: len(spans)}
		files = append(files, fileEdit(s.Rename.Uri, spans))
	case s.SearchAndReplace != nil:
		sr := s.SearchAndReplace
		searcher, err := NewSearcher(sr.Search, sr.Replace, sr.IsRegex != nil && *sr.IsRegex)
		if err != nil {
			return failed(err), nil
		}
		var uris []string
		if sr.Uri == goldenFolderURI {
			for u := range c.docs {
				uris = append(uris, u)
			}
			sort.Strings(uris)
		} else {
			if _, err := target(sr.Uri); err != nil {
				return nil, err
			}
			uris = []string{sr.Uri}
		}
		matches := map[string]int{}
		for _, u := range uris {
			if spans := searcher.Spans(c.docs[u].Text()); len(spans) > 0 {
				matches[u] = len(spans)
				files = append(files, fileEdit(u, spans))
			}
		}
		out["matches"] = matches
	default:
		return nil, fmt.Errorf("suggestion.json: a kind the codeAction golden does not present")
	}
	we, err := ToWorkspaceEdit(files, c.editor, c.p.DocumentChanges)
	if err != nil {
		return failed(err), nil
	}
	b, err := wire(we)
	if err != nil {
		return nil, err
	}
	out["edit"] = b
	var read struct {
		Changes         map[string][]lspEdit `json:"changes"`
		DocumentChanges []struct {
			TextDocument struct {
				URI string `json:"uri"`
			} `json:"textDocument"`
			Edits []lspEdit `json:"edits"`
		} `json:"documentChanges"`
	}
	if err := json.Unmarshal(b, &read); err != nil {
		return nil, fmt.Errorf("reading the WorkspaceEdit back: %v", err)
	}
	byURI := read.Changes
	if byURI == nil {
		byURI = map[string][]lspEdit{}
	}
	for _, dc := range read.DocumentChanges {
		byURI[dc.TextDocument.URI] = append(byURI[dc.TextDocument.URI], dc.Edits...)
	}
	applied := map[string]any{}
	for u, edits := range byURI {
		m, ok := c.docs[u]
		if !ok {
			return nil, fmt.Errorf("the WorkspaceEdit edits %s, which is no document of the archive", u)
		}
		applied[u] = applyLSP(m, c.editor, edits)
	}
	out["applied"] = applied
	return out, nil
}

// changes: document.Apply of the editor's content changes, then ChangesToACP incremental and full.
func (c *goldenCase) changes(t *testing.T) (map[string]any, error) {
	raw, ok := c.a.get("changes.json")
	if !ok {
		return nil, fmt.Errorf("surface changes needs a changes.json section")
	}
	var lsp []goldenChange
	if err := decodeStrict(raw, &lsp); err != nil {
		return nil, fmt.Errorf("changes.json: %w", err)
	}
	changes := make([]document.Change, len(lsp))
	for i, ch := range lsp {
		changes[i].Text = ch.Text
		if ch.Range != nil {
			r := ch.Range.encoding()
			changes[i].Range = &r
		}
	}
	base := c.docs[goldenDocURI]
	final, applied, err := document.Apply(base, changes, c.editor)
	if err != nil {
		return failed(err), nil
	}
	inc, err := ChangesToACP(applied, final, c.agent, false)
	if err != nil {
		return failed(err), nil
	}
	full, err := ChangesToACP(applied, final, c.agent, true)
	if err != nil {
		return failed(err), nil
	}
	// The agent, applying the incremental changes in its encoding, must read the editor's text.
	replay := make([]document.Change, len(inc))
	for i, ch := range inc {
		replay[i].Text = ch.Text
		if ch.Range != nil {
			r := RangeFromACP(*ch.Range)
			replay[i].Range = &r
		}
	}
	if agentSide, _, err := document.Apply(base, replay, c.agent); err != nil {
		t.Errorf("the agent cannot apply the incremental changes: %v", err)
	} else if agentSide.Text() != final.Text() {
		t.Errorf("the agent applying the incremental changes reads %q, the editor %q", agentSide.Text(), final.Text())
	}
	return map[string]any{"incremental": inc, "full": full, "after": lines(final.Text())}, nil
}

// applyLSP applies LSP text edits (ranges in encoding k, all relative to m's text, as in a
// WorkspaceEdit) and returns the result as lines, or the reason they do not apply.
func applyLSP(m *encoding.Mapper, k encoding.Kind, edits []lspEdit) any {
	spans := make([]Span, len(edits))
	for i, e := range edits {
		s, en, err := m.RangeOffsets(e.Range.encoding(), k)
		if err != nil {
			return map[string]string{"error": fmt.Sprintf("edit %d: %v", i, err)}
		}
		spans[i] = Span{s, en, e.NewText}
	}
	sort.SliceStable(spans, func(i, j int) bool { return spans[i].Start < spans[j].Start })
	text, at := m.Text(), 0
	var b strings.Builder
	for i, s := range spans {
		if s.Start < at {
			return map[string]string{"error": fmt.Sprintf("edits overlap at byte %d", spans[i].Start)}
		}
		b.WriteString(text[at:s.Start])
		b.WriteString(s.Text)
		at = s.End
	}
	b.WriteString(text[at:])
	return lines(b.String())
}

// lines splits text after each "\n", so that each line shows its line ending.
func lines(text string) []string {
	out := strings.SplitAfter(text, "\n")
	if out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	if out == nil {
		out = []string{}
	}
	return out
}

// prettyJSON renders v as indented JSON in a stable order: object keys sorted, except that start
// comes before end and line before character, as people read ranges. A value that fits in
// prettyWidth columns stays on one line, but an array of several lines of text (strings ending in
// "\n") has one line of text per line. Non-ASCII and <>& are written as they are.
func prettyJSON(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var x any
	if err := d.Decode(&x); err != nil {
		return "", err
	}
	var out strings.Builder
	writePretty(&out, x, "", 0)
	out.WriteByte('\n')
	return out.String(), nil
}

const prettyWidth = 100

var keyRank = map[string]int{"start": -2, "end": -1, "line": -2, "character": -1}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		ri, rj := keyRank[keys[i]], keyRank[keys[j]]
		if ri != rj {
			return ri < rj
		}
		return keys[i] < keys[j]
	})
	return keys
}

// jsonString quotes s, escaping (besides what JSON requires) the characters a reader cannot see:
// combining marks and format characters, so that e + U+0301 does not pass for é.
func jsonString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	q := strings.TrimSuffix(b.String(), "\n")
	if !strings.ContainsFunc(q, invisible) {
		return q
	}
	var out strings.Builder
	for _, r := range q {
		if !invisible(r) {
			out.WriteRune(r)
			continue
		}
		if r1, r2 := utf16.EncodeRune(r); r1 != utf8.RuneError {
			fmt.Fprintf(&out, `\u%04x\u%04x`, r1, r2)
		} else {
			fmt.Fprintf(&out, `\u%04x`, r)
		}
	}
	return out.String()
}

func invisible(r rune) bool {
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf)
}

// compactJSON renders x on one line.
func compactJSON(x any) string {
	switch x := x.(type) {
	case map[string]any:
		parts := make([]string, 0, len(x))
		for _, k := range sortedKeys(x) {
			parts = append(parts, jsonString(k)+": "+compactJSON(x[k]))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = compactJSON(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case string:
		return jsonString(x)
	case json.Number:
		return x.String()
	case bool:
		return fmt.Sprint(x)
	case nil:
		return "null"
	}
	panic(fmt.Sprintf("prettyJSON: %T", x))
}

// isTextLines reports whether x is an array of several lines of text.
func isTextLines(x any) bool {
	a, ok := x.([]any)
	if !ok || len(a) < 2 {
		return false
	}
	for _, e := range a[:len(a)-1] {
		if s, ok := e.(string); !ok || !strings.HasSuffix(s, "\n") {
			return false
		}
	}
	_, ok = a[len(a)-1].(string)
	return ok
}

// writePretty writes x at indent; used is how many columns the line already holds.
func writePretty(out *strings.Builder, x any, indent string, used int) {
	if c := compactJSON(x); used+len([]rune(c)) <= prettyWidth && !isTextLines(x) {
		out.WriteString(c)
		return
	}
	inner := indent + "  "
	switch x := x.(type) {
	case map[string]any:
		out.WriteString("{")
		for i, k := range sortedKeys(x) {
			if i > 0 {
				out.WriteString(",")
			}
			key := jsonString(k) + ": "
			out.WriteString("\n" + inner + key)
			writePretty(out, x[k], inner, len(inner)+len([]rune(key)))
		}
		out.WriteString("\n" + indent + "}")
	case []any:
		out.WriteString("[")
		for i, e := range x {
			if i > 0 {
				out.WriteString(",")
			}
			out.WriteString("\n" + inner)
			writePretty(out, e, inner, len(inner))
		}
		out.WriteString("\n" + indent + "]")
	default:
		out.WriteString(compactJSON(x)) // a long string: nothing to break
	}
}

// lineDiff is a line diff of want and got (longest common subsequence), with three lines of
// context around each change.
func lineDiff(want, got string) string {
	a, b := strings.Split(strings.TrimSuffix(want, "\n"), "\n"), strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	// lcs[i][j]: length of the longest common subsequence of a[i:] and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type op struct {
		mark byte
		line string
	}
	var ops []op
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			ops = append(ops, op{' ', a[i]})
			i++
			j++
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, op{'-', a[i]})
			i++
		default:
			ops = append(ops, op{'+', b[j]})
			j++
		}
	}
	const context = 3
	show := make([]bool, len(ops))
	for k, o := range ops {
		if o.mark != ' ' {
			for x := max(k-context, 0); x <= min(k+context, len(ops)-1); x++ {
				show[x] = true
			}
		}
	}
	var out strings.Builder
	for k, o := range ops {
		if !show[k] {
			if k == 0 || show[k-1] {
				out.WriteString("  ...\n")
			}
			continue
		}
		fmt.Fprintf(&out, "%c %s\n", o.mark, o.line)
	}
	return out.String()
}

func TestLineDiff(t *testing.T) {
	want := "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n"
	got := "a\nb\nc\nd\nE\nf\ng\nh\ni\nj\nk\n"
	d := lineDiff(want, got)
	for _, s := range []string{"- e\n", "+ E\n", "+ k\n", "  b\n", "  ...\n"} {
		if !strings.Contains(d, s) {
			t.Errorf("diff lacks %q:\n%s", s, d)
		}
	}
	if strings.Contains(d, "  a\n") {
		t.Errorf("diff shows more than three lines of context:\n%s", d)
	}
}
