package workspace

import (
	"net/url"
	"path"
	"runtime"
	"strings"
	"unicode"
)

// Flavor is how a platform spells and compares file paths. The bridge takes the host's (Host);
// the tests run every flavour on any host.
type Flavor struct {
	// Windows: drive letters (C:\, c:\), backslashes, UNC paths (\\server\share).
	Windows bool
	// Fold: the file system ignores case (Windows; macOS by default), so paths that differ only
	// in case name the same file.
	Fold bool
}

// Host is the flavour of the platform the bridge runs on.
var Host = Flavor{Windows: runtime.GOOS == "windows", Fold: runtime.GOOS == "windows" || runtime.GOOS == "darwin"}

// The flavours of the three platforms, for tests and for code that names one.
var (
	Linux   = Flavor{}
	MacOS   = Flavor{Fold: true}
	Windows = Flavor{Windows: true, Fold: true}
)

// URIToPath returns the path a file: URI names, in the flavour's spelling, however the editor
// spelled it: file:///c%3A/Users/x (VS Code), file:///C:/Users/x (Neovim) and file:///c:/Users/x
// all give C:\Users\x on Windows; file://server/share/x gives \\server\share\x. ok is false for
// another scheme or a URI that does not parse.
//
// It is lenient, for the editor's own URIs, which the editor is trusted to spell. A URI that
// comes from the agent goes through CheckURI instead.
func (f Flavor) URIToPath(u string) (p string, ok bool) {
	parsed, err := url.Parse(u)
	if err != nil || !strings.EqualFold(parsed.Scheme, "file") {
		return "", false
	}
	return f.fromURL(parsed), true
}

// fromURL is the path of a parsed file: URL.
func (f Flavor) fromURL(parsed *url.URL) string {
	host, p := parsed.Host, parsed.Path
	if !f.Windows {
		if host != "" && !strings.EqualFold(host, "localhost") {
			return "//" + host + p
		}
		return p
	}
	if host != "" && !strings.EqualFold(host, "localhost") {
		return `\\` + host + strings.ReplaceAll(p, "/", `\`)
	}
	// /c:/Users → C:\Users
	if len(p) >= 3 && p[0] == '/' && isDriveLetter(p[1]) && p[2] == ':' {
		p = string(unicode.ToUpper(rune(p[1]))) + ":" + p[3:]
		if len(p) == 2 {
			p += "/"
		}
	}
	return strings.ReplaceAll(p, "/", `\`)
}

func isDriveLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// Key is the form in which two paths of the flavour are compared: cleaned, with one kind of
// separator, and folded to lower case where the file system ignores case.
func (f Flavor) Key(p string) string {
	if f.Windows {
		unc := strings.HasPrefix(p, `\\`) || strings.HasPrefix(p, "//")
		p = path.Clean(strings.ReplaceAll(p, `\`, "/"))
		if unc && !strings.HasPrefix(p, "//") {
			p = "/" + p // path.Clean keeps one leading slash of the two
		}
	} else {
		p = path.Clean(p)
	}
	if f.Fold {
		p = strings.ToLower(p)
	}
	return p
}

// Within reports whether the path p is root or lies inside it.
func (f Flavor) Within(p, root string) bool {
	k, r := f.Key(p), f.Key(root)
	if k == r {
		return true
	}
	if !strings.HasSuffix(r, "/") {
		r += "/"
	}
	return strings.HasPrefix(k, r)
}

// Rel is p relative to root, with forward slashes, when p is Within root; "." for root itself.
func (f Flavor) Rel(p, root string) (string, bool) {
	if !f.Within(p, root) {
		return "", false
	}
	// The keys may be folded; the spelling is taken from p, cleaned the same way.
	k, r := f.slashClean(p), f.slashClean(root)
	if len(k) == len(r) {
		return ".", true
	}
	n := len(r)
	if !strings.HasSuffix(r, "/") {
		n++
	}
	return k[n:], true
}

// slashClean is Key without the folding.
func (f Flavor) slashClean(p string) string {
	return Flavor{Windows: f.Windows}.Key(p)
}

// Join appends a slash-separated relative path to a path of the flavour.
func (f Flavor) Join(root, rel string) string {
	if rel == "." || rel == "" {
		return root
	}
	sep := "/"
	if f.Windows {
		sep = `\`
		rel = strings.ReplaceAll(rel, "/", `\`)
	}
	if strings.HasSuffix(root, sep) {
		return root + rel
	}
	return root + sep + rel
}

// Base is the last element of a path of the flavour.
func (f Flavor) Base(p string) string {
	if f.Windows {
		p = strings.ReplaceAll(p, `\`, "/")
	}
	return path.Base(p)
}

// URIPath is the host's path of a file: URI, however the editor spelled it; any other URI is
// returned as it is.
func URIPath(u string) string {
	if p, ok := Host.URIToPath(u); ok {
		return p
	}
	return u
}
