package acpside

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// Bounds of the agent's input queue.
const (
	// DefaultStuckAfter is how long an agent may read nothing of what waits for it before the
	// bridge treats it as stuck (Options.StuckAfter).
	DefaultStuckAfter = 30 * time.Second
	// maxQueued bounds what waits for the agent: more than this, and it is treated as stuck.
	maxQueued = 256 << 20
	// writeChunk is how much of a message is written at once: each chunk written is progress.
	writeChunk = 16 << 10
	// Pending whole texts collapse only once the agent is behind: it has read nothing for
	// collapseAfter, or more than collapseBytes wait. An agent that keeps up gets every change.
	collapseAfter = time.Second
	collapseBytes = 1 << 20
	// lazyWait is the longest a lazy message (WriteLazy) waits for one to go with; batchBytes
	// bounds the messages written together in one write.
	lazyWait   = 50 * time.Millisecond
	batchBytes = 64 << 10
)

// outQueue is the agent's input. The SDK's writes (one message each) are queued and written, in
// order, by one goroutine, so that an agent that reads slowly or not at all never holds the
// caller: the editor's read loop only enqueues. Once the agent is behind, pending full texts of
// one document (a full-sync agent's didChange) collapse to the newest. An agent that has read
// nothing for stuckAfter while something waits for it, or that lets more than maxQueued bytes pile up, is reported once to
// onStuck.
type outQueue struct {
	w          io.WriteCloser
	stuckAfter time.Duration
	onStuck    func(reason string)

	mu       sync.Mutex
	wake     chan struct{} // closed and replaced when a frame arrives or the queue closes
	frames   []*outFrame
	bytes    int
	writing  bool      // a frame is being written
	progress time.Time // when the agent last took bytes, or the current write began
	closed   bool
	err      error
	stuck    bool
	dropped  int // full texts replaced by a newer one before they were written
	done     chan struct{}
	// eager counts the pending frames that are not lazy; flush is set once a lazy frame has
	// waited lazyWait (lazyTimer, while lazyArmed). The one timer is kept and re-armed: nearly
	// every answer leaves a lazy frame behind it.
	eager     int
	flush     bool
	lazyTimer *time.Timer
	lazyArmed bool
}

type outFrame struct {
	b []byte
	// What learn found, once it has run (known): uri is the document a document/* notification
	// is about; full is set for a didChange that carries the whole text; request for a message
	// that expects an answer. Only a queue that is behind needs to know, so a message is read
	// for it only then: an agent that keeps up costs no second reading of every whole text.
	known   bool
	uri     string
	full    bool
	request bool
	lazy    bool // WriteLazy's: it waits for a message to go with, at most lazyWait
}

func newOutQueue(w io.WriteCloser, stuckAfter time.Duration, onStuck func(string)) *outQueue {
	if stuckAfter <= 0 {
		stuckAfter = DefaultStuckAfter
	}
	q := &outQueue{w: w, stuckAfter: stuckAfter, onStuck: onStuck, wake: make(chan struct{}), done: make(chan struct{})}
	q.lazyTimer = time.AfterFunc(time.Hour, q.flushLazy)
	q.lazyTimer.Stop()
	go q.run()
	go q.watch()
	return q
}

var errQueueClosed = errors.New("the agent's input is closed")

// Write queues one message; it never waits for the agent.
func (q *outQueue) Write(p []byte) (int, error) {
	return q.enqueue(&outFrame{b: append([]byte(nil), p...)})
}

// writeOwned queues one message that the queue may keep (no copy): the bridge's own, made for it.
func (q *outQueue) writeOwned(p []byte) error {
	_, err := q.enqueue(&outFrame{b: p})
	return err
}

// WriteLazy queues a message that need not go at once (the end of a suggestion: nes/reject,
// nes/accept), and keeps p (the bridge's own, made for it): it goes with the next message, in the
// same write, or after lazyWait. One write and one wake-up of the writer fewer for nearly every
// answer, and the agent gets it in the same place among the messages.
func (q *outQueue) WriteLazy(p []byte) error {
	_, err := q.enqueue(&outFrame{b: p, lazy: true, known: true})
	return err
}

func (q *outQueue) enqueue(f *outFrame) (int, error) {
	p := f.b
	q.mu.Lock()
	behind := q.behind()
	q.mu.Unlock()
	if behind {
		f.learn() // outside the lock: the writer goes on meanwhile
	}
	q.mu.Lock()
	if q.closed {
		err := q.err
		q.mu.Unlock()
		if err == nil {
			err = errQueueClosed
		}
		return 0, err
	}
	if f.known && f.full {
		// The newest whole text replaces a pending one of the same document, unless something
		// that refers to the document, or any request, lies between them.
		for i := len(q.frames) - 1; i >= 0; i-- {
			g := q.frames[i]
			g.learn()
			if g.uri == f.uri && g.full {
				q.bytes -= len(g.b)
				q.frames = append(q.frames[:i], q.frames[i+1:]...)
				q.eager-- // a whole text is never lazy
				q.dropped++
				break
			}
			if g.uri == f.uri || g.request {
				break
			}
		}
	}
	q.frames = append(q.frames, f)
	q.bytes += len(f.b)
	over := q.bytes > maxQueued && !q.stuck
	if over {
		q.stuck = true
	}
	switch {
	case !f.lazy:
		q.eager++
		close(q.wake)
		q.wake = make(chan struct{})
	case !q.lazyArmed:
		q.lazyArmed = true
		q.lazyTimer.Reset(lazyWait)
	}
	q.mu.Unlock()
	if over {
		q.onStuck(fmt.Sprintf("more than %d MiB waits for it to read", maxQueued>>20))
	}
	return len(p), nil
}

