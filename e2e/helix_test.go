package e2e

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

// What Helix accepts in a languages.toml, written down from Helix's own source at its release
// 25.07.1 (tag 25.07.1, commit a05c151bb6e8e9c65ec390b0ae2afe7a5efd619b):
//   - helix-core/src/syntax/config.rs: struct Configuration (rename_all = "kebab-case"),
//     struct LanguageConfiguration (kebab-case, deny_unknown_fields: an unknown key in a
//     [[language]] entry is an error), struct LanguageServerConfiguration, enum
//     LanguageServerFeatureConfiguration and enum LanguageServerFeature;
//   - helix-loader/src/grammar.rs: the top-level `use-grammars` and [[grammar]];
//   - languages.toml: the default servers of each language.
//
// Helix's master branch (commit 079a789e8cb08ead67f19e1971a1b7438b37354b, July 2026) accepts a
// superset: [[language]] adds code-actions-on-save, word-completion and rainbow-brackets, the
// features add document-links, pull-diagnostics and call-hierarchy, and Python's defaults add
// "zuban". The sets below are the release's, so the shipped file works on both.

var helixTopLevelKeys = []string{"language", "language-server", "grammar", "use-grammars"}

// LanguageServerConfiguration.
var helixLanguageServerKeys = []string{"command", "args", "environment", "config", "timeout", "required-root-patterns"}

// LanguageConfiguration; "comment-token" is a serde alias of comment-tokens.
var helixLanguageKeys = []string{
	"name", "language-id", "scope", "file-types", "shebangs", "roots", "comment-token",
	"comment-tokens", "block-comment-tokens", "text-width", "soft-wrap", "auto-format",
	"formatter", "path-completion", "diagnostic-severity", "grammar", "injection-regex",
	"language-servers", "indent", "debugger", "auto-pairs", "rulers", "workspace-lsp-roots",
	"persistent-diagnostic-sources",
}

// The table form of a `language-servers` item (LanguageServerFeatureConfiguration::Features).
var helixServerItemKeys = []string{"name", "only-features", "except-features"}

// LanguageServerFeature, as spelled in TOML.
var helixFeatures = []string{
	"format", "goto-declaration", "goto-definition", "goto-type-definition", "goto-reference",
	"goto-implementation", "signature-help", "hover", "document-highlight", "completion",
	"code-action", "workspace-command", "document-symbols", "workspace-symbols", "diagnostics",
	"rename-symbol", "inlay-hints", "document-colors",
}

// The built-in `language-servers` of the languages the shipped file attaches the bridge to, from
// Helix 25.07.1's languages.toml (the same on master, except Python's, which adds "zuban"). A
// [[language]] entry replaces this list, so the shipped file must repeat it.
var helixDefaultServers = map[string][]string{
	"rust":       {"rust-analyzer"},
	"go":         {"gopls", "golangci-lint-lsp"},
	"python":     {"ty", "ruff", "jedi", "pylsp"},
	"javascript": {"typescript-language-server"},
	"typescript": {"typescript-language-server"},
	"tsx":        {"typescript-language-server"},
	"jsx":        {"typescript-language-server"},
	"c":          {"clangd"},
	"cpp":        {"clangd"},
	"java":       {"jdtls"},
	"kotlin":     {"kotlin-language-server"},
	"ruby":       {"ruby-lsp", "solargraph"},
	"php":        {"intelephense"},
	"lua":        {"lua-language-server"},
	"bash":       {"bash-language-server"},
	"zig":        {"zls"},
	"haskell":    {"haskell-language-server"},
	"ocaml":      {"ocamllsp"},
	"scala":      {"metals"},
	"swift":      {"sourcekit-lsp"},
	"dart":       {"dart"},
	"html":       {"vscode-html-language-server", "superhtml"},
	"css":        {"vscode-css-language-server"},
	"scss":       {"vscode-css-language-server"},
	"json":       {"vscode-json-language-server"},
	"yaml":       {"yaml-language-server", "ansible-language-server"},
	"toml":       {"taplo", "tombi"},
	"nix":        {"nil", "nixd"},
}

// What the bridge reads from initializationOptions (lspside/lifecycle.go, acpside.Command).
var (
	bridgeInitOptionKeys = []string{"agent", "completion"}
	bridgeAgentKeys      = []string{"command", "args", "env"}
)

