package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestVSCodeReal installs the extension in editors/vscode, packaged for this platform as `make
// vsix` packages it (the bridge inside), into a real VS Code (code-server, VS Code 1.100 in the
// browser) and uses it through headless Chromium the way a user does: keys, the command palette,
// the buttons of notifications. It checks what the user sees (the notifications, the ghost text,
// the editor's lines, the squiggles, the output channel) and what the scripted agent heard. One VS
// Code session runs every check, in this order:
//
//   - The settings go where the README says: the agent and the log file in the User settings, and
//     a workspace whose .vscode/settings.json names other programs for the bridge, the agent and
//     the log file. acpLspBridge.path is not set, and no acp-lsp-bridge is on PATH.
//   - The bridge bundled with the extension starts (the output channel says so, and the bridge's
//     log has the version it was stamped with). The workspace's settings are ignored, and the
//     user is told so.
//   - Ghost text from the agent as the user types, Tab accepts it (the agent hears nes/accept);
//     Shift+Alt+Enter and the palette's Dismiss (nes/reject "rejected"); Suggest the next edit now
//     and the notification's Apply; Sign in; Restart the agent.
//   - Focus and diagnostics: switching files sends acp-lsp-bridge/didFocus with the visible lines,
//     and the JSON language service's error for a broken JSON file reaches nes/suggest's context
//     until the file is fixed.
//   - A bridge of the user's own, in the Remote settings (code-server is a remote window): first a
//     path that is not there, and a notification names it and where to set it; its button opens
//     the Remote settings, where the test pastes the right path and saves; that bridge starts, and
//     the output channel says it is the one from the settings.
//   - Settings in a remote window: an unrelated User setting is saved, Restart the bridge, and the ghost text is back.
//
// Screenshots of a failed step are kept (their folder is logged).
func TestVSCodeReal(t *testing.T) {
	skipIfShort(t, "a real VS Code in Chromium (about a minute)")
	codeServer, chromium, tools := os.Getenv("CODE_SERVER"), os.Getenv("CHROMIUM"), os.Getenv("VSCODE_TOOLS")
	if codeServer == "" || chromium == "" || tools == "" {
		skipWithoutPeer(t, `CODE_SERVER, CHROMIUM and VSCODE_TOOLS are not set (eval "$(PEERS_VSCODE=1 ../shared/tools/install-test-peers.sh)")`)
	}
	vscodeVSIXPeers(t)
	node, err := exec.LookPath("node")
	if err != nil {
		skipWithoutPeer(t, "node is not on PATH")
	}
	target := vscodeTarget(runtime.GOOS, runtime.GOARCH)
	if target == "" {
		t.Fatalf("no VS Code package is made for %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	begin := time.Now()
	phase := begin
	lap := func(what string) {
		t.Logf("%s: %s", what, time.Since(phase).Round(time.Millisecond))
		phase = time.Now()
	}

	bridge, agent := binaries(t)
	work := t.TempDir()
	// This platform's package, as `make vsix` makes it; the version as `git describe` says it in a
	// checkout with changes, which is not semver: the extension's version is package.json's with it
	// appended.
	const version = "0a1b2c3-dirty"
	man, _ := readVSCodeExtension(t, filepath.Join(moduleRoot(t), "editors", "vscode"))
	extVersion := man.Version + "-dev-" + version
	pkg := t.TempDir()
	vscodeVSIX(t, version, filepath.Join(pkg, "bin"), filepath.Join(pkg, "vscode"), target)
	vsix := filepath.Join(pkg, "vscode", "acp-lsp-bridge-"+target+"-"+extVersion+".vsix")
	lap("tools/vsix.sh: the bridge, npm ci, compile, vsce package")

	// The workspace: a Go file for the ghost text, a broken JSON file for the diagnostics, and
	// settings that try to choose what runs.
	ws := filepath.Join(work, "ws")
	goText := "package p\n\nfunc f() {\n\tx := \"é\"; fo\n\ty := bar\n\tz := \"日本\"; qu\n\tw := \"中文\"; pri\n\tv := \"한국\"; ap\n}\n"
	writeFile(t, filepath.Join(ws, "a.go"), goText)
	writeFile(t, filepath.Join(ws, "b.json"), "{\n  \"name\": fo\n}\n")
	trap := filepath.Join(work, "trap.sh")
	trapRan := filepath.Join(work, "trap-ran")
	trapLog := filepath.Join(work, "trap.log")
	writeFile(t, trap, "#!/bin/sh\necho \"$0 $*\" >> "+trapRan+"\nexit 1\n")
	if err := os.Chmod(trap, 0o755); err != nil {
		t.Fatal(err)
	}
	writeJSON(t, filepath.Join(ws, ".vscode", "settings.json"), map[string]any{
		"acpLspBridge.path": trap, "acpLspBridge.agent": []string{trap}, "acpLspBridge.logFile": trapLog,
	})

	// The User settings, as the README says: the agent and the log file. Nothing in VS Code may
	// try the (closed) network or open a welcome page.
	ud := filepath.Join(work, "ud")
	rules := filepath.Join(work, "rules.json")
	agentLog := filepath.Join(work, "agent.jsonl")
	bridgeLog := filepath.Join(work, "bridge.log")
	writeJSON(t, rules, []map[string]any{
		{"when": `"é"; fo`, "find": "fo", "replace": "foo(x)"},
		{"when": "y := bar", "find": "bar", "replace": "bar()"},
		{"when": `"日本"; qu`, "find": "qu", "replace": "quux(z)"},
		// Two alternatives, best first.
		{"when": `"中文"; pri`, "find": "pri", "replace": "println(w, 1)"},
		{"when": `"中文"; pri`, "find": "pri", "replace": "print(w)", "alternative": true},
		{"when": `"한국"; ap`, "find": "ap", "replace": "append(v)"},
	})
	agentCmd := []string{agent, "--rules", rules, "--log", agentLog, "--focus", "--context", `{"diagnostics":{}}`}
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for _, f := range []string{bridgeLog, agentLog} {
			b, _ := os.ReadFile(f)
			if len(b) > 20000 {
				b = b[len(b)-20000:]
			}
			t.Logf("%s (its end):\n%s", filepath.Base(f), b)
		}
	})
	userSettings := map[string]any{
		"acpLspBridge.agent":               agentCmd,
		"acpLspBridge.logFile":             bridgeLog,
		"telemetry.telemetryLevel":         "off",
		"update.mode":                      "none",
		"extensions.autoCheckUpdates":      false,
		"extensions.autoUpdate":            false,
		"extensions.ignoreRecommendations": true,
		"workbench.startupEditor":          "none",
		"workbench.enableExperiments":      false,
		"workbench.tips.enabled":           false,
		"chat.commandCenter.enabled":       false,
		"git.enabled":                      false,
	}
	writeJSON(t, filepath.Join(ud, "User", "settings.json"), userSettings)

	cs := startCodeServer(t, codeServer, work, ud, vsix, ws)
	lap("code-server installs the extension and listens")
	installed, _ := filepath.Glob(filepath.Join(work, "extensions", "*", "bin", "acp-lsp-bridge"))
	if len(installed) != 1 || !strings.Contains(installed[0], "acp-lsp-bridge-"+extVersion) {
		t.Fatalf("the installed extension's bridge: %q, want one, in the folder of version %s", installed, extVersion)
	}
	if fi, err := os.Stat(installed[0]); err == nil {
		t.Logf("the bundled bridge as VS Code unpacked it: %s %v", installed[0], fi.Mode())
	}
	shots := keptDir(t, "acp-lsp-bridge-vscode-shots-")
	d := startVSCodeDriver(t, node, cs.url+"/?folder="+ws, filepath.Join(work, "chromium"), shots)
	// agentHeard waits until the agent's log satisfies cond; should the workspace's settings have
	// chosen what runs, it says so at once.
	agentHeard := func(what string, cond func([]map[string]any) bool) []map[string]any {
		t.Helper()
		return waitCond(t, what, func() ([]map[string]any, bool) {
			if b, err := os.ReadFile(trapRan); err == nil {
				t.Fatalf("the workspace's settings chose what ran: %s", b)
			}
			msgs := tolerantAgentLog(agentLog)
			return msgs, cond(msgs)
		})
	}
	method := func(m string) func([]map[string]any) []map[string]any {
		return func(msgs []map[string]any) []map[string]any {
			var out []map[string]any
			for _, msg := range msgs {
				if msg["method"] == m {
					p, _ := msg["params"].(map[string]any)
					out = append(out, p)
				}
			}
			return out
		}
	}
	accepts, rejects, suggests, inits := method("nes/accept"), method("nes/reject"), method("nes/suggest"), method("initialize")
	starts, focuses := method("nes/start"), method("document/didFocus")
	// countWith counts the params whose key holds value.
	countWith := func(ps []map[string]any, key, value string) int {
		n := 0
		for _, p := range ps {
			if p[key] == value {
				n++
			}
		}
		return n
	}
	rejected := func(msgs []map[string]any) int { return countWith(rejects(msgs), "reason", "rejected") }

	d.do(map[string]any{"op": "load"})
	lap("the workbench loads")

	// No bridge path set: the bundled bridge starts, and the output channel says why it is that one.
	// The workspace's settings did not choose the bridge (machine scope: VS Code drops it), and its
	// agent and log file are refused with a warning.
	var toast struct {
		Message string   `json:"message"`
		Buttons []string `json:"buttons"`
	}
	d.decode(map[string]any{"op": "toast", "contains": "this workspace's settings"}, &toast)
	if want := "set acpLspBridge.agent, acpLspBridge.logFile: ignored"; !strings.Contains(toast.Message, want) {
		t.Errorf("the warning %q does not say %q", toast.Message, want)
	}
	agentHeard("nes/start from the bundled bridge", func(m []map[string]any) bool { return len(starts(m)) == 1 })
	outputSays(t, work, "using the bridge bundled with the extension: "+installed[0]+" (acpLspBridge.path is not set)")
	noStartErrors := func(when string) {
		t.Helper()
		var shown []struct {
			Message string `json:"message"`
		}
		d.decode(map[string]any{"op": "toasts"}, &shown)
		for _, s := range shown {
			if strings.Contains(s.Message, "could not start") {
				t.Errorf("%s: %q", when, s.Message)
			}
		}
	}
	// lightbulb waits for the code action light bulb at the cursor, at the end of a line. VS Code
	// asks for code actions once the cursor settles; a window that has just opened the file
	// sometimes drops that first answer (the bridge answered it: the agent's suggestion is live)
	// and shows no bulb until the cursor moves, as a user then moves it.
	lightbulb := func() {
		t.Helper()
		if _, ok := d.try(map[string]any{"op": "lightbulb", "timeoutMs": 10000}); !ok {
			t.Log("no light bulb 10 s after the cursor settled; moving the cursor again")
			d.do(map[string]any{"op": "press", "keys": []string{"Home", "End"}})
			d.do(map[string]any{"op": "lightbulb"})
		}
	}
	noStartErrors("with the bundled bridge")
	d.do(map[string]any{"op": "clearToasts"})
	lap("the bundled bridge and the agent start")

	// Ghost text, accepted with Tab.
	d.do(map[string]any{"op": "open", "name": "a.go"})
	agentHeard("document/didFocus for a.go with the visible lines", func(m []map[string]any) bool {
		return slices.ContainsFunc(focuses(m), func(p map[string]any) bool { return focusOf(p, "a.go", 0, 6) })
	})
	d.do(map[string]any{"op": "goto", "line": 4})
	d.do(map[string]any{"op": "press", "keys": []string{"End"}})
	// The light bulb: the agent's suggestion as a code action, and a sign that the client's
	// providers reached the editor.
	lightbulb()
	d.do(map[string]any{"op": "press", "keys": []string{"Backspace"}})
	d.do(map[string]any{"op": "type", "text": "o"})
	d.do(map[string]any{"op": "ghost", "text": "o(x)"})
	d.do(map[string]any{"op": "press", "keys": []string{"Tab"}})
	d.do(map[string]any{"op": "waitLine", "line": 4, "text": `x := "é"; foo(x)`})
	agentHeard("nes/accept after Tab", func(m []map[string]any) bool { return len(accepts(m)) == 1 })
	d.do(map[string]any{"op": "press", "keys": []string{"Control+s"}})
	waitCond(t, "a.go saved with the accepted text", func() (string, bool) {
		b, _ := os.ReadFile(filepath.Join(ws, "a.go"))
		return string(b), strings.Contains(string(b), "\tx := \"é\"; foo(x)\n")
	})
	lap("ghost text, Tab")

	// Dismiss, by its key and from the palette.
	d.do(map[string]any{"op": "goto", "line": 6})
	d.do(map[string]any{"op": "press", "keys": []string{"End", "Backspace"}})
	d.do(map[string]any{"op": "type", "text": "u"})
	d.do(map[string]any{"op": "ghost", "text": "ux(z)"})
	d.do(map[string]any{"op": "press", "keys": []string{"Shift+Alt+Enter"}})
	d.do(map[string]any{"op": "noGhost"})
	agentHeard(`nes/reject "rejected" after Shift+Alt+Enter`, func(m []map[string]any) bool { return rejected(m) == 1 })
	d.do(map[string]any{"op": "press", "keys": []string{"Backspace"}})
	d.do(map[string]any{"op": "type", "text": "u"})
	d.do(map[string]any{"op": "ghost", "text": "ux(z)"})
	d.do(map[string]any{"op": "palette", "title": "acp-lsp-bridge: Dismiss the suggestions of this file"})
	agentHeard(`nes/reject "rejected" after the palette's Dismiss`, func(m []map[string]any) bool { return rejected(m) == 2 })
	lap("dismiss")

	// Suggest the next edit now, then Apply in the notification.
	d.do(map[string]any{"op": "goto", "line": 5})
	d.do(map[string]any{"op": "press", "keys": []string{"End"}})
	d.do(map[string]any{"op": "palette", "title": "acp-lsp-bridge: Suggest the next edit now"})
	d.decode(map[string]any{"op": "toast", "contains": "Next edit"}, &toast)
	if toast.Message != "Next edit: `bar` → `bar()` (line 5)?" || !slices.Equal(toast.Buttons, []string{"Apply", "Dismiss"}) {
		t.Errorf("the question after Suggest now: %q %q", toast.Message, toast.Buttons)
	}
	msgs := agentHeard("a manual nes/suggest", func(m []map[string]any) bool {
		return slices.ContainsFunc(suggests(m), func(p map[string]any) bool { return p["triggerKind"] == "manual" })
	})
	manual := suggests(msgs)[slices.IndexFunc(suggests(msgs), func(p map[string]any) bool { return p["triggerKind"] == "manual" })]
	if pos, _ := manual["position"].(map[string]any); manual["uri"] != fileURI(filepath.Join(ws, "a.go")) || pos["line"] != 4.0 || pos["character"] != 9.0 {
		t.Errorf("the manual nes/suggest: %v, want a.go at 4:9", manual)
	}
	d.do(map[string]any{"op": "click", "contains": "Next edit", "button": "Apply"})
	d.do(map[string]any{"op": "waitLine", "line": 5, "text": "y := bar()"})
	agentHeard("nes/accept after Apply", func(m []map[string]any) bool { return len(accepts(m)) == 2 })
	lap("suggest now, Apply")

	// Sign in, and Restart the agent.
	d.do(map[string]any{"op": "clearToasts"})
	d.do(map[string]any{"op": "palette", "title": "acp-lsp-bridge: Sign in to the agent"})
	d.do(map[string]any{"op": "toast", "contains": "there is nothing to sign in to"})
	d.do(map[string]any{"op": "clearToasts"})
	d.do(map[string]any{"op": "palette", "title": "acp-lsp-bridge: Restart the agent"})
	d.do(map[string]any{"op": "toast", "contains": "restarting the agent"})
	agentHeard("a second agent process's nes/start", func(m []map[string]any) bool { return len(inits(m)) == 2 && len(starts(m)) == 2 })
	d.do(map[string]any{"op": "clearToasts"})
	lap("sign in, restart the agent")

	// The status bar item shows the bridge's state; a click opens its menu, which turns
	// suggestions while typing off (the item says so, and typing asks the agent nothing) and on.
	d.do(map[string]any{"op": "statusItem", "contains": "NES", "icon": "check"})
	d.do(map[string]any{"op": "clickStatus", "contains": "NES"})
	var menu []string
	d.decode(map[string]any{"op": "pick", "label": "Turn suggestions while typing off"}, &menu)
	if want := []string{"Turn suggestions while typing off", "Turn suggestions while typing off for this file", "Restart the agent", "Sign in to the agent", "Show the log", "Restart the bridge"}; !slices.Equal(menu, want) {
		t.Errorf("the status item's menu: %q, want %q", menu, want)
	}
	d.do(map[string]any{"op": "statusItem", "contains": "NES off", "icon": "circle-slash"})
	automatic := func(msgs []map[string]any) int { return countWith(suggests(msgs), "triggerKind", "automatic") }
	automaticBefore := automatic(tolerantAgentLog(agentLog))
	d.do(map[string]any{"op": "goto", "line": 6})
	d.do(map[string]any{"op": "press", "keys": []string{"End"}})
	d.do(map[string]any{"op": "type", "text": "w"})
	time.Sleep(2 * time.Second) // VS Code asks while typing within a moment; the bridge answers empty at once
	d.do(map[string]any{"op": "press", "keys": []string{"Backspace"}})
	if after := automatic(tolerantAgentLog(agentLog)); after != automaticBefore {
		t.Errorf("with suggestions while typing off, the agent was asked %d times while typing", after-automaticBefore)
	}
	d.do(map[string]any{"op": "clickStatus", "contains": "NES"})
	d.do(map[string]any{"op": "pick", "label": "Turn suggestions while typing on"})
	d.do(map[string]any{"op": "statusItem", "contains": "NES", "icon": "check"})
	lap("the status item and its menu")

	// Alternatives: VS Code shows the agent's first, Alt+] the next, Alt+[ the previous. Then its
	// own Accept Word (Ctrl+Right) takes a word, the rest stays shown, and Tab takes the rest: the
	// agent hears nes/accept once, when the whole suggestion is in.
	d.do(map[string]any{"op": "goto", "line": 7})
	d.do(map[string]any{"op": "press", "keys": []string{"End", "Backspace"}})
	d.do(map[string]any{"op": "type", "text": "i"})
	d.do(map[string]any{"op": "ghost", "text": "ntln(w, 1)"})
	d.do(map[string]any{"op": "press", "keys": []string{"Alt+BracketRight"}})
	d.do(map[string]any{"op": "ghost", "text": "nt(w)"})
	d.do(map[string]any{"op": "press", "keys": []string{"Alt+BracketLeft"}})
	d.do(map[string]any{"op": "ghost", "text": "ntln(w, 1)"})
	acceptedBefore := len(accepts(tolerantAgentLog(agentLog)))
	d.do(map[string]any{"op": "press", "keys": []string{"Control+ArrowRight"}})
	// The word is in the file (the agent's copy gets it), the rest still shown as ghost text (the
	// rendered line holds both).
	d.do(map[string]any{"op": "ghost", "text": "(w, 1)"})
	agentHeard("the word Accept Word took", func(m []map[string]any) bool {
		for _, p := range method("document/didChange")(m) {
			if strings.Contains(fmt.Sprint(p["contentChanges"]), "text:ntln]") {
				return true
			}
		}
		return false
	})
	if n := len(accepts(tolerantAgentLog(agentLog))); n != acceptedBefore {
		t.Errorf("nes/accept after Accept Word took a part: %d", n-acceptedBefore)
	}
	d.do(map[string]any{"op": "press", "keys": []string{"Tab"}})
	d.do(map[string]any{"op": "noGhost"})
	d.do(map[string]any{"op": "waitLine", "line": 7, "text": `w := "中文"; println(w, 1)`})
	agentHeard("nes/accept once the whole suggestion was in", func(m []map[string]any) bool { return len(accepts(m)) == acceptedBefore+1 })
	lap("alternatives, Accept Word")

	// Focus and diagnostics: the JSON language service's error reaches the agent's context.
	d.do(map[string]any{"op": "open", "name": "b.json"})
	agentHeard("document/didFocus for b.json with the visible lines", func(m []map[string]any) bool {
		return slices.ContainsFunc(focuses(m), func(p map[string]any) bool { return focusOf(p, "b.json", 0, 3) })
	})
	d.do(map[string]any{"op": "squiggle"})
	d.do(map[string]any{"op": "goto", "line": 1})
	manualFor := func(name string) func([]map[string]any) []map[string]any {
		return func(m []map[string]any) []map[string]any {
			var out []map[string]any
			for _, p := range suggests(m) {
				if p["triggerKind"] == "manual" && strings.HasSuffix(fmt.Sprint(p["uri"]), "/"+name) {
					out = append(out, p)
				}
			}
			return out
		}
	}
	d.do(map[string]any{"op": "palette", "title": "acp-lsp-bridge: Suggest the next edit now"})
	msgs = agentHeard("a manual nes/suggest for b.json", func(m []map[string]any) bool { return len(manualFor("b.json")(m)) == 1 })
	diags := diagnosticsOf(manualFor("b.json")(msgs)[0])
	if len(diags) != 1 || diags[0].Range.Start.Line != 1 || diags[0].Severity != "error" || diags[0].Message == "" {
		t.Errorf("the diagnostics in nes/suggest's context: %+v, want the JSON error on line 1", diags)
	} else {
		t.Logf("the JSON language service's diagnostic, as the agent got it: %+v", diags[0])
	}
	d.do(map[string]any{"op": "goto", "line": 2})
	d.do(map[string]any{"op": "press", "keys": []string{"End", "Backspace", "Backspace"}})
	d.do(map[string]any{"op": "type", "text": "1"})
	d.do(map[string]any{"op": "noSquiggle"})
	d.do(map[string]any{"op": "palette", "title": "acp-lsp-bridge: Suggest the next edit now"})
	msgs = agentHeard("a second manual nes/suggest for b.json", func(m []map[string]any) bool { return len(manualFor("b.json")(m)) == 2 })
	if diags := diagnosticsOf(manualFor("b.json")(msgs)[1]); len(diags) != 0 {
		t.Errorf("the diagnostics in nes/suggest's context after the fix: %+v, want none", diags)
	}
	before := len(focuses(msgs))
	d.do(map[string]any{"op": "open", "name": "a.go"})
	agentHeard("document/didFocus for a.go again", func(m []map[string]any) bool {
		f := focuses(m)
		return len(f) > before && slices.ContainsFunc(f[before:], func(p map[string]any) bool { return focusOf(p, "a.go", 0, 6) })
	})
	d.do(map[string]any{"op": "clearToasts"})
	lap("focus and diagnostics")

	// A bridge of the user's own, set where the README says: the Remote settings. First a path that
	// is not there: the user is told which path was tried and where to set it, and the button opens
	// that file; then the right path, and that bridge starts.
	remoteSettings := filepath.Join(ud, "Machine", "settings.json")
	missing := filepath.Join(work, "no-such-bridge")
	d.do(map[string]any{"op": "palette", "title": "Preferences: Open Remote Settings (JSON)", "prefix": true})
	d.do(map[string]any{"op": "editor", "path": remoteSettings})
	d.do(map[string]any{"op": "replaceAll", "text": mustJSON(t, map[string]string{"acpLspBridge.path": missing})})
	d.do(map[string]any{"op": "press", "keys": []string{"Control+s"}})
	d.decode(map[string]any{"op": "toast", "contains": "could not start"}, &toast)
	for _, w := range []string{`could not start "` + missing + `" (acpLspBridge.path in your settings): there is no such file`,
		"Remote settings (Preferences: Open Remote Settings (JSON))", "or remove it to use the bridge bundled with the extension"} {
		if !strings.Contains(toast.Message, w) {
			t.Errorf("the notification %q does not say %q", toast.Message, w)
		}
	}
	if !slices.Equal(toast.Buttons, []string{"Open Remote Settings (JSON)"}) {
		t.Errorf("the notification's buttons: %q", toast.Buttons)
	}
	d.do(map[string]any{"op": "open", "name": "a.go"})
	d.do(map[string]any{"op": "click", "contains": "could not start", "button": "Open Remote Settings (JSON)"})
	d.do(map[string]any{"op": "editor", "path": remoteSettings})
	d.do(map[string]any{"op": "replaceAll", "text": mustJSON(t, map[string]string{"acpLspBridge.path": bridge})})
	d.do(map[string]any{"op": "press", "keys": []string{"Control+s"}})
	waitCond(t, "the Remote settings file to name the bridge", func() (string, bool) {
		var s map[string]any
		b, _ := os.ReadFile(remoteSettings)
		return string(b), json.Unmarshal(b, &s) == nil && s["acpLspBridge.path"] == bridge
	})
	agentHeard("nes/start from the bridge in the Remote settings", func(m []map[string]any) bool { return len(starts(m)) == 3 })
	outputSays(t, work, "using the bridge from your settings: "+bridge+" (acpLspBridge.path)")
	d.do(map[string]any{"op": "clearToasts"})
	lap("a bridge of the user's own: a wrong path, the notification's button, the right path")

	// Settings in a remote window: save an unrelated User setting, restart the bridge, and the ghost text is back.
	d.do(map[string]any{"op": "palette", "title": "Preferences: Open User Settings (JSON)"})
	userFile := filepath.Join(ud, "User", "settings.json")
	d.do(map[string]any{"op": "editor", "path": userFile})
	userSettings["editor.fontSize"] = 15
	d.do(map[string]any{"op": "replaceAll", "text": mustJSON(t, userSettings)})
	d.do(map[string]any{"op": "press", "keys": []string{"Control+s"}})
	waitCond(t, "the User settings saved with editor.fontSize", func() (string, bool) {
		var s map[string]any
		b, _ := os.ReadFile(userFile)
		return string(b), json.Unmarshal(b, &s) == nil && s["editor.fontSize"] == 15.0
	})
	d.do(map[string]any{"op": "palette", "title": "acp-lsp-bridge: Restart the bridge"})
	agentHeard("the agent of a third bridge", func(m []map[string]any) bool { return len(inits(m)) == 4 && len(starts(m)) == 4 })
	noStartErrors("after saving the User settings and restarting")
	d.do(map[string]any{"op": "open", "name": "a.go"})
	d.do(map[string]any{"op": "goto", "line": 6})
	d.do(map[string]any{"op": "press", "keys": []string{"End"}})
	lightbulb()
	d.do(map[string]any{"op": "press", "keys": []string{"Backspace"}})
	d.do(map[string]any{"op": "type", "text": "u"})
	d.do(map[string]any{"op": "ghost", "text": "ux(z)"})
	d.do(map[string]any{"op": "press", "keys": []string{"Tab"}})
	d.do(map[string]any{"op": "waitLine", "line": 6, "text": `z := "日本"; quux(z)`})
	agentHeard("nes/accept from the restarted bridge", func(m []map[string]any) bool { return len(accepts(m)) == 4 })
	lap("remote-window settings: a User setting saved, the bridge restarted, ghost text again")

	// What ran: three bridges (the missing one never started), the bundled one (stamped with the
	// package's version) then the tests' own twice, each with the User settings' agent and log
	// file; nothing the workspace named.
	var bridgeVersions, agentCmds []string
	for _, e := range vscodeBridgeLog(t, bridgeLog) {
		switch e["message"] {
		case "acp-lsp-bridge starting":
			bridgeVersions = append(bridgeVersions, fmt.Sprint(e["version"]))
		case "agent started":
			agentCmds = append(agentCmds, fmt.Sprint(e["command"]))
		}
	}
	if len(bridgeVersions) != 3 || bridgeVersions[0] != version || bridgeVersions[1] == version || bridgeVersions[2] == version {
		t.Errorf("the versions of the bridges started: %q, want %q (bundled) then the tests' own twice", bridgeVersions, version)
	}
	if len(agentCmds) != 4 || slices.ContainsFunc(agentCmds, func(c string) bool { return c != strings.Join(agentCmd, " ") }) {
		t.Errorf("agents started: %q, want 4 times %q", agentCmds, strings.Join(agentCmd, " "))
	}
	for _, f := range []string{trapRan, trapLog} {
		if b, err := os.ReadFile(f); err == nil {
			t.Errorf("the workspace's settings chose what ran: %s: %s", f, b)
		}
	}

	// The quieter display: with acpLspBridge.display "mark" (the bridge restarts), typing shows
	// no ghost text but the hint "⇥ next edit, here" at the end of the line; Alt+N (Show the
	// marked suggestion) shows it as ghost text, and Tab takes it.
	d.do(map[string]any{"op": "palette", "title": "Preferences: Open User Settings (JSON)"})
	d.do(map[string]any{"op": "editor", "path": userFile})
	userSettings["acpLspBridge.display"] = "mark"
	d.do(map[string]any{"op": "replaceAll", "text": mustJSON(t, userSettings)})
	d.do(map[string]any{"op": "press", "keys": []string{"Control+s"}})
	agentHeard("the agent of the bridge restarted for the display", func(m []map[string]any) bool { return len(inits(m)) == 5 && len(starts(m)) == 5 })
	d.do(map[string]any{"op": "open", "name": "a.go"})
	d.do(map[string]any{"op": "goto", "line": 8})
	d.do(map[string]any{"op": "press", "keys": []string{"End", "Backspace"}})
	d.do(map[string]any{"op": "type", "text": "p"})
	d.do(map[string]any{"op": "hint", "line": 8, "text": "⇥ next edit, here"})
	d.do(map[string]any{"op": "noGhost"})
	acceptedBefore = len(accepts(tolerantAgentLog(agentLog)))
	d.do(map[string]any{"op": "press", "keys": []string{"Alt+n"}}) // Show the marked suggestion
	d.do(map[string]any{"op": "ghost", "text": "pend(v)"})
	d.do(map[string]any{"op": "press", "keys": []string{"Tab"}})
	d.do(map[string]any{"op": "noGhost"})
	d.do(map[string]any{"op": "waitLine", "line": 8, "text": `v := "한국"; append(v)`})
	agentHeard("nes/accept of the revealed suggestion", func(m []map[string]any) bool { return len(accepts(m)) == acceptedBefore+1 })
	lap("the quieter display: a hint, then the suggestion on the command")
	d.quit()
	cs.stop()
	waitCond(t, "no agent of this test left running", func() ([]string, bool) {
		pids := processesWith(rules)
		return pids, len(pids) == 0
	})
	t.Logf("TestVSCodeReal: %s in all", time.Since(begin).Round(time.Millisecond))
}

// focusOf reports whether p (document/didFocus params) is for the file name with visible lines
// from first to at least last: acp-lsp-bridge/didFocus from the extension, not a focus the bridge
// inferred from a request (whose visible range is the cursor's point).
func focusOf(p map[string]any, name string, first, last int) bool {
	var f struct {
		URI          string `json:"uri"`
		VisibleRange struct {
			Start struct{ Line int } `json:"start"`
			End   struct{ Line int } `json:"end"`
		} `json:"visibleRange"`
	}
	b, _ := json.Marshal(p)
	return json.Unmarshal(b, &f) == nil && strings.HasSuffix(f.URI, "/"+name) &&
		f.VisibleRange.Start.Line == first && f.VisibleRange.End.Line >= last
}

type vscodeDiagnostic struct {
	Message  string `json:"message"`
	Severity string `json:"severity"`
	Range    struct {
		Start struct{ Line, Character int } `json:"start"`
		End   struct{ Line, Character int } `json:"end"`
	} `json:"range"`
}

// diagnosticsOf reads the diagnostics of a nes/suggest's context.
func diagnosticsOf(p map[string]any) []vscodeDiagnostic {
	var s struct {
		Context struct {
			Diagnostics []vscodeDiagnostic `json:"diagnostics"`
		} `json:"context"`
	}
	b, _ := json.Marshal(p)
	_ = json.Unmarshal(b, &s)
	return s.Context.Diagnostics
}

// outputSays waits until the extension's output channel (its log file, as VS Code writes it under
// the session's logs) has a line containing text.
func outputSays(t *testing.T, work, text string) {
	t.Helper()
	waitCond(t, "the acp-lsp-bridge output channel to say "+text, func() (map[string]string, bool) {
		seen, found := map[string]string{}, false
		_ = filepath.WalkDir(work, func(path string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && d.Name() == "acp-lsp-bridge.log" {
				b, _ := os.ReadFile(path)
				seen[path] = tail(b, 2000)
				found = found || strings.Contains(string(b), text)
			}
			return nil
		})
		return seen, found
	})
}

type codeServerProc struct {
	t    *testing.T
	cmd  *exec.Cmd
	url  string
	log  string
	done chan struct{}
}

// startCodeServer installs vsix and starts code-server on a free loopback port, without
// authentication, with its own user data, extensions, config and temporary folders, and with no
// acp-lsp-bridge on PATH (the extension must use the bridge it bundles).
func startCodeServer(t *testing.T, codeServer, work, ud, vsix, folder string) *codeServerProc {
	t.Helper()
	exts := filepath.Join(work, "extensions")
	tmp := filepath.Join(work, "tmp")
	xdg := filepath.Join(work, "xdg")
	config := filepath.Join(work, "code-server.yaml")
	for _, d := range []string{exts, tmp, xdg} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, config, "auth: none\n")
	var path []string
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(dir, "acp-lsp-bridge")); err != nil {
			path = append(path, dir)
		}
	}
	env := append(os.Environ(), "PATH="+strings.Join(path, string(os.PathListSeparator)), "TMPDIR="+tmp,
		"XDG_CONFIG_HOME="+filepath.Join(xdg, "config"), "XDG_DATA_HOME="+filepath.Join(xdg, "data"), "XDG_CACHE_HOME="+filepath.Join(xdg, "cache"))
	common := []string{"--config", config, "--user-data-dir", ud, "--extensions-dir", exts}

	install := exec.Command(codeServer, append(common, "--install-extension", vsix)...)
	install.Env = env
	if out, err := install.CombinedOutput(); err != nil || !strings.Contains(string(out), "successfully installed") {
		t.Fatalf("code-server --install-extension: %v\n%s", err, out)
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	logFile := filepath.Join(work, "code-server.log")
	f, err := os.Create(logFile)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(codeServer, append(common, "--bind-addr", addr, "--auth", "none", "--disable-telemetry",
		"--disable-update-check", "--disable-workspace-trust", "--disable-getting-started-override", folder)...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = f, f
	// Its own process group: the extension host, the bridge and its agent end with it.
	ownGroup(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	cs := &codeServerProc{t: t, cmd: cmd, url: "http://" + addr, log: logFile, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(cs.done) }()
	t.Cleanup(func() {
		cs.stop()
		if t.Failed() {
			b, _ := os.ReadFile(logFile)
			t.Logf("code-server's output:\n%s", tail(b, 4000))
		}
	})
	waitCond(t, "code-server to answer on "+addr, func() (string, bool) {
		select {
		case <-cs.done:
			b, _ := os.ReadFile(logFile)
			t.Fatalf("code-server exited:\n%s", b)
		default:
		}
		resp, err := http.Get(cs.url + "/healthz")
		if err != nil {
			return err.Error(), false
		}
		resp.Body.Close()
		return resp.Status, resp.StatusCode == http.StatusOK
	})
	return cs
}

// stop ends code-server's process group: SIGTERM, then SIGKILL if it is still there after 20 s.
func (cs *codeServerProc) stop() {
	select {
	case <-cs.done:
		return
	default:
	}
	_ = signalGroup(cs.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-cs.done:
	case <-time.After(20 * time.Second):
		_ = signalGroup(cs.cmd.Process.Pid, syscall.SIGKILL)
		<-cs.done
	}
}

// vscodeDriver runs testdata/peers/vscode-driver.mjs: one step in, one answer out.
type vscodeDriver struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string
	stderr *bytes.Buffer
	done   chan struct{}
}

func startVSCodeDriver(t *testing.T, node, url, profile, shots string) *vscodeDriver {
	t.Helper()
	script := filepath.Join(moduleRoot(t), "testdata", "peers", "vscode-driver.mjs")
	cmd := exec.Command(node, script, "--url", url, "--profile", profile, "--shots", shots)
	ownGroup(cmd) // Chromium's processes end with it
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	d := &vscodeDriver{t: t, cmd: cmd, stdin: stdin, lines: make(chan string), stderr: &bytes.Buffer{}, done: make(chan struct{})}
	cmd.Stderr = d.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			d.lines <- sc.Text()
		}
		close(d.lines)
		_ = cmd.Wait()
		close(d.done)
	}()
	t.Cleanup(d.quit)
	return d
}

