// Package workspace confines the agent to the workspace folders: it reads the URIs and paths the
// agent names, resolves their links, says whether they lie inside a folder and whether they are
// kept from the agent as secrets (Excludes), and reads files so that the file opened is the file
// that was checked. lspside and doctor both use it; it is the one place where confinement is
// decided (docs/security.md).
//
// The agent is untrusted: everything it names goes through CheckURI or Check, and what the
// bridge hands the editor is built from a Checked path (Checked.URI), never copied from the
// agent's text.
package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Errors that Check and ReadFile wrap.
var (
	// ErrOutside is a path outside every workspace folder, once its links are followed.
	ErrOutside = errors.New("outside the workspace folders")
	// ErrNotAbsolute is a path that is not absolute.
	ErrNotAbsolute = errors.New("not an absolute path")
	// ErrBadPath is a path from the agent in a form that names something else than it seems.
	ErrBadPath = errors.New("refused path")
	// ErrDangling is a path through a link whose target does not exist.
	ErrDangling = errors.New("a link to a file that does not exist")
)

// ExcludedError is a path that an exclusion glob keeps from the agent.
type ExcludedError struct {
	Path string
	Glob string
}

func (e *ExcludedError) Error() string {
	return fmt.Sprintf("%s is kept from the agent (it matches the exclusion glob %q)", e.Path, e.Glob)
}

// Folder is one workspace folder.
type Folder struct {
	// Path is the folder as the editor named it, cleaned.
	Path string
	// Real is Path with every link resolved; it is what paths are compared with.
	Real string
	// URI is the folder's URI as the editor spelled it, when it gave one: the URIs of the files
	// inside are spelled after it (Checked.URI), as the editor spells its own.
	URI string
}

// Workspace is the workspace folders and the exclusions, as the editor and the user set them.
// It is immutable: a change of folders makes a new one.
type Workspace struct {
	folders []Folder
	ex      *Excludes
}

// New makes the workspace of the folders (local paths as the editor names them) on the host.
// A folder that does not exist is kept as it is spelled (nothing inside it can be read).
func New(paths []string, ex *Excludes) *Workspace {
	w := &Workspace{ex: ex}
	for _, p := range paths {
		w.add(p, "")
	}
	return w
}

// NewFromURIs makes the workspace of the folders the editor named by file: URIs (others are left
// out); the files' URIs are spelled after the folders' (Checked.URI).
func NewFromURIs(uris []string, ex *Excludes) *Workspace {
	w := &Workspace{ex: ex}
	for _, u := range uris {
		if p, ok := Host.URIToPath(u); ok {
			w.add(p, u)
		}
	}
	return w
}

func (w *Workspace) add(p, uri string) {
	if p == "" || !filepath.IsAbs(p) {
		return
	}
	p = filepath.Clean(p)
	real := p
	if r, err := realPath(p); err == nil {
		real = r
	}
	w.folders = append(w.folders, Folder{Path: p, Real: real, URI: uri})
}

// Folders lists the workspace folders.
func (w *Workspace) Folders() []Folder {
	if w == nil {
		return nil
	}
	return append([]Folder(nil), w.folders...)
}

// Excludes are the workspace's exclusions (nil: none).
func (w *Workspace) Excludes() *Excludes {
	if w == nil {
		return nil
	}
	return w.ex
}

// Checked is a path that Check found inside a workspace folder and not excluded.
type Checked struct {
	// Real is the file's path with every link resolved, when it was checked.
	Real string
	// Rel is Real relative to its folder's Real, with forward slashes ("." for the folder).
	Rel string
	// Folder is the workspace folder it lies in (the innermost, when folders nest).
	Folder Folder
}

// Path is the file's path under its folder as the editor names the folder: no link, no "..".
func (c Checked) Path() string { return Host.Join(c.Folder.Path, c.Rel) }

// URI is the file's URI, built from the checked path alone: the folder's URI as the editor spelled
// it followed by the path below it, each element percent-encoded, or, for a folder the editor
// named by path, the URI of Path.
func (c Checked) URI() string {
	if c.Folder.URI == "" {
		return Host.FileURI(c.Path())
	}
	if c.Rel == "." {
		return c.Folder.URI
	}
	var b strings.Builder
	b.WriteString(strings.TrimSuffix(c.Folder.URI, "/"))
	for _, el := range strings.Split(c.Rel, "/") {
		b.WriteByte('/')
		b.WriteString(escapeElement(el))
	}
	return b.String()
}

