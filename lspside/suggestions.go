package lspside

import (
	"context"
	"sort"
	"strings"
	"sync"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/acpside"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/document"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/translate"
)

// tracker makes every suggestion id the agent returns end exactly once: nes/accept, or nes/reject
// with replaced, cancelled, ignored or rejected.
type tracker struct {
	s  *Server
	mu sync.Mutex
	by map[string]*live
}

func newTracker(s *Server) *tracker { return &tracker{s: s, by: map[string]*live{}} }

func (t *tracker) reject(ctx context.Context, agent *acpside.Agent, id string, reason acp.UnstableNesRejectReason) {
	if agent == nil {
		return
	}
	t.s.log.Debug().Str("dir", "bridge→agent").Str("id", id).Str("reason", string(reason)).Msg("nes/reject")
	if err := agent.Reject(ctx, id, reason); err != nil {
		t.s.sendFailed(agent, "nes/reject", err)
	}
}

// end ends a live suggestion that the user did not act on through a command. One the user
// applied (the documents read as it proposed) ends as accepted: some clients (copilot-lsp.nvim)
// apply an edit without ever running its accept command.
func (t *tracker) end(ctx context.Context, agent *acpside.Agent, l *live, reason acp.UnstableNesRejectReason) {
	if !l.applied {
		t.reject(ctx, agent, l.id, reason)
		return
	}
	if agent == nil {
		return
	}
	t.s.log.Debug().Str("dir", "bridge→agent").Str("id", l.id).Msg("nes/accept for a suggestion applied without its accept command")
	if err := agent.Accept(ctx, l.id); err != nil {
		t.s.sendFailed(agent, "nes/accept", err)
	}
}

// add records a new live suggestion and reports whether it may be shown. An id that is still live
// (the agent reused it, say for another document) is refused: the editor may still show the earlier
// suggestion under that id, and its accept must not accept the newcomer. The id ends once, with the
// earlier suggestion.
func (t *tracker) add(ctx context.Context, agent *acpside.Agent, l *live) bool {
	t.mu.Lock()
	_, dup := t.by[l.id]
	if !dup {
		t.by[l.id] = l
	}
	t.mu.Unlock()
	if dup {
		t.s.log.Warn().Str("id", l.id).Msg("the agent reused a suggestion id that is still live; the new suggestion is not shown")
	}
	return !dup
}

// isLive reports whether a suggestion has not ended.
func (t *tracker) isLive(id string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, ok := t.by[id]
	return ok
}

// take removes a live suggestion.
func (t *tracker) take(id string) (*live, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	l, ok := t.by[id]
	delete(t.by, id)
	return l, ok
}

// takeWhere removes and returns the live suggestions that match.
func (t *tracker) takeWhere(match func(*live) bool) []*live {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []*live
	for id, l := range t.by {
		if match(l) {
			out = append(out, l)
			delete(t.by, id)
		}
	}
	return out
}

// supersede ends the suggestions of earlier requests for uri as replaced (or accepted, for one the
// user applied and never confirmed).
func (t *tracker) supersede(ctx context.Context, agent *acpside.Agent, uri string) {
	for _, l := range t.takeWhere(func(l *live) bool { return l.uri == uri }) {
		t.end(ctx, agent, l, acp.UnstableNesRejectReasonReplaced)
	}
}

// documentChanged ends, as ignored, the suggestions that a change of a document invalidated. A
// suggestion that changes the document survives while the document still reads as the text it was
// computed on with its changed region becoming a prefix of what the suggestion proposes (the user
// typing it through), or all of it (the user applied it; the accept command follows). Any other
// suggestion produced for the document (a jump, an edit of another file) ends with any change.
func (t *tracker) documentChanged(ctx context.Context, agent *acpside.Agent, snap *document.Snapshot) {
	text := snap.Text()
	var ended []*live
	t.mu.Lock()
	for id, l := range t.by {
		touched, keep, applied := false, true, true
		for _, f := range l.files {
			if f.URI != snap.URI {
				continue
			}
			touched = true
			base := f.Mapper.Text()
			ok, done := consistent(base, translate.Merge(base, f.Spans), text)
			keep = keep && ok
			applied = applied && done
		}
		switch {
		case touched && keep:
			l.applied = l.applied || applied
			continue
		case !touched && l.uri != snap.URI:
			continue
		}
		ended = append(ended, l)
		delete(t.by, id)
	}
	t.mu.Unlock()
	for _, l := range ended {
		t.end(ctx, agent, l, acp.UnstableNesRejectReasonIgnored)
	}
}

// live returns the live suggestions produced for a document at one version, oldest id first.
func (t *tracker) forDocument(uri string, version int) []*live {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []*live
	for _, l := range t.by {
		if l.uri == uri && l.base.Version == version && !l.applied {
			out = append(out, l)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// forURI returns the live suggestions produced for a document, at any version, oldest id first.
func (t *tracker) forURI(uri string) []*live {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []*live
	for _, l := range t.by {
		if l.uri == uri {
			out = append(out, l)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// consistent reports whether text is base with r's region replaced by a prefix of r.Text, and
// whether that prefix is all of it.
func consistent(base string, r translate.Replacement, text string) (ok, applied bool) {
	prefix, suffix := base[:r.Start], base[r.End:]
	if len(text) < len(prefix)+len(suffix) || !strings.HasPrefix(text, prefix) || !strings.HasSuffix(text, suffix) {
		return false, false
	}
	middle := text[len(prefix) : len(text)-len(suffix)]
	if !strings.HasPrefix(r.Text, middle) {
		return false, false
	}
	return true, middle == r.Text
}

func (t *tracker) documentClosed(ctx context.Context, agent *acpside.Agent, uri string) {
	for _, l := range t.takeWhere(func(l *live) bool { return l.uri == uri }) {
		t.end(ctx, agent, l, acp.UnstableNesRejectReasonIgnored)
	}
}

// endAll ends every live suggestion with reason.
func (t *tracker) endAll(ctx context.Context, agent *acpside.Agent, reason acp.UnstableNesRejectReason) {
	for _, l := range t.takeWhere(func(*live) bool { return true }) {
		t.end(ctx, agent, l, reason)
	}
}

// endLate ends the suggestions of a request the editor cancelled, which the agent answered anyway.
func (t *tracker) endLate(sugs []acpside.Suggestion) {
	agent := t.s.currentAgent()
	for _, sg := range sugs {
		if sg.ID != "" {
			t.reject(context.Background(), agent, sg.ID, acp.UnstableNesRejectReasonCancelled)
		}
	}
}
