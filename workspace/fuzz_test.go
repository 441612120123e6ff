package workspace

import (
	"errors"
	"io/fs"
	"net/url"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// FuzzConfinement: random URIs and paths (percent-encodings, "?", "#", "..", hosts,
// backslashes, drive letters) over a tree with links that stay inside and links that lead out.
// Whatever passes the check lies inside the workspace (by a resolution of its own, not the
// package's), is not a secret, names in its URI exactly the path that was checked, and reads
// as a file inside; everything else is refused.
func FuzzConfinement(f *testing.F) {
	tr := newTree(f)
	ws := filepath.ToSlash(tr.ws)
	for _, s := range []string{
		"a.txt", "sub/b.txt", "in-link/b.txt", "abs-in/b.txt", "out-link/secret.txt", "out-file",
		"notes.txt", ".env", "dangling", "x?/y.txt", "x%3F/y.txt", "x?/../../outside/secret.txt",
		"a.txt#frag", "sub/../../outside/secret.txt", "sub%2F..%2F..%2Foutside%2Fsecret.txt",
		`sub\..\..\outside\secret.txt`, "%2e%2e/outside/secret.txt", "./a.txt", ".ssh/id_rsa",
		"d/f.txt", "bin.dat", "new/made.go", "ENV/../.env", ".ENV", "sub/inner/nested.go",
	} {
		f.Add("file://"+ws+"/"+s, true)
		f.Add("file://localhost"+ws+"/"+s, true)
		f.Add(filepath.Join(tr.ws, filepath.FromSlash(s)), false)
	}
	for _, s := range []string{
		"file:///etc/passwd", "file://evil/" + ws + "/a.txt", "file:" + ws + "/a.txt", "file:///C:/ws/a.txt",
		"file:///c%3A/ws/a.txt", "file:////server/share/a.txt", "file://" + ws + "/a.txt?", "file://" + ws,
		"file://" + ws + "/", "file://" + ws + "/..", "file://" + ws + "/%00", "FILE://" + ws + "/a.txt",
	} {
		f.Add(s, true)
	}
	wsReal := tr.ws
	f.Fuzz(func(t *testing.T, s string, asURI bool) {
		var c Checked
		var err error
		if asURI {
			c, err = tr.w.CheckURI(s)
			if err == nil && strings.ContainsAny(s, "?#") {
				t.Fatalf("CheckURI(%q) took a query or a fragment: %+v", s, c)
			}
		} else {
			c, err = tr.w.Check(s)
		}
		if err != nil {
			return
		}
		// Inside, by an independent resolution of the path the editor would be handed.
		p := c.Path()
		resolved := independentResolve(p)
		if !within(resolved, wsReal) {
			t.Fatalf("%q: checked as %q, which resolves to %q, outside %q", s, p, resolved, wsReal)
		}
		if g, ok := tr.w.Excludes().Match(resolved); ok {
			t.Fatalf("%q: checked as %q, which resolves to %q, excluded by %q", s, p, resolved, g)
		}
		// The URI handed on names exactly that path, with nothing an editor could read otherwise.
		u, perr := url.Parse(c.URI())
		if perr != nil || u.Scheme != "file" || u.Host != "" || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || u.Opaque != "" {
			t.Fatalf("%q: URI %q is not a plain file: URI (%v)", s, c.URI(), perr)
		}
		if runtime.GOOS != "windows" && u.Path != p {
			t.Fatalf("%q: URI %q names %q, not %q", s, c.URI(), u.Path, p)
		}
		// What reads, reads inside.
		b, rerr := tr.w.ReadFile(c, 1<<20)
		if rerr == nil && (strings.Contains(string(b), "OUTSIDE") || strings.Contains(string(b), "do-not-send") || strings.Contains(string(b), "KEY")) {
			t.Fatalf("%q: read %q", s, b)
		}
	})
}

// independentResolve follows the links of the longest part of p that exists, with the standard
// library alone.
func independentResolve(p string) string {
	var rest []string
	for dir := p; ; {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			for i := len(rest) - 1; i >= 0; i-- {
				r = filepath.Join(r, rest[i])
			}
			return r
		} else if !errors.Is(err, fs.ErrNotExist) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return p
		}
		rest = append(rest, filepath.Base(dir))
		dir = parent
	}
}

// within compares by strings alone: p is root or below it.
func within(p, root string) bool {
	if runtime.GOOS == "windows" || runtime.GOOS == "darwin" {
		p, root = strings.ToLower(p), strings.ToLower(root)
	}
	return p == root || strings.HasPrefix(p, strings.TrimSuffix(root, string(filepath.Separator))+string(filepath.Separator))
}
