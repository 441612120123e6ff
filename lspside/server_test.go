package lspside_test

import (
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"

	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	acp "github.com/coder/acp-go-sdk"
	"go.lsp.dev/jsonrpc2"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testagent"
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
		// Neovim encodes init_options = {} as an empty array: no options, not an error.
		{"options as an empty array", map[string]any{"capabilities": map[string]any{}, "initializationOptions": []any{}}, true},
		// lsp-mode advertises inline completion as "inlineCompletion": null.
		{"inline completion advertised as null", map[string]any{"capabilities": map[string]any{"textDocument": map[string]any{"inlineCompletion": nil}}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEditor(t, harnessOpts{})
			var res map[string]map[string]json.RawMessage
			e.MustCall("initialize", tc.params, &res)
			caps := res["capabilities"]
			want := map[string]bool{"positionEncoding": true, "textDocumentSync": true, "inlineCompletionProvider": true,
				"codeActionProvider": true, "executeCommandProvider": true, "completionProvider": tc.completion, "workspace": true}
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
			if got := string(caps["workspace"]); got != `{"workspaceFolders":{"supported":true,"changeNotifications":true}}` {
				t.Errorf("workspace = %s", got)
			}
			if got := string(caps["textDocumentSync"]); got != `{"openClose":true,"change":2,"save":{}}` {
				t.Errorf("textDocumentSync = %s", got)
			}
			if got := string(caps["executeCommandProvider"]); got != `{"commands":["acp-lsp-bridge.accept","acp-lsp-bridge.reject","acp-lsp-bridge.suggest","acp-lsp-bridge.signIn","acp-lsp-bridge.restart","acp-lsp-bridge.enable","acp-lsp-bridge.disable","acp-lsp-bridge.toggle"]}` {
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
				e.Open(uri, text)
				e.waitMirror(uri, text)
				// Two changes in one notification: the second range refers to the text after the
				// first (utf-16 positions: 𐐀 is two units).
				e.ChangeAt(uri, 2,
					fakeeditor.Replace(fakeeditor.At(1, 6), fakeeditor.At(1, 9), "中文"), // 日本語 → 中文
					fakeeditor.Replace(fakeeditor.At(1, 3), fakeeditor.At(1, 5), "x"),  // 𐐀 → x
				)
				want := "package main\n// x 中文 é\r\nfunc main() {}\r"
				e.waitMirror(uri, want)
				e.ChangeAt(uri, 3, fakeeditor.Whole("whole\nnew text"))
				e.waitMirror(uri, "whole\nnew text")
				e.ChangeAt(uri, 4, fakeeditor.Replace(fakeeditor.At(0, 0), fakeeditor.At(1, 0), ""))
				e.waitMirror(uri, "new text")
				e.Notify("textDocument/didSave", map[string]any{"textDocument": map[string]any{"uri": uri}})
				e.Notify("textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": uri}})
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
			e.WaitReady()
			line := "x := \"é\"; 𐐀 = fo"
			e.Open(uri, "package p\n"+line+"\n")
			cursor := fakeeditor.At(1, units(line, enc))
			items, err := e.Inline(uri, cursor)
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
				it.Range.End.Line != 1 || it.Range.End.Character != cursor.Character {
				t.Fatalf("item = %+v range %+v, want insertText foo(日本, 😀) over 1:%d-1:%d", it, *it.Range, start, cursor.Character)
			}
			if it.Command == nil || it.Command.Command != lspside.CommandAccept || len(it.Command.Arguments) != 1 {
				t.Fatalf("command = %+v", it.Command)
			}
			// The editor applies the item, then runs its command.
			e.ChangeAt(uri, 2, fakeeditor.Replace(fakeeditor.At(1, start), fakeeditor.At(1, cursor.Character), it.InsertText))
			e.MustCall("workspace/executeCommand", map[string]any{"command": it.Command.Command, "arguments": it.Command.Arguments}, nil)
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
		_, err := e.Inline("file:///x", fakeeditor.At(0, 0))
		if rpcCode(err) != -32002 {
			t.Errorf("got %v, want -32002 ServerNotInitialized", err)
		}
	})
	t.Run("exit after shutdown is 0", func(t *testing.T) {
		e := newEditor(t, harnessOpts{})
		e.initialize()
		e.WaitReady() // a NES session to close (one still starting is cancelled instead)
		e.MustCall("shutdown", nil, nil)
		e.MustCall("shutdown", nil, nil) // a second shutdown is answered too
		if _, err := e.Inline("file:///x", fakeeditor.At(0, 0)); rpcCode(err) != -32600 {
			t.Errorf("request after shutdown: %v, want -32600", err)
		}
		e.Notify("exit", nil)
		if code := <-e.exit; code != 0 {
			t.Errorf("exit code %d, want 0", code)
		}
		e.exit <- 0
		e.waitAgent("nes/close", method("nes/close"))
	})
	t.Run("exit without shutdown is 1", func(t *testing.T) {
		e := newEditor(t, harnessOpts{})
		e.initialize()
		e.Notify("exit", nil)
		if code := <-e.exit; code != 1 {
			t.Errorf("exit code %d, want 1", code)
		}
		e.exit <- 1
	})
}

func TestReadyAgentIsLogged(t *testing.T) {
	e := newEditor(t, harnessOpts{agentCfg: testagent.Config{Encoding: "utf-32", Sync: "full"}})
	e.initialize()
	e.Await(fakeeditor.LoggedMessage("acp-lsp-bridge: acp-test-agent is ready (positions utf-32, document sync full)."))
}

func TestNoAgentSaysSoAndKeepsServing(t *testing.T) {
	e := newEditor(t, harnessOpts{noAgent: true})
	e.initialize()
	e.Open("file:///a.go", "x")
	items, err := e.Inline("file:///a.go", fakeeditor.At(0, 1))
	if err != nil || len(items) != 0 {
		t.Fatalf("items %v err %v, want an empty result", items, err)
	}
	e.Await(fakeeditor.ShownMessage("no agent is configured"))
}

func TestAgentWithoutNESSaysSoAndKeepsServing(t *testing.T) {
	e := newEditor(t, harnessOpts{agentCfg: testagent.Config{NoNES: true}})
	e.initialize()
	e.Open("file:///a.go", "x")
	items, err := e.Inline("file:///a.go", fakeeditor.At(0, 1))
	if err != nil || len(items) != 0 {
		t.Fatalf("items %v err %v, want an empty result", items, err)
	}
	e.Await(fakeeditor.ShownMessage("does not offer Next Edit Suggestions"))
	if n := len(e.Record().Messages); n != 1 {
		t.Errorf("%d messages shown, want one: %q", n, e.Record().Messages)
	}
}

func TestAgentRefusingNESStartSaysSoAndKeepsServing(t *testing.T) {
	e := newEditor(t, harnessOpts{agentCfg: testagent.Config{StartError: acp.NewMethodNotFound("nes/start")}})
	e.initialize()
	e.Open("file:///a.go", "x")
	items, err := e.Inline("file:///a.go", fakeeditor.At(0, 1))
	if err != nil || len(items) != 0 {
		t.Fatalf("items %v err %v, want an empty result", items, err)
	}
	e.Await(fakeeditor.ShownMessage("refused to start a Next Edit Suggestions session"), fakeeditor.ShownMessage("-32601"))
	for _, m := range e.agent.Received() {
		if strings.HasPrefix(m.Method, "document/") || m.Method == "nes/suggest" {
			t.Errorf("the agent got %s after refusing nes/start", m.Method)
		}
	}
}
