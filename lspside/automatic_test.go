package lspside_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testagent"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/lspside"
)

// appendAtCursor is an agent that suggests "()" at the cursor, and counts what it is asked.
type appendAtCursor struct{ asked atomic.Int32 }

func (a *appendAtCursor) suggest(_ context.Context, req acp.UnstableSuggestNesRequest, _ string) (any, *acp.RequestError) {
	n := a.asked.Add(1)
	return insertAt(fmt.Sprintf("s%d", n), req.Uri, req.Position.Line, req.Position.Character, "()"), nil
}

// suggestsReceived counts the nes/suggest the agent received, and their trigger kinds.
func suggestsReceived(e *editor) (n int, triggers []string) {
	for _, m := range e.theAgent().Received() {
		if m.Method == "nes/suggest" {
			var p acp.UnstableSuggestNesRequest
			_ = json.Unmarshal(m.Params, &p)
			triggers = append(triggers, string(p.TriggerKind))
			n++
		}
	}
	return n, triggers
}

func switchCmd(command string, args ...any) fakeeditor.Command {
	return fakeeditor.Command{Command: command, Arguments: args}
}

// TestSwitchTurnsAutomaticRequestsOff: with the switch off (for every document, or for one), an
// automatic inline request answers empty and the agent hears nothing of it, while one invoked by
// hand is asked as always; a document's own switch wins over the global one; each command answers
// what is now in force.
func TestSwitchTurnsAutomaticRequestsOff(t *testing.T) {
	a := &appendAtCursor{}
	e := newEditor(t, harnessOpts{agentCfg: testagent.Config{Encoding: "utf-16", Suggest: a.suggest}})
	e.initialize("utf-16")
	e.WaitReady()
	const uri, other = "file:///work/project/a.go", "file:///work/project/b.go"
	e.Open(uri, "x := f\n")
	e.Open(other, "y := g\n")
	at := fakeeditor.At(0, 6)

	call := func(c fakeeditor.Command) map[string]any {
		t.Helper()
		var res map[string]any
		if err := e.Call("workspace/executeCommand", map[string]any{"command": c.Command, "arguments": c.Arguments}, &res); err != nil {
			t.Fatalf("%s: %v", c.Command, err)
		}
		return res
	}
	inline := func(u string, trigger int) int {
		t.Helper()
		items, err := e.InlineTriggered(u, at, trigger)
		if err != nil {
			t.Fatal(err)
		}
		return len(items)
	}

	if n := inline(uri, 2); n != 1 {
		t.Fatalf("with the switch on, an automatic request got %d items", n)
	}
	if res := call(switchCmd(lspside.CommandDisable)); res["automatic"] != false || res["uri"] != nil {
		t.Errorf("disable answered %v", res)
	}
	before, _ := suggestsReceived(e)
	if n := inline(uri, 2) + inline(other, 2); n != 0 {
		t.Errorf("with the switch off, automatic requests got %d items", n)
	}
	if n, _ := suggestsReceived(e); n != before {
		t.Errorf("with the switch off, the agent received %d nes/suggest for automatic requests", n-before)
	}
	if n := inline(uri, 1); n != 1 {
		t.Errorf("with the switch off, a request invoked by hand got %d items", n)
	}
	if n, triggers := suggestsReceived(e); n != before+1 || triggers[n-1] != "manual" {
		t.Errorf("the agent received %v, want one more, manual", triggers)
	}

	// A document's own switch wins over the global one, both ways.
	if res := call(switchCmd(lspside.CommandToggle, map[string]any{"uri": uri})); res["automatic"] != true || res["uri"] != uri {
		t.Errorf("toggle for %s answered %v", uri, res)
	}
	if inline(uri, 2) != 1 || inline(other, 2) != 0 {
		t.Errorf("with the global switch off and %s's on, want items for it alone", uri)
	}
	call(switchCmd(lspside.CommandEnable))
	if res := call(switchCmd(lspside.CommandDisable, other)); res["automatic"] != false {
		t.Errorf("disable for %s answered %v", other, res)
	}
	if inline(uri, 2) != 1 || inline(other, 2) != 0 {
		t.Errorf("with the global switch on and %s's off, want items for %s alone", other, uri)
	}
	// A closed and reopened document keeps its switch.
	e.CloseDoc(other)
	e.Open(other, "y := g\n")
	if inline(other, 2) != 0 {
		t.Errorf("%s reopened lost its switch", other)
	}
	if res := call(switchCmd(lspside.CommandToggle)); res["automatic"] != false {
		t.Errorf("toggle answered %v", res)
	}

	for _, bad := range [][]any{{42}, {map[string]any{"url": uri}}, {uri, other}} {
		err := e.Call("workspace/executeCommand", map[string]any{"command": lspside.CommandToggle, "arguments": bad}, nil)
		if fakeeditor.ErrorCode(err) != -32602 || !strings.Contains(err.Error(), "{\"uri\": ...}") {
			t.Errorf("toggle %v: %v, want invalid params that say what it takes", bad, err)
		}
	}
}

