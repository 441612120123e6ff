package model

import (
	"context"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent"
)

// lineSpec says how a format's answer reads line by line while it streams: the region rewritten,
// after lead (what the prompt already wrote of it: Sweep v2's prefill), up to the first of ends,
// with the cursor marker (if any) taken out; a first line that is noEdit says there is no edit.
type lineSpec struct {
	lead   string
	ends   []string
	cursor string
	noEdit string
}

// Streamer is a Completer that can hand over the answer's text as the model writes it.
type Streamer interface {
	CompleteStream(ctx context.Context, p Prompt, onText func(string)) (Answer, error)
}

// earlyReader reads a streaming rewrite and says when its first changed hunk is complete.
type earlyReader struct {
	spec   *lineSpec
	feed   lineFeed
	hunks  *hunkReader
	region []string
	final  bool // the region ends with a line break
	lines  int  // lines read
	ended  bool
}

func newEarlyReader(spec *lineSpec, region string) *earlyReader {
	r := &earlyReader{spec: spec, hunks: newHunkReader(region), region: regionLines(region), final: strings.HasSuffix(region, "\n")}
	r.feed.write(spec.lead) // its whole lines are the region's own: nothing to compare
	r.hunks.add(regionLines(spec.lead[:strings.LastIndexByte(spec.lead, '\n')+1])...)
	return r
}

// write reads a piece of the stream and returns the hunks it completes.
func (r *earlyReader) write(piece string) []streamHunk {
	if r.ended {
		return nil
	}
	var out []streamHunk
	for _, line := range r.feed.write(piece) {
		if r.lines == 0 && r.spec.noEdit != "" && strings.TrimSpace(line) == r.spec.noEdit {
			r.ended = true
			return nil
		}
		r.lines++
		if line != "" { // a blank line holds no marker: a stream of them costs little each
			for _, end := range r.spec.ends {
				if i := strings.Index(line, end); i >= 0 {
					// The rewrite's end: what is left is read whole, when the answer is.
					r.ended = true
					return out
				}
			}
			if r.spec.cursor != "" {
				line = strings.ReplaceAll(line, r.spec.cursor, "")
			}
		}
		out = append(out, r.hunks.add(line)...)
	}
	return out
}

// apply is the region's text with a hunk made.
func (r *earlyReader) apply(hk streamHunk) string {
	lines := append(append(append([]string(nil), r.region[:hk.regionStart]...), hk.lines...), r.region[hk.regionEnd:]...)
	text := strings.Join(lines, "\n")
	if r.final && len(lines) > 0 {
		text += "\n"
	}
	return text
}

