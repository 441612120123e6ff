package acpside

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode/utf8"

	acp "github.com/coder/acp-go-sdk"
	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/rs/zerolog"
)

// maxLine bounds one line from the agent. The ACP SDK's reader gives up on the whole connection at
// 10 MiB, so longer lines are dropped here, with a log line, before they reach it.
const maxLine = 8 << 20

// keepLineBuffer is the largest buffer pump keeps between lines. Lines up to the reader's 64 KiB
// need none; one long answer (megabytes of edits) must not leave its buffer held for the rest of
// the connection.
const keepLineBuffer = 1 << 20

// maxAbandoned bounds the requests given up on (cancelled, timed out) whose answers are still
// awaited. ACP asks an agent to answer a cancelled request, but one that never does would
// otherwise leave an entry per request for as long as the connection lasts. Past the bound the
// oldest is forgotten: should its answer come after all, the SDK drops it and its suggestion ids
// do not end.
const maxAbandoned = 256

// wireTap sits on both pipes of the agent connection, line by line. It lets the bridge learn the
// JSON-RPC id under which a nes/suggest went out, and see the answer to a request the bridge has
// already given up on (the SDK drops those silently), so that the suggestion ids in it still end.
// It also keeps away from the SDK what the SDK would log an error for every time, or choke on:
// lines that are not JSON, JSON that is not a JSON-RPC message, lines over maxLine, and
// notifications the bridge does not take. Each kind of fault is logged once (faultLog).
type wireTap struct {
	log    zerolog.Logger
	faults *faultLog
	// notifications are the methods of the notifications from the agent that the handler takes.
	notifications map[string]bool
	done          chan struct{} // closed when pump has ended

	mu sync.Mutex
	// pending are the bridge's own requests (Agent.Suggest) awaiting an answer, by id as on the
	// wire: their answers go to the request, not to the SDK.
	pending  map[string]*pendingRequest
	answered map[string]bool // answered before they were abandoned
	// abandoned lists the ids abandon marked, oldest first, at most maxAbandoned (some may have
	// been answered since).
	abandoned []string
	late      func(line []byte) // the answer to an abandoned nes/suggest, the whole line
	trace     func(dir string, line []byte)
	// reply writes a message of the bridge's own to the agent (one line): answers to requests the
	// SDK cannot take.
	reply func(line []byte)
}

func newWireTap(log zerolog.Logger, late func(raw []byte)) *wireTap {
	return &wireTap{
		log: log, faults: newFaultLog(log), notifications: map[string]bool{}, done: make(chan struct{}),
		pending: map[string]*pendingRequest{}, answered: map[string]bool{}, late: late,
	}
}

// pendingRequest is a request of the bridge's own awaiting its answer: the answer goes to answer,
// or, once the request is abandoned, to the tap's late.
type pendingRequest struct {
	answer    chan<- []byte
	abandoned bool
}

// tapWriter sees every message the SDK writes to the agent (one Write per message).
type tapWriter struct {
	t *wireTap
	w io.Writer
}

func (tw tapWriter) Write(p []byte) (int, error) {
	if tw.t.trace != nil {
		tw.t.trace("bridge→agent", p)
	}
	return tw.w.Write(p)
}

// own tracks a request of the bridge's own, id as on the wire: its answer goes to answer (a
// buffered channel), unless it is abandoned first.
func (t *wireTap) own(id string, answer chan<- []byte) {
	t.mu.Lock()
	t.pending[id] = &pendingRequest{answer: answer}
	t.mu.Unlock()
}

// envelopeHead reads the id and method of a message without decoding its params.
func envelopeHead(p []byte) (id, method string) {
	dec := json.NewDecoder(bytes.NewReader(p))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return "", ""
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return id, method
		}
		switch key {
		case "id":
			var raw json.RawMessage
			if dec.Decode(&raw) != nil {
				return id, method
			}
			id = string(bytes.TrimSpace(raw))
		case "method":
			if dec.Decode(&method) != nil {
				return id, method
			}
		case "params":
			return id, method // the SDK writes params last: never read a large document for nothing
		default:
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return id, method
			}
		}
		if id != "" && method != "" {
			return id, method
		}
	}
	return id, method
}

