package lspside

import (
	"context"
	"sort"
	"strings"
	"sync"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/acpside"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/document"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
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
	t.accept(ctx, agent, l, "nes/accept for a suggestion applied without its accept command")
}

// accept sends nes/accept for l, once: at the change that applied it (acceptApplied), or at its
// accept command, whichever comes first; the other sends nothing. why is the debug line.
func (t *tracker) accept(ctx context.Context, agent *acpside.Agent, l *live, why string) {
	if agent == nil {
		return
	}
	t.mu.Lock()
	sent := l.accepted
	l.accepted = true
	t.mu.Unlock()
	if sent {
		return
	}
	t.s.log.Debug().Str("dir", "bridge→agent").Str("id", l.id).Msg(why)
	if err := agent.Accept(ctx, l.id); err != nil {
		t.s.sendFailed(agent, "nes/accept", err)
	}
}

// acceptApplied sends nes/accept for the suggestions a change of the document completed (the
// documents now read as each proposed: the user took it, or typed it all), after the agent has
// the change. They stay live for their accept command, which the editor runs after applying one
// and which places the cursor, but the agent hears of the accept at the change, before the
// request the bridge asks at once after it (askAheadAfter): in one order, whichever of the command
// and that request comes first.
func (t *tracker) acceptApplied(ctx context.Context, agent *acpside.Agent, completed []*live) {
	for _, l := range completed {
		t.accept(ctx, agent, l, "nes/accept: the change applied the suggestion")
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
// user applied and never confirmed). For the bridge's own request (ahead), one the user applied
// stays for its accept command, which the editor runs after applying it: the bridge asks for the
// next suggestion at once after that change, and ending it first would lose what the command does
// (the cursor placed where the suggestion puts it). It ends at the editor's next request, or the
// next change (documentChanged), if no command comes.
func (t *tracker) supersede(ctx context.Context, agent *acpside.Agent, uri string, ahead bool) {
	for _, l := range t.takeWhere(func(l *live) bool { return l.uri == uri && !(ahead && l.applied) }) {
		t.end(ctx, agent, l, acp.UnstableNesRejectReasonReplaced)
	}
}

// documentChanged ends, as ignored, the suggestions that a change of a document invalidated. A
// suggestion that changes the document survives while the document still reads as the text it was
// computed on with its changed region becoming a prefix of what the suggestion proposes (the user
// typing it through), or all of it (the user applied it; the accept command follows). Any other
// suggestion produced for the document (a jump, an edit of another file) ends with any change.
//
// applied are the changes that made snap, as the mirror applied them. Changes inside the region
// being typed through are followed there, so a keystroke costs the same whatever the size of the
// document; any other change compares the whole text, once.
func (t *tracker) documentChanged(ctx context.Context, agent *acpside.Agent, snap *document.Snapshot, applied []document.Applied) (completed []*live) {
	var ended, taken []*live
	t.mu.Lock()
	for id, l := range t.by {
		touched, keep, done, left := false, true, true, false
		for i, f := range l.files {
			if f.URI != snap.URI {
				continue
			}
			touched = true
			if l.progress == nil {
				l.progress = make([]*progress, len(l.files))
			}
			if l.progress[i] == nil {
				l.progress[i] = newProgress(f)
			}
			engaged := l.progress[i].engaged()
			ok, all, elsewhere := l.progress[i].follow(applied, snap.Mapper)
			left = left || (engaged && elsewhere)
			keep = keep && ok
			done = done && all
		}
		switch {
		case touched && keep:
			if done && !l.applied {
				completed = append(completed, l)
				l.applied = true
			}
			continue
		case !touched && l.uri != snap.URI:
			continue
		}
		if left {
			taken = append(taken, l)
		} else {
			ended = append(ended, l)
		}
		delete(t.by, id)
	}
	t.mu.Unlock()
	// A suggestion the user had taken part of (a word, a line, or typed its start) and then left,
	// changing text outside its region, ends as replaced; one they never took a part of, or typed
	// away from, as ignored. One whose whole text is in is accepted instead (applied, then the
	// accept command or its end).
	for _, l := range taken {
		t.end(ctx, agent, l, acp.UnstableNesRejectReasonReplaced)
	}
	for _, l := range ended {
		t.end(ctx, agent, l, acp.UnstableNesRejectReasonIgnored)
	}
	return completed
}

// progress follows one file edit of a live suggestion while the user types: the document reads
// as at, which is the text the edit was computed on (base) with the edit's region holding typed.
type progress struct {
	base  *encoding.Mapper
	repl  translate.Replacement // the file edit's spans merged, on base
	at    *encoding.Mapper
	typed string
}

func newProgress(f translate.FileEdit) *progress {
	r := translate.Merge(f.Mapper.Text(), f.Spans)
	return &progress{base: f.Mapper, repl: r, at: f.Mapper, typed: f.Mapper.Slice(r.Start, r.End)}
}

// engaged reports whether the region holds a part of what the suggestion proposes that was not
// there when it was made: the user took or typed some of it.
func (p *progress) engaged() bool {
	return p.at != nil && p.typed != p.base.Slice(p.repl.Start, p.repl.End) && strings.HasPrefix(p.repl.Text, p.typed)
}

// follow moves p to text, which applied made from p.at, and reports whether the region now holds
// a prefix of what the suggestion proposes, and whether it holds all of it; elsewhere, that the
// text changed outside the region (the region can no longer be read).
func (p *progress) follow(applied []document.Applied, text *encoding.Mapper) (ok, all, elsewhere bool) {
	inside := len(applied) > 0 && applied[0].Before == p.at
	typed := p.typed
	for _, a := range applied {
		s, e := a.Start-p.repl.Start, a.End-p.repl.Start
		if !inside || a.Full || s < 0 || e > len(typed) {
			inside = false
			break
		}
		typed = typed[:s] + a.Text + typed[e:]
	}
	if !inside {
		var read bool
		if typed, read = regionOf(p.base, p.repl, text); !read {
			p.at = nil
			return false, false, true
		}
	}
	p.at, p.typed = text, typed
	return strings.HasPrefix(p.repl.Text, typed), typed == p.repl.Text, false
}

// regionOf returns what stands in r's region of text, and whether text reads as base outside that
// region. It compares the whole text.
func regionOf(base *encoding.Mapper, r translate.Replacement, text *encoding.Mapper) (string, bool) {
	suffix := base.Len() - r.End
	if text.Len() < r.Start+suffix ||
		base.Slice(0, r.Start) != text.Slice(0, r.Start) ||
		base.Slice(r.End, base.Len()) != text.Slice(text.Len()-suffix, text.Len()) {
		return "", false
	}
	return text.Slice(r.Start, text.Len()-suffix), true
}

// typedInto returns what stands in the region of l, a single-file edit of snap's document, and
// whether the document reads as the text l was computed on outside that region.
func (t *tracker) typedInto(l *live, snap *document.Snapshot) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if l.progress != nil && l.progress[0] != nil && l.progress[0].at == snap.Mapper {
		return l.progress[0].typed, true
	}
	return regionOf(l.files[0].Mapper, *l.repl, snap.Mapper)
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

// editing returns the live suggestions produced for other documents that edit this one, as it
// reads at version (a rename the agent proposed for it while the user was in another file), oldest
// id first.
func (t *tracker) editing(uri string, version int) []*live {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []*live
	for _, l := range t.by {
		if l.uri == uri || l.applied {
			continue
		}
		for _, f := range l.files {
			if f.URI == uri && f.Version != nil && *f.Version == version {
				out = append(out, l)
				break
			}
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
