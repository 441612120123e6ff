package testagent

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testutil"
)

// copilotClient speaks raw ACP to the Copilot stand-in over pipes: requests answered by id,
// notifications written in order, the stand-in's stderr and log kept.
type copilotClient struct {
	t       *testing.T
	a       *Agent
	in      io.WriteCloser
	answers chan map[string]any
	pending map[float64]map[string]any
	next    int
	stderr  *testutil.SyncBuffer
	log     *testutil.SyncBuffer
}

func startCopilot(t *testing.T, cfg Config, env map[string]string) *copilotClient {
	t.Helper()
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	c := &copilotClient{t: t, answers: make(chan map[string]any, 64), pending: map[float64]map[string]any{}, stderr: &testutil.SyncBuffer{}, log: &testutil.SyncBuffer{}}
	cfg.Copilot = true
	cfg.Getenv = func(k string) string { return env[k] }
	cfg.Stderr, cfg.Log = c.stderr, c.log
	c.a = New(cfg)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c.in = inW
	done := make(chan struct{})
	go func() {
		c.a.Serve(inR, outW)
		_ = outW.Close()
		close(done)
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				c.answers <- m
			}
		}
		close(c.answers)
	}()
	t.Cleanup(func() {
		_ = inW.Close()
		<-done
	})
	return c
}

// send writes one message; with an id when id > 0.
func (c *copilotClient) send(id int, method string, params any) {
	c.t.Helper()
	m := map[string]any{"jsonrpc": "2.0", "method": method, "params": params}
	if id > 0 {
		m["id"] = id
	}
	b, _ := json.Marshal(m)
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		c.t.Fatal(err)
	}
}

func (c *copilotClient) note(method string, params any) { c.send(0, method, params) }

// start sends a request and returns its id, to wait for with answer.
func (c *copilotClient) start(method string, params any) int {
	c.next++
	c.send(c.next, method, params)
	return c.next
}

// answer waits for the answer to request id: its result, or its error.
func (c *copilotClient) answer(id int) (result, rerr map[string]any) {
	c.t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		if m, ok := c.pending[float64(id)]; ok {
			delete(c.pending, float64(id))
			r, _ := m["result"].(map[string]any)
			e, _ := m["error"].(map[string]any)
			return r, e
		}
		select {
		case m, ok := <-c.answers:
			if !ok {
				c.t.Fatalf("the stand-in's output ended before answering request %d", id)
			}
			if n, ok := m["id"].(float64); ok {
				c.pending[n] = m
			}
		case <-timeout:
			c.t.Fatalf("request %d was never answered", id)
		}
	}
}

func (c *copilotClient) call(method string, params any) (result, rerr map[string]any) {
	c.t.Helper()
	return c.answer(c.start(method, params))
}

// wantError checks that a request failed with code and message.
func (c *copilotClient) wantError(what string, rerr map[string]any, code int, message string) {
	c.t.Helper()
	if rerr == nil {
		c.t.Errorf("%s: no error, want %d %q", what, code, message)
		return
	}
	if rerr["code"] != float64(code) || rerr["message"] != message {
		c.t.Errorf("%s: error %v, want %d %q", what, rerr, code, message)
	}
	if _, ok := rerr["data"]; ok {
		c.t.Errorf("%s: the error has data %v; Copilot's has none", what, rerr["data"])
	}
}

// sync waits until every notification sent so far has been handled: a request is answered
// only after them (the stand-in's barrier is for nes/suggest, so that is what is asked).
func (c *copilotClient) sync() {
	c.t.Helper()
	c.call("nes/suggest", map[string]any{"sessionId": "sync", "uri": "file:///sync", "version": 0, "position": map[string]any{"line": 0, "character": 0}})
}

// startSession initializes and starts a session, signed in by GH_COPILOT_TOKEN.
func startCopilotSession(t *testing.T, cfg Config) (*copilotClient, string) {
	t.Helper()
	c := startCopilot(t, cfg, map[string]string{"GH_COPILOT_TOKEN": "test"})
	if _, rerr := c.call("initialize", map[string]any{"protocolVersion": 1}); rerr != nil {
		t.Fatalf("initialize: %v", rerr)
	}
	res, rerr := c.call("nes/start", map[string]any{})
	if rerr != nil {
		t.Fatalf("nes/start: %v", rerr)
	}
	sid, _ := res["sessionId"].(string)
	if sid == "" {
		t.Fatalf("nes/start answered %v", res)
	}
	return c, sid
}

func at(line, char int) map[string]any { return map[string]any{"line": line, "character": char} }

func span(l1, c1, l2, c2 int) map[string]any {
	return map[string]any{"start": at(l1, c1), "end": at(l2, c2)}
}

func change(sid, uri string, version int, changes ...map[string]any) map[string]any {
	return map[string]any{"sessionId": sid, "uri": uri, "version": version, "contentChanges": changes}
}

func insert(line, char int, text string) map[string]any {
	return map[string]any{"range": span(line, char, line, char), "text": text}
}

func suggestAt(sid, uri string, version, line, char int) map[string]any {
	return map[string]any{"sessionId": sid, "uri": uri, "version": version, "position": at(line, char), "triggerKind": "manual"}
}

