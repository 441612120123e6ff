package lspside

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.lsp.dev/protocol"
)

// Automatic suggestions are the ones the editor asks for while the user types (inline completion
// and completion triggered automatically, the editor's automatic code actions). The user sets how
// long a document must be still before they are asked (the delay: --delay,
// initializationOptions.delay) and turns them off and on, for a document or for all
// (the switch commands, initializationOptions.automatic). What the user asks for by hand is asked
// at once, whatever the delay and the switch.

// Commands that turn automatic suggestions on and off: with no argument for every document, with
// [{"uri": U}] (or ["U"]) for that document only, for as long as the bridge runs.
const (
	CommandEnable  = "acp-lsp-bridge.enable"
	CommandDisable = "acp-lsp-bridge.disable"
	CommandToggle  = "acp-lsp-bridge.toggle"
)

// MaxDelay bounds the delay: a longer one is a mistake (minutes instead of milliseconds).
const MaxDelay = time.Minute

// ParseDelay reads a delay as the user writes it: a number of milliseconds (300) or a duration
// ("300ms", "1.5s"), from 0 to MaxDelay.
func ParseDelay(v string) (time.Duration, error) {
	d, err := parseDuration(v)
	if err != nil {
		return 0, err
	}
	return delayBounds(d)
}

func delayBounds(d time.Duration) (time.Duration, error) {
	if d < 0 || d > MaxDelay {
		return 0, fmt.Errorf("%v is not between 0 and %v", d, MaxDelay)
	}
	return d, nil
}

// parseDuration reads milliseconds ("300") or a duration ("300ms", "1s").
func parseDuration(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	if ms, err := strconv.ParseFloat(v, 64); err == nil {
		return time.Duration(ms * float64(time.Millisecond)), nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("%q is neither milliseconds (300) nor a duration (\"300ms\", \"1s\")", v)
	}
	return d, nil
}

// durationOption reads a duration of initializationOptions (key) within bounds: nil when absent,
// or unreadable or out of bounds, which the user is told (the default is used).
func (s *Server) durationOption(ctx context.Context, key string, raw json.RawMessage, bounds func(time.Duration) (time.Duration, error)) *time.Duration {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	d, err := initDuration(raw)
	if err == nil {
		d, err = bounds(d)
	}
	if err != nil {
		s.log.Warn().Err(err).Str("option", key).Msg("initializationOptions: a value ignored")
		s.showMessage(ctx, protocol.MessageTypeWarning, "acp-lsp-bridge: initializationOptions."+key+": "+err.Error()+"; the default is used.")
		return nil
	}
	return &d
}

// initDuration reads a duration of initializationOptions: a JSON number of milliseconds or a
// duration string.
func initDuration(raw json.RawMessage) (time.Duration, error) {
	var str string
	if json.Unmarshal(raw, &str) == nil {
		return parseDuration(str)
	}
	var ms float64
	if err := json.Unmarshal(raw, &ms); err != nil {
		return 0, fmt.Errorf("%s is neither milliseconds (300) nor a duration (\"300ms\", \"1s\")", raw)
	}
	return time.Duration(ms * float64(time.Millisecond)), nil
}

// applyAutomaticOptions takes initializationOptions.delay and .automatic at initialize: it
// returns the delay (nil: none given, or one that cannot be read, which is told to the user) for
// the session, and turns the switch off when asked.
func (s *Server) applyAutomaticOptions(ctx context.Context, o *initOptions) *time.Duration {
	if o == nil {
		return nil
	}
	delay := s.durationOption(ctx, "delay", o.Delay, delayBounds)
	if o.Automatic != nil && !*o.Automatic {
		s.reqs.setSwitch("", switchDisable)
		s.log.Info().Msg("automatic suggestions are off (initializationOptions.automatic); ask for one by hand, or run acp-lsp-bridge.enable")
	}
	return delay
}

