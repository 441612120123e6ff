package model

import (
	"errors"
	"strings"
	"testing"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent"
)

// The tests in this file are the references' own tests, ported: each names the test it ports and
// the function it checks. The expected strings are copied from those tests (Zed's
// crates/zeta_prompt tests, Zed's sweep_prompt.rs tests, Continue's core/nextEdit/templating
// tests) or, where the reference has none, derived by hand from its code and marked so.

// zetaTestEvent is Zed's make_event: an event of path whose diff is given as it is.
func zetaTestEvent(path, diff string) event { return event{path: path, diff: diff} }

// zetaTestFile is Zed's make_related_file: the whole content as one excerpt, order 0.
func zetaTestFile(path, content string, order int) relatedFile {
	n := strings.Count(content, "\n")
	return relatedFile{path: path, maxRow: n, startRow: 0, endRow: n, text: content, order: order}
}

// seedTest formats a Zeta 2 prompt as Zed's tests' make_input does: the whole excerpt is the
// context, the editable range and cursor given.
func seedTest(excerpt string, es, ee, c int, events []event, files []relatedFile, budget int) (string, error) {
	return seedPrompt(events, files, budget, excerpt[ee:], zeta2CursorSection("test.rs", excerpt, es, ee, c))
}

// Zed: tests/fim_formats.rs test_seed_coder_basic_format (seed_coder::assemble_fim_prompt,
// build_cursor_prefix_section).
func TestZeta2SeedCoderBasicFormat(t *testing.T) {
	got, err := seedTest("prefix\neditable\nsuffix", 7, 15, 10,
		[]event{zetaTestEvent("a.rs", "-old\n+new\n")}, []relatedFile{zetaTestFile("related.rs", "fn helper() {}\n", 0)}, 10000)
	want := "<[fim-suffix]>\nsuffix\n<[fim-prefix]><filename>related.rs\nfn helper() {}\n\n<filename>edit_history\n--- a/a.rs\n+++ b/a.rs\n-old\n+new\n\n<filename>test.rs\nprefix\n<<<<<<< CURRENT\nedi<|user_cursor|>table\n=======\n<[fim-middle]>"
	if err != nil || got != want {
		t.Errorf("got %q, %v\nwant %q", got, err, want)
	}
}

// Zed: test_seed_coder_no_context.
func TestZeta2SeedCoderNoContext(t *testing.T) {
	got, err := seedTest("before\nmiddle\nafter", 7, 13, 10, nil, nil, 10000)
	want := "<[fim-suffix]>\nafter\n<[fim-prefix]><filename>test.rs\nbefore\n<<<<<<< CURRENT\nmid<|user_cursor|>dle\n=======\n<[fim-middle]>"
	if err != nil || got != want {
		t.Errorf("got %q, %v\nwant %q", got, err, want)
	}
}

// Zed: test_seed_coder_truncation_drops_context (the budget: the history and the related files
// go when it is short; no prompt when the cursor section itself does not fit).
func TestZeta2SeedCoderTruncationDropsContext(t *testing.T) {
	events := []event{zetaTestEvent("a.rs", "-x\n+y\n")}
	files := []relatedFile{zetaTestFile("r1.rs", "content\n", 0)}
	got, err := seedTest("code", 0, 4, 2, events, files, 10000)
	want := "<[fim-suffix]>\n<[fim-prefix]><filename>r1.rs\ncontent\n\n<filename>edit_history\n--- a/a.rs\n+++ b/a.rs\n-x\n+y\n\n<filename>test.rs\n<<<<<<< CURRENT\nco<|user_cursor|>de\n=======\n<[fim-middle]>"
	if err != nil || got != want {
		t.Errorf("budget 10000: got %q, %v\nwant %q", got, err, want)
	}
	if got, err := seedTest("code", 0, 4, 2, events, files, 24); err == nil {
		t.Errorf("budget 24: got %q, want no prompt", got)
	}
	got, err = seedTest("code", 0, 4, 2, events, files, 40)
	want = "<[fim-suffix]>\n<[fim-prefix]><filename>test.rs\n<<<<<<< CURRENT\nco<|user_cursor|>de\n=======\n<[fim-middle]>"
	if err != nil || got != want {
		t.Errorf("budget 40: got %q, %v\nwant %q", got, err, want)
	}
}