// logged returns the params of the log's records of method.
func (c *copilotClient) logged(method string) []map[string]any {
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(c.log.String()), "\n") {
		var m struct {
			Method string         `json:"method"`
			Params map[string]any `json:"params"`
		}
		if json.Unmarshal([]byte(line), &m) == nil && m.Method == method {
			out = append(out, m.Params)
		}
	}
	return out
}

// TestCopilotInitializeAndSignIn: the stand-in's initialize is Copilot's, field for field; not
// signed in, nes/start answers -32000 "Authentication required"; authenticate refuses an unknown
// method and, without a browser, github_oauth too, with Copilot's codes and messages; with one
// (ACP_TEST_COPILOT_BROWSER=1) it signs in. One session per connection; nes/close ends it (a
// wrong id is refused, none active answers {}), and a new one can start.
func TestCopilotInitializeAndSignIn(t *testing.T) {
	env := map[string]string{}
	c := startCopilot(t, Config{}, env)
	res, rerr := c.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	if rerr != nil {
		t.Fatal(rerr)
	}
	got, _ := json.Marshal(res)
	want := `{"agentCapabilities":{"loadSession":false,"nes":{"context":{"diagnostics":{}},"events":{"document":{"didChange":{"syncKind":"incremental"},"didClose":{},"didFocus":{},"didOpen":{}}}},"positionEncoding":"utf-16","promptCapabilities":{"audio":false,"embeddedContext":true,"image":false}},"agentInfo":{"name":"GitHub Copilot","version":"1.539.0"},"authMethods":[{"description":"Authenticate using GitHub OAuth (opens browser)","id":"github_oauth","name":"Sign in with GitHub"}],"protocolVersion":1}`
	if string(got) != want {
		t.Errorf("initialize answered\n%s\nwant\n%s", got, want)
	}
	_, rerr = c.call("nes/start", map[string]any{})
	c.wantError("nes/start not signed in", rerr, -32000, "Authentication required")
	_, rerr = c.call("authenticate", map[string]any{"methodId": "login"})
	c.wantError("authenticate login", rerr, -32602, "Unknown authentication method: login")
	_, rerr = c.call("authenticate", map[string]any{"methodId": "github_oauth"})
	c.wantError("authenticate without a browser", rerr, 1004, copilotNoBrowser)
	if !strings.HasPrefix(copilotNoBrowser, "OAuth code flow requires a browser but none is available: ") {
		t.Errorf("the no-browser message %q", copilotNoBrowser)
	}
	_, rerr = c.call("nes/suggest", suggestAt("x", "file:///a", 1, 0, 0))
	c.wantError("nes/suggest not signed in", rerr, -32000, "Authentication required")

	env["ACP_TEST_COPILOT_BROWSER"] = "1"
	if _, rerr = c.call("authenticate", map[string]any{"methodId": "github_oauth"}); rerr != nil {
		t.Fatalf("authenticate with a browser: %v", rerr)
	}
	res, rerr = c.call("nes/start", map[string]any{})
	sid, _ := res["sessionId"].(string)
	if rerr != nil || len(sid) != 36 {
		t.Fatalf("nes/start once signed in: %v %v, want a session id like Copilot's (a UUID)", res, rerr)
	}
	_, rerr = c.call("nes/start", map[string]any{})
	c.wantError("a second nes/start", rerr, -32602, "Only one active NES session is supported per ACP connection")
	_, rerr = c.call("nes/close", map[string]any{"sessionId": "other"})
	c.wantError("nes/close of another session", rerr, -32602, "Unknown NES session: other")
	if _, rerr = c.call("nes/close", map[string]any{"sessionId": sid}); rerr != nil {
		t.Errorf("nes/close: %v", rerr)
	}
	if _, rerr = c.call("nes/close", map[string]any{"sessionId": sid}); rerr != nil {
		t.Errorf("nes/close with no session active: %v, want {}", rerr)
	}
	_, rerr = c.call("nes/suggest", suggestAt(sid, "file:///a", 1, 0, 0))
	c.wantError("nes/suggest of the closed session", rerr, -32602, "Unknown NES session: "+sid)
	res, rerr = c.call("nes/start", map[string]any{})
	if rerr != nil || res["sessionId"] == sid {
		t.Errorf("nes/start after nes/close: %v %v, want a new session", res, rerr)
	}
}

