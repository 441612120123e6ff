package model

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent"
)

// streamingZeta2 is a Zeta 2 server that streams its rewrite of the region line by line: the
// lines up to held first, then nothing until release is closed, then the rest and the end marker.
// closed is closed when the client closes the stream.
type streamingZeta2 struct {
	edit    func(lines []string) []string
	held    int
	release chan struct{}
	closed  chan struct{}
}

func (z *streamingZeta2) serve(w http.ResponseWriter, r *http.Request, body []byte) {
	if r.URL.Path == "/api/version" {
		http.NotFound(w, r)
		return
	}
	var req struct {
		Prompt string `json:"prompt"`
		Stream bool   `json:"stream"`
	}
	json.Unmarshal(body, &req)
	region, ok := between(req.Prompt, seedStartMarker, seedSeparator)
	if !ok || !req.Stream {
		http.Error(w, "not a streamed Zeta 2 prompt", http.StatusBadRequest)
		return
	}
	region = strings.ReplaceAll(region, zetaCursor, "")
	lines := z.edit(strings.Split(strings.TrimSuffix(region, "\n"), "\n"))
	w.Header().Set("Content-Type", "text/event-stream")
	send := func(text string) {
		b, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"text": text}}})
		fmt.Fprintf(w, "data: %s\n\n", b)
		w.(http.Flusher).Flush()
	}
	for i, l := range lines {
		if i == z.held {
			select {
			case <-z.release:
			case <-r.Context().Done():
				close(z.closed)
				return
			}
		}
		// A line in two pieces, as tokens come.
		send(l[:len(l)/2])
		send(l[len(l)/2:] + "\n")
	}
	send(">>>>>>> UPDATED\n")
	fmt.Fprint(w, "data: {\"choices\":[{\"text\":\"\",\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
}

func between(s, a, b string) (string, bool) {
	i := strings.Index(s, a)
	if i < 0 {
		return "", false
	}
	j := strings.Index(s[i+len(a):], b)
	if j < 0 {
		return "", false
	}
	return s[i+len(a) : i+len(a)+j], true
}

