package model

import (
	"context"
	"strings"
	"testing"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent"
)

// answerDoc is the document every format is asked about: the user is typing the second call's
// arguments, and the next edit finishes it: "y := add(3" becomes "y := add(3, 4)".
const answerDoc = "package p\n\nfunc add(a, b int) int {\n\treturn a + b\n}\n\nfunc main() {\n\tx := add(1, 2)\n\ty := add(3\n\tprintln(x, y)\n}\n"

// answerShape writes a format's answer for the region's new text next: as the model writes it when
// the server honours the stop strings (full), or ignores them and goes on (noStop); with
// next's cursor marked at cursorAt (−1: none); nothing is "no edit" in the format's own words.
type answerShape struct {
	full, noStop func(c *call, next string) string
	// cursor writes next with the format's cursor marker at at; nil: the format has none.
	cursor func(next string, at int) string
	// noEdit is the format's answer for "nothing to change".
	noEdit func(c *call, region string) string
}

func shapes() map[string]answerShape {
	same := func(_ *call, s string) string { return s }
	return map[string]answerShape{
		"chat": {
			full: func(_ *call, s string) string { return markStart + "\n" + s + markEnd },
			noStop: func(_ *call, s string) string {
				return "Here it is:\n" + markStart + "\n" + s + markEnd + "\nThe call is finished."
			},
			noEdit: func(_ *call, r string) string { return markStart + "\n" + r + markEnd },
		},
		"zeta1": {
			// The model copies the region's layout: the region, a line break, the end marker,
			// which the stop strings take.
			full: func(_ *call, s string) string { return "```main.go\n" + zeta1EditableStart + "\n" + s + "\n" },
			noStop: func(_ *call, s string) string {
				return zeta1EditableStart + "\n" + s + "\n" + zeta1EditableEnd + "\n```\n\n### More"
			},
			cursor: func(s string, at int) string { return zeta1EditableStart + "\n" + s[:at] + zeta1Cursor + s[at:] + "\n" },
			noEdit: func(_ *call, r string) string { return zeta1EditableStart + "\n" + r + "\n" },
		},
		"zeta2": {
			full:   func(_ *call, s string) string { return s + seedEndMarker },
			noStop: func(_ *call, s string) string { return s + seedEndMarker + "<filename>other.go\nmore" },
			cursor: func(s string, at int) string { return s[:at] + zetaCursor + s[at:] + seedEndMarker },
			noEdit: func(_ *call, _ string) string { return zeta2NoEdits + "\n" + seedEndMarker },
		},
		"zeta2.1": {
			full: func(_ *call, s string) string { return markerTag(1) + s + markerTag(2) },
			noStop: func(_ *call, s string) string {
				return markerTag(1) + s + markerTag(2) + zeta21EndMarker + "<filename>x\nmore"
			},
			cursor: func(s string, at int) string { return markerTag(1) + s[:at] + zetaCursor + s[at:] + markerTag(2) },
			noEdit: func(_ *call, _ string) string { return markerTag(1) + markerTag(1) },
		},
		"sweep": {
			full:   same,
			noStop: func(_ *call, s string) string { return s + sweepFileSep + "other.go\nmore" },
			noEdit: same,
		},
		"sweep-v2": {
			full: func(c *call, s string) string { return strings.TrimPrefix(s, sweepPrefill(c)) },
			noStop: func(c *call, s string) string {
				return strings.TrimPrefix(s, sweepPrefill(c)) + sweepV2EndOfText + "more"
			},
			noEdit: func(c *call, r string) string { return strings.TrimPrefix(r, sweepPrefill(c)) },
		},
		"instinct": {
			// The model copies the excerpt's layout: the region's lines, the last one empty when
			// the region ends a line, then a line break before the end marker.
			full: func(_ *call, s string) string { return s + "\n" },
			noStop: func(_ *call, s string) string {
				return "```go\n" + instinctEditableStart + "\n" + s + "\n" + instinctEditableEnd + "\n```"
			},
			noEdit: func(_ *call, r string) string { return r + "\n" },
		},
	}
}

