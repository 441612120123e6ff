package testagent

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testutil"
)

// TestReceivedInWireOrder: the agent's record of what it received (Received, Config.Log) is in
// the order the client sent it, though the SDK runs a request's handler at once and queues the
// notifications sent before it; answers and $/cancel_request are left out, as the SDK never hands
// them to the agent; a message split across writes is one message.
func TestReceivedInWireOrder(t *testing.T) {
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	var log testutil.SyncBuffer
	a := New(Config{Log: &log})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan struct{})
	go func() {
		a.Serve(inR, outW)
		_ = outW.Close()
		close(done)
	}()
	answers := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			answers <- sc.Text()
		}
		close(answers)
	}()

	const notes = 300
	var wire bytes.Buffer
	for i := range notes {
		fmt.Fprintf(&wire, `{"jsonrpc":"2.0","method":"document/didChange","params":{"sessionId":"s","uri":"file:///n%d","version":%d,"contentChanges":[]}}`+"\n", i, i)
	}
	wire.WriteString(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":99}}` + "\n")
	wire.WriteString(`{"jsonrpc":"2.0","id":"a1","result":{}}` + "\n")
	split := `{"jsonrpc":"2.0","id":1,"method":"nes/close","params":{"sessionId":"s"}}` + "\n"
	wire.WriteString(split[:20])
	if _, err := inW.Write(wire.Bytes()); err != nil {
		t.Fatal(err)
	}
	if _, err := inW.Write([]byte(split[20:])); err != nil {
		t.Fatal(err)
	}
	select {
	case ans := <-answers:
		if !strings.Contains(ans, `"id":1`) {
			t.Fatalf("the agent answered %s, want the answer to nes/close", ans)
		}
	case <-time.After(time.Minute):
		t.Fatal("nes/close was never answered")
	}
	_ = inW.Close()
	<-done

	var methods []string
	for _, m := range a.Received() {
		methods = append(methods, m.Method)
	}
	want := strings.Repeat("document/didChange ", notes) + "nes/close"
	if got := strings.Join(methods, " "); got != want {
		t.Errorf("received, in order: %s\nwant %d document/didChange, then nes/close", got, notes)
	}
	logged := strings.Split(strings.TrimSpace(log.String()), "\n")
	if len(logged) != notes+1 || !strings.Contains(logged[notes-1], `"uri":"file:///n299"`) || !strings.Contains(logged[notes], `"method":"nes/close"`) {
		t.Errorf("the log has %d lines, want %d ending with the last didChange and nes/close: %s", len(logged), notes+1, logged[max(0, len(logged)-2):])
	}
}
