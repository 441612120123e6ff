package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/lspside"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent/model"
)

// genericPlaceholders are the words Go's flag package or a stray backquote put after a flag's name
// in --help, which say nothing of the value: each flag's placeholder must name what it takes.
var genericPlaceholders = map[string]bool{
	"string": true, "int": true, "int64": true, "uint": true, "uint64": true, "float": true, "float64": true,
	"value": true, "long": true, "many": true, "much": true, "often": true, "how": true, "what": true,
}

// flagLine is a flag's line in --help: its name and placeholder.
var flagLine = regexp.MustCompile(`^  -(\S+)(?: (\S+))?$`)

// helpFlags runs `acp-lsp-bridge [sub] --help` and returns each flag's placeholder ("" for a
// boolean) and the usage text under it.
func helpFlags(t *testing.T, bin, sub string) (map[string]string, map[string]string) {
	t.Helper()
	args := []string{"--help"}
	if sub != "" {
		args = []string{sub, "--help"}
	}
	code, stdout, stderr := runBin(t, bin, nil, args...)
	if code != 0 {
		t.Fatalf("%v: exit %d\n%s%s", args, code, stdout, stderr)
	}
	placeholders, usages := map[string]string{}, map[string]string{}
	lines := strings.Split(stdout, "\n")
	for i, l := range lines {
		m := flagLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		placeholders[m[1]] = m[2]
		if i+1 < len(lines) {
			usages[m[1]] = lines[i+1]
		}
	}
	if len(placeholders) == 0 && sub != "demo" { // (demo takes none)
		t.Fatalf("%v lists no flags:\n%s", args, stdout)
	}
	return placeholders, usages
}

// TestHelpSaysWhatTheProgramDoes: every flag of every subcommand names what it takes (no
// "string", "value" or a stray word as its placeholder); the values --model-server takes, as the
// model agent accepts them, are each named by agent's and eval's help; and the Neovim plugin's
// docs (:help acp_lsp_bridge, editors/neovim/README.md) list every option the plugin has, with
// the bridge's own timeouts as their defaults.
func TestHelpSaysWhatTheProgramDoes(t *testing.T) {
	bin := buildBridge(t)
	usage := map[string]map[string]string{}
	for _, sub := range []string{"", "agent", "eval", "doctor", "demo", "sign-in"} {
		placeholders, usages := helpFlags(t, bin, sub)
		usage[sub] = usages
		for name, p := range placeholders {
			if genericPlaceholders[p] {
				t.Errorf("acp-lsp-bridge %s --help: -%s %s: the placeholder says nothing of the value (put the value's name in backquotes in its usage)", sub, name, p)
			}
		}
	}

	// The servers the model agent takes, from its own refusal of another.
	_, err := model.New(model.Config{URL: "http://h:1", Model: "m", Server: "nonesuch"})
	if err == nil {
		t.Fatal("model.New took --model-server nonesuch")
	}
	_, list, ok := strings.Cut(err.Error(), "want ")
	if !ok {
		t.Fatalf("model.New's error %q names no servers", err)
	}
	servers := strings.FieldsFunc(strings.ReplaceAll(list, " or ", ", "), func(r rune) bool { return r == ',' || r == ' ' })
	for _, sub := range []string{"agent", "eval"} {
		for _, s := range servers {
			if !strings.Contains(usage[sub]["model-server"], s) {
				t.Errorf("acp-lsp-bridge %s --help: -model-server does not name %q, which the agent takes: %s", sub, s, usage[sub]["model-server"])
			}
		}
	}

	root := filepath.Join("..", "..")
	read := func(name string) string {
		data, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	// The plugin's options: the keys of its defaults table.
	lua := read("lua/acp_lsp_bridge/init.lua")
	start := strings.Index(lua, "local defaults = {\n")
	end := strings.Index(lua[start:], "\n}\n")
	if start < 0 || end < 0 {
		t.Fatal("lua/acp_lsp_bridge/init.lua has no defaults table")
	}
	var options []string
	for _, m := range regexp.MustCompile(`(?m)^  (\w+) = `).FindAllStringSubmatch(lua[start:start+end], -1) {
		options = append(options, m[1])
	}
	timeouts := map[string]int64{
		"suggest_timeout": lspside.SuggestTimeoutSetting(false).Default.Milliseconds(),
		"prompt_timeout":  lspside.SuggestTimeoutSetting(true).Default.Milliseconds(),
	}
	for _, doc := range []struct{ name, indent string }{{"doc/acp_lsp_bridge.txt", "      "}, {"editors/neovim/README.md", "  "}} {
		text := read(doc.name)
		i := strings.Index(text, "require('acp_lsp_bridge').setup({\n"+doc.indent+"agent = ")
		if i < 0 {
			t.Errorf("%s has no block of setup()'s defaults", doc.name)
			continue
		}
		block := text[i : i+strings.Index(text[i:], "\n"+doc.indent[:len(doc.indent)-2]+"})")]
		for _, o := range options {
			line := regexp.MustCompile(`(?m)^` + doc.indent + o + ` = .*$`).FindString(block)
			if line == "" {
				t.Errorf("%s: the defaults block leaves out the option %s", doc.name, o)
				continue
			}
			if ms, ok := timeouts[o]; ok {
				for _, n := range regexp.MustCompile(`\b\d{4,}\b`).FindAllString(line, -1) {
					if n != fmt.Sprint(ms) {
						t.Errorf("%s: %q gives %s ms, the bridge's default is %d", doc.name, line, n, ms)
					}
				}
			}
		}
	}
	// The options' own paragraphs in :help.
	help := read("doc/acp_lsp_bridge.txt")
	for o, ms := range timeouts {
		m := regexp.MustCompile(`(?ms)^` + o + ` .*?nil: the bridge's, (\d+)`).FindStringSubmatch(help)
		if m == nil || m[1] != fmt.Sprint(ms) {
			t.Errorf(":help acp_lsp_bridge-options: %s's default is %v, the bridge's is %d", o, m, ms)
		}
	}
}
