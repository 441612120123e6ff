package lspside

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"go.lsp.dev/jsonrpc2"
)

// DefaultMaxEditorMessageBytes is the largest message the bridge reads from the editor unless
// Config.MaxEditorMessageBytes says otherwise: generous for the text of any document people edit
// (a 100 MB file is far past what editors hand their language servers), far below what would take
// the machine's memory.
const DefaultMaxEditorMessageBytes = 128 << 20

// maxHeaderLine bounds one line of a frame's header, and maxHeader the whole header: real
// headers are two short lines.
const (
	maxHeaderLine = 64 << 10
	maxHeader     = 256 << 10
)

// keepFrameBuffer is the largest body buffer kept between frames: one large document must not
// leave its buffer held for the rest of the session.
const keepFrameBuffer = 1 << 20

// FramingError is a frame from the editor that the bridge refuses before it takes its memory: a
// header line or header too long, or a Content-Length above the limit, or one that does not
// parse. Nothing after it can be found in the stream, so the connection ends.
type FramingError struct{ Why string }

func (e *FramingError) Error() string {
	return "the editor's stream breaks the LSP framing: " + e.Why + "; nothing after it can be read, so the bridge stops"
}

// editorStream reads the editor's messages with Content-Length framing, bounded: a header line is
// read into a fixed buffer, and a body only once its declared length is known to be within the
// limit. Writes go through jsonrpc2's own framing.
type editorStream struct {
	jsonrpc2.Stream // the write side
	in              *bufio.Reader
	limit           int
	buf             []byte
	// fresh is set when a new goroutine takes over the reading (Server.releaseReader): its first
	// read grows its stack for the request it will run.
	fresh atomic.Bool
}

func newEditorStream(in io.Reader, out io.Writer, limit int) *editorStream {
	if limit <= 0 {
		limit = DefaultMaxEditorMessageBytes
	}
	s := &editorStream{
		Stream: jsonrpc2.NewStream(readWriteCloser{in, out}),
		in:     bufio.NewReaderSize(in, maxHeaderLine),
		limit:  limit,
	}
	s.fresh.Store(true) // the first reader
	return s
}

// Read reads one frame and decodes its message. A body that is not a JSON-RPC message is the
// decoder's error (the connection answers it and reads on, tolerantStream); a frame that breaks
// the framing is a FramingError.
func (s *editorStream) Read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	if s.fresh.Swap(false) {
		growStack()
	}
	length, header, err := s.readHeader()
	if err != nil {
		return nil, 0, err
	}
	var body []byte
	if length <= keepFrameBuffer {
		if cap(s.buf) < length {
			s.buf = make([]byte, length, keepFrameBuffer)
		}
		body = s.buf[:length]
	} else {
		body = make([]byte, length)
	}
	if _, err := io.ReadFull(s.in, body); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, 0, err
	}
	msg, err := jsonrpc2.DecodeMessage(body)
	if err != nil {
		return nil, 0, err
	}
	return msg, int64(header + length), nil
}

// readHeader reads a header up to its blank line and returns the Content-Length and the header's
// size. Field names other than Content-Length are ignored, as LSP asks.
func (s *editorStream) readHeader() (length, size int, err error) {
	length = -1
	for {
		line, err := s.in.ReadSlice('\n')
		size += len(line)
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			return 0, 0, &FramingError{fmt.Sprintf("a header line longer than %d KiB", maxHeaderLine>>10)}
		case err == io.EOF && size == 0:
			return 0, 0, io.EOF // closed between frames
		case err == io.EOF:
			return 0, 0, io.ErrUnexpectedEOF
		case err != nil:
			return 0, 0, err
		case size > maxHeader:
			return 0, 0, &FramingError{fmt.Sprintf("a header longer than %d KiB", maxHeader>>10)}
		}
		line = trimEOL(line)
		if len(line) == 0 {
			if length < 0 {
				return 0, 0, &FramingError{"a header without Content-Length"}
			}
			return length, size, nil
		}
		name, value, ok := cutField(line)
		if !ok {
			return 0, 0, &FramingError{fmt.Sprintf("a header line that is not a field: %q", preview(line))}
		}
		if !asciiFold(name, "content-length") {
			continue
		}
		if length, err = s.contentLength(value); err != nil {
			return 0, 0, err
		}
	}
}

// contentLength reads a Content-Length value: digits, at most the limit.
func (s *editorStream) contentLength(v []byte) (int, error) {
	if len(v) == 0 {
		return 0, &FramingError{"an empty Content-Length"}
	}
	n := 0
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, &FramingError{fmt.Sprintf("a Content-Length that is not a number: %q", preview(v))}
		}
		n = n*10 + int(c-'0')
		if n > s.limit {
			return 0, &FramingError{fmt.Sprintf("a message of Content-Length %s, above the limit of %d bytes (--max-editor-message-size)", preview(v), s.limit)}
		}
	}
	if n == 0 {
		return 0, &FramingError{"a Content-Length of 0"}
	}
	return n, nil
}

func trimEOL(b []byte) []byte {
	b = b[:len(b)-1] // the '\n'
	if len(b) > 0 && b[len(b)-1] == '\r' {
		b = b[:len(b)-1]
	}
	return b
}

// cutField splits "Name: value", trimming spaces and tabs around the value.
func cutField(line []byte) (name, value []byte, ok bool) {
	for i, c := range line {
		if c == ':' {
			v := line[i+1:]
			for len(v) > 0 && (v[0] == ' ' || v[0] == '\t') {
				v = v[1:]
			}
			for len(v) > 0 && (v[len(v)-1] == ' ' || v[len(v)-1] == '\t') {
				v = v[:len(v)-1]
			}
			return line[:i], v, true
		}
	}
	return nil, nil, false
}

// asciiFold reports whether b equals the lower-case ASCII word, ignoring case.
func asciiFold(b []byte, word string) bool {
	if len(b) != len(word) {
		return false
	}
	for i := range b {
		if lowerASCII(b[i]) != word[i] {
			return false
		}
	}
	return true
}

func preview(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "…"
	}
	return string(b)
}
