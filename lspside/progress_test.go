package lspside

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/document"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/translate"
)

// readsAsTyped is what progress.follow must agree with: text reads as base with r's region replaced
// by a prefix of r.Text (ok), all of it (all), comparing whole strings.
func readsAsTyped(base string, r translate.Replacement, text string) (ok, all bool) {
	prefix, suffix := base[:r.Start], base[r.End:]
	if len(text) < len(prefix)+len(suffix) || !strings.HasPrefix(text, prefix) || !strings.HasSuffix(text, suffix) {
		return false, false
	}
	middle := text[len(prefix) : len(text)-len(suffix)]
	return strings.HasPrefix(r.Text, middle), middle == r.Text
}

// TestProgressFollowsTheUsersEdits types, deletes and pastes at random, mostly in and around the
// region of a suggestion, sometimes elsewhere or as a whole-document change, and checks after
// every change that following the changes gives the answer a comparison of the whole text gives.
func TestProgressFollowsTheUsersEdits(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	pieces := []string{"r", "e", "t", "u", "n", " ", "nil", "x", "\n", "é", "😀"}
	const before = "func f() error {\n\t\n}\n// é and 😀 after\n"
	for trial := 0; trial < 300; trial++ {
		at := strings.Index(before, "\t\n") + 1
		r := translate.Replacement{Start: at, End: at, Text: "return nil"}
		if trial%3 == 1 {
			r = translate.Replacement{Start: at - 1, End: at + 1, Text: "\treturn nil\n"} // replaces text too
		}
		base := encoding.NewMapper(before)
		f := translate.FileEdit{URI: "file:///a.go", Mapper: base, Spans: []translate.Span{{Start: r.Start, End: r.End, Text: r.Text}}}
		p := newProgress(f)
		m, text := base, before
		for step := 0; step < 12; step++ {
			var c document.Change
			start := r.Start + rng.IntN(len(r.Text)+3) - 1 // in and around the region
			if rng.IntN(8) == 0 {
				start = rng.IntN(len(text) + 1) // anywhere
			}
			start = max(0, min(start, len(text)))
			for start < len(text) && !utf8Start(text[start]) {
				start++
			}
			end := start
			if rng.IntN(3) == 0 && end < len(text) {
				end++
				for end < len(text) && !utf8Start(text[end]) {
					end++
				}
			}
			ins := ""
			if rng.IntN(4) != 0 {
				ins = pieces[rng.IntN(len(pieces))]
			}
			if rng.IntN(3) == 0 && start == r.Start {
				// Type the next character of the suggestion.
				if n := len(text) - len(before) + (r.End - r.Start); n >= 0 && n < len(r.Text) {
					ins = r.Text[n : n+1]
				}
			}
			rs, _ := m.OffsetsRange(start, end, encoding.UTF8)
			c = document.Change{Range: &rs, Text: ins}
			if rng.IntN(20) == 0 {
				c = document.Change{Text: text[:start] + ins + text[end:]} // a whole-document change
			}
			next, applied, err := document.Apply(m, []document.Change{c}, encoding.UTF8)
			if err != nil {
				t.Fatal(err)
			}
			m, text = next, next.Text()
			wantOK, wantAll := readsAsTyped(before, r, text)
			ok, all, _ := p.follow(applied, m)
			if ok != wantOK || all != wantAll {
				t.Fatalf("trial %d step %d: follow says ok %v all %v, the whole text says %v %v\ntext %q", trial, step, ok, all, wantOK, wantAll, text)
			}
			if !ok {
				break // the tracker ends the suggestion here
			}
		}
	}
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }
