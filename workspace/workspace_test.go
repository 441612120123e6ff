package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testutil"
)

// tree is a workspace folder beside a folder outside it, with links that stay inside and links
// that lead out.
type tree struct {
	ws, outside string
	w           *Workspace
	links       bool // the platform made the links (Wine may not)
}

func newTree(t testing.TB) *tree {
	t.Helper()
	base := t.TempDir()
	if r, err := filepath.EvalSymlinks(base); err == nil {
		base = r // macOS: /var → /private/var
	}
	tr := &tree{ws: filepath.Join(base, "ws"), outside: filepath.Join(base, "outside")}
	files := map[string]string{
		"ws/a.txt":               "inside a\n",
		"ws/sub/b.txt":           "inside b\n",
		"ws/d/f.txt":             "INSIDE f\n",
		"ws/.env":                "API_KEY=do-not-send\n",
		"ws/bin.dat":             "a\x00b",
		"outside/secret.txt":     "OUTSIDE secret\n",
		"outside/d/f.txt":        "OUTSIDE f\n",
		"ws/node_modules/m.js":   "module\n",
		"ws/deep/er/c.txt":       "inside c\n",
		"ws/.ssh/id_rsa":         "KEY\n",
		"ws/sub/inner/nested.go": "package inner\n",
	}
	if runtime.GOOS != "windows" {
		files["ws/x?/y.txt"] = "inside the folder named x?\n"
	}
	testutil.WriteFiles(t, base, files)
	tr.links = true
	for link, target := range map[string]string{
		"ws/in-link":   "sub",
		"ws/abs-in":    filepath.Join(tr.ws, "sub"),
		"ws/out-link":  filepath.Join("..", "outside"),
		"ws/out-file":  filepath.Join(tr.outside, "secret.txt"),
		"ws/notes.txt": ".env",
		"ws/dangling":  filepath.Join(tr.outside, "new.txt"),
	} {
		if err := os.Symlink(target, filepath.Join(base, filepath.FromSlash(link))); err != nil {
			t.Logf("no links here (%v): their cases are left out", err)
			tr.links = false
			break
		}
	}
	if tr.links {
		if _, err := os.Stat(filepath.Join(tr.ws, "in-link", "b.txt")); err != nil {
			t.Logf("links do not resolve here (%v; Wine makes links Windows cannot follow): their cases are left out", err)
			tr.links = false
		}
	}
	ex, err := NewExcludes(true, nil)
	if err != nil {
		t.Fatal(err)
	}
	tr.w = New([]string{tr.ws}, ex)
	return tr
}

func (tr *tree) path(rel string) string { return filepath.Join(tr.ws, filepath.FromSlash(rel)) }