// suggestStreaming asks the model with its answer streamed, and answers as soon as the first
// changed hunk is complete and passes the quality gate (or with the whole answer, when that comes
// first). The stream goes on after the early answer: the rest of the answer is kept as the next
// suggestion, offered without asking the model again once the early one is accepted
// (follows.take); the stream is closed when the document changes otherwise (DocumentChanged), or
// the next request for it does not find it accepted. ahead is engine.ask's.
func (e *engine) suggestStreaming(ctx context.Context, req nesagent.Request, in *input, c *call, st Streamer, ahead bool) ([]nesagent.Suggestion, *nesagent.Quiet, error) {
	// The generation outlives the request: it is ended by the next one for the document, by a
	// change, or by the request itself while nothing was answered.
	gctx, end, ok := e.gens.start(context.WithoutCancel(ctx), req.URI, ahead)
	if !ok {
		return nil, nil, errBusy
	}
	if err := gctx.Err(); err != nil {
		end()
		return nil, nil, err
	}
	type result struct {
		s     nesagent.Suggestion
		quiet *nesagent.Quiet
		err   error
		bytes int // the answer's
	}
	early := make(chan nesagent.Suggestion, 1)
	final := make(chan result, 1)
	er := newEarlyReader(c.lines, in.text[c.start:c.end])
	var answered atomic.Bool
	go func() {
		defer end()
		answer, err := st.CompleteStream(gctx, c.Prompt, func(piece string) {
			if answered.Load() {
				return
			}
			for _, hk := range er.write(piece) {
				if s, q := e.judge(in, c, er.apply(hk), -1); q == nil {
					answered.Store(true)
					early <- s
					return
				}
				// A first hunk the gate keeps back: the whole answer decides.
				answered.Store(true)
				return
			}
		})
		if err != nil {
			final <- result{err: err}
			return
		}
		s, q := e.read(in, c, answer)
		final <- result{s: s, quiet: q, bytes: len(answer.Text)}
	}()
	whole := func(r result) ([]nesagent.Suggestion, *nesagent.Quiet, error) {
		end() // the answer is whole: the model is idle
		if r.err != nil {
			return nil, nil, r.err
		}
		if r.quiet != nil {
			e.dropped(ctx, req.URI, r.quiet, r.bytes)
			return nil, r.quiet, nil
		}
		return []nesagent.Suggestion{r.s}, nil, nil
	}
	select {
	case r := <-final:
		return whole(r)
	case s := <-early:
		select {
		case r := <-final: // the whole answer came as well: it is the better one
			return whole(r)
		default:
		}
		f, ok := e.follows.begin(ctx, req.URI, req.Text, applyEdits(req.Text, s.Edits), end)
		if !ok {
			end() // abandoned (a prefetch dropped) while the answer came: the stream is closed
			return nil, nil, ctx.Err()
		}
		go func() {
			r := <-final
			end()
			e.follows.finish(f, req.Text, r.s, r.quiet == nil && r.err == nil)
		}()
		e.cfg.Log.Debug("model: answered with the first change while the model writes the rest", "uri", req.URI, "format", e.format.Name())
		return []nesagent.Suggestion{s}, nil, nil
	case <-ctx.Done():
		end() // the request was abandoned before any answer: the stream is closed
		return nil, nil, ctx.Err()
	}
}

// follows are the streams that go on after an early answer, one per document at most.
type follows struct {
	mu    sync.Mutex
	byURI map[string]*follow
}

// follow is the rest of an answer after its first change was shown.
type follow struct {
	uri    string
	base   string // the document the answer is for
	expect string // the document once the early suggestion is accepted
	stop   func() // closes the stream
	done   chan struct{}
	next   *nesagent.Suggestion // the rest of the answer, from expect; nil for none
	// ended says the answer has ended (next is known); lost, that the document changed to
	// another text than base and expect, or a newer answer replaced this one; then runs once the
	// answer has ended with nothing more (follows.after). All three under follows.mu.
	ended, lost bool
	then        func(lost func() bool)
}

// begin registers the stream going on after the early answer to a request at base, the document
// reading expect once that answer is accepted, unless ctx (the request's) has ended: then
// nothing is registered (ok false), and the caller closes the stream. A prefetch's ctx ends when
// its document is closed (engine.DocumentClosed), which checks the follows again after it.
func (fs *follows) begin(ctx context.Context, uri, base, expect string, stop func()) (_ *follow, ok bool) {
	f := &follow{uri: uri, base: base, expect: expect, stop: stop, done: make(chan struct{})}
	fs.mu.Lock()
	if ctx.Err() != nil {
		fs.mu.Unlock()
		return nil, false
	}
	if fs.byURI == nil {
		fs.byURI = map[string]*follow{}
	}
	if old := fs.byURI[uri]; old != nil {
		old.lost = true // superseded: the newer answer's suggestion is the one to follow
		old.stop()
	}
	fs.byURI[uri] = f
	fs.mu.Unlock()
	return f, true
}