// Zed: test_seed_coder_truncation_prioritizes_lower_order (format_related_files_within_budget:
// chosen by order, written in the files' order).
func TestZeta2RelatedFilesByOrder(t *testing.T) {
	files := []relatedFile{
		{path: "low_prio.rs", maxRow: 5, endRow: 5, text: "low prio\n", order: 10},
		{path: "high_prio.rs", maxRow: 5, endRow: 5, text: "high prio\n", order: 1},
	}
	got, err := seedTest("code", 0, 4, 2, nil, files, 10000)
	want := "<[fim-suffix]>\n<[fim-prefix]><filename>low_prio.rs\nlow prio\n<filename>high_prio.rs\nhigh prio\n\n<filename>test.rs\n<<<<<<< CURRENT\nco<|user_cursor|>de\n=======\n<[fim-middle]>"
	if err != nil || got != want {
		t.Errorf("got %q, %v\nwant %q", got, err, want)
	}
	got, err = seedTest("code", 0, 4, 2, nil, files, 44)
	want = "<[fim-suffix]>\n<[fim-prefix]><filename>test.rs\n<<<<<<< CURRENT\nco<|user_cursor|>de\n=======\n<[fim-middle]>"
	if err != nil || got != want {
		t.Errorf("budget 44: got %q, %v\nwant %q", got, err, want)
	}
	// Room for one file: the one of the lower order, though it comes second (margin 45, the
	// suffix and cursor sections 34, each file 10 tokens).
	got, _ = seedTest("code", 0, 4, 2, nil, files, 50)
	if !strings.Contains(got, "high_prio.rs") || strings.Contains(got, "low_prio.rs") {
		t.Errorf("budget 50: %q; want high_prio.rs (order 1) alone", got)
	}
}

// Zed: tests/zeta1.rs test_max_event_count (format_edit_history_within_budget: the newest events
// within the count, written oldest first).
func TestZetaHistoryNewestWithinCount(t *testing.T) {
	var events []event
	for _, n := range []string{"1", "2", "3", "4", "5", "6", "7", "8"} {
		events = append(events, zetaTestEvent("event-"+n+".rs", "-old-"+n+"\n+new-"+n+"\n"))
	}
	got := zetaHistory(events, "<|file_sep|>", "edit history", 1<<30)
	if !strings.HasPrefix(got, "<|file_sep|>edit history\n--- a/event-3.rs\n") || !strings.HasSuffix(got, "+new-8\n") || strings.Count(got, "--- a/") != zetaMaxEvents {
		t.Errorf("got %q; want the six newest, oldest first", got)
	}
	if got := zetaHistory(events, seedFileMarker, "edit_history", 7); got != "" {
		t.Errorf("a budget of the header alone: %q", got)
	}
}

