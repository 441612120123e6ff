package workspace

import "testing"

var (
	linuxFlavor   = Linux
	macFlavor     = MacOS
	windowsFlavor = Windows
)

// TestURIToPathEveryFlavour: the URIs editors send, read as paths of each platform.
func TestURIToPathEveryFlavour(t *testing.T) {
	for _, tc := range []struct {
		f    Flavor
		uri  string
		want string
	}{
		{windowsFlavor, "file:///c%3A/Users/Ana/src/main.go", `C:\Users\Ana\src\main.go`}, // VS Code
		{windowsFlavor, "file:///C:/Users/Ana/src/main.go", `C:\Users\Ana\src\main.go`},   // Neovim
		{windowsFlavor, "file:///c:/Users/Ana/My%20Files/%E6%97%A5.go", `C:\Users\Ana\My Files\日.go`},
		{windowsFlavor, "file:///d%3A", `D:\`},
		{windowsFlavor, "file://server/share/dir/a.go", `\\server\share\dir\a.go`}, // UNC
		{windowsFlavor, "file://localhost/C:/a.go", `C:\a.go`},
		{linuxFlavor, "file:///home/ana/My%20Files/a.go", "/home/ana/My Files/a.go"},
		{macFlavor, "file:///Users/Ana/src/main.go", "/Users/Ana/src/main.go"},
		{linuxFlavor, "FILE:///tmp/a", "/tmp/a"},
	} {
		got, ok := tc.f.URIToPath(tc.uri)
		if !ok || got != tc.want {
			t.Errorf("%+v URIToPath(%s) = %q, %v; want %q", tc.f, tc.uri, got, ok, tc.want)
		}
	}
	for _, u := range []string{"untitled:Untitled-1", "https://example.com/a.go", "file://%zz"} {
		if p, ok := windowsFlavor.URIToPath(u); ok {
			t.Errorf("URIToPath(%s) = %q: not a file URI", u, p)
		}
	}
}

// TestPathsCompareAsThePlatformDoes: the same file however spelled, and workspace confinement,
// per flavour.
func TestPathsCompareAsThePlatformDoes(t *testing.T) {
	same := []struct {
		f    Flavor
		a, b string
		want bool
	}{
		{windowsFlavor, `C:\Users\Ana\a.go`, `c:\users\ana\A.GO`, true},
		{windowsFlavor, `C:\Users\Ana\a.go`, `C:/Users/Ana/./src/../a.go`, true},
		{windowsFlavor, `\\server\share\a.go`, `\\SERVER\Share\a.go`, true},
		{windowsFlavor, `\\server\share\a.go`, `\server\share\a.go`, false},
		{macFlavor, "/Users/Ana/a.go", "/users/ana/A.go", true},
		{linuxFlavor, "/home/ana/a.go", "/home/ana/A.go", false},
		{linuxFlavor, "/home/ana/src/../a.go", "/home/ana/a.go", true},
	}
	for _, tc := range same {
		if got := tc.f.Key(tc.a) == tc.f.Key(tc.b); got != tc.want {
			t.Errorf("%+v: %q and %q the same file: %v, want %v", tc.f, tc.a, tc.b, got, tc.want)
		}
	}
	within := []struct {
		f       Flavor
		p, root string
		want    bool
	}{
		{windowsFlavor, `c:\work\proj\a.go`, `C:\Work\Proj`, true},
		{windowsFlavor, `C:\Work\Proj`, `C:\Work\Proj\`, true},
		{windowsFlavor, `C:\Work\Project2\a.go`, `C:\Work\Proj`, false},
		{windowsFlavor, `D:\Work\Proj\a.go`, `C:\Work\Proj`, false},
		{windowsFlavor, `C:\Work\Proj\..\secret.txt`, `C:\Work\Proj`, false},
		{windowsFlavor, `C:\a.go`, `C:\`, true},
		{windowsFlavor, `\\server\share\proj\a.go`, `\\server\share\proj`, true},
		{windowsFlavor, `\\server\share2\a.go`, `\\server\share`, false},
		{macFlavor, "/Users/Ana/Proj/a.go", "/users/ana/proj", true},
		{linuxFlavor, "/home/ana/Proj/a.go", "/home/ana/proj", false},
		{linuxFlavor, "/home/ana/proj/a.go", "/home/ana/proj", true},
		{linuxFlavor, "/home/ana/projx/a.go", "/home/ana/proj", false},
		{linuxFlavor, "/a.go", "/", true},
	}
	for _, tc := range within {
		if got := tc.f.Within(tc.p, tc.root); got != tc.want {
			t.Errorf("%+v: %q within %q: %v, want %v", tc.f, tc.p, tc.root, got, tc.want)
		}
	}
	if b := windowsFlavor.Base(`C:\Users\Ana\main.go`); b != "main.go" {
		t.Errorf("base %q", b)
	}
}

// TestRelAndJoin: a path inside a folder, relative to it and back, per flavour, keeping the
// path's own spelling where the folder's differs only in case.
func TestRelAndJoin(t *testing.T) {
	for _, tc := range []struct {
		f         Flavor
		p, root   string
		rel, join string
	}{
		{linuxFlavor, "/home/ana/proj/src/a.go", "/home/ana/proj", "src/a.go", "/home/ana/proj/src/a.go"},
		{linuxFlavor, "/home/ana/proj", "/home/ana/proj/", ".", "/home/ana/proj/"},
		{linuxFlavor, "/a.go", "/", "a.go", "/a.go"},
		{macFlavor, "/Users/Ana/Proj/A.go", "/users/ana/proj", "A.go", "/users/ana/proj/A.go"},
		{windowsFlavor, `C:\Work\Proj\src\a.go`, `c:\work\proj`, "src/a.go", `c:\work\proj\src\a.go`},
		{windowsFlavor, `C:\a.go`, `C:\`, "a.go", `C:\a.go`},
		{windowsFlavor, `\\server\share\proj\a.go`, `\\server\share`, "proj/a.go", `\\server\share\proj\a.go`},
	} {
		rel, ok := tc.f.Rel(tc.p, tc.root)
		if !ok || rel != tc.rel {
			t.Errorf("%+v Rel(%q, %q) = %q, %v; want %q", tc.f, tc.p, tc.root, rel, ok, tc.rel)
			continue
		}
		if j := tc.f.Join(tc.root, rel); j != tc.join {
			t.Errorf("%+v Join(%q, %q) = %q, want %q", tc.f, tc.root, rel, j, tc.join)
		}
	}
	if rel, ok := linuxFlavor.Rel("/home/ana/projx/a.go", "/home/ana/proj"); ok {
		t.Errorf("Rel outside the root = %q", rel)
	}
}