// TestCopilotSignedInByEnvironment: GH_COPILOT_TOKEN signs in unless it holds "=";
// GITHUB_COPILOT_TOKEN signs in; authenticate then succeeds without a browser.
func TestCopilotSignedInByEnvironment(t *testing.T) {
	for _, tc := range []struct {
		env    map[string]string
		signed bool
	}{
		{map[string]string{"GH_COPILOT_TOKEN": "test"}, true},
		{map[string]string{"GH_COPILOT_TOKEN": "a=b"}, false},
		{map[string]string{"GITHUB_COPILOT_TOKEN": "test"}, true},
		{map[string]string{"GH_COPILOT_TOKEN": "a=b", "GITHUB_COPILOT_TOKEN": "test"}, true},
		{map[string]string{"GITHUB_TOKEN": "test"}, false},
	} {
		t.Run(fmt.Sprint(tc.env), func(t *testing.T) {
			c := startCopilot(t, Config{}, tc.env)
			_, rerr := c.call("nes/start", map[string]any{})
			if signed := rerr == nil; signed != tc.signed {
				t.Errorf("nes/start: %v, want signed in %v", rerr, tc.signed)
			}
			_, rerr = c.call("authenticate", map[string]any{"methodId": "github_oauth"})
			if ok := rerr == nil; ok != tc.signed {
				t.Errorf("authenticate: %v, want success %v (signed in already, no browser needed)", rerr, tc.signed)
			}
		})
	}
}

// TestCopilotDocumentRules: what the stand-in ignores, as Copilot does, and says on stderr: a
// notification of another session, a second didOpen, a didChange that is stale, has no range or
// an invalid one (past the end of a line, beyond the last line, reversed), a didClose of an
// unknown document, a didFocus whose version is not its own; the changes it takes are applied
// in order. nes/suggest checks the session, then the document, then its version.
func TestCopilotDocumentRules(t *testing.T) {
	c, sid := startCopilotSession(t, Config{Rules: []Rule{{When: "retur", Find: "retur", Replace: "return nil"}}})
	const uri = "file:///w/main.go"
	open := map[string]any{"sessionId": sid, "uri": uri, "languageId": "go", "version": 1, "text": "package main\n\t\n"}
	c.note("document/didOpen", map[string]any{"sessionId": "other", "uri": uri, "languageId": "go", "version": 1, "text": "other"})
	c.note("document/didOpen", open)
	c.note("document/didOpen", map[string]any{"sessionId": sid, "uri": uri, "languageId": "go", "version": 5, "text": "duplicate"})
	c.note("document/didChange", change(sid, uri, 2, insert(1, 1, "r")))
	c.note("document/didChange", change(sid, uri, 2, insert(1, 2, "X")))                                     // stale: same version
	c.note("document/didChange", change(sid, uri, 3, map[string]any{"text": "full text"}))                   // no range
	c.note("document/didChange", change(sid, uri, 3, insert(1, 3, "X")))                                     // past the end of the line
	c.note("document/didChange", change(sid, uri, 3, insert(3, 0, "X")))                                     // beyond the last line
	c.note("document/didChange", change(sid, uri, 3, map[string]any{"range": span(1, 2, 1, 1), "text": ""})) // reversed
	c.note("document/didChange", change(sid, uri, 3, insert(1, 2, "e"), insert(1, 3, "tur")))                // each range on the text before it
	c.note("document/didChange", change("other", uri, 4, insert(1, 0, "X")))
	c.note("document/didChange", change(sid, "file:///w/none.go", 4, insert(0, 0, "X")))
	c.note("document/didClose", map[string]any{"sessionId": sid, "uri": "file:///w/none.go"})
	c.note("document/didFocus", map[string]any{"sessionId": sid, "uri": uri, "version": 2, "position": at(1, 0), "visibleRange": span(0, 0, 2, 0)})
	c.note("document/didFocus", map[string]any{"sessionId": sid, "uri": uri, "version": 3, "position": at(1, 0), "visibleRange": span(0, 0, 2, 0)})
	c.sync()
	if text, _ := c.a.Mirror(uri); text != "package main\n\tretur\n" {
		t.Errorf("the stand-in's copy: %q", text)
	}
	if v, _ := c.a.Version(uri); v != 3 {
		t.Errorf("the stand-in's version: %d, want 3", v)
	}
	wantStderr := []string{
		"Ignoring notification for unknown NES session: other\n",
		"Ignoring duplicate ACP document/didOpen for " + uri + "\n",
		"Ignoring stale or unknown ACP document/didChange for " + uri + "\n",
		"Ignoring invalid ACP document/didChange for " + uri + "\n",
		"Ignoring invalid ACP document/didChange for " + uri + "\n",
		"Ignoring invalid ACP document/didChange for " + uri + "\n",
		"Ignoring invalid ACP document/didChange for " + uri + "\n",
		"Ignoring notification for unknown NES session: other\n",
		"Ignoring stale or unknown ACP document/didChange for file:///w/none.go\n",
		"Ignoring ACP document/didClose for an unknown document: file:///w/none.go\n",
		"Ignoring stale or unknown ACP document/didFocus for " + uri + "\n",
	}
	if got := strings.ReplaceAll(c.stderr.String(), "[acp.nes] ", ""); got != strings.Join(wantStderr, "") {
		t.Errorf("stderr:\n%s\nwant:\n%s", got, strings.Join(wantStderr, ""))
	}

	_, rerr := c.call("nes/suggest", suggestAt("other", uri, 3, 1, 6))
	c.wantError("another session", rerr, -32602, "Unknown NES session: other")
	_, rerr = c.call("nes/suggest", suggestAt(sid, "file:///w/none.go", 3, 1, 6))
	c.wantError("a document not open", rerr, -32602, "Document is not open: file:///w/none.go")
	_, rerr = c.call("nes/suggest", suggestAt(sid, uri, 4, 1, 6))
	c.wantError("a version ahead", rerr, -32602, "Document version mismatch for "+uri+": expected 3, received 4")
	_, rerr = c.call("nes/suggest", suggestAt(sid, uri, 2, 1, 6))
	c.wantError("a version behind", rerr, -32602, "Document version mismatch for "+uri+": expected 3, received 2")

	ids := map[string]bool{}
	for range 2 {
		res, rerr := c.call("nes/suggest", suggestAt(sid, uri, 3, 1, 6))
		if rerr != nil {
			t.Fatal(rerr)
		}
		sugs, _ := res["suggestions"].([]any)
		if len(sugs) != 1 {
			t.Fatalf("suggestions %v, want one", res)
		}
		s := sugs[0].(map[string]any)
		id, _ := s["id"].(string)
		ids[id] = true
		delete(s, "id")
		got, _ := json.Marshal(s)
		if want := `{"edits":[{"newText":"return nil","range":{"end":{"character":6,"line":1},"start":{"character":1,"line":1}}}],"kind":"edit","uri":"` + uri + `"}`; string(got) != want {
			t.Errorf("suggestion %s, want %s (kind edit, the request's uri, no cursorPosition)", got, want)
		}
	}
	if len(ids) != 2 {
		t.Errorf("suggestion ids %v, want two different ones", ids)
	}

	// didClose forgets the document; nes/close forgets every document.
	c.note("document/didClose", map[string]any{"sessionId": sid, "uri": uri})
	_, rerr = c.call("nes/suggest", suggestAt(sid, uri, 3, 1, 6))
	c.wantError("after didClose", rerr, -32602, "Document is not open: "+uri)
	c.note("document/didOpen", open)
	c.sync()
	if _, rerr := c.call("nes/close", map[string]any{"sessionId": sid}); rerr != nil {
		t.Fatal(rerr)
	}
	if _, ok := c.a.Mirror(uri); ok {
		t.Errorf("the document is still open after nes/close")
	}
}

