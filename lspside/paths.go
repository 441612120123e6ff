package lspside

import (
	"net/url"
	"path"
	"runtime"
	"strings"
	"unicode"
)

// pathFlavor is how a platform spells and compares file paths. The bridge takes the host's
// (hostFlavor); the tests run every flavour on any host.
type pathFlavor struct {
	// windows: drive letters (C:\, c:\), backslashes, UNC paths (\\server\share).
	windows bool
	// fold: the file system ignores case (Windows; macOS by default), so paths that differ only
	// in case name the same file.
	fold bool
}

var hostFlavor = pathFlavor{windows: runtime.GOOS == "windows", fold: runtime.GOOS == "windows" || runtime.GOOS == "darwin"}

// uriToPath returns the path a file: URI names, in the flavour's spelling, however the editor
// spelled it: file:///c%3A/Users/x (VS Code), file:///C:/Users/x (Neovim) and file:///c:/Users/x
// all give C:\Users\x on Windows; file://server/share/x gives \\server\share\x. ok is false for
// another scheme or a URI that does not parse.
func (f pathFlavor) uriToPath(u string) (p string, ok bool) {
	parsed, err := url.Parse(u)
	if err != nil || !strings.EqualFold(parsed.Scheme, "file") {
		return "", false
	}
	host, p := parsed.Host, parsed.Path
	if !f.windows {
		if host != "" && host != "localhost" {
			return "//" + host + p, true
		}
		return p, true
	}
	if host != "" && host != "localhost" {
		return `\\` + host + strings.ReplaceAll(p, "/", `\`), true
	}
	// /c:/Users → C:\Users
	if len(p) >= 3 && p[0] == '/' && isDriveLetter(p[1]) && p[2] == ':' {
		p = string(unicode.ToUpper(rune(p[1]))) + ":" + p[3:]
		if len(p) == 2 {
			p += "/"
		}
	}
	return strings.ReplaceAll(p, "/", `\`), true
}

func isDriveLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// key is the form in which two paths of the flavour are compared: cleaned, with one kind of
// separator, and folded to lower case where the file system ignores case.
func (f pathFlavor) key(p string) string {
	if f.windows {
		unc := strings.HasPrefix(p, `\\`) || strings.HasPrefix(p, "//")
		p = path.Clean(strings.ReplaceAll(p, `\`, "/"))
		if unc && !strings.HasPrefix(p, "//") {
			p = "/" + p // path.Clean keeps one leading slash of the two
		}
	} else {
		p = path.Clean(p)
	}
	if f.fold {
		p = strings.ToLower(p)
	}
	return p
}

// within reports whether the path p is root or lies inside it.
func (f pathFlavor) within(p, root string) bool {
	k, r := f.key(p), f.key(root)
	if k == r {
		return true
	}
	if !strings.HasSuffix(r, "/") {
		r += "/"
	}
	return strings.HasPrefix(k, r)
}

// base is the last element of a path of the flavour.
func (f pathFlavor) base(p string) string {
	if f.windows {
		p = strings.ReplaceAll(p, `\`, "/")
	}
	return path.Base(p)
}
