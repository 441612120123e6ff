package translate_test

import (
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	acp "github.com/coder/acp-go-sdk"
	"go.lsp.dev/protocol"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/acpside"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/translate"
)

// The fuzz target below checks the translate functions against a slow reference model of
// positions: lines split and characters counted one rune at a time, independently of package
// encoding's index.

var fuzzKinds = []encoding.Kind{encoding.UTF8, encoding.UTF16, encoding.UTF32}

// fzURI is the document the suggestions are about.
const fzURI = "file:///w/a.go"

// fzLine is one line of the reference model: the byte offsets of its content, before its ending.
type fzLine struct{ start, end int }

func fzLines(text string) []fzLine {
	var lines []fzLine
	start := 0
	for i := 0; i < len(text); i++ {
		switch {
		case text[i] == '\r' && i+1 < len(text) && text[i+1] == '\n':
			lines = append(lines, fzLine{start, i})
			i++
			start = i + 1
		case text[i] == '\n' || text[i] == '\r':
			lines = append(lines, fzLine{start, i})
			start = i + 1
		}
	}
	return append(lines, fzLine{start, len(text)})
}

// fzWidth is the width in encoding k of the rune that utf8.DecodeRuneInString read in size bytes.
// An invalid byte (size 1) is one unit everywhere; only a four-byte character is two utf-16 units.
func fzWidth(size int, k encoding.Kind) int {
	switch {
	case k == encoding.UTF8:
		return size
	case k == encoding.UTF16 && size == 4:
		return 2
	}
	return 1
}

// fzOffset converts a position of encoding k to a byte offset, the slow way: a column past the end
// of its line is the line's end, a column inside a character is that character's start, the line
// after the last is the end of the text.
func fzOffset(lines []fzLine, text string, line, char int, k encoding.Kind) (int, bool) {
	switch {
	case line < 0 || char < 0 || line > len(lines):
		return 0, false
	case line == len(lines):
		return len(text), true
	}
	ln := lines[line]
	units, off := 0, ln.start
	for off < ln.end {
		_, size := utf8.DecodeRuneInString(text[off:ln.end])
		w := fzWidth(size, k)
		if units+w > char {
			break
		}
		units += w
		off += size
	}
	return off, true
}

// fzPosition converts a byte offset to a position of encoding k, the slow way. It reports false
// for an offset no position names: outside the text, inside a character, between "\r" and "\n".
func fzPosition(lines []fzLine, text string, off int, k encoding.Kind) (int, int, bool) {
	for i, ln := range lines {
		if off < ln.start || off > ln.end {
			continue
		}
		units, at := 0, ln.start
		for at < off {
			_, size := utf8.DecodeRuneInString(text[at:ln.end])
			units += fzWidth(size, k)
			at += size
		}
		return i, units, at == off
	}
	return 0, 0, false
}

// fzSpan is a replacement of the bytes [start, end) in the reference model.
type fzSpan struct {
	start, end int
	text       string
}

// fzConflict reports two simultaneous edits that cannot both apply: they share bytes, one inserts
// strictly inside the other, or both insert at the same place (the order would be ambiguous).
func fzConflict(a, b fzSpan) bool {
	return a.start < b.end && b.start < a.end || a.start == a.end && b.start == b.end && a.start == b.start
}

// fzApply applies non-conflicting spans, all relative to text, the slow way.
func fzApply(text string, spans []fzSpan) string {
	s := slices.Clone(spans)
	sort.SliceStable(s, func(i, j int) bool {
		if s[i].start != s[j].start {
			return s[i].start < s[j].start
		}
		return s[i].end < s[j].end
	})
	var b strings.Builder
	at := 0
	for _, sp := range s {
		b.WriteString(text[at:sp.start])
		b.WriteString(sp.text)
		at = sp.end
	}
	b.WriteString(text[at:])
	return b.String()
}

