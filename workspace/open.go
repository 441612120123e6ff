package workspace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"sort"
)

// ErrMoved is a file that is no longer the one that was checked: a link was swapped into its
// path, or the file replaced, between the check and the open.
var ErrMoved = errors.New("the file changed between its check and its opening (a link swapped in?)")

// ErrNotText is a file the bridge does not read for the agent: not a regular file, too large, or
// binary.
var ErrNotText = errors.New("not a text file")

// ReadFile reads the checked file for the agent, at most limit bytes. The file opened is the one
// that was checked. On Linux and the other Unix systems it is opened beneath its workspace folder
// without following any link: the check resolved the links in its path, so a link found there now
// was swapped in and is refused (openat2 with RESOLVE_BENEATH and RESOLVE_NO_SYMLINKS, or one
// openat with O_NOFOLLOW per element where openat2 is missing). On Windows the opened file's
// final path, asked of its handle, must be the checked path. A file
// that is not regular, larger than limit or binary (a NUL byte) is refused with ErrNotText.
func (w *Workspace) ReadFile(c Checked, limit int64) ([]byte, error) {
	f, err := openChecked(c)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: not a regular file", ErrNotText)
	}
	if st.Size() > limit {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrNotText, limit)
	}
	// The file may grow after the Stat: read one byte more than allowed to see it.
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrNotText, limit)
	}
	if bytes.IndexByte(b, 0) >= 0 {
		return nil, fmt.Errorf("%w: binary", ErrNotText)
	}
	return b, nil
}

// maxWalk bounds the files Walk lists.
const maxWalk = 20000

// skippedDirs are the folders a walk does not enter: version control and dependencies.
var skippedDirs = map[string]bool{".git": true, ".hg": true, ".svn": true, ".jj": true, "node_modules": true}

// Walk lists the regular files under the checked folder dir, sorted, at most limit (0: 20,000):
// not in the folders of version control and dependencies, not excluded, not reached through a
// link. Each is Checked, so that ReadFile opens it as any other; a folder swapped for a link
// during the walk lists names that ReadFile then refuses.
func (w *Workspace) Walk(dir Checked, limit int) []Checked {
	if limit <= 0 {
		limit = maxWalk
	}
	var out []Checked
	_ = filepath.WalkDir(dir.Real, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable entries are skipped
		}
		if d.IsDir() {
			if p != dir.Real && skippedDirs[d.Name()] {
				return filepath.SkipDir
			}
			if _, ok := w.Excluded(p); ok && p != dir.Real {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if _, ok := w.Excluded(p); ok {
			return nil
		}
		c, ok := w.inside(p)
		if !ok {
			return nil
		}
		out = append(out, c)
		if len(out) >= limit {
			return fs.SkipAll
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Real < out[j].Real })
	return out
}

// Held is a file or folder under a workspace folder that an exclusion glob keeps from the agent.
type Held struct {
	Rel  string // relative to its folder, with forward slashes; a folder ends in "/"
	Glob string
}

// HeldBack lists what the exclusion globs keep from the agent under the workspace folders, at
// most limit entries after looking at no more than 20,000 files (not in version control's and
// dependencies' folders); an excluded folder is one entry. more is set when there may be more.
func (w *Workspace) HeldBack(limit int) (held []Held, more bool) {
	if w == nil {
		return nil, false
	}
	seen := 0
	for _, f := range w.folders {
		_ = filepath.WalkDir(f.Real, func(p string, d fs.DirEntry, err error) error {
			if err != nil || p == f.Real {
				return nil
			}
			if seen++; seen > maxWalk {
				more = true
				return fs.SkipAll
			}
			if d.IsDir() && skippedDirs[d.Name()] {
				return filepath.SkipDir
			}
			g, ok := w.Excluded(p)
			if !ok {
				return nil
			}
			if len(held) >= limit {
				more = true
				return fs.SkipAll
			}
			rel, _ := Host.Rel(p, f.Real)
			if d.IsDir() {
				held = append(held, Held{Rel: rel + "/", Glob: g})
				return filepath.SkipDir
			}
			held = append(held, Held{Rel: rel, Glob: g})
			return nil
		})
	}
	return held, more
}
