package e2e

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The Neovim plugin (lsp/acp.lua, lua/acp_lsp_bridge, doc/ at the repository's root) is tested as
// users get it: installed by vim.pack from a git repository holding the working tree's plugin
// files, in Neovim 0.12 started as a user starts it (not --clean, whose 'packpath' leaves out the
// data directory vim.pack installs into) with every XDG directory its own, and the bridge found on
// the PATH, not configured. The steps are in testdata/nvim/plugin_*.lua.

// TestNeovimPluginEnableOnly: with the plugin installed and only vim.lsp.enable('acp') (as an
// nvim-lspconfig user has it, no setup()), the bridge runs its built-in agent and ghost text
// offers the rename the user made at the next use of the name; vim.lsp.inline_completion.get()
// accepts it, and no key was mapped (testdata/nvim/plugin_enable.lua).
func TestNeovimPluginEnableOnly(t *testing.T) {
	out, _ := runNeovimPlugin(t, "plugin_enable.lua", "ALL PASSED")
	wantSteps(t, out, "ghost text", "accept")
}

// TestNeovimPluginSetup: require('acp_lsp_bridge').setup({}), no agent named: the built-in agent's
// ghost text, accepted with the plugin's <Tab> (testdata/nvim/plugin_setup.lua).
func TestNeovimPluginSetup(t *testing.T) {
	out, _ := runNeovimPlugin(t, "plugin_setup.lua", "ALL PASSED")
	wantSteps(t, out, "ghost text", "accept")
}

// TestNeovimPluginKeys: setup() naming the scripted test agent; ghost text appears while typing,
// <Tab> accepts it (buffer and nes/accept checked), <C-]> dismisses another (buffer unchanged,
// nes/reject "rejected"), and status() shows the request in flight (testdata/nvim/plugin_keys.lua).
func TestNeovimPluginKeys(t *testing.T) {
	out, _ := runNeovimPlugin(t, "plugin_keys.lua", "ALL PASSED")
	wantSteps(t, out, "accept", "dismiss")
}

// TestNeovimPluginPartialAcceptAndAlternatives: the plugin's <M-Right> takes the ghost text's next
// word and <M-C-Right> its next line, the rest shown again at once and the agent hearing nes/accept
// only once the whole suggestion is in; of two alternatives the agent offers, <M-]> and <M-[> move
// between them (Neovim's "(2/2)" hint) and <Tab> takes the one shown (testdata/nvim/plugin_partial.lua).
func TestNeovimPluginPartialAcceptAndAlternatives(t *testing.T) {
	out, _ := runNeovimPlugin(t, "plugin_partial.lua", "ALL PASSED")
	wantSteps(t, out, "accept word", "alternatives", "accept line")
}

// TestNeovimPluginSuggestionReady: the bridge asks the agent ahead once the buffer is still (the
// delay counted from the last key) and says so with acp-lsp-bridge/suggestionReady; the plugin
// asks for the ghost text at once. With Neovim's own request while typing taken away, the ghost
// text still comes, and the agent is asked once; with the plugin's handler taken away too, nothing
// shows (testdata/nvim/plugin_ready.lua).
func TestNeovimPluginSuggestionReady(t *testing.T) {
	out, _ := runNeovimPlugin(t, "plugin_ready.lua", "ALL PASSED")
	wantSteps(t, out, "ready", "unheard")
}

// TestNeovimPluginQuietDisplay: setup({ display = 'mark' }): as the user types, no ghost text,
// but a sign at the suggestion's line and the hint "⇥ next edit, line 6"; <M-n> jumps there, <M-n>
// again shows the lines as they would read, <Tab> takes it and the agent hears nes/accept
// (testdata/nvim/plugin_mark.lua).
func TestNeovimPluginQuietDisplay(t *testing.T) {
	out, _ := runNeovimPlugin(t, "plugin_mark.lua", "ALL PASSED")
	wantSteps(t, out, "mark", "jump", "shown", "accept")
}

// TestNeovimPluginQuietDisplayWaitsTheDelay: setup({ display = 'mark', delay = 600 }): the bridge's
// delay is the quieter display's only wait. Four keys typed 60 ms apart: the plugin asks at once
// after each change (its request sent within the change's TextChangedI, the one before cancelled),
// Neovim's own ghost text asks nothing, the agent is asked once, for the last text, no sooner than
// the delay after the last key, and the mark comes after that, within a generous margin of the
// delay (testdata/nvim/plugin_mark_delay.lua).
func TestNeovimPluginQuietDisplayWaitsTheDelay(t *testing.T) {
	out, _ := runNeovimPlugin(t, "plugin_mark_delay.lua", "ALL PASSED")
	wantSteps(t, out, "asked at once", "one wait")
}

// TestNeovimPluginStatusPerBuffer: status() shows the current buffer's own status, not the latest
// the bridge sent, whichever buffer it named: main.go ready, .env kept from the agent (excluded);
// switching buffers shows each one's at once and after, and two windows side by side each show
// their buffer's in their statusline (testdata/nvim/plugin_status.lua).
func TestNeovimPluginStatusPerBuffer(t *testing.T) {
	out, _ := runNeovimPlugin(t, "plugin_status.lua", "ALL PASSED")
	wantSteps(t, out, "each", "switch", "windows")
}

// TestNeovimPluginSwitchAndDelay: setup({ delay = 600, automatic = false }) starts with
// suggestions while typing off (typing shows nothing, the agent is asked nothing); `:AcpLspBridge
// enable buffer` turns them on, says so, and the ghost text comes no sooner than the delay after
// the last key; `:AcpLspBridge disable buffer` turns them off again (testdata/nvim/plugin_switch.lua).
func TestNeovimPluginSwitchAndDelay(t *testing.T) {
	out, _ := runNeovimPlugin(t, "plugin_switch.lua", "ALL PASSED")
	wantSteps(t, out, "off", "on", "off again")
}

// TestNeovimPluginLoads: installing the plugin gives the 'acp' config and the help (every link in
// it found) and runs nothing; setup()'s keys can be moved and turned off, and are mapped only
// where the bridge attached; misspelt options are refused with what to write
// (testdata/nvim/plugin_load.lua).
func TestNeovimPluginLoads(t *testing.T) {
	runNeovimPlugin(t, "plugin_load.lua", "ALL PASSED")
}

// TestNeovimPluginHealth reads :checkhealth acp_lsp_bridge as the user sees it: the bridge found on
// the PATH, its version as `acp-lsp-bridge --version` prints it, the built-in agent's verdict from
// doctor, the encoding the client negotiated; and each failure with what to do: a bridge where
// there is none (how to install it), an agent that is not installed (doctor's reason), the model
// agent in front of a server that is down (doctor's advice), GitHub
// Copilot named by its short name (agent = 'copilot') without its language server (doctor
// --agent copilot: how to install it), the config not enabled and no client for the buffer
// (testdata/nvim/plugin_health.lua).
func TestNeovimPluginHealth(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + l.Addr().String()
	l.Close() // nothing listens there now
	out, work := runNeovimPlugin(t, "plugin_health.lua", "ALL PASSED", "HEALTH_DOWN_URL="+down)
	bridge, _ := binaries(t)
	version, err := exec.Command(bridge, "--version").Output()
	if err != nil {
		t.Fatalf("%s --version: %v", bridge, err)
	}
	enc := regexp.MustCompile(`ENCODING (utf-\d+)`).FindStringSubmatch(out)
	if enc == nil {
		t.Fatalf("the script printed no ENCODING line:\n%s", out)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(work, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	ok := read("health-ok.txt")
	for _, want := range []string{
		"OK found: " + bridge,
		"OK version: " + strings.TrimSpace(string(version)),
		"OK the built-in agent (`acp-lsp-bridge agent`), which says it is acp-lsp-bridge-builtin",
		"the agent can do Next Edit Suggestions",
		"OK " + enc[1] + ", negotiated by the acp client",
		"attached to this buffer (main.go)",
	} {
		if !strings.Contains(ok, want) {
			t.Errorf("the report with the bridge on the PATH lacks %q:\n%s", want, ok)
		}
	}
	if strings.Contains(ok, "ERROR") || strings.Contains(ok, "WARNING") {
		t.Errorf("the report with everything in place has errors or warnings:\n%s", ok)
	}

	missing := read("health-bridge.txt")
	for _, want := range []string{
		"ERROR " + filepath.Join(work, "nowhere", "acp-lsp-bridge") + " not found: no executable file at that path",
		"go install github.com/acp-lsp-bridge/acp-lsp-bridge/cmd/acp-lsp-bridge@latest",
		"release archive",
		"not checked",
	} {
		if !strings.Contains(missing, want) {
			t.Errorf("the report with no bridge at the configured path lacks %q:\n%s", want, missing)
		}
	}

	agent := read("health-agent.txt")
	for _, want := range []string{
		"OK found: " + bridge,
		"ERROR `acp-no-such-agent --acp`: ",
		`"acp-no-such-agent" not found`,
		"Install the agent, or name it by its full path",
		"acp-lsp-bridge doctor -- acp-no-such-agent --acp",
	} {
		if !strings.Contains(agent, want) {
			t.Errorf("the report with an agent that is not installed lacks %q:\n%s", want, agent)
		}
	}

	// agent = 'copilot': the bridge's short name, checked as the bridge runs it (doctor --agent
	// copilot), with Copilot's language server nowhere on the PATH.
	copilot := read("health-copilot.txt")
	for _, want := range []string{
		"cmd: acp-lsp-bridge --log-file ",
		" --agent copilot",
		"OK found: " + bridge,
		"ERROR `copilot` (`acp-lsp-bridge --agent copilot`): ",
		`command "copilot-language-server" not found`,
		"Install it: npm install -g @github/copilot-language-server",
		"The bridge looks for `copilot-language-server` on Neovim's PATH",
		"acp-lsp-bridge doctor --agent copilot",
	} {
		if !strings.Contains(copilot, want) {
			t.Errorf("the report with agent = 'copilot' and no copilot-language-server lacks %q:\n%s", want, copilot)
		}
	}
	if strings.Contains(copilot, "doctor -- ") || strings.Contains(copilot, "Install the agent, or name it by its full path") {
		t.Errorf("the report with agent = 'copilot' checks or advises a command after \"--\":\n%s", copilot)
	}

	// The model agent in front of a server that is down: an error, and what to do, not "ready".
	server := read("health-server.txt")
	for _, want := range []string{
		"ERROR `acp-lsp-bridge agent --model-url " + down,
		"the model's server does not answer",
		"nothing answers at the model's address: start the model's server there",
	} {
		if !strings.Contains(server, want) {
			t.Errorf("the report with the model's server down lacks %q:\n%s", want, server)
		}
	}
	if strings.Contains(server, "OK `acp-lsp-bridge agent") {
		t.Errorf("the report with the model's server down says the agent is ready:\n%s", server)
	}

	none := read("health-none.txt")
	for _, want := range []string{
		"WARNING the 'acp' config is not enabled",
		"vim.lsp.enable('acp')",
		"WARNING no acp client attached to this buffer",
	} {
		if !strings.Contains(none, want) {
			t.Errorf("the report with the config disabled, from an empty buffer, lacks %q:\n%s", want, none)
		}
	}
}

func wantSteps(t *testing.T, out string, steps ...string) {
	t.Helper()
	for _, step := range steps {
		if !strings.Contains(out, "STEP "+step+" ok") {
			t.Errorf("missing %q in\n%s", "STEP "+step+" ok", out)
		}
	}
}

// runNeovimPlugin runs testdata/nvim/SCRIPT in Neovim 0.12 as a user who installs the plugin with
// vim.pack: the plugin's files from the working tree in a git repository (ACP_PLUGIN_REPO) for
// vim.pack to clone, the built bridge on the PATH, nothing of the machine's Neovim configuration.
func runNeovimPlugin(t *testing.T, script, done string, env ...string) (out, work string) {
	t.Helper()
	if os.Getenv("NVIM") == "" {
		skipWithoutPeer(t, `NVIM is not set; run eval "$(bash ../shared/tools/install-test-peers.sh)"`)
	}
	if _, err := exec.LookPath("git"); err != nil {
		skipWithoutPeer(t, "git is not on the PATH; vim.pack installs plugins with it")
	}
	bridge, _ := binaries(t)
	none := t.TempDir() // system-wide configuration and data directories: none
	base := []string{
		"ACP_PLUGIN_REPO=" + pluginRepo(t),
		"PATH=" + filepath.Dir(bridge) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"XDG_CONFIG_DIRS=" + none,
		"XDG_DATA_DIRS=" + none,
	}
	return runNeovimScript(t, []string{"-i", "NONE"}, script, done, append(base, env...)...)
}

// pluginRepo commits the plugin's files as they are in the working tree (lsp/, lua/, doc/) to a
// new git repository and returns its path: what vim.pack and lazy.nvim clone from GitHub.
func pluginRepo(t *testing.T) string {
	t.Helper()
	root := moduleRoot(t)
	repo := t.TempDir()
	for _, dir := range []string{"lsp", "lua", "doc", "plugin"} {
		src := filepath.Join(root, dir)
		if _, err := os.Stat(src); os.IsNotExist(err) {
			continue
		}
		if err := os.CopyFS(filepath.Join(repo, dir), os.DirFS(src)); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{
		{"init", "-q"},
		{"add", "-A"},
		{"-c", "user.name=test", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false", "commit", "-q", "-m", "plugin"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return repo
}

// runShippedNeovim runs testdata/nvim/SCRIPT in Neovim 0.12 headless and clean (no user
// configuration), with the built bridge and test agent at hand (ACP_LSP_BRIDGE, ACP_TEST_AGENT).
func runShippedNeovim(t *testing.T, script, done string, env ...string) (out, work string) {
	t.Helper()
	return runNeovimScript(t, []string{"--clean"}, script, done, env...)
}

// runNeovimScript runs testdata/nvim/SCRIPT in Neovim 0.12 headless with args, the built bridge
// and test agent (ACP_LSP_BRIDGE, ACP_TEST_AGENT), XDG directories of its own and a workspace
// folder (NVIM_TEST_DIR) that it returns; the script must print done. env is added to (and
// overrides) that environment.
func runNeovimScript(t *testing.T, args []string, script, done string, env ...string) (out, work string) {
	t.Helper()
	return runNeovimScriptFor(t, args, script, done, func(string) []string { return env })
}

// runShippedNeovimIn is runShippedNeovim with an environment that depends on the workspace
// folder: envFor is called with it before Neovim starts.
func runShippedNeovimIn(t *testing.T, script, done string, envFor func(work string) []string) (out, work string) {
	t.Helper()
	return runNeovimScriptFor(t, []string{"--clean"}, script, done, envFor)
}

func runNeovimScriptFor(t *testing.T, args []string, script, done string, envFor func(work string) []string) (out, work string) {
	t.Helper()
	nvim := os.Getenv("NVIM")
	if nvim == "" {
		skipWithoutPeer(t, `NVIM is not set; run eval "$(bash ../shared/tools/install-test-peers.sh)"`)
	}
	root := moduleRoot(t)
	bridge, agent := binaries(t)
	dir := t.TempDir()
	work, xdg := filepath.Join(dir, "work"), filepath.Join(dir, "xdg")
	for _, d := range []string{work, xdg} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// A script that does not load would leave Neovim waiting until the timeout; say why at once.
	run := "lua local ok, err = pcall(dofile, vim.env.NVIM_TEST_SCRIPT) " +
		"if not ok then io.stdout:write('FAIL loading the script: ', tostring(err), '\\n') vim.cmd('cquit 3') end"
	cmd := exec.CommandContext(ctx, nvim, append(append([]string{"--headless"}, args...), "-c", run)...)
	cmd.Dir = work
	cmd.Env = append(os.Environ(),
		"NVIM_TEST_SCRIPT="+filepath.Join(root, "testdata", "nvim", script),
		"NVIM_TEST_LIB="+filepath.Join(root, "testdata", "nvim", "shipped_lib.lua"),
		"ACP_LSP_BRIDGE="+bridge,
		"ACP_TEST_AGENT="+agent,
		"NVIM_TEST_DIR="+work,
	)
	cmd.Env = append(cmd.Env, xdgDirs(xdg)...)
	cmd.Env = append(cmd.Env, envFor(work)...)
	b, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(b), done) {
		log, _ := os.ReadFile(filepath.Join(xdg, "state", "nvim", "acp-lsp-bridge.log"))
		t.Fatalf("neovim: %v\n%s\nbridge log:\n%s", err, b, log)
	}
	return string(b), work
}

// TestNeovimPluginPrompts: setup() naming an agent without Next Edit Suggestions
// (testdata/peers/session-agent.mjs, the official ACP SDK) with prompts = 'auto', the user's way to
// ghost text from such an agent, since Neovim's inline completion asks only automatically: typing
// "retur" prompts the agent, its "return nil" appears as ghost text, and <Tab> accepts it
// (testdata/nvim/plugin_prompts.lua).
func TestNeovimPluginPrompts(t *testing.T) {
	node, modules := sdkPeer(t)
	agentLog := filepath.Join(t.TempDir(), "agent.jsonl") // outside the workspace, which the bridge watches during a prompt
	out, _ := runNeovimPlugin(t, "plugin_prompts.lua", "ALL PASSED",
		"SESSION_AGENT_NODE="+node,
		"SESSION_AGENT_SCRIPT="+filepath.Join(moduleRoot(t), "testdata", "peers", "session-agent.mjs"),
		"SESSION_AGENT_LOG="+agentLog,
		"SESSION_AGENT_MODES=1",
		`SESSION_AGENT_RULES=[{"find":"\tretur\n","replace":"\treturn nil\n"}]`,
		"PEERS_NODE_MODULES="+modules,
	)
	wantSteps(t, out, "ghost text", "accept")
}