// fzEditorSpan reads an LSP range the translation produced and checks that it names exactly the
// bytes [start, end) of text in the editor's encoding: each position is the canonical position
// of its offset (on a line of the text, at a character boundary, no column past the line's end).
func fzEditorSpan(t *testing.T, lines []fzLine, text string, r protocol.Range, k encoding.Kind, start, end int, what string) {
	t.Helper()
	for _, p := range []struct {
		pos protocol.Position
		off int
	}{{r.Start, start}, {r.End, end}} {
		line, char, ok := fzPosition(lines, text, p.off, k)
		if !ok {
			t.Fatalf("%s: byte %d of %q has no %v position; the translation accepted it", what, p.off, text, k)
		}
		if int(p.pos.Line) != line || int(p.pos.Character) != char {
			t.Fatalf("%s: byte %d of %q is %d:%d in %v; the translation says %d:%d", what, p.off, text, line, char, k, p.pos.Line, p.pos.Character)
		}
		if back, ok := fzOffset(lines, text, line, char, k); !ok || back != p.off {
			t.Fatalf("%s: %d:%d in %v reads back as byte %d, not %d", what, line, char, k, back, p.off)
		}
	}
}

// fzApplyLSP applies LSP text edits (editor's encoding, all relative to text) the slow way. It
// reports false when a range is out of range, reversed or conflicting.
func fzApplyLSP(lines []fzLine, text string, edits []protocol.TextEdit, k encoding.Kind) (string, bool) {
	spans := make([]fzSpan, len(edits))
	for i, e := range edits {
		s, ok1 := fzOffset(lines, text, int(e.Range.Start.Line), int(e.Range.Start.Character), k)
		en, ok2 := fzOffset(lines, text, int(e.Range.End.Line), int(e.Range.End.Character), k)
		if !ok1 || !ok2 || s > en {
			return "", false
		}
		spans[i] = fzSpan{s, en, e.NewText}
	}
	for i := range spans {
		for j := range i {
			if fzConflict(spans[i], spans[j]) {
				return "", false
			}
		}
	}
	return fzApply(text, spans), true
}

// fzBoundaries lists the offsets of text that a position names, in order.
func fzBoundaries(lines []fzLine, text string) []int {
	var out []int
	for _, ln := range lines {
		for at := ln.start; ; {
			out = append(out, at)
			if at >= ln.end {
				break
			}
			_, size := utf8.DecodeRuneInString(text[at:ln.end])
			at += size
		}
	}
	return out
}

func fzIdentRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.In(r, unicode.Mn, unicode.Mc)
}

// FuzzSuggestionTranslation decodes a nes/suggest result as an agent would send it and runs each
// suggestion through the translations the bridge applies (lspside/present.go and the surfaces)
// for a document text, with the agent and the editor in any encodings. Nothing may panic, and:
//
//   - an edit suggestion is accepted exactly when the reference model accepts its edits (in range,
//     start not after end, no overlap, no two insertions at one place; a column past a line's end
//     is its end, one inside a character is its start), with the reference's spans; then every
//     surface built from it (workspace edit, Copilot inline edit, inline completion item where
//     FitsInline, completion item at every cursor) names, in the editor's encoding, exactly the
//     bytes the agent meant, at canonical positions, and applying it gives the agent's text;
//   - a jump's target and an edit's cursorPosition resolve as the reference says;
//   - a rename replaces exactly the whole-identifier occurrences, and a search gives non-empty,
//     non-overlapping matches (a literal one what strings.ReplaceAll replaces); both become text
//     edits naming exactly their bytes in the editor's encoding.
func FuzzSuggestionTranslation(f *testing.F) {
	// testdata/fuzz/FuzzSuggestionTranslation holds the interesting inputs: CRLF and lone CR lines,
	// surrogate pairs split by utf-16 columns, invalid UTF-8 in the document and in the JSON, huge
	// columns and lines, reversed, overlapping and out-of-range edits, renames, searches, jumps
	// and malformed suggestions.
	f.Add("let 𐐀 = foo(a);\nnext\n", byte(1), byte(0),
		`{"suggestions":[{"kind":"edit","id":"a","uri":"file:///w/a.go","edits":[{"range":{"start":{"line":0,"character":14},"end":{"line":0,"character":14}},"newText":", ctx"},{"range":{"start":{"line":0,"character":4},"end":{"line":0,"character":6}},"newText":"x"}]}]}`)
	f.Add("x", byte(0), byte(2), `{"suggestions":[{"kind":"edit","id":7},{"kind":"telepathy","id":"u"},"nope"]}`)

	f.Fuzz(func(t *testing.T, text string, agentByte, editorByte byte, raw string) {
		agent := fuzzKinds[int(agentByte)%len(fuzzKinds)]
		editor := fuzzKinds[int(editorByte)%len(fuzzKinds)]
		m := encoding.NewMapper(text)
		lines := fzLines(text)
		if m.LineCount() != len(lines) {
			t.Fatalf("NewMapper(%q) has %d lines; the reference has %d", text, m.LineCount(), len(lines))
		}

		sugs, err := acpside.DecodeSuggestions(json.RawMessage(raw))
		if err != nil {
			return
		}
		for _, sg := range sugs {
			set := 0
			for _, p := range []bool{sg.Edit != nil, sg.Jump != nil, sg.Rename != nil, sg.SearchAndReplace != nil} {
				if p {
					set++
				}
			}
			if sg.Problem == "" && (set != 1 || sg.ID == "") || sg.Problem != "" && set != 0 {
				t.Fatalf("decoded %+v: want exactly one kind and an id, or a problem and none", sg)
			}
			switch {
			case sg.Edit != nil:
				fuzzEdit(t, m, lines, text, sg.Edit, agent, editor, sg.ID)
			case sg.Jump != nil:
				off, err := m.PositionOffset(translate.PositionFromACP(sg.Jump.Position), agent)
				want, ok := fzOffset(lines, text, sg.Jump.Position.Line, sg.Jump.Position.Character, agent)
				if (err == nil) != ok || ok && off != want {
					t.Fatalf("jump to %+v in %q (%v): %d, %v; the reference gives %d, %v", sg.Jump.Position, text, agent, off, err, want, ok)
				}
				if ok {
					r, err := m.OffsetsRange(off, off, editor)
					if err != nil {
						t.Fatalf("jump target %d: %v", off, err)
					}
					fzEditorSpan(t, lines, text, translate.RangeToLSP(r), editor, off, off, "jump")
				}
			case sg.Rename != nil:
				fuzzRename(t, m, lines, text, sg.Rename, agent, editor)
			case sg.SearchAndReplace != nil:
				fuzzSearch(t, m, lines, text, sg.SearchAndReplace, editor)
			}
		}
	})
}

