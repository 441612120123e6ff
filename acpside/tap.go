package acpside

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/rs/zerolog"
)

// maxLine bounds one line from the agent. The ACP SDK's reader gives up on the whole connection at
// 10 MiB, so longer lines are dropped here, with a log line, before they reach it.
const maxLine = 8 << 20

// wireTap sits on both pipes of the agent connection, line by line. It lets the bridge learn the
// JSON-RPC id under which a nes/suggest went out, and see the answer to a request the bridge has
// already given up on (the SDK drops those silently), so that the suggestion ids in it still end.
// It also keeps lines that are not JSON away from the SDK.
type wireTap struct {
	log zerolog.Logger

	mu       sync.Mutex
	capture  chan<- string    // receives the id of the next outgoing nes/suggest
	tracked  map[string]bool  // nes/suggest ids awaiting an answer; true once abandoned
	answered map[string]bool  // answered before they were abandoned
	late     func(raw []byte) // the result of an abandoned nes/suggest
	trace    func(dir string, line []byte)
}

func newWireTap(log zerolog.Logger, late func(raw []byte)) *wireTap {
	return &wireTap{log: log, tracked: map[string]bool{}, answered: map[string]bool{}, late: late}
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
	tw.t.outgoing(p)
	return tw.w.Write(p)
}

func (t *wireTap) outgoing(p []byte) {
	t.mu.Lock()
	capture := t.capture
	t.mu.Unlock()
	if capture == nil {
		return
	}
	id, method := envelopeHead(p)
	if method != "nes/suggest" || id == "" {
		return
	}
	t.mu.Lock()
	t.capture = nil
	t.tracked[id] = false
	t.mu.Unlock()
	capture <- id
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

// abandon marks a tracked request as given up. It reports whether its answer was already passed
// to the SDK (then the caller still receives it and must end its ids itself).
func (t *wireTap) abandon(id string) (answered bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.answered[id] {
		delete(t.answered, id)
		return true
	}
	if _, ok := t.tracked[id]; ok {
		t.tracked[id] = true
	}
	return false
}

// forget stops tracking a request whose answer the caller received.
func (t *wireTap) forget(id string) {
	t.mu.Lock()
	delete(t.tracked, id)
	delete(t.answered, id)
	t.mu.Unlock()
}

// pump copies the agent's stdout to the SDK line by line, dropping lines that are not JSON or are
// too long, and diverting answers to abandoned requests.
func (t *wireTap) pump(r io.Reader, w *io.PipeWriter) {
	br := bufio.NewReaderSize(r, 64<<10)
	var long bool
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if !long {
				buf = append(buf, chunk...)
				if len(buf) > maxLine {
					if t.trace != nil {
						t.trace("agent→bridge", []byte(fmt.Sprintf("(a line longer than 8 MiB, dropped; it began: %.200s)", buf)))
					}
					t.log.Error().Str("dir", "agent→bridge").Int("bytes", len(buf)).Msg("dropping a line longer than 8 MiB from the agent")
					long, buf = true, nil
				}
			}
			continue
		}
		if err != nil && len(chunk) == 0 && len(buf) == 0 {
			_ = w.CloseWithError(err)
			return
		}
		line := chunk
		if len(buf) > 0 {
			line = append(buf, chunk...)
		}
		if long {
			long, buf = false, nil
		} else {
			t.incoming(bytes.TrimRight(line, "\r\n"), w)
			buf = buf[:0]
		}
		if err != nil {
			_ = w.CloseWithError(err)
			return
		}
	}
}

func (t *wireTap) incoming(line []byte, w io.Writer) {
	if len(bytes.TrimSpace(line)) == 0 {
		return
	}
	if t.trace != nil {
		t.trace("agent→bridge", line)
	}
	if !json.Valid(line) {
		t.log.Error().Str("dir", "agent→bridge").Str("line", preview(line)).Msg("agent wrote a line that is not JSON; ignored")
		return
	}
	var head struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Result json.RawMessage `json:"result"`
	}
	if json.Unmarshal(line, &head) == nil && head.Method == "" && len(head.ID) > 0 {
		id := string(bytes.TrimSpace(head.ID))
		t.mu.Lock()
		abandoned, ok := t.tracked[id]
		if ok {
			delete(t.tracked, id)
			if !abandoned {
				t.answered[id] = true
			}
		}
		t.mu.Unlock()
		if ok && abandoned {
			if len(head.Result) > 0 && t.late != nil {
				t.late(head.Result)
			}
			return
		}
	}
	_, _ = w.Write(append(line, '\n'))
}

func preview(b []byte) string {
	const n = 200
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}
