package builtin

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent"
)

// The tests write a document with the user's last edit marked as «old→new» and, optionally, the
// cursor as ‸ (by default it is at the end of the new text). Earlier edits, when a test needs them,
// are given as nesagent.Edit values.

// userEdit returns the request the kit would make for doc: the text after the edit, the cursor,
// and the edit with its lines.
func userEdit(t testing.TB, doc string) nesagent.Request {
	t.Helper()
	i := strings.Index(doc, "«")
	arrow := strings.Index(doc, "→")
	j := strings.Index(doc, "»")
	if i < 0 || arrow < i || j < arrow {
		t.Fatalf("no «old→new» in %q", doc)
	}
	old, nw := doc[i+len("«"):arrow], doc[arrow+len("→"):j]
	after := doc[:i] + nw + doc[j+len("»"):]
	start := i
	cursor := start + len(nw)
	if k := strings.Index(after, "‸"); k >= 0 {
		after = after[:k] + after[k+len("‸"):]
		if k < start {
			start -= len("‸")
		}
		cursor = k
	}
	e := nesagent.Edit{Start: start, Old: old, New: nw}
	e.OldLines, e.NewLines, e.LineStart = kitLines(after, e)
	return nesagent.Request{URI: "file:///w/a.go", Text: after, Cursor: cursor, Recent: []nesagent.Edit{e}}
}

// kitLines computes an edit's lines as the kit does: the whole lines around it, \r and \n both
// ending a line.
func kitLines(text string, e nesagent.Edit) (oldLines, newLines string, lineStart int) {
	end := e.Start + len(e.New)
	ls := strings.LastIndexAny(text[:e.Start], "\r\n") + 1
	le := end
	for le < len(text) && text[le] != '\n' && text[le] != '\r' {
		le++
	}
	return text[ls:e.Start] + e.Old + text[end:le], text[ls:le], ls
}

// apply applies a suggestion's edits to text.
func apply(t testing.TB, text string, s nesagent.Suggestion) string {
	t.Helper()
	edits := slices.Clone(s.Edits)
	slices.SortFunc(edits, func(a, b nesagent.TextEdit) int { return a.Start - b.Start })
	var b strings.Builder
	at := 0
	for _, e := range edits {
		if e.Start < at || e.End < e.Start || e.End > len(text) {
			t.Fatalf("bad edits %+v for a text of %d bytes", s.Edits, len(text))
		}
		b.WriteString(text[at:e.Start])
		b.WriteString(e.NewText)
		at = e.End
	}
	b.WriteString(text[at:])
	return b.String()
}

// changedLines describes what a suggestion does: the lines it changes, as "line: text" (1-based,
// \r kept), joined by " | ".
func changedLines(t testing.TB, text string, s nesagent.Suggestion) string {
	t.Helper()
	after := apply(t, text, s)
	a, b := strings.Split(text, "\n"), strings.Split(after, "\n")
	if len(a) != len(b) {
		return fmt.Sprintf("line count %d → %d: %q", len(a), len(b), after)
	}
	var out []string
	for i := range a {
		if a[i] != b[i] {
			out = append(out, fmt.Sprintf("%d: %s", i+1, b[i]))
		}
	}
	return strings.Join(out, " | ")
}

// checkInvariants checks what holds for every suggestion: edits that change something, not at the
// place of the user's edit, and a cursor inside the text after them.
func checkInvariants(t testing.TB, req nesagent.Request, sugs []nesagent.Suggestion) {
	t.Helper()
	var last nesagent.Edit
	if len(req.Recent) > 0 {
		last = req.Recent[len(req.Recent)-1]
	}
	for _, s := range sugs {
		after := apply(t, req.Text, s)
		if after == req.Text {
			t.Errorf("suggestion %+v changes nothing", s.Edits)
		}
		for _, e := range s.Edits {
			if req.Text[e.Start:e.End] == e.NewText {
				t.Errorf("edit %+v changes nothing", e)
			}
			if len(req.Recent) > 0 && e.Start < last.Start+len(last.New) && e.End > last.Start {
				t.Errorf("edit %+v overlaps the user's edit %+v", e, last)
			}
		}
		if s.Cursor == nil || *s.Cursor < 0 || *s.Cursor > len(after) {
			t.Errorf("cursor %v outside the text after %+v", s.Cursor, s.Edits)
		}
	}
}

type testCase struct {
	name string
	doc  string
	opts []Option
	want []string // changedLines of each suggestion, in order
}

