package lspside

import (
	"context"
	"sync"
	"time"
)

// docRequests owns what the editor's requests hold for each open document: the nes/suggest in
// flight for it (its cancel, whose it is, when it was asked for), the position of its last
// request, whether it is kept from the agent for its size; and which document the user is in. Its
// lock is its own, and nothing else is taken while it is held.
type docRequests struct {
	mu     sync.Mutex
	docs   map[string]*docRequest
	seq    uint64 // the last nes/suggest's number
	active string // the document the user is in ("": none known)
	// told: the editor says which document the user enters (a focus notification came). Until it
	// does, the user is in the document they last changed, or asked in (focus.go).
	told bool
	// passing is the document the message being read names without the user being in it (an
	// automatic code action: editors ask for every visible document), "" for any other message.
	// It is set as each message is read, before its handler runs (Server.reading).
	passing string
	// off: automatic suggestions are off for every document without a switch of its own.
	off bool
	// changed, when set, is called after what the status shows may have changed (the document the
	// user is in, a request begun or ended, a switch); it must not block.
	changed func()
}

// switchState is a document's own switch for automatic suggestions.
type switchState int8

const (
	switchUnset switchState = iota // the global switch decides
	switchOn
	switchOff
)

// docRequest is one document's state; docRequests drops it when it holds nothing.
type docRequest struct {
	// suggest cancels the nes/suggest in flight (nil: none); suggestSeq says which one it is,
	// suggestAt when it was asked for.
	suggest    context.CancelFunc
	suggestSeq uint64
	suggestAt  time.Time
	// askedAt is when the nes/suggest in flight went to the agent (zero: not yet); askTimer fires
	// askingAfter later, when the status shows it (askShown, until the document's latest
	// nes/suggest is done). A quicker answer changes nothing the status shows: no poke at all.
	askedAt  time.Time
	askTimer *time.Timer
	askShown bool
	// cursor is the byte offset of the last request's position, when hasCursor.
	cursor    int
	hasCursor bool
	// withheld: the document is too large to send to the agent.
	withheld bool
	// sw is the document's own switch; it outlives the document's closing, for as long as the
	// bridge runs.
	sw switchState
}

func newDocRequests() *docRequests { return &docRequests{docs: map[string]*docRequest{}} }

// get is uri's state, made when missing. The caller holds mu.
func (d *docRequests) get(uri string) *docRequest {
	r, ok := d.docs[uri]
	if !ok {
		r = &docRequest{}
		d.docs[uri] = r
	}
	return r
}

// tidy drops uri's state when it holds nothing. The caller holds mu.
func (d *docRequests) tidy(uri string) {
	if r, ok := d.docs[uri]; ok && r.suggest == nil && !r.hasCursor && !r.withheld && r.sw == switchUnset {
		delete(d.docs, uri)
	}
}

// beginSuggest registers the nes/suggest about to be sent for uri, cancelling the one still in
// flight for it (whose editor request then gets an empty result, and whose ids, should the agent
// answer anyway, end as cancelled); burst says that one was asked for less than coalesce ago.
// done unregisters it. A request whose ctx has ended already registers and cancels nothing.
func (d *docRequests) beginSuggest(ctx context.Context, uri string, coalesce time.Duration) (_ context.Context, burst bool, done func()) {
	cctx, burst, _, done := d.begin(ctx, uri, coalesce, false)
	return cctx, burst, done
}

// begin is beginSuggest, and with yield, beginFollow.
func (d *docRequests) begin(ctx context.Context, uri string, coalesce time.Duration, yield bool) (_ context.Context, burst, ok bool, done func()) {
	cctx, cancel := context.WithCancel(ctx)
	now := time.Now()
	d.mu.Lock()
	if ctx.Err() != nil || yield && d.docs[uri] != nil && d.docs[uri].suggest != nil {
		// Cancelled before it was registered (a request asked ahead that the editor's own
		// request ended as it started): it supersedes nothing, least of all that request.
		d.mu.Unlock()
		cancel()
		return cctx, false, false, func() {}
	}
	r := d.get(uri)
	if r.suggest != nil {
		r.suggest()
		burst = now.Sub(r.suggestAt) < coalesce
	}
	d.seq++
	seq := d.seq
	r.suggest, r.suggestSeq, r.suggestAt, r.askedAt = cancel, seq, now, time.Time{}
	r.stopAskTimer()
	d.mu.Unlock()
	return cctx, burst, true, func() {
		d.mu.Lock()
		shown := false
		if r, ok := d.docs[uri]; ok && r.suggestSeq == seq {
			r.suggest, r.askedAt = nil, time.Time{}
			r.stopAskTimer()
			shown, r.askShown = r.askShown, false
			d.tidy(uri)
		}
		d.mu.Unlock()
		cancel()
		if shown {
			d.notify() // the status said "asking"
		}
	}
}

