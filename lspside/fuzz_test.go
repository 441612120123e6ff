package lspside_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"go.lsp.dev/jsonrpc2"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/acpside"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testutil"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/lspside"
)

// The fuzz input is the bodies of up to fuzzMaxFrames frames, separated by fuzzSep (the ASCII
// record separator, which no JSON text holds outside a string).
const (
	fuzzSep       = 0x1e
	fuzzMaxFrames = 16
	fuzzURI       = "file:///fuzz-workspace/main.go"
)

// fuzzWatchdog bounds one execution: 2 s while fuzzing, where executions take about a
// millisecond; more when the corpus runs as a test, under the race detector on a loaded machine.
func fuzzWatchdog() time.Duration {
	if f := flag.Lookup("test.fuzz"); f != nil && f.Value.String() != "" {
		return 2 * time.Second
	}
	return 10 * time.Second
}

// FuzzLSPMessages sends arbitrary frame bodies (each with a correct Content-Length header) to a
// bridge that has been initialized and has one document open, and has no agent. Whatever the
// bodies hold, the bridge must not panic, hang or end the connection; it answers every request
// that has an id exactly once (a body that is not a JSON-RPC message gets an error with id null);
// everything it writes is a JSON-RPC message; and afterwards it still answers a good request and
// shutdown. An exit notification, which ends the connection by design, is not sent.
func FuzzLSPMessages(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"textDocument/inlineCompletion","params":{"textDocument":{"uri":"` + fuzzURI + `"},"position":{"line":0,"character":3},"context":{"triggerKind":1}}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"` + fuzzURI + `","version":2},"contentChanges":[{"range":{"start":{"line":0,"character":0},"end":{"line":0,"character":7}},"text":"module"}]}}` +
		"\x1e" + `{"jsonrpc":"2.0","id":"a","method":"textDocument/codeAction","params":{"textDocument":{"uri":"` + fuzzURI + `"},"range":{"start":{"line":0,"character":0},"end":{"line":0,"character":0}},"context":{"diagnostics":[]}}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":2,"method":"shutdown"}` + "\x1e" + `{"jsonrpc":"2.0","id":3,"method":"textDocument/completion","params":{}}`))
	f.Add([]byte(`[{"jsonrpc":"2.0","id":4,"method":"shutdown"}]` + "\x1e" + `{"jsonrpc":"2.0","id":5,` + "\x1e" + `null`))
	f.Fuzz(func(t *testing.T, input []byte) {
		var frames [][]byte
		for _, b := range bytes.Split(input, []byte{fuzzSep}) {
			// An empty body cannot be framed (Content-Length 0 is a framing error, which ends
			// the connection by design).
			if len(b) > 0 && len(frames) < fuzzMaxFrames {
				frames = append(frames, b)
			}
		}
		runFuzzFrames(t, frames)
	})
}

// fuzzIDKey names a request id: n:number, s:string, or null.
func fuzzIDKey(id jsonrpc2.ID) string {
	if n, ok := id.Number(); ok {
		return "n:" + strconv.FormatInt(n, 10)
	}
	if s, ok := id.StringValue(); ok {
		return "s:" + s
	}
	return "null"
}

// fuzzPeer is the editor's side of one fuzzed connection: raw frames in, decoded messages out.
type fuzzPeer struct {
	t        *testing.T
	in       *io.PipeWriter // the bridge's stdin
	out      *io.PipeReader // the bridge's stdout
	exit     chan int
	log      *testutil.SyncBuffer
	deadline <-chan time.Time
	watchdog time.Duration

	resps    chan *jsonrpc2.Response
	readErr  chan error     // why the bridge's output ended, or what in it was not JSON-RPC
	readDone chan struct{}  // closed when readLoop returns
	answers  sync.WaitGroup // answers to the bridge's own requests, in flight
}

// send writes one frame with one Write, so that frames from several goroutines never interleave.
func (p *fuzzPeer) send(body []byte) error {
	frame := make([]byte, 0, len(body)+32)
	frame = fmt.Appendf(frame, "Content-Length: %d\r\n\r\n", len(body))
	_, err := p.in.Write(append(frame, body...))
	return err
}

