package document_test

import (
	"testing"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/document"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testutil"
)

// BenchmarkApplyOneCharChange measures what one keystroke costs the mirror: Store.Change with a
// one-character insertion (utf-16 positions) in the middle of a document. The budget is that
// 10 MB costs at most 3 times 100 KB; the 10MB run reports that ratio as "10MB/100KB".
func BenchmarkApplyOneCharChange(b *testing.B) {
	perOp := map[string]float64{}
	for _, size := range []struct {
		name  string
		bytes int
	}{
		{"100KB", 100 << 10},
		{"1MB", 1 << 20},
		{"10MB", 10 << 20},
	} {
		b.Run(size.name, func(b *testing.B) {
			const uri = "file:///bench.go"
			text := testutil.SourceLike(size.bytes)
			s := document.NewStore()
			snap, _ := s.Open(uri, "go", 0, text)
			line := snap.Mapper.LineCount() / 2
			change := []document.Change{{
				Range: &encoding.Range{
					Start: encoding.Position{Line: line, Character: 5},
					End:   encoding.Position{Line: line, Character: 5},
				},
				Text: "x",
			}}
			b.ReportAllocs()
			b.SetBytes(int64(len(text)))
			version := 0
			for b.Loop() {
				version++
				if version%4096 == 0 {
					// Keep the document near its nominal size; reopening is not measured.
					b.StopTimer()
					s.Open(uri, "go", version, text)
					b.StartTimer()
				}
				if _, _, _, err := s.Change(uri, version, change, encoding.UTF16); err != nil {
					b.Fatal(err)
				}
			}
			perOp[size.name] = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			if small := perOp["100KB"]; size.name == "10MB" && small > 0 {
				b.ReportMetric(perOp["10MB"]/small, "10MB/100KB")
			}
		})
	}
}