// beginFollow registers a nes/suggest that follows an answer the model still writes
// (growing.go), unless another nes/suggest for uri is in flight (ok false): a newer request
// cancels it as it cancels any, and it cancels none. done unregisters it.
func (d *docRequests) beginFollow(ctx context.Context, uri string) (_ context.Context, ok bool, done func()) {
	cctx, _, ok, done := d.begin(ctx, uri, 0, true)
	return cctx, ok, done
}

// stopAskTimer stops the asking timer, if any. The caller holds mu.
func (r *docRequest) stopAskTimer() {
	if r.askTimer != nil {
		r.askTimer.Stop()
		r.askTimer = nil
	}
}

// notify calls changed, when set. The caller does not hold mu.
func (d *docRequests) notify() {
	if d.changed != nil {
		d.changed()
	}
}

// asking records that the nes/suggest registered for uri now goes to the agent. Should it still be
// there askingAfter later, the status is told.
func (d *docRequests) asking(uri string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	r, ok := d.docs[uri]
	if !ok || r.suggest == nil {
		return
	}
	r.askedAt = time.Now()
	seq := r.suggestSeq
	r.stopAskTimer()
	r.askTimer = time.AfterFunc(askingAfter, func() {
		d.mu.Lock()
		r, ok := d.docs[uri]
		still := ok && r.suggest != nil && r.suggestSeq == seq
		if still {
			r.askShown = true
		}
		d.mu.Unlock()
		if still {
			d.notify()
		}
	})
}

// askingSince is when the nes/suggest in flight for uri went to the agent, if one did.
func (d *docRequests) askingSince(uri string) (time.Time, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if r, ok := d.docs[uri]; ok && r.suggest != nil && !r.askedAt.IsZero() {
		return r.askedAt, true
	}
	return time.Time{}, false
}

// reading records what the message being read says of where the user is: the document it names
// without the user being in it ("": none), and whether it is a focus notification.
func (d *docRequests) reading(passing string, focus bool) {
	d.mu.Lock()
	d.passing = passing
	d.told = d.told || focus
	d.mu.Unlock()
}

// followsChanges reports whether a change of uri moves the user there: the editor says nothing of
// the focus, and the user is elsewhere.
func (d *docRequests) followsChanges(uri string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return !d.told && d.active != uri
}

// enter records that the user is in uri, a document the bridge keeps no state for (one kept
// from the agent), unless the message being read names it in passing.
func (d *docRequests) enter(uri string) {
	d.mu.Lock()
	if d.passing != "" && uri == d.passing {
		d.mu.Unlock()
		return
	}
	changed := d.active != uri
	d.active = uri
	d.mu.Unlock()
	if changed {
		d.notify()
	}
}

// focus records uri as the document the user is in, with the cursor; a cursor below 0 is the
// document's last known one (0 when none), at most length. It returns the cursor recorded.
func (d *docRequests) focus(uri string, cursor, length int) int {
	d.mu.Lock()
	changed := d.active != uri
	d.active = uri
	r := d.get(uri)
	if cursor >= 0 {
		r.cursor, r.hasCursor = cursor, true
	} else {
		cursor = min(r.cursor, length)
	}
	d.tidy(uri)
	d.mu.Unlock()
	if changed {
		d.notify()
	}
	return cursor
}

// at records a request's position in the document the user is in, and reports false; for
// another document it records nothing and reports true (the caller moves the focus there).
func (d *docRequests) at(uri string, cursor int) (other bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.active != uri {
		return true
	}
	r := d.get(uri)
	r.cursor, r.hasCursor = cursor, true
	return false
}

// inPassing reports whether the message being read names uri without the user being in it.
func (d *docRequests) inPassing(uri string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.passing != "" && uri == d.passing && d.active != uri
}

