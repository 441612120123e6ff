package lspside

import "testing"

var (
	linuxFlavor   = pathFlavor{}
	macFlavor     = pathFlavor{fold: true}
	windowsFlavor = pathFlavor{windows: true, fold: true}
)

// TestURIToPathEveryFlavour: the URIs editors send, read as paths of each platform.
func TestURIToPathEveryFlavour(t *testing.T) {
	for _, tc := range []struct {
		f    pathFlavor
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
		got, ok := tc.f.uriToPath(tc.uri)
		if !ok || got != tc.want {
			t.Errorf("%+v uriToPath(%s) = %q, %v; want %q", tc.f, tc.uri, got, ok, tc.want)
		}
	}
	for _, u := range []string{"untitled:Untitled-1", "https://example.com/a.go", "file://%zz"} {
		if p, ok := windowsFlavor.uriToPath(u); ok {
			t.Errorf("uriToPath(%s) = %q: not a file URI", u, p)
		}
	}
}

// TestPathsCompareAsThePlatformDoes: the same file however spelled, and workspace confinement,
// per flavour.
func TestPathsCompareAsThePlatformDoes(t *testing.T) {
	same := []struct {
		f    pathFlavor
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
		if got := tc.f.key(tc.a) == tc.f.key(tc.b); got != tc.want {
			t.Errorf("%+v: %q and %q the same file: %v, want %v", tc.f, tc.a, tc.b, got, tc.want)
		}
	}
	within := []struct {
		f       pathFlavor
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
		if got := tc.f.within(tc.p, tc.root); got != tc.want {
			t.Errorf("%+v: %q within %q: %v, want %v", tc.f, tc.p, tc.root, got, tc.want)
		}
	}
	if b := windowsFlavor.base(`C:\Users\Ana\main.go`); b != "main.go" {
		t.Errorf("base %q", b)
	}
}
