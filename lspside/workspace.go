package lspside

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"go.lsp.dev/uri"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/document"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
)

// Limits on the files the bridge reads from disk for the agent's suggestions.
const (
	maxSearchFileSize = 1 << 20 // files larger than this are skipped by a folder search
	maxTargetFileSize = 8 << 20 // a single file an edit, rename or jump names
	maxSearchFiles    = 20000   // files a folder search looks at
)

// errOutsideWorkspace reports a file the agent named outside the workspace folders.
var errOutsideWorkspace = errors.New("outside the workspace folders")

// workspaceRoots returns the workspace folders as resolved paths (symlinks followed).
func (s *Server) workspaceRoots() []string {
	req := s.nesStartRequest()
	var roots []string
	for _, f := range req.WorkspaceFolders {
		if !strings.HasPrefix(f.Uri, "file:") {
			continue
		}
		p := uriPath(f.Uri)
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		roots = append(roots, filepath.Clean(p))
	}
	return roots
}

// confine resolves the path of a file: URI and checks that it lies inside a workspace folder,
// after following symlinks (a link inside the workspace that points out of it is refused).
func (s *Server) confine(u string) (string, error) {
	if !strings.HasPrefix(u, "file:") {
		return "", fmt.Errorf("%s: not a file: URI", u)
	}
	p := filepath.Clean(uriPath(u))
	resolved := p
	if r, err := filepath.EvalSymlinks(p); err == nil {
		resolved = r
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%s: %w", u, err)
	}
	for _, root := range s.workspaceRoots() {
		if resolved == root || strings.HasPrefix(resolved, root+string(filepath.Separator)) {
			return resolved, nil
		}
	}
	return "", fmt.Errorf("%s: %w", u, errOutsideWorkspace)
}

// target is the text of a document a suggestion refers to: the editor's open buffer when there is
// one (with the editor's URI and version), otherwise the file on disk.
type target struct {
	uri     string
	version *int
	mapper  *encoding.Mapper
}

// openPaths indexes the open documents by their file's resolved path, so that the editor's own
// URI and unsaved text are used for a file the agent names by path.
func (s *Server) openPaths() map[string]*document.Snapshot {
	byPath := map[string]*document.Snapshot{}
	for _, snap := range s.docs.All() {
		if strings.HasPrefix(snap.URI, "file:") {
			p := filepath.Clean(uriPath(snap.URI))
			if r, err := filepath.EvalSymlinks(p); err == nil {
				p = r
			}
			byPath[p] = snap
		}
	}
	return byPath
}

// openByPath finds the open document whose file is path.
func (s *Server) openByPath(path string) (*document.Snapshot, bool) {
	snap, ok := s.openPaths()[path]
	return snap, ok
}

func snapshotTarget(snap *document.Snapshot) target {
	v := snap.Version
	return target{uri: snap.URI, version: &v, mapper: snap.Mapper}
}

// readTarget returns the text of the document at u, which must lie inside the workspace (open in
// the editor or not): the open buffer first, then disk.
func (s *Server) readTarget(u string) (target, error) {
	path, err := s.confine(u)
	if err != nil {
		return target{}, err
	}
	if snap, ok := s.docs.Get(u); ok {
		return snapshotTarget(snap), nil
	}
	if snap, ok := s.openByPath(path); ok {
		return snapshotTarget(snap), nil
	}
	b, err := readTextFile(path, maxTargetFileSize)
	if err != nil {
		return target{}, fmt.Errorf("%s: %w", u, err)
	}
	return target{uri: u, mapper: encoding.NewMapper(string(b))}, nil
}

var errNotText = errors.New("not a text file")

func readTextFile(path string, limit int64) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: not a regular file", errNotText)
	}
	if st.Size() > limit {
		return nil, fmt.Errorf("%w: larger than %d bytes", errNotText, limit)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if bytes.IndexByte(b, 0) >= 0 {
		return nil, fmt.Errorf("%w: binary", errNotText)
	}
	return b, nil
}

// searchTargets lists the documents a searchAndReplace over u covers: the requesting document
// (base) itself, or, inside the workspace only, the file u or every text file under the folder u
// (skipping .git and other folders of tools, binary files and files over 1 MiB), open documents
// with their editor text.
func (s *Server) searchTargets(base *document.Snapshot, u string) ([]target, error) {
	if u == base.URI {
		return []target{snapshotTarget(base)}, nil
	}
	path, err := s.confine(u)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", u, err)
	}
	if !st.IsDir() {
		t, err := s.readTarget(u)
		if err != nil {
			return nil, err
		}
		return []target{t}, nil
	}
	var paths []string
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable entries are skipped
		}
		if d.IsDir() {
			if p != path && (d.Name() == ".git" || d.Name() == ".hg" || d.Name() == ".svn" || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			paths = append(paths, p)
			if len(paths) >= maxSearchFiles {
				return fs.SkipAll
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	open := s.openPaths() // once, not once per file
	var out []target
	for _, p := range paths {
		if snap, ok := open[p]; ok {
			out = append(out, snapshotTarget(snap))
			continue
		}
		b, err := readTextFile(p, maxSearchFileSize)
		if err != nil {
			continue
		}
		out = append(out, target{uri: string(uri.File(p)), mapper: encoding.NewMapper(string(b))})
	}
	return out, nil
}
