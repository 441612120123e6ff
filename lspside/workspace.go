package lspside

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	acp "github.com/coder/acp-go-sdk"
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

// workspaceFolder is a workspace folder as the editor names it.
type workspaceFolder struct {
	URI  string `json:"uri"`
	Name string `json:"name"`
}

// workspaceInfo is the workspace as the editor described it, computed at initialize and again on
// workspace/didChangeWorkspaceFolders, and read by everything that needs it: nes/start, the
// agent's working folder, the files the agent may read and the paths in the suggestion context.
type workspaceInfo struct {
	start acp.UnstableStartNesRequest // the folders, the workspace URI and its repository
	root  string                      // the local folder of the workspace URI, or ""
	roots []string                    // the folders' resolved paths (symlinks followed)
}

// newWorkspace computes the workspace from the editor's root and folders: the workspace URI is
// rootUri, else the first folder, else rootPath; with no folders, it is the one folder.
func newWorkspace(rootURI, rootPath *string, folders []workspaceFolder) *workspaceInfo {
	var req acp.UnstableStartNesRequest
	for _, f := range folders {
		name := f.Name
		if name == "" {
			name = filepath.Base(uriPath(f.URI))
		}
		req.WorkspaceFolders = append(req.WorkspaceFolders, acp.UnstableWorkspaceFolder{Uri: f.URI, Name: name})
	}
	switch {
	case rootURI != nil && *rootURI != "":
		root := *rootURI
		req.WorkspaceUri = &root
	case len(req.WorkspaceFolders) > 0:
		root := req.WorkspaceFolders[0].Uri
		req.WorkspaceUri = &root
	case rootPath != nil && *rootPath != "":
		root := string(uri.File(*rootPath))
		req.WorkspaceUri = &root
	}
	if req.WorkspaceUri != nil && len(req.WorkspaceFolders) == 0 {
		req.WorkspaceFolders = []acp.UnstableWorkspaceFolder{{Uri: *req.WorkspaceUri, Name: filepath.Base(uriPath(*req.WorkspaceUri))}}
	}
	ws := &workspaceInfo{start: req}
	if req.WorkspaceUri != nil && strings.HasPrefix(*req.WorkspaceUri, "file:") {
		ws.root = uriPath(*req.WorkspaceUri)
		ws.start.Repository = repositoryOf(ws.root)
	}
	for _, f := range req.WorkspaceFolders {
		if !strings.HasPrefix(f.Uri, "file:") {
			continue
		}
		p := uriPath(f.Uri)
		if r, err := realPath(p); err == nil {
			p = r
		}
		ws.roots = append(ws.roots, filepath.Clean(p))
	}
	return ws
}

// workspace returns the workspace (empty before initialize).
func (s *Server) workspace() *workspaceInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ws == nil {
		return &workspaceInfo{}
	}
	return s.ws
}

// didChangeWorkspaceFolders updates the workspace with the folders the editor added and removed;
// the agent sees them at its next nes/start, and may read files in them at once.
func (s *Server) didChangeWorkspaceFolders(raw json.RawMessage) error {
	var p struct {
		Event struct {
			Added   []workspaceFolder `json:"added"`
			Removed []workspaceFolder `json:"removed"`
		} `json:"event"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return fmt.Errorf("workspace/didChangeWorkspaceFolders: %w", err)
	}
	s.mu.Lock()
	var kept []workspaceFolder
	for _, f := range s.folders {
		if !slices.ContainsFunc(p.Event.Removed, func(r workspaceFolder) bool { return r.URI == f.URI }) {
			kept = append(kept, f)
		}
	}
	for _, f := range p.Event.Added {
		if !slices.ContainsFunc(kept, func(k workspaceFolder) bool { return k.URI == f.URI }) {
			kept = append(kept, f)
		}
	}
	rootURI, rootPath := s.init.RootURI, s.init.RootPath
	s.mu.Unlock()
	ws := newWorkspace(rootURI, rootPath, kept)
	s.mu.Lock()
	s.folders, s.ws = kept, ws
	s.mu.Unlock()
	s.log.Info().Int("folders", len(kept)).Msg("workspace folders changed")
	return nil
}

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
		parent := filepath.Dir(dir)
		if parent == dir {
			return p, nil
		}
		rest = append(rest, filepath.Base(dir))
		dir = parent
	}
}

// confine resolves the path of a file: URI and checks that it lies inside a workspace folder,
// after following links (a link inside the workspace that points out of it is refused, also for
// a file to be created under it; on Windows junctions too).
func (s *Server) confine(u string) (string, error) {
	if !strings.HasPrefix(u, "file:") {
		return "", fmt.Errorf("%s: not a file: URI", u)
	}
	resolved, err := resolvePath(filepath.Clean(uriPath(u)))
	if err != nil {
		return "", fmt.Errorf("%s: %w", u, err)
	}
	for _, root := range s.workspace().roots {
		if hostFlavor.within(resolved, root) { // as the platform compares paths (case, separators)
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

// openPaths indexes the open documents by their file's resolved path (its key), so that the editor's own
// URI and unsaved text are used for a file the agent names by path.
func (s *Server) openPaths() map[string]*document.Snapshot {
	byPath := map[string]*document.Snapshot{}
	for _, snap := range s.docs.All() {
		if strings.HasPrefix(snap.URI, "file:") {
			p := filepath.Clean(uriPath(snap.URI))
			if r, err := realPath(p); err == nil {
				p = r
			}
			byPath[hostFlavor.key(p)] = snap
		}
	}
	return byPath
}

// openByPath finds the open document whose file is path, however the editor spelled its URI.
func (s *Server) openByPath(path string) (*document.Snapshot, bool) {
	snap, ok := s.openPaths()[hostFlavor.key(path)]
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
		if snap, ok := open[hostFlavor.key(p)]; ok {
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
