package e2e

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testagent"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testutil"
)

// TestNeovimSurfaces runs headless Neovim 0.12 against the bridge for the surfaces other than
// inline completion, driving them the way real Neovim plugins do:
//
//   - copilot-inline-edit: textDocument/copilotInlineEdit as sidekick.nvim sends and applies it
//     (a client whose name contains "copilot", the buffer's version in the request and checked
//     against the answer, vim.lsp.util.apply_text_edits, then client:exec_cmd of the edit's
//     command), and as copilot-lsp.nvim does (utf-16 positions whatever was negotiated, no
//     context, textDocument/didShowInlineEdit); once offering Neovim only utf-16, once only utf-8.
//     The agent is acp-test-agent with rules.
//   - code-action: vim.lsp.buf.code_action({apply = true, filter = …}), Neovim's own path
//     (apply_workspace_edit, then exec_cmd): an edit suggestion for another file that is not
//     open, one for another file that is open with unsaved changes (the bridge's
//     window/showDocument then moves the cursor there), a search-and-replace in a folder (two
//     files in one WorkspaceEdit; .git and binary files left alone), and a jump to a third file.
//     The agent is the test agent package with a scripted Suggest hook (see surfacesAgentMain),
//     because acp-test-agent's rules only edit the requested document.
//   - dismiss: acp-lsp-bridge.reject as editors/neovim/*.md map it, by document and by id.
//
// Every case has non-ASCII text before the edit, and the agent's encoding differs from the
// editor's. The scripts are testdata/nvim/surfaces_*.lua; what the plugins do is written down in
// testdata/nvim/COPILOT-NES.md.
func TestNeovimSurfaces(t *testing.T) {
	nvim := os.Getenv("NVIM")
	if nvim == "" {
		skipWithoutPeer(t, `NVIM is not set; run eval "$(bash ../shared/tools/install-test-peers.sh)"`)
	}
	root := moduleRoot(t)
	bridge, agent := binaries(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, script, editor, agentEnc string
		scripted                       bool // the agent is this test binary with a scripted Suggest hook
	}{
		{"copilot-inline-edit/utf-16", "surfaces_inline_edit.lua", "utf-16", "utf-32", false},
		{"copilot-inline-edit/utf-8", "surfaces_inline_edit.lua", "utf-8", "utf-16", false},
		{"code-action/utf-16", "surfaces_code_action.lua", "utf-16", "utf-8", true},
		{"code-action/utf-32", "surfaces_code_action.lua", "utf-32", "utf-16", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			script := filepath.Join(root, "testdata", "nvim", tc.script)
			if _, err := os.Stat(script); err != nil {
				t.Fatal(err)
			}
			agentCmd := []string{agent}
			if tc.scripted {
				agentCmd = []string{self, surfacesAgentArg}
			}
			surfacesRun(t, nvim, script, bridge, agentCmd, tc.editor, tc.agentEnc)
		})
	}
}

// surfacesAgentArg, as the first argument of this test binary, makes it the scripted agent.
const surfacesAgentArg = "acp-e2e-surfaces-agent"

func init() {
	if len(os.Args) > 1 && os.Args[1] == surfacesAgentArg {
		os.Exit(surfacesAgentMain(os.Args[2:]))
	}
}

// surfacesScript is what the scripted agent answers: when the cursor line of a nes/suggest
// contains When, the suggestions Suggest, in order.
type surfacesScript []struct {
	When    string                 `json:"when"`
	Suggest []surfacesScriptedSugg `json:"suggest"`
}

// surfacesScriptedSugg is one suggestion. File is relative to the requested document's folder
// ("" is the requested document). For "edit": the first occurrence of Find in the file is
// replaced by Replace. For "jump": the position just before the first occurrence of Find (plus
// After bytes). For "searchAndReplace": Find → Replace in File (a file or a folder). The agent reads documents the editor has open from its mirror (what
// document/didOpen and didChange said), other files from disk.
type surfacesScriptedSugg struct {
	Kind    string `json:"kind"`
	File    string `json:"file"`
	Find    string `json:"find"`
	Replace string `json:"replace"`
	After   int    `json:"after"`
}