// TestAutomaticOffFromInitializationOptions: initializationOptions.automatic false starts with the
// switch off; the enable command turns it on.
func TestAutomaticOffFromInitializationOptions(t *testing.T) {
	a := &appendAtCursor{}
	e := newEditor(t, harnessOpts{agentCfg: testagent.Config{Encoding: "utf-16", Suggest: a.suggest}})
	e.InitializeWith(fakeeditor.InitParams{Root: e.root, Encodings: []string{"utf-16"}, Options: map[string]any{"automatic": false}})
	e.WaitReady()
	const uri = "file:///work/project/a.go"
	e.Open(uri, "x := f\n")
	if items, err := e.Inline(uri, fakeeditor.At(0, 6)); err != nil || len(items) != 0 {
		t.Errorf("automatic request: %v %v, want nothing", items, err)
	}
	if n, _ := suggestsReceived(e); n != 0 {
		t.Errorf("the agent received %d nes/suggest", n)
	}
	e.Execute(switchCmd(lspside.CommandEnable))
	if items, err := e.Inline(uri, fakeeditor.At(0, 6)); err != nil || len(items) != 1 {
		t.Errorf("after enable: %v %v, want the suggestion", items, err)
	}
}

// TestDelayAsksOnceTheDocumentIsStill: with a delay, an automatic request reaches the agent only
// once the delay has passed with no newer request for the document; a request within it replaces
// the one before; a change within it means nothing is asked for the old text; what the user asks
// for by hand goes at once.
func TestDelayAsksOnceTheDocumentIsStill(t *testing.T) {
	const delay = 700 * time.Millisecond
	a := &appendAtCursor{}
	e := newEditor(t, harnessOpts{agentCfg: testagent.Config{Encoding: "utf-16", Suggest: a.suggest}, cfg: lspside.Config{Delay: delay}})
	e.initialize("utf-16")
	e.WaitReady()
	const uri = "file:///work/project/a.go"
	e.Open(uri, "x := f\n")

	// Three automatic requests, as a cursor moving: only the last reaches the agent, after it has
	// been still for the delay.
	type answer struct {
		items []fakeeditor.InlineItem
		err   error
		at    time.Time
	}
	ch := make(chan answer, 3)
	var last time.Time
	for i := range 3 {
		last = time.Now()
		go func(c int) {
			items, err := e.Inline(uri, fakeeditor.At(0, c))
			ch <- answer{items, err, time.Now()}
		}(4 + i)
		time.Sleep(100 * time.Millisecond)
	}
	if n, _ := suggestsReceived(e); n != 0 {
		t.Errorf("the agent was asked %d times within the delay", n)
	}
	var got []answer
	for range 3 {
		got = append(got, <-ch)
	}
	shown := 0
	for _, g := range got {
		if g.err != nil {
			t.Fatal(g.err)
		}
		if len(g.items) > 0 {
			shown++
			if g.at.Sub(last) < delay {
				t.Errorf("the suggestion came %v after the last request, within the %v delay", g.at.Sub(last), delay)
			}
		}
	}
	if n, _ := suggestsReceived(e); n != 1 || shown != 1 {
		t.Errorf("the agent was asked %d times and %d requests were answered, want 1 and 1", n, shown)
	}

	// A change within the delay, with no request after it: nothing is asked for the old text.
	p := e.Start("textDocument/inlineCompletion", fakeeditor.InlineParams(uri, fakeeditor.At(0, 6), 2), nil)
	time.Sleep(100 * time.Millisecond)
	e.Edit(uri, 6, 6, "o")
	if err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	if n, _ := suggestsReceived(e); n != 1 {
		t.Errorf("the agent was asked about a text that changed within the delay")
	}

	// Invoked by hand: at once.
	began := time.Now()
	items, err := e.InlineTriggered(uri, fakeeditor.At(0, 7), 1)
	if err != nil || len(items) != 1 {
		t.Fatalf("invoked: %v %v", items, err)
	}
	if took := time.Since(began); took >= delay {
		t.Errorf("a request invoked by hand took %v, the delay is %v", took, delay)
	}
}

