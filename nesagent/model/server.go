package model

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/workspace"
)

// What the agent keeps to itself about its model server, across requests: the server is trusted
// with the user's code and key only at the address the user named, and what it says is bounded
// and cleaned before it reaches a log, the bridge or the editor (docs/security.md, "The model
// server").

// maxErrorText bounds the text of an error the server gave (its error message, or the start of
// its body) in the agent's messages.
const maxErrorText = 300

// maxPause bounds a pause the server asks for (Retry-After) or the backoff after its failures: a
// server cannot silence the agent for longer.
const maxPause = 5 * time.Minute

// backoffBase and backoffMax shape the pause after server errors in a row: the first waits
// backoffBase (half to all of it, at random), each further one twice as long, up to backoffMax.
const (
	backoffBase = 500 * time.Millisecond
	backoffMax  = 30 * time.Second
)

// sameOrigin reports whether u is at the scheme, host and port of origin (a port left out is
// the scheme's own).
func sameOrigin(u, origin *url.URL) bool {
	port := func(u *url.URL) string {
		if p := u.Port(); p != "" {
			return p
		}
		if strings.EqualFold(u.Scheme, "https") {
			return "443"
		}
		return "80"
	}
	return strings.EqualFold(u.Scheme, origin.Scheme) && strings.EqualFold(u.Hostname(), origin.Hostname()) && port(u) == port(origin)
}

// redirectError is a redirect the agent refused to follow.
type redirectError struct {
	status   string // the redirect's status, "307 Temporary Redirect"
	from, to string // redacted
}

func (e *redirectError) Error() string {
	return fmt.Sprintf("the server sent the request (%s) to %s, which is not the server --model-url names: not followed, and nothing was sent there", e.status, e.to)
}

// guardedClient is base (or a client of its own) that follows a redirect only to the scheme, host
// and port of the request it follows from: the user's key and code go nowhere else. Go's own
// client would keep the Authorization header for another port of the same host.
func guardedClient(base *http.Client) *http.Client {
	c := &http.Client{}
	if base != nil {
		*c = *base
	}
	inner := c.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		first := via[0]
		if !sameOrigin(req.URL, first.URL) {
			status := ""
			if req.Response != nil {
				status = req.Response.Status
			}
			return &redirectError{status: status, from: redacted(first.URL.String()), to: redacted(req.URL.String())}
		}
		if len(via) >= 5 {
			return errors.New("the server redirected the request 5 times")
		}
		if inner != nil {
			return inner(req, via)
		}
		return nil
	}
	return c
}

// errClearProxy is the error of a request with the key that a proxy would carry in clear.
var errClearProxy = errors.New("the proxy the environment names for http:// (HTTP_PROXY) would get the API key in clear, so nothing was sent; use https://, or add the server's host to NO_PROXY")

// noClearProxy is c, whose requests over plain http:// never go through a proxy: those carry the
// user's key, which the proxy would read. Such a request fails (errClearProxy) rather than go
// around a proxy the user set. A client whose transport is not an *http.Transport is c itself.
func noClearProxy(c *http.Client) *http.Client {
	var t *http.Transport
	switch rt := c.Transport.(type) {
	case nil:
		t = http.DefaultTransport.(*http.Transport).Clone()
	case *http.Transport:
		t = rt.Clone()
	default:
		return c
	}
	proxy := t.Proxy
	if proxy == nil {
		return c
	}
	t.Proxy = func(req *http.Request) (*url.URL, error) {
		p, err := proxy(req)
		if err == nil && p != nil && strings.EqualFold(req.URL.Scheme, "http") {
			return nil, errClearProxy
		}
		return p, err
	}
	out := *c
	out.Transport = t
	return &out
}

// scrubber removes the user's key from text that came from the server or names a request.
// secrets are the key's forms a server may quote whole: the key, URL-encoded (as a query or a
// path), in base64 (with and without padding, standard and URL-safe, as Basic credentials carry
// it), and without a "Bearer " the user's variable may hold before it. host is the server's own
// host name (from --model-url): the user's words, never masked for a part of the key it holds by
// chance, so that a failure to reach it reads as one.
type scrubber struct {
	key     string
	secrets []string
	host    string
	// written are the key's runs of eight characters as nesagent.CleanText writes them, those
	// it writes otherwise (a control character written out as \x10).
	written []string
}

func newScrubber(key string) scrubber { return newHostScrubber(key, "") }

