package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The model agent's early answer from a streamed Zeta 2 answer, in real Neovim with the shipped
// plugin (testdata/nvim/plugin_early.lua): the first changed hunk is suggested while the server
// still writes the rest, the rest is the next suggestion once the first is accepted (no second
// request), and typing anything else closes the stream.

// The file the user edits (21 lines, all in Zeta 2's region), the line they finish typing (line 2,
// with "(" typed at its end), and what the fake model makes of it: line 2 finished, line 15 changed.
const (
	earlyTyped    = "var x = g("
	earlyFinished = "var x = g(100)"
	earlyFar      = "\tv11 := g(11)"
	earlyFarDone  = "\tv11 := h(11)"
)

func earlyFile() string {
	var b strings.Builder
	b.WriteString("package p\nvar x = g\nfunc f() {\n")
	for i := 0; i < 17; i++ {
		fmt.Fprintf(&b, "\tv%d := g(%d)\n", i, i)
	}
	b.WriteString("}\n")
	return b.String()
}

// earlyState is what the fake did, as it writes it to its state file for the script to read.
type earlyState struct {
	Asked    int  `json:"asked"`    // POSTs whose region holds line 2 as typed or finished
	Held     bool `json:"held"`     // the first such answer was sent through its first hunk and held
	Released bool `json:"released"` // the rest of it was sent
	Closed   bool `json:"closed"`   // the client closed it while held
}

// earlyZeta2 is a Zeta 2 server (OpenAI-compatible: GET /api/version is 404) that streams its
// rewrite of the region line by line. To the first request whose region holds the typed line 2 it
// sends the lines through the first changed hunk and the two lines after it, then holds the rest
// until the script creates the release file; then it sends the rest and the end. It writes what it
// did to the state file at every step.
type earlyZeta2 struct {
	srv            *httptest.Server
	state, release string
	quit           chan struct{}
	mu             sync.Mutex
	st             earlyState
}

func newEarlyZeta2(t *testing.T) *earlyZeta2 {
	dir := t.TempDir()
	z := &earlyZeta2{state: filepath.Join(dir, "state.json"), release: filepath.Join(dir, "release"), quit: make(chan struct{})}
	z.update(func(*earlyState) {})
	z.srv = httptest.NewServer(http.HandlerFunc(z.serve))
	t.Cleanup(z.srv.Close)
	// Before the server's Close, which waits for the handlers: a held one lets go.
	t.Cleanup(func() { close(z.quit) })
	return z
}

func (z *earlyZeta2) update(f func(*earlyState)) {
	z.mu.Lock()
	defer z.mu.Unlock()
	f(&z.st)
	b, _ := json.Marshal(z.st)
	tmp := z.state + ".tmp"
	if os.WriteFile(tmp, b, 0o644) == nil {
		_ = os.Rename(tmp, z.state)
	}
}

func (z *earlyZeta2) now() earlyState {
	z.mu.Lock()
	defer z.mu.Unlock()
	return z.st
}

func (z *earlyZeta2) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/api/version" {
		http.NotFound(w, r)
		return
	}
	var req struct {
		Model  string `json:"model"`
		Prompt string `json:"prompt"`
		Stream bool   `json:"stream"`
	}
	region, ok := "", false
	if r.Method == http.MethodPost && r.URL.Path == "/v1/completions" && json.NewDecoder(r.Body).Decode(&req) == nil {
		region, ok = between(req.Prompt, "<<<<<<< CURRENT\n", "=======\n")
	}
	if !ok || !req.Stream || req.Model != "zeta-2" {
		http.Error(w, "not a streamed Zeta 2 prompt for zeta-2", http.StatusBadRequest)
		return
	}
	lines := strings.Split(strings.TrimSuffix(strings.ReplaceAll(region, "<|user_cursor|>", ""), "\n"), "\n")
	asked, first := false, -1
	for i, l := range lines {
		asked = asked || strings.HasPrefix(l, earlyTyped)
		switch l {
		case earlyTyped:
			lines[i] = earlyFinished
		case earlyFar:
			lines[i] = earlyFarDone
		default:
			continue
		}
		if first < 0 {
			first = i
		}
	}
	hold := -1
	if asked {
		z.update(func(s *earlyState) {
			s.Asked++
			if s.Asked == 1 && first >= 0 {
				hold = first + 3
			}
		})
	}
	w.Header().Set("Content-Type", "text/event-stream")
	send := func(text string) {
		b, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"text": text}}})
		fmt.Fprintf(w, "data: %s\n\n", b)
		w.(http.Flusher).Flush()
	}
	for i, l := range lines {
		if i == hold-1 {
			// Held from here: the bridge can answer early once it has this line, the second
			// after the hunk, and the fake sends nothing after it until the release. Said
			// before the line goes, so that no one sees the early answer before the state
			// says it was held.
			z.update(func(s *earlyState) { s.Held = true })
		}
		if i == hold && !z.hold(r) {
			return
		}
		// A line in two pieces, as tokens come.
		send(l[:len(l)/2])
		send(l[len(l)/2:] + "\n")
	}
	send(">>>>>>> UPDATED\n")
	fmt.Fprint(w, "data: {\"choices\":[{\"text\":\"\",\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
}

