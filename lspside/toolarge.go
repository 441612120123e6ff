package lspside

import (
	"context"
	"fmt"
	"unicode/utf8"

	"go.lsp.dev/protocol"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/document"
)

// DefaultMaxMessageBytes is the largest message an agent is sent unless Config.MaxMessageBytes
// says otherwise: the ACP Go SDK reads one message per line, and a line of more than 10 MiB ends
// its connection. A document whose text does not fit (document/didOpen, or document/didChange for
// a full-sync agent) is kept from the agent: without this, opening one large log file would end the
// agent, and the replay after every restart would end it again.
const DefaultMaxMessageBytes = 10 << 20

// envelopeBytes covers what a document message carries besides the text: method, URI, language.
const envelopeBytes = 4 << 10

func (s *Server) maxMessageBytes() int {
	if s.cfg.MaxMessageBytes > 0 {
		return s.cfg.MaxMessageBytes
	}
	return DefaultMaxMessageBytes
}

// fitsAgent reports whether a message that carries snap's whole text fits in what the agent reads.
// A text longer than the limit is refused at once, without reading it.
func (s *Server) fitsAgent(snap *document.Snapshot) bool {
	limit := s.maxMessageBytes() - envelopeBytes - len(snap.URI)
	return snap.Mapper.Len() <= limit && jsonStringBytes(snap.Text()) <= limit
}

// jsonStringBytes returns the length of s as a JSON string the way encoding/json writes it,
// quotes included: "\n", "\"" and the like take two bytes, other control bytes, "<", ">", "&",
// U+2028, U+2029 and each invalid byte six.
func jsonStringBytes(s string) int {
	n := 2
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f':
				n += 2
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				n += 6
			default:
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1, r == '\u2028', r == '\u2029':
			n += 6
		default:
			n += size
		}
		i += size
	}
	return n
}

// withhold keeps a document from the agent and tells the user once. The caller holds fwd.
func (s *Server) withhold(ctx context.Context, snap *document.Snapshot) {
	if s.reqs.withhold(snap.URI) {
		return
	}
	s.log.Warn().Str("uri", snap.URI).Int("bytes", snap.Mapper.Len()).Int("limit", s.maxMessageBytes()).Msg("document too large for the agent; not sent")
	s.logMessage(ctx, protocol.MessageTypeWarning, fmt.Sprintf(
		"acp-lsp-bridge: %s (%.1f MB) is too large to send to the agent (messages of at most %.1f MB, --max-message-size); no suggestions for it.",
		snap.URI, float64(snap.Mapper.Len())/1e6, float64(s.maxMessageBytes())/1e6))
}

// isWithheld reports whether a document is kept from the agent.
func (s *Server) isWithheld(uri string) bool { return s.reqs.isWithheld(uri) }

// release forgets that a document was kept from the agent (closed, or small enough again).
func (s *Server) release(uri string) { s.reqs.release(uri) }