// newHostScrubber is newScrubber for the server at host.
func newHostScrubber(key, host string) scrubber {
	if key == "" {
		return scrubber{}
	}
	s := scrubber{key: key, host: host}
	seen := map[string]bool{}
	add := func(form string) {
		if form != "" && !seen[form] {
			seen[form] = true
			s.secrets = append(s.secrets, form)
		}
	}
	forms := []string{key}
	if rest, ok := cutFold(strings.TrimSpace(key), "Bearer "); ok {
		forms = append(forms, strings.TrimSpace(rest))
	}
	for _, k := range forms {
		add(k)
		add(url.QueryEscape(k))
		add(url.PathEscape(k))
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
			add(enc.EncodeToString([]byte(k)))
			add(enc.EncodeToString([]byte(":" + k))) // Basic credentials with no user
		}
	}
	// The longest first: a form that holds another is taken out whole.
	sort.Slice(s.secrets, func(i, j int) bool { return len(s.secrets[i]) > len(s.secrets[j]) })
	if w := nesagent.CleanText(key, 0); w != key {
		s.written = append(s.written, w)
		for i := 0; i+8 <= len(key); i++ {
			if w := nesagent.CleanText(key[i:i+8], 0); w != key[i:i+8] && w != "" {
				s.written = append(s.written, w)
			}
		}
	}
	return s
}

// cutFold is strings.CutPrefix, the prefix's case aside.
func cutFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

// clean is text as it may reach a log or a person: the key removed, where whole or in part (a
// server that says "Incorrect API key provided: sk-abcd…wxyz" quotes part of it), then cleaned
// (nesagent.CleanText) and cut to limit bytes.
func (s scrubber) clean(text string, limit int) string {
	// A key is cut out before the text is: a key across the cut would leave a part behind.
	if len(text) > 64*limit {
		text = text[:64*limit]
	}
	text = s.scrub(text)
	// Writing a control character out (\x10) can make, with what follows it, a run of the key's
	// characters: the key is taken out again from the text as it will be read.
	text = s.scrub(nesagent.CleanText(text, 0))
	// A key holding control characters is read with them written out: its parts are looked for
	// as they are written too.
	for _, frag := range s.written {
		text = scrubWords(text, frag)
	}
	return nesagent.CleanText(text, limit)
}

// scrub takes the key out of text, in each of its forms whole, and in part (scrubKey).
func (s scrubber) scrub(text string) string {
	if s.key == "" {
		return text
	}
	for _, k := range s.secrets {
		text = strings.ReplaceAll(text, k, "[key]")
	}
	if s.host == "" || !strings.Contains(text, s.host) {
		return scrubKey(text, s.key)
	}
	// The server's host name is set aside while parts of the key are looked for, and put back.
	parts := strings.Split(text, s.host)
	for i, p := range parts {
		parts[i] = scrubKey(p, s.key)
	}
	return strings.Join(parts, s.host)
}

// scrubErr is err with the key out of its text: err itself when its text holds none of it, else
// an error of the scrubbed text, of the same nesagent.BackendError reason.
func (s scrubber) scrubErr(err error) error {
	if err == nil || s.key == "" {
		return err
	}
	text := err.Error()
	clean := s.scrub(text)
	if clean == text {
		return err
	}
	var be *nesagent.BackendError
	if errors.As(err, &be) {
		return &nesagent.BackendError{Reason: be.Reason, RetryAfter: be.RetryAfter, Err: errors.New(clean)}
	}
	return errors.New(clean)
}

// scrubKey replaces key in text by "[key]", and also every word (a run of characters other than
// spaces, quotes, brackets and URL separators) that holds eight or more of the key's characters
// in a row: a service that quotes a key in part ("sk-proj-****…wxyz") loses the whole word.
func scrubKey(text, key string) string {
	if key == "" {
		return text
	}
	text = strings.ReplaceAll(text, key, "[key]")
	const part = 8
	if len(key) < part {
		return text
	}
	for i := 0; i+part <= len(key); i++ {
		text = scrubWords(text, key[i:i+part])
	}
	return text
}

// scrubWords replaces every word of text that holds frag by "[key]".
func scrubWords(text, frag string) string {
	for {
		at := strings.Index(text, frag)
		if at < 0 {
			return text
		}
		start, end := at, at+len(frag)
		for start > 0 && !isWordEnd(text[start-1]) {
			start--
		}
		for end < len(text) && !isWordEnd(text[end]) {
			end++
		}
		text = text[:start] + "[key]" + text[end:]
	}
}

// scrubHandler is a log handler that takes the key out of every line's message and values before
// inner writes it: the last guard of the agent's log (stderr, which the bridge's log and --trace
// carry), whatever a line quotes.
type scrubHandler struct {
	inner slog.Handler
	s     scrubber
}

// scrubbedLog is log with the key kept out of it (scrubHandler); log itself without a key.
func scrubbedLog(log *slog.Logger, s scrubber) *slog.Logger {
	if s.key == "" {
		return log
	}
	return slog.New(scrubHandler{inner: log.Handler(), s: s})
}

