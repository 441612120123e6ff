package acpside

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"
	"github.com/rs/zerolog"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/testagent"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/testutil"
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
			if msg.Method != "initialize" {
				continue
			}
			for _, l := range before {
				_, _ = io.WriteString(fromAgentW, l+"\n")
			}
			resp := `{"jsonrpc":"2.0","id":` + string(msg.ID) + `,"result":{"protocolVersion":1,"agentCapabilities":{"nes":{},"positionEncoding":"utf-32"},"authMethods":[]}}`
			_, _ = io.WriteString(fromAgentW, resp+"\n")
		}
		fromAgentW.Close()
	}()
	a := Connect(fromAgentR, toAgentW, Options{Log: zerolog.New(&log)})
	t.Cleanup(func() { a.Close(context.Background()) })
	return a, &log
}

// TestJunkFromTheAgentIsDroppedAndLogged: lines that are not JSON and a line over 8 MiB are
// dropped with a log line; the connection survives and the next message is read.
func TestJunkFromTheAgentIsDroppedAndLogged(t *testing.T) {
	huge := `{"jsonrpc":"2.0","method":"x","params":"` + strings.Repeat("a", 9<<20) + `"}`
	a, log := fakeAgent(t, []string{"Starting agent v1.2 ...", huge, "", "{not json"})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := a.Initialize(ctx); err != nil {
		t.Fatalf("initialize after junk: %v\nlog:\n%s", err, log.String())
	}
	if a.Encoding().String() != "utf-32" {
		t.Errorf("encoding %s", a.Encoding())
	}
	l := log.String()
	if strings.Count(l, "not JSON") != 2 || !strings.Contains(l, "longer than 8 MiB") {
		t.Errorf("log:\n%.2000s", l)
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
	if _, err := DecodeSuggestions(json.RawMessage(`{"suggestions":{}}`)); err == nil {
		t.Error("a result whose suggestions is not a list is an error")
	}
}

// TestSuggestAgainstAnInstantAgent: an agent that answers before Suggest has even taken the
// request's id must not turn a good answer into an error.
func TestSuggestAgainstAnInstantAgent(t *testing.T) {
	ag := testagent.New(testagent.Config{Encoding: "utf-8", Suggest: func(_ context.Context, req acp.UnstableSuggestNesRequest, _ string) (any, *acp.RequestError) {
		return map[string]any{"suggestions": []any{map[string]any{"kind": "jump", "id": "j", "uri": req.Uri, "position": map[string]any{"line": 0, "character": 0}}}}, nil
	}})
	toAgentR, toAgentW := io.Pipe()
	fromAgentR, fromAgentW := io.Pipe()
	go func() {
		ag.Serve(toAgentR, fromAgentW)
		fromAgentW.Close()
	}()
	a := Connect(fromAgentR, toAgentW, Options{Log: zerolog.Nop()})
	defer a.Close(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := a.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	if err := a.StartNES(ctx, acp.UnstableStartNesRequest{}); err != nil {
		t.Fatal(err)
	}
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
