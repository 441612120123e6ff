// Package layers says which folder of the module is which layer, and checks that no package
// imports one of a layer above its own: the test beside it runs the check on `go list`'s view of
// the module, so that the next upward import fails CI.
//
// A folder is a folder at the module's root, or one at the root of internal/, which holds several
// layers (as gopls's does): its libraries each a folder of their own, the implementations of the
// commands in internal/cmd/, the demo's editor in internal/demoeditor/, the test harness in
// internal/test/. A folder's packages are taken together, their tests aside (a package's tests may
// use what sits above it: the harness).
//
// The harness sits above the binary, so that nothing the binary links may import it; and, apart
// from the layers, the check holds that no package outside [HarnessUsers] imports it but from its
// tests: the harness is test code, which the shipped binary must not carry.
package layers

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Layers are the module's folders from the bottom up, by layer; the folders of one layer are
// independent of each other. A package may import packages of its own folder and of the layers
// below its own.
var Layers = [][]string{
	{"encoding"},                // position encodings: stdlib only
	{"document"},                // the mirror of open documents
	{"translate", "workspace"},  // LSP ⇄ ACP conversions; the workspace and what confines the agent
	{"editorstate", "nesagent"}, // what the user does; the kit for NES agents and the bridge's own
	{"acpside"},                 // the agent connection
	{"internal/buildinfo", "internal/wiretrace", "internal/promptagent"}, // libraries the bridge runs on
	{"lspside"},                             // the language server
	{"internal/cmd", "internal/demoeditor"}, // the commands' implementations (doctor, eval); the demo's editor
	{"cmd"},                                 // the binary
	{"internal/test"},                       // the test harness (fake editor, agents, language server)
	{"tools"},                               // build tools
	{"e2e"},                                 // end-to-end tests
}

// Harness is the folder of the test harness.
const Harness = "internal/test"

// HarnessUsers are the folders whose packages may import the harness from files that are not
// tests: the harness itself, the build tools and the end-to-end tests, none of which ships.
var HarnessUsers = []string{Harness, "tools", "e2e"}

// Package is what the check reads of a package: its import path in the module and the module's
// packages it imports (tests aside).
type Package struct {
	Path    string
	Imports []string
}

// FolderOf is the folder of a package path relative to the module's root.
func FolderOf(rel string) string {
	parts := strings.Split(rel, "/")
	if parts[0] == "internal" && len(parts) > 1 {
		return "internal/" + parts[1]
	}
	return parts[0]
}

// Check returns what is wrong with pkgs (paths relative to the module's root): a package of a
// folder that Layers does not name, an import of a folder of the same layer or above, and an
// import of the harness by a package outside HarnessUsers (said as that alone).
func Check(pkgs []Package) []string {
	rank := map[string]int{}
	for i, layer := range Layers {
		for _, f := range layer {
			rank[f] = i
		}
	}
	var problems []string
	for _, p := range pkgs {
		from := FolderOf(p.Path)
		r, ok := rank[from]
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: the folder %s is in no layer (tools/layers.Layers)", p.Path, from))
			continue
		}
		for _, imp := range p.Imports {
			to := FolderOf(imp)
			if to == from {
				continue
			}
			if to == Harness && !slices.Contains(HarnessUsers, from) {
				problems = append(problems, fmt.Sprintf("%s imports %s: the test harness %s is for tests, and only %s import it outside them",
					p.Path, imp, Harness, strings.Join(HarnessUsers, ", ")))
				continue
			}
			if rt, ok := rank[to]; ok && rt >= r {
				where := "above"
				if rt == r {
					where = "beside"
				}
				problems = append(problems, fmt.Sprintf("%s imports %s: %s is %s %s", p.Path, imp, to, where, from))
			}
		}
	}
	sort.Strings(problems)
	return problems
}
