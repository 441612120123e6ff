package lspside

import (
	"bytes"
	"io"
	"strconv"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// inlineResult encodes the result of textDocument/inlineCompletion. The items the bridge makes
// (plain text over a range, with the accept command) are written by hand: they go out on every
// request, in a process whose caches the agent's turn has just emptied, where the protocol
// package's encoder walked its type tables for the arguments and the text union, several times
// the cost of these appends. Anything else is the protocol package's (inlinewire_test.go checks
// that both write the same bytes).
func inlineResult(items []protocol.InlineCompletionItem) (any, error) {
	b := make([]byte, 0, 96+len(items)*160)
	b = append(b, `{"items":[`...)
	for i, it := range items {
		text, ok := it.InsertText.(protocol.String)
		if !ok || it.FilterText != nil || it.Command.Tooltip != nil {
			return result(protocol.InlineCompletionList{Items: items})
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"insertText":`...)
		b, _ = jsontext.AppendQuote(b, string(text))
		if r := it.Range; r != nil {
			b = append(b, `,"range":{"start":`...)
			b = appendLSPPosition(b, r.Start)
			b = append(b, `,"end":`...)
			b = appendLSPPosition(b, r.End)
			b = append(b, '}')
		}
		if c := it.Command; c.Title != "" || c.Command != "" || len(c.Arguments) > 0 {
			b = append(b, `,"command":{"title":`...)
			b, _ = jsontext.AppendQuote(b, c.Title)
			b = append(b, `,"command":`...)
			b, _ = jsontext.AppendQuote(b, c.Command)
			if len(c.Arguments) > 0 {
				b = append(b, `,"arguments":[`...)
				for j, a := range c.Arguments {
					if j > 0 {
						b = append(b, ',')
					}
					if bytes.ContainsAny(a, " \t\r\n") || !a.IsValid() {
						// Not compact, or not JSON: the encoder's to write (it compacts).
						return result(protocol.InlineCompletionList{Items: items})
					}
					b = append(b, a...)
				}
				b = append(b, ']')
			}
			b = append(b, '}')
		}
		b = append(b, '}')
	}
	return jsonrpc2.RawMessage(append(b, "]}"...)), nil
}

func appendLSPPosition(b []byte, p protocol.Position) []byte {
	b = append(b, `{"line":`...)
	b = strconv.AppendUint(b, uint64(p.Line), 10)
	b = append(b, `,"character":`...)
	b = strconv.AppendUint(b, uint64(p.Character), 10)
	return append(b, '}')
}

// decodePositionParams reads the params of a position request by hand (see inlineResult for
// why): objects, numbers that are integers, strings that are UTF-8, names in any case, members it
// does not know skipped. ok is false for anything else, which the generic decoder then reads, and
// reports as it does.
func decodePositionParams(raw []byte) (p positionParams, ok bool) {
	if len(raw) > maxHandParams {
		return p, false
	}
	r := paramsReaders.Get().(*paramsReader)
	defer paramsReaders.Put(r)
	r.in.Reset(raw)
	dec := r.dec
	dec.Reset(&r.in, jsontext.AllowDuplicateNames(true))
	ok = readObject(dec, func(name string) bool {
		switch {
		case nameIs(name, "textDocument"):
			if dec.PeekKind() == 'n' { // null empties it; an object merges into it
				p.TextDocument.URI, p.TextDocument.Version = "", nil
			}
			return readObject(dec, func(name string) bool {
				switch {
				case nameIs(name, "uri"):
					return readString(dec, &p.TextDocument.URI)
				case nameIs(name, "version"):
					v, err := dec.ReadValue()
					p.TextDocument.Version = append(jsontext.Value(nil), v...)
					return err == nil
				}
				return dec.SkipValue() == nil
			})
		case nameIs(name, "position"):
			if dec.PeekKind() == 'n' {
				p.Position = lspPosition{}
			}
			return readObject(dec, func(name string) bool {
				switch {
				case nameIs(name, "line"):
					return readInt(dec, &p.Position.Line)
				case nameIs(name, "character"):
					return readInt(dec, &p.Position.Character)
				}
				return dec.SkipValue() == nil
			})
		case nameIs(name, "context"):
			if dec.PeekKind() == 'n' {
				p.Context = nil
				return dec.SkipValue() == nil
			}
			if p.Context == nil {
				p.Context = &struct {
					TriggerKind int `json:"triggerKind"`
				}{}
			}
			return readObject(dec, func(name string) bool {
				if nameIs(name, "triggerKind") {
					return readInt(dec, &p.Context.TriggerKind)
				}
				return dec.SkipValue() == nil
			})
		}
		return dec.SkipValue() == nil
	})
	if ok {
		_, err := dec.ReadToken()
		ok = err == io.EOF // nothing after the params
	}
	return p, ok
}

// nameIs matches a member's name as the generic decoder does with LenientJSON: in any case, and
// with any '_' or '-' in it left out. Names are ASCII here (readObject hands the others on).
func nameIs(name, want string) bool {
	i := 0
	for j := 0; j < len(name); j++ {
		c := name[j]
		if c == '_' || c == '-' {
			continue
		}
		if i >= len(want) || lowerASCII(c) != lowerASCII(want[i]) {
			return false
		}
		i++
	}
	return i == len(want)
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// maxHandParams bounds the params read by hand: a position request's are a few hundred bytes,
// and a decoder kept between requests keeps the buffer its largest input needed.
const maxHandParams = 16 << 10

// paramsReader is a decoder over bytes, kept between requests.
type paramsReader struct {
	in  bytes.Reader
	dec *jsontext.Decoder
}

var paramsReaders = sync.Pool{New: func() any {
	r := &paramsReader{}
	r.dec = jsontext.NewDecoder(&r.in)
	return r
}}

// readObject reads an object, calling member for each member's name with the decoder at its
// value; null is an object with no members.
func readObject(dec *jsontext.Decoder, member func(name string) bool) bool {
	tok, err := dec.ReadToken()
	if err != nil || tok.Kind() == 'n' {
		return err == nil
	}
	if tok.Kind() != '{' {
		return false
	}
	for dec.PeekKind() != '}' {
		name, err := dec.ReadToken()
		if err != nil || !isASCII(name.String()) || !member(name.String()) {
			return false // a name that folds beyond ASCII is the generic decoder's to match
		}
	}
	_, err = dec.ReadToken()
	return err == nil
}

// readScalar reads a value of kind ('"' a string, '0' a number) or null (text is "" then).
func readScalar(dec *jsontext.Decoder, kind jsontext.Kind) (text string, ok bool) {
	tok, err := dec.ReadToken()
	switch {
	case err != nil:
		return "", false
	case tok.Kind() == 'n':
		return "", true
	}
	return tok.String(), tok.Kind() == kind
}

func readString(dec *jsontext.Decoder, s *string) bool {
	v, ok := readScalar(dec, '"')
	*s = v
	return ok
}

func readInt(dec *jsontext.Decoder, n *int) bool {
	v, ok := readScalar(dec, '0')
	if !ok || v == "" {
		*n = 0
		return ok
	}
	i, err := strconv.ParseInt(v, 10, 0)
	*n = int(i)
	return err == nil
}
