package model

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent"
)

// todoDoc is a document with two TODOs: the model finishes the first one of the region at each
// request, so that after accepting the first suggestion the next one finishes the second.
const todoDoc = "package p\n\nfunc f() {\n\ta := TODO\n\tb := 1\n\tc := TODO\n}\n"

// todoModel is a chat model's server that finishes the first "TODO" of the region it is shown,
// and records the region of each request (the cursor marker taken out). A request whose region
// hold picks waits until release is closed or its connection is; a closed one's region is sent
// on closed.
type todoModel struct {
	*service
	hold    func(region string) bool
	release chan struct{}
	closed  chan string

	mu      sync.Mutex
	regions []string
}

func newTodoModel(t *testing.T, hold func(region string) bool) *todoModel {
	m := &todoModel{hold: hold, release: make(chan struct{}), closed: make(chan string, 8)}
	m.service = newService(t, m.answer)
	t.Cleanup(func() {
		select {
		case <-m.release:
		default:
			close(m.release)
		}
	})
	return m
}

func (m *todoModel) answer(w http.ResponseWriter, r *http.Request, body []byte) {
	region, answer, ok := finishTodo(body)
	if !ok {
		http.Error(w, "not a chat request with a region", http.StatusBadRequest)
		return
	}
	m.mu.Lock()
	m.regions = append(m.regions, region)
	m.mu.Unlock()
	if m.hold != nil && m.hold(region) {
		select {
		case <-m.release:
		case <-r.Context().Done():
			m.closed <- region
			return
		}
	}
	chatAnswer(answer)(w, r, body)
}

// finishTodo reads the region of a chat request (the cursor marker taken out) and writes the
// model's answer: the region with its first "TODO" finished.
func finishTodo(body []byte) (region, answer string, ok bool) {
	var req struct {
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
	}
	if json.Unmarshal(body, &req) != nil || len(req.Messages) == 0 {
		return "", "", false
	}
	region, ok = between(req.Messages[len(req.Messages)-1].Content, markStart+"\n", markEnd)
	region = strings.ReplaceAll(region, markCursor, "")
	return region, markStart + "\n" + strings.Replace(region, "TODO", "done", 1) + markEnd, ok
}

// asked are the regions of the requests received so far.
func (m *todoModel) asked() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.regions...)
}

// waitAsked waits until the server has received n requests, and returns their regions.
func (m *todoModel) waitAsked(t *testing.T, n int) []string {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(2 * time.Millisecond) {
		if got := m.asked(); len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server got %d requests, want %d", len(m.asked()), n)
		}
	}
}

// todoRequest is a request at text with the cursor after the first "TODO" (or at the start).
func todoRequest(text string) nesagent.Request {
	at := strings.Index(text, "TODO")
	if at < 0 {
		at = 0
	} else {
		at += len("TODO")
	}
	return nesagent.Request{URI: "file:///w/p.go", LanguageID: "go", Text: text, Cursor: at, Trigger: "automatic"}
}

// suggestOne asks eng at req and returns the text its one suggestion makes.
func suggestOne(t *testing.T, eng nesagent.Engine, req nesagent.Request) string {
	t.Helper()
	sugs, err := eng.Suggest(context.Background(), req)
	if err != nil || len(sugs) != 1 {
		t.Fatalf("suggestions %+v, error %v; want one", sugs, err)
	}
	return applyEdits(req.Text, sugs[0].Edits)
}

// atAccept makes req come as a request at the accept of a suggestion before it: the engine
// prefetches from its answer (the first suggestion after typing it does not prefetch from).
func atAccept(eng nesagent.Engine, req nesagent.Request) nesagent.Request {
	e := eng.(*engine)
	e.chain.mu.Lock()
	defer e.chain.mu.Unlock()
	if e.chain.byURI == nil {
		e.chain.byURI = map[string]string{}
	}
	e.chain.byURI[req.URI] = req.Text
	return req
}

