package e2e

import (
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/lspside"
)

// The VS Code extension in editors/vscode: TestVSCodeManifest checks its manifest against its
// source and the bridge without npm; TestVSCodeExtensionCompiles builds it as its README says and
// drives the compiled extension, with the real vscode-languageclient, against the real bridge.

// vscodeServerCommands are the bridge's workspace/executeCommand commands, by the key
// editors/vscode/src/extension.ts gives them in SERVER_COMMANDS.
var vscodeServerCommands = map[string]string{
	"accept":  lspside.CommandAccept,
	"reject":  lspside.CommandReject,
	"suggest": lspside.CommandSuggest,
	"signIn":  lspside.CommandSignIn,
	"restart": lspside.CommandRestart,
	"enable":  lspside.CommandEnable,
	"disable": lspside.CommandDisable,
	"toggle":  lspside.CommandToggle,
}

type vscodeManifest struct {
	Name         string            `json:"name"`
	Version      string            `json:"version"`
	Publisher    string            `json:"publisher"`
	Main         string            `json:"main"`
	Engines      map[string]string `json:"engines"`
	Activation   []string          `json:"activationEvents"`
	Scripts      map[string]string `json:"scripts"`
	Deps         map[string]string `json:"dependencies"`
	DevDeps      map[string]string `json:"devDependencies"`
	Capabilities struct {
		Untrusted struct {
			Supported  any      `json:"supported"`
			Restricted []string `json:"restrictedConfigurations"`
		} `json:"untrustedWorkspaces"`
	} `json:"capabilities"`
	Contributes struct {
		Configuration struct {
			Properties map[string]struct {
				Type    string          `json:"type"`
				Default json.RawMessage `json:"default"`
				Enum    []string        `json:"enum"`
				Scope   string          `json:"scope"`
			} `json:"properties"`
		} `json:"configuration"`
		Commands []struct {
			Command string `json:"command"`
			Title   string `json:"title"`
		} `json:"commands"`
		Keybindings []struct {
			Command string `json:"command"`
			Key     string `json:"key"`
		} `json:"keybindings"`
	} `json:"contributes"`
}

// vscodeSource is what the test reads from src/extension.ts.
type vscodeSource struct {
	text      string
	section   string            // SECTION
	commands  map[string]string // COMMANDS: key → palette command id
	server    map[string]string // SERVER_COMMANDS: key → bridge command id
	notify    map[string]string // NOTIFICATIONS: key → the bridge's notification method
	restartOn []string          // SETTINGS: the settings whose change restarts the bridge
	reads     []string          // userSetting(config, '…') keys
}

var (
	vscodeTSSection  = regexp.MustCompile(`export const SECTION = '([^']+)'`)
	vscodeTSSettings = regexp.MustCompile(`export const SETTINGS = \[([^\]]*)\]`)
	vscodeTSEntry    = regexp.MustCompile(`(\w+): '([^']+)'`)
	vscodeTSQuoted   = regexp.MustCompile(`'([^']+)'`)
	vscodeTSUserGet  = regexp.MustCompile(`userSetting<[^>]*>\(config, '([^']+)'`)
)

func vscodeTSObject(t *testing.T, src, name string) map[string]string {
	t.Helper()
	m := regexp.MustCompile(`export const ` + name + ` = \{([^}]*)\}`).FindStringSubmatch(src)
	if m == nil {
		t.Fatalf("extension.ts: no `export const %s = {…}`", name)
	}
	out := map[string]string{}
	for _, e := range vscodeTSEntry.FindAllStringSubmatch(m[1], -1) {
		out[e[1]] = e[2]
	}
	return out
}

func readVSCodeExtension(t *testing.T, dir string) (vscodeManifest, vscodeSource) {
	t.Helper()
	var man vscodeManifest
	raw, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &man); err != nil {
		t.Fatalf("package.json: %v", err)
	}
	text, err := os.ReadFile(filepath.Join(dir, "src", "extension.ts"))
	if err != nil {
		t.Fatal(err)
	}
	src := vscodeSource{text: string(text)}
	m := vscodeTSSection.FindStringSubmatch(src.text)
	if m == nil {
		t.Fatal("extension.ts: no `export const SECTION = '…'`")
	}
	src.section = m[1]
	src.commands = vscodeTSObject(t, src.text, "COMMANDS")
	src.server = vscodeTSObject(t, src.text, "SERVER_COMMANDS")
	src.notify = vscodeTSObject(t, src.text, "NOTIFICATIONS")
	m = vscodeTSSettings.FindStringSubmatch(src.text)
	if m == nil {
		t.Fatal("extension.ts: no `export const SETTINGS = [...]`")
	}
	for _, q := range vscodeTSQuoted.FindAllStringSubmatch(m[1], -1) {
		src.restartOn = append(src.restartOn, q[1])
	}
	for _, g := range vscodeTSUserGet.FindAllStringSubmatch(src.text, -1) {
		src.reads = append(src.reads, g[1])
	}
	return man, src
}

func vscodeSortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func vscodeSortedValues(m map[string]string) []string {
	v := make([]string, 0, len(m))
	for _, s := range m {
		v = append(v, s)
	}
	slices.Sort(v)
	return v
}

// TestVSCodeManifest checks, without npm, that the extension's package.json, its source and the
// bridge agree: the palette commands are the ones extension.ts registers, none is one of the
// server's (vscode-languageclient registers those), the settings are the ones it reads, and the
// server commands it calls are those the bridge advertises in executeCommandProvider.
func TestVSCodeManifest(t *testing.T) {
	dir := filepath.Join(moduleRoot(t), "editors", "vscode")
	man, src := readVSCodeExtension(t, dir)

	if man.Name != "acp-lsp-bridge" || man.Main != "./out/extension.js" || man.Scripts["compile"] != "tsc -p ./" {
		t.Errorf("name %q, main %q, compile %q", man.Name, man.Main, man.Scripts["compile"])
	}
	if !strings.Contains(man.Publisher, "placeholder") {
		t.Errorf("publisher %q should say that it is a placeholder", man.Publisher)
	}
	if man.Engines["vscode"] == "" || len(man.Activation) == 0 {
		t.Errorf("engines %v, activationEvents %v", man.Engines, man.Activation)
	}
	for _, d := range []string{"typescript", "@types/vscode", "@types/node"} {
		if man.DevDeps[d] == "" {
			t.Errorf("devDependencies lack %s", d)
		}
	}
	if !strings.HasPrefix(man.Deps["vscode-languageclient"], "^11.") {
		t.Errorf("dependencies: vscode-languageclient %q, want ^11.x (inline completion is a built-in feature there)", man.Deps["vscode-languageclient"])
	}

	// Palette commands: contributed == COMMANDS == registered, distinct from the server's ids.
	var contributed []string
	for _, c := range man.Contributes.Commands {
		if c.Title == "" {
			t.Errorf("command %s has no title", c.Command)
		}
		contributed = append(contributed, c.Command)
	}
	slices.Sort(contributed)
	if want := vscodeSortedValues(src.commands); !slices.Equal(contributed, want) {
		t.Errorf("package.json commands %v, extension.ts COMMANDS %v", contributed, want)
	}
	for key, id := range src.commands {
		if !strings.Contains(src.text, "registerCommand(COMMANDS."+key+",") {
			t.Errorf("extension.ts does not register COMMANDS.%s (%s)", key, id)
		}
		if slices.Contains(vscodeSortedValues(vscodeServerCommands), id) {
			t.Errorf("palette command %s is a server command: vscode-languageclient registers those, a second registration fails", id)
		}
	}
	keyed := map[string]bool{}
	for _, k := range man.Contributes.Keybindings {
		if !slices.Contains(contributed, k.Command) || k.Key == "" {
			t.Errorf("keybinding %q → %q: not a contributed command, or no key", k.Key, k.Command)
		}
		keyed[k.Command] = true
	}
	for _, key := range []string{"suggestNow", "dismiss"} {
		if !keyed[src.commands[key]] {
			t.Errorf("no keybinding for %s", src.commands[key])
		}
	}

	// Server commands: SERVER_COMMANDS == the lspside constants == what the bridge advertises.
	if !maps.Equal(src.server, vscodeServerCommands) {
		t.Errorf("extension.ts SERVER_COMMANDS %v, lspside %v", src.server, vscodeServerCommands)
	}
	for _, key := range []string{"suggest", "reject", "restart", "signIn"} {
		if !strings.Contains(src.text, "runServerCommand(SERVER_COMMANDS."+key+",") {
			t.Errorf("extension.ts never runs SERVER_COMMANDS.%s", key)
		}
	}
	b := startBridge(t)
	var init struct {
		Capabilities struct {
			ExecuteCommandProvider struct {
				Commands []string `json:"commands"`
			} `json:"executeCommandProvider"`
		} `json:"capabilities"`
	}
	if err := b.Call("initialize", map[string]any{"processId": os.Getpid(), "rootUri": nil, "capabilities": map[string]any{}}, &init); err != nil {
		t.Fatal(err)
	}
	advertised := slices.Clone(init.Capabilities.ExecuteCommandProvider.Commands)
	slices.Sort(advertised)
	if want := vscodeSortedValues(vscodeServerCommands); !slices.Equal(advertised, want) {
		t.Errorf("the bridge advertises %v; lspside's constants are %v", advertised, want)
	}

	// The notifications it sends are the bridge's.
	if want := map[string]string{"didFocus": lspside.NotifyDidFocus, "diagnostics": lspside.NotifyDiagnostics}; !maps.Equal(src.notify, want) {
		t.Errorf("extension.ts NOTIFICATIONS %v, lspside %v", src.notify, want)
	}

	// Settings: contributed == the keys extension.ts reads, plus trace.server, which the client
	// reads itself because its id is SECTION. It reads them through userSetting (the User and
	// Remote settings, never a workspace's), never with config.get, which merges a workspace's.
	var wantSettings []string
	for _, k := range src.reads {
		wantSettings = append(wantSettings, src.section+"."+k)
	}
	wantSettings = append(wantSettings, src.section+".trace.server")
	slices.Sort(wantSettings)
	if got := vscodeSortedKeys(man.Contributes.Configuration.Properties); !slices.Equal(got, wantSettings) {
		t.Errorf("package.json settings %v, read by extension.ts (and the client) %v", got, wantSettings)
	}
	if !strings.Contains(src.text, "new LanguageClient(SECTION,") {
		t.Error("the client's id is not SECTION: acpLspBridge.trace.server would not be read")
	}
	reads := slices.Sorted(slices.Values(src.reads))
	if restart := slices.Sorted(slices.Values(src.restartOn)); !slices.Equal(restart, reads) {
		t.Errorf("SETTINGS (restart on change) %v, settings read %v", restart, reads)
	}
	if strings.Contains(src.text, "config.get") {
		t.Error("extension.ts reads a setting with config.get, which takes a workspace's value too: use userSetting")
	}
	props := man.Contributes.Configuration.Properties
	// The scopes: the bridge's path belongs to each machine (in a remote window, the
	// Remote settings); the rest is window-scoped, so that the User settings apply in local and
	// remote windows alike. machine-overridable would be wrong twice over: a remote window ignores
	// it in the User settings, and a workspace may set it.
	wantScopes := map[string]string{"path": "machine", "agent": "window", "agentName": "window", "logFile": "window", "exclude": "window", "defaultExcludes": "window", "delay": "window", "automatic": "window", "display": "window", "trace.server": "window"}
	for key, scope := range wantScopes {
		if got := props[src.section+"."+key].Scope; got != scope {
			t.Errorf("%s.%s: scope %q, want %q", src.section, key, got, scope)
		}
	}
	// Empty means not set: the bridge bundled with the extension, else the one on PATH.
	if p := props[src.section+".path"]; p.Type != "string" || string(p.Default) != `""` {
		t.Errorf("%s.path: type %q default %s, want \"\"", src.section, p.Type, p.Default)
	}
	if p := props[src.section+".agent"]; p.Type != "array" || string(p.Default) != `[]` {
		t.Errorf("%s.agent: type %q default %s", src.section, p.Type, p.Default)
	}
	// The bridge's short names (--agent NAME), and "" for none: the names the bridge lists when
	// given one it does not know.
	bridgeBin, _ := binaries(t)
	var names []string
	refused, _ := exec.Command(bridgeBin, "--agent", "no-such-name").CombinedOutput()
	if m := regexp.MustCompile(`the names are ([^;]+);`).FindSubmatch(refused); m != nil {
		names = strings.Split(string(m[1]), ", ")
	} else {
		t.Errorf("acp-lsp-bridge --agent no-such-name does not list the names: %s", refused)
	}
	if p := props[src.section+".agentName"]; p.Type != "string" || string(p.Default) != `""` || !slices.Equal(p.Enum, append([]string{""}, names...)) {
		t.Errorf("%s.agentName: type %q default %s enum %q, want a string, \"\", %q", src.section, p.Type, p.Default, p.Enum, append([]string{""}, names...))
	}
	if !strings.Contains(src.text, "args.push('--agent', settings.agentName)") {
		t.Error("extension.ts does not pass acpLspBridge.agentName as --agent NAME")
	}
	if p := props[src.section+".trace.server"]; !slices.Equal(p.Enum, []string{"off", "messages", "verbose"}) {
		t.Errorf("%s.trace.server: enum %v", src.section, p.Enum)
	}
	// In Restricted Mode the executables come from the user's settings only.
	var restricted []string
	for _, k := range src.restartOn {
		restricted = append(restricted, src.section+"."+k)
	}
	if got := slices.Sorted(slices.Values(man.Capabilities.Untrusted.Restricted)); man.Capabilities.Untrusted.Supported != "limited" ||
		!slices.Equal(got, slices.Sorted(slices.Values(restricted))) {
		t.Errorf("untrustedWorkspaces: supported %v, restrictedConfigurations %v, want limited, %v", man.Capabilities.Untrusted.Supported, got, restricted)
	}

	// npm ci needs a lock file that matches package.json.
	var lock struct {
		Packages map[string]struct {
			Deps    map[string]string `json:"dependencies"`
			DevDeps map[string]string `json:"devDependencies"`
		} `json:"packages"`
	}
	raw, err := os.ReadFile(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &lock); err != nil {
		t.Fatalf("package-lock.json: %v", err)
	}
	root := lock.Packages[""]
	if !maps.Equal(root.Deps, man.Deps) || !maps.Equal(root.DevDeps, man.DevDeps) {
		t.Errorf("package-lock.json is stale: it locks %v %v for %v %v; run npm install", root.Deps, root.DevDeps, man.Deps, man.DevDeps)
	}
	ignore, err := os.ReadFile(filepath.Join(dir, ".gitignore"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"node_modules/", "out/", "bin/"} {
		if !slices.Contains(strings.Fields(string(ignore)), p) {
			t.Errorf(".gitignore lacks %s", p)
		}
	}
}

// vscodeBuild copies editors/vscode into a new folder, so that the tree stays clean, and builds it
// as its README says: npm ci, npm run compile. It returns the folder.
func vscodeBuild(t *testing.T, npm string) string {
	t.Helper()
	dir := t.TempDir()
	vscodeCopyTree(t, filepath.Join(moduleRoot(t), "editors", "vscode"), dir)
	for _, args := range [][]string{{"ci", "--no-audit", "--no-fund"}, {"run", "compile"}} {
		start := time.Now()
		runIn(t, dir, 3*time.Minute, npm, args...)
		t.Logf("npm %s: %s", strings.Join(args, " "), time.Since(start).Round(time.Millisecond))
	}
	return dir
}

// runIn runs a command in dir and fails the test with its output when it fails or outlasts limit.
func runIn(t *testing.T, dir string, limit time.Duration, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "npm_config_update_notifier=false")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out.Bytes())
		}
	case <-time.After(limit):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("%s %s: still running after %s\n%s", name, strings.Join(args, " "), limit, out.Bytes())
	}
	return out.Bytes()
}