func run(t *testing.T, cases []testCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := userEdit(t, tc.doc)
			sugs, err := New(tc.opts...).Suggest(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			checkInvariants(t, req, sugs)
			var got []string
			for _, s := range sugs {
				got = append(got, changedLines(t, req.Text, s))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("suggestions:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
			}
		})
	}
}

func TestRename(t *testing.T) {
	manyLines := strings.Repeat("use(n)\n", 30)
	run(t, []testCase{{
		name: "nearest first, whole identifiers only",
		doc: "func f() {\n" +
			"\tcount := 0\n" +
			"\tfor _, x := range xs {\n" +
			"\t\t«count→total» += x\n" +
			"\t}\n" +
			"\tlog(count, recount, count2, s.count, counter)\n" +
			"\treturn count\n" +
			"}\n",
		want: []string{
			"6: \tlog(total, recount, count2, s.count, counter)",
			"2: \ttotal := 0",
			"6: \tlog(count, recount, count2, s.total, counter)",
			"7: \treturn total",
		},
	}, {
		name: "cursor elsewhere: nearest to the cursor",
		doc:  "a := old\n«old→new»()\nb := old\nc := 1\nd := 2 // ‸\ne := old\n",
		want: []string{"6: e := new", "3: b := new", "1: a := new"},
	}, {
		name: "other occurrences on the edited line, not the edited place",
		doc:  "«a→b» = a + f(a)\nc := a\n",
		want: []string{"1: b = b + f(a)", "1: b = a + f(b)", "2: c := b"},
	}, {
		name: "japanese",
		doc:  "var 名前 = 1\nfmt.Println(«名前→氏名»)\nx := 名前空間 + 名前 + 前\n",
		want: []string{"3: x := 名前空間 + 氏名 + 前", "1: var 氏名 = 1"}, // 22 bytes after the cursor, 23 before
	}, {
		name: "combining mark: café with U+0301 is one identifier",
		doc:  "x := cafe\u0301 + cafe\n«cafe\u0301→coffee»()\ny := cafe\u0301s + cafe\u0301\n",
		want: []string{"1: x := coffee + cafe", "3: y := cafe\u0301s + coffee"},
	}, {
		name: "combining mark: cafe is not a whole identifier in café",
		doc:  "x := cafe\u0301 + cafe\n«cafe→bar»()\ny := cafe\u0301s + cafe\n",
		want: []string{"1: x := cafe\u0301 + bar", "3: y := cafe\u0301s + bar"},
	}, {
		name: "only the combining mark removed",
		doc:  "x := cafe\u0301\nf(cafe«\u0301→»)\ny := cafe\u0301\n",
		want: []string{"3: y := cafe", "1: x := cafe"},
	}, {
		name: "precomposed é → è (the change splits a UTF-8 sequence)",
		doc:  "x := caf\u00e9\nf(caf«\u00e9→\u00e8»)\n",
		want: []string{"1: x := caf\u00e8"},
	}, {
		name: "astral plane letter 𐐀",
		doc:  "𐐀 := 1\nf(𐐀«→𐐀»)\ng(𐐀, a𐐀, 𐐀1)\n",
		want: []string{"3: g(𐐀𐐀, a𐐀, 𐐀1)", "1: 𐐀𐐀 := 1"},
	}, {
		name: "crlf file",
		doc:  "a := old\r\nb := «old→new» + 1\r\nc := old\r\n",
		want: []string{"1: a := new\r", "3: c := new\r"},
	}, {
		name: "in progress: old → old_na",
		doc:  "old := 1\nuse(old«→_na»)\nreturn old\n",
		want: []string{"3: return old_na", "1: old_na := 1"},
	}, {
		name: "in progress: ol → old_na",
		doc:  "ol := 1\nuse(ol«→d_na»)\nreturn ol\n",
		want: []string{"3: return old_na", "1: old_na := 1"},
	}, {
		name: "in progress: old is being replaced, n typed",
		doc:  "old := 1\nuse(«old→n»)\n",
		want: []string{"1: n := 1"},
	}, {
		name: "bounded",
		doc:  "n := 0\n«n→m»++\n" + manyLines,
		want: func() []string {
			var w []string
			for i := range 19 {
				w = append(w, fmt.Sprintf("%d: use(m)", 3+i))
			}
			return append(w[:1:1], append([]string{"1: m := 0"}, w[1:]...)...)
		}(),
	}, {
		name: "bounded by the option",
		doc:  "n := 0\n«n→m»++\n" + manyLines,
		opts: []Option{MaxSuggestions(2)},
		want: []string{"3: use(m)", "1: m := 0"},
	}})
}