// abandon marks a pending request as given up. It reports whether its answer was already handed
// to the request (then the caller still receives it and must end its ids itself).
func (t *wireTap) abandon(id string) (answered bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.answered[id] {
		delete(t.answered, id)
		return true
	}
	if p, ok := t.pending[id]; ok {
		p.abandoned = true
		t.abandoned = append(t.abandoned, id)
		if n := len(t.abandoned) - maxAbandoned; n > 0 {
			for _, old := range t.abandoned[:n] {
				if p := t.pending[old]; p != nil && p.abandoned {
					delete(t.pending, old)
				}
			}
			t.abandoned = append(t.abandoned[:0], t.abandoned[n:]...)
		}
	}
	return false
}

// forget stops tracking a request whose answer the caller received.
func (t *wireTap) forget(id string) {
	t.mu.Lock()
	delete(t.pending, id)
	delete(t.answered, id)
	t.mu.Unlock()
}

// pump copies the agent's stdout to the SDK line by line, dropping lines that are not JSON-RPC
// messages or are too long, and diverting answers to abandoned requests.
func (t *wireTap) pump(r io.Reader, w *io.PipeWriter) {
	br := bufio.NewReaderSize(r, 64<<10)
	var buf []byte
	// While long, the rest of a line longer than maxLine is counted and skipped.
	var long bool
	var longBytes int
	var longID, longStart string
	for {
		chunk, err := br.ReadSlice('\n')
		full := errors.Is(err, bufio.ErrBufferFull)
		var line []byte
		switch {
		case long:
			longBytes += len(chunk)
		case len(buf) == 0 && !full:
			line = chunk
		default:
			buf = append(buf, chunk...)
			line = buf
			if len(buf) > maxLine {
				long, longBytes = true, len(buf)
				longID = answerID(buf[:64<<10])
				longStart = preview(buf)
				buf, line = nil, nil
			}
		}
		if full {
			continue
		}
		// A line ended, or the stream did.
		if long {
			n := longBytes - (len(chunk) - len(bytes.TrimRight(chunk, "\r\n")))
			t.dropLong(n, longID, longStart, w)
			long, longBytes, longID, longStart = false, 0, "", ""
		} else if len(line) > 0 {
			// A line gathered in buf is handed over whole when it is kept (an answer to one of
			// the bridge's own requests): buf starts anew rather than being copied.
			if t.incoming(bytes.TrimRight(line, "\r\n"), w, len(buf) > 0) {
				buf = nil
			}
		}
		if cap(buf) > keepLineBuffer {
			buf = nil
		} else {
			buf = buf[:0]
		}
		if err != nil {
			t.faults.flush()
			_ = w.CloseWithError(err)
			close(t.done)
			return
		}
	}
}

