package lspside_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"
	"go.lsp.dev/jsonrpc2"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/testagent"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/lspside"
)

func TestInitializeNegotiatesEncoding(t *testing.T) {
	for _, tc := range []struct {
		offered []string
		want    string
	}{
		{nil, "utf-16"},
		{[]string{"utf-16"}, "utf-16"},
		{[]string{"utf-16", "utf-32"}, "utf-16"},
		{[]string{"utf-32", "utf-8", "utf-16"}, "utf-32"}, // lsp-mode and Eglot
		{[]string{"utf-8", "utf-16"}, "utf-8"},
		{[]string{"latin-1", "utf-32"}, "utf-32"},
		{[]string{"latin-1"}, "utf-16"},
	} {
		t.Run(fmt.Sprint(tc.offered), func(t *testing.T) {
			e := newEditor(t, harnessOpts{})
			if got := e.initialize(tc.offered...); got != tc.want {
				t.Errorf("positionEncoding = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestCapabilitiesAdvertiseOnlyWhatIsImplemented(t *testing.T) {
	inline := map[string]any{"textDocument": map[string]any{"inlineCompletion": map[string]any{}}}
	for _, tc := range []struct {
		name       string
		params     map[string]any
		completion bool
	}{
		{"client with inline completion", map[string]any{"capabilities": inline}, false},
		{"client without inline completion", map[string]any{"capabilities": map[string]any{}}, true},
		{"completion turned off", map[string]any{"capabilities": map[string]any{}, "initializationOptions": map[string]any{"completion": false}}, false},
		{"completion turned on", map[string]any{"capabilities": inline, "initializationOptions": map[string]any{"completion": true}}, true},
		// lsp-mode advertises inline completion as "inlineCompletion": null.
		{"inline completion advertised as null", map[string]any{"capabilities": map[string]any{"textDocument": map[string]any{"inlineCompletion": nil}}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEditor(t, harnessOpts{})
			var res map[string]map[string]json.RawMessage
			e.mustCall("initialize", tc.params, &res)
			caps := res["capabilities"]
			want := map[string]bool{"positionEncoding": true, "textDocumentSync": true, "inlineCompletionProvider": true,
				"codeActionProvider": true, "executeCommandProvider": true, "completionProvider": tc.completion}
			for k := range caps {
				if !want[k] {
					t.Errorf("advertises %q", k)
				}
			}
			for k, w := range want {
				if _, ok := caps[k]; w && !ok {
					t.Errorf("does not advertise %q", k)
				}
			}
			if got := string(caps["textDocumentSync"]); got != `{"openClose":true,"change":2,"save":{}}` {
				t.Errorf("textDocumentSync = %s", got)
			}
			if got := string(caps["executeCommandProvider"]); got != `{"commands":["acp-lsp-bridge.accept","acp-lsp-bridge.reject","acp-lsp-bridge.suggest","acp-lsp-bridge.signIn","acp-lsp-bridge.restart"]}` {
				t.Errorf("executeCommandProvider = %s", got)
			}
			if got := string(caps["codeActionProvider"]); got != `{"codeActionKinds":["quickfix","refactor.rewrite"]}` {
				t.Errorf("codeActionProvider = %s", got)
			}
		})
	}
}

func TestDocumentSyncReachesAgent(t *testing.T) {
	const uri = "file:///work/project/main.go"
	for _, sync := range []string{"incremental", "full"} {
		for _, enc := range []string{"utf-8", "utf-16", "utf-32"} {
			t.Run(sync+"/"+enc, func(t *testing.T) {
				e := newEditor(t, harnessOpts{agentCfg: testagent.Config{Encoding: enc, Sync: sync}})
				e.initialize("utf-16")
				text := "package main\n// 𐐀 日本語 é\r\nfunc main() {}\r"
				e.open(uri, text)
				e.waitMirror(uri, text)
				// Two changes in one notification: the second range refers to the text after the
				// first (utf-16 positions: 𐐀 is two units).
				e.change(uri, 2,
					rangeChange(pos{1, 6}, pos{1, 9}, "中文"), // 日本語 → 中文
					rangeChange(pos{1, 3}, pos{1, 5}, "x"),  // 𐐀 → x
				)
				want := "package main\n// x 中文 é\r\nfunc main() {}\r"
				e.waitMirror(uri, want)
				e.change(uri, 3, map[string]any{"text": "whole\nnew text"})
				e.waitMirror(uri, "whole\nnew text")
				e.change(uri, 4, rangeChange(pos{0, 0}, pos{1, 0}, ""))
				e.waitMirror(uri, "new text")
				e.notify("textDocument/didSave", map[string]any{"textDocument": map[string]any{"uri": uri}})
				e.notify("textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": uri}})
				e.waitAgent("didClose", method("document/didClose"))
				var got []string
				for _, m := range e.agent.Received() {
					if strings.HasPrefix(m.Method, "document/") {
						got = append(got, m.Method)
					}
					if m.Method == "document/didChange" && sync == "full" {
						var p acp.UnstableDidChangeDocumentNotification
						_ = json.Unmarshal(m.Params, &p)
						if len(p.ContentChanges) != 1 || p.ContentChanges[0].Range != nil {
							t.Errorf("a full-sync agent got %s", m.Params)
						}
					}
				}
				wantSeq := []string{"document/didOpen", "document/didChange", "document/didChange", "document/didChange", "document/didSave", "document/didClose"}
				if fmt.Sprint(got) != fmt.Sprint(wantSeq) {
					t.Errorf("agent events %v, want %v", got, wantSeq)
				}
			})
		}
	}
}

func TestInlineCompletionShowsEditAndAccepts(t *testing.T) {
	const uri = "file:///work/project/a%40b/ünï code.go" // echoed exactly as sent
	for _, enc := range []string{"utf-8", "utf-16", "utf-32"} {
		t.Run(enc, func(t *testing.T) {
			e := newEditor(t, harnessOpts{agentCfg: testagent.Config{
				Encoding: "utf-32",
				Rules:    []testagent.Rule{{When: "𐐀 = fo", Find: "fo", Replace: "foo(日本, 😀)"}},
			}})
			if got := e.initialize(enc); got != enc {
				t.Fatalf("negotiated %s", got)
			}
			e.waitReady()
			line := "x := \"é\"; 𐐀 = fo"
			e.open(uri, "package p\n"+line+"\n")
			cursor := pos{1, units(line, enc)}
			items, err := e.inline(uri, cursor)
			if err != nil {
				t.Fatal(err)
			}
			if len(items) != 1 {
				t.Fatalf("items = %+v", items)
			}
			it := items[0]
			start := units("x := \"é\"; 𐐀 = ", enc)
			if it.InsertText != "foo(日本, 😀)" || it.Range == nil ||
				it.Range.Start.Line != 1 || it.Range.Start.Character != start ||
				it.Range.End.Line != 1 || it.Range.End.Character != cursor.char {
				t.Fatalf("item = %+v range %+v, want insertText foo(日本, 😀) over 1:%d-1:%d", it, *it.Range, start, cursor.char)
			}
			if it.Command == nil || it.Command.Command != lspside.CommandAccept || len(it.Command.Arguments) != 1 {
				t.Fatalf("command = %+v", it.Command)
			}
			// The editor applies the item, then runs its command.
			e.change(uri, 2, rangeChange(pos{1, start}, pos{1, cursor.char}, it.InsertText))
			e.mustCall("workspace/executeCommand", map[string]any{"command": it.Command.Command, "arguments": it.Command.Arguments}, nil)
			id := it.Command.Arguments[0].(string)
			e.waitAgent("nes/accept", func(m testagent.Message) bool {
				return m.Method == "nes/accept" && strings.Contains(string(m.Params), `"`+id+`"`)
			})
			if n := ended(e.agent.Received())[id]; n != 1 {
				t.Errorf("suggestion %s ended %d times", id, n)
			}
		})
	}
}

// units is the length of s in encoding enc.
func units(s, enc string) int {
	switch enc {
	case "utf-8":
		return len(s)
	case "utf-32":
		return len([]rune(s))
	}
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

func rpcCode(err error) int {
	var e *jsonrpc2.Error
	if errors.As(err, &e) {
		return int(e.Code)
	}
	return 0
}

func TestLifecycleErrorsAndExitCodes(t *testing.T) {
	t.Run("request before initialize", func(t *testing.T) {
		e := newEditor(t, harnessOpts{})
		_, err := e.inline("file:///x", pos{0, 0})
		if rpcCode(err) != -32002 {
			t.Errorf("got %v, want -32002 ServerNotInitialized", err)
		}
	})
	t.Run("exit after shutdown is 0", func(t *testing.T) {
		e := newEditor(t, harnessOpts{})
		e.initialize()
		e.waitReady() // a NES session to close (one still starting is cancelled instead)
		e.mustCall("shutdown", nil, nil)
		e.mustCall("shutdown", nil, nil) // a second shutdown is answered too
		if _, err := e.inline("file:///x", pos{0, 0}); rpcCode(err) != -32600 {
			t.Errorf("request after shutdown: %v, want -32600", err)
		}
		e.notify("exit", nil)
		if code := <-e.exit; code != 0 {
			t.Errorf("exit code %d, want 0", code)
		}
		e.exit <- 0
		e.waitAgent("nes/close", method("nes/close"))
	})
	t.Run("exit without shutdown is 1", func(t *testing.T) {
		e := newEditor(t, harnessOpts{})
		e.initialize()
		e.notify("exit", nil)
		if code := <-e.exit; code != 1 {
			t.Errorf("exit code %d, want 1", code)
		}
		e.exit <- 1
	})
}

func TestReadyAgentIsLogged(t *testing.T) {
	e := newEditor(t, harnessOpts{agentCfg: testagent.Config{Encoding: "utf-32", Sync: "full"}})
	e.initialize()
	waitFor(t, "window/logMessage about the ready agent", func() bool {
		e.mu.Lock()
		defer e.mu.Unlock()
		for _, m := range e.logged {
			if m == "acp-lsp-bridge: acp-test-agent is ready (positions utf-32, document sync full)." {
				return true
			}
		}
		return false
	})
}

func TestNoAgentSaysSoAndKeepsServing(t *testing.T) {
	e := newEditor(t, harnessOpts{noAgent: true})
	e.initialize()
	e.open("file:///a.go", "x")
	items, err := e.inline("file:///a.go", pos{0, 1})
	if err != nil || len(items) != 0 {
		t.Fatalf("items %v err %v, want an empty result", items, err)
	}
	waitFor(t, "a message about the missing agent", func() bool {
		for _, m := range e.shownMessages() {
			if strings.Contains(m, "no agent is configured") {
				return true
			}
		}
		return false
	})
}

func TestAgentWithoutNESSaysSoAndKeepsServing(t *testing.T) {
	e := newEditor(t, harnessOpts{agentCfg: testagent.Config{NoNES: true}})
	e.initialize()
	e.open("file:///a.go", "x")
	items, err := e.inline("file:///a.go", pos{0, 1})
	if err != nil || len(items) != 0 {
		t.Fatalf("items %v err %v, want an empty result", items, err)
	}
	waitFor(t, "a message about NES", func() bool {
		for _, m := range e.shownMessages() {
			if strings.Contains(m, "does not offer Next Edit Suggestions") {
				return true
			}
		}
		return false
	})
	if n := len(e.shownMessages()); n != 1 {
		t.Errorf("%d messages shown, want one: %q", n, e.shownMessages())
	}
}

func TestAgentRefusingNESStartSaysSoAndKeepsServing(t *testing.T) {
	e := newEditor(t, harnessOpts{agentCfg: testagent.Config{StartError: acp.NewMethodNotFound("nes/start")}})
	e.initialize()
	e.open("file:///a.go", "x")
	items, err := e.inline("file:///a.go", pos{0, 1})
	if err != nil || len(items) != 0 {
		t.Fatalf("items %v err %v, want an empty result", items, err)
	}
	waitFor(t, "a message about nes/start", func() bool {
		for _, m := range e.shownMessages() {
			if strings.Contains(m, "refused to start a Next Edit Suggestions session") && strings.Contains(m, "-32601") {
				return true
			}
		}
		return false
	})
	for _, m := range e.agent.Received() {
		if strings.HasPrefix(m.Method, "document/") || m.Method == "nes/suggest" {
			t.Errorf("the agent got %s after refusing nes/start", m.Method)
		}
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