// Zed: the parsing tests of tests/parsing.rs (parse_zeta2_model_output strips the end marker; the
// answer is the new editable region; the first cursor marker is the cursor).
func TestZeta2ParseAnswer(t *testing.T) {
	in := prepare(requestAt("before\nmiddle\nafter\n", "mid"))
	c, err := zeta2Format{}.Build(in, limits{cfg: &Config{}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		answer, want string
		cursor       int
		err          error
	}{
		// The file is short: the region is all of it, its final line break included.
		{"before\nmiddle()<|user_cursor|>\nafter\n>>>>>>> UPDATED\n", "before\nmiddle()\nafter\n", 15, nil},
		{"before\nmiddle()\nafter\n", "before\nmiddle()\nafter\n", -1, nil}, // no end marker
		{"before\nmiddle()\nafter\n>>>>>>> UPDATED", "before\nmiddle()\nafter\n", -1, nil},
		{"before\nmiddle()\nafter\n>>>>>>> UPDATED\n<filename>x\n", "before\nmiddle()\nafter\n", -1, nil},
		{"before\nmiddle()\nafter", "before\nmiddle()\nafter\n", -1, nil}, // cut short of its line break
		{"NO_EDITS\n", "", -1, errNoEdit},
		{"", "", -1, errors.New("an empty answer")},
	} {
		text, cursor, err := c.read(tc.answer)
		if text != tc.want || cursor != tc.cursor || (err == nil) != (tc.err == nil) || (tc.err == errNoEdit && !errors.Is(err, errNoEdit)) {
			t.Errorf("read(%q) = %q, %d, %v; want %q, %d, %v", tc.answer, text, cursor, err, tc.want, tc.cursor, tc.err)
		}
	}
}

// requestAt is a request on text with the cursor just after the first occurrence of at.
func requestAt(text, at string) nesagent.Request {
	return nesagent.Request{URI: "file:///w/test.rs", Root: "/w", Text: text, Cursor: strings.Index(text, at) + len(at)}
}

// Zed: derived from build_v0318_cursor_prefix and assemble_fim_prompt (no upstream test prints a
// plain V0318 prompt; test_v0420_formats_diagnostics_before_related_files is the same less its
// diagnostics).
func TestZeta21Prompts(t *testing.T) {
	build := func(excerpt string, es, ee, c int, events []event, files []relatedFile) string {
		t.Helper()
		p, err := seedPrompt(events, files, 10000, excerpt[ee:], zeta21CursorSection("test.rs", excerpt, es, ee, c, markerOffsets(excerpt[es:ee])))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	files := []relatedFile{zetaTestFile("related.rs", "fn helper() {}\n", 0)}
	for _, tc := range []struct{ got, want string }{
		{build("prefix\neditable\nsuffix", 7, 15, 10, nil, files),
			"<[fim-suffix]>\nsuffix\n<[fim-prefix]><filename>related.rs\nfn helper() {}\n\n<filename>test.rs\nprefix\n<|marker_1|>edi<|user_cursor|>table<|marker_2|>\n<[fim-middle]>"},
		{build("prefix\neditable\nsuffix", 7, 15, 10, []event{zetaTestEvent("a.rs", "-old\n+new\n")}, files),
			"<[fim-suffix]>\nsuffix\n<[fim-prefix]><filename>related.rs\nfn helper() {}\n\n<filename>edit_history\n--- a/a.rs\n+++ b/a.rs\n-old\n+new\n\n<filename>test.rs\nprefix\n<|marker_1|>edi<|user_cursor|>table<|marker_2|>\n<[fim-middle]>"},
		{build("before\nmiddle\nafter", 7, 13, 10, nil, nil),
			"<[fim-suffix]>\nafter\n<[fim-prefix]><filename>test.rs\nbefore\n<|marker_1|>mid<|user_cursor|>dle<|marker_2|>\n<[fim-middle]>"},
	} {
		if tc.got != tc.want {
			t.Errorf("got  %q\nwant %q", tc.got, tc.want)
		}
	}
}

// Zed: multi_region tests/marker_offsets.rs and tests/byte_exact.rs (compute_marker_offsets_v0318).
func TestZeta21MarkerOffsets(t *testing.T) {
	if got := markerOffsets(""); len(got) != 2 || got[0] != 0 || got[1] != 0 {
		t.Errorf("empty: %v", got)
	}
	text := "l1\nl2\nl3\n\nl5\nl6\nl7\nl8\nl9\nl10\nl11\nl12\nl13\n"
	if got := markerOffsets(text); len(got) != 2 || got[1] != len(text) {
		t.Errorf("V0318 keeps 13 lines with an early blank line as one block: %v", got)
	}
	// Sixteen lines without a blank one, then a closer: the boundary is nudged past it.
	long := strings.Repeat("a\n", 16) + "}\ncase x: {\nbody\n" + strings.Repeat("b\n", 6)
	want := strings.Index(long, "case x")
	found := false
	for _, o := range markerOffsets(long) {
		found = found || o == want
	}
	if !found {
		t.Errorf("want a boundary at the case line (%d): %v", want, markerOffsets(long))
	}
	// After six lines, a blank line starts a new block.
	blank := strings.Repeat("x\n", 6) + "\n" + strings.Repeat("y\n", 7)
	if got := markerOffsets(blank); len(got) != 3 || got[1] != strings.Index(blank, "y") {
		t.Errorf("blank-line split: %v", got)
	}
}

// Zed: tests/byte_exact.rs test_apply_marker_span_v0316_* (apply_marker_span_impl, shared by
// V0318).
func TestZeta21ApplyMarkerSpan(t *testing.T) {
	old := "aaa\nbbb\nccc\n"
	offs := markerOffsets(old)
	for _, tc := range []struct {
		answer, want string
		err          error
	}{
		{"<|marker_1|>aaa\nBBB\nccc\n<|marker_2|>", "aaa\nBBB\nccc\n", nil},
		{"<|marker_1|>aaa\nBBB\nccc<|marker_2|>", "aaa\nBBB\nccc", nil}, // byte-exact: no line break added
		{"<|marker_1|><|marker_1|>", "", errNoEdit},
		{"<|marker_2|>ignored content<|marker_2|>", "", errNoEdit},
		{"no tags at all", "", errors.New("no marker tags")},
		{"<|marker_1|>aaa", "", errors.New("one marker tag")},
		{"<|marker_1|>x<|marker_9|>", "", errors.New("out of range")},
		{"<|marker_2|>x<|marker_1|>", "", errors.New("comes after")},
	} {
		got, err := applyMarkerSpan(old, tc.answer, offs)
		switch {
		case tc.err == errNoEdit && !errors.Is(err, errNoEdit):
			t.Errorf("%q: %v, want no edit", tc.answer, err)
		case tc.err != nil && tc.err != errNoEdit && (err == nil || !strings.Contains(err.Error(), tc.err.Error())):
			t.Errorf("%q: %q, %v; want an error saying %q", tc.answer, got, err, tc.err)
		case tc.err == nil && (err != nil || got != tc.want):
			t.Errorf("%q: %q, %v; want %q", tc.answer, got, err, tc.want)
		}
	}
	// Worked pair: the region "editable" with the cursor marker in the answer.
	got, err := applyMarkerSpan("editable", "<|marker_1|>editable();<|user_cursor|><|marker_2|>", markerOffsets("editable"))
	if text, cursor := cutCursor(got, zetaCursor); err != nil || text != "editable();" || cursor != 11 {
		t.Errorf("got %q %d, %v", text, cursor, err)
	}
}

// Zed: tests/zeta1.rs test_format_zeta1_from_input_basic, _no_start_of_file, _with_sub_ranges
// (format_zeta1_from_input).
func TestZeta1Prompts(t *testing.T) {
	header := "### Instruction:\nYou are a code completion assistant and your task is to analyze user edits and then rewrite an excerpt that the user provides, suggesting the appropriate edits within the excerpt, taking into account the cursor location.\n\n### User Edits:\n\n"
	for _, tc := range []struct {
		path, excerpt   string
		startRow        int
		cs, ce, es, ee  int
		cursor          int
		events          []event
		wantAfterHeader string
	}{
		{"src/main.rs", "fn before() {}\nfn foo() {\n    let x = 1;\n}\nfn after() {}\n", 0, 0, 57, 15, 41, 30,
			[]event{zetaTestEvent("other.rs", "-old\n+new\n")},
			"User edited other.rs:\n```diff\n-old\n+new\n\n```\n\n### User Excerpt:\n\n```src/main.rs\n<|start_of_file|>\nfn before() {}\n<|editable_region_start|>\nfn foo() {\n    <|user_cursor_is_here|>let x = 1;\n\n<|editable_region_end|>}\nfn after() {}\n\n```\n\n### Response:\n"},
		{"src/main.rs", "fn foo() {\n    let x = 1;\n}\n", 10, 0, 28, 0, 28, 15, nil,
			"\n\n### User Excerpt:\n\n```src/main.rs\n<|editable_region_start|>\nfn foo() {\n    <|user_cursor_is_here|>let x = 1;\n}\n\n<|editable_region_end|>\n```\n\n### Response:\n"},
		{"test.rs", "// prefix\nfn foo() {\n    let x = 1;\n}\n// suffix\n", 0, 0, 48, 10, 37, 25, nil,
			"\n\n### User Excerpt:\n\n```test.rs\n<|start_of_file|>\n// prefix\n<|editable_region_start|>\nfn foo() {\n    <|user_cursor_is_here|>let x = 1;\n}\n<|editable_region_end|>\n// suffix\n\n```\n\n### Response:\n"},
	} {
		if tc.ce != len(tc.excerpt) {
			t.Fatalf("%s: the context must be the whole excerpt (%d)", tc.path, len(tc.excerpt))
		}
		r := zetaRegion{excerptStart: 0, excerptEnd: len(tc.excerpt), excerptStartRow: tc.startRow, contextStart: tc.cs, contextEnd: tc.ce, editStart: tc.es, editEnd: tc.ee, cursor: tc.cursor}
		got := zeta1Prompt(tc.events, zeta1Excerpt(tc.path, tc.excerpt, r))
		if want := header + tc.wantAfterHeader; got != want {
			t.Errorf("got  %q\nwant %q", got, want)
		}
	}
}

// Zed: tests/zeta1.rs test_clean_zeta1_model_output_* (clean_zeta1_model_output; Zed puts its own
// cursor marker where the model's was, the agent keeps its offset).
func TestZeta1CleanAnswer(t *testing.T) {
	for _, tc := range []struct {
		answer, want string
		cursor       int
	}{
		{"<|editable_region_start|>\nfn main() {\n    println!(\"hello\");\n}\n<|editable_region_end|>\n", "fn main() {\n    println!(\"hello\");\n}", -1},
		{"<|editable_region_start|>\nfn main() {\n    <|user_cursor_is_here|>println!(\"hello\");\n}\n<|editable_region_end|>\n", "fn main() {\n    println!(\"hello\");\n}", 16},
		{"fn main() {}\n", "fn main() {}\n", -1},
		{"<|editable_region_start|>\n<|editable_region_end|>\n", "", -1},
		// The stop string took the end marker.
		{"<|editable_region_start|>\nfn main() {}\n", "fn main() {}\n", -1},
	} {
		got, cursor := zeta1Clean(tc.answer)
		if got != tc.want || cursor != tc.cursor {
			t.Errorf("zeta1Clean(%q) = %q, %d; want %q, %d", tc.answer, got, cursor, tc.want, tc.cursor)
		}
	}
}

// Zed: sweep_prompt.rs test_build_prompt_uses_run_model_ordering (build_prompt).
func TestSweepPromptOrdering(t *testing.T) {
	got := sweepV1Prompt([]relatedFile{{path: "src/context.rs", text: "context"}},
		[]sweepChangeBlock{{"src/lib.rs", "old", "new"}}, "src/main.rs", "old window", "current window")
	want := "<|file_sep|>src/context.rs\ncontext\n<|file_sep|>src/lib.rs.diff\noriginal:\nold\nupdated:\nnew\n<|file_sep|>original/src/main.rs\nold window\n<|file_sep|>current/src/main.rs\ncurrent window\n<|file_sep|>updated/src/main.rs\n"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// Zed: sweep_prompt.rs, a unified diff becomes a change block (recent_change_block_from_event,
// parse_unified_diff).
func TestSweepChangeBlock(t *testing.T) {
	o, u := sweepChange(event{diff: "@@ -1,3 +1,3 @@\n fn main() {\n-    println!(\"old\");\n+    println!(\"new\");\n }\n"})
	if o != "fn main() {\n    println!(\"old\");\n}" || u != "fn main() {\n    println!(\"new\");\n}" {
		t.Errorf("original %q updated %q", o, u)
	}
	var lines []string
	for i := range 50 {
		lines = append(lines, string(rune('a'+i%26)))
	}
	if got := strings.Split(limitLines(lines, 40), "\n"); len(got) != 40 || got[20] != "..." {
		t.Errorf("limit_change_lines: %d lines, middle %q", len(got), got[20])
	}
}

// Sweep v2: derived from the v2 card's inference.py build_prompt (PROMPT_TEMPLATE, DIFF_FORMAT,
// compute_prefill) as its ports copy it; the example of the ports' notes.
func TestSweepV2PromptWithPrefill(t *testing.T) {
	text := "import os\n\ndef main():\n    path = os.getcwd()\n    files = os.listdir(path)\n    return files\n"
	req := nesagent.Request{URI: "file:///w/main.py", Root: "/w", Text: text, Cursor: strings.Index(text, "path)")}
	in := prepare(req)
	in.events = []event{{path: "main.py", line: 1, old: "", new: "import os"}}
	c, err := sweepFormat{}.Build(in, limits{cfg: &Config{Model: "sweepai/sweep-next-edit-v2-7B"}})
	if err != nil {
		t.Fatal(err)
	}
	want := "<|file_sep|>main.py\nimport os\n\ndef main():\n    path = os.getcwd()\n    files = os.listdir(path)\n    return files\n\n<|file_sep|>main.py:1:1\noriginal:\n\nupdated:\nimport os\n<|file_sep|>original/main.py:1:6\nimport os\n\ndef main():\n    path = os.getcwd()\n    files = os.listdir(path)\n    return files\n\n<|file_sep|>current/main.py:1:6\nimport os\n\ndef main():\n    path = os.getcwd()\n    files = os.listdir(<|cursor|>path)\n    return files\n\n<|file_sep|>updated/main.py:1:6\nimport os\n\ndef main():\n    path = os.getcwd()\n"
	if c.Raw != want {
		t.Errorf("got  %q\nwant %q", c.Raw, want)
	}
	if strings.Join(c.Stop, " ") != "<|endoftext|> <|file_sep|>" {
		t.Errorf("stop %q", c.Stop)
	}
	// The answer continues the prefill: no change, then a change.
	if _, _, err := c.read("    files = os.listdir(path)\n    return files\n<|file_sep|>"); !errors.Is(err, errNoEdit) {
		t.Errorf("the block unchanged: %v", err)
	}
	got, _, err := c.read("    files = sorted(os.listdir(path))\n    return files\n")
	if err != nil || got != "import os\n\ndef main():\n    path = os.getcwd()\n    files = sorted(os.listdir(path))\n    return files\n" {
		t.Errorf("the block changed: %q, %v", got, err)
	}
	// is_pure_insertion_above_cursor: lines added above an unchanged cursor line.
	if _, _, err := c.read("    print(path)\n    files = os.listdir(path)\n    return files\n"); !errors.Is(err, errNoEdit) {
		t.Errorf("an insertion above the cursor's line: %v", err)
	}
}

// Continue: templating/instinct.vitest.ts, currentFileContentBlock.
func TestInstinctExcerpt(t *testing.T) {
	got := instinctExcerpt(strings.Split("line 0\nline 1\nline 2\nline 3\nline 4", "\n"), 0, 4, 1, 3, 2, 4)
	want := "line 0\n<|editable_region_start|>\nline 1\nline<|user_cursor_is_here|> 2\nline 3\n<|editable_region_end|>\nline 4"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// Continue: templating/instinct.vitest.ts, editHistoryBlock.
func TestInstinctEditHistory(t *testing.T) {
	e := event{path: "test.js", diff: "@@ -1,3 +1,3 @@\n function test() {\n-  console.log(\"old\");\n+  console.log(\"new\");\n }\n"}
	want := "User edited file \"test.js\"\n\n```diff\n@@ -1,3 +1,3 @@\n function test() {\n-  console.log(\"old\");\n+  console.log(\"new\");\n }\n```"
	if got := instinctEdits([]event{e}); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if got := instinctEdits([]event{e, e}); got != want+"\n"+want {
		t.Errorf("two: %q", got)
	}
}

// Continue: NextEditPromptEngine.ts's instinct template and InstinctNextEditProvider's margins.
func TestInstinctMessage(t *testing.T) {
	text := "a\nb\nc\nd\ne\nf\ng\nh\ni\n"
	in := prepare(nesagent.Request{URI: "file:///w/src/x.go", Root: "/w", Text: text, Cursor: strings.Index(text, "c") + 1})
	c, err := instinctFormat{}.Build(in, limits{cfg: &Config{}})
	if err != nil {
		t.Fatal(err)
	}
	want := instinctUserPrefix + "\n\n### Context:\n\n\n### User Edits:\n\n\n\n### User Excerpt:\nsrc/x.go\n\na\n<|editable_region_start|>\nb\nc<|user_cursor_is_here|>\nd\ne\nf\ng\nh\n<|editable_region_end|>\ni\n```\n### Response:"
	if c.System != instinctSystemPrompt || c.User != want {
		t.Errorf("user message\n got %q\nwant %q", c.User, want)
	}
	if got := in.text[c.start:c.end]; got != "b\nc\nd\ne\nf\ng\nh" {
		t.Errorf("region %q: the line above the cursor's to five below", got)
	}
	for answer, wantText := range map[string]string{
		"b\nc()\nd\ne\nf\ng\nh": "b\nc()\nd\ne\nf\ng\nh",
		"<|editable_region_start|>\nb\nc()<|user_cursor_is_here|>\nd\ne\nf\ng\nh\n<|editable_region_end|>": "b\nc()\nd\ne\nf\ng\nh",
		"```go\nb\nc()\nd\ne\nf\ng\nh\n```": "b\nc()\nd\ne\nf\ng\nh",
	} {
		if got, _, err := c.read(answer); err != nil || got != wantText {
			t.Errorf("read(%q) = %q, %v; want %q", answer, got, err, wantText)
		}
	}
}