// TestCopilotDropChange: with DropChange 2, the second didChange is dropped and logged as
// test/droppedChange; the next one, typed at the end of the line the stand-in no longer has, is
// invalid and ignored, so nes/suggest at the editor's version is refused as a version mismatch
// (what the bridge repairs); didClose and didOpen with the current text repair it, and the
// suggestion is made for that text. Unrepaired, a change that stays valid on the wrong text
// gives a wrong suggestion at a version that matches.
func TestCopilotDropChange(t *testing.T) {
	rules := []Rule{{When: "retur", Find: "retur", Replace: "return nil"}, {When: "rtur", Find: "rtur", Replace: "WRONG"}}
	c, sid := startCopilotSession(t, Config{DropChange: 2, Rules: rules})
	const uri = "file:///w/main.go"
	c.note("document/didOpen", map[string]any{"sessionId": sid, "uri": uri, "languageId": "go", "version": 1, "text": "package main\n\t\n"})
	c.note("document/didChange", change(sid, uri, 2, insert(1, 1, "r")))
	c.note("document/didChange", change(sid, uri, 3, insert(1, 2, "e"))) // dropped
	c.note("document/didChange", change(sid, uri, 4, insert(1, 3, "t"))) // past the end of "\tr"
	_, rerr := c.call("nes/suggest", suggestAt(sid, uri, 4, 1, 4))
	c.wantError("after the dropped change", rerr, -32602, "Document version mismatch for "+uri+": expected 2, received 4")
	dropped := c.logged("test/droppedChange")
	if len(dropped) != 1 || dropped[0]["n"] != float64(2) || dropped[0]["version"] != float64(3) || dropped[0]["uri"] != uri {
		t.Errorf("test/droppedChange records %v, want one for change 2 (version 3) of %s", dropped, uri)
	}
	if !strings.Contains(c.stderr.String(), "dropping document/didChange #2") {
		t.Errorf("stderr does not say the change was dropped:\n%s", c.stderr.String())
	}

	// The repair: close and open again with the text the editor has.
	c.note("document/didClose", map[string]any{"sessionId": sid, "uri": uri})
	c.note("document/didOpen", map[string]any{"sessionId": sid, "uri": uri, "languageId": "go", "version": 4, "text": "package main\n\tret\n"})
	c.note("document/didChange", change(sid, uri, 5, insert(1, 4, "ur")))
	res, rerr := c.call("nes/suggest", suggestAt(sid, uri, 5, 1, 6))
	if rerr != nil {
		t.Fatal(rerr)
	}
	if sugs, _ := res["suggestions"].([]any); len(sugs) != 1 || !strings.Contains(fmt.Sprint(sugs[0]), "newText:return nil") {
		t.Errorf("after the repair: %v, want the suggestion for \"\\tretur\"", res)
	}

	// Unrepaired, with a change that stays valid on the stand-in's wrong text: a wrong suggestion.
	c2, sid2 := startCopilotSession(t, Config{DropChange: 1, Rules: rules})
	c2.note("document/didOpen", map[string]any{"sessionId": sid2, "uri": uri, "languageId": "go", "version": 1, "text": "package main\n\tr\n"})
	c2.note("document/didChange", change(sid2, uri, 2, insert(1, 2, "e"))) // dropped
	c2.note("document/didChange", change(sid2, uri, 3, insert(1, 2, "tur")))
	res, rerr = c2.call("nes/suggest", suggestAt(sid2, uri, 3, 1, 6))
	if rerr != nil || !strings.Contains(fmt.Sprint(res), "newText:WRONG") {
		t.Errorf("unrepaired: %v %v, want the suggestion for the stand-in's wrong text \"\\trtur\"", res, rerr)
	}
}