// sweepPrefill is what the v2 prompt puts after the updated/ header: the answer goes on from it.
func sweepPrefill(c *call) string {
	i := strings.LastIndex(c.Raw, sweepFileSep+"updated/")
	return c.Raw[i+strings.Index(c.Raw[i:], "\n")+1:]
}

// TestAnswersOfEachFormat reads each format's answers by its grammar: a whole answer (the stop
// string taken by the server), one whose server ignored the stop strings, one with the cursor
// marked (which becomes the suggestion's cursor), "no edit" in the format's words, an answer cut
// short by max_tokens, and gibberish. Only the first three show a suggestion, and it is the same
// edit.
func TestAnswersOfEachFormat(t *testing.T) {
	cursor := strings.Index(answerDoc, "add(3") + len("add(3")
	req := nesagent.Request{URI: "file:///w/main.go", Root: "/w", LanguageID: "go", Text: answerDoc, Cursor: cursor}
	want := strings.Replace(answerDoc, "y := add(3\n", "y := add(3, 4)\n", 1)
	for name, sh := range shapes() {
		t.Run(name, func(t *testing.T) {
			model, format := "m", name
			if name == "sweep-v2" {
				model, format = "sweep-next-edit-v2-7b", "sweep"
			}
			probe, err := WithCompleter(Config{Model: model, Format: format}, &fixedCompleter{})
			if err != nil {
				t.Fatal(err)
			}
			e := probe.(*engine)
			in := prepare(req)
			c, err := e.format.Build(in, limits{cfg: &e.cfg})
			if err != nil {
				t.Fatal(err)
			}
			region := in.text[c.start:c.end]
			next := strings.Replace(region, "y := add(3\n", "y := add(3, 4)\n", 1)
			if next == region {
				t.Fatalf("the region %q does not hold the line being typed", region)
			}
			ask := func(a Answer) []nesagent.Suggestion {
				t.Helper()
				e.c = &fixedCompleter{answer: a}
				sugs, err := e.Suggest(context.Background(), req)
				if err != nil {
					t.Fatal(err)
				}
				return sugs
			}
			shown := func(what string, a Answer, wantCursor int) {
				t.Helper()
				sugs := ask(a)
				if len(sugs) != 1 {
					t.Fatalf("%s %q: %d suggestions, want 1", what, a.Text, len(sugs))
				}
				if got := applySuggestion(answerDoc, sugs[0]); got != want {
					t.Errorf("%s: the document after accepting:\n%s\nwant:\n%s", what, got, want)
				}
				switch {
				case wantCursor < 0 && sugs[0].Cursor != nil:
					t.Errorf("%s: a cursor at %d, from an answer without a cursor marker", what, *sugs[0].Cursor)
				case wantCursor >= 0 && (sugs[0].Cursor == nil || *sugs[0].Cursor != wantCursor):
					t.Errorf("%s: cursor %v, want %d", what, sugs[0].Cursor, wantCursor)
				}
			}
			quiet := func(what string, a Answer) {
				t.Helper()
				if sugs := ask(a); len(sugs) != 0 {
					t.Errorf("%s %q: shown %+v, want nothing", what, a.Text, sugs)
				}
			}
			shown("a whole answer", Answer{Text: sh.full(c, next)}, -1)
			shown("an answer past its stop string", Answer{Text: sh.noStop(c, next)}, -1)
			if sh.cursor != nil {
				at := strings.Index(next, "add(3, 4)") + len("add(3, 4)")
				shown("an answer with the cursor marked", Answer{Text: sh.cursor(next, at)}, strings.Index(want, "add(3, 4)")+len("add(3, 4)"))
			}
			quiet("no edit", Answer{Text: sh.noEdit(c, region)})
			whole := sh.full(c, next)
			quiet("an answer cut short", Answer{Text: whole[:len(whole)*2/3], Cut: true})
			quiet("gibberish", Answer{Text: "magazines magazines Cyr Cyr magazines"})
			quiet("an empty answer", Answer{})
		})
	}
}

// applySuggestion is text with the suggestion's edits made.
func applySuggestion(text string, s nesagent.Suggestion) string {
	for i := len(s.Edits) - 1; i >= 0; i-- {
		ed := s.Edits[i]
		text = text[:ed.Start] + ed.NewText + text[ed.End:]
	}
	return text
}