// do runs one step and returns its result; a failed step fails the test, with the screenshot the
// driver took.
func (d *vscodeDriver) do(step map[string]any) json.RawMessage {
	d.t.Helper()
	res, _ := d.run(step, true)
	return res
}

// try runs one step and reports whether it succeeded; a failed step is logged, not failed.
func (d *vscodeDriver) try(step map[string]any) (json.RawMessage, bool) {
	d.t.Helper()
	return d.run(step, false)
}

func (d *vscodeDriver) run(step map[string]any, must bool) (json.RawMessage, bool) {
	d.t.Helper()
	b, err := json.Marshal(step)
	if err != nil {
		d.t.Fatal(err)
	}
	if _, err := d.stdin.Write(append(b, '\n')); err != nil {
		d.t.Fatalf("the driver: %v\n%s", err, d.stderr.String())
	}
	// Every step of the driver has its own deadline (60 s by default); this one only guards
	// against a driver that hangs.
	select {
	case line, ok := <-d.lines:
		if !ok {
			d.t.Fatalf("the driver exited during %s\n%s", b, d.stderr.String())
		}
		var ans struct {
			OK         bool            `json:"ok"`
			Result     json.RawMessage `json:"result"`
			Error      string          `json:"error"`
			Screenshot string          `json:"screenshot"`
		}
		if err := json.Unmarshal([]byte(line), &ans); err != nil {
			d.t.Fatalf("the driver answered %q to %s", line, b)
		}
		if !ans.OK {
			if !must {
				d.t.Logf("VS Code: %s (screenshot: %s)", ans.Error, ans.Screenshot)
				return nil, false
			}
			d.t.Fatalf("VS Code: %s\nscreenshot: %s", ans.Error, ans.Screenshot)
		}
		return ans.Result, true
	case <-time.After(5 * time.Minute):
		d.t.Fatalf("the driver did not answer %s in 5 minutes\n%s", b, d.stderr.String())
		return nil, false
	}
}

