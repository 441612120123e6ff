package model

import (
	"context"
	"strings"
	"testing"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent"
)

// TestReversalTellsASlipFromADeliberateEdit: an answer that puts back what the user's last edit
// replaced is shown when that edit was a slip it corrects (a stray "im" typed before "from", a
// lost letter, two letters swapped, a paste into a word), and kept back when the edit was
// deliberate (a line deleted, a name changed, a letter removed to fix a name). Each case is the
// document after the edit, the edit, and the answer that undoes it.
func TestReversalTellsASlipFromADeliberateEdit(t *testing.T) {
	for _, tc := range []struct {
		name     string
		before   string // the line before the edit
		after    string // the same line after it (in the document)
		doc      string // the document after the edit, holding after on a line of its own
		shown    bool
		wantRule string
	}{
		{"stray letters typed before a keyword", "from werkzeug.local import LocalProxy", "imfrom werkzeug.local import LocalProxy",
			"import os\nimfrom werkzeug.local import LocalProxy\n\ncurrent = LocalProxy(lambda: os.environ)\n", true, ""},
		{"a letter lost", "\treturn total", "\tretrn total", "func sum(xs []int) int {\n\ttotal := 0\n\tretrn total\n}\n", true, ""},
		{"two letters swapped", "\tfor _, price := range prices {", "\tfro _, price := range prices {", "func f(prices []int) {\n\tfro _, price := range prices {\n\t\tuse(price)\n\t}\n}\n", true, ""},
		{"a paste into a word", "\treturn total", "\tretuhttps://example.com/xrn total", "func sum(xs []int) int {\n\ttotal := 0\n\tretuhttps://example.com/xrn total\n}\n", true, ""},
		{"a letter typed into a name", "\tresult = compute(items)", "\tresult = compuste(items)", "def run(items):\n\tresult = compuste(items)\n\treturn result\n\ndef compute(items):\n\treturn items\n", true, ""},
		// Deliberate edits: the undo is kept back.
		{"a name changed", "\tcount := 0", "\ttotal := 0", "func f() {\n\ttotal := 0\n\tcount++\n\treturn count\n}\n", false, RuleUndo},
		{"a letter removed to fix a name", "\tcounts := 0", "\tcount := 0", "func f() {\n\tcount := 0\n\tcount++\n}\n", false, RuleUndo},
		{"an argument added", "\tx := f()", "\tx := f(1)", "func g() {\n\tx := f(1)\n\ty := 2\n}\n", false, RuleUndo},
		{"a word deleted", "\tlog.Printf(\"debug %v\", x)", "\tlog.Printf(\"%v\", x)", "func g(x int) {\n\tlog.Printf(\"%v\", x)\n\ty := 2\n}\n", false, RuleUndo},
		{"a known name typed over another", "\tx := alpha", "\tx := beta", "func g(alpha, beta int) {\n\tx := beta\n\tuse(x)\n}\n", false, RuleUndo},
		// Renames begun that keep the old name's characters.
		{"a part added to a name", "function total(item: Item[]): number {", "function total(itemList: Item[]): number {",
			"function total(itemList: Item[]): number {\n  let sum = 0;\n  for (const x of item) sum += x.price;\n  return sum;\n}\n", false, RuleUndo},
		{"a name's case changed", "def greet(userName):", "def greet(username):",
			"def greet(username):\n    print('hello', userName)\n    return userName\n", false, RuleUndo},
		{"a name spelled as British English does", "\tcolor := pick()", "\tcolour := pick()",
			"func paint() {\n\tcolour := pick()\n\tfill(color)\n\tstroke(color)\n}\n", false, RuleUndo},
		{"a part added with an underscore", "\tcount = 0", "\tcount_all = 0", "def f(xs):\n\tcount_all = 0\n\tcount += len(xs)\n\treturn count\n", false, RuleUndo},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lineStart := strings.Index(tc.doc, tc.after)
			if lineStart < 0 {
				t.Fatalf("the document does not hold %q", tc.after)
			}
			p := encoding.CommonPrefix(tc.before, tc.after)
			s := encoding.CommonSuffix(tc.before[p:], tc.after[p:])
			edit := nesagent.Edit{Start: lineStart + p, Old: tc.before[p : len(tc.before)-s], New: tc.after[p : len(tc.after)-s],
				OldLines: tc.before, NewLines: tc.after, LineStart: lineStart}
			cursor := edit.Start + len(edit.New)
			undo := func(region string) string { return strings.Replace(region, tc.after, tc.before, 1) }
			srv := newFake(t, rewriter(t, undo, marked))
			e := newEngine(t, Config{URL: srv.URL})
			sugs, quiet, err := e.SuggestWithReason(context.Background(), nesagent.Request{URI: "file:///w/a.go", Text: tc.doc, Cursor: cursor, Recent: []nesagent.Edit{edit}})
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.shown && len(sugs) != 1:
				t.Errorf("the correction of a slip is kept back: %+v", quiet)
			case tc.shown:
				if got := apply(t, tc.doc, sugs[0].Edits); !strings.Contains(got, tc.before) {
					t.Errorf("after the suggestion:\n%s", got)
				}
			case len(sugs) != 0 || quiet == nil || quiet.Rule != tc.wantRule:
				t.Errorf("the undo of a deliberate edit: suggestions %+v, kept back %+v; want rule %s", sugs, quiet, tc.wantRule)
			}
		})
	}
}

