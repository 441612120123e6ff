package acpside

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"
	"github.com/rs/zerolog"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testagent"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testutil"
)

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// pidsInGroup lists the live processes of a process group.
func pidsInGroup(pgid int) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// Fields after the command name, which is in parentheses: state ppid pgrp ...
		s := string(stat)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 2 && f[0] != "Z" && f[2] == strconv.Itoa(pgid) {
			out = append(out, pid)
		}
	}
	return out
}

// TestCloseEndsTheWholeProcessGroup: an agent that starts helper processes (as npm wrappers do)
// and ignores its stdin closing is ended with everything it started; its stderr is in the log.
func TestCloseEndsTheWholeProcessGroup(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("a POSIX shell script and /proc; on Windows the job is tested through the binary (e2e TestBinaryEndsTheAgentsJob)")
	}
	var log testutil.SyncBuffer
	script := `echo "agent says hello" >&2; sleep 300 & sleep 300 & trap '' TERM; while :; do sleep 1; done`
	a, err := Start(Command{Path: "sh", Args: []string{"-c", script}}, Options{Log: zerolog.New(&log)})
	if err != nil {
		t.Fatal(err)
	}
	pgid := a.proc.cmd.Process.Pid
	waitUntil(t, "the agent's helper processes", func() bool { return len(pidsInGroup(pgid)) >= 3 })
	done := make(chan struct{})
	go func() {
		a.Close(context.Background())
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("Close did not return")
	}
	waitUntil(t, "the process group to end", func() bool { return len(pidsInGroup(pgid)) == 0 })
	if !strings.Contains(log.String(), "agent says hello") || !strings.Contains(log.String(), `"dir":"agent stderr"`) {
		t.Errorf("the agent's stderr is not in the log:\n%s", log.String())
	}
}

func TestStartReportsAMissingCommand(t *testing.T) {
	_, err := Start(Command{Path: "no-such-agent-anywhere"}, Options{Log: zerolog.Nop()})
	if err == nil || !strings.Contains(err.Error(), "no-such-agent-anywhere") {
		t.Fatalf("err = %v", err)
	}
}

// fakeAgent writes raw lines to the bridge and answers initialize.
func fakeAgent(t *testing.T, before []string) (*Agent, *testutil.SyncBuffer) {
	t.Helper()
	var log testutil.SyncBuffer
	a := scriptedAgent(&log, func(method string, id json.RawMessage) []string {
		if method != "initialize" {
			return nil
		}
		resp := `{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"protocolVersion":1,"agentCapabilities":{"nes":{},"positionEncoding":"utf-32"},"authMethods":[]}}`
		return append(append([]string(nil), before...), resp)
	})
	t.Cleanup(func() { a.Close(context.Background()) })
	return a, &log
}

// scriptedAgent connects to an agent over pipes that writes back, for each message the bridge
// sends, the lines reply returns for it.
func scriptedAgent(log *testutil.SyncBuffer, reply func(method string, id json.RawMessage) []string) *Agent {
	toAgentR, toAgentW := io.Pipe()
	fromAgentR, fromAgentW := io.Pipe()
	go func() {
		sc := bufio.NewScanner(toAgentR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var msg struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			_ = json.Unmarshal(sc.Bytes(), &msg)
			for _, l := range reply(msg.Method, msg.ID) {
				_, _ = io.WriteString(fromAgentW, l+"\n")
			}
		}
		fromAgentW.Close()
	}()
	return Connect(fromAgentR, toAgentW, Options{Log: zerolog.New(log)})
}

// TestJunkFromTheAgentIsDroppedAndLogged: lines that are not JSON and a line over 8 MiB are
// dropped with a log line; the connection survives and the next message is read. Repeated junk is
// counted, not logged line by line: the rest is reported when the connection ends.
func TestJunkFromTheAgentIsDroppedAndLogged(t *testing.T) {
	huge := `{"jsonrpc":"2.0","method":"x","params":"` + strings.Repeat("a", 9<<20) + `"}`
	junk := []string{"Starting agent v1.2 ...", huge, "", "{not json"}
	for i := range 100 {
		junk = append(junk, fmt.Sprintf("progress %d%%", i))
	}
	a, log := fakeAgent(t, junk)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := a.Initialize(ctx); err != nil {
		t.Fatalf("initialize after junk: %v\nlog:\n%s", err, log.String())
	}
	if a.Encoding().String() != "utf-32" {
		t.Errorf("encoding %s", a.Encoding())
	}
	l := log.String()
	if strings.Count(l, "not JSON") != 1 || !strings.Contains(l, `"line":"Starting agent v1.2 ..."`) || !strings.Contains(l, "longer than 8 MiB") || !strings.Contains(l, `"bytes":9437226`) {
		t.Errorf("log:\n%.2000s", l)
	}
	a.Close(context.Background())
	l = log.String()
	if strings.Count(l, "not JSON") != 2 || !strings.Contains(l, `"fault":"not-json","repeats":101,`) {
		t.Errorf("after the connection ended, the log does not count the 101 repeats once:\n%.2000s", l)
	}
}

