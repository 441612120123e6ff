package e2e

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestBinaryStartup: the real binary with an agent that takes 3 s to answer ACP initialize, named
// on the command line or in initializationOptions.agent. The editor's initialize is answered
// before the agent has answered its own (the agent has not been sent nes/start, which follows
// that answer, and the bridge has not said the agent is ready); an inline completion request
// then is answered with an empty list, still before the agent is ready; once the bridge says it
// is, the same request gets the suggestion. The checks are on the order of events, not on times.
func TestBinaryStartup(t *testing.T) {
	_, agent := binaries(t)
	for _, via := range []string{"argv", "initializationOptions"} {
		t.Run(via, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			rules := filepath.Join(dir, "rules.json")
			agentLog := filepath.Join(dir, "agent.jsonl")
			if err := os.WriteFile(rules, []byte(`[{"when":"hel","find":"hel","replace":"hello"}]`), 0o644); err != nil {
				t.Fatal(err)
			}
			agentArgs := []string{"--start-delay", "3s", "--rules", rules, "--log", agentLog}
			params := map[string]any{"processId": os.Getpid(), "rootUri": fileURI(dir), "capabilities": map[string]any{}}
			var b *bridgeProc
			if via == "argv" {
				b = startBridge(t, append([]string{"--", agent}, agentArgs...)...)
			} else {
				b = startBridge(t)
				params["initializationOptions"] = map[string]any{"agent": map[string]any{"command": agent, "args": agentArgs}}
			}
			// notYetReady fails the test if the agent has answered initialize (the bridge would
			// have sent nes/start), or if the bridge said it is ready.
			var early []string
			notYetReady := func(after string) {
				t.Helper()
				if log, err := os.ReadFile(agentLog); err == nil && bytes.Contains(log, []byte(`"method":"nes/start"`)) {
					t.Fatalf("the agent had answered its initialize before %s:\n%s", after, log)
				}
				early = b.Record().Said
				for _, msg := range early {
					if strings.Contains(msg, " is ready (") {
						t.Fatalf("the bridge said the agent is ready before %s: %q", after, early)
					}
				}
			}

			if err := b.Call("initialize", params, nil); err != nil {
				t.Fatal(err)
			}
			notYetReady("the editor's initialize was answered")
			b.Notify("initialized", map[string]any{})
			uri := fileURI(dir) + "/start.go"
			b.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": "go", "version": 1, "text": "hel\n"}})
			var res struct {
				Items []struct {
					InsertText string `json:"insertText"`
				} `json:"items"`
			}
			inline := func() {
				t.Helper()
				res.Items = nil
				if err := b.Call("textDocument/inlineCompletion", map[string]any{
					"textDocument": map[string]any{"uri": uri}, "position": map[string]any{"line": 0, "character": 3},
					"context": map[string]any{"triggerKind": 2},
				}, &res); err != nil {
					t.Fatal(err)
				}
			}
			inline()
			notYetReady("the first inline completion was answered")
			if res.Items == nil || len(res.Items) != 0 {
				t.Fatalf("before the agent is ready: items %+v, want an empty list", res.Items)
			}
			// The agent was started and asked to initialize: it is starting, not missing.
			waitAgentLog(t, agentLog, "initialize")

			seen := b.waitMessage("acp-test-agent is ready")
			inline()
			if len(res.Items) != 1 || res.Items[0].InsertText != "hello" {
				t.Fatalf("once the agent is ready: items %+v (messages %q)", res.Items, append(early, seen...))
			}
			// One nes/suggest: the request before the agent was ready did not reach it. (Counted,
			// not in order: the agent's SDK runs a request before the notifications queued ahead
			// of it, so its log may have nes/suggest before document/didOpen.)
			got := map[string]int{}
			for _, m := range readAgentLog(t, agentLog) {
				got[m["method"].(string)]++
			}
			if want := map[string]int{"initialize": 1, "nes/start": 1, "document/didOpen": 1, "nes/suggest": 1}; !maps.Equal(got, want) {
				t.Errorf("the agent received %v, want %v", got, want)
			}
			bridgeLog, _ := os.ReadFile(b.logFile)
			if !bytes.Contains(bridgeLog, []byte("empty result: the agent is not ready")) {
				t.Errorf("the bridge's debug log does not say why the first request answered empty")
			}
		})
	}
}

// TestBinaryEditsWhileTheAgentStarts: the real binary with an agent that takes 2 s to start. The
// user opens a file and renames a variable in it before the agent is ready; once it is, the agent
// gets the file as it was opened, then the rename as a change (a rename it can follow through
// the file), and its copy reads as the editor's.
func TestBinaryEditsWhileTheAgentStarts(t *testing.T) {
	_, agent := binaries(t)
	dir := t.TempDir()
	agentLog := filepath.Join(dir, "agent.jsonl")
	b := startBridge(t, "--", agent, "--start-delay", "2s", "--log", agentLog)
	if err := b.Call("initialize", map[string]any{"processId": os.Getpid(), "rootUri": fileURI(dir), "capabilities": map[string]any{}}, nil); err != nil {
		t.Fatal(err)
	}
	b.Notify("initialized", map[string]any{})
	uri := fileURI(dir) + "/total.go"
	const text = "func total() int {\n\tsum := 0 // 日本\n\treturn sum\n}\n"
	b.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": "go", "version": 1, "text": text}})
	b.Notify("textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": uri, "version": 2},
		"contentChanges": []any{map[string]any{"range": map[string]any{"start": map[string]any{"line": 1, "character": 1}, "end": map[string]any{"line": 1, "character": 4}}, "text": "acc"}},
	})
	b.waitMessage("acp-test-agent is ready")
	waitAgentLog(t, agentLog, "document/didChange")
	var got []string
	for _, m := range readAgentLog(t, agentLog) {
		p, _ := m["params"].(map[string]any)
		switch m["method"] {
		case "document/didOpen":
			got = append(got, fmt.Sprintf("open %v %q", p["version"], p["text"]))
		case "document/didChange":
			got = append(got, fmt.Sprintf("change %v %v", p["version"], p["contentChanges"]))
		}
	}
	want := []string{
		fmt.Sprintf("open 1 %q", text),
		"change 2 [map[range:map[end:map[character:4 line:1] start:map[character:1 line:1]] text:acc]]",
	}
	if !slices.Equal(got, want) {
		t.Errorf("the agent received\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