// surfacesAgentMain runs the test agent (internal/test/testagent) on stdin/stdout with a Suggest hook
// that answers from a script file; used by the code-action cases.
func surfacesAgentMain(args []string) int {
	fs := flag.NewFlagSet(surfacesAgentArg, flag.ContinueOnError)
	enc := fs.String("encoding", "utf-16", "position encoding")
	logFile := fs.String("log", "", "received messages, one JSON line each")
	scriptFile := fs.String("script", "", "JSON surfacesScript")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	var script surfacesScript
	b, err := os.ReadFile(*scriptFile)
	if err == nil {
		err = json.Unmarshal(b, &script)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "scripted agent: --script:", err)
		return 2
	}
	kind, ok := encoding.ParseKind(*enc)
	if !ok {
		fmt.Fprintln(os.Stderr, "scripted agent: bad --encoding", *enc)
		return 2
	}
	cfg := testagent.Config{Encoding: *enc}
	if *logFile != "" {
		f, err := os.OpenFile(*logFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			fmt.Fprintln(os.Stderr, "scripted agent: --log:", err)
			return 2
		}
		defer f.Close()
		cfg.Log = f
	}
	var mu sync.Mutex
	next := 0
	var agent *testagent.Agent
	cfg.Suggest = func(_ context.Context, req acp.UnstableSuggestNesRequest, doc string) (any, *acp.RequestError) {
		none := map[string]any{"suggestions": []any{}}
		m := encoding.NewMapper(doc)
		if req.Position.Line >= m.LineCount() {
			return none, nil
		}
		start := m.LineStart(req.Position.Line)
		end := len(doc)
		if req.Position.Line+1 < m.LineCount() {
			end = m.LineStart(req.Position.Line + 1)
		}
		line := doc[start:end]
		for _, entry := range script {
			if !strings.Contains(line, entry.When) {
				continue
			}
			var out []any
			for _, sg := range entry.Suggest {
				mu.Lock()
				next++
				id := fmt.Sprintf("scripted-%d", next)
				mu.Unlock()
				uri, path := req.Uri, ""
				if sg.File != "" {
					u, err := url.Parse(req.Uri)
					if err != nil {
						return nil, acp.NewInternalError(map[string]any{"error": err.Error()})
					}
					path = filepath.Join(filepath.Dir(u.Path), sg.File)
					uri = (&url.URL{Scheme: "file", Path: path}).String()
				}
				if sg.Kind == "searchAndReplace" {
					out = append(out, map[string]any{"kind": "searchAndReplace", "id": id, "uri": uri, "search": sg.Find, "replace": sg.Replace})
					continue
				}
				text, open := doc, true
				if sg.File != "" {
					if text, open = agent.Mirror(uri); !open {
						b, err := os.ReadFile(path)
						if err != nil {
							return nil, acp.NewInternalError(map[string]any{"error": err.Error()})
						}
						text = string(b)
					}
				}
				fm := encoding.NewMapper(text)
				i := strings.Index(text, sg.Find)
				if i < 0 {
					return nil, acp.NewInternalError(map[string]any{"error": fmt.Sprintf("%q not in %s", sg.Find, uri)})
				}
				switch sg.Kind {
				case "edit":
					r, err := fm.OffsetsRange(i, i+len(sg.Find), kind)
					if err != nil {
						return nil, acp.NewInternalError(map[string]any{"error": err.Error()})
					}
					out = append(out, map[string]any{"kind": "edit", "id": id, "uri": uri, "edits": []any{
						map[string]any{"range": surfacesRange(r), "newText": sg.Replace},
					}})
				case "jump":
					r, err := fm.OffsetsRange(i+sg.After, i+sg.After, kind)
					if err != nil {
						return nil, acp.NewInternalError(map[string]any{"error": err.Error()})
					}
					out = append(out, map[string]any{"kind": "jump", "id": id, "uri": uri, "position": surfacesRange(r)["start"]})
				default:
					return nil, acp.NewInternalError(map[string]any{"error": "unknown kind " + sg.Kind})
				}
			}
			return map[string]any{"suggestions": out}, nil
		}
		return none, nil
	}
	agent = testagent.New(cfg)
	agent.Serve(os.Stdin, os.Stdout)
	return 0
}

func surfacesRange(r encoding.Range) map[string]map[string]int {
	return map[string]map[string]int{
		"start": {"line": r.Start.Line, "character": r.Start.Character},
		"end":   {"line": r.End.Line, "character": r.End.Character},
	}
}

// surfacesRun runs one Neovim with a script and checks its verdict and the agent's log.
func surfacesRun(t *testing.T, nvim, script, bridge string, agentCmd []string, enc, agentEnc string) {
	dir := t.TempDir()
	xdg := filepath.Join(dir, "xdg")
	work := filepath.Join(dir, "work")
	for _, d := range []string{xdg, work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	agentJSON, err := json.Marshal(agentCmd)
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, nvim, "--headless", "--clean", "-c", "lua dofile(vim.env.NVIM_TEST_SCRIPT)")
	cmd.Dir = work
	cmd.Env = append(os.Environ(),
		"NVIM_TEST_SCRIPT="+script,
		"ACP_LSP_BRIDGE="+bridge,
		"NVIM_TEST_AGENT_CMD="+string(agentJSON),
		"NVIM_TEST_ENCODING="+enc,
		"NVIM_TEST_AGENT_ENCODING="+agentEnc,
		"NVIM_TEST_DIR="+work,
	)
	cmd.Env = append(cmd.Env, xdgDirs(xdg)...)
	// The script starts the bridge in Neovim's process group (detached = false), so on timeout
	// the whole group goes.
	ownGroup(cmd)
	cmd.Cancel = func() error { return signalGroup(cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var out testutil.SyncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err = cmd.Run()
	elapsed := time.Since(start)
	if cmd.Process != nil {
		_ = signalGroup(cmd.Process.Pid, syscall.SIGKILL) // leftovers, if any
	}
	output := out.String()
	t.Logf("nvim (editor %s, agent %s) finished in %v", enc, agentEnc, elapsed.Round(time.Millisecond))

	failed := nvimVerdict(t, ctx.Err(), err, output, filepath.Join(work, "agent.log"), 40*time.Second)
	if failed {
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
	} else if testing.Verbose() {
		t.Logf("nvim output:\n%s", nvimIndent(output))
	}
}

// TestNeovimCodeActionMenuNeverWaits: real Neovim 0.12 with two language servers in one buffer,
// the bridge (its agent busy 5 s on each suggestion) and the language's own server
// (internal/test/testlsp, one code action at once). Neovim opens the code-action menu only once both
// have answered: it opens within the bridge's --code-action-wait, with the language server's
// action; after the agent's 5 s the menu offers its suggestion too, without asking it again
// (testdata/nvim/code_action_wait.lua).
func TestNeovimCodeActionMenuNeverWaits(t *testing.T) {
	out, _ := runShippedNeovim(t, "code_action_wait.lua", "ALL PASSED", "ACP_TEST_LSP="+testLSP(t))
	wantSteps(t, out, "menu at once", "late answer offered")
}
