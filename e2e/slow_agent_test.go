package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"
)

// slowAgentSession is the bridge (args) with testdata/peers/nes-agent.mjs (the official ACP SDK)
// answering each suggestion after 12 s, as an agent starting a CLI per suggestion does, and n
// documents open whose first line holds a TODO (the agent's suggestion). options are more
// initializationOptions.
func slowAgentSession(t *testing.T, n int, options map[string]any, args ...string) (*bridgeProc, []string) {
	t.Helper()
	node, modules := sdkPeer(t)
	dir := t.TempDir()
	opts := map[string]any{"agent": map[string]any{
		"command": node,
		"args":    []string{filepath.Join(moduleRoot(t), "testdata", "peers", "nes-agent.mjs")},
		"env":     map[string]string{"PEERS_NODE_MODULES": modules, "NES_AGENT_DELAY_MS": "12000", "NES_AGENT_LOG": filepath.Join(t.TempDir(), "agent.jsonl")},
	}}
	for k, v := range options {
		opts[k] = v
	}
	b := startBridge(t, args...)
	b.InitializeWith(fakeeditor.InitParams{Root: fileURI(dir), ProcessID: os.Getpid(), Options: opts})
	b.WaitReady()
	var uris []string
	for i := range n {
		uri := fileURI(filepath.Join(dir, string(rune('a'+i))+".go"))
		b.Open(uri, "// TODO\n")
		uris = append(uris, uri)
	}
	return b, uris
}

// askAll asks for suggestions by hand in every document at once and returns how many items each
// got.
func askAll(t *testing.T, b *bridgeProc, uris []string) []int {
	t.Helper()
	got := make([]int, len(uris))
	var wg sync.WaitGroup
	for i, uri := range uris {
		wg.Go(func() {
			items, err := b.InlineTriggered(uri, fakeeditor.At(0, 3), 1)
			if err != nil {
				t.Errorf("inline completion in %s: %v", uri, err)
			}
			got[i] = len(items)
		})
	}
	wg.Wait()
	return got
}

// TestBinaryTellsOfASlowAgent: an agent slower than the bridge's timeout gets every request
// answered empty; once three in a row have timed out, the user is told, once, why nothing shows
// and what to raise where; raised in initializationOptions, the suggestion shows.
func TestBinaryTellsOfASlowAgent(t *testing.T) {
	t.Run("told once", func(t *testing.T) {
		t.Parallel()
		b, uris := slowAgentSession(t, 4, nil)
		for i, n := range askAll(t, b, uris) {
			if n != 0 {
				t.Errorf("%s got %d items from an agent slower than the timeout", uris[i], n)
			}
		}
		msg := b.waitMessage("did not answer 3 suggestions in a row within 10s")
		last := msg[len(msg)-1]
		for _, want := range []string{"nes-test-agent", "--suggest-timeout 30s", "initializationOptions.suggestTimeout = 30000"} {
			if !strings.Contains(last, want) {
				t.Errorf("the message %q does not say %q", last, want)
			}
		}
		n := 0
		for _, m := range b.Record().Messages {
			if strings.Contains(m, "in a row within") {
				n++
			}
		}
		if n != 1 {
			t.Errorf("told %d times of the timeouts, want once: %q", n, b.Record().Messages)
		}
	})
	t.Run("raised", func(t *testing.T) {
		t.Parallel()
		b, uris := slowAgentSession(t, 1, map[string]any{"suggestTimeout": 20000})
		if got := askAll(t, b, uris); got[0] != 1 {
			t.Fatalf("%d items with suggestTimeout 20000 from an agent answering in 12 s, want its suggestion", got[0])
		}
		for _, m := range b.Record().Said {
			if strings.Contains(m, "in a row within") {
				t.Errorf("told of timeouts that did not happen: %q", m)
			}
		}
	})
}

// TestDoctorSaysTheSampleIsTooSlow: doctor --prompt against the agent answering in 12 s reports
// that its sample took longer than the bridge waits, with the flag to raise; given the timeout the
// bridge runs with (--suggest-timeout 20s), it does not.
func TestDoctorSaysTheSampleIsTooSlow(t *testing.T) {
	node, modules := sdkPeer(t)
	script := filepath.Join(moduleRoot(t), "testdata", "peers", "nes-agent.mjs")
	env := []string{"PEERS_NODE_MODULES=" + modules, "NES_AGENT_DELAY_MS=12000"}
	t.Run("report", func(t *testing.T) {
		t.Parallel()
		r := runDoctor(t, t.TempDir(), env, "--prompt", "--", node, script)
		for _, want := range []string{"answered in 12", "slower than the bridge's --suggest-timeout (10s): in the editor it would come back empty. Run the bridge with --suggest-timeout 30s, or set initializationOptions.suggestTimeout = 30000"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("the report does not say %q:\n%s", want, r.stdout)
			}
		}
	})
	for _, tc := range []struct {
		args    []string
		slower  bool
		timeout float64
	}{
		{nil, true, 10000},
		{[]string{"--suggest-timeout", "20s"}, false, 20000},
	} {
		t.Run(strings.Join(append([]string{"json"}, tc.args...), " "), func(t *testing.T) {
			t.Parallel()
			args := append(append([]string{"--json", "--prompt"}, tc.args...), "--", node, script)
			m := doctorJSON(t, runDoctor(t, t.TempDir(), env, args...))
			for path, want := range map[string]any{"sample.slowerThanBridge": tc.slower, "sample.bridgeTimeoutMs": tc.timeout, "sample.bridgeTimeoutFlag": "--suggest-timeout", "sample.bridgeTimeoutKey": "suggestTimeout", "sample.error": nil} {
				if got := field(m, path); got != want {
					t.Errorf("%s = %#v, want %#v", path, got, want)
				}
			}
			if ms, _ := field(m, "sample.ms").(float64); ms < 12000 {
				t.Errorf("sample.ms = %v, want the agent's 12 s", ms)
			}
		})
	}
}
