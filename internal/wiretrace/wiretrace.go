// Package wiretrace writes every message on the bridge's two wires to a file, one JSON object per
// line, for bug reports:
//
//	{"time":"2026-11-22T10:00:00.123456789Z","dir":"editor→bridge","message":{"jsonrpc":"2.0",...}}
//
// dir is one of "editor→bridge", "bridge→editor", "bridge→agent", "agent→bridge". A message that is
// not JSON is kept as a string in "raw" instead of "message". Traces contain document text.
package wiretrace

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"strconv"
	"sync"
	"time"
)

// Directions.
const (
	EditorToBridge = "editor→bridge"
	BridgeToEditor = "bridge→editor"
	BridgeToAgent  = "bridge→agent"
	AgentToBridge  = "agent→bridge"
)

// Writer writes trace lines. A nil *Writer writes nothing. It is safe for concurrent use.
type Writer struct {
	mu  sync.Mutex
	w   io.Writer
	c   io.Closer
	now func() time.Time
}

// Create opens (truncating) a trace file.
func Create(path string) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, err
	}
	return &Writer{w: f, c: f, now: time.Now}, nil
}

// New traces to w.
func New(w io.Writer) *Writer { return &Writer{w: w, now: time.Now} }

// Close closes the trace file.
func (t *Writer) Close() error {
	if t == nil || t.c == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.c.Close()
}

// Record writes one message.
func (t *Writer) Record(dir string, msg []byte) {
	if t == nil {
		return
	}
	msg = bytes.TrimSpace(msg)
	var b []byte
	b = append(b, `{"time":"`...)
	b = t.now().UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","dir":`...)
	b = strconv.AppendQuote(b, dir)
	if json.Valid(msg) {
		var compact bytes.Buffer
		if json.Compact(&compact, msg) == nil {
			msg = compact.Bytes()
		}
		b = append(b, `,"message":`...)
		b = append(b, msg...)
	} else {
		raw, _ := json.Marshal(string(msg))
		b = append(b, `,"raw":`...)
		b = append(b, raw...)
	}
	b = append(b, "}\n"...)
	t.mu.Lock()
	defer t.mu.Unlock()
	_, _ = t.w.Write(b)
}

// Frames returns a writer that receives a stream of LSP bytes (Content-Length frames) and records
// each frame's body with dir.
func (t *Writer) Frames(dir string) io.Writer {
	if t == nil {
		return io.Discard
	}
	return &frameTap{t: t, dir: dir}
}

// frameTap splits an LSP byte stream into frames.
type frameTap struct {
	t   *Writer
	dir string
	buf []byte
}

func (f *frameTap) Write(p []byte) (int, error) {
	f.buf = append(f.buf, p...)
	for {
		i := bytes.Index(f.buf, []byte("\r\n\r\n"))
		if i < 0 {
			if len(f.buf) > 1<<16 { // no header in sight: not LSP framing
				f.t.Record(f.dir, f.buf)
				f.buf = nil
			}
			return len(p), nil
		}
		n := -1
		for _, line := range bytes.Split(f.buf[:i], []byte("\r\n")) {
			k, v, ok := bytes.Cut(line, []byte(":"))
			if ok && bytes.EqualFold(bytes.TrimSpace(k), []byte("Content-Length")) {
				if x, err := strconv.Atoi(string(bytes.TrimSpace(v))); err == nil && x >= 0 {
					n = x
				}
			}
		}
		if n < 0 { // a broken header: record it and resynchronize after it
			f.t.Record(f.dir, f.buf[:i])
			f.buf = f.buf[i+4:]
			continue
		}
		if len(f.buf) < i+4+n {
			return len(p), nil
		}
		f.t.Record(f.dir, f.buf[i+4:i+4+n])
		f.buf = append(f.buf[:0:0], f.buf[i+4+n:]...)
	}
}