// readLoop reads the bridge's output: responses go to resps; the bridge's own requests (a
// showMessageRequest, an applyEdit) are answered with null; notifications are dropped.
func (p *fuzzPeer) readLoop() {
	defer close(p.readDone)
	r := bufio.NewReader(p.out)
	for {
		body, err := fuzzReadFrame(r)
		if err != nil {
			p.readErr <- err
			return
		}
		msg, err := jsonrpc2.DecodeMessage(body)
		if err != nil {
			p.readErr <- fmt.Errorf("the bridge wrote %q, which is not a JSON-RPC message: %w", body, err)
			return
		}
		switch m := msg.(type) {
		case *jsonrpc2.Response:
			select {
			case p.resps <- m:
			default:
				p.readErr <- fmt.Errorf("more than %d responses", cap(p.resps))
				return
			}
		case *jsonrpc2.Call:
			answer, _ := jsonrpc2.EncodeMessage(jsonrpc2.NewResponse(m.ID(), jsonrpc2.RawMessage("null"), nil))
			p.answers.Go(func() { _ = p.send(answer) })
		}
	}
}

func fuzzReadFrame(r *bufio.Reader) ([]byte, error) {
	length := -1
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("bad header line %q", line)
		}
		if strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			n, err := strconv.Atoi(strings.TrimSpace(value))
			if err != nil {
				return nil, fmt.Errorf("bad Content-Length %q", value)
			}
			length = n
		}
	}
	if length < 0 {
		return nil, errors.New("a frame without Content-Length")
	}
	body := make([]byte, length)
	_, err := io.ReadFull(r, body)
	return body, err
}

// fail ends the execution with the bridge's log.
func (p *fuzzPeer) fail(format string, args ...any) {
	p.t.Helper()
	p.t.Fatalf("%s\nbridge log:\n%s", fmt.Sprintf(format, args...), p.log.String())
}

// next waits for the bridge's next response.
func (p *fuzzPeer) next(waiting string) *jsonrpc2.Response {
	p.t.Helper()
	select {
	case r := <-p.resps:
		return r
	case err := <-p.readErr:
		p.fail("waiting for %s, the bridge's output ended: %v", waiting, err)
	case code := <-p.exit:
		p.fail("waiting for %s, the bridge ended the connection (exit code %d)", waiting, code)
	case <-p.deadline:
		p.fail("waiting for %s: no answer within %v", waiting, p.watchdog)
	}
	return nil
}

func (p *fuzzPeer) mustSend(body string) {
	p.t.Helper()
	done := make(chan error, 1)
	go func() { done <- p.send([]byte(body)) }()
	select {
	case err := <-done:
		if err != nil {
			p.fail("send %s: %v", body, err)
		}
	case <-p.deadline:
		p.fail("the bridge stopped reading: send %s", body)
	}
}

// fuzzMessage is a JSON-RPC message with these head fields and params.
func fuzzMessage(head string, params any) string {
	b, err := json.Marshal(params)
	if err != nil {
		panic(err)
	}
	return `{"jsonrpc":"2.0",` + head + `,"params":` + string(b) + `}`
}