// decode runs one step and decodes its result into v.
func (d *vscodeDriver) decode(step map[string]any, v any) {
	d.t.Helper()
	if err := json.Unmarshal(d.do(step), v); err != nil {
		d.t.Fatalf("%v: %v", step, err)
	}
}

// quit closes the browser and waits for the driver to exit.
func (d *vscodeDriver) quit() {
	select {
	case <-d.done:
		return
	default:
	}
	_ = d.stdin.Close()
	select {
	case <-d.done:
	case <-time.After(30 * time.Second):
		_ = signalGroup(d.cmd.Process.Pid, syscall.SIGKILL)
		<-d.done
	}
}

// waitCond polls cond until it holds, for up to 90 s (the machine may be busy), and fails the test
// with the last value it saw otherwise.
func waitCond[V any](t *testing.T, what string, cond func() (V, bool)) V {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		v, ok := cond()
		if ok {
			return v
		}
		if time.Now().After(deadline) {
			s := fmt.Sprint(v)
			if b, err := json.Marshal(v); err == nil {
				s = string(b)
			}
			t.Fatalf("timed out waiting for %s; last seen: %s", what, tail([]byte(s), 3000))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// tolerantAgentLog reads the scripted agent's --log: every complete line, none if there is no file yet.
func tolerantAgentLog(path string) []map[string]any {
	b, _ := os.ReadFile(path)
	var out []map[string]any
	for line := range bytes.Lines(b) {
		if !bytes.HasSuffix(line, []byte("\n")) {
			break // being written
		}
		var m map[string]any
		if json.Unmarshal(line, &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// keptDir makes a folder that outlives the test when it fails (for its screenshots), and is
// removed when it passes.
func keptDir(t *testing.T, prefix string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("screenshots kept in %s", dir)
			return
		}
		_ = os.RemoveAll(dir)
	})
	return dir
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	writeFile(t, path, mustJSON(t, v))
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

func tail(b []byte, n int) string {
	if len(b) > n {
		return "…" + string(b[len(b)-n:])
	}
	return string(b)
}
