package layers

import (
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/acp-lsp-bridge/acp-lsp-bridge"

// TestModuleLayers reads every package of the module with `go list` and checks that none imports
// a package of a layer above its own or beside it (Layers), its tests aside.
func TestModuleLayers(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("needs go to list the module's packages: ", err) // under Wine, whose root has none
	}
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports", module+"/...")
	out, err := cmd.Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		t.Fatalf("go list: %v\n%s", err, ee.Stderr)
	} else if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []Package
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkg := Package{Path: strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")}
		for _, imp := range p.Imports {
			if rel, ok := strings.CutPrefix(imp, module+"/"); ok {
				pkg.Imports = append(pkg.Imports, rel)
			}
		}
		pkgs = append(pkgs, pkg)
	}
	if len(pkgs) < 20 {
		t.Fatalf("go list gave %d packages: %s", len(pkgs), out)
	}
	for _, p := range Check(pkgs) {
		t.Error(p)
	}
}

// TestCheck: the check finds an import upward and one beside, a folder in no layer, and an import
// of the harness outside its users (whatever the layers); an import downward or within a folder is
// fine, and so is the harness in the build tools and the end-to-end tests.
func TestCheck(t *testing.T) {
	got := Check([]Package{
		{Path: "lspside", Imports: []string{"acpside", "internal/wiretrace", "lspside/sub"}},
		{Path: "internal/wiretrace", Imports: []string{"lspside"}},
		{Path: "translate", Imports: []string{"workspace"}},
		{Path: "internal/test/fakeeditor", Imports: []string{"encoding", "internal/test/testutil"}},
		{Path: "newfolder", Imports: nil},
		// The demo as it was: the binary on the tests' fake editor.
		{Path: "cmd/acp-lsp-bridge", Imports: []string{"internal/demoeditor", "internal/test/fakeeditor"}},
		// The harness below the binary, in a reshuffle of Layers, is still refused to it.
		{Path: "internal/cmd/eval", Imports: []string{"internal/test/testagent"}},
		{Path: "tools/dist", Imports: []string{"internal/test/testutil"}},
		{Path: "e2e", Imports: []string{"internal/test/fakeeditor", "cmd/acp-lsp-bridge"}},
	})
	harness := ": the test harness internal/test is for tests, and only internal/test, tools, e2e import it outside them"
	want := []string{
		"cmd/acp-lsp-bridge imports internal/test/fakeeditor" + harness,
		"internal/cmd/eval imports internal/test/testagent" + harness,
		"internal/wiretrace imports lspside: lspside is above internal/wiretrace",
		"newfolder: the folder newfolder is in no layer (tools/layers.Layers)",
		"translate imports workspace: workspace is beside translate",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestBinaryLinksNoHarness: nothing the shipped binary links, directly or not, is of the test
// harness (`go list -deps` reads no test files, so the binary's own tests may use it).
func TestBinaryLinksNoHarness(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("needs go to list the binary's packages: ", err)
	}
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", module+"/cmd/acp-lsp-bridge").Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		t.Fatalf("go list: %v\n%s", err, ee.Stderr)
	} else if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, module+"/lspside") {
		t.Fatalf("go list -deps of the binary gave no lspside: %s", out)
	}
	for _, d := range deps {
		if rel, ok := strings.CutPrefix(d, module+"/"); ok && FolderOf(rel) == Harness {
			t.Errorf("the binary links %s, of the test harness", rel)
		}
	}
}
