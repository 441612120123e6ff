package acpside

import (
	"bytes"
	"encoding/json"
	"io"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// BenchmarkTapLargeAnswer measures the wire tap on a 4 MiB answer to one of the bridge's own
// nes/suggest requests (one edit whose newText is 4 MiB of text), as the pump hands it over (a
// line gathered in its own buffer, given away), against, as the baseline, reading the same line
// once (json.Valid). Each iteration does both, one after the other. It reports the median ratio
// (tap/one reading) and the bytes the tap allocates per answer; the budget is a ratio of 2.5 and
// no copy of the answer (allocated bytes well under its size).
func BenchmarkTapLargeAnswer(b *testing.B) {
	text := strings.Repeat("let x = \"日本\"; // é\n", 4<<20/24)
	res := map[string]any{"suggestions": []any{map[string]any{"kind": "edit", "id": "s1", "uri": "file:///w/a.rs", "edits": []any{
		map[string]any{"range": map[string]any{"start": map[string]any{"line": 0, "character": 0}, "end": map[string]any{"line": 0, "character": 0}}, "newText": text},
	}}}}
	line, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "nes-7", "result": res})
	if err != nil {
		b.Fatal(err)
	}
	t := newWireTap(zerolog.Nop(), nil)
	answer := make(chan []byte, 1)
	once := make([]time.Duration, 0, b.N)
	tapped := make([]time.Duration, 0, b.N)
	var alloc uint64
	var ms runtime.MemStats
	b.SetBytes(int64(len(line)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t.own(`"nes-7"`, answer)
		gathered := bytes.Clone(line) // the pump's buffer, which it gives away
		t0 := time.Now()
		if !json.Valid(line) {
			b.Fatal("invalid")
		}
		t1 := time.Now()
		runtime.ReadMemStats(&ms)
		before := ms.TotalAlloc
		t2 := time.Now()
		kept := t.incoming(gathered, io.Discard, true)
		t3 := time.Now()
		runtime.ReadMemStats(&ms)
		alloc += ms.TotalAlloc - before
		if got := <-answer; !kept || len(got) != len(line) {
			b.Fatalf("the answer was not handed over whole (kept %v, %d bytes of %d)", kept, len(got), len(line))
		}
		once, tapped = append(once, t1.Sub(t0)), append(tapped, t3.Sub(t2))
		t.forget(`"nes-7"`)
	}
	b.StopTimer()
	b.ReportMetric(float64(percentile(tapped, 0.5))/float64(percentile(once, 0.5)), "median-ratio")
	b.ReportMetric(float64(alloc)/float64(b.N), "tap-B/answer")
	b.Logf("%d answers of %d bytes: one reading p50 %s; the tap p50 %s, %d bytes allocated per answer", b.N, len(line), percentile(once, 0.5), percentile(tapped, 0.5), alloc/uint64(b.N))
}

func percentile(ds []time.Duration, p float64) time.Duration {
	s := append([]time.Duration(nil), ds...)
	slices.Sort(s)
	return s[min(len(s)-1, int(p*float64(len(s))))]
}