// automaticDelay is how long a document must be still before an automatic request asks the
// agent: --delay, else initializationOptions.delay, else none for an agent with Next Edit
// Suggestions and PromptDebounce for one asked through prompts.
func (s *Server) automaticDelay(prompted bool) time.Duration {
	switch {
	case s.cfg.Delay > 0:
		return s.cfg.Delay
	case s.session().delay != nil:
		return *s.session().delay
	case prompted:
		return s.cfg.PromptDebounce
	}
	return 0
}

// switchCommand runs CommandEnable, CommandDisable or CommandToggle. It answers what is now in
// force: {"automatic": bool} for every document, with "uri" for one.
func (s *Server) switchCommand(ctx context.Context, command string, args []json.RawMessage) (any, error) {
	op := map[string]string{CommandEnable: switchEnable, CommandDisable: switchDisable, CommandToggle: switchToggle}[command]
	uri := ""
	switch len(args) {
	case 0:
	case 1:
		var doc struct {
			URI string `json:"uri"`
		}
		if json.Unmarshal(args[0], &uri) != nil || uri == "" {
			if json.Unmarshal(args[0], &doc) != nil || doc.URI == "" {
				return nil, invalidParams("%s takes nothing (every document) or {\"uri\": ...} (one document)", command)
			}
			uri = doc.URI
		}
	default:
		return nil, invalidParams("%s takes nothing (every document) or {\"uri\": ...} (one document)", command)
	}
	if uri != "" {
		// The user ran it from that document: they are in it (the status is about it).
		s.fwd.Lock()
		if snap, ok := s.docs.Get(uri); ok && s.reqs.activeDoc() != uri {
			s.focus(ctx, snap, -1, nil)
		}
		s.fwd.Unlock()
	}
	on := s.reqs.setSwitch(uri, op)
	where := "every document"
	if uri != "" {
		where = uri
	}
	s.log.Info().Str("for", where).Bool("on", on).Msg("automatic suggestions switched")
	res := map[string]any{"automatic": on}
	if uri != "" {
		res["uri"] = uri
	}
	return res, nil
}

// untilStill waits, for an automatic request, until its document has been still for delay: delay
// counted from the document's last change (as the README says, so that the editor's own wait
// before it asks overlaps the delay instead of adding to it), or from the request when the
// document has not changed since it was opened; and, when burst, until coalesce has passed since
// the request began. A newer request for the document cancels ctx. It reports false when ctx ends
// first, or when the document changed since the request's snapshot: its answer would be stale,
// and the editor asks again after a change.
func (s *Server) untilStill(ctx context.Context, req suggestRequest, delay time.Duration, burst bool, began time.Time, coalesce time.Duration) bool {
	changed, _ := s.still.changedAt(req.snap.URI)
	wait := stillWait(time.Now(), changed, began, delay, burst, coalesce)
	if wait <= 0 {
		return true
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return false
	}
	cur, ok := s.docs.Get(req.snap.URI)
	return ok && cur.Version == req.snap.Version
}

// stillness is when each open document last changed, for the delay.
type stillness struct {
	mu sync.Mutex
	at map[string]time.Time
}

// change records that uri changed now.
func (st *stillness) change(uri string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.at == nil {
		st.at = map[string]time.Time{}
	}
	st.at[uri] = time.Now()
}

// closed forgets uri.
func (st *stillness) closed(uri string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	delete(st.at, uri)
}

// changedAt is when uri last changed, if it has since it was opened.
func (st *stillness) changedAt(uri string) (time.Time, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	t, ok := st.at[uri]
	return t, ok
}

// stillWait is how long an automatic request that began at began waits at now: until delay has
// passed since the document's last change (changed; zero when it has not changed since it was
// opened: since the request), and, in a burst, coalesce since the request.
func stillWait(now, changed, began time.Time, delay time.Duration, burst bool, coalesce time.Duration) time.Duration {
	since := began
	if !changed.IsZero() {
		since = changed
	}
	wait := delay - now.Sub(since)
	if burst {
		wait = max(wait, coalesce-now.Sub(began))
	}
	return wait
}
