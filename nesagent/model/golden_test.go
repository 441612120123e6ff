package model

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent"
)

var update = flag.Bool("update", false, "rewrite the golden prompts in testdata/golden")

// goldenCases are the inputs every format's prompt is pinned for: recent edits in this file and
// another, other open files, CRLF line breaks, tabs and text beyond ASCII, the cursor at the start
// and at the end of the file, and lines too long for any region.
func goldenCases() map[string]nesagent.Request {
	goSrc := "package shop\n\nimport \"fmt\"\n\n// Total adds the prices, in €.\nfunc Total(prices []int, tax int) int {\n\tsum := 0\n\tfor _, p := range prices {\n\t\tsum += p\n\t}\n\treturn sum\n}\n\nfunc main() {\n\tfmt.Println(Total([]int{1, 2}))\n}\n"
	paramAt := strings.Index(goSrc, ", tax int")
	callAt := strings.Index(goSrc, "Total([]int{1, 2})") + len("Total([]int{1, 2}")
	other := "package shop\n\n// Receipt prints what was bought.\nfunc Receipt(items []string) {\n\tfor _, it := range items {\n\t\tprintln(it)\n\t}\n\tprintln(Total(nil))\n}\n"
	crlf := strings.ReplaceAll(goSrc, "\n", "\r\n")
	nonASCII := "# 日本語のメモ 😀\n\tdef grüße(name):\n\t\treturn f\"Grüße, {name} 👋\"\n\n\tprint(grüße(\"Zoë\"))\n"
	long := "x = \"" + strings.Repeat("ab", 1500) + "\"\ny = 1\n" + "z = \"" + strings.Repeat("cd", 1500) + "\"\n"
	req := func(name, text string, cursor int) nesagent.Request {
		return nesagent.Request{URI: "file:///home/ana/shop/" + name, Root: "/home/ana/shop", LanguageID: "go", Text: text, Cursor: cursor}
	}
	history := req("total.go", goSrc, callAt)
	history.Recent = []nesagent.Edit{
		{Start: paramAt, Old: "", New: ", tax int", OldLines: "func Total(prices []int) int {", NewLines: "func Total(prices []int, tax int) int {", LineStart: strings.Index(goSrc, "func Total"), Seq: 1},
		{Start: callAt - 1, Old: "", New: "", OldLines: "\tfmt.Println(Total([]int{1, 2}))", NewLines: "\tfmt.Println(Total([]int{1, 2}))", LineStart: strings.Index(goSrc, "\tfmt.Println"), Seq: 3},
	}
	history.Open = []nesagent.OpenDocument{{
		URI: "file:///home/ana/shop/receipt.go", LanguageID: "go", Text: other,
		Recent: []nesagent.Edit{{Start: strings.Index(other, "Total(nil)"), Old: "Sum", New: "Total", OldLines: "\tprintln(Sum(nil))", NewLines: "\tprintln(Total(nil))", LineStart: strings.Index(other, "\tprintln(Total"), Seq: 2}},
	}}
	crlfReq := req("total.go", crlf, strings.Index(crlf, "tax int")+3)
	return map[string]nesagent.Request{
		"history":      history,
		"crlf":         crlfReq,
		"non-ascii":    req("greet.py", nonASCII, strings.Index(nonASCII, "grüße(\"Zoë\")")+len("grüße(")),
		"cursor-start": req("total.go", goSrc, 0),
		"cursor-end":   req("total.go", strings.TrimSuffix(goSrc, "\n"), len(goSrc)-1),
		"long-lines":   req("data.py", long, strings.Index(long, "y = 1")+5),
	}
}

// TestGoldenPrompts pins each format's request for the golden cases: the prompt (or the chat's
// system and user messages), the stop strings, the bound on the answer and the region the answer
// rewrites. Each format follows its reference (format_*.go names the functions: Zed's
// format_zeta1_from_input, seed_coder::assemble_fim_prompt, build_v0318_cursor_prefix and
// compute_editable_and_context_ranges; Zed's sweep_prompt.rs build_prompt and the v2 card's
// build_prompt; Continue's instinct template); the reference tests in
// formats_reference_test.go check the assembly byte for byte, these the whole requests. Run with
// -update to rewrite them after a deliberate change, and read the diff.
func TestGoldenPrompts(t *testing.T) {
	for caseName, req := range goldenCases() {
		for _, fname := range []string{"chat", "zeta1", "zeta2", "zeta2.1", "sweep", "sweep-v2", "instinct"} {
			model := "m"
			f := Formats[fname]
			if fname == "sweep-v2" {
				f, model = Formats["sweep"], "sweep-next-edit-v2-7b"
			}
			cfg := &Config{Model: model}
			e, err := withDefaults(*cfg)
			if err != nil {
				t.Fatal(err)
			}
			c, err := f.Build(prepare(req), limits{cfg: &e.cfg})
			var got string
			if err != nil {
				got = "no request: " + err.Error() + "\n"
			} else {
				in := prepare(req)
				got = fmt.Sprintf("region [%d,%d): %q\nstop: %q\nmax_tokens: %d\n", in.toOrig(c.start), in.toOrig(c.end), in.text[c.start:c.end], c.Stop, c.MaxTokens)
				if c.Raw != "" {
					got += "--- prompt\n" + c.Raw
				} else {
					got += "--- system\n" + c.System + "\n--- user\n" + c.User
				}
			}
			path := filepath.Join("testdata", "golden", fname, caseName+".txt")
			if *update {
				os.MkdirAll(filepath.Dir(path), 0o755)
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -run TestGoldenPrompts -update)", err)
			}
			if got != string(want) {
				t.Errorf("%s: the request changed (go test -run TestGoldenPrompts -update, then read the diff):\n got %q\nwant %q", path, got, want)
			}
			if strings.Contains(got, "/home/ana") {
				t.Errorf("%s names an absolute path", path)
			}
		}
	}
}