func TestRepeatedEdit(t *testing.T) {
	run(t, []testCase{{
		name: "argument added to a call",
		doc: "func g() {\n" +
			"\ta := foo(x)\n" +
			"\tb := foo(y«→, ctx»)\n" +
			"\tc := foo(z.w[1], \"s)\")\n" +
			"\td := bar(x)\n" +
			"\te := foo()\n" +
			"\tf := foo(q, ctx)\n" +
			"\th := catalogfoo(q)\n" +
			"\treturn foo(foo(n)) + foo(m)\n" +
			"}\n",
		want: []string{
			"4: \tc := foo(z.w[1], \"s)\", ctx)",
			"2: \ta := foo(x, ctx)",
			"9: \treturn foo(foo(n), ctx) + foo(m, ctx)",
		},
	}, {
		name: "argument inserted first",
		doc:  "x := foo(«→ctx, »a)\ny := foo(b)\nz := foo(ctx, c)\nw := foo()\n",
		want: []string{"2: y := foo(ctx, b)"},
	}, {
		name: "argument removed",
		doc:  "f(a, b)\nf(a«, b→»)\nf(c, b)\nf(a, c)\n",
		want: []string{"3: f(c)", "1: f(a)"},
	}, {
		name: "prefix changed: log.Print → log.Printf",
		doc: "log.Print(\"a\", x)\n" +
			"log.Print«→f»(\"b %d\", y)\n" +
			"fmt.Print(z)\n" +
			"log.Println(z)\n" +
			"catalog.Print(z)\n" +
			"if ok { log.Print(u); log.Print(v) }\n",
		want: []string{"1: log.Printf(\"a\", x)", "6: if ok { log.Printf(u); log.Printf(v) }"},
	}, {
		name: "wrapped: return err → return wrap(err)",
		doc: "if a {\n\treturn err\n}\n" +
			"if b {\n\treturn «err→wrap(err)»\n}\n" +
			"if c {\n\treturn nil\n}\n" +
			"if d {\n\treturn wrap(err)\n}\n" +
			"if e {\n\treturn err // why\n}\n",
		want: []string{"2: \treturn wrap(err)"},
	}, {
		name: "suffix appended after a call",
		doc: "let a = read(x);\n" +
			"let b = read(y)«→?»;\n" +
			"let c = read(z)?;\n" +
			"let d = write(z);\n" +
			"let e = read(f(1), 2);\n",
		want: []string{"1: let a = read(x)?;", "5: let e = read(f(1), 2)?;"},
	}, {
		name: "analogous lines: a.Foo = x.Foo",
		doc: "\ta.Foo = x.Foo\n" +
			"\ta.Bar = «x.Bar→strings.TrimSpace(x.Bar)»\n" +
			"\ta.Baz = x.Baz\n" +
			"\ta.Qux = 5\n" +
			"\ta.N = y.M\n" +
			"\ta.x = x.x\n",
		want: []string{"3: \ta.Baz = strings.TrimSpace(x.Baz)", "1: \ta.Foo = strings.TrimSpace(x.Foo)"},
	}, {
		name: "analogous lines: struct fields",
		doc:  "\treturn T{\n\t\tFoo: x.Foo,\n\t\tBar: «x.Bar→conv(x.Bar)»,\n\t\tBaz:  x.Baz,\n\t}\n",
		want: []string{"2: \t\tFoo: conv(x.Foo),"},
	}, {
		name: "japanese and crlf",
		doc:  "表示(名前)\r\n表示(«→値, »名前)\r\n表示(住所)\r\n表示2(住所)\r\n",
		want: []string{"3: 表示(値, 住所)\r", "1: 表示(値, 名前)\r"},
	}, {
		name: "é with a combining mark in the context",
		doc:  "cafe\u0301.Print(1)\ncafe\u0301.Print«→f»(2)\ncafe.Print(3)\n",
		want: []string{"1: cafe\u0301.Printf(1)"},
	}, {
		name: "lone cr line ends",
		doc:  "foo(a)\rfoo(b«→, c»)\rfoo(d)\r",
		// A lone \r ends a line too; changedLines only splits at \n.
		want: []string{"1: foo(a)\rfoo(b, c)\rfoo(d, c)\r", "1: foo(a, c)\rfoo(b, c)\rfoo(d)\r"},
	}, {
		name: "only within the window",
		doc:  "foo(a)\n" + strings.Repeat("x\n", 30) + "foo(b«→, ctx»)\n" + strings.Repeat("x\n", 29) + "foo(c)\nfoo(d)\n",
		want: []string{"62: foo(c, ctx)"},
	}, {
		name: "nearest to the cursor first",
		doc:  "foo(a)\nfoo(b)\nfoo(c«→, ctx»)\nfoo(d)\nfoo(e)\nfoo(f)\n‸",
		want: []string{"6: foo(f, ctx)", "5: foo(e, ctx)", "4: foo(d, ctx)", "2: foo(b, ctx)", "1: foo(a, ctx)"},
	}, {
		name: "a qualified rename is a repeated edit",
		doc:  "s.count++\nt.count++\ns.«count→total»++\nreturn s.count\n",
		want: []string{"4: return s.total", "1: s.total++"},
	}})
}