// startStreaming starts a streamingZeta2 that changes each line of earlyDoc's region with change
// and holds the rest after held lines, and an engine asking it; req is a request at line 4.
func startStreaming(t *testing.T, held int, change func(string) string) (*streamingZeta2, *service, nesagent.Engine, string, nesagent.Request) {
	t.Helper()
	z := &streamingZeta2{held: held, release: make(chan struct{}), closed: make(chan struct{}), edit: func(lines []string) []string {
		out := append([]string(nil), lines...)
		for i, l := range out {
			out[i] = change(l)
		}
		return out
	}}
	srv := newService(t, z.serve)
	eng, err := New(Config{URL: srv.URL, Model: "zeta-2", Server: "openai", Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	text := earlyDoc()
	return z, srv, eng, text, nesagent.Request{URI: "file:///w/p.go", Text: text, Cursor: strings.Index(text, "v1 :=")}
}

// earlyDoc is a file whose 21 lines all fit in Zeta 2's region.
func earlyDoc() string {
	var b strings.Builder
	b.WriteString("package p\n\nfunc f() {\n")
	for i := 0; i < 18; i++ {
		fmt.Fprintf(&b, "\tv%d := g(%d)\n", i, i)
	}
	b.WriteString("}\n")
	return b.String()
}

// TestEarlyAnswerWhileTheModelWrites: a Zeta 2 answer streamed line by line is answered with its
// first changed hunk once the two lines after it match the region again, while the server still
// holds the rest; accepting it, the next request gets the answer's second hunk without asking
// the model again.
func TestEarlyAnswerWhileTheModelWrites(t *testing.T) {
	z, srv, eng, text, req := startStreaming(t, 8, func(l string) string {
		return strings.Replace(strings.Replace(l, "g(1)", "h(1)", 1), "g(15)", "h(15)", 1)
	})
	type got struct {
		sugs []nesagent.Suggestion
		err  error
	}
	done := make(chan got, 1)
	go func() {
		sugs, err := eng.Suggest(context.Background(), req)
		done <- got{sugs, err}
	}()
	var first got
	select {
	case first = <-done:
	case <-time.After(10 * time.Second):
		close(z.release)
		t.Fatal("no answer while the server held the rest of its answer")
	}
	if first.err != nil || len(first.sugs) != 1 {
		t.Fatalf("the early answer: %+v, %v", first.sugs, first.err)
	}
	accepted := applyEdits(text, first.sugs[0].Edits)
	if accepted != strings.Replace(text, "g(1)", "h(1)", 1) {
		t.Fatalf("the early answer makes %q", accepted)
	}
	// The user accepts it: the stream goes on; the server writes the rest.
	eng.(nesagent.Watcher).DocumentChanged(req.URI, accepted)
	next := req
	next.Text = accepted
	// A request at the accepted text that is cancelled while the server holds the rest (the
	// editor asked again elsewhere) leaves the rest for the next request.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	if sugs, _ := eng.Suggest(ctx, next); len(sugs) != 0 {
		t.Errorf("a request cancelled while the rest is held: %+v", sugs)
	}
	cancel()
	close(z.release)
	sugs, err := eng.Suggest(context.Background(), next)
	if err != nil || len(sugs) != 1 {
		t.Fatalf("the next suggestion: %+v, %v", sugs, err)
	}
	if got := applyEdits(accepted, sugs[0].Edits); got != strings.Replace(accepted, "g(15)", "h(15)", 1) {
		t.Errorf("the next suggestion makes %q", got)
	}
	if n := len(srv.posts()); n != 1 {
		t.Errorf("%d requests to the model, want 1: the next suggestion is the same answer's", n)
	}
}

// TestTypingClosesTheStream: after an early answer, typing something else closes the stream (the
// server sees its connection closed) and the next request asks the model anew.
func TestTypingClosesTheStream(t *testing.T) {
	z := &streamingZeta2{held: 8, release: make(chan struct{}), closed: make(chan struct{}), edit: func(lines []string) []string {
		out := append([]string(nil), lines...)
		out[4] = strings.Replace(out[4], "g(1)", "h(1)", 1)
		return out
	}}
	srv := newService(t, z.serve)
	eng, _ := New(Config{URL: srv.URL, Model: "zeta-2", Server: "openai", Timeout: 20 * time.Second})
	text := earlyDoc()
	req := nesagent.Request{URI: "file:///w/p.go", Text: text, Cursor: strings.Index(text, "v1 :=")}
	sugs, err := eng.Suggest(context.Background(), req)
	if err != nil || len(sugs) != 1 {
		t.Fatalf("the early answer: %+v, %v", sugs, err)
	}
	eng.(nesagent.Watcher).DocumentChanged(req.URI, strings.Replace(text, "v0", "w0", 1))
	select {
	case <-z.closed:
	case <-time.After(10 * time.Second):
		close(z.release)
		t.Fatal("the stream was not closed when the user typed on")
	}
}

// TestNoStreamAsksWhole: with NoStream the request asks for no stream, as before.
func TestNoStreamAsksWhole(t *testing.T) {
	srv := newService(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		var req struct {
			Stream bool `json:"stream"`
		}
		json.Unmarshal(body, &req)
		if req.Stream {
			t.Error("a streamed request with NoStream")
		}
		fmt.Fprint(w, `{"choices":[{"text":"NO_EDITS\n>>>>>>> UPDATED\n","finish_reason":"stop"}]}`)
	})
	eng, _ := New(Config{URL: srv.URL, Model: "zeta-2", Server: "openai", NoStream: true})
	text := earlyDoc()
	if _, err := eng.Suggest(context.Background(), nesagent.Request{URI: "file:///w/p.go", Text: text, Cursor: 20}); err != nil {
		t.Fatal(err)
	}
}

