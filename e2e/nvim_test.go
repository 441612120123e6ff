package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testutil"
)

// TestNeovimInlineCompletion runs Neovim's own LSP client (vim.lsp.inline_completion, Neovim
// 0.12) headless against the bridge and the scripted test agent: once per position encoding that
// Neovim can negotiate, it types so that an agent rule fires, waits for the inline completion,
// accepts it with vim.lsp.inline_completion.get(), and checks the buffer, the item, and the
// nes/accept the agent received. The steps and checks are in testdata/nvim/inline.lua; the
// Neovim behaviour they rely on is described in testdata/nvim/NOTES.md.
//
// NVIM is set by `eval "$(bash ../shared/tools/install-test-peers.sh)"`.
func TestNeovimInlineCompletion(t *testing.T) {
	nvim := os.Getenv("NVIM")
	if nvim == "" {
		skipWithoutPeer(t, `NVIM is not set; run eval "$(bash ../shared/tools/install-test-peers.sh)"`)
	}
	root := moduleRoot(t)
	script := filepath.Join(root, "testdata", "nvim", "inline.lua")
	if _, err := os.Stat(script); err != nil {
		t.Fatal(err)
	}
	bridge, agent := binaries(t)

	// The agent's encoding differs from the editor's, so every position goes through the
	// bridge's conversion in both directions.
	for _, tc := range []struct{ editor, agent string }{
		{"utf-8", "utf-16"},
		{"utf-16", "utf-32"},
		{"utf-32", "utf-8"},
	} {
		t.Run(tc.editor, func(t *testing.T) {
			t.Parallel()
			nvimRun(t, nvim, script, bridge, agent, tc.editor, tc.agent)
		})
	}
}

func nvimRun(t *testing.T, nvim, script, bridge, agent, enc, agentEnc string) {
	dir := t.TempDir()
	xdg := filepath.Join(dir, "xdg")
	work := filepath.Join(dir, "work")
	for _, d := range []string{xdg, work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, nvim, "--headless", "--clean", "-c", "lua dofile(vim.env.NVIM_TEST_SCRIPT)")
	cmd.Dir = work
	cmd.Env = append(os.Environ(),
		"NVIM_TEST_SCRIPT="+script,
		"ACP_LSP_BRIDGE="+bridge,
		"ACP_TEST_AGENT="+agent,
		"NVIM_TEST_ENCODING="+enc,
		"NVIM_TEST_AGENT_ENCODING="+agentEnc,
		"NVIM_TEST_AGENT_SYNC=incremental",
		"NVIM_TEST_DIR="+work,
	)
	// Keep Neovim's state (the LSP log, shada, swap) inside the test's directory.
	cmd.Env = append(cmd.Env, xdgDirs(xdg)...)
	// The script starts the bridge in Neovim's process group (detached = false), so on timeout
	// the whole group goes.
	ownGroup(cmd)
	cmd.Cancel = func() error { return signalGroup(cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var out testutil.SyncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	elapsed := time.Since(start)
	if cmd.Process != nil {
		_ = signalGroup(cmd.Process.Pid, syscall.SIGKILL) // leftovers, if any
	}
	output := out.String()
	t.Logf("nvim (editor %s, agent %s) finished in %v", enc, agentEnc, elapsed.Round(time.Millisecond))

	report := func() {
		t.Logf("nvim output:\n%s", nvimIndent(output))
		for _, f := range []struct{ name, path string }{
			{"bridge log (--log-file)", filepath.Join(work, "bridge.log")},
			{"agent log (messages the agent received)", filepath.Join(work, "agent.log")},
			{"Neovim LSP log (client side of the wire)", filepath.Join(xdg, "state", "nvim", "lsp.log")},
		} {
			b, rerr := os.ReadFile(f.path)
			if rerr != nil {
				t.Logf("%s: %v", f.name, rerr)
				continue
			}
			t.Logf("%s, %s:\n%s", f.name, f.path, nvimIndent(nvimTail(string(b), 200)))
		}
	}

	// The script checks the lifecycle too while Neovim runs; here the agent log is complete.
	failed := nvimVerdict(t, ctx.Err(), err, output, filepath.Join(work, "agent.log"), 30*time.Second)
	if failed {
		report()
	} else if testing.Verbose() {
		t.Logf("nvim output:\n%s", nvimIndent(output))
	}
}

// nvimAcceptedIDs reads the "CASE <name> ok <id>" lines the script prints.
func nvimAcceptedIDs(output string) map[string]string {
	ids := map[string]string{}
	for _, line := range strings.Split(output, "\n") {
		i := strings.Index(line, "CASE ")
		if i < 0 {
			continue
		}
		f := strings.Fields(line[i:])
		if len(f) == 4 && f[2] == "ok" {
			ids[f[1]] = f[3]
		}
	}
	return ids
}

type nvimAgentMessage struct {
	Method string `json:"method"`
	Params struct {
		ID string `json:"id"`
	} `json:"params"`
	raw string
}

func nvimReadAgentLog(path string) ([]nvimAgentMessage, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var msgs []nvimAgentMessage
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var m nvimAgentMessage
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			// params.id may legitimately be a non-string elsewhere; keep the method.
			var loose struct {
				Method string `json:"method"`
			}
			if err2 := json.Unmarshal([]byte(line), &loose); err2 != nil {
				return msgs, fmt.Errorf("line %q: %w", line, err)
			}
			m = nvimAgentMessage{Method: loose.Method}
		}
		m.raw = line
		msgs = append(msgs, m)
	}
	return msgs, sc.Err()
}

