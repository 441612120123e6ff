package acpside

import (
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// The kinds of fault on the agent's wire, in the "fault" field of their log lines and in Event.Fault.
const (
	FaultNotJSON             = "not-json"             // a line that is not JSON
	FaultNotJSONRPC          = "not-jsonrpc"          // JSON that is not a JSON-RPC message
	FaultTooLong             = "too-long"             // a line longer than maxLine
	FaultInvalidUTF8         = "invalid-utf8"         // a request or notification that is not UTF-8
	FaultUnknownNotification = "unknown-notification" // a notification the bridge does not take
	FaultUnknownRequest      = "unknown-request"      // a request the bridge does not implement
	FaultInvalidRequest      = "invalid-request"      // a request with an empty method, or of a notification's method
)

// faultEvery is the least time between two log lines about one kind of fault.
const faultEvery = time.Minute

// maxFaultKinds bounds the kinds logged apart: the methods of unknown messages come from the
// agent. Methods beyond it share one kind per fault, with the method "*".
const maxFaultKinds = 64

// faultLog logs what the agent does wrong on the wire once per kind of fault (and method, for
// unknown methods), however often it happens: the first occurrence with its details; later ones
// are only counted, and reported in a line with "repeats" (how many since the last line) at most
// once a minute, and once more when the connection ends. --trace keeps every line.
type faultLog struct {
	log    zerolog.Logger
	every  time.Duration
	events func(Event) // every occurrence, when set (Options.Events)

	mu    sync.Mutex
	kinds map[faultKey]*faultKind
	order []faultKey // first seen first, for flush
}

type faultKey struct{ fault, method string }

type faultKind struct {
	faultKey
	level   zerolog.Level
	msg     string
	repeats int       // occurrences since the last line
	last    time.Time // when the last line was logged
	seen    int       // occurrences in all
}

func newFaultLog(log zerolog.Logger) *faultLog {
	return &faultLog{log: log, every: faultEvery, kinds: map[faultKey]*faultKind{}}
}

// note records one occurrence of a fault; details adds the fields of a first occurrence.
func (f *faultLog) note(level zerolog.Level, fault, method, msg string, details func(*zerolog.Event) *zerolog.Event) {
	f.noteLine(level, fault, method, "", msg, details)
}

// noteLine is note for a fault about one line of the wire, shown shortened in its event.
func (f *faultLog) noteLine(level zerolog.Level, fault, method, line, msg string, details func(*zerolog.Event) *zerolog.Event) {
	key := faultKey{fault, method}
	now := time.Now()
	if f.events != nil {
		f.events(Event{Kind: EventFault, Fault: fault, Method: method, Line: line, At: now})
	}
	f.mu.Lock()
	k := f.kinds[key]
	if k == nil && method != "" && len(f.kinds) >= maxFaultKinds {
		key.method = "*"
		k = f.kinds[key]
	}
	if k == nil {
		k = &faultKind{faultKey: key, level: level, msg: msg, last: now, seen: 1}
		f.kinds[key] = k
		f.order = append(f.order, key)
		f.mu.Unlock()
		e := k.event(f.log)
		if details != nil {
			e = details(e)
		}
		e.Msg(msg)
		return
	}
	k.repeats++
	k.seen++
	if now.Sub(k.last) < f.every {
		f.mu.Unlock()
		return
	}
	n, since := k.repeats, k.last
	k.repeats, k.last = 0, now
	f.mu.Unlock()
	k.summary(f.log, n, since)
}

// seen returns how many times a fault has occurred.
func (f *faultLog) seen(fault, method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if k := f.kinds[faultKey{fault, method}]; k != nil {
		return k.seen
	}
	return 0
}

// flush logs the occurrences not reported yet: the connection has ended.
func (f *faultLog) flush() {
	type report struct {
		k     *faultKind
		n     int
		since time.Time
	}
	var out []report
	now := time.Now()
	f.mu.Lock()
	for _, key := range f.order {
		if k := f.kinds[key]; k.repeats > 0 {
			out = append(out, report{k, k.repeats, k.last})
			k.repeats, k.last = 0, now
		}
	}
	f.mu.Unlock()
	for _, r := range out {
		r.k.summary(f.log, r.n, r.since)
	}
}

func (k *faultKind) event(log zerolog.Logger) *zerolog.Event {
	e := log.WithLevel(k.level).Str("dir", "agent→bridge").Str("fault", k.fault)
	if k.method != "" {
		e = e.Str("method", k.method)
	}
	return e
}

func (k *faultKind) summary(log zerolog.Logger, n int, since time.Time) {
	k.event(log).Int("repeats", n).Time("since", since).Msgf("%s (%d more times)", k.msg, n)
}
