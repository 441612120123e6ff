package nesagent

import (
	"context"
	"strings"
	"time"
	"unicode/utf8"
)

// The reasons an engine can give for a failure of the service behind it (a model's server, a
// hosted API). The agent sends them as the error's data.reason, with data.retryAfterMs for a
// pause, so that a client tells the user what to do rather than show an error per keystroke; the
// bridge's reading of them is in docs/surfaces.md.
const (
	// ReasonCredentialsRefused: the service refused the credentials (HTTP 401 or 403). Asking
	// again will not help until the user changes them.
	ReasonCredentialsRefused = "credentials_refused"
	// ReasonRedirectRefused: the service sent the request elsewhere (another scheme, host or
	// port), and the agent did not follow. The user must name the right address.
	ReasonRedirectRefused = "redirect_refused"
	// ReasonRateLimited: the service asked for a pause (HTTP 429); RetryAfter says how long.
	ReasonRateLimited = "rate_limited"
	// ReasonBackendTimeout: the service did not answer in the time the agent gives it.
	ReasonBackendTimeout = "backend_timeout"
	// ReasonBackendUnreachable: nothing answers at the service's address (the connection was
	// refused, the host is not found, no route to it): the user must start the server or name
	// the right address. Asking again helps once it runs.
	ReasonBackendUnreachable = "backend_unreachable"
	// ReasonBackendError: the service failed (an error status, an unreadable answer, a broken
	// connection);
	// RetryAfter, when set, is how long the agent waits before asking it again.
	ReasonBackendError = "backend_error"
)

// BackendError is an engine's error that concerns the service behind it. Its message is what the
// user reads: say what failed and what to change.
type BackendError struct {
	Reason     string
	RetryAfter time.Duration
	Err        error
}

func (e *BackendError) Error() string { return e.Err.Error() }
func (e *BackendError) Unwrap() error { return e.Err }

// RoundUp is d for a person, as a pause is told (RetryAfter): whole seconds, at least one.
func RoundUp(d time.Duration) time.Duration {
	return max(time.Second, (d + time.Second - 1).Truncate(time.Second))
}

// Quiet is why an engine that had an answer chose not to show it (the model agent's quality gate,
// an answer it could not read): the agent answers with no suggestion and says why in the result's
// _meta[QuietMetaKey] ({"rule", "why"}), for a client to tell a user who asked, and for eval to
// count.
type Quiet struct {
	// Rule names the rule that kept the answer back, short and stable ("undo", "rewrite").
	Rule string
	// Why says it for a person, in one line.
	Why string
}

// Reasoned is implemented by engines that say why they have no suggestion; the agent then uses
// SuggestWithReason instead of Suggest.
type Reasoned interface {
	SuggestWithReason(ctx context.Context, req Request) ([]Suggestion, *Quiet, error)
}

// QuietMetaKey is the key of a nes/suggest result's _meta under which the agent says why it has
// no suggestion (Quiet).
const QuietMetaKey = "acp-lsp-bridge/quiet"

// GrowingMetaKey is the key of a nes/suggest result's _meta that is true when the model is still
// writing the answer its suggestion is from: a nes/suggest at the same version and position is
// answered once more of the answer is written (everything written so far, as one suggestion), and
// once it has ended with the whole answer, without the key. A client that shows the suggestion
// asks again to show the rest as it comes (docs/model-agent.md).
const GrowingMetaKey = "acp-lsp-bridge/growing"

// maxErrorBytes bounds the text of an error the agent sends.
const maxErrorBytes = 1000

// ErrorText is s as an agent may send it in an error: valid UTF-8, control characters other than
// tab and line breaks shown as \xNN, at most maxErrorBytes long (cut at a character, with "…").
func ErrorText(s string) string { return CleanText(s, maxErrorBytes) }

// CleanText is s as it may go into a message for a person: invalid UTF-8 as U+FFFD, control
// characters other than tab and line breaks (NUL, escape sequences) written as \xNN, and at most
// limit bytes, cut at a character with "…" (no limit when limit <= 0).
func CleanText(s string, limit int) string {
	clean := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 && c != '\t' && c != '\n' && c != '\r' || c == 0x7f || c >= 0x80 {
			clean = false
			break
		}
	}
	if !clean {
		var b strings.Builder
		for i := 0; i < len(s); {
			r, n := utf8.DecodeRuneInString(s[i:])
			switch {
			case r == utf8.RuneError && n == 1:
				b.WriteRune(utf8.RuneError)
			case r < 0x20 && r != '\t' && r != '\n' && r != '\r', r == 0x7f, r >= 0x80 && r < 0xa0:
				b.WriteString(`\x`)
				b.WriteByte("0123456789abcdef"[r>>4&0xf])
				b.WriteByte("0123456789abcdef"[r&0xf])
			default:
				b.WriteString(s[i : i+n])
			}
			i += n
			if limit > 0 && b.Len() > limit+8 {
				break
			}
		}
		s = b.String()
	}
	if limit > 0 && len(s) > limit {
		n := limit
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n] + "…"
	}
	return s
}