// hold waits for the release file (the state says Held already), and reports whether it came
// before the client closed the stream.
func (z *earlyZeta2) hold(r *http.Request) bool {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			z.update(func(s *earlyState) { s.Closed = true })
			return false
		case <-z.quit:
			return false
		case <-tick.C:
			if _, err := os.Stat(z.release); err == nil {
				z.update(func(s *earlyState) { s.Released = true })
				return true
			}
		}
	}
}

// runEarly runs plugin_early.lua in mode against the fake and returns the saved p.go, the fake's
// state and the bridge's log.
func runEarly(t *testing.T, mode string, steps ...string) (saved string, st earlyState, log string) {
	t.Helper()
	skipOnWindows(t, "Neovim runs on Linux here")
	z := newEarlyZeta2(t)
	// --no-prefetch: the fake counts the POSTs of the one answer; the next suggestion prefetched
	// after its last hunk would be one more.
	agent, err := json.Marshal([]string{"acp-lsp-bridge", "agent", "--model-url", z.srv.URL, "--model", "zeta-2", "--model-server", "openai", "--timeout", "30s", "--verbose", "--no-prefetch"})
	if err != nil {
		t.Fatal(err)
	}
	out, work := runNeovimPlugin(t, "plugin_early.lua", "ALL PASSED",
		"EARLY_MODE="+mode, "EARLY_AGENT="+string(agent), "EARLY_DOC="+earlyFile(),
		"EARLY_STATE="+z.state, "EARLY_RELEASE="+z.release)
	logData, _ := os.ReadFile(filepath.Join(filepath.Dir(work), "xdg", "state", "nvim", "acp-lsp-bridge.log"))
	log = string(logData)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("Neovim:\n%s\nthe agent's lines of the bridge's log:\n%s", out, agentLines(log))
		}
	})
	wantSteps(t, out, steps...)
	data, err := os.ReadFile(filepath.Join(work, "p.go"))
	if err != nil {
		t.Fatal(err)
	}
	return string(data), z.now(), log
}

// wantLogged checks that the agent's log has msg.
func wantLogged(t *testing.T, log, msg string) {
	t.Helper()
	if !strings.Contains(log, msg) {
		t.Errorf("the agent's log lacks %q:\n%s", msg, agentLines(log))
	}
}

// TestNeovimPluginEarlyGhostWhileStreaming: the user types "(" at the end of line 2; the fake
// streams the region through the first hunk (line 2 finished) and the two lines after it, then
// holds the rest. The ghost text "100)" appears at the cursor while the fake still holds (it has
// not sent the rest: it sends it only when the script, having seen the ghost text, says so), and
// <Tab> takes it: the saved file has line 2 finished.
func TestNeovimPluginEarlyGhostWhileStreaming(t *testing.T) {
	saved, st, log := runEarly(t, "ghost", "ghost text while held", "accept", "released")
	if want := strings.Replace(earlyFile(), "var x = g\n", earlyFinished+"\n", 1); saved != want {
		t.Errorf("the saved p.go:\n%s\nwant:\n%s", saved, want)
	}
	if !st.Held || !st.Released || st.Closed {
		t.Errorf("the fake's answer: %+v; want held, then released, never closed", st)
	}
	wantLogged(t, log, "model: answered with the first change while the model writes the rest")
}

// TestNeovimPluginEarlyNextHunkWithoutAsking: setup({ display = 'mark' }), where the plugin shows a
// suggestion on any line. While the fake holds the rest of its answer, the first hunk is marked on
// line 2 ("⇥ next edit, here"); <M-n> shows it, <Tab> takes it; the fake then sends the rest, and
// the second hunk is marked on line 15 without a second request to the fake (one POST in all);
// <M-n> jumps there, <M-n> shows it, <Tab> takes it. The saved file has both changes.
func TestNeovimPluginEarlyNextHunkWithoutAsking(t *testing.T) {
	saved, st, log := runEarly(t, "mark", "mark while held", "shown while held", "accept first", "released", "next mark", "jump", "shown", "accept second")
	want := strings.Replace(strings.Replace(earlyFile(), "var x = g\n", earlyFinished+"\n", 1), earlyFar+"\n", earlyFarDone+"\n", 1)
	if saved != want {
		t.Errorf("the saved p.go:\n%s\nwant both changes:\n%s", saved, want)
	}
	// One request until the second hunk was shown (the script checks it there); taking that one,
	// the last, the bridge asks for the next at once: a second request.
	if st.Asked < 1 || st.Asked > 2 || !st.Held || !st.Released || st.Closed {
		t.Errorf("the fake: %+v; want one request, its answer held, then released, never closed", st)
	}
	wantLogged(t, log, "model: answered with the first change while the model writes the rest")
	wantLogged(t, log, "model: the rest of the answer after the change accepted")
}