// TestDelayFromInitializationOptions: initializationOptions.delay takes milliseconds or a duration;
// one that cannot be read is shown to the user and the default kept.
func TestDelayFromInitializationOptions(t *testing.T) {
	for _, tc := range []struct {
		delay   any
		waits   bool
		warning string
	}{
		{600, true, ""},
		{"0.6s", true, ""},
		{"soon", false, `"soon" is neither milliseconds`},
		{-5, false, "not between 0 and 1m0s"},
	} {
		t.Run(fmt.Sprint(tc.delay), func(t *testing.T) {
			a := &appendAtCursor{}
			e := newEditor(t, harnessOpts{agentCfg: testagent.Config{Encoding: "utf-16", Suggest: a.suggest}})
			e.InitializeWith(fakeeditor.InitParams{Root: e.root, Encodings: []string{"utf-16"}, Options: map[string]any{"delay": tc.delay}})
			if tc.warning != "" {
				e.WaitMessage(tc.warning)
			}
			e.WaitReady()
			const uri = "file:///work/project/a.go"
			e.Open(uri, "x := f\n")
			p := e.Start("textDocument/inlineCompletion", fakeeditor.InlineParams(uri, fakeeditor.At(0, 6), 2), nil)
			time.Sleep(300 * time.Millisecond)
			asked, _ := suggestsReceived(e)
			if err := p.Wait(); err != nil {
				t.Fatal(err)
			}
			if tc.waits && asked != 0 {
				t.Errorf("the agent was asked within the 600 ms delay")
			}
			if !tc.waits && asked != 1 {
				t.Errorf("without a delay the agent was asked %d times within 300 ms", asked)
			}
		})
	}
}

func TestParseDelay(t *testing.T) {
	for in, want := range map[string]time.Duration{"0": 0, "250": 250 * time.Millisecond, "1.5": 1500 * time.Microsecond, "300ms": 300 * time.Millisecond, " 1s ": time.Second, "1m": time.Minute} {
		if got, err := lspside.ParseDelay(in); err != nil || got != want {
			t.Errorf("ParseDelay(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "soon", "-1", "-1ms", "61s", "1e9", "NaN"} {
		if _, err := lspside.ParseDelay(bad); err == nil {
			t.Errorf("ParseDelay(%q) took it", bad)
		}
	}
}

// TestCodeActionsNeverWaitForABusyAgent: an agent that takes 2 s; a code action request is
// answered within its wait (300 ms) with what is live (nothing yet), so the editor's menu opens with
// the other servers' actions. The agent's answer, when it comes, is live: the next code action
// offers it without asking the agent again, and so does an inline request.
func TestCodeActionsNeverWaitForABusyAgent(t *testing.T) {
	const agentTakes = 2 * time.Second
	e := newEditor(t, harnessOpts{
		agentCfg: testagent.Config{Encoding: "utf-16", SuggestDelay: agentTakes, Suggest: (&appendAtCursor{}).suggest},
		cfg:      lspside.Config{CodeActionWait: 300 * time.Millisecond},
	})
	e.initialize("utf-16")
	e.WaitReady()
	const uri = "file:///work/project/a.go"
	e.Open(uri, "x := f\n")
	at := fakeeditor.Span(fakeeditor.At(0, 6), fakeeditor.At(0, 6))

	began := time.Now()
	actions, err := e.CodeActions(uri, at)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(began); took >= agentTakes {
		t.Errorf("the code action request took %v: it waited for the agent (%v)", took, agentTakes)
	}
	if len(actions) != 0 {
		t.Errorf("actions %+v before the agent answered", actions)
	}
	// The agent's answer arrives and is kept.
	e.Await(fakeeditor.Expectation{Description: "the agent's late answer", Met: func(*fakeeditor.Record) bool {
		n, _ := suggestsReceived(e)
		return n == 1
	}})
	deadline := time.Now().Add(10 * time.Second)
	for {
		actions, err = e.CodeActions(uri, at)
		if err != nil {
			t.Fatal(err)
		}
		if len(actions) == 1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(actions) != 1 || !strings.Contains(actions[0].Title, "Next edit") {
		t.Fatalf("after the agent answered, actions %+v, want its suggestion", actions)
	}
	items, err := e.Inline(uri, fakeeditor.At(0, 6))
	if err != nil || len(items) != 1 || items[0].InsertText != "()" {
		t.Errorf("inline after the late answer: %+v %v", items, err)
	}
	if n, _ := suggestsReceived(e); n != 1 {
		t.Errorf("the agent was asked %d times, want once: the late answer serves the later requests", n)
	}
}