func nvimIndent(s string) string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return "    (empty)"
	}
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}

func nvimTail(s string, lines int) string {
	parts := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(parts) <= lines {
		return s
	}
	return fmt.Sprintf("... (%d earlier lines)\n%s", len(parts)-lines, strings.Join(parts[len(parts)-lines:], "\n"))
}

// nvimVerdict checks a finished Neovim run: it ended in time and cleanly, printed ALL PASSED and no
// FAIL line, and every suggestion a case reports accepted ended exactly once, with nes/accept, in
// the agent's complete log. It reports whether anything failed.
func nvimVerdict(t *testing.T, ctxErr, runErr error, output, agentLog string, limit time.Duration) (failed bool) {
	t.Helper()
	switch {
	case ctxErr != nil:
		t.Errorf("nvim did not finish within %v", limit)
		failed = true
	case runErr != nil:
		t.Errorf("nvim failed: %v", runErr)
		failed = true
	case !strings.Contains(output, "ALL PASSED"):
		t.Errorf("nvim exited 0 without ALL PASSED")
		failed = true
	}
	for _, line := range strings.Split(output, "\n") {
		if i := strings.Index(line, "FAIL "); i >= 0 {
			t.Errorf("%s", line[i:])
			failed = true
		}
	}
	accepted := nvimAcceptedIDs(output)
	if !failed && len(accepted) == 0 {
		t.Errorf("no case reported an accepted suggestion")
		failed = true
	}
	if len(accepted) > 0 {
		msgs, lerr := nvimReadAgentLog(agentLog)
		if lerr != nil {
			t.Errorf("agent log: %v", lerr)
			failed = true
		}
		for name, id := range accepted {
			var got []string
			for _, m := range msgs {
				if (m.Method == "nes/accept" || m.Method == "nes/reject") && m.Params.ID == id {
					got = append(got, m.raw)
				}
			}
			if len(got) != 1 || !strings.Contains(got[0], `"nes/accept"`) {
				t.Errorf("case %s: suggestion %q: want exactly one nes/accept, agent received %d lifecycle messages: %s",
					name, id, len(got), strings.Join(got, " "))
				failed = true
			}
		}
	}
	return failed
}

// xdgDirs is the environment that gives a program (Neovim) its config, data, state and cache
// directories of its own under dir.
func xdgDirs(dir string) []string {
	return []string{
		"XDG_CONFIG_HOME=" + filepath.Join(dir, "config"),
		"XDG_DATA_HOME=" + filepath.Join(dir, "data"),
		"XDG_STATE_HOME=" + filepath.Join(dir, "state"),
		"XDG_CACHE_HOME=" + filepath.Join(dir, "cache"),
	}
}
