package model

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/acpside"
)

// heldStreamer is a Zeta 2 model's Completer that streams, without a server: it rewrites the
// region with its first "g(" made "h(", line by line. A stream for a document under /held/, or
// for a region that already has two "h(" (a prefetch after two accepted suggestions), stops two
// lines after its change (the first hunk is then whole: the early answer) and holds the rest
// until the stream is closed; it is told on the channel held has for its URI, if any, and
// stopped counts the streams closed.
type heldStreamer struct {
	held    sync.Map // URI → chan struct{}
	stopped atomic.Int64
}

func (h *heldStreamer) Complete(ctx context.Context, p Prompt) (Answer, error) {
	return h.CompleteStream(ctx, p, nil)
}

func (h *heldStreamer) CompleteStream(ctx context.Context, p Prompt, onText func(string)) (Answer, error) {
	region, ok := between(p.Raw, seedStartMarker, seedSeparator)
	if !ok {
		return Answer{}, fmt.Errorf("not a Zeta 2 prompt")
	}
	region = strings.ReplaceAll(region, zetaCursor, "")
	hold := strings.Contains(p.URI, "/held/") || strings.Count(region, "h(") >= 2
	lines := strings.Split(strings.TrimSuffix(region, "\n"), "\n")
	changed := -1
	for i, l := range lines {
		if strings.Contains(l, "g(") {
			lines[i], changed = strings.Replace(l, "g(", "h(", 1), i
			break
		}
	}
	var text strings.Builder
	for i, l := range lines {
		if hold && changed >= 0 && i == changed+3 {
			if ch, ok := h.held.Load(p.URI); ok {
				ch.(chan struct{}) <- struct{}{}
			}
			<-ctx.Done()
			h.stopped.Add(1)
			return Answer{}, ctx.Err()
		}
		text.WriteString(l + "\n")
		if onText != nil {
			onText(l + "\n")
		}
	}
	text.WriteString(">>>>>>> UPDATED\n")
	return Answer{Text: text.String()}, nil
}

// closingDoc is a document of about size bytes: calls of g, one a line.
func closingDoc(size int) string {
	var b strings.Builder
	b.WriteString("package p\n\nfunc f() {\n")
	for i := 0; b.Len() < size-2; i++ {
		fmt.Fprintf(&b, "\tv%d := g(%d)\n", i, i)
	}
	b.WriteString("}\n")
	return b.String()
}

// engineHolds counts the documents the engine keeps something for: a stream, a prefetch, an
// accept chain, a word index or a generation in flight.
func engineHolds(e *engine) (follows, ahead, chain, words, gens int) {
	e.follows.mu.Lock()
	follows = len(e.follows.byURI)
	e.follows.mu.Unlock()
	e.prefetched.mu.Lock()
	ahead = len(e.prefetched.byURI)
	e.prefetched.mu.Unlock()
	e.chain.mu.Lock()
	chain = len(e.chain.byURI)
	e.chain.mu.Unlock()
	e.words.mu.Lock()
	words = len(e.words.byURI)
	e.words.mu.Unlock()
	e.gens.mu.Lock()
	gens = len(e.gens.byURI)
	e.gens.mu.Unlock()
	return
}

