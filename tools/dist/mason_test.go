package main

import (
	"bytes"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// masonPackage is the mason.nvim package definition, at the place a "file:" registry reads.
const masonPackage = "../../editors/neovim/mason/packages/acp-lsp-bridge/package.yaml"

// TestMasonPackage checks the package definition against mason's registry schema
// (mason-org/registry-schema: package.schema.json, the GitHub release source, the platform and
// category enums, bin) and against what `make dist` publishes: one asset per release archive,
// under its real name, with the binary at its place inside.
func TestMasonPackage(t *testing.T) {
	raw, err := os.ReadFile(masonPackage)
	if err != nil {
		t.Fatal(err)
	}
	var pkg map[string]any
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&pkg); err != nil {
		t.Fatal(err)
	}
	for _, err := range masonSchemaErrors(pkg) {
		t.Error(err)
	}
	if pkg["name"] != "acp-lsp-bridge" {
		t.Errorf("name %v: mason names a package after its single executable", pkg["name"])
	}
	if l, _ := pkg["licenses"].([]any); len(l) != 1 || l[0] != "MIT" {
		t.Errorf("licenses %v, want [MIT] as in LICENSE", pkg["licenses"])
	}
	if nv, _ := pkg["neovim"].(map[string]any); nv["lspconfig"] != "acp" {
		t.Errorf("neovim.lspconfig %v, want acp (lsp/acp.lua)", pkg["neovim"])
	}

	// Each release archive is an asset of its mason target, with the binary where dist puts it.
	source := pkg["source"].(map[string]any)
	version := source["id"].(string)[strings.LastIndex(source["id"].(string), "@")+1:]
	masonTarget := map[string]string{"linux/amd64": "linux_x64", "linux/arm64": "linux_arm64", "darwin/amd64": "darwin_x64", "darwin/arm64": "darwin_arm64", "windows/amd64": "win_x64", "windows/arm64": "win_arm64"}
	assets := map[string]map[string]any{}
	for _, a := range source["asset"].([]any) {
		a := a.(map[string]any)
		assets[fmt.Sprint(a["target"])] = a
	}
	if len(assets) != len(Targets) {
		t.Errorf("%d assets, want one for each of the %d release archives", len(assets), len(Targets))
	}
	for _, target := range Targets {
		goos, goarch, _ := strings.Cut(target, "/")
		a, ok := assets[masonTarget[target]]
		if !ok {
			t.Errorf("no asset for %s (%s)", masonTarget[target], target)
			continue
		}
		folder := ArchiveName(version, goos, goarch)
		file, bin := folder+".tar.gz", folder+"/acp-lsp-bridge"
		if goos == "windows" {
			file, bin = folder+".zip", folder+"/acp-lsp-bridge.exe"
		}
		if got, err := masonExpand(a["file"].(string), version); err != nil || got != file {
			t.Errorf("%s: file %q expands to %q (%v), want %q", target, a["file"], got, err, file)
		}
		if got, err := masonExpand(a["bin"].(string), version); err != nil || got != bin {
			t.Errorf("%s: bin %q expands to %q (%v), want %q", target, a["bin"], got, err, bin)
		}
	}
	if b, _ := pkg["bin"].(map[string]any); b["acp-lsp-bridge"] != "{{source.asset.bin}}" {
		t.Errorf("bin %v, want acp-lsp-bridge: {{source.asset.bin}}", pkg["bin"])
	}
}

// masonExpand expands the two template forms the definition uses: {{version}} and
// {{ version | strip_prefix "v" }}. Any other expression is an error, not passed through.
func masonExpand(s, version string) (string, error) {
	var err error
	out := regexp.MustCompile(`\{\{[^}]*\}\}`).ReplaceAllStringFunc(s, func(expr string) string {
		switch strings.Join(strings.Fields(strings.Trim(expr, "{}")), " ") {
		case "version":
			return version
		case `version | strip_prefix "v"`:
			return strings.TrimPrefix(version, "v")
		}
		err = fmt.Errorf("unknown expression %s", expr)
		return expr
	})
	return out, err
}

