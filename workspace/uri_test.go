package workspace

import (
	"errors"
	"strings"
	"testing"
)

// TestCheckURIRefusesAllButPlainFileURIs: what the agent may name, per flavour. Each refusal is
// ErrBadURI; the paths accepted are cleaned.
func TestCheckURIRefusesAllButPlainFileURIs(t *testing.T) {
	good := []struct {
		f    Flavor
		uri  string
		want string
	}{
		{linuxFlavor, "file:///home/ana/proj/a.go", "/home/ana/proj/a.go"},
		{linuxFlavor, "file://localhost/home/ana/a.go", "/home/ana/a.go"},
		{linuxFlavor, "FILE://LOCALHOST/home/ana/a.go", "/home/ana/a.go"},
		{linuxFlavor, "file:/home/ana/a.go", "/home/ana/a.go"},
		{linuxFlavor, "file:///home/ana/x%3F/a.go", "/home/ana/x?/a.go"}, // a "?" in a name, encoded
		{linuxFlavor, "file:///home/ana/x%23y.go", "/home/ana/x#y.go"},
		{linuxFlavor, "file:///home/ana/proj/../other/a.go", "/home/ana/other/a.go"}, // cleaned; Check decides
		{linuxFlavor, "file:///home/ana/a%5Cb.go", `/home/ana/a\b.go`},               // a backslash is a name's byte here
		{linuxFlavor, "file:///home/ana/%E6%97%A5.go", "/home/ana/日.go"},
		{windowsFlavor, "file:///c%3A/Users/Ana/a.go", `C:\Users\Ana\a.go`},
		{windowsFlavor, "file:///C:/Users/Ana/a.go", `C:\Users\Ana\a.go`},
		{windowsFlavor, "file:///C:/Users/Ana/a%5C..%5C..%5Cb.go", `C:\Users\b.go`},
	}
	for _, tc := range good {
		got, err := tc.f.CheckURI(tc.uri)
		if err != nil || got != tc.want {
			t.Errorf("%+v CheckURI(%s) = %q, %v; want %q", tc.f, tc.uri, got, err, tc.want)
		}
	}
	bad := []struct {
		f   Flavor
		uri string
	}{
		{linuxFlavor, "file:///ws/x?/../../outside/secret.txt"},
		{linuxFlavor, "file:///ws/a.go?"},
		{linuxFlavor, "file:///ws/a.go#L3"},
		{linuxFlavor, "file:///ws/a.go#"},
		{linuxFlavor, "file://evil.example/ws/a.go"},
		{linuxFlavor, "file://localhost:8080/ws/a.go"},
		{linuxFlavor, "file://ana@localhost/ws/a.go"},
		{linuxFlavor, "file:ws/a.go"},
		{linuxFlavor, "file:a.go"},
		{linuxFlavor, "file:///ws/a%00.go"},
		{linuxFlavor, "file:///ws/%zz"},
		{linuxFlavor, "https://example.com/a.go"},
		{linuxFlavor, "untitled:Untitled-1"},
		{linuxFlavor, "/ws/a.go"},
		{linuxFlavor, ""},
		{linuxFlavor, "file:"},
		{windowsFlavor, "file://server/share/a.go"},
		{windowsFlavor, "file:///C:/ws/.env::$DATA"},
		{windowsFlavor, "file:///C:/ws/a.go:secret"},
		{windowsFlavor, "file:///C:/ws/.env."},
		{windowsFlavor, "file:///C:/ws/.env%20"},
		{windowsFlavor, "file:///C:/ws/CON"},
		{windowsFlavor, "file:///C:/ws/nul.txt"},
		{windowsFlavor, "file:///C:/ws/com1"},
		{windowsFlavor, "file:///%5C%5C%3F%5CC:%5Cws%5Ca.go"},
		{windowsFlavor, "file:////./pipe/x"},
	}
	for _, tc := range bad {
		got, err := tc.f.CheckURI(tc.uri)
		if !errors.Is(err, ErrBadURI) {
			t.Errorf("%+v CheckURI(%q) = %q, %v; want ErrBadURI", tc.f, tc.uri, got, err)
		}
	}
	if _, err := linuxFlavor.CheckURI("file:///ws/x?/../y"); err == nil || !strings.Contains(err.Error(), "query or a fragment") {
		t.Errorf("the error does not say why: %v", err)
	}
}

// TestFileURIRoundTrips: a URI built from a path reads back as that path, whatever bytes its
// names hold, per flavour.
func TestFileURIRoundTrips(t *testing.T) {
	for _, tc := range []struct {
		f    Flavor
		path string
		want string
	}{
		{linuxFlavor, "/home/ana/x?/a.go", "file:///home/ana/x%3F/a.go"},
		{linuxFlavor, "/home/ana/a#b%c d.go", "file:///home/ana/a%23b%25c%20d.go"},
		{linuxFlavor, "/home/ana/日.go", "file:///home/ana/%E6%97%A5.go"},
		{linuxFlavor, `/home/ana/a\b.go`, "file:///home/ana/a%5Cb.go"},
		{linuxFlavor, "/", "file:///"},
		{windowsFlavor, `C:\Users\Ana\a.go`, "file:///C:/Users/Ana/a.go"},
		{windowsFlavor, `\\server\share\a.go`, "file://server/share/a.go"},
	} {
		u := tc.f.FileURI(tc.path)
		if u != tc.want {
			t.Errorf("%+v FileURI(%q) = %q, want %q", tc.f, tc.path, u, tc.want)
		}
		if back, ok := tc.f.URIToPath(u); !ok || back != tc.path {
			t.Errorf("%+v URIToPath(%q) = %q, %v; want %q", tc.f, u, back, ok, tc.path)
		}
		if tc.f.Windows && strings.HasPrefix(tc.path, `\\`) {
			continue // the agent may name no other host
		}
		if back, err := tc.f.CheckURI(u); err != nil || back != tc.path {
			t.Errorf("%+v CheckURI(%q) = %q, %v; want %q", tc.f, u, back, err, tc.path)
		}
	}
}