// TestNeovimPluginEarlyGrowsWhileShown: setup({ display = 'mark' }). While the mark of the first
// hunk is shown, the fake sends the rest of its answer and the user does nothing: the bridge,
// following the answer, tells the plugin it grew, and <M-n> then shows the whole answer (line 2
// to line 15) with no second request to the fake; <Tab> takes it whole.
func TestNeovimPluginEarlyGrowsWhileShown(t *testing.T) {
	saved, st, log := runEarly(t, "grow", "mark while held", "released", "whole shown", "accept whole")
	want := strings.Replace(strings.Replace(earlyFile(), "var x = g\n", earlyFinished+"\n", 1), earlyFar+"\n", earlyFarDone+"\n", 1)
	if saved != want {
		t.Errorf("the saved p.go:\n%s\nwant both changes:\n%s", saved, want)
	}
	if st.Asked < 1 || st.Asked > 2 || !st.Held || !st.Released || st.Closed {
		t.Errorf("the fake: %+v; want one request until the whole was shown, held, then released, never closed", st)
	}
	wantLogged(t, log, "model: the answer written so far, at the same text and cursor")
}

// TestNeovimPluginEarlyTypingClosesStream: while the ghost text of the first hunk is shown and the
// fake holds the rest of its answer, the user types "y" instead of accepting: the fake sees its
// request's connection closed before it sent the rest, and the buffer reads as typed, without
// the suggestion.
func TestNeovimPluginEarlyTypingClosesStream(t *testing.T) {
	saved, st, _ := runEarly(t, "type", "ghost text while held", "closed")
	if want := strings.Replace(earlyFile(), "var x = g\n", earlyTyped+"y\n", 1); saved != want {
		t.Errorf("the saved p.go:\n%s\nwant line 2 as typed:\n%s", saved, want)
	}
	if !st.Held || st.Released || !st.Closed {
		t.Errorf("the fake's answer: %+v; want held, then closed by the client, never released", st)
	}
}

// TestNESPluginsEarlyWhileStreaming: sidekick.nvim and copilot-lsp.nvim, each configured as its
// guide in editors/neovim says, in front of the model agent and the fake streaming Zeta 2 server:
// the user types "(" at the end of line 2 and leaves insert mode; the plugin draws the finished
// line while the fake still holds the rest of its answer; <Tab> applies it; the rest sent, the
// plugin draws line 15's change with no second request to the fake, and <Tab><Tab> applies it
// (testdata/nvim/nes_plugin_early.lua).
func TestNESPluginsEarlyWhileStreaming(t *testing.T) {
	skipOnWindows(t, "Neovim runs on Linux here")
	plugins := os.Getenv("NVIM_PLUGINS")
	if plugins == "" {
		skipWithoutPeer(t, `NVIM_PLUGINS is not set (eval "$(PEERS_NVIM_PLUGINS=1 ../shared/tools/install-test-peers.sh)")`)
	}
	for _, plugin := range []string{"sidekick", "copilot-lsp"} {
		t.Run(plugin, func(t *testing.T) {
			bridge, _ := binaries(t)
			z := newEarlyZeta2(t)
			dir := t.TempDir()
			// The guide's command with only the bridge's path changed: to a wrapper that names
			// the model agent (--no-prefetch: the fake counts the POSTs of the one answer).
			wrapper := filepath.Join(dir, "acp-lsp-bridge")
			script := "#!/bin/sh\nexec '" + bridge + "' \"$@\" -- '" + bridge + "' agent --model-url '" + z.srv.URL +
				"' --model zeta-2 --model-server openai --timeout 30s --no-prefetch\n"
			if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			out, work := runShippedNeovim(t, "nes_plugin_early.lua", "ALL PASSED",
				"NVIM_PLUGINS="+plugins,
				"ACP_GUIDE="+filepath.Join(moduleRoot(t), "editors", "neovim", plugin+".md"),
				"ACP_LSP_BRIDGE="+wrapper,
				"EARLY_PLUGIN="+plugin, "EARLY_DOC="+earlyFile(), "EARLY_STATE="+z.state, "EARLY_RELEASE="+z.release)
			wantSteps(t, out, "drawn while held", "accept first", "next drawn", "accept second")
			data, err := os.ReadFile(filepath.Join(work, "p.go"))
			if err != nil {
				t.Fatal(err)
			}
			want := strings.Replace(strings.Replace(earlyFile(), "var x = g\n", earlyFinished+"\n", 1), earlyFar+"\n", earlyFarDone+"\n", 1)
			if string(data) != want {
				t.Errorf("the saved p.go:\n%s\nwant both changes:\n%s", data, want)
			}
			if st := z.now(); st.Asked < 1 || st.Asked > 2 || !st.Held || !st.Released || st.Closed {
				t.Errorf("the fake: %+v; want one request until line 15 was drawn, its answer held, then released, never closed", st)
			}
		})
	}
}