func TestNoSuggestion(t *testing.T) {
	run(t, []testCase{
		{name: "rename with no other occurrence", doc: "a := 1\n«b→c» := 2\n"},
		{name: "number changed", doc: "x := «10→100»\ny := 10\n"},
		{name: "in progress: separator typed", doc: "foo(a)\nfoo(b«→, »)\n"},
		{name: "in progress: comma typed", doc: "foo(a)\nfoo(b«→,»)\n"},
		{name: "in progress: dot typed", doc: "old := 1\nuse(old«→.»)\nuse(old)\n"},
		{name: "in progress: unbalanced", doc: "x := a\ny := «→f(»a\n"},
		{name: "typing on an empty line", doc: "x\n«→y»\n\nz\n"},
		{name: "blanks only", doc: "\tfoo(a)\n«→\t»foo(b)\n"},
		{name: "no identifier in the context", doc: "}\n}«→;»\n}\n"},
		{name: "line inserted", doc: "a := f(x)\n«→b := g(x)\n»c := f(x)\n"},
		{name: "not analogous: substitution not evidenced", doc: "total += price\ntotal += «tax→float64(tax)»\n"},
		{name: "not analogous: a substituted identifier is also kept", doc: "a.Bar = x.Bar + Bar\na.Foo = «x.Foo→f(x.Foo)» + Bar\n"},
		{name: "same context elsewhere only", doc: "baz(a)\nfoo(b«→, ctx»)\nbar(c)\n"},
	})
}