// TestCheckConfinesToTheFolders: paths inside (also through links that stay inside), outside
// (also through links), excluded (also through a link), dangling links and files to be made.
func TestCheckConfinesToTheFolders(t *testing.T) {
	tr := newTree(t)
	ok := map[string]string{ // path → the checked Path
		"a.txt":             "a.txt",
		"sub/b.txt":         "sub/b.txt",
		"sub/../a.txt":      "a.txt",
		"new/file.go":       "new/file.go",
		"deep/er/c.txt":     "deep/er/c.txt",
		".":                 ".",
		"node_modules/m.js": "node_modules/m.js",
	}
	if tr.links {
		ok["in-link/b.txt"] = "sub/b.txt"
		ok["abs-in/b.txt"] = "sub/b.txt"
		ok["in-link/new.go"] = "sub/new.go"
	}
	for rel, want := range ok {
		c, err := tr.w.Check(tr.path(rel))
		if err != nil {
			t.Errorf("Check(%s): %v", rel, err)
			continue
		}
		if c.Path() != tr.path(want) || c.Rel != filepath.ToSlash(filepath.Clean(want)) {
			t.Errorf("Check(%s) = Path %q Rel %q; want %q", rel, c.Path(), c.Rel, tr.path(want))
		}
		if back, err := Host.CheckURI(c.URI()); err != nil || back != c.Path() {
			t.Errorf("Check(%s).URI() = %q reads back as %q, %v", rel, c.URI(), back, err)
		}
	}
	refused := map[string]error{
		"../outside/secret.txt": ErrOutside,
		"..":                    ErrOutside,
		".env":                  &ExcludedError{},
		".ssh/id_rsa":           &ExcludedError{},
	}
	if tr.links {
		refused["out-link/secret.txt"] = ErrOutside
		refused["out-link/new.txt"] = ErrOutside
		refused["out-file"] = ErrOutside
		refused["notes.txt"] = &ExcludedError{}
		refused["dangling"] = ErrDangling
	}
	for rel, want := range refused {
		_, err := tr.w.Check(tr.path(rel))
		var ex *ExcludedError
		if _, isEx := want.(*ExcludedError); isEx {
			if !errors.As(err, &ex) {
				t.Errorf("Check(%s) = %v; want it excluded", rel, err)
			}
			continue
		}
		if !errors.Is(err, want) {
			t.Errorf("Check(%s) = %v; want %v", rel, err, want)
		}
	}
	if _, err := tr.w.Check("a.txt"); !errors.Is(err, ErrNotAbsolute) {
		t.Errorf("a relative path: %v", err)
	}
	if runtime.GOOS != "windows" {
		// The query trick: a folder named "x?" and a URI that URL parsing cuts at the "?".
		bad := "file://" + filepath.ToSlash(tr.ws) + "/x?/../../outside/secret.txt"
		if c, err := tr.w.CheckURI(bad); !errors.Is(err, ErrBadURI) {
			t.Errorf("CheckURI(%s) = %+v, %v; want ErrBadURI", bad, c, err)
		}
		good := Host.FileURI(tr.path("x?/y.txt"))
		if c, err := tr.w.CheckURI(good); err != nil || c.Path() != tr.path("x?/y.txt") {
			t.Errorf("CheckURI(%s) = %+v, %v", good, c, err)
		}
	}
	var none *Workspace
	if _, err := none.Check(tr.path("a.txt")); !errors.Is(err, ErrOutside) {
		t.Errorf("no workspace: %v", err)
	}
}

// TestCheckNestedFolders: a file in a folder inside another folder belongs to the inner one.
func TestCheckNestedFolders(t *testing.T) {
	tr := newTree(t)
	w := New([]string{tr.ws, tr.path("sub"), "relative/ignored", ""}, nil)
	if n := len(w.Folders()); n != 2 {
		t.Fatalf("%d folders, want 2", n)
	}
	c, err := w.Check(tr.path("sub/b.txt"))
	if err != nil || c.Folder.Path != tr.path("sub") || c.Rel != "b.txt" {
		t.Errorf("Check = %+v, %v", c, err)
	}
	if w.Rel(tr.path("sub/b.txt")) != "sub/b.txt" {
		t.Errorf("Rel = %q, want it relative to the first folder", w.Rel(tr.path("sub/b.txt")))
	}
	if p := filepath.Join(tr.outside, "secret.txt"); w.Rel(p) != p {
		t.Errorf("Rel outside = %q", w.Rel(p))
	}
	if _, err := w.Check(tr.path(".env")); err != nil {
		t.Errorf("no exclusions, yet: %v", err)
	}
}