// fuzzEdit checks an edit suggestion: the spans, the merged replacement, and each surface.
func fuzzEdit(t *testing.T, m *encoding.Mapper, lines []fzLine, text string, e *acp.UnstableNesSuggestionEdit, agent, editor encoding.Kind, id string) {
	t.Helper()
	// The reference: every position resolves, no range is reversed, no two edits conflict.
	ref := make([]fzSpan, 0, len(e.Edits))
	ok := len(e.Edits) > 0
	for _, ed := range e.Edits {
		if !utf8.ValidString(ed.NewText) {
			// encoding/json replaces invalid UTF-8 in the agent's strings with U+FFFD.
			t.Fatalf("decoded newText %q is not UTF-8", ed.NewText)
		}
		s, ok1 := fzOffset(lines, text, ed.Range.Start.Line, ed.Range.Start.Character, agent)
		en, ok2 := fzOffset(lines, text, ed.Range.End.Line, ed.Range.End.Character, agent)
		if !ok1 || !ok2 || s > en {
			ok = false
			break
		}
		ref = append(ref, fzSpan{s, en, ed.NewText})
	}
	for i := range ref {
		for j := range i {
			if fzConflict(ref[i], ref[j]) {
				ok = false
			}
		}
	}

	spans, err := translate.EditsToSpans(m, e.Edits, agent)
	repl, rerr := translate.EditsToReplacement(m, e.Edits, agent)
	if (err == nil) != (rerr == nil) {
		t.Fatalf("EditsToSpans: %v, but EditsToReplacement: %v", err, rerr)
	}
	if !ok {
		if err == nil {
			t.Fatalf("EditsToSpans(%q, %+v, %v) accepted edits the reference rejects: %+v", text, e.Edits, agent, spans)
		}
		return
	}
	if err != nil {
		t.Fatalf("EditsToSpans(%q, %+v, %v): %v; the reference accepts them", text, e.Edits, agent, err)
	}
	want := fzApply(text, ref)

	// The spans are the reference's, sorted and on character boundaries; applied, the agent's text.
	if len(spans) != len(ref) {
		t.Fatalf("%d spans for %d edits", len(spans), len(ref))
	}
	got := make([]fzSpan, len(spans))
	for i, s := range spans {
		got[i] = fzSpan{s.Start, s.End, s.Text}
		if i > 0 && (s.Start < spans[i-1].Start || s.Start < spans[i-1].End) {
			t.Fatalf("spans not sorted: %+v", spans)
		}
	}
	sortRef := slices.Clone(ref)
	sort.SliceStable(sortRef, func(i, j int) bool {
		if sortRef[i].start != sortRef[j].start {
			return sortRef[i].start < sortRef[j].start
		}
		return sortRef[i].end < sortRef[j].end
	})
	if !slices.Equal(got, sortRef) {
		t.Fatalf("EditsToSpans(%q, %+v, %v) = %+v; the reference gives %+v", text, e.Edits, agent, got, sortRef)
	}
	if a := translate.ApplySpans(text, spans); a != want {
		t.Fatalf("ApplySpans gives %q; the agent meant %q", a, want)
	}
	if repl.Start != sortRef[0].start || repl.End < repl.Start || repl.Apply(text) != want {
		t.Fatalf("EditsToReplacement = %+v, which gives %q; the agent meant %q", repl, repl.Apply(text), want)
	}
	for _, s := range sortRef {
		if s.end > repl.End {
			t.Fatalf("EditsToReplacement = %+v does not cover %+v", repl, s)
		}
	}
	_ = translate.EditTitle(m, repl, "a.go")

	// Where the cursor goes after accepting: a position of the edited text.
	if cp := e.CursorPosition; cp != nil {
		after := encoding.NewMapper(want)
		off, err := after.PositionOffset(translate.PositionFromACP(*cp), agent)
		wantOff, ok := fzOffset(fzLines(want), want, cp.Line, cp.Character, agent)
		if (err == nil) != ok || ok && off != wantOff {
			t.Fatalf("cursorPosition %+v in %q (%v): %d, %v; the reference gives %d, %v", *cp, want, agent, off, err, wantOff, ok)
		}
	}

	// Code actions (and the accept command): a WorkspaceEdit, both shapes.
	version := 3
	for _, dc := range []bool{false, true} {
		we, err := translate.ToWorkspaceEdit([]translate.FileEdit{{URI: fzURI, Version: &version, Mapper: m, Spans: spans}}, editor, dc)
		if err != nil {
			t.Fatalf("ToWorkspaceEdit(%+v, %v): %v", spans, editor, err)
		}
		var edits []protocol.TextEdit
		if dc {
			if len(we.DocumentChanges) != 1 || we.DocumentChanges[0].TextDocument.URI != fzURI || *we.DocumentChanges[0].TextDocument.Version != version {
				t.Fatalf("documentChanges %+v", we.DocumentChanges)
			}
			edits = we.DocumentChanges[0].Edits
		} else {
			if len(we.Changes) != 1 {
				t.Fatalf("changes %+v", we.Changes)
			}
			edits = we.Changes[fzURI]
		}
		if len(edits) != len(spans) {
			t.Fatalf("%d text edits for %d spans", len(edits), len(spans))
		}
		for i, te := range edits {
			fzEditorSpan(t, lines, text, te.Range, editor, spans[i].Start, spans[i].End, "workspace edit")
		}
		if a, ok := fzApplyLSP(lines, text, edits, editor); !ok || a != want {
			t.Fatalf("the workspace edit %+v applies (%v) as %q; the agent meant %q", edits, ok, a, want)
		}
		if _, err := json.Marshal(we); err != nil {
			t.Fatalf("encode the workspace edit: %v", err)
		}
	}

	// Copilot's inline edit: the merged replacement.
	ver := json.RawMessage("3")
	ce, err := translate.ToCopilotInlineEdit(m, repl, editor, fzURI, ver, translate.Command{Command: "accept", Arguments: []any{id}})
	if err != nil {
		t.Fatalf("ToCopilotInlineEdit(%+v, %v): %v", repl, editor, err)
	}
	fzEditorSpan(t, lines, text, ce.Range, editor, repl.Start, repl.End, "copilot inline edit")
	if ce.Text != repl.Text || ce.TextDocument.URI != fzURI || string(ce.TextDocument.Version) != "3" {
		t.Fatalf("copilot inline edit %+v for %+v", ce, repl)
	}
	if a, ok := fzApplyLSP(lines, text, []protocol.TextEdit{{Range: ce.Range, NewText: ce.Text}}, editor); !ok || a != want {
		t.Fatalf("the copilot inline edit applies (%v) as %q; the agent meant %q", ok, a, want)
	}

	// Inline completion and completion items depend on the cursor: every place in a short text,
	// a few around the edit in a long one.
	cursors := fzBoundaries(lines, text)
	if len(text) > 64 {
		var few []int
		for _, c := range cursors {
			if c == 0 || c == len(text) || c >= repl.Start-2 && c <= repl.End+2 || c == cursors[len(cursors)/2] {
				few = append(few, c)
			}
		}
		cursors = few
	}
	for _, cursor := range cursors {
		cl := m.LineOf(cursor)
		fits := repl.Start <= cursor && cursor <= repl.End && m.LineOf(repl.Start) == cl && m.LineOf(repl.End) == cl
		refLine := func(off int) int { l, _, _ := fzPosition(lines, text, off, encoding.UTF8); return l }
		if rl := refLine(cursor); rl != cl || refLine(repl.Start) != m.LineOf(repl.Start) || refLine(repl.End) != m.LineOf(repl.End) {
			t.Fatalf("LineOf disagrees with the reference around %d in %q", cursor, text)
		}
		if got := translate.FitsInline(m, repl, cursor); got != fits {
			t.Fatalf("FitsInline(%+v, %d) = %v in %q", repl, cursor, got, text)
		}
		if fits {
			item, err := translate.ReplacementToInlineItem(m, repl, editor, "accept", id)
			if err != nil {
				t.Fatalf("ReplacementToInlineItem(%+v, %v): %v", repl, editor, err)
			}
			if item.Range == nil || item.Range.Start.Line != item.Range.End.Line {
				t.Fatalf("an inline item across lines: %+v", item.Range)
			}
			fzEditorSpan(t, lines, text, *item.Range, editor, repl.Start, repl.End, "inline item")
			if s, ok := item.InsertText.(protocol.String); !ok || string(s) != repl.Text {
				t.Fatalf("inline item inserts %#v; want %q", item.InsertText, repl.Text)
			}
			if a, ok := fzApplyLSP(lines, text, []protocol.TextEdit{{Range: *item.Range, NewText: repl.Text}}, editor); !ok || a != want {
				t.Fatalf("the inline item applies (%v) as %q; the agent meant %q", ok, a, want)
			}
		}

		ci, err := translate.SpansToCompletionItem(m, spans, cursor, editor, translate.Command{Command: "accept"})
		if err != nil {
			crosses := false
			for _, s := range spans {
				if s.Start <= cursor && cursor <= s.End && (m.LineOf(s.Start) != cl || m.LineOf(s.End) != cl) {
					crosses = true
				}
			}
			if !crosses {
				t.Fatalf("SpansToCompletionItem(%+v, %d, %v): %v; no span around the cursor crosses lines", spans, cursor, editor, err)
			}
			continue
		}
		te := ci.TextEdit
		if te == nil || te.Range.Start.Line != te.Range.End.Line {
			t.Fatalf("a completion item whose main edit is not on one line: %+v", te)
		}
		ms, ok1 := fzOffset(lines, text, int(te.Range.Start.Line), int(te.Range.Start.Character), editor)
		me, ok2 := fzOffset(lines, text, int(te.Range.End.Line), int(te.Range.End.Character), editor)
		if !ok1 || !ok2 || ms > cursor || cursor > me || int(te.Range.Start.Line) != refLine(cursor) {
			t.Fatalf("the completion item's main edit %+v does not contain the cursor %d", te.Range, cursor)
		}
		fzEditorSpan(t, lines, text, te.Range, editor, ms, me, "completion item")
		if ci.FilterText != text[ms:cursor] {
			t.Fatalf("filterText %q; want %q", ci.FilterText, text[ms:cursor])
		}
		all := append([]protocol.TextEdit{*te}, ci.AdditionalTextEdits...)
		for _, ad := range ci.AdditionalTextEdits {
			s, _ := fzOffset(lines, text, int(ad.Range.Start.Line), int(ad.Range.Start.Character), editor)
			en, _ := fzOffset(lines, text, int(ad.Range.End.Line), int(ad.Range.End.Character), editor)
			fzEditorSpan(t, lines, text, ad.Range, editor, s, en, "additional edit")
		}
		if a, ok := fzApplyLSP(lines, text, all, editor); !ok || a != want {
			t.Fatalf("the completion item %+v at %d applies (%v) as %q; the agent meant %q", ci, cursor, ok, a, want)
		}
		if _, err := json.Marshal(ci); err != nil {
			t.Fatalf("encode the completion item: %v", err)
		}
	}
}

