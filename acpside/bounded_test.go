package acpside

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"

	acp "github.com/coder/acp-go-sdk"
	"github.com/rs/zerolog"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testagent"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testutil"
)

// TestAbandonedRequestsAreBounded: an agent that never answers nes/suggest, not even once it is
// cancelled, leaves the bridge at most maxAbandoned requests to remember, however many it gave up
// on.
func TestAbandonedRequestsAreBounded(t *testing.T) {
	ag := testagent.New(testagent.Config{Fault: testagent.FaultHang})
	a := connectInProcess(ag)
	defer a.Close(context.Background())
	gone, cancel := context.WithCancel(context.Background())
	cancel() // every request is given up on as soon as it is sent
	n := 3 * maxAbandoned
	for i := range n {
		if _, err := a.Suggest(gone, acp.UnstableSuggestNesRequest{Uri: "file:///a"}); !errors.Is(err, ErrCancelled) {
			t.Fatalf("request %d: %v, want ErrCancelled", i, err)
		}
	}
	a.tap.mu.Lock()
	tracked, abandoned := len(a.tap.pending), len(a.tap.abandoned)
	a.tap.mu.Unlock()
	if tracked > maxAbandoned || abandoned > maxAbandoned {
		t.Errorf("after %d abandoned requests the tap tracks %d ids and lists %d, want at most %d", n, tracked, abandoned, maxAbandoned)
	}
}

// TestAbandonedRequestAnsweredLateStillEnds: within the bound, a request given up on whose answer
// comes later still passes its suggestions on, so that their ids end.
func TestAbandonedRequestAnsweredLateStillEnds(t *testing.T) {
	var late [][]byte
	tap := newWireTap(zerolog.Nop(), func(raw []byte) { late = append(late, raw) })
	ids := make([]string, maxAbandoned+10)
	for i := range ids {
		ids[i] = `"nes-` + strconv.Itoa(i) + `"`
		tap.own(ids[i], make(chan []byte, 1))
		if tap.abandon(ids[i]) {
			t.Fatalf("request %s reported answered", ids[i])
		}
	}
	var sdk bytes.Buffer
	// The oldest ones are forgotten: their answers go to the SDK, which drops them.
	tap.incoming([]byte(`{"jsonrpc":"2.0","id":`+ids[0]+`,"result":{"suggestions":[{"id":"old"}]}}`), &sdk, false)
	tap.incoming([]byte(`{"jsonrpc":"2.0","id":`+ids[len(ids)-1]+`,"result":{"suggestions":[{"id":"new"}]}}`), &sdk, false)
	if len(late) != 1 || !strings.Contains(string(late[0]), `"new"`) {
		t.Errorf("late answers %q, want the newest request's", late)
	}
	if !strings.Contains(sdk.String(), `"old"`) {
		t.Errorf("the answer to a forgotten request should go to the SDK; it got %q", sdk.String())
	}
}

// TestLongLineBufferIsReleased: after a line of megabytes from the agent (a large answer), the
// tap does not keep a buffer of that size for the rest of the connection.
func TestLongLineBufferIsReleased(t *testing.T) {
	tap := newWireTap(zerolog.Nop(), nil)
	tap.notifications["_test/big"], tap.notifications["_test/small"] = true, true
	agentOut, agentOutW := io.Pipe()
	sdkIn, sdkInW := io.Pipe()
	go tap.pump(agentOut, sdkInW)
	heap := testutil.LiveHeap
	before := heap()
	go func() {
		_, _ = io.WriteString(agentOutW, `{"jsonrpc":"2.0","method":"_test/big","params":{"blob":"`+strings.Repeat("a", 6<<20)+`"}}`+"\n")
		_, _ = io.WriteString(agentOutW, `{"jsonrpc":"2.0","method":"_test/small"}`+"\n")
	}()
	// Read what reaches the SDK, without keeping it, up to the short line: the tap is then done
	// with the long one and waits for more.
	br := bufio.NewReader(sdkIn)
	for {
		chunk, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(chunk, []byte("_test/small")) {
			break
		}
	}
	after := heap()
	agentOutW.Close()
	<-tap.done
	if after > before+2<<20 {
		t.Errorf("the heap grew from %d to %d bytes after one line of 6 MiB: its buffer is kept", before, after)
	}
}

// TestFaultLogKindsBounded: an agent that sends ever new unknown methods makes the fault log
// remember at most maxFaultKinds of them (the rest share one kind per fault).
func TestFaultLogKindsBounded(t *testing.T) {
	f := newFaultLog(zerolog.Nop())
	for i := range 10_000 {
		f.note(zerolog.WarnLevel, FaultUnknownRequest, "r/"+strconv.Itoa(i), "unknown", nil)
		f.note(zerolog.WarnLevel, FaultUnknownNotification, "n/"+strconv.Itoa(i), "unknown", nil)
		f.note(zerolog.WarnLevel, FaultNotJSON, "", "junk", nil)
	}
	f.mu.Lock()
	kinds, order := len(f.kinds), len(f.order)
	f.mu.Unlock()
	// The named ones, then "*" for each of the two faults with a method, and the one without.
	if want := maxFaultKinds + 3; kinds > want || order != kinds {
		t.Errorf("%d kinds kept (%d in order) after 20000 distinct methods, want at most %d", kinds, order, want)
	}
}

// TestLongAnswersHandedOverWhole: an answer longer than the pump's reader holds is handed to its
// request without a copy, and the pump's next lines never write over it.
func TestLongAnswersHandedOverWhole(t *testing.T) {
	tap := newWireTap(zerolog.Nop(), nil)
	first, second := make(chan []byte, 1), make(chan []byte, 1)
	tap.own(`"nes-1"`, first)
	tap.own(`"nes-2"`, second)
	answer := func(id, fill string) string {
		return `{"jsonrpc":"2.0","id":"` + id + `","result":{"suggestions":[{"kind":"edit","id":"` + id + `","uri":"file:///a","edits":[],"pad":"` + strings.Repeat(fill, 200<<10) + `"}]}}`
	}
	a1, a2 := answer("nes-1", "a"), answer("nes-2", "b")
	agent, sdk := io.Pipe()
	go func() {
		_, _ = io.WriteString(sdk, a1+"\n"+a2+"\n")
		_ = sdk.Close()
	}()
	toSDK, discard := io.Pipe()
	go func() { _, _ = io.Copy(io.Discard, toSDK) }()
	go tap.pump(agent, discard)
	got1, got2 := <-first, <-second
	<-tap.done
	if string(got1) != a1 || string(got2) != a2 {
		t.Errorf("answers changed on their way: first %d bytes (intact %v), second %d bytes (intact %v)", len(got1), string(got1) == a1, len(got2), string(got2) == a2)
	}
}