// TestHelixLanguagesTOML: editors/helix/languages.toml parses, names only keys Helix accepts,
// attaches "acp" to every language it lists while keeping that language's built-in servers, and
// gives the bridge only options it reads.
func TestHelixLanguagesTOML(t *testing.T) {
	path := filepath.Join(moduleRoot(t), "editors", "helix", "languages.toml")
	var doc map[string]any
	if _, err := toml.DecodeFile(path, &doc); err != nil {
		t.Fatalf("%s does not parse: %v", path, err)
	}
	helixOnlyKeys(t, "top level", doc, helixTopLevelKeys)

	servers, ok := doc["language-server"].(map[string]any)
	if !ok || servers["acp"] == nil {
		t.Fatalf("no [language-server.acp] table")
	}
	for name, v := range servers {
		srv, ok := v.(map[string]any)
		if !ok {
			t.Errorf("language-server.%s is not a table", name)
			continue
		}
		where := "[language-server." + name + "]"
		helixOnlyKeys(t, where, srv, helixLanguageServerKeys)
		if _, ok := srv["command"].(string); !ok {
			t.Errorf("%s: command must be a string (Helix requires it)", where)
		}
		if a, ok := srv["args"]; ok && tomlStrings(a) == nil {
			t.Errorf("%s: args must be a list of strings", where)
		}
		if e, ok := srv["environment"]; ok && !tomlStringTable(e) {
			t.Errorf("%s: environment must be a table of strings", where)
		}
		if to, ok := srv["timeout"]; ok {
			if n, ok := to.(int64); !ok || n < 0 {
				t.Errorf("%s: timeout must be a whole number of seconds", where)
			}
		}
		if p, ok := srv["required-root-patterns"]; ok && tomlStrings(p) == nil {
			t.Errorf("%s: required-root-patterns must be a list of strings", where)
		}
	}

	acp := servers["acp"].(map[string]any)
	if acp["command"] != "acp-lsp-bridge" {
		t.Errorf("[language-server.acp] command = %v, want acp-lsp-bridge", acp["command"])
	}
	cfg, ok := acp["config"].(map[string]any)
	if !ok {
		t.Fatalf("[language-server.acp] has no config table (the initializationOptions)")
	}
	helixOnlyKeys(t, "[language-server.acp] config", cfg, bridgeInitOptionKeys)
	if c, ok := cfg["completion"]; ok {
		if _, ok := c.(bool); !ok {
			t.Errorf("config.completion must be true or false")
		}
	}
	agent, ok := cfg["agent"].(map[string]any)
	if !ok {
		t.Fatalf("[language-server.acp] config has no agent table")
	}
	helixOnlyKeys(t, "config.agent", agent, bridgeAgentKeys)
	if c, ok := agent["command"].(string); !ok || c == "" {
		t.Errorf("config.agent.command must be a non-empty string")
	}
	if a, ok := agent["args"]; ok && tomlStrings(a) == nil {
		t.Errorf("config.agent.args must be a list of strings")
	}
	if e, ok := agent["env"]; ok && !tomlStringTable(e) {
		t.Errorf("config.agent.env must be a table of strings")
	}

	langs, ok := doc["language"].([]map[string]any)
	if !ok || len(langs) == 0 {
		t.Fatalf("no [[language]] entries (got %T)", doc["language"])
	}
	seen := map[string]bool{}
	for i, lang := range langs {
		name, _ := lang["name"].(string)
		where := "[[language]] " + name
		if name == "" {
			t.Errorf("[[language]] #%d has no name", i+1)
			continue
		}
		if seen[name] {
			t.Errorf("%s appears twice", where)
		}
		seen[name] = true
		helixOnlyKeys(t, where, lang, helixLanguageKeys)
		defaults, known := helixDefaultServers[name]
		if !known {
			// A language Helix does not define would need scope and file-types as well.
			t.Errorf("%s: not one of the Helix languages this test knows the servers of", where)
		}
		items, ok := lang["language-servers"].([]any)
		if !ok {
			t.Errorf("%s: language-servers missing or not a list", where)
			continue
		}
		var names []string
		for _, item := range items {
			switch it := item.(type) {
			case string:
				names = append(names, it)
			case map[string]any:
				helixOnlyKeys(t, where+" language-servers item", it, helixServerItemKeys)
				n, _ := it["name"].(string)
				if n == "" {
					t.Errorf("%s: a language-servers table has no name", where)
				}
				names = append(names, n)
				for _, k := range []string{"only-features", "except-features"} {
					if f, ok := it[k]; ok {
						list := tomlStrings(f)
						if list == nil {
							t.Errorf("%s: %s must be a list of strings", where, k)
						}
						for _, feature := range list {
							if !slices.Contains(helixFeatures, feature) {
								t.Errorf("%s: %s names %q, not a Helix feature", where, k, feature)
							}
						}
					}
				}
			default:
				t.Errorf("%s: language-servers item %v is neither a name nor a table", where, item)
			}
		}
		if !slices.Contains(names, "acp") {
			t.Errorf("%s: language-servers %v does not include acp", where, names)
		}
		for j, n := range names {
			if slices.Contains(names[:j], n) {
				t.Errorf("%s: language-servers names %q twice", where, n)
			}
		}
		var others []string
		for _, n := range names {
			if n == "acp" {
				continue
			}
			if servers[n] == nil && !slices.Contains(defaults, n) {
				t.Errorf("%s: %q is neither defined in the file nor one of Helix's servers for %s %v", where, n, name, defaults)
			}
			others = append(others, n)
		}
		if known && !slices.Equal(others, defaults) {
			t.Errorf("%s: the servers besides acp are %v; Helix's own are %v, and a [[language]] entry replaces them, so keep them all, in order", where, others, defaults)
		}
	}
}