// TestEarlyAnswerSweep: Sweep's answer (its window rewritten, ended by <|file_sep|>) is read the
// same way: its first change is answered while the server holds the rest.
func TestEarlyAnswerSweep(t *testing.T) {
	release, closed := make(chan struct{}), make(chan struct{})
	srv := newService(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		if r.URL.Path == "/api/version" {
			http.NotFound(w, r)
			return
		}
		var req struct {
			Prompt string `json:"prompt"`
		}
		json.Unmarshal(body, &req)
		window, ok := between(req.Prompt, "<|file_sep|>current/p.go\n", "<|file_sep|>updated/p.go\n")
		if !ok {
			http.Error(w, "not a Sweep prompt", http.StatusBadRequest)
			return
		}
		lines := strings.Split(strings.TrimSuffix(window, "\n"), "\n")
		w.Header().Set("Content-Type", "text/event-stream")
		for i, l := range lines {
			if i == len(lines)-2 {
				select {
				case <-release:
				case <-r.Context().Done():
					close(closed)
					return
				}
			}
			l = strings.Replace(l, "g(1)", "h(1)", 1)
			b, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"text": l + "\n"}}})
			fmt.Fprintf(w, "data: %s\n\n", b)
			w.(http.Flusher).Flush()
		}
		fmt.Fprint(w, "data: {\"choices\":[{\"text\":\"<|file_sep|>\",\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	})
	eng, err := New(Config{URL: srv.URL, Model: "sweep-next-edit-1.5b", Server: "openai", Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	text := earlyDoc()
	req := nesagent.Request{URI: "file:///w/p.go", Text: text, Cursor: strings.Index(text, "v1 :=")}
	done := make(chan []nesagent.Suggestion, 1)
	go func() {
		sugs, err := eng.Suggest(context.Background(), req)
		if err != nil {
			t.Error(err)
		}
		done <- sugs
	}()
	select {
	case sugs := <-done:
		if len(sugs) != 1 || applyEdits(text, sugs[0].Edits) != strings.Replace(text, "g(1)", "h(1)", 1) {
			t.Errorf("the early answer: %+v", sugs)
		}
	case <-time.After(10 * time.Second):
		t.Error("no answer while the server held the rest of its answer")
	}
	close(release)
}

// TestEarlyReaderWorkIsLinear: a Zeta 2 answer of 4096 blank lines, a piece each, then of the
// region's lines over and over, costs the early reader a few line comparisons a line: the
// document's next request does not wait behind a rescan at every line.
func TestEarlyReaderWorkIsLinear(t *testing.T) {
	text := earlyDoc()
	c, err := zeta2Format{}.Build(prepare(nesagent.Request{URI: "file:///w/p.go", Text: text, Cursor: strings.Index(text, "v1 :=")}), limits{cfg: &Config{}})
	if err != nil {
		t.Fatal(err)
	}
	region := text[c.start:c.end]
	for _, tc := range []struct {
		name, answer string
	}{
		{"blank lines", strings.Repeat("\n", 4096)},
		{"the region over and over", strings.Replace(region, "g(1)", "h(1)", 1) + strings.Repeat(region, 200)},
	} {
		er := newEarlyReader(c.lines, region)
		var hunks []streamHunk
		for _, piece := range strings.SplitAfter(tc.answer, "\n") {
			hunks = append(hunks, er.write(piece)...)
		}
		lines := strings.Count(tc.answer, "\n")
		if limit := hunkWork * (len(regionLines(region)) + lines); er.hunks.compared > limit {
			t.Errorf("%s: %d lines compared for %d lines of answer, want at most %d", tc.name, er.hunks.compared, lines, limit)
		}
		if tc.name == "blank lines" && len(hunks) != 0 {
			t.Errorf("%s: hunks %v before the answer's end", tc.name, hunks)
		}
		if tc.name != "blank lines" && (len(hunks) == 0 || er.apply(hunks[0]) != strings.Replace(region, "g(1)", "h(1)", 1)) {
			t.Errorf("%s: hunks %v", tc.name, hunks)
		}
	}
}

// TestStreamedAnswerGrowsAtTheSameTextAndCursor: after the early answer, a request at the same
// text and cursor gets everything confirmed so far (marked Growing while the model writes), then
// waits for more; once the answer has ended, it gets the whole answer, as without streaming. Each
// suggestion answered, accepted, leaves the rest for the next request. One request to the model.
func TestStreamedAnswerGrowsAtTheSameTextAndCursor(t *testing.T) {
	change := func(s string) string {
		for _, n := range []string{"1", "5", "15"} {
			s = strings.Replace(s, "g("+n+")", "h("+n+")", 1)
		}
		return s
	}
	z, srv, eng, text, req := startStreaming(t, 12, change)
	ask := func(what string) nesagent.Suggestion {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		sugs, err := eng.Suggest(ctx, req)
		if err != nil || len(sugs) != 1 {
			t.Fatalf("%s: %+v, %v", what, sugs, err)
		}
		return sugs[0]
	}
	early := ask("the early answer")
	if got := applyEdits(text, early.Edits); got != strings.Replace(text, "g(1)", "h(1)", 1) || !early.Growing {
		t.Fatalf("the early answer (growing %v) makes %q", early.Growing, got)
	}
	grown := ask("asked again while the server holds the rest")
	grownText := strings.Replace(strings.Replace(text, "g(1)", "h(1)", 1), "g(5)", "h(5)", 1)
	if got := applyEdits(text, grown.Edits); got != grownText || !grown.Growing {
		t.Fatalf("asked again (growing %v): makes %q, want the first two changes", grown.Growing, got)
	}
	// Nothing more is confirmed: the next request waits for it.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	if sugs, _ := eng.Suggest(ctx, req); len(sugs) != 0 {
		t.Errorf("asked again with nothing more written: %+v", sugs)
	}
	cancel()
	close(z.release)
	whole := ask("asked again once the server wrote the rest")
	for i := 0; whole.Growing && i < 5; i++ {
		whole = ask("asked again until the answer has ended")
	}
	if got := applyEdits(text, whole.Edits); got != change(text) || whole.Growing {
		t.Fatalf("the settled answer (growing %v) makes %q, want the whole answer", whole.Growing, got)
	}
	if again := ask("asked again after the end"); applyEdits(text, again.Edits) != change(text) {
		t.Error("a request after the end did not get the whole answer again")
	}
	// The grown suggestion accepted: the rest of the answer follows it.
	eng.(nesagent.Watcher).DocumentChanged(req.URI, grownText)
	next := req
	next.Text = grownText
	sugs, err := eng.Suggest(context.Background(), next)
	if err != nil || len(sugs) != 1 || applyEdits(grownText, sugs[0].Edits) != change(text) {
		t.Fatalf("after accepting the grown suggestion: %+v, %v", sugs, err)
	}
	if n := len(srv.posts()); n != 1 {
		t.Errorf("%d requests to the model, want 1", n)
	}
}