func heapAlloc() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestClosedDocumentsFreeTheirMemory: through the kit, 10,000 documents are opened, asked a
// suggestion for and closed, by four editors at once (so that each request names the others'
// documents open, and the engine indexes their words); every other document has its suggestion
// accepted and is asked again at the accept (so that the next one is prefetched). The stream held
// after each early answer (of the request, or of the prefetch), the prefetch, the accept chain,
// the word indexes and the generation in flight are freed at each close: the heap after all
// 10,000 is about what it was after the first 1,000, far less than keeping the 9,000 documents
// between would cost, and every stream was closed.
func TestClosedDocumentsFreeTheirMemory(t *testing.T) {
	const (
		docs    = 10000
		first   = 1000
		editors = 4
		// Small documents keep the test quick under -race; the bound is relative to their size
		// (kept, each closed document would cost several times it: its text, the text each
		// suggestion makes, the prompt and answer of the stream held, the prefetch's request).
		docSize = 256
	)
	h := &heldStreamer{}
	eng, err := WithCompleter(Config{Model: "zeta-2", Format: "zeta2", Prefetch: true, PrefetchBilled: true}, h)
	if err != nil {
		t.Fatal(err)
	}
	e := eng.(*engine)
	c := serveKit(t, eng)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	text := closingDoc(docSize)
	at := acp.UnstablePosition{Line: 3, Character: 0}
	suggest := func(uri string, version int) (acpside.Suggestion, error) {
		sugs, err := c.Suggest(ctx, acp.UnstableSuggestNesRequest{Uri: uri, Version: version, Position: at, TriggerKind: "automatic"})
		if err != nil || len(sugs) != 1 || sugs[0].Edit == nil {
			return acpside.Suggestion{}, fmt.Errorf("%s version %d: suggestions %+v, error %v; want one edit", uri, version, sugs, err)
		}
		return sugs[0], nil
	}
	// one opens the document i, asks for a suggestion, accepts it and asks again when i is even,
	// waits for the stream held, and closes it.
	one := func(i int) error {
		uri := fmt.Sprintf("file:///w/d%d.go", i)
		if i%2 == 1 {
			uri = fmt.Sprintf("file:///w/held/d%d.go", i)
		}
		held := make(chan struct{}, 1)
		h.held.Store(uri, held)
		defer h.held.Delete(uri)
		if err := c.DidOpen(ctx, acp.UnstableDidOpenDocumentNotification{Uri: uri, LanguageId: "go", Version: 1, Text: text}); err != nil {
			return err
		}
		s, err := suggest(uri, 1)
		if err != nil {
			return err
		}
		if i%2 == 0 {
			// Accepted: the document reads as the suggestion makes it, and the editor asks there;
			// the answer is prefetched from, and the prefetch's stream is held.
			var changes []acp.UnstableTextDocumentContentChangeEvent
			for _, ed := range s.Edit.Edits {
				r := ed.Range
				changes = append(changes, acp.UnstableTextDocumentContentChangeEvent{Range: &r, Text: ed.NewText})
			}
			if err := c.DidChange(ctx, acp.UnstableDidChangeDocumentNotification{Uri: uri, Version: 2, ContentChanges: changes}); err != nil {
				return err
			}
			if _, err := suggest(uri, 2); err != nil {
				return err
			}
		}
		select {
		case <-held:
		case <-time.After(20 * time.Second):
			return fmt.Errorf("no stream of %s held", uri)
		}
		return c.DidClose(ctx, acp.UnstableDidCloseDocumentNotification{Uri: uri})
	}
	// run has the editors open, ask and close the documents [from, to), then waits until the
	// agent has handled every notification (the SDK handles them in order, a request at once: a
	// request for a document opened last waits for it to open).
	run := func(from, to int) {
		t.Helper()
		var wg sync.WaitGroup
		errs := make(chan error, editors)
		for k := range editors {
			wg.Go(func() {
				for i := from + k; i < to; i += editors {
					if err := one(i); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		const u = "file:///w/sentinel.txt"
		if err := c.DidOpen(ctx, acp.UnstableDidOpenDocumentNotification{Uri: u, Version: 1, Text: "x\n"}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Suggest(ctx, acp.UnstableSuggestNesRequest{Uri: u, Version: 1}); err != nil {
			t.Fatal(err)
		}
		if err := c.DidClose(ctx, acp.UnstableDidCloseDocumentNotification{Uri: u}); err != nil {
			t.Fatal(err)
		}
	}
	run(0, first)
	before := heapAlloc()
	run(first, docs)
	after := heapAlloc()
	growth := int64(after) - int64(before)
	bound := int64(docs-first) * docSize / 10
	t.Logf("heap after %d documents: %d bytes; after %d: %d bytes (%+d; bound %d)", first, before, docs, after, growth, bound)
	if growth > bound {
		t.Errorf("the heap grew by %d bytes from %d to %d closed documents of %d bytes, want less than %d", growth, first, docs, docSize, bound)
	}
	// Every stream was closed, and the engine keeps nothing of the closed documents (a
	// generation ends once its stream has).
	for deadline := time.Now().Add(10 * time.Second); h.stopped.Load() < docs && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
	}
	if n := h.stopped.Load(); n != docs {
		t.Errorf("%d of the %d streams held were closed", n, docs)
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if _, _, _, _, gens := engineHolds(e); gens == 0 {
			break
		}
	}
	if follows, ahead, chain, words, gens := engineHolds(e); follows+ahead+chain+words+gens != 0 {
		t.Errorf("the engine keeps, of closed documents, %d streams, %d prefetches, %d accept chains, %d word indexes, %d generations", follows, ahead, chain, words, gens)
	}
}