// TestCopilotSuggestAfterNotifications: nes/suggest is answered on the text of every notification
// sent before it, however many (the Go SDK runs requests at once and queues notifications; the
// real server's SDK handles them in order).
func TestCopilotSuggestAfterNotifications(t *testing.T) {
	c, sid := startCopilotSession(t, Config{Rules: []Rule{{When: "x", Find: "", Replace: "!"}}})
	const uri = "file:///w/a.txt"
	c.note("document/didOpen", map[string]any{"sessionId": sid, "uri": uri, "languageId": "text", "version": 1, "text": ""})
	const n = 300
	var wire strings.Builder
	for i := range n {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "document/didChange", "params": change(sid, uri, i+2, insert(0, i, "x"))})
		wire.Write(append(b, '\n'))
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1000, "method": "nes/suggest", "params": suggestAt(sid, uri, n+1, 0, n)})
	wire.Write(append(b, '\n'))
	if _, err := io.WriteString(c.in, wire.String()); err != nil {
		t.Fatal(err)
	}
	res, rerr := c.answer(1000)
	if rerr != nil {
		t.Fatalf("nes/suggest right after %d changes: %v", n, rerr)
	}
	if sugs, _ := res["suggestions"].([]any); len(sugs) != 1 {
		t.Errorf("suggestions %v, want one", res)
	}
}

// TestCopilotRejectCounts: nes/reject with reason "rejected" or none counts as a rejection, any
// other reason as ignored (test/copilotReject); an id accepted already, or never suggested, is
// unknown. A newer nes/suggest supersedes the one in flight, which answers no suggestions.
func TestCopilotRejectCounts(t *testing.T) {
	rules := []Rule{{When: "a", Find: "a", Replace: "b"}}
	const uri = "file:///w/a.txt"
	open := func(c *copilotClient, sid string) {
		c.note("document/didOpen", map[string]any{"sessionId": sid, "uri": uri, "languageId": "text", "version": 1, "text": "a\n"})
	}
	slow, slowID := startCopilotSession(t, Config{Rules: rules, SuggestDelay: 500 * time.Millisecond})
	open(slow, slowID)
	first := slow.start("nes/suggest", suggestAt(slowID, uri, 1, 0, 1))
	time.Sleep(100 * time.Millisecond)
	second := slow.start("nes/suggest", suggestAt(slowID, uri, 1, 0, 1))
	if res, rerr := slow.answer(first); rerr != nil || len(res["suggestions"].([]any)) != 0 {
		t.Errorf("the superseded nes/suggest: %v %v, want no suggestions", res, rerr)
	}
	if res, rerr := slow.answer(second); rerr != nil || len(res["suggestions"].([]any)) != 1 {
		t.Errorf("the newer nes/suggest: %v %v, want one suggestion", res, rerr)
	}

	c, sid := startCopilotSession(t, Config{Rules: rules})
	open(c, sid)
	var ids []string
	for range 5 {
		res, rerr := c.call("nes/suggest", suggestAt(sid, uri, 1, 0, 1))
		if rerr != nil {
			t.Fatal(rerr)
		}
		ids = append(ids, res["suggestions"].([]any)[0].(map[string]any)["id"].(string))
	}
	c.note("nes/reject", map[string]any{"sessionId": sid, "id": ids[0], "reason": "rejected"})
	c.note("nes/reject", map[string]any{"sessionId": sid, "id": ids[1]})
	c.note("nes/reject", map[string]any{"sessionId": sid, "id": ids[2], "reason": "ignored"})
	c.note("nes/reject", map[string]any{"sessionId": sid, "id": ids[3], "reason": "replaced"})
	c.note("nes/accept", map[string]any{"sessionId": sid, "id": ids[4]})
	c.note("nes/reject", map[string]any{"sessionId": sid, "id": ids[4], "reason": "rejected"})
	c.note("nes/reject", map[string]any{"sessionId": sid, "id": "never", "reason": "rejected"})
	c.sync()
	var got []string
	for _, r := range c.logged("test/copilotReject") {
		got = append(got, fmt.Sprint(r["id"], "=", r["counted"]))
	}
	want := []string{ids[0] + "=rejected", ids[1] + "=rejected", ids[2] + "=ignored", ids[3] + "=ignored", ids[4] + "=unknown", "never=unknown"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("test/copilotReject: %v, want %v", got, want)
	}
	if n := len(c.logged("nes/reject")); n != 6 {
		t.Errorf("%d nes/reject logged, want 6", n)
	}
}

