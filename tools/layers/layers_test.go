package layers

import (
	"encoding/json"
	"errors"
	"io"
	"os/exec"
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

// TestCheck: the check finds an import upward and one beside, and a folder in no layer; an import
// downward or within a folder is fine.
func TestCheck(t *testing.T) {
	got := Check([]Package{
		{Path: "lspside", Imports: []string{"acpside", "internal/wiretrace", "lspside/sub"}},
		{Path: "internal/wiretrace", Imports: []string{"lspside"}},
		{Path: "translate", Imports: []string{"workspace"}},
		{Path: "internal/test/fakeeditor", Imports: []string{"encoding", "internal/test/testutil"}},
		{Path: "newfolder", Imports: nil},
	})
	want := []string{
		"internal/wiretrace imports lspside: lspside is above internal/wiretrace",
		"newfolder: the folder newfolder is in no layer (tools/layers.Layers)",
		"translate imports workspace: workspace is beside translate",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