// TestFaultLogOncePerKind: a fault is logged when it first happens; the repeats only when a
// minute has passed since, or at the end; each method of unknown messages apart, up to a bound.
func TestFaultLogOncePerKind(t *testing.T) {
	var buf testutil.SyncBuffer
	f := newFaultLog(zerolog.New(&buf))
	f.every = 50 * time.Millisecond
	for range 10 {
		f.note(zerolog.WarnLevel, FaultNotJSON, "", "junk", nil)
		f.note(zerolog.WarnLevel, FaultUnknownNotification, "a/b", "unknown", nil)
	}
	if n := strings.Count(buf.String(), "\n"); n != 2 {
		t.Errorf("%d lines for 2 kinds of fault:\n%s", n, buf.String())
	}
	time.Sleep(60 * time.Millisecond)
	f.note(zerolog.WarnLevel, FaultNotJSON, "", "junk", nil)
	if !strings.Contains(buf.String(), `"fault":"not-json","repeats":10,`) {
		t.Errorf("no report of the repeats after the interval:\n%s", buf.String())
	}
	f.flush()
	f.flush()
	if n := strings.Count(buf.String(), "\n"); n != 4 || !strings.Contains(buf.String(), `"method":"a/b","repeats":9,`) {
		t.Errorf("after flush:\n%s", buf.String())
	}
	before := strings.Count(buf.String(), "\n")
	for i := range 2 * maxFaultKinds {
		f.note(zerolog.WarnLevel, FaultUnknownRequest, fmt.Sprint("m", i), "unknown", nil)
	}
	if n := strings.Count(buf.String(), "\n") - before; n > maxFaultKinds {
		t.Errorf("%d lines for agent-made method names, want at most %d", n, maxFaultKinds)
	}
}

// TestBadAnswersEndTheirRequests: an answer the SDK could not read (an error object of the wrong
// type, or a line over 8 MiB) ends its request at once with an error, instead of at its timeout;
// unknown notifications and requests from the agent are logged once per method; the SDK logs
// nothing for any of it.
func TestBadAnswersEndTheirRequests(t *testing.T) {
	var log testutil.SyncBuffer
	n := 0
	a := scriptedAgent(&log, func(method string, id json.RawMessage) []string {
		if method != "nes/suggest" {
			return nil
		}
		n++
		var out []string
		for range 3 {
			out = append(out,
				`{"jsonrpc":"2.0","method":"weird/notice"}`,
				`{"jsonrpc":"2.0","id":"w`+strconv.Itoa(n)+`","method":"weird/request"}`,
				`[1,2,3]`)
		}
		switch n {
		case 1:
			return append(out, `{"jsonrpc":"2.0","id":`+string(id)+`,"error":"no"}`)
		case 2:
			return append(out, `{"jsonrpc":"2.0","id":`+string(id)+`,"result":{"suggestions":[{"kind":"edit","id":"x","edits":[],"pad":"`+strings.Repeat("a", 9<<20)+`"}]}}`)
		}
		return append(out, `{"jsonrpc":"2.0","id":`+string(id)+`,"result":{"suggestions":[]}}`)
	})
	for i, want := range []string{"not a valid JSON-RPC response", "longer than the bridge reads", ""} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		sugs, err := a.Suggest(ctx, acp.UnstableSuggestNesRequest{Uri: "file:///a"})
		cancel()
		if want == "" && (err != nil || len(sugs) != 0) || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("answer %d: %v %v, want an error saying %q", i+1, sugs, err, want)
		}
	}
	// The SDK hands the agent's requests and notifications to the bridge on queues of their own,
	// which may still hold some of them once the last answer is in.
	waitUntil(t, "every unknown message handled", func() bool {
		return a.tap.faults.seen(FaultUnknownNotification, "weird/notice") == 9 && a.tap.faults.seen(FaultUnknownRequest, "weird/request") == 9
	})
	a.Close(context.Background())
	l := log.String()
	for _, want := range []string{
		`"fault":"unknown-notification","method":"weird/notice","message"`,
		`"fault":"unknown-notification","method":"weird/notice","repeats":8,`,
		`"fault":"unknown-request","method":"weird/request","message"`,
		`"fault":"unknown-request","method":"weird/request","repeats":8,`,
		`"fault":"not-jsonrpc","error":"an array, not a JSON object"`,
		`"fault":"not-jsonrpc","repeats":9,`,
		`"fault":"too-long","bytes":`,
	} {
		if strings.Count(l, want) != 1 {
			t.Errorf("the log does not say once %s:\n%.3000s", want, l)
		}
	}
}

