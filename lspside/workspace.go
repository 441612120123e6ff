package lspside

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	acp "github.com/coder/acp-go-sdk"
	"go.lsp.dev/uri"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/document"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/workspace"
)

// Limits on the files the bridge reads from disk for the agent's suggestions.
const (
	maxSearchFileSize = 1 << 20 // files larger than this are skipped by a folder search
	maxTargetFileSize = 8 << 20 // a single file an edit, rename or jump names
	maxSearchFiles    = 20000   // files a folder search looks at
)

// workspaceFolder is a workspace folder as the editor names it.
type workspaceFolder struct {
	URI  string `json:"uri"`
	Name string `json:"name"`
}

// workspaceInfo is the workspace as the editor described it, computed at initialize and again on
// workspace/didChangeWorkspaceFolders, and read by everything that needs it: nes/start, the
// agent's working folder, the files the agent may read and the paths in the suggestion context.
type workspaceInfo struct {
	// folders are the editor's folders (or the one its root names), as it names them.
	folders []workspaceFolder
	start   acp.UnstableStartNesRequest // the folders, the workspace URI and its repository
	root    string                      // the local folder of the workspace URI, or ""
	// files confines the agent: the folders' paths and the exclusion globs.
	files *workspace.Workspace
}

// newWorkspace computes the workspace from the editor's root and folders: the workspace URI is
// rootUri, else the first folder, else rootPath; with no folders, it is the one folder.
func newWorkspace(rootURI, rootPath *string, folders []workspaceFolder, ex *workspace.Excludes) *workspaceInfo {
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
	var uris []string
	for _, f := range req.WorkspaceFolders {
		uris = append(uris, f.Uri)
	}
	ws.files = workspace.NewFromURIs(uris, ex)
	return ws
}

// workspace returns the workspace (empty before initialize).
func (s *Server) workspace() *workspaceInfo {
	if ws := s.ws.Load(); ws != nil {
		return ws
	}
	return &workspaceInfo{files: workspace.New(nil, nil)}
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
	// Notifications are handled one at a time: this is the only change of the workspace after
	// initialize.
	old := s.workspace()
	var kept []workspaceFolder
	for _, f := range old.folders {
		if !slices.ContainsFunc(p.Event.Removed, func(r workspaceFolder) bool { return r.URI == f.URI }) {
			kept = append(kept, f)
		}
	}
	for _, f := range p.Event.Added {
		if !slices.ContainsFunc(kept, func(k workspaceFolder) bool { return k.URI == f.URI }) {
			kept = append(kept, f)
		}
	}
	init := s.session().init
	ws := newWorkspace(init.RootURI, init.RootPath, kept, old.files.Excludes())
	ws.folders = kept
	s.ws.Store(ws)
	s.log.Info().Int("folders", len(kept)).Msg("workspace folders changed")
	return nil
}

// confine checks a URI the agent named (workspace.CheckURI): a plain file: URI of a path inside
// a workspace folder, links followed, and not kept from the agent.
func (s *Server) confine(u string) (workspace.Checked, error) {
	return s.workspace().files.CheckURI(u)
}

// recheck checks a file once more right before the editor is asked to write it
// (workspace/applyEdit): an open document is the editor's own; any other file must still be
// inside the workspace, by the same path, with no link swapped into it since it was checked. The
// editor then writes it by that path: what happens between this check and the editor's write is
// beyond the bridge (docs/security.md).
func (s *Server) recheck(u string) error {
	if _, open := s.docs.Get(u); open {
		return nil
	}
	p := uriPath(u)
	c, err := s.workspace().files.Check(p)
	if err != nil {
		return err
	}
	if workspace.Host.Key(c.Path()) != workspace.Host.Key(p) {
		return fmt.Errorf("%s: %w", c.Rel, workspace.ErrMoved)
	}
	return nil
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
			if r, err := workspace.RealPath(p); err == nil {
				p = r
			}
			byPath[workspace.Host.Key(p)] = snap
		}
	}
	return byPath
}

// openByPath finds the open document whose file is path, however the editor spelled its URI.
func (s *Server) openByPath(path string) (*document.Snapshot, bool) {
	snap, ok := s.openPaths()[workspace.Host.Key(path)]
	return snap, ok
}

func snapshotTarget(snap *document.Snapshot) target {
	v := snap.Version
	return target{uri: snap.URI, version: &v, mapper: snap.Mapper}
}

// readTarget returns the text of the document at u, which must lie inside the workspace (open in
// the editor or not) and not be kept from the agent: the open buffer first, then disk. Its URI is
// the editor's own for an open document, else built from the checked path.
func (s *Server) readTarget(u string) (target, error) {
	c, err := s.confine(u)
	if err != nil {
		return target{}, err
	}
	return s.checkedTarget(c, maxTargetFileSize)
}

// checkedTarget reads a checked file: the editor's buffer when it is open, else the file.
func (s *Server) checkedTarget(c workspace.Checked, limit int64) (target, error) {
	if snap, ok := s.openByPath(c.Real); ok {
		return snapshotTarget(snap), nil
	}
	b, err := s.workspace().files.ReadFile(c, limit)
	if err != nil {
		return target{}, fmt.Errorf("%s: %w", c.Rel, err)
	}
	return target{uri: c.URI(), mapper: encoding.NewMapper(string(b))}, nil
}

// searchTargets lists the documents a searchAndReplace over u covers: the requesting document
// (base) itself, or, inside the workspace only, the file u or every text file under the folder u
// (workspace.Walk: not in .git and other folders of tools, not excluded; binary files and files
// over 1 MiB skipped), open documents with their editor text.
func (s *Server) searchTargets(base *document.Snapshot, u string) ([]target, error) {
	if u == base.URI {
		return []target{snapshotTarget(base)}, nil
	}
	c, err := s.confine(u)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(c.Real)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.Rel, err)
	}
	if !st.IsDir() {
		t, err := s.checkedTarget(c, maxTargetFileSize)
		if err != nil {
			return nil, err
		}
		return []target{t}, nil
	}
	files := s.workspace().files
	open := s.openPaths() // once, not once per file
	var out []target
	for _, f := range files.Walk(c, maxSearchFiles) {
		if snap, ok := open[workspace.Host.Key(f.Real)]; ok {
			out = append(out, snapshotTarget(snap))
			continue
		}
		b, err := files.ReadFile(f, maxSearchFileSize)
		if err != nil {
			continue
		}
		out = append(out, target{uri: f.URI(), mapper: encoding.NewMapper(string(b))})
	}
	return out, nil
}
