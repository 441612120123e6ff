package model

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent"
)

// sweepTracker tells Sweep's service what became of its suggestions, as Sweep's own clients do
// (Zed's sweep_ai.rs, cursortab's sweepapi client): an event per suggestion accepted or
// dismissed, with the suggestion's id, the lines it added and removed and how long it was shown;
// never any code. It is off unless the user turns it on (--sweep-tracking), and goes to Sweep's
// metrics endpoint (backend.app.sweep.dev, for suggestions from autocomplete.sweep.dev) or, for
// another server, to the same path on it.
type sweepTracker struct {
	endpoint string
	key      string
	client   *http.Client
	scrub    scrubber
	log      interface {
		Info(msg string, args ...any)
		Warn(msg string, args ...any)
	}

	mu    sync.Mutex
	shown map[string]trackedSuggestion
	order []string
}

type trackedSuggestion struct {
	additions, deletions int
	at                   time.Time
}

// sweepMetricsPath is the path of Sweep's metrics endpoint.
const sweepMetricsPath = "/backend/track_autocomplete_metrics"

// sweepMetricsURL is where the events of suggestions from the server at base go.
func sweepMetricsURL(base string) string {
	u, err := url.Parse(base)
	if err == nil && strings.EqualFold(u.Hostname(), "autocomplete.sweep.dev") {
		return "https://backend.app.sweep.dev" + sweepMetricsPath
	}
	return strings.TrimRight(base, "/") + sweepMetricsPath
}

// sweepEvent is the metrics event, with the fields Sweep's clients send.
type sweepEvent struct {
	EventType      string `json:"event_type"`
	SuggestionType string `json:"suggestion_type"`
	Additions      int    `json:"additions"`
	Deletions      int    `json:"deletions"`
	AutocompleteID string `json:"autocomplete_id"`
	Lifespan       int64  `json:"lifespan"`
	DebugInfo      string `json:"debug_info"`
	PrivacyMode    bool   `json:"privacy_mode_enabled"`
}

// noted keeps what an event needs of a suggestion shown: the lines its edits add and remove.
func (t *sweepTracker) noted(id string, edits []nesagent.TextEdit, text string) {
	add, del := 0, 0
	for _, e := range edits {
		add += strings.Count(e.NewText, "\n") + 1
		del += strings.Count(text[e.Start:e.End], "\n") + 1
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.shown == nil {
		t.shown = map[string]trackedSuggestion{}
	}
	t.shown[id] = trackedSuggestion{additions: add, deletions: del, at: time.Now()}
	t.order = append(t.order, id)
	if len(t.order) > maxRefsTracked {
		delete(t.shown, t.order[0])
		t.order = t.order[1:]
	}
}

// maxRefsTracked is how many suggestions the tracker remembers.
const maxRefsTracked = 64

// event sends what became of suggestion id, in the background: an event that fails is logged,
// and never delays a suggestion.
func (t *sweepTracker) event(id, kind string) {
	t.mu.Lock()
	s, ok := t.shown[id]
	delete(t.shown, id)
	t.mu.Unlock()
	if !ok {
		return
	}
	ev := sweepEvent{EventType: kind, SuggestionType: "GHOST_TEXT", Additions: max(s.additions, 1), Deletions: max(s.deletions, 1),
		AutocompleteID: id, Lifespan: time.Since(s.at).Milliseconds(), DebugInfo: "acp-lsp-bridge"}
	body, _ := json.Marshal(ev)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.endpoint, bytes.NewReader(body))
		if err != nil {
			return
		}
		req.Header.Set("Content-Type", "application/json")
		if t.key != "" {
			req.Header.Set("Authorization", "Bearer "+t.key)
		}
		resp, err := t.client.Do(req)
		if err != nil {
			t.log.Warn("model: Sweep's metrics endpoint: " + t.scrub.clean(err.Error(), maxErrorText))
			return
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		if resp.StatusCode/100 != 2 {
			t.log.Warn("model: Sweep's metrics endpoint answered "+t.scrub.clean(resp.Status, 80)+": "+t.scrub.clean(errorText(data), maxErrorText), "endpoint", redacted(t.endpoint))
			return
		}
		t.log.Info("model: told Sweep's metrics endpoint "+kind, "autocomplete_id", t.scrub.clean(id, 80))
	}()
}

// Accepted tells Sweep a suggestion was accepted (nesagent.Feedback).
func (e *engine) Accepted(ref string) {
	if e.track != nil {
		e.track.event(ref, "autocomplete_suggestion_accepted")
	}
}

// Rejected tells Sweep a suggestion was dismissed (nesagent.Feedback).
func (e *engine) Rejected(ref, _ string) {
	if e.track != nil {
		e.track.event(ref, "autocomplete_suggestion_disposed")
	}
}