func TestEnvelopeHead(t *testing.T) {
	for _, tc := range []struct{ in, id, method string }{
		{`{"jsonrpc":"2.0","id":7,"method":"nes/suggest","params":{"a":1}}`, "7", "nes/suggest"},
		{`{"id":"x","method":"nes/suggest","params":{"big":[1,2,3]}}`, `"x"`, "nes/suggest"},
		// The SDK writes params last; reading stops there, so an id after params is not seen.
		{`{"method":"nes/suggest","params":{"big":[1,2,3]},"id":"x"}`, "", "nes/suggest"},
		{`{"jsonrpc":"2.0","method":"document/didChange","params":{}}`, "", "document/didChange"},
		{`not json`, "", ""},
	} {
		id, method := envelopeHead([]byte(tc.in))
		if id != tc.id || method != tc.method {
			t.Errorf("envelopeHead(%s) = %q, %q; want %q, %q", tc.in, id, method, tc.id, tc.method)
		}
	}
}

func TestDecodeSuggestionsKeepsTheGoodOnes(t *testing.T) {
	raw := json.RawMessage(`{"suggestions":[
		{"kind":"edit","id":"e","uri":"file:///a","edits":[{"range":{"start":{"line":0,"character":0},"end":{"line":0,"character":1}},"newText":"x"}]},
		{"kind":"jump","id":"j","uri":"file:///a","position":{"line":1,"character":2}},
		{"kind":"teleport","id":"t"},
		{"kind":"edit","id":"bad","uri":"file:///a","edits":"nope"},
		{"kind":"edit","uri":"file:///a","edits":[]},
		42
	]}`)
	sugs, err := DecodeSuggestions(raw)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range sugs {
		got = append(got, s.ID+":"+s.Kind+":"+strconv.FormatBool(s.Problem == ""))
	}
	want := "e:edit:true j:jump:true t:teleport:false bad:edit:false :edit:false ::false"
	if strings.Join(got, " ") != want {
		t.Errorf("got %v, want %s", got, want)
	}
	if sugs[0].Edit == nil || sugs[0].Edit.Edits[0].NewText != "x" || sugs[1].Jump == nil || sugs[1].Jump.Position.Character != 2 {
		t.Errorf("decoded %+v %+v", sugs[0].Edit, sugs[1].Jump)
	}
	// Invalid UTF-8 in a string, a kind that is not a string, an id repeated in the answer: each
	// is dropped, with an id to end it by when it has one of its own.
	sugs, err = DecodeSuggestions(json.RawMessage("{\"suggestions\":[" +
		`{"kind":"edit","id":"u","uri":"file:///a","edits":[{"range":{"start":{"line":0,"character":0},"end":{"line":0,"character":1}},"newText":"x` + "\xff\xfe" + `"}]},` +
		`{"kind":["edit"],"id":"k"},` +
		`{"kind":"jump","id":"d","uri":"file:///a","position":{"line":1,"character":2}},` +
		`{"kind":"jump","id":"d","uri":"file:///a","position":{"line":3,"character":4}}` +
		"]}"))
	if err != nil {
		t.Fatal(err)
	}
	got = nil
	for _, s := range sugs {
		got = append(got, s.ID+":"+s.Kind+":"+strconv.FormatBool(s.Problem == ""))
	}
	if want := "u:edit:false k::false d:jump:true :jump:false"; strings.Join(got, " ") != want {
		t.Errorf("got %v, want %s", got, want)
	}
	if !strings.Contains(sugs[0].Problem, "UTF-8") || sugs[2].Jump.Position.Line != 1 || !strings.Contains(sugs[3].Problem, `"d" appears earlier`) {
		t.Errorf("problems %q, first d at %v", []string{sugs[0].Problem, sugs[3].Problem}, sugs[2].Jump.Position)
	}
	if _, err := DecodeSuggestions(json.RawMessage(`{"suggestions":{}}`)); err == nil {
		t.Error("a result whose suggestions is not a list is an error")
	}
}

