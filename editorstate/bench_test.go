package editorstate

import (
	"testing"
	"time"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/document"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testutil"
)

// BenchmarkChangedKeystroke measures State.Changed for one keystroke in the middle of a document:
// typing a character and deleting it again, alternately, so that the history entry stays open
// and in step with the text. Only Changed is measured: both texts are built once. Its cost must
// not grow with the document.
func BenchmarkChangedKeystroke(b *testing.B) {
	for _, size := range []struct {
		name  string
		bytes int
	}{
		{"100KB", 100 << 10},
		{"10MB", 10 << 20},
	} {
		b.Run(size.name, func(b *testing.B) {
			const uri = "file:///w/bench.go"
			m0 := encoding.NewMapper(testutil.SourceLike(size.bytes))
			line := m0.LineCount() / 2
			at := m0.LineStart(line) + 5
			m1 := m0.Edit(at, at, "é")
			insert := []document.Applied{{Before: m0, Start: at, End: at, Text: "é"}}
			remove := []document.Applied{{Before: m1, Start: at, End: at + len("é"), Text: ""}}
			s := New(Limits{})
			s.SetClock(func() time.Time { return t0 })
			s.Opened(&document.Snapshot{URI: uri, LanguageID: "go", Mapper: m0})
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if i%2 == 0 {
					s.Changed(uri, insert)
				} else {
					s.Changed(uri, remove)
				}
				i++
			}
			if n, _, _ := s.heldBytes(); n != 1 {
				b.Fatalf("%d history entries; the keystrokes must share one", n)
			}
		})
	}
}