func (h scrubHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.inner.Enabled(ctx, level)
}

func (h scrubHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, h.s.scrub(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.inner.Handle(ctx, out)
}

func (h scrubHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	clean := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		clean[i] = h.attr(a)
	}
	return scrubHandler{inner: h.inner.WithAttrs(clean), s: h.s}
}

func (h scrubHandler) WithGroup(name string) slog.Handler {
	return scrubHandler{inner: h.inner.WithGroup(name), s: h.s}
}

// attr is a with the key out of its value: strings, errors and anything else written as text.
func (h scrubHandler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.s.scrub(v.String()))
	case slog.KindGroup:
		group := v.Group()
		clean := make([]any, len(group))
		for i, g := range group {
			clean[i] = h.attr(g)
		}
		return slog.Group(a.Key, clean...)
	case slog.KindAny:
		if text := fmt.Sprint(v.Any()); h.s.scrub(text) != text {
			return slog.String(a.Key, h.s.scrub(text))
		}
	}
	return a
}

func isWordEnd(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '"', '\'', '`', ',', ';', '(', ')', '[', ']', '{', '}', '<', '>', '&', '?':
		return true
	}
	return false
}

// pacing holds back requests to the server while it asked for a pause (429, Retry-After) or
// while it fails (5xx, with a backoff), so that typing does not hammer a server that cannot
// answer.
type pacing struct {
	mu       sync.Mutex
	until    time.Time
	reason   string // the nesagent reason of the requests held back
	why      string // what the server did, for the message
	failures int    // server errors in a row
	now      func() time.Time
}

// held is the error for a request made while the server is paused, or nil.
func (p *pacing) held(shown string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	left := p.until.Sub(p.clock())
	if left <= 0 {
		return nil
	}
	return &nesagent.BackendError{Reason: p.reason, RetryAfter: left, Err: fmt.Errorf("model: %s %s; not asked again for %s", shown, p.why, nesagent.RoundUp(left))}
}

func (p *pacing) clock() time.Time {
	if p.now != nil {
		return p.now()
	}
	return time.Now()
}

// limited records a 429: nothing is asked for retryAfter (the server's Retry-After, or the
// backoff when it gave none). It returns the pause.
func (p *pacing) limited(retryAfter time.Duration, why string) time.Duration {
	return p.pause(nesagent.ReasonRateLimited, retryAfter, why)
}

// failed records a server error: nothing is asked for the server's Retry-After, or else a backoff
// that doubles with each error in a row, with jitter. It returns the pause.
func (p *pacing) failed(retryAfter time.Duration, why string) time.Duration {
	return p.pause(nesagent.ReasonBackendError, retryAfter, why)
}

// pause holds requests back for retryAfter, or the backoff when 0, at most maxPause; the requests
// held back fail with reason.
func (p *pacing) pause(reason string, retryAfter time.Duration, why string) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failures++
	if retryAfter <= 0 {
		retryAfter = backoff(p.failures)
	}
	retryAfter = min(retryAfter, maxPause)
	p.until, p.reason, p.why = p.clock().Add(retryAfter), reason, why
	return retryAfter
}

// answered records an answer: the server is well.
func (p *pacing) answered() {
	p.mu.Lock()
	p.failures, p.until = 0, time.Time{}
	p.mu.Unlock()
}

// backoff is the pause after n failures in a row: backoffBase doubled n-1 times, at most
// backoffMax, of which a random half is taken off (jitter, so that clients do not come back
// together).
func backoff(n int) time.Duration {
	d := backoffMax
	if n < 16 {
		d = min(backoffBase<<(n-1), backoffMax)
	}
	return d/2 + rand.N(d/2+1)
}

// retryAfter reads a Retry-After header: seconds, or an HTTP date; 0 when absent or unreadable.
func retryAfter(h http.Header, now time.Time) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseFloat(v, 64); err == nil {
		switch {
		case n != n || n <= 0: // NaN, or no pause
			return 0
		case n >= maxPause.Seconds():
			return maxPause
		}
		return time.Duration(n * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		return min(max(t.Sub(now), 0), maxPause)
	}
	return 0
}

// CheckKeyEnv says why name, given as --api-key-env, is not the name of an environment variable
// (workspace.KeyEnvProblem): the message never repeats name, which may be the user's key; nil for
// a variable's name.
func CheckKeyEnv(name string) error {
	if why := workspace.KeyEnvProblem(name); why != "" {
		return errors.New("--api-key-env takes the name of the environment variable that holds the key, and what it was given " + why + ": put the key in an environment variable (export MY_API_KEY=…) and give its name: --api-key-env MY_API_KEY; what was given is not repeated here, in case it is the key")
	}
	return nil
}
