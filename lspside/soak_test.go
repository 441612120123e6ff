package lspside_test

import (
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"

	"math/rand"
	"testing"
	"time"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testagent"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testutil"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/lspside"
)

// TestSoak: tens of thousands of edits in four documents (non-ASCII text, line breaks), thousands
// of inline-completion requests, and a few dozen agent crashes, in one session. The bridge must not
// fail, its heap must stay bounded, and at the end the restarted agent's view of every document
// must equal the editor's. Figures are logged (go test -v -run TestSoak ./lspside).
func TestSoak(t *testing.T) {
	edits, every, kills := 20000, 10, 24
	if testing.Short() {
		edits, kills = 2000, 4
	}
	rng := rand.New(rand.NewSource(1))
	e := newEditor(t, harnessOpts{
		quietLog: true,
		agentCfg: testagent.Config{Encoding: "utf-8", Rules: []testagent.Rule{{When: "hel", Find: "hel", Replace: "hello"}}},
		cfg:      lspside.Config{RestartDelays: []time.Duration{time.Millisecond}, RestartLimit: 1 << 20},
	})
	e.initialize("utf-16")
	e.WaitReady()
	uris := []string{"file:///work/project/s0.go", "file:///work/project/s1.go", "file:///work/project/s2.go", "file:///work/project/s3.go"}
	texts := make([]string, len(uris))
	versions := make([]int, len(uris))
	for i, u := range uris {
		texts[i] = "package s // é\nhel\n"
		versions[i] = 1
		e.Open(u, texts[i])
	}
	pieces := []string{"a", "é", "😀", "\n", "hel", " x := 1\n", "日本"}
	heap := testutil.LiveHeap
	start := time.Now()
	var heapMid uint64
	requests, shown := 0, 0
	for n := 0; n < edits; n++ {
		d := rng.Intn(len(uris))
		m := encoding.NewMapper(texts[d])
		// A random insertion or deletion, the document kept under 4 KB.
		a := rng.Intn(len(texts[d]) + 1)
		for a > 0 && a < len(texts[d]) && (texts[d][a]&0xC0) == 0x80 {
			a--
		}
		b, text := a, pieces[rng.Intn(len(pieces))]
		if len(texts[d]) > 4096 || rng.Intn(3) == 0 {
			b = min(len(texts[d]), a+1+rng.Intn(6))
			for b < len(texts[d]) && (texts[d][b]&0xC0) == 0x80 {
				b++
			}
			text = ""
		}
		r, err := m.OffsetsRange(a, b, encoding.UTF16)
		if err != nil {
			t.Fatalf("edit %d: %v", n, err)
		}
		versions[d]++
		e.ChangeAt(uris[d], versions[d], fakeeditor.Replace(fakeeditor.At(r.Start.Line, r.Start.Character), fakeeditor.At(r.End.Line, r.End.Character), text))
		texts[d] = texts[d][:a] + text + texts[d][b:]
		if n%every == 0 {
			m := encoding.NewMapper(texts[d])
			line := rng.Intn(m.LineCount())
			p, _ := m.OffsetPosition(m.LineStart(line), encoding.UTF16)
			items, err := e.Inline(uris[d], fakeeditor.At(p.Line, p.Character))
			if err != nil {
				t.Fatalf("request %d: %v", requests, err)
			}
			requests++
			shown += len(items)
		}
		if kills > 0 && n%(edits/kills) == edits/kills/2 {
			e.mu.Lock()
			kill := e.kill
			e.mu.Unlock()
			kill()
		}
		if n == edits/2 {
			heapMid = heap()
		}
	}
	for i, u := range uris {
		e.waitMirror(u, texts[i])
	}
	heapEnd := heap()
	e.mu.Lock()
	starts := e.starts
	e.mu.Unlock()
	t.Logf("soak: %d edits, %d inline requests (%d items shown), %d agent starts, %s; heap after GC: %.1f MB halfway, %.1f MB at the end",
		edits, requests, shown, starts, time.Since(start).Round(time.Millisecond), float64(heapMid)/1e6, float64(heapEnd)/1e6)
	if starts < kills/2 {
		t.Errorf("%d agent starts for %d kills", starts, kills)
	}
	if heapEnd > heapMid+8<<20 {
		t.Errorf("heap grew from %d to %d bytes over the second half of the session", heapMid, heapEnd)
	}
	if shown == 0 {
		t.Error("no suggestion was ever shown")
	}
}