// fuzzRename checks a rename suggestion: whole-identifier occurrences, in the editor's encoding.
func fuzzRename(t *testing.T, m *encoding.Mapper, lines []fzLine, text string, r *acp.UnstableNesSuggestionRename, agent, editor encoding.Kind) {
	t.Helper()
	off, err := m.PositionOffset(translate.PositionFromACP(r.Position), agent)
	if err != nil {
		return
	}
	old, spans, err := translate.RenameSpans(text, off, r.NewName)
	if err != nil {
		return
	}
	if old == "" || old == r.NewName || r.NewName == "" {
		t.Fatalf("RenameSpans renames %q to %q", old, r.NewName)
	}
	// The reference: every whole-identifier occurrence, scanning byte by byte.
	var ref []fzSpan
	for i := 0; i+len(old) <= len(text); i++ {
		if !strings.HasPrefix(text[i:], old) {
			continue
		}
		before, _ := utf8.DecodeLastRuneInString(text[:i])
		after, _ := utf8.DecodeRuneInString(text[i+len(old):])
		if (i == 0 || !fzIdentRune(before)) && (i+len(old) == len(text) || !fzIdentRune(after)) {
			ref = append(ref, fzSpan{i, i + len(old), r.NewName})
			i += len(old) - 1
		}
	}
	got := make([]fzSpan, len(spans))
	for i, s := range spans {
		got[i] = fzSpan{s.Start, s.End, s.Text}
	}
	if !slices.Equal(got, ref) {
		t.Fatalf("RenameSpans(%q, %d, %q) = %q, %+v; the reference gives %+v", text, off, r.NewName, old, got, ref)
	}
	fuzzSpansToEditor(t, m, lines, text, spans, editor, "rename")
}