// CheckURI checks a URI that the agent sent: a plain file: URI (Flavor.CheckURI) of a path
// inside the workspace and not excluded (Check).
func (w *Workspace) CheckURI(u string) (Checked, error) {
	p, err := Host.CheckURI(u)
	if err != nil {
		return Checked{}, err
	}
	return w.Check(p)
}

// Check checks a path that the agent named: an absolute path, not in a form that names something
// else than it seems (a NUL byte; on Windows a device path, a stream, a reserved name). It
// resolves every link in the absolute path p (also for a file that does not exist yet:
// its nearest existing folder is resolved) and checks that it lies inside a workspace folder and
// that no exclusion glob matches it, as spelled or as resolved (a link named notes.txt that
// points at .env is .env).
func (w *Workspace) Check(p string) (Checked, error) {
	if !filepath.IsAbs(p) {
		return Checked{}, fmt.Errorf("%s: %w", short(p), ErrNotAbsolute)
	}
	if why := Host.oddity(p); why != "" {
		return Checked{}, fmt.Errorf("%q: %w: %s", short(p), ErrBadPath, why)
	}
	clean := filepath.Clean(p)
	real, err := resolvePath(clean)
	if err != nil {
		return Checked{}, fmt.Errorf("%s: %w", short(p), err)
	}
	c, ok := w.inside(real)
	if !ok {
		return Checked{}, fmt.Errorf("%s: %w", short(p), ErrOutside)
	}
	if err := w.notExcluded(clean, real); err != nil {
		return Checked{}, err
	}
	return c, nil
}

// inside finds the innermost folder that holds the resolved path real.
func (w *Workspace) inside(real string) (Checked, bool) {
	if w == nil {
		return Checked{}, false
	}
	var best Checked
	found := false
	for _, f := range w.folders {
		rel, ok := Host.Rel(real, f.Real)
		if !ok {
			continue
		}
		if !found || len(f.Real) > len(best.Folder.Real) {
			best, found = Checked{Real: real, Rel: rel, Folder: f}, true
		}
	}
	return best, found
}

// notExcluded checks the path as spelled and as resolved against the exclusions.
func (w *Workspace) notExcluded(paths ...string) error {
	for _, p := range paths {
		if g, ok := w.Excluded(p); ok {
			return &ExcludedError{Path: p, Glob: g}
		}
	}
	return nil
}

// Excluded reports the exclusion glob that keeps the path p from the agent.
func (w *Workspace) Excluded(p string) (glob string, ok bool) {
	if w == nil {
		return "", false
	}
	return w.ex.Match(p)
}

// ExcludedFile reports the glob that keeps a file from the agent, by its path as spelled and with
// its links resolved.
func (w *Workspace) ExcludedFile(p string) (glob string, ok bool) {
	if g, ok := w.Excluded(p); ok {
		return g, true
	}
	if real, err := resolvePath(filepath.Clean(p)); err == nil && real != p {
		return w.Excluded(real)
	}
	return "", false
}

// Rel is how a file is named to the agent in a prompt or a context: relative to the first
// folder that holds it (as spelled), with forward slashes; otherwise its path as it is.
func (w *Workspace) Rel(p string) string {
	if w != nil {
		for _, f := range w.folders {
			if rel, ok := Host.Rel(p, f.Path); ok {
				return rel
			}
		}
	}
	return p
}

// RealPath is the path of an existing file or folder with every link resolved (on Windows
// junctions too).
func RealPath(p string) (string, error) { return realPath(p) }

// resolvePath resolves every link in p (realPath), also for a file that does not exist yet: its
// nearest existing folder is resolved and the rest appended, so that a new file under a link to
// elsewhere is seen to be elsewhere.
func resolvePath(p string) (string, error) {
	var rest []string
	for dir := p; ; {
		r, err := realPath(dir)
		if err == nil {
			for i := len(rest) - 1; i >= 0; i-- {
				r = filepath.Join(r, rest[i])
			}
			return r, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		if _, lerr := os.Lstat(dir); lerr == nil {
			// It is there but does not resolve: a link to a file that does not exist, which a
			// write would create wherever the link points.
			return "", fmt.Errorf("%s: %w", short(dir), ErrDangling)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return p, nil
		}
		rest = append(rest, filepath.Base(dir))
		dir = parent
	}
}