// vscodeCopyTree copies src to dst, leaving out node_modules, out, bin (a bundled bridge) and
// packages.
func vscodeCopyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if d.IsDir() && (rel == "node_modules" || rel == "out" || rel == "bin") || strings.HasSuffix(rel, ".vsix") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// vscodeHostResult is what editors/vscode/test/host.js prints.
type vscodeHostResult struct {
	Registered []string    `json:"registered"`
	Errors     []string    `json:"errors"`
	Channel    [][2]string `json:"channel"`
	Messages   [][2]string `json:"messages"`
	Ran        []string    `json:"ran"`
	StatusBar  []string    `json:"statusBar"`
	QuickPicks [][]string  `json:"quickPicks"`
}

// vscodeBridgeLog reads a --log-file: one JSON object per line.
func vscodeBridgeLog(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("the bridge's log: %v", err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

func vscodeLogEntries(entries []map[string]any, message string) []map[string]any {
	var out []map[string]any
	for _, e := range entries {
		if e["message"] == message {
			out = append(out, e)
		}
	}
	return out
}

// TestVSCodeExtensionCompiles builds editors/vscode as its README says (npm ci, npm run compile)
// in a copy, so the tree stays clean, and runs the compiled extension in test/host.js, a stand-in
// for VS Code: the real vscode-languageclient starts the real bridge with the scripted agent.
func TestVSCodeExtensionCompiles(t *testing.T) {
	skipIfShort(t, "builds the VS Code extension with npm")
	npm, err := exec.LookPath("npm")
	if err != nil {
		skipWithoutPeer(t, "npm is not on PATH")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		skipWithoutPeer(t, "node is not on PATH")
	}
	_, ext := readVSCodeExtension(t, filepath.Join(moduleRoot(t), "editors", "vscode"))
	dir := vscodeBuild(t, npm)
	js, err := os.ReadFile(filepath.Join(dir, "out", "extension.js"))
	if err != nil {
		t.Fatalf("npm run compile wrote no out/extension.js: %v", err)
	}
	for _, id := range append(vscodeSortedValues(ext.commands), vscodeSortedValues(vscodeServerCommands)...) {
		if !bytes.Contains(js, []byte("'"+id+"'")) {
			t.Errorf("out/extension.js lacks the command id %s", id)
		}
	}

	// The compiled extension, in the stand-in for VS Code, against the real bridge.
	bridge, agent := binaries(t)
	work := t.TempDir()
	rules := filepath.Join(work, "rules.json")
	agentLog := filepath.Join(work, "agent.jsonl")
	log1, log2 := filepath.Join(work, "first.log"), filepath.Join(work, "second.log")
	doc := filepath.Join(work, "a.go")
	text := "package p\n\nfunc f() {\n\tx := \"é\"; fo\n}\n"
	if err := os.WriteFile(doc, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rules, []byte(`[{"when":"\"é\"; fo","find":"fo","replace":"foo(x)"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	agentCmd := []string{agent, "--rules", rules, "--log", agentLog}
	trap := filepath.Join(work, "workspace-chose-this")
	// An installed platform package (bin/acp-lsp-bridge, unpacked without its mode), and a folder
	// of PATH with another bridge: the setting comes before both.
	installed := filepath.Join(work, "installed")
	bundled := filepath.Join(installed, "bin", "acp-lsp-bridge"+exeSuffix)
	vscodeCopyFile(t, bridge, bundled, 0o644)
	pathDir := filepath.Join(work, "path")
	onPath := filepath.Join(pathDir, "acp-lsp-bridge"+exeSuffix)
	vscodeCopyFile(t, bridge, onPath, 0o755)
	scenario := map[string]any{
		"settings":      map[string]any{"acpLspBridge.path": bridge, "acpLspBridge.agent": agentCmd, "acpLspBridge.logFile": log1},
		"extensionPath": installed,
		"env":           map[string]string{"PATH": pathDir},
		// A workspace's settings never choose what runs, nor hand the agent your secrets: the
		// extension says it ignores them.
		"workspaceSettings": map[string]any{"acpLspBridge.path": trap, "acpLspBridge.agent": []string{trap}, "acpLspBridge.defaultExcludes": false},
		// The cursor after "fo" on line 3: utf-16 column 13 ("é" is one unit, two bytes in utf-8).
		"document": map[string]any{"path": doc, "languageId": "go", "text": text, "cursor": map[string]int{"line": 3, "character": 13}},
		"run": []map[string]string{
			{"command": ext.commands["suggestNow"], "waitFor": "`foo(x)`"},
			{"command": ext.commands["dismiss"]},
			{"command": ext.commands["signIn"], "waitFor": "nothing to sign in to"},
			{"command": ext.commands["restartAgent"], "waitFor": "is ready"},
			// The switch: off for every file (the status bar says so), on again from the status
			// item's menu, then off for this file alone.
			{"command": ext.commands["toggleAutomatic"], "waitFor": "suggestions while typing are off for every file (Alt+Enter still asks)", "waitStatus": "$(circle-slash) NES off"},
			{"command": ext.commands["showMenu"], "pick": "Turn suggestions while typing on", "waitFor": "suggestions while typing are on for every file", "waitStatus": "$(check) NES"},
			{"command": ext.commands["toggleAutomaticForFile"], "waitFor": "suggestions while typing are off for a.go", "waitStatus": "$(circle-slash) NES off"},
		},
		// The built-in agent, another log file, the user's own exclusions, a delay, suggestions
		// while typing off: the extension restarts the bridge.
		"changed": map[string]any{"acpLspBridge.path": bridge, "acpLspBridge.agent": []string{}, "acpLspBridge.logFile": log2,
			"acpLspBridge.exclude": []string{"secrets/**", "*.local"}, "acpLspBridge.defaultExcludes": false,
			"acpLspBridge.delay": 250, "acpLspBridge.automatic": false},
	}
	res := runVSCodeHost(t, node, dir, scenario, log1)
	if len(res.Errors) > 0 {
		t.Errorf("errors in the stand-in for VS Code: %q", res.Errors)
	}

	// The command lines: the agent after "--", none for the built-in agent; the exclusions, the
	// delay and the switch as flags, and only the user's.
	var started []string
	for _, c := range res.Channel {
		if m, ok := strings.CutPrefix(c[1], "starting "); ok {
			started = append(started, m)
		}
	}
	want := []string{
		strings.Join(append([]string{bridge, "--log-file", log1, "--"}, agentCmd...), " "),
		strings.Join([]string{bridge, "--log-file", log2, "--exclude", "secrets/**", "--exclude", "*.local", "--no-default-excludes", "--delay", "250", "--automatic=false"}, " "),
	}
	if !slices.Equal(started, want) {
		t.Errorf("bridges started: %q\nwant %q", started, want)
	}
	vscodeSaid(t, res, "using the bridge from your settings: "+bridge+" (acpLspBridge.path)")

	// The status bar item follows acp-lsp-bridge/status; its menu offers what the user needs.
	for _, want := range []string{"$(loading~spin) NES", "$(check) NES", "$(circle-slash) NES off"} {
		if !slices.Contains(res.StatusBar, want) {
			t.Errorf("the status bar never read %q: %q", want, res.StatusBar)
		}
	}
	wantMenu := []string{"Turn suggestions while typing on", "Turn suggestions while typing on for this file", "Restart the agent", "Sign in to the agent", "Show the log", "Restart the bridge"}
	if len(res.QuickPicks) != 1 || !slices.Equal(res.QuickPicks[0], wantMenu) {
		t.Errorf("the status item's menu: %q, want %q", res.QuickPicks, wantMenu)
	}

	// Every palette command once; every server command once per client (two clients), registered
	// by vscode-languageclient from what the bridge advertised. host.js fails a second live
	// registration of an id, as VS Code does.
	count := map[string]int{}
	for _, id := range res.Registered {
		count[id]++
	}
	for _, id := range ext.commands {
		if count[id] != 1 {
			t.Errorf("palette command %s registered %d times", id, count[id])
		}
	}
	for _, id := range vscodeServerCommands {
		if count[id] != 2 {
			t.Errorf("server command %s registered %d times, want once per client (2)", id, count[id])
		}
	}
	if len(count) != len(ext.commands)+len(vscodeServerCommands) {
		t.Errorf("registered: %v", count)
	}

	// What the user saw: the suggestion offered, the answer to sign-in, the restart.
	var shown []string
	for _, m := range res.Messages {
		shown = append(shown, m[1])
	}
	for _, w := range []string{"Next edit: `fo` → `foo(x)` (line 4)?", "nothing to sign in to", "restarting the agent",
		"this workspace's settings set acpLspBridge.path, acpLspBridge.agent, acpLspBridge.defaultExcludes: ignored"} {
		if !slices.ContainsFunc(shown, func(s string) bool { return strings.Contains(s, w) }) {
			t.Errorf("no message with %q: %q", w, shown)
		}
	}

	// The bridge saw a client that advertises inline completion (so no completion items) and
	// offers utf-16 only.
	first := vscodeBridgeLog(t, log1)
	inits := vscodeLogEntries(first, "initialize")
	if len(inits) != 1 || inits[0]["completionItems"] != false || inits[0]["positionEncoding"] != "utf-16" {
		t.Errorf("initialize as the bridge logged it: %v", inits)
	}
	agents := vscodeLogEntries(first, "agent started")
	if len(agents) != 2 || agents[0]["command"] != strings.Join(agentCmd, " ") || agents[1]["command"] != agents[0]["command"] {
		t.Errorf("agents started by the first bridge (want the test agent, twice: start and restart): %v", agents)
	}
	second := vscodeBridgeLog(t, log2)
	if kept := vscodeLogEntries(second, "files kept from the agent"); len(kept) != 1 || fmt.Sprint(kept[0]["globs"]) != "[secrets/** *.local]" {
		t.Errorf("the second bridge keeps back %v, want the user's two globs and no default", kept)
	}
	builtin := vscodeLogEntries(second, "agent started")
	if len(builtin) != 1 || builtin[0]["command"] != bridge+" agent" {
		t.Errorf("agents started by the second bridge (want the built-in one): %v", builtin)
	}

	// The agent got the document, the manual request at the cursor, and the dismissal.
	var suggest, reject []map[string]any
	for _, m := range readAgentLog(t, agentLog) {
		p, _ := m["params"].(map[string]any)
		switch m["method"] {
		case "nes/suggest":
			suggest = append(suggest, p)
		case "nes/reject":
			reject = append(reject, p)
		}
	}
	if len(suggest) != 1 || suggest[0]["triggerKind"] != "manual" || suggest[0]["uri"] != fileURI(doc) {
		t.Fatalf("nes/suggest: %v", suggest)
	}
	if pos, _ := suggest[0]["position"].(map[string]any); pos["line"] != 3.0 || pos["character"] != 13.0 {
		t.Errorf("nes/suggest position %v, want 3:13", pos)
	}
	if len(reject) != 1 || reject[0]["reason"] != "rejected" {
		t.Errorf("nes/reject: %v", reject)
	}

	// acpLspBridge.agentName "copilot": the bridge's short name, passed as --agent copilot, and
	// acpLspBridge.agent, set too, ignored with a word in the output channel. The bridge starts
	// copilot-language-server --acp from PATH with GITHUB_COPILOT_ACP_USE_CLI=0: here a script of
	// that name that records the variable and runs the Copilot stand-in.
	if runtime.GOOS != "windows" {
		copilotDir := filepath.Join(work, "copilot-path")
		copilotLog, copilotAgentLog, useCLI := filepath.Join(work, "copilot.log"), filepath.Join(work, "copilot-agent.jsonl"), filepath.Join(work, "use-cli")
		writeFile(t, filepath.Join(copilotDir, "copilot-language-server"), "#!/bin/sh\nprintf %s \"$GITHUB_COPILOT_ACP_USE_CLI\" > '"+useCLI+"'\nexec '"+agent+"' --copilot --log '"+copilotAgentLog+"' -- \"$@\"\n")
		if err := os.Chmod(filepath.Join(copilotDir, "copilot-language-server"), 0o755); err != nil {
			t.Fatal(err)
		}
		res = runVSCodeHost(t, node, dir, map[string]any{
			"settings": map[string]any{"acpLspBridge.path": bridge, "acpLspBridge.agentName": "copilot", "acpLspBridge.agent": agentCmd, "acpLspBridge.logFile": copilotLog},
			"env":      map[string]string{"PATH": copilotDir, "GH_COPILOT_TOKEN": "test"},
		}, copilotLog)
		if len(res.Errors) > 0 {
			t.Errorf("errors in the stand-in for VS Code, with acpLspBridge.agentName: %q", res.Errors)
		}
		vscodeSaid(t, res, "starting "+bridge+" --log-file "+copilotLog+" --agent copilot")
		vscodeSaid(t, res, `acpLspBridge.agentName ("copilot") names the agent: acpLspBridge.agent (`+strings.Join(agentCmd, " ")+`) is ignored`)
		if a := vscodeLogEntries(vscodeBridgeLog(t, copilotLog), "agent started"); len(a) != 1 || a[0]["command"] != "copilot-language-server --acp" {
			t.Errorf("the agent of acpLspBridge.agentName \"copilot\": %v, want copilot-language-server --acp", a)
		}
		if v, err := os.ReadFile(useCLI); err != nil || string(v) != "0" {
			t.Errorf("GITHUB_COPILOT_ACP_USE_CLI in Copilot's environment: %q %v, want 0", v, err)
		}
		if log := readAgentLog(t, copilotAgentLog); len(log) == 0 || log[0]["method"] != "test/args" || fmt.Sprint(log[0]["params"]) != "[--acp]" {
			t.Errorf("the Copilot stand-in's first record (its arguments): %v", log[:min(1, len(log))])
		}
	}

	// Without the setting: the bundled bridge, before the one on PATH. It is made executable, as
	// VS Code may unpack it without its mode.
	bundledLog := filepath.Join(work, "bundled.log")
	res = runVSCodeHost(t, node, dir, map[string]any{
		"settings": map[string]any{"acpLspBridge.logFile": bundledLog}, "extensionPath": installed, "env": map[string]string{"PATH": pathDir},
	}, bundledLog)
	if len(res.Errors) > 0 {
		t.Errorf("errors in the stand-in for VS Code, with the bundled bridge: %q", res.Errors)
	}
	vscodeSaid(t, res, "using the bridge bundled with the extension: "+bundled+" (acpLspBridge.path is not set)")
	vscodeSaid(t, res, "starting "+bundled+" --log-file "+bundledLog)
	if runtime.GOOS != "windows" {
		vscodeSaid(t, res, "made "+bundled+" executable")
		if fi, err := os.Stat(bundled); err != nil || fi.Mode()&0o111 != 0o111 {
			t.Errorf("the bundled bridge after the extension started it: %v %v, want it executable", fi.Mode(), err)
		}
	}
	if a := vscodeLogEntries(vscodeBridgeLog(t, bundledLog), "agent started"); len(a) != 1 || a[0]["command"] != bundled+" agent" {
		t.Errorf("the agent of the bundled bridge (its built-in one, so its own path): %v", a)
	}

	// A package for another processor (VS Code installs it without complaint): the user is told,
	// rather than the foreign file run (on Linux, spawn hands it to /bin/sh). Only its ELF header
	// is read, so a header is enough.
	if runtime.GOOS == "linux" {
		other, machine := "linux-arm64", elf.EM_AARCH64
		if runtime.GOARCH == "arm64" {
			other, machine = "linux-x64", elf.EM_X86_64
		}
		foreign := filepath.Join(work, "foreign")
		header := make([]byte, 64)
		copy(header, "\x7fELF\x02\x01\x01")
		binary.LittleEndian.PutUint16(header[18:], uint16(machine))
		writeFile(t, filepath.Join(foreign, "bin", "acp-lsp-bridge"), string(header))
		if err := os.Chmod(filepath.Join(foreign, "bin", "acp-lsp-bridge"), 0o755); err != nil {
			t.Fatal(err)
		}
		res = runVSCodeHost(t, node, dir, map[string]any{"settings": map[string]any{}, "extensionPath": foreign, "env": map[string]string{"PATH": pathDir}, "failsToStart": true}, "")
		if len(res.Errors) > 0 {
			t.Errorf("errors in the stand-in for VS Code, with a bridge for another processor: %q", res.Errors)
		}
		here := vscodeTarget(runtime.GOOS, runtime.GOARCH)
		vscodeErrorSays(t, res, `could not start "`+filepath.Join(foreign, "bin", "acp-lsp-bridge")+`" (bundled with the extension): it is built for `+other+`, not for this machine (`+here+`)`,
			"Install the extension's package for this platform (acp-lsp-bridge-"+here+"-….vsix)")
	}

	// Without the setting or a bundled bridge: the one on PATH.
	pathLog := filepath.Join(work, "path.log")
	res = runVSCodeHost(t, node, dir, map[string]any{"settings": map[string]any{"acpLspBridge.logFile": pathLog}, "env": map[string]string{"PATH": pathDir}}, pathLog)
	if len(res.Errors) > 0 {
		t.Errorf("errors in the stand-in for VS Code, with the bridge on PATH: %q", res.Errors)
	}
	vscodeSaid(t, res, "using the bridge on PATH: "+onPath+" (acpLspBridge.path is not set, and no bridge is bundled with the extension)")
	vscodeSaid(t, res, "starting acp-lsp-bridge --log-file "+pathLog)
	if a := vscodeLogEntries(vscodeBridgeLog(t, pathLog), "agent started"); len(a) != 1 || a[0]["command"] != onPath+" agent" {
		t.Errorf("the agent of the bridge on PATH (its built-in one, so its own path): %v", a)
	}

	// No bridge anywhere: the user is told each way to get one, and nothing breaks.
	res = runVSCodeHost(t, node, dir, map[string]any{"settings": map[string]any{}, "env": map[string]string{"PATH": t.TempDir()}, "failsToStart": true}, "")
	if len(res.Errors) > 0 {
		t.Errorf("errors in the stand-in for VS Code, with no bridge: %q", res.Errors)
	}
	vscodeErrorSays(t, res, `could not start "acp-lsp-bridge": it is not on PATH, and no bridge is bundled with the extension (acpLspBridge.path is not set)`,
		"package for this platform (acp-lsp-bridge-"+vscodeTarget(runtime.GOOS, runtime.GOARCH)+"-….vsix)", "put acp-lsp-bridge on PATH", "set acpLspBridge.path to the bridge's absolute path")

	// The setting names a bridge that is not there: the user is told which setting to change, or
	// to remove it for the bundled one, and nothing breaks.
	missing := filepath.Join(work, "no-such-bridge")
	res = runVSCodeHost(t, node, dir, map[string]any{"settings": map[string]any{"acpLspBridge.path": missing}, "extensionPath": installed, "failsToStart": true}, "")
	if len(res.Errors) > 0 {
		t.Errorf("errors in the stand-in for VS Code, with a missing bridge: %q", res.Errors)
	}
	vscodeErrorSays(t, res, `could not start "`+missing+`" (acpLspBridge.path in your settings): there is no such file`,
		"Set acpLspBridge.path to the bridge's absolute path", "or remove it to use the bridge bundled with the extension")
}

// vscodeSaid fails the test unless the extension wrote a line containing text to its output
// channel.
func vscodeSaid(t *testing.T, res vscodeHostResult, text string) {
	t.Helper()
	if !slices.ContainsFunc(res.Channel, func(c [2]string) bool { return strings.Contains(c[1], text) }) {
		t.Errorf("the output channel has no line with %q:\n%q", text, res.Channel)
	}
}

// vscodeErrorSays fails the test unless one error message shown to the user says all of texts.
func vscodeErrorSays(t *testing.T, res vscodeHostResult, texts ...string) {
	t.Helper()
	if !slices.ContainsFunc(res.Messages, func(m [2]string) bool {
		return m[0] == "error" && !slices.ContainsFunc(texts, func(s string) bool { return !strings.Contains(m[1], s) })
	}) {
		t.Errorf("no error message saying all of %q: %q", texts, res.Messages)
	}
}

// runVSCodeHost runs editors/vscode/test/host.js (in dir, the built copy) with scenario and
// returns what it recorded; bridgeLogFile, if set, is shown when it fails.
func runVSCodeHost(t *testing.T, node, dir string, scenario map[string]any, bridgeLogFile string) vscodeHostResult {
	t.Helper()
	file := filepath.Join(t.TempDir(), "scenario.json")
	raw, err := json.Marshal(scenario)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	cmd := exec.CommandContext(ctx, node, filepath.Join(dir, "test", "host.js"), file)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var res vscodeHostResult
	if jerr := json.Unmarshal(out, &res); err != nil || jerr != nil {
		var log []byte
		if bridgeLogFile != "" {
			log, _ = os.ReadFile(bridgeLogFile)
		}
		t.Fatalf("test/host.js: %v %v\nstdout: %s\nstderr: %s\nbridge log: %s", err, jerr, out, stderr.String(), log)
	}
	t.Logf("test/host.js: %s", time.Since(start).Round(time.Millisecond))
	return res
}