// fuzzSearch checks a searchAndReplace suggestion: the matches as spans, in the editor's encoding.
func fuzzSearch(t *testing.T, m *encoding.Mapper, lines []fzLine, text string, sr *acp.UnstableNesSuggestionSearchAndReplace, editor encoding.Kind) {
	t.Helper()
	regex := sr.IsRegex != nil && *sr.IsRegex
	s, err := translate.NewSearcher(sr.Search, sr.Replace, regex)
	if err != nil {
		if sr.Search != "" && !regex {
			t.Fatalf("NewSearcher(%q, literal): %v", sr.Search, err)
		}
		return
	}
	spans := s.Spans(text)
	for i, sp := range spans {
		if sp.Start >= sp.End || i > 0 && sp.Start < spans[i-1].End {
			t.Fatalf("search %q (regex %v) in %q: spans %+v are empty or overlap", sr.Search, regex, text, spans)
		}
	}
	// A literal search without line breaks, or in a text without "\r\n", replaces what
	// strings.ReplaceAll does.
	if !regex && (!strings.Contains(text, "\r\n") || !strings.ContainsAny(sr.Search, "\r\n")) {
		if got, want := translate.ApplySpans(text, spans), strings.ReplaceAll(text, sr.Search, sr.Replace); got != want {
			t.Fatalf("search %q → %q in %q gives %q; strings.ReplaceAll gives %q", sr.Search, sr.Replace, text, got, want)
		}
	}
	fuzzSpansToEditor(t, m, lines, text, spans, editor, "searchAndReplace")
}

// fuzzSpansToEditor checks that spans become text edits naming exactly them in the editor's
// encoding, which apply as the spans do.
func fuzzSpansToEditor(t *testing.T, m *encoding.Mapper, lines []fzLine, text string, spans []translate.Span, editor encoding.Kind, what string) {
	t.Helper()
	edits, err := translate.SpansToTextEdits(m, spans, editor)
	if err != nil {
		t.Fatalf("%s: SpansToTextEdits(%q, %+v, %v): %v", what, text, spans, editor, err)
	}
	for i, te := range edits {
		fzEditorSpan(t, lines, text, te.Range, editor, spans[i].Start, spans[i].End, what)
	}
	if a, ok := fzApplyLSP(lines, text, edits, editor); !ok || a != translate.ApplySpans(text, spans) {
		t.Fatalf("%s: the text edits apply (%v) as %q; the spans give %q", what, ok, a, translate.ApplySpans(text, spans))
	}
}