// TestHelixBridgeArgs: the flags given to the bridge in editors/helix/languages.toml, and to its
// built-in agent in config.agent, are flags the built binary accepts.
func TestHelixBridgeArgs(t *testing.T) {
	path := filepath.Join(moduleRoot(t), "editors", "helix", "languages.toml")
	var doc struct {
		LanguageServer map[string]struct {
			Command string   `toml:"command"`
			Args    []string `toml:"args"`
			Config  struct {
				Agent struct {
					Command string   `toml:"command"`
					Args    []string `toml:"args"`
				} `toml:"agent"`
			} `toml:"config"`
		} `toml:"language-server"`
	}
	if _, err := toml.DecodeFile(path, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	acp, ok := doc.LanguageServer["acp"]
	if !ok {
		t.Fatal("no [language-server.acp]")
	}
	bridge, _ := binaries(t)

	flags := bridgeHelpFlags(t, bridge)
	for _, want := range []string{"log-file", "log-level", "trace", "suggest-timeout", "user-wait", "version"} {
		if _, ok := flags[want]; !ok {
			t.Fatalf("acp-lsp-bridge --help does not list -%s; the flag parser is off:\n%v", want, flags)
		}
	}
	rest := checkBridgeFlags(t, "[language-server.acp] args", acp.Args, flags)
	if len(rest) > 0 {
		t.Errorf("[language-server.acp] args: %q is not a flag; the agent goes after \"--\"", rest[0])
	}

	agent := acp.Config.Agent
	if agent.Command == "acp-lsp-bridge" {
		if len(agent.Args) == 0 || agent.Args[0] != "agent" {
			t.Fatalf("config.agent runs acp-lsp-bridge without the agent subcommand: %q", agent.Args)
		}
		agentFlags := bridgeHelpFlags(t, bridge, "agent")
		if _, ok := agentFlags["model-url"]; !ok {
			t.Fatalf("acp-lsp-bridge agent --help does not list -model-url:\n%v", agentFlags)
		}
		if rest := checkBridgeFlags(t, "config.agent args", agent.Args[1:], agentFlags); len(rest) > 0 {
			t.Errorf("config.agent args: unexpected argument %q", rest[0])
		}
	}
}

// bridgeHelpFlags runs BIN [sub] --help and returns its flags, each with whether it takes a value.
func bridgeHelpFlags(t *testing.T, bin string, sub ...string) map[string]bool {
	t.Helper()
	out, err := exec.Command(bin, append(sub, "--help")...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s --help: %v\n%s", bin, strings.Join(sub, " "), err, out)
	}
	// flag.PrintDefaults: "  -name" for a boolean, "  -name value" for the others.
	re := regexp.MustCompile(`(?m)^  -([a-z][a-z0-9-]*)( \S+)?$`)
	flags := map[string]bool{}
	for _, m := range re.FindAllStringSubmatch(string(out), -1) {
		flags[m[1]] = m[2] != ""
	}
	if len(flags) == 0 {
		t.Fatalf("no flags in %s --help:\n%s", bin, out)
	}
	return flags
}

// checkBridgeFlags reports every flag of args that flags does not have, and returns what follows the
// flags (from the first non-flag argument, or after "--").
func checkBridgeFlags(t *testing.T, where string, args []string, flags map[string]bool) []string {
	t.Helper()
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return args[i+1:]
		}
		if !strings.HasPrefix(a, "-") {
			return args[i:]
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		takesValue, ok := flags[name]
		if !ok {
			known := make([]string, 0, len(flags))
			for f := range flags {
				known = append(known, f)
			}
			sort.Strings(known)
			t.Errorf("%s: %s is not a flag (the flags are %v)", where, a, known)
			continue
		}
		if takesValue && !hasValue {
			if i+1 == len(args) {
				t.Errorf("%s: %s needs a value", where, a)
			}
			i++
		}
	}
	return nil
}

// helixOnlyKeys reports the keys of table that are not in allowed.
func helixOnlyKeys(t *testing.T, where string, table map[string]any, allowed []string) {
	t.Helper()
	for k := range table {
		if !slices.Contains(allowed, k) {
			t.Errorf("%s: key %q is not accepted here (allowed: %v)", where, k, allowed)
		}
	}
}

// tomlStrings returns v as a list of strings, or nil when it is not one.
func tomlStrings(v any) []string {
	list, ok := v.([]any)
	if !ok {
		return nil
	}
	out := make([]string, 0, len(list))
	for _, x := range list {
		s, ok := x.(string)
		if !ok {
			return nil
		}
		out = append(out, s)
	}
	return out
}

// tomlStringTable reports whether v is a table of strings.
func tomlStringTable(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	for _, x := range m {
		if _, ok := x.(string); !ok {
			return false
		}
	}
	return true
}