func TestNoSuggestionWithoutAUsableEdit(t *testing.T) {
	eng := New()
	ctx := context.Background()
	req := userEdit(t, "a := old\n«old→new»()\nb := old\n")
	for _, tc := range []struct {
		name string
		req  func(nesagent.Request) nesagent.Request
	}{
		{"no edits", func(r nesagent.Request) nesagent.Request { r.Recent = nil; return r }},
		{"stale lines", func(r nesagent.Request) nesagent.Request {
			r.Recent = []nesagent.Edit{r.Recent[0]}
			r.Recent[0].LineStart++
			return r
		}},
		{"lines beyond the text", func(r nesagent.Request) nesagent.Request {
			r.Recent = []nesagent.Edit{r.Recent[0]}
			r.Recent[0].LineStart = len(r.Text)
			return r
		}},
		{"nothing changed", func(r nesagent.Request) nesagent.Request {
			r.Recent = []nesagent.Edit{r.Recent[0]}
			r.Recent[0].OldLines = r.Recent[0].NewLines
			return r
		}},
		{"an older edit is not used", func(r nesagent.Request) nesagent.Request {
			r.Recent = []nesagent.Edit{r.Recent[0], {Start: 0, Old: "", New: "a", OldLines: " := old", NewLines: "a := old", LineStart: 0}}
			return r
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sugs, err := eng.Suggest(ctx, tc.req(req))
			if err != nil || len(sugs) != 0 {
				t.Errorf("got %+v, %v; want nothing", sugs, err)
			}
		})
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if sugs, err := eng.Suggest(cancelled, req); err == nil || sugs != nil {
		t.Errorf("cancelled request: %+v, %v", sugs, err)
	}
}

// TestOlderEditsDoNotMatter checks that the last edit decides, whatever came before.
func TestOlderEditsDoNotMatter(t *testing.T) {
	req := userEdit(t, "a := old\n«old→new»()\nb := old\n")
	req.Recent = append([]nesagent.Edit{{Start: 0, Old: "x", New: "y", OldLines: "x", NewLines: "y", LineStart: 100}}, req.Recent...)
	sugs, err := New().Suggest(context.Background(), req)
	if err != nil || len(sugs) != 2 {
		t.Fatalf("got %+v, %v", sugs, err)
	}
}

func TestCursorAfterTheSuggestion(t *testing.T) {
	req := userEdit(t, "if ok { log.Print(u); log.Print(v) }\nlog.Print«→f»(w)\n")
	sugs, _ := New().Suggest(context.Background(), req)
	if len(sugs) != 1 || len(sugs[0].Edits) != 2 {
		t.Fatalf("got %+v", sugs)
	}
	want := len("if ok { log.Printf(u); log.Printf")
	if *sugs[0].Cursor != want {
		t.Errorf("cursor %d, want %d (after the last edit)", *sugs[0].Cursor, want)
	}
}

// FuzzSuggest checks the invariants on arbitrary documents and edits.
func FuzzSuggest(f *testing.F) {
	f.Add("a := old\nb := old\nc := old\n", 5, 3, "new", 0)
	f.Add("foo(a)\nfoo(b)\nfoo(c)\n", 12, 0, ", ctx", 3)
	f.Add("log.Print(x)\r\nlog.Print(y)\r\n", 23, 0, "f", 7)
	f.Add("a.Foo = x.Foo\na.Bar = x.Bar\n", 22, 5, "f(x.Bar)", 1)
	f.Add("x := cafe\u0301\ncafe\u0301()\n", 14, 2, "", 2)
	f.Add("名前(値)\n名前(値)\n", 17, 0, ", 真", 0)
	f.Fuzz(func(t *testing.T, before string, start, oldLen int, nw string, cursor int) {
		if start < 0 || oldLen < 0 || start+oldLen > len(before) {
			return
		}
		text := before[:start] + nw + before[start+oldLen:]
		e := nesagent.Edit{Start: start, Old: before[start : start+oldLen], New: nw}
		e.OldLines, e.NewLines, e.LineStart = kitLines(text, e)
		req := nesagent.Request{Text: text, Cursor: min(max(cursor, 0), len(text)), Recent: []nesagent.Edit{e}}
		sugs, err := New().Suggest(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if len(sugs) > DefaultMaxSuggestions {
			t.Errorf("%d suggestions", len(sugs))
		}
		checkInvariants(t, req, sugs)
	})
}

// TestRenameFindsWhatAScanFinds compares the rename search (both directions at once, backwards
// in windows) with a plain scan of the whole text, on a text of several windows with the cursor
// at many places.
func TestRenameFindsWhatAScanFinds(t *testing.T) {
	var b strings.Builder
	for i := range 3000 {
		switch i % 7 {
		case 0:
			b.WriteString("oldx := old\n")
		case 3:
			fmt.Fprintf(&b, "f(old, %d) // old_ 名old old\n", i)
		default:
			b.WriteString("g(bold, olden)\n")
		}
	}
	doc := b.String()
	at := strings.Index(doc, "f(old, 1004)") + 2
	if at < 2 {
		t.Fatal("no edit place")
	}
	base := userEdit(t, doc[:at]+"«old→new»"+doc[at+3:])
	var all []int // whole-identifier occurrences of old
	for i := 0; i+3 <= len(base.Text); i++ {
		if base.Text[i:i+3] == "old" && !wordBefore(base.Text, i) && !wordAfter(base.Text, i+3) {
			all = append(all, i)
		}
	}
	eng := New(MaxSuggestions(len(all) + 1))
	for cursor := 0; cursor <= len(base.Text); cursor += 997 {
		req := base
		req.Cursor = cursor
		want := slices.Clone(all)
		dist := func(i int) int {
			if i >= cursor-2 {
				return max(i-cursor, 0)
			}
			return cursor - (i + 3)
		}
		slices.SortStableFunc(want, func(a, b int) int {
			if da, db := dist(a), dist(b); da != db {
				return da - db
			}
			return b - a // forwards first on a tie
		})
		sugs, _ := eng.Suggest(context.Background(), req)
		var got []int
		for _, s := range sugs {
			got = append(got, s.Edits[0].Start)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("cursor %d: %d occurrences %v…, want %d %v…", cursor, len(got), got[:min(len(got), 8)], len(want), want[:min(len(want), 8)])
		}
	}
}
