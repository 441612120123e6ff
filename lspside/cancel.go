package lspside

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"go.lsp.dev/jsonrpc2"
)

// idKey names a request id the same way whether it comes from the request itself or from the id
// in a $/cancelRequest.
func idKey(id jsonrpc2.ID) string {
	if n, ok := id.Number(); ok {
		return "n:" + strconv.FormatInt(n, 10)
	}
	if s, ok := id.StringValue(); ok {
		return "s:" + s
	}
	return ""
}

// track registers a request that is about to run asynchronously and returns its context, which
// $/cancelRequest cancels, and the function to call when it is done.
func (s *Server) track(id jsonrpc2.ID) (context.Context, func()) { return s.calls.track(idKey(id)) }

// cancelRequest handles $/cancelRequest inline, ahead of anything queued: the cancelled request
// answers -32800 at once.
func (s *Server) cancelRequest(raw json.RawMessage) error {
	var p struct {
		ID json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return fmt.Errorf("bad params: %w", err)
	}
	var key string
	id := bytes.TrimSpace(p.ID)
	var str string
	if json.Unmarshal(id, &str) == nil {
		key = "s:" + str
	} else if n, err := strconv.ParseInt(string(id), 10, 64); err == nil {
		key = "n:" + strconv.FormatInt(n, 10)
	} else {
		return fmt.Errorf("bad params: id %s is neither a string nor an integer", id)
	}
	if s.calls.cancel(key) {
		s.log.Debug().Str("id", key).Msg("request cancelled by the editor")
	}
	return nil
}
