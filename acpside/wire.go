package acpside

import (
	"strconv"

	acp "github.com/coder/acp-go-sdk"
	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// The bridge's own messages on the path of every suggestion (nes/suggest, nes/accept, nes/reject)
// are written by hand rather than by reflection: they go out on every request, in a process whose
// caches the agent's turn has just emptied, where the generic encoder's walk over its type
// tables cost several times the few appends below. Each writes what jsonv2.Marshal writes for
// the same value (wire_test.go compares them).

// appendMessage appends one JSON-RPC message, a line: a request when id (as on the wire) is set,
// else a notification; params is the encoded params.
func appendMessage(dst []byte, id, method string, params []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0",`...)
	if id != "" {
		dst = append(dst, `"id":`...)
		dst = append(dst, id...)
		dst = append(dst, ',')
	}
	dst = append(dst, `"method":`...)
	dst = appendString(dst, method)
	dst = append(dst, `,"params":`...)
	dst = append(dst, params...)
	return append(dst, "}\n"...)
}

// appendString appends s as a JSON string. Text that is not UTF-8 has each bad byte replaced with
// U+FFFD, as the encoder the SDK uses does.
func appendString(dst []byte, s string) []byte {
	dst, _ = jsontext.AppendQuote(dst, s)
	return dst
}

// appendSuggestParams appends the params of nes/suggest.
func appendSuggestParams(dst []byte, r *acp.UnstableSuggestNesRequest) ([]byte, error) {
	dst = append(dst, '{')
	if len(r.Meta) > 0 {
		meta, err := jsonv2.Marshal(r.Meta)
		if err != nil {
			return nil, err
		}
		dst = append(dst, `"_meta":`...)
		dst = append(append(dst, meta...), ',')
	}
	if r.Context != nil {
		ctx, err := jsonv2.Marshal(r.Context)
		if err != nil {
			return nil, err
		}
		dst = append(dst, `"context":`...)
		dst = append(append(dst, ctx...), ',')
	}
	dst = append(dst, `"position":`...)
	dst = appendPosition(dst, r.Position)
	if r.Selection != nil {
		dst = append(dst, `,"selection":{"end":`...)
		dst = appendPosition(dst, r.Selection.End)
		dst = append(dst, `,"start":`...)
		dst = appendPosition(dst, r.Selection.Start)
		dst = append(dst, '}')
	}
	dst = append(dst, `,"sessionId":`...)
	dst = appendString(dst, string(r.SessionId))
	dst = append(dst, `,"triggerKind":`...)
	dst = appendString(dst, string(r.TriggerKind))
	dst = append(dst, `,"uri":`...)
	dst = appendString(dst, r.Uri)
	dst = append(dst, `,"version":`...)
	dst = strconv.AppendInt(dst, int64(r.Version), 10)
	return append(dst, '}'), nil
}

func appendPosition(dst []byte, p acp.UnstablePosition) []byte {
	dst = append(dst, `{"character":`...)
	dst = strconv.AppendInt(dst, int64(p.Character), 10)
	dst = append(dst, `,"line":`...)
	dst = strconv.AppendInt(dst, int64(p.Line), 10)
	return append(dst, '}')
}

// appendEndParams appends the params of nes/accept (reason empty) or nes/reject: the suggestion
// is named by idKey ("id" in protocol version 1, "suggestionId" in version 2).
func appendEndParams(dst []byte, session acp.SessionId, idKey, id string, reason acp.UnstableNesRejectReason) []byte {
	dst = append(dst, '{')
	if idKey == "id" {
		dst = append(dst, `"id":`...)
		dst = appendString(dst, id)
		dst = append(dst, ',')
	}
	if reason != "" {
		dst = append(dst, `"reason":`...)
		dst = appendString(dst, string(reason))
		dst = append(dst, ',')
	}
	dst = append(dst, `"sessionId":`...)
	dst = appendString(dst, string(session))
	if idKey != "id" {
		dst = append(dst, `,"suggestionId":`...)
		dst = appendString(dst, id)
	}
	return append(dst, '}')
}