// copilotLSPClient speaks LSP to the stand-in's LSP mode (ServeLSP) over pipes, answering
// window/showDocument with {success: false}, as the bridge does.
type copilotLSPClient struct {
	t      *testing.T
	a      *Agent
	conn   jsonrpc2.Conn
	in     io.WriteCloser
	log    *testutil.SyncBuffer
	stderr *testutil.SyncBuffer
	code   chan int // ServeLSP's status once it returned
	shown  chan map[string]any
}

func startCopilotLSP(t *testing.T, env map[string]string) *copilotLSPClient {
	t.Helper()
	c := &copilotLSPClient{t: t, log: &testutil.SyncBuffer{}, stderr: &testutil.SyncBuffer{}, code: make(chan int, 1), shown: make(chan map[string]any, 4)}
	c.a = New(Config{Copilot: true, Getenv: func(k string) string { return env[k] }, Log: c.log, Stderr: c.stderr})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c.in = inW
	go func() {
		c.code <- c.a.ServeLSP(inR, outW)
		_ = outW.Close()
	}()
	c.conn = jsonrpc2.NewConn(jsonrpc2.NewStream(lspStream{outR, inW}))
	c.conn.Go(context.Background(), func(ctx context.Context, req *jsonrpc2.Request) (any, error) {
		if req.Method() == "window/showDocument" {
			var p map[string]any
			_ = json.Unmarshal(req.Params(), &p)
			c.shown <- p
			return map[string]any{"success": false}, nil
		}
		return nil, nil
	})
	t.Cleanup(func() {
		_ = c.conn.Close()
		select {
		case <-c.code:
		case <-time.After(5 * time.Second):
			t.Errorf("ServeLSP did not return once its input ended")
		}
	})
	return c
}

// call sends a request and waits (at most 10 s) for its result, or its error.
func (c *copilotLSPClient) call(method string, params any) (map[string]any, *jsonrpc2.Error) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var res map[string]any
	_, err := c.conn.Call(ctx, method, params, &res)
	if err == nil {
		return res, nil
	}
	var e *jsonrpc2.Error
	if !errors.As(err, &e) {
		c.t.Fatalf("%s: %v", method, err)
	}
	return nil, e
}

func (c *copilotLSPClient) initialize() {
	c.t.Helper()
	info := map[string]any{"name": "acp-lsp-bridge", "version": "test"}
	res, err := c.call("initialize", map[string]any{"processId": 1, "capabilities": map[string]any{}, "clientInfo": info,
		"initializationOptions": map[string]any{"editorInfo": info, "editorPluginInfo": info}})
	if err != nil {
		c.t.Fatalf("initialize: %v", err)
	}
	if si, _ := res["serverInfo"].(map[string]any); si["name"] != "GitHub Copilot Language Server" || si["version"] != copilotVersion {
		c.t.Errorf("initialize's serverInfo %v", res["serverInfo"])
	}
	caps, _ := res["capabilities"].(map[string]any)
	ec, _ := caps["executeCommandProvider"].(map[string]any)
	if cmds, _ := ec["commands"].([]any); len(cmds) == 0 || cmds[0] != "github.copilot.finishDeviceFlow" {
		c.t.Errorf("executeCommandProvider %v, want github.copilot.finishDeviceFlow first", ec)
	}
	if err := c.conn.Notify(context.Background(), "initialized", map[string]any{}); err != nil {
		c.t.Fatal(err)
	}
}

// exit sends exit and returns the status ServeLSP returned.
func (c *copilotLSPClient) exit() int {
	c.t.Helper()
	if err := c.conn.Notify(context.Background(), "exit", nil); err != nil {
		c.t.Fatal(err)
	}
	select {
	case code := <-c.code:
		c.code <- code
		return code
	case <-time.After(5 * time.Second):
		c.t.Fatal("ServeLSP did not return after exit")
	}
	return -1
}

// logged lists the methods of the log's records.
func loggedMethods(log *testutil.SyncBuffer) []string {
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(log.String()), "\n") {
		var m struct {
			Method string `json:"method"`
		}
		if json.Unmarshal([]byte(line), &m) == nil {
			out = append(out, m.Method)
		}
	}
	return out
}