// activeDoc is the document the user is in, "" when none is known.
func (d *docRequests) activeDoc() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.active
}

// lastCursor is the byte offset of the last request's position in uri, 0 when none.
func (d *docRequests) lastCursor(uri string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	if r, ok := d.docs[uri]; ok {
		return r.cursor
	}
	return 0
}

// withhold marks uri as kept from the agent for its size; already says it was.
func (d *docRequests) withhold(uri string) (already bool) {
	defer d.notify()
	d.mu.Lock()
	defer d.mu.Unlock()
	r := d.get(uri)
	already, r.withheld = r.withheld, true
	return already
}

// isWithheld reports whether uri is kept from the agent for its size.
func (d *docRequests) isWithheld(uri string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	r, ok := d.docs[uri]
	return ok && r.withheld
}

// release forgets that uri was kept from the agent (closed, or small enough again).
func (d *docRequests) release(uri string) {
	defer d.notify()
	d.mu.Lock()
	defer d.mu.Unlock()
	if r, ok := d.docs[uri]; ok {
		r.withheld = false
		d.tidy(uri)
	}
}

// closed forgets uri's position, and that the user is in it; its switch stays.
func (d *docRequests) closed(uri string) {
	defer d.notify()
	d.mu.Lock()
	defer d.mu.Unlock()
	if r, ok := d.docs[uri]; ok {
		r.cursor, r.hasCursor = 0, false
		d.tidy(uri)
	}
	if d.active == uri {
		d.active = ""
	}
}

// automatic reports whether automatic suggestions are on for uri: its own switch, else the
// global one.
func (d *docRequests) automatic(uri string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.automaticLocked(uri)
}

func (d *docRequests) automaticLocked(uri string) bool {
	if r, ok := d.docs[uri]; ok && r.sw != switchUnset {
		return r.sw == switchOn
	}
	return !d.off
}

// Switch operations (setSwitch's op).
const (
	switchEnable  = "enable"
	switchDisable = "disable"
	switchToggle  = "toggle"
)

// setSwitch turns automatic suggestions on, off, or the other way (op) for uri, or for every
// document when uri is "". The global switch clears no document's own. It returns whether they
// are now on for uri (for "": the global switch).
func (d *docRequests) setSwitch(uri, op string) (on bool) {
	defer d.notify()
	d.mu.Lock()
	defer d.mu.Unlock()
	if uri == "" {
		switch op {
		case switchEnable:
			d.off = false
		case switchDisable:
			d.off = true
		default:
			d.off = !d.off
		}
		return !d.off
	}
	switch op {
	case switchEnable:
		on = true
	case switchDisable:
		on = false
	default:
		on = !d.automaticLocked(uri)
	}
	r := d.get(uri)
	r.sw = switchOff
	if on {
		r.sw = switchOn
	}
	return on
}

// ownSwitch reports whether uri has a switch of its own (set by a command for that document).
func (d *docRequests) ownSwitch(uri string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	r, ok := d.docs[uri]
	return ok && r.sw != switchUnset
}

// held counts the documents with a position and with a nes/suggest in flight, and says whether a
// document is active (Server.Held).
func (d *docRequests) held() (cursors, suggesting int, active bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, r := range d.docs {
		if r.hasCursor {
			cursors++
		}
		if r.suggest != nil {
			suggesting++
		}
	}
	return cursors, suggesting, d.active != ""
}

// calls are the editor's requests running asynchronously, by id, which $/cancelRequest cancels.
type calls struct {
	mu   sync.Mutex
	byID map[string]context.CancelFunc
}

// track registers a request that is about to run asynchronously and returns its context, which
// cancel(key) cancels, and the function to call when it is done.
func (c *calls) track(key string) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	c.mu.Lock()
	if c.byID == nil {
		c.byID = map[string]context.CancelFunc{}
	}
	c.byID[key] = cancel
	c.mu.Unlock()
	return ctx, func() {
		c.mu.Lock()
		delete(c.byID, key)
		c.mu.Unlock()
		cancel()
	}
}

// cancel cancels the request key names; ok says it was running.
func (c *calls) cancel(key string) (ok bool) {
	c.mu.Lock()
	cancel := c.byID[key]
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	return cancel != nil
}

func (c *calls) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.byID)
}
