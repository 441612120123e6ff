package lspside

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"go.lsp.dev/jsonrpc2"
)

func frame(body string) string {
	return "Content-Length: " + itoa(len(body)) + "\r\n\r\n" + body
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

// TestEditorStreamReadsFrames: frames as editors write them (CRLF or LF, other fields, any case)
// read one message each, then a clean end.
func TestEditorStreamReadsFrames(t *testing.T) {
	body := `{"jsonrpc":"2.0","method":"initialized","params":{}}`
	in := frame(body) +
		"content-length: " + itoa(len(body)) + "\nContent-Type: application/vscode-jsonrpc; charset=utf-8\n\n" + body +
		"Content-Type: x\r\nContent-Length:\t" + itoa(len(body)) + " \r\n\r\n" + body
	s := newEditorStream(strings.NewReader(in), io.Discard, 1<<10)
	for i := range 3 {
		msg, n, err := s.Read(context.Background())
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		if r, ok := msg.(*jsonrpc2.Notification); !ok || r.Method() != "initialized" || n == 0 {
			t.Errorf("message %d: %#v %d", i, msg, n)
		}
	}
	if _, _, err := s.Read(context.Background()); err != io.EOF {
		t.Errorf("after the last frame: %v, want EOF", err)
	}
	if _, _, err := newEditorStream(strings.NewReader("Content-Length: 10\r\n\r\n{}"), io.Discard, 0).Read(context.Background()); err != io.ErrUnexpectedEOF {
		t.Errorf("a body cut short: %v", err)
	}
}

// TestEditorStreamRefusesWhatItCannotBound: each frame that would take unbounded memory, or
// cannot be framed, is a FramingError that says why, found before the memory is taken.
func TestEditorStreamRefusesWhatItCannotBound(t *testing.T) {
	for in, why := range map[string]string{
		"X-Pad: " + strings.Repeat("a", 70<<10) + "\r\n":                "a header line longer than 64 KiB",
		strings.Repeat("X-Pad: "+strings.Repeat("a", 1000)+"\r\n", 300): "a header longer than 256 KiB",
		"Content-Length: 1073741000\r\n\r\n":                            "Content-Length 1073741000, above the limit of 1024 bytes",
		"Content-Length: 99999999999999999999999999\r\n\r\n":            "above the limit",
		"Content-Length: 12a\r\n\r\n":                                   "not a number",
		"Content-Length: \r\n\r\n":                                      "an empty Content-Length",
		"Content-Length: 0\r\n\r\n":                                     "a Content-Length of 0",
		"Content-Type: x\r\n\r\n{}":                                     "a header without Content-Length",
		"hello there\r\n\r\n":                                           "not a field",
	} {
		_, _, err := newEditorStream(strings.NewReader(in), io.Discard, 1<<10).Read(context.Background())
		var fe *FramingError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), why) {
			t.Errorf("%.40q: %v; want a FramingError saying %q", in, err, why)
		}
	}
}

// TestEditorStreamKeepsNoLargeBuffer: a large body is read into a buffer of its own, not kept
// for the next frames; small ones share one.
func TestEditorStreamKeepsNoLargeBuffer(t *testing.T) {
	big := `{"jsonrpc":"2.0","method":"x","params":"` + strings.Repeat("a", 2<<20) + `"}`
	small := `{"jsonrpc":"2.0","method":"y"}`
	s := newEditorStream(strings.NewReader(frame(big)+frame(small)), io.Discard, 4<<20)
	for range 2 {
		if _, _, err := s.Read(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if cap(s.buf) > keepFrameBuffer {
		t.Errorf("the stream keeps a buffer of %d bytes", cap(s.buf))
	}
}
