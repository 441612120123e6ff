package model

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent"
)

// waitNoGeneration waits until the engine has no generation in flight (one ends once its request
// or stream has).
func waitNoGeneration(t *testing.T, e *engine) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if _, _, _, _, gens := engineHolds(e); gens == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("a generation is still in flight for a closed document")
		}
	}
}

// TestClosingStopsTheStream: closing a document whose answer still streams after its early
// suggestion closes the stream (the server sees its connection closed), and the engine keeps
// nothing of it: no stream, no accept chain, no generation.
func TestClosingStopsTheStream(t *testing.T) {
	z := &streamingZeta2{held: 8, release: make(chan struct{}), closed: make(chan struct{}), edit: func(lines []string) []string {
		out := append([]string(nil), lines...)
		for i, l := range out {
			out[i] = strings.Replace(strings.Replace(l, "g(1)", "h(1)", 1), "g(15)", "h(15)", 1)
		}
		return out
	}}
	srv := newService(t, z.serve)
	eng, err := New(Config{URL: srv.URL, Model: "zeta-2", Server: "openai", Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	e := eng.(*engine)
	text := earlyDoc()
	req := nesagent.Request{URI: "file:///w/p.go", Text: text, Cursor: strings.Index(text, "v1 :=")}
	sugs, err := eng.Suggest(context.Background(), req)
	if err != nil || len(sugs) != 1 {
		close(z.release)
		t.Fatalf("the early answer: %+v, %v", sugs, err)
	}
	if follows, _, chain, _, gens := engineHolds(e); follows != 1 || chain != 1 || gens != 1 {
		close(z.release)
		t.Fatalf("before the close: %d streams, %d accept chains, %d generations; want one of each", follows, chain, gens)
	}
	eng.(nesagent.Forgetter).DocumentClosed(req.URI)
	select {
	case <-z.closed:
	case <-time.After(10 * time.Second):
		close(z.release)
		t.Fatal("the stream was not closed with its document")
	}
	waitNoGeneration(t, e)
	if follows, ahead, chain, words, gens := engineHolds(e); follows+ahead+chain+words+gens != 0 {
		t.Errorf("after the close: %d streams, %d prefetches, %d accept chains, %d word indexes, %d generations; want none",
			follows, ahead, chain, words, gens)
	}
}

// TestClosingCancelsThePrefetch: closing a document cancels what is prefetched for it (the server
// sees its connection closed) and drops its accept chain; the word index of another open document
// stays until that one is closed too.
func TestClosingCancelsThePrefetch(t *testing.T) {
	ahead := strings.Replace(todoDoc, "TODO", "done", 1)
	m := newTodoModel(t, func(region string) bool { return region == ahead })
	eng, err := New(Config{URL: m.URL, Model: "fake-coder", Format: "chat", Timeout: 10 * time.Second, Prefetch: true})
	if err != nil {
		t.Fatal(err)
	}
	e := eng.(*engine)
	req := todoRequest(todoDoc)
	other := nesagent.OpenDocument{URI: "file:///w/q.go", LanguageID: "go", Text: "package p\n\nfunc g() int { return f() }\n", Visit: -1}
	req.Open = []nesagent.OpenDocument{other}
	suggestOne(t, eng, atAccept(eng, req))
	m.waitAsked(t, 2) // the prefetch, held
	if _, prefetches, chain, words, _ := engineHolds(e); prefetches != 1 || chain != 1 || words != 1 {
		t.Fatalf("before the close: %d prefetches, %d accept chains, %d word indexes; want one of each", prefetches, chain, words)
	}
	f := eng.(nesagent.Forgetter)
	f.DocumentClosed(req.URI)
	select {
	case r := <-m.closed:
		if r != ahead {
			t.Errorf("closed the request at %q", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the prefetch was not cancelled by the close")
	}
	waitNoGeneration(t, e)
	if asking(eng, req.URI) || e.chain.met(req.URI, ahead) {
		t.Error("the prefetch or the accept chain of the closed document is kept")
	}
	if follows, prefetches, chain, words, _ := engineHolds(e); follows+prefetches+chain != 0 || words != 1 {
		t.Errorf("after the close: %d streams, %d prefetches, %d accept chains, %d word indexes; want only the other document's index",
			follows, prefetches, chain, words)
	}
	f.DocumentClosed(other.URI)
	if _, _, _, words, _ := engineHolds(e); words != 0 {
		t.Errorf("%d word indexes after the other document closed too, want none", words)
	}
}

// TestClosingEndsTheGenerationInFlight: a request to the model in flight for a document that
// closes is aborted (the server sees its connection closed) and shows nothing.
func TestClosingEndsTheGenerationInFlight(t *testing.T) {
	m := newTodoModel(t, func(string) bool { return true })
	eng, err := New(Config{URL: m.URL, Model: "fake-coder", Format: "chat", Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	e := eng.(*engine)
	req := todoRequest(todoDoc)
	type answer struct {
		sugs []nesagent.Suggestion
		err  error
	}
	done := make(chan answer, 1)
	go func() {
		sugs, err := eng.Suggest(context.Background(), req)
		done <- answer{sugs, err}
	}()
	m.waitAsked(t, 1)
	eng.(nesagent.Forgetter).DocumentClosed(req.URI)
	select {
	case <-m.closed:
	case <-time.After(10 * time.Second):
		t.Fatal("the request to the model was not aborted by the close")
	}
	select {
	case a := <-done:
		if len(a.sugs) != 0 {
			t.Errorf("a suggestion for a closed document: %+v", a.sugs)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the request did not end with its document")
	}
	waitNoGeneration(t, e)
	if follows, ahead, chain, words, gens := engineHolds(e); follows+ahead+chain+words+gens != 0 {
		t.Errorf("after the close: %d streams, %d prefetches, %d accept chains, %d word indexes, %d generations; want none",
			follows, ahead, chain, words, gens)
	}
}

// TestAFollowOfAnEndedRequestIsNotKept: a stream whose early answer comes once its request has
// ended (a prefetch its document's close cancelled) is not kept as a follow: a close checks the
// follows before it cancels the prefetch, and follows.begin after.
func TestAFollowOfAnEndedRequestIsNotKept(t *testing.T) {
	var fs follows
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if ok := fs.begin(ctx, newFollow("file:///w/a.go", "a", 0, func() {}), "b"); ok || len(fs.byURI) != 0 {
		t.Errorf("begin with an ended request: %v, %d kept", ok, len(fs.byURI))
	}
	if ok := fs.begin(context.Background(), newFollow("file:///w/a.go", "a", 0, func() {}), "b"); !ok || len(fs.byURI) != 1 {
		t.Error("begin with a live request kept nothing")
	}
	stopped := false
	fs.byURI["file:///w/a.go"].stop = func() { stopped = true }
	fs.closed("file:///w/a.go")
	if !stopped || len(fs.byURI) != 0 {
		t.Errorf("closed: stream stopped %v, %d kept", stopped, len(fs.byURI))
	}
}