// masonSchemaErrors checks a package definition against the rules of mason's registry schema that
// a GitHub-release package meets: the top-level properties and the required ones, the homepage,
// licences, categories, the source's purl and assets, the platform names, bin's names.
func masonSchemaErrors(pkg map[string]any) []error {
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	allowed := map[string]bool{"name": true, "description": true, "homepage": true, "licenses": true, "languages": true, "categories": true, "deprecation": true, "source": true, "schemas": true, "bin": true, "share": true, "opt": true, "neovim": true, "ci_skip": true}
	for k := range pkg {
		if !allowed[k] {
			fail("property %q is not in mason's schema (additionalProperties is false)", k)
		}
	}
	for _, k := range []string{"name", "description", "homepage", "licenses", "languages", "categories", "source"} {
		if _, ok := pkg[k]; !ok {
			fail("required property %q is missing", k)
		}
	}
	for _, k := range []string{"name", "description", "homepage"} {
		if _, ok := pkg[k].(string); !ok {
			fail("%s must be a string", k)
		}
	}
	if desc, _ := pkg["description"].(string); desc != "" {
		for _, line := range strings.Split(desc, "\n") {
			if len(line) > 120 {
				fail("a description line is longer than 120 characters: %q", line)
			}
		}
	}
	if home, _ := pkg["homepage"].(string); !regexp.MustCompile(`^https?://`).MatchString(home) {
		fail("homepage %q must be an http(s) URL", home)
	} else if u, err := url.Parse(home); err != nil || u.Host == "" {
		fail("homepage %q is not a well-formed URL", home)
	}
	if l, ok := pkg["licenses"].([]any); !ok || len(l) == 0 {
		fail("licenses must be a list with at least one SPDX identifier")
	}
	if l, ok := pkg["languages"].([]any); !ok {
		fail("languages must be a list (it may be empty)")
	} else {
		for _, x := range l {
			if _, ok := x.(string); !ok {
				fail("languages: %v is not a string", x)
			}
		}
	}
	categories := map[string]bool{"Compiler": true, "DAP": true, "Formatter": true, "LSP": true, "Linter": true, "Runtime": true}
	if c, ok := pkg["categories"].([]any); !ok {
		fail("categories must be a list")
	} else {
		for _, x := range c {
			if s, _ := x.(string); !categories[s] {
				fail("category %v is not one of mason's", x)
			}
		}
	}
	platforms := map[string]bool{}
	for _, p := range strings.Fields(`unix darwin darwin_arm64 darwin_x64 linux linux_arm linux_arm64 linux_arm64_gnu
		linux_arm64_musl linux_arm64_openbsd linux_arm_gnu linux_armv6_gnu linux_armv6l linux_armv7_gnu linux_armv7l
		linux_x64 linux_x64_gnu linux_x64_musl linux_x64_openbsd linux_x86 linux_x86_gnu linux_x86_musl
		linux_x86_openbsd win win_arm win_arm64 win_armv6l win_armv7l win_x64 win_x86`) {
		platforms[p] = true
	}
	source, ok := pkg["source"].(map[string]any)
	if !ok {
		fail("source must be an object")
		return errs
	}
	id, _ := source["id"].(string)
	if !regexp.MustCompile(`^pkg:github/.+/.+@.+`).MatchString(id) {
		fail("source.id %q is not a GitHub release purl with a version (pkg:github/OWNER/REPO@VERSION)", id)
	}
	if _, ok := source["supported_platforms"]; ok {
		fail("a GitHub release source must not have supported_platforms")
	}
	assets, ok := source["asset"].([]any)
	if !ok {
		fail("source.asset must be a list of {target, file}")
	}
	for i, a := range assets {
		a, ok := a.(map[string]any)
		if !ok {
			fail("source.asset[%d] is not an object", i)
			continue
		}
		if t, _ := a["target"].(string); !platforms[t] {
			fail("source.asset[%d].target %v is not a mason platform", i, a["target"])
		}
		if _, ok := a["file"].(string); !ok {
			fail("source.asset[%d].file must be a string", i)
		}
	}
	if bin, ok := pkg["bin"]; ok {
		b, ok := bin.(map[string]any)
		if !ok {
			fail("bin must be an object")
		}
		for name, v := range b {
			if !regexp.MustCompile(`^[a-zA-Z0-9_\-.]+$`).MatchString(name) {
				fail("bin name %q has characters mason's schema refuses", name)
			}
			if _, ok := v.(string); !ok {
				fail("bin %q must be a string", name)
			}
		}
	}
	if nv, ok := pkg["neovim"]; ok {
		if m, ok := nv.(map[string]any); !ok {
			fail("neovim must be an object")
		} else if _, ok := m["lspconfig"].(string); !ok {
			fail("neovim.lspconfig must be a string")
		}
	}
	return errs
}

// TestMasonSchemaCheckRefuses: the schema check above is able to fail.
func TestMasonSchemaCheckRefuses(t *testing.T) {
	bad := map[string]any{"name": "x", "homepage": "ftp://x", "licenses": []any{}, "languages": []any{1}, "categories": []any{"Editor"},
		"source": map[string]any{"id": "pkg:golang/x", "asset": []any{map[string]any{"target": "linux_amd64"}}}, "bin": map[string]any{"a b": 1}, "extra": true}
	got := fmt.Sprint(masonSchemaErrors(bad))
	for _, want := range []string{`"extra"`, `"description" is missing`, "homepage", "licenses", "languages", "category Editor", "source.id", "target linux_amd64", "file must be", `bin name "a b"`} {
		if !strings.Contains(got, want) {
			t.Errorf("the check did not refuse %s: %s", want, got)
		}
	}
	if _, err := masonExpand("{{ version | upper }}", "v1"); err == nil {
		t.Error("an unknown template expression expanded")
	}
}