// asking reports whether eng has a prefetch registered for uri.
func asking(eng nesagent.Engine, uri string) bool {
	e := eng.(*engine)
	e.prefetched.mu.Lock()
	defer e.prefetched.mu.Unlock()
	return e.prefetched.byURI[uri] != nil
}

// TestPrefetchAnswersTheAccept: after a suggestion of a format that does not stream, the model is
// asked once more, at the text the suggestion makes, with the cursor after it and the suggestion
// as the latest edit of the history; accepting it, the next request is answered with that answer
// and asks the model nothing at that text. The chain goes on from there, and ends with an answer
// that has nothing to show.
func TestPrefetchAnswersTheAccept(t *testing.T) {
	m := newTodoModel(t, nil)
	eng, err := New(Config{URL: m.URL, Model: "fake-coder", Format: "chat", Timeout: 10 * time.Second, Prefetch: true})
	if err != nil {
		t.Fatal(err)
	}
	w := eng.(nesagent.Watcher)
	req := atAccept(eng, todoRequest(todoDoc))
	accepted := suggestOne(t, eng, req)
	if want := strings.Replace(todoDoc, "TODO", "done", 1); accepted != want {
		t.Fatalf("the first suggestion makes %q, want %q", accepted, want)
	}
	regions := m.waitAsked(t, 2)
	if regions[1] != accepted {
		t.Errorf("the prefetch shows the region %q, want the text the suggestion makes", regions[1])
	}
	var prompt struct {
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
	}
	posts := m.posts()
	if err := json.Unmarshal(posts[1].body, &prompt); err != nil || len(prompt.Messages) == 0 {
		t.Fatalf("the prefetch: %s", posts[1].body)
	}
	user := prompt.Messages[len(prompt.Messages)-1].Content
	if !strings.Contains(user, "-\ta := TODO\n+\ta := done\n") {
		t.Errorf("the prefetch does not show the suggestion as the latest edit:\n%s", user)
	}
	if !strings.Contains(user, "\ta := done"+markCursor+"\n") {
		t.Errorf("the prefetch does not have the cursor after the suggestion:\n%s", user)
	}

	// The user accepts: the document changes to that text, and the editor asks there.
	w.DocumentChanged(req.URI, accepted)
	next := todoRequest(accepted)
	next.Recent = nesagent.RecentAfter(nil, todoDoc, strings.Index(todoDoc, "TODO"), strings.Index(todoDoc, "TODO")+4, "done", 1)
	began := time.Now()
	second := suggestOne(t, eng, next)
	if want := strings.Replace(todoDoc, "TODO", "done", 2); second != want {
		t.Fatalf("the next suggestion makes %q, want %q", second, want)
	}
	t.Logf("accept → next suggestion: %v", time.Since(began))
	// The chain: the text the second suggestion makes is prefetched in turn, and has no TODO.
	regions = m.waitAsked(t, 3)
	if !strings.HasSuffix(second, regions[2]) || !strings.Contains(regions[2], "c := done") {
		t.Errorf("the third request shows %q, want the text the second suggestion makes", regions[2])
	}
	for i, r := range regions {
		for _, earlier := range regions[:i] {
			if r == earlier {
				t.Errorf("the model was asked twice at the same text %q: %q", r, regions)
			}
		}
	}
	w.DocumentChanged(req.URI, second)
	sugs, quiet, err := eng.(nesagent.Reasoned).SuggestWithReason(context.Background(), todoRequest(second))
	if err != nil || len(sugs) != 0 || quiet == nil || quiet.Rule != RuleNoChange {
		t.Errorf("at the end of the chain: %+v %+v %v, want the prefetched answer: no change", sugs, quiet, err)
	}
	if n := len(m.asked()); n != 3 {
		t.Errorf("%d requests to the model, want 3: one per text", n)
	}
	if asking(eng, req.URI) {
		t.Error("something is prefetched after an answer with nothing to show")
	}
}