// behind reports whether the agent is behind: it has read nothing for collapseAfter while a
// write waits, or more than collapseBytes wait. The lock is held.
func (q *outQueue) behind() bool {
	return q.bytes >= collapseBytes || q.writing && time.Since(q.progress) >= collapseAfter
}

// learn reads what the queue needs to know of a message (outFrame), once.
func (f *outFrame) learn() {
	if f.known {
		return
	}
	f.known = true
	id, method := envelopeHead(f.b)
	f.request = id != "" && method != ""
	if !strings.HasPrefix(method, "document/") {
		return
	}
	var m struct {
		Params struct {
			URI            string `json:"uri"`
			ContentChanges []struct {
				Range json.RawMessage `json:"range"`
			} `json:"contentChanges"`
		} `json:"params"`
	}
	if json.Unmarshal(f.b, &m) != nil {
		return
	}
	f.uri = m.Params.URI
	c := m.Params.ContentChanges
	// A change without a range is the whole text: it replaces whatever came before it.
	f.full = method == "document/didChange" && len(c) > 0 && len(c[len(c)-1].Range) == 0
}

// run is the single writer.
func (q *outQueue) run() {
	defer close(q.done)
	var batch []byte
	for {
		q.mu.Lock()
		for (q.eager == 0 && !q.flush || len(q.frames) == 0) && !q.closed {
			wake := q.wake
			q.mu.Unlock()
			<-wake
			q.mu.Lock()
		}
		if q.closed {
			q.mu.Unlock()
			return
		}
		// The first frame, and those after it while they are small: one write.
		b, n := q.frames[0].b, 1
		for ; n < len(q.frames) && len(b)+len(q.frames[n].b) <= batchBytes; n++ {
			if n == 1 {
				batch = append(batch[:0], b...)
			}
			batch = append(batch, q.frames[n].b...)
			b = batch
		}
		for _, f := range q.frames[:n] {
			if !f.lazy {
				q.eager--
			}
		}
		q.frames = q.frames[n:]
		if q.eager == 0 && len(q.frames) == 0 {
			q.flush = false
			if q.lazyArmed {
				q.lazyTimer.Stop()
				q.lazyArmed = false
			}
		}
		q.writing, q.progress = true, time.Now()
		q.mu.Unlock()
		err := q.write(b)
		if cap(batch) > keepLineBuffer {
			batch = nil
		}
		q.mu.Lock()
		q.writing = false
		q.bytes -= len(b)
		if err != nil {
			q.closed, q.err, q.frames = true, err, nil
		}
		q.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// flushLazy lets the lazy frames go: they have waited lazyWait.
func (q *outQueue) flushLazy() {
	q.mu.Lock()
	q.lazyArmed = false
	if !q.closed && len(q.frames) > 0 {
		q.flush = true
		close(q.wake)
		q.wake = make(chan struct{})
	}
	q.mu.Unlock()
}

// write writes b in chunks, noting the progress after each.
func (q *outQueue) write(b []byte) error {
	for len(b) > 0 {
		n := min(len(b), writeChunk)
		if _, err := q.w.Write(b[:n]); err != nil {
			return err
		}
		b = b[n:]
		q.mu.Lock()
		q.progress = time.Now()
		q.mu.Unlock()
	}
	return nil
}

// watch reports an agent that has read nothing for stuckAfter while a write waits on it.
func (q *outQueue) watch() {
	tick := time.NewTicker(max(q.stuckAfter/8, 10*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-q.done:
			return
		case now := <-tick.C:
			q.mu.Lock()
			stuck := q.writing && !q.stuck && now.Sub(q.progress) > q.stuckAfter
			if stuck {
				q.stuck = true
			}
			q.mu.Unlock()
			if stuck {
				q.onStuck(fmt.Sprintf("it read nothing of its input for %s", q.stuckAfter))
			}
		}
	}
}

// Close drops what waits, closes the agent's input (which ends a write in progress) and waits for
// the writer to stop.
func (q *outQueue) Close() error {
	q.mu.Lock()
	q.lazyTimer.Stop()
	already := q.closed
	q.closed, q.frames = true, nil
	close(q.wake)
	q.wake = make(chan struct{})
	q.mu.Unlock()
	err := q.w.Close()
	<-q.done
	if already {
		return nil
	}
	return err
}

// stalled reports whether a write has waited on the agent for longer than d.
func (q *outQueue) stalled(d time.Duration) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.writing && time.Since(q.progress) > d
}

// collapsed returns how many pending whole texts were replaced by newer ones.
func (q *outQueue) collapsed() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.dropped
}