// TestRewriteOfARegionTheUserIsChanging: the user began turning a list accumulator into a dict
// (totals = [] became totals = {}), and the model finishes the change, rewriting most lines of
// the function. In a region the user has just started changing, lines the answer edited count
// as kept, so it is shown; the same answer with no edit of the user's in the region, and
// gibberish in the region the user is changing, are kept back as rewrites.
func TestRewriteOfARegionTheUserIsChanging(t *testing.T) {
	doc := "def collect(orders):\n    totals = {}\n    for order in orders:\n        totals.append(order.amount)\n    seen = []\n    for order in orders:\n        seen.append(order.id)\n    first = totals[0]\n    last = totals[-1]\n    return totals, seen, first, last\n"
	finish := strings.NewReplacer(
		"        totals.append(order.amount)", "        totals[order.id] = order.amount",
		"    seen = []", "    seen = {}",
		"        seen.append(order.id)", "        seen[order.id] = True",
		"    first = totals[0]", "    first = next(iter(totals.values()))",
		"    last = totals[-1]", "    last = list(totals.values())[-1]",
		"    return totals, seen, first, last", "    return dict(totals), seen, first, last",
	).Replace
	lineStart := strings.Index(doc, "    totals = {}")
	edit := nesagent.Edit{Start: lineStart + len("    totals = "), Old: "[]", New: "{}", OldLines: "    totals = []", NewLines: "    totals = {}", LineStart: lineStart}
	cursor := lineStart + len("    totals = {}")
	for _, tc := range []struct {
		name   string
		answer func(string) string
		recent []nesagent.Edit
		shown  bool
	}{
		{"the change finished", finish, []nesagent.Edit{edit}, true},
		{"the same rewrite, no edit of the user's", finish, nil, false},
		{"gibberish", func(string) string { return "magazines Cyr Cyr\nmagazines\n" }, []nesagent.Edit{edit}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newFake(t, rewriter(t, tc.answer, marked))
			e := newEngine(t, Config{URL: srv.URL})
			sugs, quiet, err := e.SuggestWithReason(context.Background(), nesagent.Request{URI: "file:///w/c.py", Text: doc, Cursor: cursor, Recent: tc.recent})
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.shown && len(sugs) != 1:
				t.Errorf("kept back: %+v", quiet)
			case tc.shown:
				if got := apply(t, doc, sugs[0].Edits); !strings.Contains(got, "totals[order.id] = order.amount") {
					t.Errorf("after the suggestion:\n%s", got)
				}
			case len(sugs) != 0 || quiet == nil || quiet.Rule != RuleRewrite:
				t.Errorf("shown %+v, kept back %+v; want a rewrite kept back", sugs, quiet)
			}
		})
	}
}