// TestPrefetchDroppedByAnotherChange: a change to any other text than the suggestion makes
// cancels what was prefetched (the server sees its connection closed), and the request at that
// text asks the model anew.
func TestPrefetchDroppedByAnotherChange(t *testing.T) {
	ahead := strings.Replace(todoDoc, "TODO", "done", 1)
	m := newTodoModel(t, func(region string) bool { return region == ahead })
	eng, err := New(Config{URL: m.URL, Model: "fake-coder", Format: "chat", Timeout: 10 * time.Second, Prefetch: true})
	if err != nil {
		t.Fatal(err)
	}
	req := atAccept(eng, todoRequest(todoDoc))
	suggestOne(t, eng, req)
	m.waitAsked(t, 2) // the prefetch, held
	typed := strings.Replace(todoDoc, "b := 1", "b := 12", 1)
	eng.(nesagent.Watcher).DocumentChanged(req.URI, typed)
	select {
	case r := <-m.closed:
		if r != ahead {
			t.Errorf("closed the request at %q", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the prefetch was not cancelled by a change to another text")
	}
	if asking(eng, req.URI) {
		t.Error("what was prefetched is still kept after a change to another text")
	}
	if got := suggestOne(t, eng, todoRequest(typed)); got != strings.Replace(typed, "TODO", "done", 1) {
		t.Errorf("after typing on, the suggestion makes %q", got)
	}
	if regions := m.asked(); len(regions) < 3 || regions[2] != typed {
		t.Errorf("the requests %q, want the third at the text typed", regions)
	}
}

// TestPrefetchOnePerDocument: at most one request is prefetched for a document: asking again at
// the same text (another request, not an accept) cancels the one prefetched before the model is
// asked, and one is prefetched again after its answer; another document has its own.
func TestPrefetchOnePerDocument(t *testing.T) {
	m := newTodoModel(t, func(region string) bool { return !strings.HasPrefix(region, "package p\n\nfunc f() {\n\ta := TODO") })
	eng, err := New(Config{URL: m.URL, Model: "fake-coder", Format: "chat", Timeout: 10 * time.Second, Prefetch: true})
	if err != nil {
		t.Fatal(err)
	}
	req := atAccept(eng, todoRequest(todoDoc))
	suggestOne(t, eng, req)
	m.waitAsked(t, 2)
	suggestOne(t, eng, atAccept(eng, req)) // the editor asks again at the same place
	select {
	case <-m.closed:
	case <-time.After(10 * time.Second):
		t.Fatal("asking again did not cancel the prefetch")
	}
	regions := m.waitAsked(t, 4)
	if regions[2] != todoDoc || regions[3] != regions[1] {
		t.Errorf("requests %q, want the text, the text prefetched, the text again, then it prefetched again", regions)
	}
	other := req
	other.URI = "file:///w/q.go"
	suggestOne(t, eng, atAccept(eng, other))
	m.waitAsked(t, 6)
	if !asking(eng, req.URI) || !asking(eng, other.URI) {
		t.Error("each document should have its own prefetch")
	}
	select {
	case r := <-m.closed:
		t.Errorf("another document's prefetch cancelled one at %q", r)
	case <-time.After(50 * time.Millisecond):
	}
}

// TestPrefetchOffForBilledServices: a hosted service (here Mercury) and a coding agent asked
// through prompts are not prefetched, unless PrefetchBilled says so; without Prefetch, no server
// is.
func TestPrefetchOffForBilledServices(t *testing.T) {
	req := fimCase("file:///w/greet.js", "function greet(name) {\n  return \"hello \" |\n}\n")
	for _, tc := range []struct {
		name  string
		cfg   Config
		ahead bool
	}{
		{"mercury", Config{Model: "mercury-edit", Format: "mercury", APIKey: testKey, Prefetch: true}, false},
		{"mercury with PrefetchBilled", Config{Model: "mercury-edit", Format: "mercury", APIKey: testKey, Prefetch: true, PrefetchBilled: true}, true},
		{"a local chat model without Prefetch", Config{Model: "fake-coder", Format: "chat"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newService(t, chatAnswer(markStart+"\nfunction greet(name) {\n  return \"hello \" + name;\n}\n"+markEnd))
			tc.cfg.URL = srv.URL
			eng, err := New(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			suggestOne(t, eng, atAccept(eng, req))
			// What is prefetched is registered before the answer is returned.
			if got := asking(eng, req.URI); got != tc.ahead {
				t.Fatalf("prefetched: %v, want %v", got, tc.ahead)
			}
			if tc.ahead {
				for deadline := time.Now().Add(10 * time.Second); len(srv.posts()) < 2; time.Sleep(2 * time.Millisecond) {
					if time.Now().After(deadline) {
						t.Fatal("the service was not prefetched")
					}
				}
			} else if n := len(srv.posts()); n != 1 {
				t.Errorf("%d requests, want 1", n)
			}
		})
	}
	t.Run("a coding agent", func(t *testing.T) {
		c := &fixedCompleter{answer: Answer{Text: markStart + "\nfunction greet(name) {\n  return \"hello \" + name;\n}\n" + markEnd}}
		eng, err := WithCompleter(Config{Prefetch: true}, c)
		if err != nil {
			t.Fatal(err)
		}
		suggestOne(t, eng, atAccept(eng, req))
		if asking(eng, req.URI) {
			t.Error("a coding agent asked through prompts was prefetched")
		}
	})
}

// TestPrefetchAfterAStreamedAnswerOfOneHunk: a streamed Zeta 2 answer is prefetched after too,
// once it has ended with nothing more than its first change (not while the rest may still hold
// another); the request at the accept is then answered from what was prefetched.
func TestPrefetchAfterAStreamedAnswerOfOneHunk(t *testing.T) {
	z := &streamingZeta2{held: 8, release: make(chan struct{}), closed: make(chan struct{}), edit: func(lines []string) []string {
		out := append([]string(nil), lines...)
		for i, l := range out {
			out[i] = strings.Replace(l, "g(1)", "h(1)", 1)
		}
		return out
	}}
	srv := newService(t, z.serve)
	eng, err := New(Config{URL: srv.URL, Model: "zeta-2", Server: "openai", Timeout: 20 * time.Second, Prefetch: true})
	if err != nil {
		t.Fatal(err)
	}
	text := earlyDoc()
	req := nesagent.Request{URI: "file:///w/p.go", Text: text, Cursor: strings.Index(text, "v1 :=")}
	accepted := suggestOne(t, eng, atAccept(eng, req)) // the early answer, while the server holds the rest
	if asking(eng, req.URI) {
		t.Error("prefetched while the rest of the answer may still hold another change")
	}
	close(z.release)
	for deadline := time.Now().Add(10 * time.Second); len(srv.posts()) < 2; time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("nothing prefetched once the answer ended with nothing more")
		}
	}
	var body struct {
		Prompt string `json:"prompt"`
	}
	json.Unmarshal(srv.posts()[1].body, &body)
	if !strings.Contains(body.Prompt, "v1 := h(1)") {
		t.Errorf("the prefetch is not at the accepted text:\n%s", body.Prompt)
	}
	eng.(nesagent.Watcher).DocumentChanged(req.URI, accepted)
	sugs, quiet, err := eng.(nesagent.Reasoned).SuggestWithReason(context.Background(), nesagent.Request{URI: req.URI, Text: accepted, Cursor: req.Cursor})
	// At the accepted text the model changes nothing: the prefetched answer says so.
	if err != nil || len(sugs) != 0 || quiet == nil || quiet.Rule != RuleNoChange {
		t.Errorf("at the accept: %+v %+v %v, want no change", sugs, quiet, err)
	}
	if n := len(srv.posts()); n != 2 {
		t.Errorf("%d requests, want 2: the answer, and the one prefetched", n)
	}
}

// TestAskedAheadGivesWay: a prefetch does not start while another request to the model
// is in flight for the document.
func TestAskedAheadGivesWay(t *testing.T) {
	var g generations
	_, end, ok := g.start(context.Background(), "file:///w/a.go", false)
	if !ok {
		t.Fatal("a request was refused")
	}
	if ctx, _, ok := g.start(context.Background(), "file:///w/a.go", true); ok || ctx.Err() == nil {
		t.Error("a prefetch started while another was in flight")
	}
	if _, end2, ok := g.start(context.Background(), "file:///w/b.go", true); !ok {
		t.Error("a prefetch for another document was refused")
	} else {
		end2()
	}
	end()
	if _, end3, ok := g.start(context.Background(), "file:///w/a.go", true); !ok {
		t.Error("a prefetch was refused with the model idle")
	} else {
		end3()
	}
}

// TestAcceptedRequest: the prefetch has the text the suggestion makes, the cursor where
// it puts it, and the suggestion as the latest edit, grouped with the growing one when it goes on
// from it (a completion at the cursor), as the agent groups the edits it hears of.
func TestAcceptedRequest(t *testing.T) {
	text := "x := fo\n"
	req := nesagent.Request{URI: "file:///w/a.go", Text: text, Cursor: 7,
		Recent: []nesagent.Edit{{Start: 6, Old: "", New: "o", OldLines: "x := f", NewLines: "x := fo", LineStart: 0, Seq: 3}}}
	at := 9
	next := acceptedRequest(req, nesagent.Suggestion{Edits: []nesagent.TextEdit{{Start: 7, End: 7, NewText: "o()"}}, Cursor: &at})
	if next.Text != "x := foo()\n" || next.Cursor != 9 {
		t.Errorf("text %q cursor %d", next.Text, next.Cursor)
	}
	if len(next.Recent) != 1 || next.Recent[0].New != "oo()" || next.Recent[0].NewLines != "x := foo()" || next.Recent[0].OldLines != "x := f" {
		t.Errorf("history %+v, want the completion grouped with the typing it goes on from", next.Recent)
	}
	elsewhere := acceptedRequest(req, nesagent.Suggestion{Edits: []nesagent.TextEdit{{Start: 0, End: 1, NewText: "y"}}})
	if elsewhere.Text != "y := fo\n" || elsewhere.Cursor != 1 {
		t.Errorf("text %q cursor %d, want the cursor after the edit", elsewhere.Text, elsewhere.Cursor)
	}
	if n := len(elsewhere.Recent); n != 2 || elsewhere.Recent[1].Old != "x" || elsewhere.Recent[1].New != "y" || elsewhere.Recent[1].Seq != 4 {
		t.Errorf("history %+v, want a new edit after the one before", elsewhere.Recent)
	}
}

// TestPrefetchOnlyAtAnAccept: the first suggestion after typing is not prefetched from (a user
// who types on would throw the prefetch away); once it is accepted, the answer at the accept is.
func TestPrefetchOnlyAtAnAccept(t *testing.T) {
	m := newTodoModel(t, nil)
	eng, err := New(Config{URL: m.URL, Model: "fake-coder", Format: "chat", Timeout: 10 * time.Second, Prefetch: true})
	if err != nil {
		t.Fatal(err)
	}
	req := todoRequest(todoDoc)
	accepted := suggestOne(t, eng, req)
	if asking(eng, req.URI) {
		t.Fatal("prefetched from the first suggestion after typing")
	}
	if n := len(m.asked()); n != 1 {
		t.Fatalf("the server got %d requests, want the editor's only", n)
	}
	eng.(nesagent.Watcher).DocumentChanged(req.URI, accepted)
	suggestOne(t, eng, todoRequest(accepted))
	if regions := m.waitAsked(t, 3); strings.Contains(regions[2], "TODO") {
		t.Errorf("the prefetch at the accept shows %q, want both TODOs done", regions[2])
	}
}