// TestReadFileReadsTheCheckedFile: files inside are read, through links that stay inside too;
// what is not a text file is refused.
func TestReadFileReadsTheCheckedFile(t *testing.T) {
	tr := newTree(t)
	for _, generic := range []bool{false, true} {
		forceGeneric = generic
		read := map[string]string{"a.txt": "inside a\n", "sub/b.txt": "inside b\n"}
		if tr.links {
			read["in-link/b.txt"] = "inside b\n"
			read["abs-in/b.txt"] = "inside b\n"
		}
		for rel, want := range read {
			c, err := tr.w.Check(tr.path(rel))
			if err != nil {
				t.Fatalf("Check(%s): %v", rel, err)
			}
			got, err := tr.w.ReadFile(c, 1<<20)
			if err != nil || string(got) != want {
				t.Errorf("generic=%v ReadFile(%s) = %q, %v; want %q", generic, rel, got, err, want)
			}
		}
		for rel, why := range map[string]string{"bin.dat": "binary", "sub": "not a regular file", "a.txt": "larger than 4"} {
			c, err := tr.w.Check(tr.path(rel))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tr.w.ReadFile(c, 4); !errors.Is(err, ErrNotText) || !strings.Contains(err.Error(), why) {
				t.Errorf("generic=%v ReadFile(%s) = %v; want %q", generic, rel, err, why)
			}
		}
		c, err := tr.w.Check(tr.path("missing.txt"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tr.w.ReadFile(c, 1<<20); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("generic=%v a missing file: %v", generic, err)
		}
	}
	forceGeneric = false
}

// TestWalkListsWhatTheAgentMayRead: a folder's files, not those of version control or
// dependencies, not the excluded ones, not through links.
func TestWalkListsWhatTheAgentMayRead(t *testing.T) {
	tr := newTree(t)
	root, err := tr.w.Check(tr.ws)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range tr.w.Walk(root, 0) {
		got = append(got, c.Rel)
	}
	want := "a.txt bin.dat d/f.txt deep/er/c.txt sub/b.txt sub/inner/nested.go"
	if runtime.GOOS != "windows" {
		want += " x?/y.txt"
	}
	if strings.Join(got, " ") != want {
		t.Errorf("Walk = %q\nwant    %q", strings.Join(got, " "), want)
	}
	if n := len(tr.w.Walk(root, 2)); n != 2 {
		t.Errorf("Walk with a limit of 2 listed %d", n)
	}
}

// TestHeldBackListsTheSecrets: what the globs keep from the agent under the folders, a folder once.
func TestHeldBackListsTheSecrets(t *testing.T) {
	tr := newTree(t)
	held, more := tr.w.HeldBack(10)
	var got []string
	for _, h := range held {
		got = append(got, h.Rel+" ("+h.Glob+")")
	}
	// A link to a secret (notes.txt → .env) is found when it is opened, not listed.
	want := ".env (.env) .ssh/ (.ssh/**)"
	if strings.Join(got, " ") != want || more {
		t.Errorf("HeldBack = %q, %v; want %q", strings.Join(got, " "), more, want)
	}
	if held, more := tr.w.HeldBack(1); len(held) != 1 || !more {
		t.Errorf("HeldBack(1) = %v, %v", held, more)
	}
}

// TestURIsFollowTheEditorsSpelling: a folder the editor named by URI gives its files URIs spelled
// as the editor spells its own (its host, its escapes), the rest of the path escaped; each reads
// back as the checked path.
func TestURIsFollowTheEditorsSpelling(t *testing.T) {
	tr := newTree(t)
	slash := filepath.ToSlash(tr.ws)
	if !strings.HasPrefix(slash, "/") {
		slash = "/" + slash
	}
	for _, folder := range []string{Host.FileURI(tr.ws), "file://localhost" + slash, "file://" + strings.TrimSuffix(slash, "ws") + "w%73"} {
		w := NewFromURIs([]string{folder, "untitled:x"}, nil)
		if n := len(w.Folders()); n != 1 {
			t.Fatalf("%s: %d folders", folder, n)
		}
		for rel, want := range map[string]string{"sub/b.txt": "/sub/b.txt", ".": "", "x y#1/日.go": "/x%20y%231/%E6%97%A5.go"} {
			if runtime.GOOS == "windows" && strings.Contains(rel, "#") {
				continue
			}
			c, err := w.Check(tr.path(rel))
			if err != nil {
				t.Fatal(err)
			}
			if c.URI() != folder+want {
				t.Errorf("URI of %s under %s = %s, want %s", rel, folder, c.URI(), folder+want)
			}
			if back, err := Host.CheckURI(c.URI()); err != nil || back != c.Path() {
				t.Errorf("%s reads back as %q, %v; want %q", c.URI(), back, err, c.Path())
			}
		}
	}
}
