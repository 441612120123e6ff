package lspside

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	acp "github.com/coder/acp-go-sdk"
	"go.lsp.dev/protocol"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/document"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/translate"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/workspace"
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

// confinePath checks an absolute path the agent names (workspace.Check: inside the workspace
// folders after following links, not kept from the agent) and returns the checked file, its URI,
// and its open document: when the file is open, the editor's own URI and snapshot (nil
// otherwise); else the URI built from the checked path.
func (s *Server) confinePath(path string) (c workspace.Checked, u string, open *document.Snapshot, err error) {
	c, err = s.workspace().files.Check(path)
	if err != nil {
		return c, "", nil, err
	}
	if snap, ok := s.openByPath(c.Real); ok {
		return c, snap.URI, snap, nil
	}
	return c, c.URI(), nil, nil
}

// readTextFile answers fs/read_text_file: the editor's unsaved buffer when the file is open,
// otherwise the file on disk, opened so that it is the file that was checked; inside the
// workspace only, never a file kept from the agent. line is one-based; limit counts lines.
func (s *Server) readTextFile(p acp.ReadTextFileRequest) (any, *acp.RequestError) {
	c, _, snap, err := s.confinePath(p.Path)
	if err != nil {
		s.refused("fs/read_text_file", p.Path, err)
		return nil, fsError(p.Path, err)
	}
	var text string
	if snap != nil {
		text = snap.Text()
	} else {
		b, err := s.workspace().files.ReadFile(c, maxTargetFileSize)
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

// refused logs a file the agent asked for and did not get: a warning, or, for a file kept from it
// as a secret, the glob (never the file's text).
func (s *Server) refused(what, path string, err error) {
	ev := s.log.Warn().Str("dir", "agent→bridge").Str("path", path)
	var ex *workspace.ExcludedError
	if errors.As(err, &ex) {
		ev = ev.Str("glob", ex.Glob)
	}
	ev.Err(err).Msg(what + " refused")
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
	c, u, snap, err := s.confinePath(p.Path)
	if err != nil {
		s.refused("fs/write_text_file", p.Path, err)
		return nil, fsError(p.Path, err)
	}
	editor := s.editorEncoding()
	caps := s.clientCaps()
	var edit any
	if snap != nil {
		edit, err = translate.ToWorkspaceEdit([]translate.FileEdit{wholeText(snapshotTarget(snap), p.Content)}, editor, caps.documentChanges)
	} else if b, rerr := s.workspace().files.ReadFile(c, maxTargetFileSize); rerr == nil {
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
	label := "Agent writes " + workspace.Host.Base(c.Real)
	if err := s.recheck(u); err != nil {
		s.refused("fs/write_text_file", p.Path, err)
		return nil, fsError(p.Path, err)
	}
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
