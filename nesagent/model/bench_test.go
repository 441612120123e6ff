package model

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent"
)

// benchRequest is a request on a 10,000-line Go file with 20 recent edits spread through it (and
// the other files) and 3 other open files of 2,000 lines, the cursor in the middle.
func benchRequest() nesagent.Request {
	file := func(name string, lines int) string {
		var b strings.Builder
		fmt.Fprintf(&b, "package %s\n\n", name)
		for i := 0; i < lines-2; i++ {
			switch i % 5 {
			case 0:
				fmt.Fprintf(&b, "func f%d(a, b int) int {\n", i)
			case 1:
				fmt.Fprintf(&b, "\tsum := a + b // %s line %d, with some words\n", name, i)
			case 2:
				fmt.Fprintf(&b, "\treturn helper%d(sum, \"é日本\")\n", i%17)
			case 3:
				b.WriteString("}\n")
			default:
				b.WriteString("\n")
			}
		}
		return b.String()
	}
	text := file("main", 10000)
	lineAt := func(s string, n int) int {
		at := 0
		for i := 0; i < n; i++ {
			at += strings.IndexByte(s[at:], '\n') + 1
		}
		return at
	}
	req := nesagent.Request{URI: "file:///w/proj/main.go", Root: "/w/proj", LanguageID: "go", Text: text, Cursor: lineAt(text, 5001) + 5}
	var seq uint64
	edit := func(s string, line int) nesagent.Edit {
		seq++
		at := lineAt(s, line)
		end := at + strings.IndexByte(s[at:], '\n')
		return nesagent.Edit{Start: at + 1, Old: "", New: "x", OldLines: s[at:end], NewLines: s[at:end], LineStart: at, Seq: seq}
	}
	for i := 0; i < 3; i++ {
		other := file(fmt.Sprintf("other%d", i), 2000)
		doc := nesagent.OpenDocument{URI: fmt.Sprintf("file:///w/proj/other%d.go", i), LanguageID: "go", Text: other}
		for j := 0; j < 2; j++ {
			doc.Recent = append(doc.Recent, edit(other, 100+500*j))
		}
		req.Open = append(req.Open, doc)
	}
	for i := 0; i < 14; i++ {
		req.Recent = append(req.Recent, edit(text, 4990+i))
	}
	return req
}

// BenchmarkPromptBuild builds every format's prompt, from the request as the kit hands it over
// (prepare included), for a 10,000-line file with 20 recent edits and 3 other open files. It
// reports each format's time per prompt and the slowest (budget: well under 1 ms), with the other
// files' word indexes kept between requests as the engine keeps them, and the slowest when they
// are made anew (the first request after another file changed).
func BenchmarkPromptBuild(b *testing.B) {
	req := benchRequest()
	type entry struct {
		name string
		f    Format
		cfg  Config
	}
	var formats []entry
	for _, name := range []string{"chat", "zeta1", "zeta2", "zeta2.1", "sweep", "sweep-v2", "instinct"} {
		model, f := "m", name
		if name == "sweep-v2" {
			model, f = "sweep-next-edit-v2-7b", "sweep"
		}
		e, err := withDefaults(Config{Model: model, Format: f})
		if err != nil {
			b.Fatal(err)
		}
		if c, err := e.format.Build(prepare(req), limits{cfg: &e.cfg}); err != nil || c.end <= c.start {
			b.Fatalf("%s: %v", name, err)
		}
		formats = append(formats, entry{name, e.format, e.cfg})
	}
	// Steady: the other files' word indexes kept between requests, as while the user types in
	// one file. Cold: made anew for each request, as the first request after another file changed.
	// (ResetTimer drops reported metrics: they are reported at the end.)
	perFormat := make([]float64, len(formats))
	var slowest, coldSlowest float64
	for _, steady := range []bool{false, true} {
		spent := make([]time.Duration, len(formats))
		words := make([]wordIndexes, len(formats))
		b.ResetTimer()
		b.StartTimer()
		for i := 0; i < b.N; i++ {
			for k := range formats {
				began := time.Now()
				in := prepare(req)
				if steady {
					in.words = &words[k]
				}
				if _, err := formats[k].f.Build(in, limits{cfg: &formats[k].cfg}); err != nil {
					b.Fatal(err)
				}
				spent[k] += time.Since(began)
			}
		}
		b.StopTimer()
		for k := range formats {
			us := float64(spent[k].Microseconds()) / float64(b.N)
			if steady {
				perFormat[k] = us
				slowest = max(slowest, us)
			} else {
				coldSlowest = max(coldSlowest, us)
			}
		}
	}
	for k, f := range formats {
		b.ReportMetric(perFormat[k], f.name+"-µs")
	}
	b.ReportMetric(slowest, "slowest-format-µs")
	b.ReportMetric(coldSlowest, "cold-slowest-format-µs")
}