// TestDecodeSuggestionsOfProtocolVersion2: ACP's version 2 draft names the id suggestionId, and
// its suggestion kinds are an open enum: a kind the bridge does not know is marked Unknown.
func TestDecodeSuggestionsOfProtocolVersion2(t *testing.T) {
	sugs, err := DecodeSuggestions(json.RawMessage(`{"suggestions":[
		{"kind":"jump","suggestionId":"j2","uri":"file:///a","position":{"line":1,"character":2}},
		{"kind":"explanation","suggestionId":"x2","text":"why"},
		{"kind":"jump","id":"j1","suggestionId":"ignored","uri":"file:///a","position":{"line":0,"character":0}}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range sugs {
		got = append(got, fmt.Sprintf("%s:%s:%v:%v", s.ID, s.Kind, s.Problem == "", s.Unknown))
	}
	if want := "j2:jump:true:false x2:explanation:false:true j1:jump:true:false"; strings.Join(got, " ") != want {
		t.Errorf("got %v, want %s", got, want)
	}
	if sugs[0].Jump == nil || sugs[0].Jump.Position.Character != 2 {
		t.Errorf("the v2 jump decoded as %+v", sugs[0].Jump)
	}
}

// TestSuggestAgainstAnInstantAgent: an agent that answers before Suggest has even taken the
// request's id must not turn a good answer into an error.
func TestSuggestAgainstAnInstantAgent(t *testing.T) {
	ag := testagent.New(testagent.Config{Encoding: "utf-8", Suggest: func(_ context.Context, req acp.UnstableSuggestNesRequest, _ string) (any, *acp.RequestError) {
		return map[string]any{"suggestions": []any{map[string]any{"kind": "jump", "id": "j", "uri": req.Uri, "position": map[string]any{"line": 0, "character": 0}}}}, nil
	}})
	a, ctx := startedInProcess(t, ag)
	if err := a.DidOpen(ctx, acp.UnstableDidOpenDocumentNotification{Uri: "file:///a", LanguageId: "go", Text: "x"}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 300; i++ {
		sugs, err := a.Suggest(ctx, acp.UnstableSuggestNesRequest{Uri: "file:///a"})
		if err != nil || len(sugs) != 1 || sugs[0].ID != "j" {
			t.Fatalf("call %d: %v %v", i, sugs, err)
		}
	}
}

// connectInProcess connects to a test agent served over pipes in this process.
func connectInProcess(ag *testagent.Agent) *Agent {
	toAgentR, toAgentW := io.Pipe()
	fromAgentR, fromAgentW := io.Pipe()
	go func() {
		ag.Serve(toAgentR, fromAgentW)
		fromAgentW.Close()
	}()
	return Connect(fromAgentR, toAgentW, Options{Log: zerolog.Nop()})
}

// startedInProcess connects to ag, runs initialize and nes/start, and returns the agent and a
// context that ends with the test (or in 30 s); the agent is closed at the test's end.
func startedInProcess(t *testing.T, ag *testagent.Agent) (*Agent, context.Context) {
	t.Helper()
	a := connectInProcess(ag)
	t.Cleanup(func() { a.Close(context.Background()) })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	if _, err := a.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	if err := a.StartNES(ctx, acp.UnstableStartNesRequest{}); err != nil {
		t.Fatal(err)
	}
	return a, ctx
}

// TestSessionUpdateWithoutSessionIsAFault: an agent the bridge does not ask through prompts has no
// session of the bridge's, so a session/update from it is logged as a notification the bridge
// does not take, as any other (the prompt fallback takes session/update only from the agent it
// prompts).
func TestSessionUpdateWithoutSessionIsAFault(t *testing.T) {
	var log testutil.SyncBuffer
	update := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"none","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}`
	a := scriptedAgent(&log, func(method string, id json.RawMessage) []string {
		if method != "nes/suggest" {
			return nil
		}
		return []string{update, update, `{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"suggestions":[]}}`}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := a.Suggest(ctx, acp.UnstableSuggestNesRequest{Uri: "file:///a"}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "both session/update noted", func() bool { return a.tap.faults.seen(FaultUnknownNotification, "session/update") == 2 })
	a.Close(context.Background())
	if l := log.String(); !strings.Contains(l, `"fault":"unknown-notification","method":"session/update","message"`) {
		t.Errorf("no log line for the session/update:\n%s", l)
	}
}

// TestEveryAgentRequestIsAnswered: a request whose method is empty, and a request of a method that
// is a notification (session/update, $/cancel_request), get -32600 from the bridge. The SDK alone
// would take the first for an answer and never answer it, and answer the others null.
func TestEveryAgentRequestIsAnswered(t *testing.T) {
	var log testutil.SyncBuffer
	toAgentR, toAgentW := io.Pipe()
	fromAgentR, fromAgentW := io.Pipe()
	answers := make(chan string, 10)
	go func() {
		sc := bufio.NewScanner(toAgentR)
		for sc.Scan() {
			var msg struct {
				ID     json.RawMessage `json:"id"`
				Method *string         `json:"method"`
			}
			_ = json.Unmarshal(sc.Bytes(), &msg)
			if msg.Method == nil {
				answers <- sc.Text()
				continue
			}
			if *msg.Method == "nes/suggest" {
				for _, l := range []string{
					`{"jsonrpc":"2.0","id":"bad-empty","method":"","params":{}}`,
					`{"jsonrpc":"2.0","id":"bad-update","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}`,
					`{"jsonrpc":"2.0","id":7,"method":"$/cancel_request","params":{"requestId":1}}`,
					`{"jsonrpc":"2.0","id":` + string(msg.ID) + `,"result":{"suggestions":[]}}`,
				} {
					_, _ = io.WriteString(fromAgentW, l+"\n")
				}
			}
		}
		fromAgentW.Close()
	}()
	a := Connect(fromAgentR, toAgentW, Options{Log: zerolog.New(&log)})
	defer a.Close(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := a.Suggest(ctx, acp.UnstableSuggestNesRequest{Uri: "file:///a"}); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		`"bad-empty"`:  "the request has an empty method",
		`"bad-update"`: "session/update is a notification, not a request",
		`7`:            "$/cancel_request is a notification, not a request",
	}
	for range want {
		select {
		case line := <-answers:
			var m struct {
				ID    json.RawMessage   `json:"id"`
				Error *acp.RequestError `json:"error"`
			}
			if err := json.Unmarshal([]byte(line), &m); err != nil || m.Error == nil || m.Error.Code != -32600 || !strings.Contains(m.Error.Message, want[string(m.ID)]) {
				t.Errorf("answer %s; want -32600 saying %q", line, want[string(m.ID)])
			}
			delete(want, string(m.ID))
		case <-time.After(5 * time.Second):
			t.Fatalf("no answer to %v\nlog:\n%s", want, log.String())
		}
	}
	if l := log.String(); !strings.Contains(l, `"fault":"invalid-request"`) {
		t.Errorf("no log line:\n%s", l)
	}
}

// TestTheBridgesOwnMessagesReachTheAgent: the messages the bridge writes itself, not through the
// SDK (nes/accept and nes/reject, lazily; nes/suggest and its $/cancel_request), reach the agent
// as it expects them, and the errors of writing them are the callers'.
func TestTheBridgesOwnMessagesReachTheAgent(t *testing.T) {
	cancelled := make(chan struct{})
	ag := testagent.New(testagent.Config{Encoding: "utf-8", Suggest: func(ctx context.Context, req acp.UnstableSuggestNesRequest, _ string) (any, *acp.RequestError) {
		<-ctx.Done() // the SDK ends it on $/cancel_request
		close(cancelled)
		return map[string]any{"suggestions": []any{}}, nil
	}})
	a, ctx := startedInProcess(t, ag)
	if err := a.Reject(ctx, "r1", acp.UnstableNesRejectReasonIgnored); err != nil {
		t.Fatalf("Reject: %v", err)
	}
	if err := a.Accept(ctx, "a1"); err != nil {
		t.Fatalf("Accept: %v", err)
	}
	sctx, stop := context.WithTimeout(ctx, 100*time.Millisecond)
	defer stop()
	if _, err := a.Suggest(sctx, acp.UnstableSuggestNesRequest{Uri: "file:///a.go", Version: 1}); !errors.Is(err, ErrCancelled) {
		t.Fatalf("Suggest past its deadline: %v, want ErrCancelled", err)
	}
	select {
	case <-cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the agent's nes/suggest was never cancelled ($/cancel_request)")
	}
	want := map[string]string{"nes/reject": `"id":"r1"`, "nes/accept": `"id":"a1"`, "nes/suggest": `"uri":"file:///a.go"`}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		seen := map[string]bool{}
		for _, m := range ag.Received() {
			if w, ok := want[m.Method]; ok && strings.Contains(string(m.Params), w) {
				seen[m.Method] = true
			}
		}
		if len(seen) == len(want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the agent received %v of %v", seen, want)
		}
	}
}