// finish keeps what the whole answer changes beyond the early suggestion (ok: the whole answer
// is a suggestion), as a suggestion of the document as it reads once that is accepted. With
// nothing more to offer, what waits for the end (then) runs before the request at expect is let
// through.
func (fs *follows) finish(f *follow, original string, whole nesagent.Suggestion, ok bool) {
	defer close(f.done)
	var next *nesagent.Suggestion
	if full := applyEdits(original, whole.Edits); ok && full != f.expect {
		p := encoding.CommonPrefix(f.expect, full)
		p = strings.LastIndexByte(f.expect[:p], '\n') + 1
		s := encoding.CommonSuffix(f.expect[p:], full[p:])
		if edits := regionEdits(f.expect[p:len(f.expect)-s], full[p:len(full)-s], p); len(edits) > 0 {
			next = &nesagent.Suggestion{Edits: edits, Cursor: whole.Cursor}
		}
	}
	fs.mu.Lock()
	f.next, f.ended = next, true
	then := f.then
	fs.mu.Unlock()
	if then != nil && next == nil {
		then(func() bool { return fs.lostFor(f) })
	}
}

// after arranges for then to run once the answer of uri's follow expecting expect has ended with
// nothing more to offer (given follows.lostFor of it), and says whether there is such a follow
// whose answer is not known to have ended so (false: nothing was arranged).
func (fs *follows) after(uri, expect string, then func(lost func() bool)) bool {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	f := fs.byURI[uri]
	switch {
	case f == nil || f.expect != expect:
		return false
	case !f.ended:
		f.then = then
		return true
	}
	return f.next != nil
}

// lostFor reports whether the follow is lost: the document changed to another text than its
// own, or a newer answer replaced it.
func (fs *follows) lostFor(f *follow) bool {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return f.lost
}

// take answers a request with the rest of an answer when the document reads as it does once the
// early suggestion was accepted, waiting for the stream to end (or the request); any other text
// but the answer's own closes the stream. The rest stays for the next request at that text until
// the document changes: a request that took it may yet be cancelled (the editor asked again
// elsewhere), and its answer lost with it.
func (fs *follows) take(ctx context.Context, req nesagent.Request) (*nesagent.Suggestion, bool) {
	fs.mu.Lock()
	f := fs.byURI[req.URI]
	switch {
	case f == nil:
	case req.Text == f.expect:
	case req.Text == f.base:
		// A request at the text the answer is for (one prefetched, still at the text before its
		// accept): the stream goes on, unless that request asks the model again.
		f = nil
	default:
		f.lost = true
		delete(fs.byURI, req.URI)
		fs.mu.Unlock()
		f.stop()
		return nil, false
	}
	fs.mu.Unlock()
	if f == nil {
		return nil, false
	}
	select {
	case <-f.done:
	case <-ctx.Done():
		return nil, false // the stream goes on for the next request at this text
	}
	return f.next, f.next != nil
}

// changed closes the stream of a document whose text is no longer what it was nor what the
// early suggestion makes it (the user typed on rather than accepting).
func (fs *follows) changed(uri, text string) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if f := fs.byURI[uri]; f != nil && text != f.expect && text != f.base {
		f.lost = true
		f.stop()
		delete(fs.byURI, uri)
	}
}

// closed closes the stream of a closed document: the rest of its answer is lost.
func (fs *follows) closed(uri string) {
	fs.mu.Lock()
	f := fs.byURI[uri]
	if f != nil {
		f.lost = true
		delete(fs.byURI, uri)
	}
	fs.mu.Unlock()
	if f != nil {
		f.stop()
	}
}

// DocumentChanged is told each change of a document (nesagent.Watcher): a stream going on for it
// is closed, and what was prefetched for it dropped, unless the change was the suggestion
// accepted.
func (e *engine) DocumentChanged(uri, text string) {
	e.follows.changed(uri, text)
	e.ahead.changed(uri, text)
}

// applyEdits is text with non-overlapping edits made.
func applyEdits(text string, edits []nesagent.TextEdit) string {
	es := append([]nesagent.TextEdit(nil), edits...)
	sort.Slice(es, func(i, j int) bool { return es[i].Start > es[j].Start })
	for _, e := range es {
		if e.Start < 0 || e.End > len(text) || e.Start > e.End {
			continue
		}
		text = text[:e.Start] + e.NewText + text[e.End:]
	}
	return text
}