func runFuzzFrames(t *testing.T, frames [][]byte) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p := &fuzzPeer{
		t: t, in: inW, out: outR, exit: make(chan int, 1), log: &testutil.SyncBuffer{},
		watchdog: fuzzWatchdog(),
		resps:    make(chan *jsonrpc2.Response, 256), readErr: make(chan error, 1), readDone: make(chan struct{}),
	}
	p.deadline = time.After(p.watchdog)
	cfg := lspside.Config{
		Log:     zerolog.New(p.log).Level(zerolog.DebugLevel),
		Version: "fuzz",
		ConnectAgent: func(acpside.Options) (*acpside.Agent, error) {
			return nil, errors.New("this test has no agent")
		},
		ClientWait: time.Second, UserWait: time.Second, SuggestTimeout: time.Second, StartTimeout: time.Second,
	}
	go func() {
		p.exit <- lspside.Serve(context.Background(), inR, outW, cfg)
		outW.Close()
	}()
	go p.readLoop()
	t.Cleanup(func() {
		// Normally the bridge has ended by now; after a failure, unblock whatever is stuck.
		inW.CloseWithError(io.ErrClosedPipe)
		outR.CloseWithError(io.ErrClosedPipe)
		<-p.readDone // every answer was started before
		p.answers.Wait()
	})

	// What the bodies ask for, decoded as the bridge's stream decodes them.
	expected := map[string]int{}
	var send [][]byte
	lenient := false // the document may be closed, or the server shut down, by the bodies
	for _, body := range frames {
		msg, err := jsonrpc2.DecodeMessage(body)
		if err != nil {
			expected["null"]++ // answered with a parse or invalid-request error
			send = append(send, body)
			continue
		}
		switch m := msg.(type) {
		case *jsonrpc2.Call:
			expected[fuzzIDKey(m.ID())]++
			lenient = lenient || m.Method() == "shutdown"
		case *jsonrpc2.Notification:
			if m.Method() == "exit" {
				continue
			}
			lenient = lenient || m.Method() == "textDocument/didClose"
		}
		send = append(send, body)
	}

	// The frames of a fake editor's start, written raw as every frame of this test is.
	init := fakeeditor.InitParams{Root: "file:///fuzz-workspace", Encodings: []string{"utf-16"}, Capabilities: map[string]any{
		"textDocument": map[string]any{"inlineCompletion": map[string]any{}},
		"workspace":    map[string]any{"workspaceEdit": map[string]any{"documentChanges": true}},
	}}
	p.mustSend(fuzzMessage(`"id":"fuzz-init","method":"initialize"`, init.Params()))
	if r := p.next("the answer to initialize"); r.Err() != nil {
		p.fail("initialize: %v", r.Err())
	}
	p.mustSend(`{"jsonrpc":"2.0","method":"initialized","params":{}}`)
	p.mustSend(fuzzMessage(`"method":"textDocument/didOpen"`, fakeeditor.DidOpenParams(fuzzURI, "go", "package main\n\nfunc main() { println(\"𐐀\") }\r\n")))

	sent := make(chan error, 1)
	go func() {
		for _, body := range send {
			if err := p.send(body); err != nil {
				sent <- err
				return
			}
		}
		sent <- nil
	}()
	got := map[string]int{}
	take := func(r *jsonrpc2.Response) {
		key := fuzzIDKey(r.ID())
		got[key]++
		if got[key] > expected[key] {
			p.fail("a response for id %s that was not asked for (or answered twice): %v / %s", key, r.Err(), r.Result())
		}
	}
	pending := 0
	for _, n := range expected {
		pending += n
	}
	for writing := true; writing || pending > 0; {
		select {
		case err := <-sent:
			if err != nil {
				p.fail("the bridge stopped reading: %v", err)
			}
			writing = false
		case r := <-p.resps:
			take(r)
			pending--
		case err := <-p.readErr:
			p.fail("the bridge's output ended: %v (%d answers missing: got %v, want %v)", err, pending, got, expected)
		case code := <-p.exit:
			p.fail("the bridge ended the connection (exit code %d)", code)
		case <-p.deadline:
			p.fail("no answer within %v: got %v, want %v (still sending: %v)", p.watchdog, got, expected, writing)
		}
	}

	// The bridge still works: the document (unless the bodies closed it or shut the server
	// down) answers an empty list, having no agent; shutdown answers null.
	expected[`s:fuzz-final-inline`]++
	p.mustSend(`{"jsonrpc":"2.0","id":"fuzz-final-inline","method":"textDocument/inlineCompletion","params":{"textDocument":{"uri":"` +
		fuzzURI + `"},"position":{"line":0,"character":0},"context":{"triggerKind":2}}}`)
	r := p.next("the answer to the final inlineCompletion")
	take(r)
	if fuzzIDKey(r.ID()) != "s:fuzz-final-inline" {
		p.fail("the final inlineCompletion got the answer for %s", fuzzIDKey(r.ID()))
	}
	switch {
	case r.Err() != nil && !lenient:
		p.fail("the final inlineCompletion: %v", r.Err())
	case r.Err() == nil && string(r.Result()) != `{"items":[]}`:
		p.fail("the final inlineCompletion answered %s; want no items", r.Result())
	}
	expected[`s:fuzz-final-shutdown`]++
	p.mustSend(`{"jsonrpc":"2.0","id":"fuzz-final-shutdown","method":"shutdown"}`)
	r = p.next("the answer to the final shutdown")
	take(r)
	if fuzzIDKey(r.ID()) != "s:fuzz-final-shutdown" || r.Err() != nil || string(r.Result()) != "null" {
		p.fail("the final shutdown answered %s: %v, %s", fuzzIDKey(r.ID()), r.Err(), r.Result())
	}

	// Closing the stream ends the bridge, after shutdown with code 0.
	inW.Close()
	select {
	case code := <-p.exit:
		if code != 0 {
			p.fail("the bridge exited with %d after shutdown", code)
		}
	case <-p.deadline:
		p.fail("the bridge did not end after the editor closed its stream")
	}
	select {
	case err := <-p.readErr:
		if !errors.Is(err, io.EOF) {
			p.fail("the bridge's output: %v", err)
		}
	case <-p.deadline:
		p.fail("the bridge's output did not end")
	}
	for len(p.resps) > 0 {
		take(<-p.resps)
	}
}
