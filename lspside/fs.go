package lspside

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	acp "github.com/coder/acp-go-sdk"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/document"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/translate"
)

// agentRequest answers the agent's requests to the client: the ACP client methods the bridge
// advertises.
func (s *Server) agentRequest(ctx context.Context, method string, params json.RawMessage) (any, *acp.RequestError) {
	switch method {
	case acp.ClientMethodFsReadTextFile:
		var p acp.ReadTextFileRequest
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, acp.NewInvalidParams(map[string]any{"error": err.Error()})
		}
		return s.readTextFile(p)
	case acp.ClientMethodFsWriteTextFile:
		var p acp.WriteTextFileRequest
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, acp.NewInvalidParams(map[string]any{"error": err.Error()})
		}
		return s.writeTextFile(ctx, p)
	case methodOpenDocuments, methodRecentDocuments, methodActiveDocument:
		return s.editorState(method, params)
	case acp.ClientMethodSessionRequestPermission:
		var p acp.RequestPermissionRequest
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, acp.NewInvalidParams(map[string]any{"error": err.Error()})
		}
		return s.requestPermission(ctx, p)
	}
	return nil, acp.NewMethodNotFound(method)
}

func fsError(path string, err error) *acp.RequestError {
	msg := err.Error()
	if errors.Is(err, fs.ErrNotExist) {
		msg = path + ": no such file or directory" // the same words on every platform
	}
	return acp.NewInvalidParams(map[string]any{"path": path, "error": msg})
}

// confinePath checks an absolute path the agent names against the workspace folders, after
// following symlinks, and returns the resolved path, the file's URI, and its open document: when
// the file is open, the editor's own URI and snapshot (nil otherwise).
func (s *Server) confinePath(path string) (resolved, u string, open *document.Snapshot, err error) {
	if !filepath.IsAbs(path) {
		return "", "", nil, fmt.Errorf("not an absolute path")
	}
	resolved, err = s.confine(string(uri.File(filepath.Clean(path))))
	if err != nil {
		return "", "", nil, errOutsideWorkspace
	}
	if snap, ok := s.openByPath(resolved); ok {
		return resolved, snap.URI, snap, nil
	}
	return resolved, string(uri.File(resolved)), nil, nil
}

// readTextFile answers fs/read_text_file: the editor's unsaved buffer when the file is open,
// otherwise the file on disk; inside the workspace only. line is one-based; limit counts lines.
func (s *Server) readTextFile(p acp.ReadTextFileRequest) (any, *acp.RequestError) {
	resolved, _, snap, err := s.confinePath(p.Path)
	if err != nil {
		s.log.Warn().Str("dir", "agent→bridge").Str("path", p.Path).Err(err).Msg("fs/read_text_file refused")
		return nil, fsError(p.Path, err)
	}
	var text string
	if snap != nil {
		text = snap.Text()
	} else {
		b, err := readTextFile(resolved, maxTargetFileSize)
		if err != nil {
			return nil, fsError(p.Path, err)
		}
		text = string(b)
	}
	if p.Line != nil || p.Limit != nil {
		if text, err = lineSlice(text, p.Line, p.Limit); err != nil {
			return nil, fsError(p.Path, err)
		}
	}
	return acp.ReadTextFileResponse{Content: text}, nil
}

// lineSlice returns the lines [line, line+limit) of text, line one-based, line endings kept.
func lineSlice(text string, line, limit *int) (string, error) {
	m := encoding.NewMapper(text)
	first := 0
	if line != nil {
		if *line < 1 {
			return "", fmt.Errorf("line %d: lines are numbered from 1", *line)
		}
		first = *line - 1
	}
	if first >= m.LineCount() {
		return "", nil
	}
	end := len(text)
	if limit != nil {
		if *limit < 0 {
			return "", fmt.Errorf("limit %d is negative", *limit)
		}
		if last := first + *limit; last < m.LineCount() {
			end = m.LineStart(last)
		}
	}
	return text[m.LineStart(first):end], nil
}

// writeTextFile answers fs/write_text_file through workspace/applyEdit, so that the editor
// performs the write on its buffer and shows it; inside the workspace only. A file that does not
// exist is created when the editor can (documentChanges with the create operation).
func (s *Server) writeTextFile(ctx context.Context, p acp.WriteTextFileRequest) (any, *acp.RequestError) {
	resolved, u, snap, err := s.confinePath(p.Path)
	if err != nil {
		s.log.Warn().Str("dir", "agent→bridge").Str("path", p.Path).Err(err).Msg("fs/write_text_file refused")
		return nil, fsError(p.Path, err)
	}
	editor := s.editorEncoding()
	caps := s.clientCaps()
	var edit any
	if snap != nil {
		edit, err = translate.ToWorkspaceEdit([]translate.FileEdit{wholeText(snapshotTarget(snap), p.Content)}, editor, caps.documentChanges)
	} else if b, rerr := readTextFile(resolved, maxTargetFileSize); rerr == nil {
		t := target{uri: u, mapper: encoding.NewMapper(string(b))}
		edit, err = translate.ToWorkspaceEdit([]translate.FileEdit{wholeText(t, p.Content)}, editor, caps.documentChanges)
	} else if errors.Is(rerr, fs.ErrNotExist) {
		if !caps.documentChanges || !caps.createFiles {
			return nil, fsError(p.Path, errors.New("the file does not exist and the editor cannot create files (workspaceEdit.resourceOperations)"))
		}
		// Structs, not maps: the JSON encoder does not order map keys, and the editor's log (and
		// the tests) should read the same every time.
		type createFile struct {
			Kind string `json:"kind"`
			URI  string `json:"uri"`
		}
		edit = struct {
			DocumentChanges []any `json:"documentChanges"`
		}{[]any{
			createFile{Kind: "create", URI: u},
			translate.TextDocumentEdit{TextDocument: translate.VersionedDocument{URI: u}, Edits: []protocol.TextEdit{{NewText: p.Content}}},
		}}
	} else {
		return nil, fsError(p.Path, rerr)
	}
	if err != nil {
		return nil, fsError(p.Path, err)
	}
	var res struct {
		Applied       bool   `json:"applied"`
		FailureReason string `json:"failureReason"`
	}
	label := "Agent writes " + filepath.Base(resolved)
	if err := s.callEditor(ctx, s.cfg.ClientWait, "workspace/applyEdit", map[string]any{"label": label, "edit": edit}, &res); err != nil {
		return nil, acp.NewInternalError(map[string]any{"path": p.Path, "error": "the write was not applied: " + err.Error()})
	}
	if !res.Applied {
		reason := strings.TrimSpace(res.FailureReason)
		if reason == "" {
			reason = "no reason given"
		}
		return nil, acp.NewInternalError(map[string]any{"path": p.Path, "error": "the editor refused the write: " + reason})
	}
	return acp.WriteTextFileResponse{}, nil
}

// wholeText is the edit that replaces all of a document's text.
func wholeText(t target, content string) translate.FileEdit {
	return translate.FileEdit{URI: t.uri, Version: t.version, Mapper: t.mapper, Spans: []translate.Span{{Start: 0, End: t.mapper.Len(), Text: content}}}
}
