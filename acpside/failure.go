package acpside

import (
	"bytes"
	"errors"
	"time"

	acp "github.com/coder/acp-go-sdk"
	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// The reasons an agent's error may give for a failure of the service behind it (a model's server,
// a hosted API), as data.reason; the bridge's own agents give them (nesagent), and any agent may
// (docs/surfaces.md).
const (
	ReasonCredentialsRefused = "credentials_refused"
	ReasonRedirectRefused    = "redirect_refused"
	ReasonRateLimited        = "rate_limited"
	ReasonBackendTimeout     = "backend_timeout"
	ReasonBackendError       = "backend_error"
	ReasonBackendUnreachable = "backend_unreachable"
)

// maxRetryAfter bounds the pause an agent may ask for (data.retryAfterMs).
const maxRetryAfter = 10 * time.Minute

// Failure is what an agent's error says of the service behind it.
type Failure struct {
	Reason string
	// RetryAfter is the pause the agent asked for before it is asked again (0: none), at most
	// maxRetryAfter.
	RetryAfter time.Duration
	// Words is the error's text as the agent wrote it: untrusted, to be cleaned before a person
	// reads it.
	Words string
}

// BackendFailure reads the reason of an agent's error, when it gives one of the reasons above.
func BackendFailure(err error) (Failure, bool) {
	var re *acp.RequestError
	if !errors.As(err, &re) {
		return Failure{}, false
	}
	m, _ := re.Data.(map[string]any)
	reason, _ := m["reason"].(string)
	switch reason {
	case ReasonCredentialsRefused, ReasonRedirectRefused, ReasonRateLimited, ReasonBackendTimeout, ReasonBackendError, ReasonBackendUnreachable:
	default:
		return Failure{}, false
	}
	f := Failure{Reason: reason, Words: ErrorWords(err)}
	if ms, ok := m["retryAfterMs"].(float64); ok && ms > 0 {
		f.RetryAfter = maxRetryAfter
		if ms < float64(maxRetryAfter/time.Millisecond) {
			f.RetryAfter = time.Duration(ms) * time.Millisecond
		}
	}
	return f, true
}

// ErrorWords is what an agent's error says, for a person: its data.error (or data.message) when
// that is text, else its message; for an error that is not the agent's, err's text. Untrusted: it
// is to be cleaned and bounded before it reaches a person or a log.
func ErrorWords(err error) string {
	var re *acp.RequestError
	if !errors.As(err, &re) {
		return err.Error()
	}
	if m, ok := re.Data.(map[string]any); ok {
		for _, k := range []string{"error", "message", "details"} {
			if s, ok := m[k].(string); ok && s != "" {
				return s
			}
		}
	}
	if s, ok := re.Data.(string); ok && s != "" {
		return re.Message + ": " + s
	}
	return re.Message
}

// Quiet is what an agent said of why it has no suggestion: the _meta["acp-lsp-bridge/quiet"] of
// its nes/suggest result, {"rule", "why"} (the bridge's own agents say it when their model's
// answer was kept back; docs/surfaces.md). Untrusted: to be cleaned before a person reads it.
type Quiet struct {
	Rule, Why string
}

// quietKey is the _meta key of Quiet.
const quietKey = "acp-lsp-bridge/quiet"

// growingKey is the _meta key of an answer whose suggestions its model is still writing
// (Agent.SuggestGrowing).
const growingKey = "acp-lsp-bridge/growing"

// growingNote reads, from a whole answer, whether its _meta says it is growing.
func growingNote(line []byte) bool {
	if !bytes.Contains(line, []byte(growingKey)) {
		return false
	}
	var m struct {
		Result *struct {
			Meta map[string]jsontext.Value `json:"_meta"`
		} `json:"result"`
	}
	if jsonv2.Unmarshal(line, &m, LenientJSON) != nil || m.Result == nil {
		return false
	}
	var growing bool
	return jsonv2.Unmarshal(m.Result.Meta[growingKey], &growing) == nil && growing
}

// quietNote reads Quiet from an answer with no suggestion: the whole message when envelope is
// set, else its result. nil when the agent said nothing of why.
func quietNote(data []byte, envelope bool) *Quiet {
	if !bytes.Contains(data, []byte(quietKey)) {
		return nil
	}
	// Other keys of _meta may hold anything: only this one is read.
	type result struct {
		Meta map[string]jsontext.Value `json:"_meta"`
	}
	var r result
	if envelope {
		var m struct {
			Result *result `json:"result"`
		}
		if jsonv2.Unmarshal(data, &m, LenientJSON) != nil || m.Result == nil {
			return nil
		}
		r = *m.Result
	} else if jsonv2.Unmarshal(data, &r, LenientJSON) != nil {
		return nil
	}
	var q struct {
		Rule string `json:"rule"`
		Why  string `json:"why"`
	}
	raw, ok := r.Meta[quietKey]
	if !ok || jsonv2.Unmarshal(raw, &q, LenientJSON) != nil || q.Rule == "" && q.Why == "" {
		return nil
	}
	return &Quiet{Rule: q.Rule, Why: q.Why}
}