// TestCopilotLSPDeviceFlow: the LSP mode's device flow. signInInitiate gives the code;
// finishDeviceFlow first asks the client to open the address (window/showDocument, external),
// then waits until the code is entered (the file exists), saves the sign-in in the store and
// answers OK with the account. signInInitiate then answers AlreadySignedIn; shutdown and exit end
// it with status 0; every message was logged. The ACP mode, in the same environment, is then
// signed in: nes/start succeeds, and authenticate does without a browser.
func TestCopilotLSPDeviceFlow(t *testing.T) {
	home := t.TempDir()
	entered := filepath.Join(t.TempDir(), "entered")
	env := map[string]string{"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, ".config"), CopilotCodeEnteredEnv: entered}
	c := startCopilotLSP(t, env)
	c.initialize()
	res, rerr := c.call("signInInitiate", map[string]any{})
	if rerr != nil {
		t.Fatalf("signInInitiate: %v", rerr)
	}
	got, _ := json.Marshal(res)
	if want := `{"command":{"arguments":[],"command":"github.copilot.finishDeviceFlow","title":"Sign in with GitHub"},"expiresIn":900,"interval":5,"status":"PromptUserDeviceFlow","userCode":"WXYZ-1234","verificationUri":"https://github.com/login/device"}`; string(got) != want {
		t.Errorf("signInInitiate answered\n%s\nwant\n%s", got, want)
	}
	type answer struct {
		res  map[string]any
		rerr *jsonrpc2.Error
	}
	finished := make(chan answer, 1)
	go func() {
		var res map[string]any
		_, err := c.conn.Call(context.Background(), "workspace/executeCommand", map[string]any{"command": "github.copilot.finishDeviceFlow", "arguments": []any{}}, &res)
		var e *jsonrpc2.Error
		if err != nil && !errors.As(err, &e) {
			e = jsonrpc2.NewError(0, err.Error())
		}
		finished <- answer{res, e}
	}()
	select {
	case p := <-c.shown:
		if p["uri"] != "https://github.com/login/device" || p["external"] != true {
			t.Errorf("window/showDocument %v, want the address, external", p)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("finishDeviceFlow did not ask the client to open the address")
	}
	// Not entered yet: it waits, and the connection still answers meanwhile.
	select {
	case a := <-finished:
		t.Fatalf("finishDeviceFlow answered %v %v before the code was entered", a.res, a.rerr)
	case <-time.After(300 * time.Millisecond):
	}
	if _, rerr := c.call("unknown/request", map[string]any{}); rerr == nil || rerr.Code != jsonrpc2.MethodNotFound {
		t.Errorf("an unknown request while finishDeviceFlow waits: %v, want method not found", rerr)
	}
	if _, ok := c.a.copilotStoredUser(); ok {
		t.Fatal("the store holds a sign-in before the code was entered")
	}
	if err := os.WriteFile(entered, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case a := <-finished:
		if a.rerr != nil || a.res["status"] != "OK" || a.res["user"] != "octocat" {
			t.Errorf("finishDeviceFlow answered %v %v, want status OK, user octocat", a.res, a.rerr)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("finishDeviceFlow did not answer once the code was entered")
	}
	b, err := os.ReadFile(filepath.Join(home, ".config", "github-copilot", "apps.json"))
	if err != nil || !strings.Contains(string(b), `"github.com:Iv1.b507a08c87ecfe98":{`) || !strings.Contains(string(b), `"oauth_token":"gho_test"`) {
		t.Errorf("the store's apps.json: %s %v", b, err)
	}
	if _, rerr := c.call("workspace/executeCommand", map[string]any{"command": "github.copilot.finishDeviceFlow", "arguments": []any{}}); rerr == nil || rerr.Code != -32600 || rerr.Message != "No pending sign in" {
		t.Errorf("finishDeviceFlow again: %v, want -32600 No pending sign in", rerr)
	}
	res, rerr = c.call("signInInitiate", map[string]any{})
	if rerr != nil || res["status"] != "AlreadySignedIn" || res["user"] != "octocat" {
		t.Errorf("signInInitiate once signed in: %v %v, want AlreadySignedIn octocat", res, rerr)
	}
	if _, rerr := c.call("shutdown", nil); rerr != nil {
		t.Errorf("shutdown: %v", rerr)
	}
	if code := c.exit(); code != 0 {
		t.Errorf("exit after shutdown: status %d, want 0", code)
	}
	want := []string{"initialize", "initialized", "signInInitiate", "workspace/executeCommand", "unknown/request", "test/showDocumentAnswer", "workspace/executeCommand", "signInInitiate", "shutdown", "exit"}
	methods := loggedMethods(c.log)
	// The answer to showDocument may be logged before or after the unknown request.
	if slices.Sort(methods); !slices.Equal(methods, slices.Sorted(slices.Values(want))) {
		t.Errorf("logged %v, want %v in any order", loggedMethods(c.log), want)
	}
	for _, line := range strings.Split(c.log.String(), "\n") {
		if strings.Contains(line, `"test/showDocumentAnswer"`) && !strings.Contains(line, `"params":{"success":false}`) {
			t.Errorf("the answer to window/showDocument logged as %s", line)
		}
		if strings.Contains(line, `"method":"initialize"`) && !strings.Contains(line, `"editorPluginInfo"`) {
			t.Errorf("initialize logged without its params: %s", line)
		}
	}

	// The ACP mode reads the store: signed in.
	acp := startCopilot(t, Config{}, map[string]string{"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, ".config")})
	if _, rerr := acp.call("authenticate", map[string]any{"methodId": "github_oauth"}); rerr != nil {
		t.Errorf("authenticate with a sign-in in the store: %v, want {} without a browser", rerr)
	}
	if res, rerr := acp.call("nes/start", map[string]any{}); rerr != nil || res["sessionId"] == nil {
		t.Errorf("nes/start with a sign-in in the store: %v %v", res, rerr)
	}
}

// TestCopilotLSPOffline: without ACP_TEST_COPILOT_CODE_ENTERED the LSP mode is the real server
// offline: signInInitiate fails with 1001 and its message, finishDeviceFlow has no sign-in
// pending; a request before initialize is refused; exit without shutdown ends with status 1.
func TestCopilotLSPOffline(t *testing.T) {
	c := startCopilotLSP(t, map[string]string{"HOME": t.TempDir()})
	if _, rerr := c.call("signInInitiate", map[string]any{}); rerr == nil || rerr.Code != -32002 {
		t.Errorf("signInInitiate before initialize: %v, want -32002", rerr)
	}
	c.initialize()
	_, rerr := c.call("signInInitiate", map[string]any{})
	if rerr == nil || rerr.Code != 1001 || rerr.Message != "Could not log in with device flow on https://github.com/: getaddrinfo ENOTFOUND github.com" {
		t.Errorf("signInInitiate offline: %v, want the real server's 1001", rerr)
	}
	_, rerr = c.call("workspace/executeCommand", map[string]any{"command": "github.copilot.finishDeviceFlow", "arguments": []any{}})
	if rerr == nil || rerr.Code != -32600 || rerr.Message != "No pending sign in" {
		t.Errorf("finishDeviceFlow with nothing pending: %v", rerr)
	}
	if code := c.exit(); code != 1 {
		t.Errorf("exit without shutdown: status %d, want 1", code)
	}
}

// TestCopilotStore: where the stand-in keeps its sign-ins, as the real server does: under
// XDG_CONFIG_HOME only when it is absolute; none without HOME (never the machine's own); a file
// of entries without a token is no sign-in.
func TestCopilotStore(t *testing.T) {
	home := t.TempDir()
	xdg := filepath.Join(t.TempDir(), "config")
	dir := func(env map[string]string) string {
		return New(Config{Copilot: true, Getenv: func(k string) string { return env[k] }}).copilotStoreDir()
	}
	if runtime.GOOS != "windows" {
		if got := dir(map[string]string{"HOME": home, "XDG_CONFIG_HOME": "relative"}); got != filepath.Join(home, ".config", "github-copilot") {
			t.Errorf("with a relative XDG_CONFIG_HOME: %s", got)
		}
	}
	if got := dir(map[string]string{"HOME": home, "XDG_CONFIG_HOME": xdg}); got != filepath.Join(xdg, "github-copilot") {
		t.Errorf("with XDG_CONFIG_HOME: %s", got)
	}
	if got := dir(map[string]string{}); got != "" {
		t.Errorf("without HOME: %q, want none", got)
	}
	a := New(Config{Copilot: true, Getenv: func(k string) string {
		return map[string]string{"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, ".config")}[k]
	}})
	store := filepath.Join(home, ".config", "github-copilot")
	if err := os.MkdirAll(store, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(store, "apps.json"), []byte(`{"github.com:x":{"user":"someone"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if u, ok := a.copilotStoredUser(); ok {
		t.Errorf("an entry without oauth_token counts as a sign-in (%s)", u)
	}
	if err := os.WriteFile(filepath.Join(store, "hosts.json"), []byte(`{"github.com":{"user":"hubot","oauth_token":"gho_x"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if u, ok := a.copilotStoredUser(); !ok || u != "hubot" {
		t.Errorf("hosts.json's sign-in: %q %v, want hubot", u, ok)
	}
}

// TestCopilotLSPCancel: $/cancelRequest ends finishDeviceFlow's wait with -32800; nothing is
// saved, and the sign-in is no longer pending.
func TestCopilotLSPCancel(t *testing.T) {
	home := t.TempDir()
	c := startCopilotLSP(t, map[string]string{"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, ".config"), CopilotCodeEnteredEnv: filepath.Join(t.TempDir(), "entered")})
	// The client numbers its requests from 1: initialize, signInInitiate, then finishDeviceFlow.
	c.initialize()
	if _, rerr := c.call("signInInitiate", map[string]any{}); rerr != nil {
		t.Fatal(rerr)
	}
	finished := make(chan error, 1)
	go func() {
		_, err := c.conn.Call(context.Background(), "workspace/executeCommand", map[string]any{"command": "github.copilot.finishDeviceFlow", "arguments": []any{}}, nil)
		finished <- err
	}()
	select {
	case <-c.shown:
	case <-time.After(5 * time.Second):
		t.Fatal("finishDeviceFlow did not start")
	}
	if err := c.conn.Notify(context.Background(), "$/cancelRequest", map[string]any{"id": 3}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-finished:
		var e *jsonrpc2.Error
		if !errors.As(err, &e) || e.Code != -32800 {
			t.Errorf("finishDeviceFlow cancelled: %v, want -32800", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("finishDeviceFlow still waits after $/cancelRequest")
	}
	if _, ok := c.a.copilotStoredUser(); ok {
		t.Error("a cancelled device flow saved a sign-in")
	}
	if _, rerr := c.call("workspace/executeCommand", map[string]any{"command": "github.copilot.finishDeviceFlow", "arguments": []any{}}); rerr == nil || rerr.Message != "No pending sign in" {
		t.Errorf("finishDeviceFlow after the cancelled one: %v, want No pending sign in", rerr)
	}
}