// envelope is what the tap needs of a JSON-RPC message. Its params and result are left out: the
// decoder skips them without copying them (an answer may be megabytes); the SDK reads them.
type envelope struct {
	ID *jsontext.Value `json:"id"`
	// Method is nil for an answer; a request or notification with "method": "" has it empty.
	Method *string `json:"method"`
	// Error is read for its shape alone: an error that is not one makes the line no JSON-RPC.
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// method is the message's method, "" for an answer.
func (e *envelope) method() string {
	if e.Method == nil {
		return ""
	}
	return *e.Method
}

func (e *envelope) check() error {
	if e.ID != nil && string(*e.ID) == "null" {
		e.ID = nil // as no id
	}
	if e.ID != nil {
		if err := checkID(json.RawMessage(*e.ID)); err != nil {
			return err
		}
	}
	if e.ID == nil && e.method() == "" {
		return errors.New("neither a method nor an id")
	}
	return nil
}

// checkID accepts the ids JSON-RPC allows (a string or a number; null reads as no id).
func checkID(raw json.RawMessage) error {
	b := bytes.TrimSpace(raw)
	if len(b) > 0 && (b[0] == '"' || b[0] == '-' || (b[0] >= '0' && b[0] <= '9')) {
		return nil
	}
	return fmt.Errorf("the id %.40s is not a string or a number", b)
}

const cancelRequest = "$/cancel_request"

// incoming takes one line from the agent: it passes it to the SDK, or to the request of the
// bridge's own that it answers, or drops it with a fault. owned says line is the caller's to give
// away; kept reports that the line was kept (an answer handed over), so the caller must not reuse
// it.
func (t *wireTap) incoming(line []byte, w io.Writer, owned bool) (kept bool) {
	if len(bytes.TrimSpace(line)) == 0 {
		return false
	}
	if t.trace != nil {
		t.trace("agent→bridge", line)
	}
	// One reading checks the line is JSON and takes the envelope (the decoder validates what it
	// skips); only a line that is not an object is checked apart.
	var env envelope
	var err error
	if kind := jsonKind(line); kind != "an object" {
		if !json.Valid(line) {
			err = errNotJSON
		} else {
			err = fmt.Errorf("%s, not a JSON object", kind)
		}
	} else if err = jsonv2.Unmarshal(line, &env, LenientJSON); err == nil {
		err = env.check()
	} else if _, syntax := errors.AsType[*jsontext.SyntacticError](err); syntax {
		err = errNotJSON
	}
	if err == errNotJSON {
		t.faults.noteLine(zerolog.WarnLevel, FaultNotJSON, "", preview(line), "agent wrote a line that is not JSON; ignored", func(e *zerolog.Event) *zerolog.Event {
			return e.Str("line", preview(line))
		})
		return false
	}
	if err != nil {
		// Never the line itself: it may carry document text. An answer the SDK cannot read
		// still ends its request, with an error, rather than leaving it to time out.
		id := answerID(line)
		t.faults.note(zerolog.WarnLevel, FaultNotJSONRPC, "", "agent wrote JSON that is not a JSON-RPC message; ignored", func(e *zerolog.Event) *zerolog.Event {
			e = e.AnErr("error", err)
			if id != "" {
				e = e.Str("id", id).Bool("answeredWithError", true)
			}
			return e
		})
		if id != "" {
			t.answer(id, errorAnswer(id, "the agent's answer is not a valid JSON-RPC response: "+err.Error()), w, true)
		}
		return false
	}
	method := env.method()
	switch {
	case env.Method == nil:
		return t.answer(string(bytes.TrimSpace(*env.ID)), line, w, owned)
	case env.ID != nil && method == "":
		// The SDK would take it for an answer and drop it: the agent would wait for ever.
		t.refuse(json.RawMessage(*env.ID), "", "the request has an empty method")
		return false
	case env.ID != nil && (method == cancelRequest || t.notifications[method]):
		// The SDK would run it as a notification and answer null.
		t.refuse(json.RawMessage(*env.ID), method, method+" is a notification, not a request")
		return false
	case env.ID == nil && method != cancelRequest && !t.notifications[method]:
		// The SDK would log an error for each; ACP asks to ignore unknown extension notifications
		// ("_" methods), so those are logged at debug level.
		level := zerolog.WarnLevel
		if strings.HasPrefix(method, "_") {
			level = zerolog.DebugLevel
		}
		t.faults.note(level, FaultUnknownNotification, method, "the agent sent a notification the bridge does not take; ignored", nil)
		return false
	}
	if !utf8.Valid(line) {
		t.faults.note(zerolog.WarnLevel, FaultInvalidUTF8, method, "the agent sent a message that is not valid UTF-8; each bad byte reads as U+FFFD", nil)
	}
	_, _ = w.Write(append(line, '\n'))
	return false
}

// refuse answers a request that is not one the bridge can take, in the SDK's place: -32600
// (Invalid Request), so that the agent does not wait for an answer that never comes.
func (t *wireTap) refuse(id json.RawMessage, method, why string) {
	t.faults.note(zerolog.WarnLevel, FaultInvalidRequest, method, "the agent sent an invalid request; answered -32600", func(e *zerolog.Event) *zerolog.Event {
		return e.Str("why", why)
	})
	if t.reply == nil {
		return
	}
	b, _ := json.Marshal(struct {
		JSONRPC string            `json:"jsonrpc"`
		ID      json.RawMessage   `json:"id"`
		Error   *acp.RequestError `json:"error"`
	}{"2.0", bytes.TrimSpace(id), &acp.RequestError{Code: -32600, Message: "Invalid Request: " + why}})
	t.reply(append(b, '\n'))
}

// errNotJSON is a line that is not JSON at all.
var errNotJSON = errors.New("not JSON")

// answer passes the answer to request id on: to the bridge's own request that waits for it, or,
// when the request was abandoned, to late, or else to the SDK. kept is set when line went to one
// of the first two, as is when owned (the caller's to give away), else copied.
func (t *wireTap) answer(id string, line []byte, w io.Writer, owned bool) (kept bool) {
	t.mu.Lock()
	p, ok := t.pending[id]
	if ok {
		delete(t.pending, id)
		if !p.abandoned {
			t.answered[id] = true
		}
	}
	t.mu.Unlock()
	if !ok {
		_, _ = w.Write(append(line, '\n'))
		return false
	}
	if !owned {
		line = bytes.Clone(line) // the pump reuses its buffer
	}
	if p.abandoned {
		if t.late != nil { // rare: the bridge gave up on it
			t.late(line)
		}
		return true
	}
	p.answer <- line
	return true
}

// dropLong drops a line of n bytes, longer than maxLine. When it was an answer, its request ends
// now, with an error, rather than at its timeout.
func (t *wireTap) dropLong(n int, id, start string, w io.Writer) {
	if t.trace != nil {
		t.trace("agent→bridge", fmt.Appendf(nil, "(a line of %d bytes, longer than 8 MiB, dropped; it began: %s)", n, start))
	}
	t.faults.note(zerolog.ErrorLevel, FaultTooLong, "", "dropping a line longer than 8 MiB from the agent", func(e *zerolog.Event) *zerolog.Event {
		e = e.Int("bytes", n)
		if id != "" {
			e = e.Str("id", id).Bool("answeredWithError", true)
		}
		return e
	})
	if id != "" {
		t.answer(id, errorAnswer(id, fmt.Sprintf("the agent's answer was %d bytes, longer than the bridge reads (8 MiB)", n)), w, true)
	}
}

// errorAnswer is a JSON-RPC error answer to request id, from the bridge in the agent's place.
func errorAnswer(id, msg string) []byte {
	b, _ := json.Marshal(struct {
		JSONRPC string            `json:"jsonrpc"`
		ID      json.RawMessage   `json:"id"`
		Error   *acp.RequestError `json:"error"`
	}{"2.0", json.RawMessage(id), &acp.RequestError{Code: -32603, Message: msg}})
	return b
}

// answerID returns the id of an answer (a message with "result" or "error" and no "method") read
// from the start of a line, as far as it is readable; "" when it is not one or has no usable id.
func answerID(p []byte) string {
	dec := json.NewDecoder(bytes.NewReader(p))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return ""
	}
	var id string
	var isAnswer bool
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			break
		}
		var raw json.RawMessage
		if key == "method" {
			return ""
		}
		if key == "result" || key == "error" {
			isAnswer = true
		}
		if dec.Decode(&raw) != nil {
			break // the rest of a line that was cut, or not readable
		}
		if key == "id" {
			if checkID(raw) != nil {
				return ""
			}
			id = string(bytes.TrimSpace(raw))
		}
	}
	if !isAnswer {
		return ""
	}
	return id
}

func preview(b []byte) string {
	const n = 200
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}
