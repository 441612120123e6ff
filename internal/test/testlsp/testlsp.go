// Package testlsp is a second language server for the bridge's editor tests: it stands beside the
// bridge, as a language's own server (gopls, pyright, ...) does for users, and keeps a copy of
// every document from the editor's didOpen and incremental didChange, so that a test can check
// that the editor and both servers agree on the text.
//
// It picks the editor's most preferred position encoding (the first of
// general.positionEncodings), as LSP 3.17 asks of servers, and writes its copy of each document to
// a folder after every change: the file named by the document's base name.
package testlsp

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/textproto"
	"strconv"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/document"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testutil"
)

// Server is one connection's state.
type Server struct {
	// codeAction, when set, is the title of the code action the server offers for every range
	// (a language's own fix, beside the bridge's suggestions).
	codeAction string
	mirrorDir  string
	enc        encoding.Kind
	docs       map[string]*encoding.Mapper
	w          io.Writer
	log        io.Writer
}

type message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

type lspRange struct {
	Start, End struct{ Line, Character int }
}

// Serve speaks LSP on r and w until exit or the end of r, writing each document's text to
// mirrorDir after every change and a line per message to log. With codeAction, it offers a code
// action of that title for every range, at once.
func Serve(r io.Reader, w io.Writer, mirrorDir, codeAction string, log io.Writer) error {
	s := &Server{mirrorDir: mirrorDir, codeAction: codeAction, docs: map[string]*encoding.Mapper{}, w: w, log: log}
	tp := textproto.NewReader(bufio.NewReader(r))
	for {
		h, err := tp.ReadMIMEHeader()
		if err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
		n, err := strconv.Atoi(h.Get("Content-Length"))
		if err != nil {
			return fmt.Errorf("Content-Length: %w", err)
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(tp.R, body); err != nil {
			return err
		}
		var m message
		if err := json.Unmarshal(body, &m); err != nil {
			return err
		}
		if m.Method == "exit" {
			return nil
		}
		if err := s.handle(m); err != nil {
			fmt.Fprintf(s.log, "%s: %v\n", m.Method, err)
		}
	}
}

func (s *Server) reply(id json.RawMessage, result any) error {
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(s.w, "Content-Length: %d\r\n\r\n%s", len(b), b)
	return err
}

func (s *Server) handle(m message) error {
	fmt.Fprintf(s.log, "%s\n", m.Method)
	switch m.Method {
	case "initialize":
		var p struct {
			Capabilities struct {
				General struct {
					PositionEncodings []string `json:"positionEncodings"`
				} `json:"general"`
			} `json:"capabilities"`
		}
		if err := json.Unmarshal(m.Params, &p); err != nil {
			return err
		}
		s.enc = encoding.ClientPreferred(p.Capabilities.General.PositionEncodings)
		fmt.Fprintf(s.log, "positionEncoding %s\n", s.enc)
		caps := map[string]any{
			"positionEncoding": s.enc.String(),
			"textDocumentSync": map[string]any{"openClose": true, "change": 2},
		}
		if s.codeAction != "" {
			caps["codeActionProvider"] = true
		}
		return s.reply(m.ID, map[string]any{"capabilities": caps, "serverInfo": map[string]any{"name": "acp-test-lsp"}})
	case "textDocument/codeAction":
		if s.codeAction == "" {
			break
		}
		// A command-less action with an empty edit: applying it changes nothing.
		return s.reply(m.ID, []any{map[string]any{"title": s.codeAction, "kind": "quickfix", "edit": map[string]any{"changes": map[string]any{}}}})
	case "textDocument/didOpen":
		var p struct {
			TextDocument struct{ URI, Text string } `json:"textDocument"`
		}
		if err := json.Unmarshal(m.Params, &p); err != nil {
			return err
		}
		s.docs[p.TextDocument.URI] = encoding.NewMapper(p.TextDocument.Text)
		return s.write(p.TextDocument.URI)
	case "textDocument/didChange":
		var p struct {
			TextDocument   struct{ URI string } `json:"textDocument"`
			ContentChanges []struct {
				Range *lspRange `json:"range"`
				Text  string    `json:"text"`
			} `json:"contentChanges"`
		}
		if err := json.Unmarshal(m.Params, &p); err != nil {
			return err
		}
		doc, ok := s.docs[p.TextDocument.URI]
		if !ok {
			return fmt.Errorf("not open: %s", p.TextDocument.URI)
		}
		changes := make([]document.Change, len(p.ContentChanges))
		for i, c := range p.ContentChanges {
			changes[i].Text = c.Text
			if c.Range != nil {
				changes[i].Range = &encoding.Range{
					Start: encoding.Position{Line: c.Range.Start.Line, Character: c.Range.Start.Character},
					End:   encoding.Position{Line: c.Range.End.Line, Character: c.Range.End.Character},
				}
			}
		}
		doc, _, err := document.Apply(doc, changes, s.enc)
		if err != nil {
			return err
		}
		s.docs[p.TextDocument.URI] = doc
		return s.write(p.TextDocument.URI)
	case "textDocument/didClose":
		var p struct {
			TextDocument struct{ URI string } `json:"textDocument"`
		}
		if err := json.Unmarshal(m.Params, &p); err != nil {
			return err
		}
		delete(s.docs, p.TextDocument.URI)
	case "shutdown":
		return s.reply(m.ID, nil)
	}
	switch m.Method {
	case "initialize", "textDocument/didOpen", "textDocument/didChange", "textDocument/didClose", "shutdown":
	default:
		if m.ID != nil { // a request this server does not serve
			b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "method not found: " + m.Method}})
			_, err := fmt.Fprintf(s.w, "Content-Length: %d\r\n\r\n%s", len(b), b)
			return err
		}
	}
	return nil
}

// write replaces the mirror file of uri with its text.
func (s *Server) write(uri string) error {
	return testutil.WriteMirror(s.mirrorDir, uri, s.docs[uri].Text())
}
