package workspace

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"strings"
)

// ErrBadURI is a URI from the agent that is not a plain file: URI naming a local path.
var ErrBadURI = errors.New("not a plain file: URI")

// CheckURI reads a URI that the agent sent and returns the local path it names, in the flavour's
// spelling and cleaned (no "." or ".." left). It refuses, with ErrBadURI, anything but a plain
// file: URI with an empty or "localhost" host: a query or a fragment (a literal "?" or "#"; a
// file name holding one spells it %3F or %23), a user, a port, an opaque file:x form, a NUL
// byte, a relative path; on Windows also device paths (\\?\, \\.\), alternate data streams (a
// ":" past the drive), names that Windows rewrites (a trailing dot or space) and the reserved
// device names (CON, NUL, COM1, ...).
//
// The path is not yet known to be inside the workspace: Workspace.Check says so.
func (f Flavor) CheckURI(u string) (string, error) {
	bad := func(why string) (string, error) { return "", fmt.Errorf("%q: %w: %s", short(u), ErrBadURI, why) }
	if len(u) < 5 || !strings.EqualFold(u[:5], "file:") {
		return bad("another scheme")
	}
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		return bad(fmt.Sprintf("it has a query or a fragment (%q at byte %d)", u[i], i))
	}
	parsed, err := url.Parse(u)
	switch {
	case err != nil:
		return bad("it does not parse")
	case parsed.Opaque != "":
		return bad("no path after file:")
	case parsed.User != nil:
		return bad("it names a user")
	case parsed.Host != "" && !strings.EqualFold(parsed.Host, "localhost"):
		return bad(fmt.Sprintf("it names the host %q", parsed.Host))
	case !strings.HasPrefix(parsed.Path, "/"):
		return bad("a relative path")
	}
	p := f.fromURL(parsed)
	if why := f.oddity(p); why != "" {
		return bad(why)
	}
	return f.Clean(p), nil
}

// oddity says why a path from the agent is refused before it is looked at, or "": a NUL byte;
// on Windows the forms that name something else than they seem (windowsOddity).
func (f Flavor) oddity(p string) string {
	if strings.IndexByte(p, 0) >= 0 {
		return "a NUL byte in the path"
	}
	if f.Windows {
		return windowsOddity(p)
	}
	return ""
}

// Clean cleans a path of the flavour: one kind of separator where Windows takes two, no "." or
// ".." elements (a ".." at the root stays at the root).
func (f Flavor) Clean(p string) string {
	if !f.Windows {
		return path.Clean(p)
	}
	k := f.slashClean(p)
	return strings.ReplaceAll(k, "/", `\`)
}

// windowsOddity says why a Windows path from the agent is refused, or "".
func windowsOddity(p string) string {
	s := strings.ReplaceAll(p, "/", `\`)
	if strings.HasPrefix(s, `\\?\`) || strings.HasPrefix(s, `\\.\`) || strings.HasPrefix(s, `\??\`) {
		return "a device path"
	}
	rest := s
	if len(s) >= 2 && isDriveLetter(s[0]) && s[1] == ':' {
		rest = s[2:]
	}
	if strings.Contains(rest, ":") {
		return "a \":\" past the drive (an alternate data stream)"
	}
	for _, elem := range strings.Split(rest, `\`) {
		if elem == "" || elem == "." || elem == ".." {
			continue
		}
		if strings.HasSuffix(elem, ".") || strings.HasSuffix(elem, " ") {
			return "a name ending in a dot or a space, which Windows rewrites"
		}
		if reservedName(elem) {
			return fmt.Sprintf("the reserved device name %q", elem)
		}
	}
	return ""
}

// reservedName reports the names Windows gives to devices in every folder, with any extension.
func reservedName(elem string) bool {
	base := strings.ToUpper(elem)
	if i := strings.IndexByte(base, '.'); i >= 0 {
		base = base[:i]
	}
	base = strings.TrimRight(base, " ")
	switch base {
	case "CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$":
		return true
	}
	if len(base) == 4 && (strings.HasPrefix(base, "COM") || strings.HasPrefix(base, "LPT")) {
		c := base[3]
		return c >= '0' && c <= '9' || c == '\xb9' || c == '\xb2' || c == '\xb3'
	}
	return false
}

// FileURI is the file: URI of an absolute path of the flavour, built from the path alone:
// every byte that a URI's path may not hold as it is ("?", "#", "%", spaces, non-ASCII) is
// percent-encoded, so that CheckURI and any editor read back the same path.
func (f Flavor) FileURI(p string) string {
	slash := p
	host := ""
	if f.Windows {
		slash = strings.ReplaceAll(p, `\`, "/")
		if strings.HasPrefix(slash, "//") { // \\server\share\x
			rest := slash[2:]
			i := strings.IndexByte(rest, '/')
			if i < 0 {
				host, slash = rest, "/"
			} else {
				host, slash = rest[:i], rest[i:]
			}
		} else if !strings.HasPrefix(slash, "/") {
			slash = "/" + slash // C:/x → /C:/x
		}
	}
	return (&url.URL{Scheme: "file", Host: host, Path: slash, OmitHost: false}).String()
}

// escapeElement percent-encodes one element of a URI's path: every byte but the unreserved ones
// and the few sub-delimiters editors leave as they are.
func escapeElement(el string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(el); i++ {
		c := el[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~!$&'()*+,;=:@", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// short bounds what of a URI goes into an error message.
func short(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}
