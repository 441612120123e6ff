package model

import (
	"context"
	"sort"
	"strings"
	"sync"

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

// apply is the region's text with hunks made (complete, in order, none overlapping).
func (r *earlyReader) apply(hks ...streamHunk) string {
	var lines []string
	at := 0
	for _, hk := range hks {
		lines = append(append(lines, r.region[at:hk.regionStart]...), hk.lines...)
		at = hk.regionEnd
	}
	lines = append(lines, r.region[at:]...)
	text := strings.Join(lines, "\n")
	if r.final && len(lines) > 0 {
		text += "\n"
	}
	return text
}

// suggestStreaming asks the model with its answer streamed, and answers as soon as the first
// changed hunk is complete and passes the quality gate (or with the whole answer, when that comes
// first). The stream goes on after the early answer (a follow): each further hunk confirmed joins
// what was confirmed before into one suggestion, which a request at the same text and cursor is
// answered with (follows.grownAt, the suggestion marked Growing while the model writes); once the
// answer has ended, such a request gets the whole answer, as without streaming. What the whole
// answer changes beyond a suggestion answered is the next suggestion once that one is accepted,
// offered without asking the model again (follows.take). The stream is closed when the document
// changes otherwise (DocumentChanged), or the next request for it is elsewhere. prefetch is
// engine.ask's.
func (e *engine) suggestStreaming(ctx context.Context, req nesagent.Request, in *input, c *call, st Streamer, prefetch bool) ([]nesagent.Suggestion, *nesagent.Quiet, error) {
	// The generation outlives the request: it is ended by the next one for the document, by a
	// change, or by the request itself while nothing was answered.
	gctx, end, ok := e.gens.start(context.WithoutCancel(ctx), req.URI, prefetch)
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
	f := newFollow(req.URI, req.Text, req.Cursor, end)
	var (
		hunks []streamHunk // confirmed, the first one answered early
		held  bool         // the first hunk was kept back: the whole answer decides
	)
	go func() {
		defer end()
		answer, err := st.CompleteStream(gctx, c.Prompt, func(piece string) {
			if held {
				return
			}
			for _, hk := range er.write(piece) {
				hunks = append(hunks, hk)
				s, q := e.judge(in, c, er.apply(hunks...), -1)
				switch {
				case len(hunks) > 1 && q == nil:
					e.follows.grew(f, s)
				case len(hunks) == 1 && q == nil:
					early <- s
				case len(hunks) == 1:
					held = true
					return
				}
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
		if !e.follows.begin(ctx, f, applyEdits(req.Text, s.Edits)) {
			end() // abandoned (a prefetch dropped) while the answer came: the stream is closed
			return nil, nil, ctx.Err()
		}
		go func() {
			r := <-final
			end()
			if r.quiet != nil && r.err == nil {
				e.dropped(context.WithoutCancel(ctx), req.URI, r.quiet, r.bytes)
			}
			e.follows.finish(f, r.s, r.quiet, r.quiet == nil && r.err == nil)
		}()
		e.cfg.Log.Debug("model: answered with the first change while the model writes the rest", "uri", req.URI, "format", e.format.Name())
		s.Growing = true
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

// follow is an answer going on after its first change was shown. Its fields but the first four
// are under follows.mu.
type follow struct {
	uri    string
	base   string // the document the answer is for
	cursor int    // the request's cursor in base
	stop   func() // closes the stream
	done   chan struct{}
	// expects are the texts of the document once a suggestion answered of it is accepted.
	expects map[string]bool
	// grown is what is confirmed so far beyond the early suggestion, as one suggestion of base
	// (nil: nothing yet); rev counts its changes, told is the rev last answered; more is closed
	// (and made anew) at each change and at the end.
	grown     *nesagent.Suggestion
	rev, told int
	more      chan struct{}
	// whole is the whole answer's suggestion of base once it has ended (nil: none; quiet says
	// why, when the model answered), full the document with it made ("" for none).
	whole *nesagent.Suggestion
	quiet *nesagent.Quiet
	full  string
	// ended says the answer has ended; lost, that the document changed to a text the answer is
	// not for, or a newer answer replaced this one; then runs once the answer has ended with
	// nothing more from thenAt (follows.after).
	ended, lost bool
	then        func(lost func() bool)
	thenAt      string
}

// newFollow is the follow of a stream for a request at base and cursor, closed by stop.
func newFollow(uri, base string, cursor int, stop func()) *follow {
	return &follow{uri: uri, base: base, cursor: cursor, stop: stop, done: make(chan struct{}), more: make(chan struct{}), expects: map[string]bool{}}
}

// begin registers f, whose early answer makes the document read expect once accepted, unless ctx
// (the request's) has ended: then nothing is registered (false), and the caller closes the
// stream. A prefetch's ctx ends when its document is closed (engine.DocumentClosed), which checks
// the follows again after it.
func (fs *follows) begin(ctx context.Context, f *follow, expect string) bool {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if ctx.Err() != nil {
		return false
	}
	if fs.byURI == nil {
		fs.byURI = map[string]*follow{}
	}
	if old := fs.byURI[f.uri]; old != nil {
		old.lost = true // superseded: the newer answer's suggestion is the one to follow
		old.stop()
	}
	f.expects[expect] = true
	fs.byURI[f.uri] = f
	return true
}

// grew records s, everything confirmed of f's answer so far, and wakes who waits for it.
func (fs *follows) grew(f *follow, s nesagent.Suggestion) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	f.grown = &s
	f.rev++
	close(f.more)
	f.more = make(chan struct{})
}

// finish records the whole answer (ok: it is a suggestion; else quiet says why, if the model
// answered). With nothing more to offer from what then waits for, that runs before a request
// at its text is let through.
func (fs *follows) finish(f *follow, whole nesagent.Suggestion, quiet *nesagent.Quiet, ok bool) {
	defer close(f.done)
	fs.mu.Lock()
	f.ended = true
	close(f.more)
	if ok {
		f.whole, f.full = &whole, applyEdits(f.base, whole.Edits)
	} else {
		f.quiet = quiet
	}
	then := f.then
	none := then != nil && f.rest(f.thenAt) == nil
	fs.mu.Unlock()
	if none {
		then(func() bool { return fs.lostFor(f) })
	}
}

// rest is what the whole answer changes beyond the document reading at (a suggestion of f
// accepted), as a suggestion of at; nil for nothing. Under follows.mu, once f has ended.
func (f *follow) rest(at string) *nesagent.Suggestion {
	if f.whole == nil || f.full == at {
		return nil
	}
	p := encoding.CommonPrefix(at, f.full)
	p = strings.LastIndexByte(at[:p], '\n') + 1
	s := encoding.CommonSuffix(at[p:], f.full[p:])
	edits := regionEdits(at[p:len(at)-s], f.full[p:len(f.full)-s], p)
	if len(edits) == 0 {
		return nil
	}
	return &nesagent.Suggestion{Edits: edits, Cursor: f.whole.Cursor}
}

// after arranges for then to run once the answer of uri's follow has ended with nothing more to
// offer once the document reads expect (given follows.lostFor of it), and says whether there is
// such a follow whose answer is not known to have ended so (false: nothing was arranged).
func (fs *follows) after(uri, expect string, then func(lost func() bool)) bool {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	f := fs.byURI[uri]
	switch {
	case f == nil || !f.expects[expect]:
		return false
	case !f.ended:
		f.then, f.thenAt = then, expect
		return true
	}
	return f.rest(expect) != nil
}

// lostFor reports whether the follow is lost: the document changed to another text than its
// own, or a newer answer replaced it.
func (fs *follows) lostFor(f *follow) bool {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return f.lost
}

// grownAt answers a request at the very text and cursor of a follow's request (ok): with more of
// the answer than was answered last, at once, or else once more is confirmed; once the answer
// has ended, with the whole answer (nothing, and why, when it is kept back). A suggestion of an
// answer the model still writes is marked Growing. ok is false for any other request, and for
// one cancelled while it waits.
func (fs *follows) grownAt(ctx context.Context, req nesagent.Request) (_ []nesagent.Suggestion, _ *nesagent.Quiet, ok bool) {
	var waited *follow
	for {
		fs.mu.Lock()
		f := fs.byURI[req.URI]
		if waited != nil && (f != waited || f.lost) {
			// Lost while this request waited (the document changed, a newer answer replaced
			// it): nothing more of it, and no new question to the model for a text gone by.
			fs.mu.Unlock()
			return nil, nil, true
		}
		if f == nil || f.lost || req.Text != f.base || req.Cursor != f.cursor {
			fs.mu.Unlock()
			return nil, nil, false
		}
		switch {
		case f.ended && f.whole != nil:
			f.expects[f.full] = true
			s := *f.whole
			fs.mu.Unlock()
			return []nesagent.Suggestion{s}, nil, true
		case f.ended:
			q := f.quiet
			fs.mu.Unlock()
			if q == nil {
				q = &nesagent.Quiet{Rule: RuleNoChange, Why: "the answer ended without a suggestion"}
			}
			return nil, q, true
		case f.grown != nil && f.rev > f.told:
			f.told = f.rev
			s := *f.grown
			f.expects[applyEdits(f.base, s.Edits)] = true
			fs.mu.Unlock()
			s.Growing = true
			return []nesagent.Suggestion{s}, nil, true
		}
		more := f.more
		waited = f
		fs.mu.Unlock()
		select {
		case <-more:
		case <-ctx.Done():
			return nil, nil, false
		}
	}
}

// take answers a request with the rest of an answer when the document reads as a suggestion
// answered of it makes it, waiting for the stream to end (or the request); any other text but
// the answer's own closes the stream. The rest stays for the next request at that text until
// the document changes: a request that took it may yet be cancelled (the editor asked again
// elsewhere), and its answer lost with it.
func (fs *follows) take(ctx context.Context, req nesagent.Request) (*nesagent.Suggestion, bool) {
	fs.mu.Lock()
	f := fs.byURI[req.URI]
	switch {
	case f == nil:
	case f.expects[req.Text]:
	case req.Text == f.base:
		// A request at the text the answer is for, elsewhere (or one prefetched, still at the
		// text before its accept): the stream goes on, unless that request asks the model again.
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
	fs.mu.Lock()
	defer fs.mu.Unlock()
	next := f.rest(req.Text)
	return next, next != nil
}

// changed closes the stream of a document whose text is no longer what it was nor what a
// suggestion answered of it makes it (the user typed on rather than accepting).
func (fs *follows) changed(uri, text string) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if f := fs.byURI[uri]; f != nil && !f.expects[text] && text != f.base {
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
	e.prefetched.changed(uri, text)
}

// applyEdits is text with non-overlapping edits made. Unlike nesagent's applyCheckedEdits, it
// takes edits nothing has checked against text: one out of the text, or ending before it
// starts, is skipped, and overlapping ones are made from the last to the first, never a panic.
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
