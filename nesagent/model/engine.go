package model

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent"
)

// Suggest asks the model, in its format, to rewrite the region around the cursor, reads its answer
// by the format's grammar, passes it through the quality gate, and returns the difference as one
// suggestion (with the cursor where the model put it), or none: an answer that changes nothing,
// cannot be read or fails the gate shows nothing, with the reason in the debug log. Errors are the
// model's server failing: unreachable, too slow, an error status, a malformed body.
func (e *engine) Suggest(ctx context.Context, req nesagent.Request) ([]nesagent.Suggestion, error) {
	sugs, _, err := e.SuggestWithReason(ctx, req)
	return sugs, err
}

// SuggestWithReason is Suggest, and when the model answered but nothing is shown, why
// (nesagent.Quiet: the rule, and the reason in a line). A request at the text the last suggestion
// makes is answered without asking the model again when the rest of the same answer is kept
// (follows) or the next suggestion was prefetched (prefetches); after answering, the next one is
// prefetched.
func (e *engine) SuggestWithReason(ctx context.Context, req nesagent.Request) ([]nesagent.Suggestion, *nesagent.Quiet, error) {
	sugs, quiet, err := e.suggest(ctx, req)
	// The last guard: whatever path an error or a reason took, the key is not in it.
	if quiet != nil && e.scrub.key != "" {
		quiet = &nesagent.Quiet{Rule: quiet.Rule, Why: e.scrub.scrub(quiet.Why)}
	}
	return sugs, quiet, e.scrub.scrubErr(err)
}

// suggest is SuggestWithReason before the key is taken out of its error and reason.
func (e *engine) suggest(ctx context.Context, req nesagent.Request) ([]nesagent.Suggestion, *nesagent.Quiet, error) {
	accepted := e.chain.met(req.URI, req.Text)
	if sugs, quiet, ok := e.follows.grownAt(ctx, req); ok {
		// Asked again at the text and cursor of an answer the model writes, or has written:
		// that answer, as far as it goes, without asking again.
		e.cfg.Log.Debug("model: the answer written so far, at the same text and cursor", "uri", req.URI, "growing", len(sugs) > 0 && sugs[0].Growing)
		e.chain.answered(req, sugs)
		return sugs, quiet, nil
	}
	if s, ok := e.follows.take(ctx, req); ok {
		// The early suggestion was accepted: the rest of the same answer, without asking.
		e.cfg.Log.Debug("model: the rest of the answer after the change accepted", "uri", req.URI)
		sugs := []nesagent.Suggestion{*s}
		e.answered(ctx, req, sugs, true)
		return sugs, nil, nil
	}
	if err := ctx.Err(); err != nil {
		// Cancelled while waiting for the rest of an answer: a stream started now would go on
		// without it, and replace that rest.
		return nil, nil, err
	}
	sugs, quiet, err, ok := e.prefetched.take(ctx, req)
	if ok {
		e.cfg.Log.Debug("model: the prefetched suggestion, at the accept", "uri", req.URI)
	} else {
		sugs, quiet, err = e.ask(ctx, req, false)
	}
	if err == nil {
		e.answered(ctx, req, sugs, accepted || ok)
	}
	return sugs, quiet, err
}

// answered notes what sugs, the answer to req, make of its document, and prefetches the next
// suggestion when req came at the accept of the one before (accepted): a user who takes one
// suggestion tends to take the next, and one who types on throws a prefetch away. So the first
// suggestion after typing is not prefetched from, and each accepted one after it is.
func (e *engine) answered(ctx context.Context, req nesagent.Request, sugs []nesagent.Suggestion, accepted bool) {
	e.chain.answered(req, sugs)
	if accepted {
		e.prefetchNext(ctx, req, sugs)
	}
}

// acceptChain is, per document, the text its last suggestion makes once accepted.
type acceptChain struct {
	mu    sync.Mutex
	byURI map[string]string
}

// answered records what the answer sugs to req makes of its document: nothing kept for an
// answer of anything but one edit of it.
func (c *acceptChain) answered(req nesagent.Request, sugs []nesagent.Suggestion) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byURI == nil {
		c.byURI = map[string]string{}
	}
	delete(c.byURI, req.URI)
	if len(sugs) == 1 && sugs[0].Jump == nil && len(sugs[0].Edits) > 0 && (sugs[0].URI == "" || sugs[0].URI == req.URI) {
		c.byURI[req.URI] = applyEdits(req.Text, sugs[0].Edits)
	}
}

// met reports whether uri reads text, what its last suggestion makes: it was accepted.
func (c *acceptChain) met(uri, text string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.byURI[uri]
	return ok && t == text
}

// forget drops what uri's last suggestion makes (the document closed).
func (c *acceptChain) forget(uri string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.byURI, uri)
}

// ask asks the model for a suggestion at req. prefetch says it is a prefetch (prefetch.go): it then
// gives way to any request in flight for the document (errBusy).
func (e *engine) ask(ctx context.Context, req nesagent.Request, prefetch bool) ([]nesagent.Suggestion, *nesagent.Quiet, error) {
	name := relName
	if e.cfg.AbsolutePaths {
		name = absName
	}
	in := prepareNamed(req, name)
	in.words = &e.words
	open := map[string]bool{}
	for _, d := range req.Open {
		open[d.URI] = true
	}
	e.words.keep(open)
	c, err := e.format.Build(in, limits{cfg: &e.cfg, contextTokens: e.cfg.ContextTokens, maxTokens: e.cfg.MaxTokens, ring: &e.ring})
	if err != nil {
		e.cfg.Log.Debug("model: nothing asked: "+err.Error(), "uri", req.URI, "format", e.format.Name())
		return nil, nil, nil
	}
	c.URI = req.URI
	if st, ok := e.c.(Streamer); ok && c.lines != nil && !e.cfg.NoStream {
		return e.suggestStreaming(ctx, req, in, c, st, prefetch)
	}
	gctx, end, ok := e.gens.start(ctx, req.URI, prefetch)
	defer end()
	if !ok {
		return nil, nil, errBusy
	}
	if err := gctx.Err(); err != nil {
		return nil, nil, err // superseded while the one before it was ending
	}
	answer, err := e.c.Complete(gctx, c.Prompt)
	end()
	if err != nil {
		return nil, nil, err
	}
	if len(answer.Changes) > 0 {
		// A coding agent proposed its edit as a change to the file rather than in its text.
		return changeSuggestions(req, answer.Changes, e.cfg.Log), nil, nil
	}
	s, quiet := e.read(in, c, answer)
	if quiet != nil {
		e.dropped(ctx, req.URI, quiet, len(answer.Text))
		return nil, quiet, nil
	}
	if c.ref != nil {
		if s.Ref = c.ref(); s.Ref != "" && e.track != nil {
			e.track.noted(s.Ref, s.Edits, req.Text)
		}
	}
	return []nesagent.Suggestion{s}, nil, nil
}

// The rules by which an answer is not shown (nesagent.Quiet.Rule). Those of the quality gate
// (GateRules) are off with Config.NoGate; the others hold whatever it says: an answer with
// nothing to show, or one that must not reach the editor.
const (
	RuleNoChange      = "no-change"      // the answer leaves the region as it is
	RuleUnreadable    = "unreadable"     // the format's grammar cannot read it
	RuleUnfitText     = "unfit-text"     // invalid UTF-8, NUL or another control character
	RuleOutsideRegion = "outside-region" // an edit outside the region the model was given
	RuleCutShort      = "cut-short"      // cut by the bound on tokens before the format's end
	RuleWhitespace    = "whitespace"     // a change of whitespace only
	RulePromptCopy    = "prompt-copy"    // the answer holds the format's markers
	RuleRunaway       = "runaway"        // far larger than the region
	RuleRewrite       = "rewrite"        // keeps too few of the region's lines
	RuleUndo          = "undo"           // puts back what the user's last edit replaced
)

// GateRules are the quality gate's rules, in the order they are tried.
var GateRules = []string{RuleCutShort, RuleWhitespace, RulePromptCopy, RuleRunaway, RuleRewrite, RuleUndo, RuleRepeatsSuffix, RulePastLine, RuleRepeatsAbove}

// read turns an answer into a suggestion of the request's document, or says why there is none.
func (e *engine) read(in *input, c *call, answer Answer) (nesagent.Suggestion, *nesagent.Quiet) {
	quiet := func(rule, why string) (nesagent.Suggestion, *nesagent.Quiet) {
		return nesagent.Suggestion{}, &nesagent.Quiet{Rule: rule, Why: why}
	}
	if c.fim != nil {
		return e.readFIM(in, c, answer)
	}
	if !e.cfg.NoGate && answer.Cut && !holdsAny(answer.Text, c.ends) {
		return quiet(RuleCutShort, fmt.Sprintf("cut short: the server stopped at a length limit (the request allowed %d tokens) before the answer's end", c.MaxTokens))
	}
	text, cursor, err := c.read(answer.Text)
	switch {
	case errors.Is(err, errNoEdit):
		return quiet(RuleNoChange, "no change: "+e.scrub.clean(err.Error(), maxErrorText))
	case err != nil:
		return quiet(RuleUnreadable, "unreadable: "+e.scrub.clean(err.Error(), maxErrorText))
	}
	return e.judge(in, c, text, cursor)
}

// judge turns the region's new text (and the cursor's offset in it, -1 for none) into a
// suggestion of the request's document, or says why there is none: the quality gate, then the
// edits it makes, which must stay in the region and be fit to show.
func (e *engine) judge(in *input, c *call, text string, cursor int) (nesagent.Suggestion, *nesagent.Quiet) {
	quiet := func(rule, why string) (nesagent.Suggestion, *nesagent.Quiet) {
		return nesagent.Suggestion{}, &nesagent.Quiet{Rule: rule, Why: why}
	}
	if text == in.text[c.start:c.end] {
		return quiet(RuleNoChange, "no change")
	}
	if c.narrow {
		c, text = narrowed(in, c, text)
	}
	if !e.cfg.NoGate {
		if rule, why := gate(in, c, text); rule != "" {
			return quiet(rule, why)
		}
	}
	start, end := in.toOrig(c.start), in.toOrig(c.end)
	newText := in.breaks(text)
	edits := regionEdits(in.req.Text[start:end], newText, start)
	for _, ed := range edits {
		if ed.Start < start || ed.End > end {
			return quiet(RuleOutsideRegion, "an edit outside the region the model was given")
		}
	}
	if len(edits) == 0 {
		return quiet(RuleNoChange, "no change")
	}
	if why := e.unfit(edits, in.req.Text); why != "" {
		return quiet(RuleUnfitText, why)
	}
	s := nesagent.Suggestion{Edits: edits}
	if cursor >= 0 && cursor <= len(text) {
		// The region's new text replaces [start, end): the cursor's offset in the text after
		// the edits, with the document's line breaks.
		at := start + len(in.breaks(text[:cursor]))
		s.Cursor = &at
	}
	return s, nil
}

// gate drops an answer that would be noise rather than the next edit, and says which rule and why
// (debug log, and the agent's answer), in this order:
//   - it changes only whitespace;
//   - it holds the format's markers or prompt text that the region did not (the model copied its
//     prompt);
//   - it grows far beyond the region (a runaway answer repeating itself);
//   - it keeps fewer than half of the region's lines (at least 3 with text, or none of 2; of those
//     after the answer's prefill, if any): a rewrite into something else, not an edit (what a
//     model answers when it lost the thread, or gibberish); in a region the user has just started
//     changing, a line the answer edited counts as kept;
//   - it repeats a line three times or more in a row, more than the region does (runaway);
//   - it undoes the user's most recent edit, whole or in part, unless that edit was a slip
//     (reversal.go; the failure Zed counts as a "reversal").
//
// Before it, engine.read drops an answer cut short by its bound on tokens (unless the format's
// end is in it) and one the format cannot read; after it, edits outside the region are refused.
func gate(in *input, c *call, text string) (rule, why string) {
	region := in.text[c.start:c.end]
	if squash(text) == squash(region) {
		return RuleWhitespace, "a change of whitespace only"
	}
	for _, m := range c.markers {
		if m != "" && strings.Contains(text, m) && !strings.Contains(region, m) {
			return RulePromptCopy, "the answer holds the format's marker " + quote(m) + ": the model copied its prompt"
		}
	}
	if len(text) > 3*len(region)+maxGrowth {
		return RuleRunaway, "runaway growth: the answer is far larger than the region"
	}
	// In a region the user has just started changing, a line the answer edited (it keeps most of
	// the line's words) counts as kept: finishing a change the user began rewrites lines.
	last, hasLast := in.lastEvent()
	// So does a line an exact replacement edited (Sweep's): what it replaces was chosen.
	edited := hasLast && last.oldAt >= c.start && last.end <= c.end || c.narrow
	regionLines, answerLines := region[c.given:], strings.TrimPrefix(text, region[:c.given])
	kept, total := keptLines(regionLines, answerLines, edited)
	if total == 2 && kept == 0 {
		// Too few lines to count: the answer must at least edit one of them.
		kept, _ = keptLines(regionLines, answerLines, true)
	}
	if total >= 3 && 2*kept < total || total == 2 && kept == 0 {
		return RuleRewrite, fmt.Sprintf("a rewrite, not an edit: the answer keeps %d of the region's %d lines", kept, total)
	}
	if run := repeatedLines(answerLines); run >= 3 && run > repeatedLines(regionLines) {
		return RuleRunaway, fmt.Sprintf("runaway repetition: the answer repeats a line %d times in a row", run)
	}
	if hasLast && undoes(in, c, text, last) {
		return RuleUndo, "it undoes the most recent edit"
	}
	return "", ""
}

// repeatedLines is the longest run of one line with text repeated in a row in text, indentation
// included (cursortab's StripRepetition cuts an answer at three).
func repeatedLines(text string) int {
	longest, run, prev := 0, 0, ""
	for _, l := range strings.Split(text, "\n") {
		switch {
		case strings.TrimSpace(l) == "":
			run, prev = 0, ""
			continue
		case l == prev:
			run++
		default:
			run, prev = 1, l
		}
		longest = max(longest, run)
	}
	return longest
}

// maxGrowth is what an answer may add beyond three times the region before it counts as runaway.
const maxGrowth = 1024

// squash is s without any whitespace.
func squash(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case ' ', '\t', '\n', '\r', '\v', '\f':
			return -1
		}
		return r
	}, s)
}

// undoes reports whether the region's new text puts back what the user's last edit replaced (the
// document after the suggestion reads as it did before that edit, within the region), when that
// edit was no slip the answer corrects (reversal.go).
func undoes(in *input, c *call, text string, last event) bool {
	if last.oldAt < c.start || last.end > c.end || last.old == last.new {
		return false
	}
	// The answer may change only the lines of the user's last edit...
	head, tail := in.text[c.start:last.oldAt], in.text[last.end:c.end]
	if len(text) < len(head)+len(tail) || !strings.HasPrefix(text, head) || !strings.HasSuffix(text, tail) {
		return false
	}
	mid := text[len(head) : len(text)-len(tail)]
	// ...and put them back as they were, or part of the way: take out some of what the edit
	// typed, or put back some of what it deleted (the edit's keystrokes are grouped, and a
	// model that takes back its last part takes it back all the same).
	back := mid == last.old || mid != last.new &&
		(subsequence(last.old, mid) && subsequence(mid, last.new) || subsequence(last.new, mid) && subsequence(mid, last.old))
	return back && !slip(in, last)
}

// subsequence reports whether a can be made from b by deleting bytes.
func subsequence(a, b string) bool {
	i := 0
	for j := 0; i < len(a) && j < len(b); j++ {
		if a[i] == b[j] {
			i++
		}
	}
	return i == len(a)
}

func quote(s string) string { return "\"" + s + "\"" }

// holdsAny reports whether s holds one of subs.
func holdsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if sub != "" && strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// keptLines counts the region's lines with text (spaces aside) that the answer still has, each
// line of the answer matching one of the region's at most once, out of all of them. With similar,
// a region line the answer has not kept as it was counts as kept when a line of the answer holds
// at least half of its words (names and numbers), or half of its pairs of neighbouring characters
// (Dice): an edited line, not a new one.
func keptLines(region, answer string, similar bool) (kept, total int) {
	have := map[string]int{}
	var answerLines []string
	for _, l := range strings.Split(answer, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			have[l]++
			answerLines = append(answerLines, l)
		}
	}
	var missing []string
	for _, l := range strings.Split(region, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			total++
			if have[l] > 0 {
				have[l]--
				kept++
			} else {
				missing = append(missing, l)
			}
		}
	}
	if !similar {
		return kept, total
	}
	answerWords := make([]map[string]bool, len(answerLines))
	answerPairs := make([]map[string]int, len(answerLines))
	for i, l := range answerLines {
		answerWords[i], answerPairs[i] = wordSet(l), runePairs(l)
	}
	for _, l := range missing {
		words, pairs := wordSet(l), runePairs(l)
		for i, aw := range answerWords {
			shared := 0
			for w := range words {
				if aw[w] {
					shared++
				}
			}
			if len(words) > 0 && 2*shared >= len(words) || dice(pairs, answerPairs[i]) >= 0.5 {
				kept++
				break
			}
		}
	}
	return kept, total
}

// runePairs counts the pairs of neighbouring characters of line, spaces left out.
func runePairs(line string) map[string]int {
	rs := []rune(squash(line))
	pairs := map[string]int{}
	for i := 0; i+1 < len(rs); i++ {
		pairs[string(rs[i:i+2])]++
	}
	return pairs
}

// dice is the Sørensen–Dice coefficient of two counts of character pairs: 1 for the same pairs,
// 0 for none in common.
func dice(a, b map[string]int) float64 {
	na, nb, shared := 0, 0, 0
	for p, n := range a {
		na += n
		shared += min(n, b[p])
	}
	for _, n := range b {
		nb += n
	}
	if na+nb == 0 {
		return 0
	}
	return 2 * float64(shared) / float64(na+nb)
}

// wordSet is the set of words (runs of letters, digits and "_") of line.
func wordSet(line string) map[string]bool {
	set := map[string]bool{}
	for _, w := range strings.FieldsFunc(line, func(r rune) bool { return !isWordRune(r) }) {
		set[w] = true
	}
	return set
}

// generations are the requests to the model in flight, one per document at most: a local model
// shares the user's CPU or GPU, and a generation for a text the user has typed past only delays
// the one that counts.
type generations struct {
	mu    sync.Mutex
	byURI map[string]*generation
}

type generation struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// start registers a generation for uri, after cancelling the one in flight for it and waiting
// until that one has ended (its request aborted, its connection closed). end, which may be called
// more than once, unregisters it. With idle (a prefetch), it registers nothing when a
// generation is in flight for uri, and says so (ok false).
func (g *generations) start(ctx context.Context, uri string, idle bool) (_ context.Context, end func(), ok bool) {
	cctx, cancel := context.WithCancel(ctx)
	me := &generation{cancel: cancel, done: make(chan struct{})}
	g.mu.Lock()
	if g.byURI == nil {
		g.byURI = map[string]*generation{}
	}
	prev := g.byURI[uri]
	if idle && prev != nil {
		g.mu.Unlock()
		cancel()
		return cctx, func() {}, false
	}
	g.byURI[uri] = me
	g.mu.Unlock()
	if prev != nil {
		prev.cancel()
		<-prev.done
	}
	var once sync.Once
	return cctx, func() {
		once.Do(func() {
			cancel()
			g.mu.Lock()
			if g.byURI[uri] == me {
				delete(g.byURI, uri)
			}
			g.mu.Unlock()
			close(me.done)
		})
	}, true
}

// closed ends the generation in flight for a closed document, if any: its request is aborted,
// and its end unregisters it.
func (g *generations) closed(uri string) {
	g.mu.Lock()
	gen := g.byURI[uri]
	g.mu.Unlock()
	if gen != nil {
		gen.cancel()
	}
}

// unfitPrefix starts the reasons of unfitText (RuleUnfitText: a server or model that is broken,
// not a model's poor guess, logged as a warning).
const unfitPrefix = "unfit text: the answer "

// unfitText says why text, which an answer would write into the document, cannot go to the
// editor, or "": it must be valid UTF-8, with no control character but tab and line breaks,
// unless the document holds that character too (a form feed in C source, say). A model
// that writes a NUL byte or half a character is broken, and an editor would show U+FFFD or write
// the byte into the user's file.
func unfitText(text, doc string) string {
	if !utf8.ValidString(text) {
		return unfitPrefix + "is not valid UTF-8"
	}
	for _, r := range text {
		if r == utf8.RuneError && !strings.ContainsRune(doc, r) {
			// What a JSON decoder makes of invalid UTF-8 in the server's answer.
			return unfitPrefix + "holds U+FFFD, the replacement for invalid UTF-8 in the server's answer"
		}
		if (r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0x7f || r >= 0x80 && r < 0xa0) && !strings.ContainsRune(doc, r) {
			return fmt.Sprintf(unfitPrefix+"holds the control character U+%04X", r)
		}
	}
	return ""
}

// readFIM turns a FIM answer into the completion at the cursor: cleaned as the references clean
// it (cleanFIM), then passed through the FIM gate: nothing left (no-change), only the text after
// the cursor again (repeats-suffix), the format's tokens copied (prompt-copy), a line repeated
// three times or more in a row, more than the text before the cursor does (runaway). With
// Config.NoGate, only an empty answer is kept back.
func (e *engine) readFIM(in *input, c *call, answer Answer) (nesagent.Suggestion, *nesagent.Quiet) {
	quiet := func(rule, why string) (nesagent.Suggestion, *nesagent.Quiet) {
		return nesagent.Suggestion{}, &nesagent.Quiet{Rule: rule, Why: why}
	}
	text, rule, why := cleanFIM(c.fim, answer.Text, answer.Cut)
	if rule != "" && (rule == RuleNoChange || !e.cfg.NoGate) {
		return quiet(rule, why)
	}
	if !e.cfg.NoGate {
		for _, m := range c.markers {
			if m != "" && strings.Contains(text, m) {
				return quiet(RulePromptCopy, "the answer holds the FIM token "+quote(m)+": the model copied its prompt")
			}
		}
		if run := repeatedLines(text); run >= 3 && run > repeatedLines(c.fim.Prefix+c.fim.Line) {
			return quiet(RuleRunaway, fmt.Sprintf("runaway repetition: the answer repeats a line %d times in a row", run))
		}
	}
	at := in.toOrig(c.start)
	edit := nesagent.TextEdit{Start: at, End: at, NewText: in.breaks(text)}
	if why := e.unfit([]nesagent.TextEdit{edit}, in.req.Text); why != "" {
		return quiet(RuleUnfitText, why)
	}
	end := at + len(edit.NewText)
	return nesagent.Suggestion{Edits: []nesagent.TextEdit{edit}, Cursor: &end}, nil
}

// unfit says why edits of text cannot go to the editor: unfitEdits, or the user's key in their
// text (a server that echoes the Authorization header it was sent), unless text holds it already.
func (e *engine) unfit(edits []nesagent.TextEdit, text string) string {
	if why := unfitEdits(edits, text); why != "" {
		return why
	}
	if e.scrub.key == "" || strings.Contains(text, e.scrub.key) {
		return ""
	}
	for _, ed := range edits {
		if e.scrub.scrub(ed.NewText) != ed.NewText {
			return unfitPrefix + "holds the API key"
		}
	}
	return ""
}

// narrowed is the call and its new text cut to the whole lines the answer changes: for a service
// that answers with exact replacements (Sweep's) rather than a rewrite of a region, the gate
// judges what it replaces, not the whole file it was shown.
func narrowed(in *input, c *call, text string) (*call, string) {
	region := in.text[c.start:c.end]
	p := encoding.CommonPrefix(region, text)
	p = strings.LastIndexByte(region[:p], '\n') + 1 // whole lines
	s := encoding.CommonSuffix(region[p:], text[p:])
	if cut := strings.IndexByte(region[len(region)-s:], '\n'); cut >= 0 {
		s -= cut + 1 // whole lines: from the break that ends a changed line
	} else {
		s = 0
	}
	n := *c
	n.start, n.end, n.given = c.start+p, c.end-s, 0
	return &n, text[p : len(text)-s]
}

// dropped logs an answer kept back and why: a broken server's text as a warning, the rest at
// debug level.
func (e *engine) dropped(ctx context.Context, uri string, quiet *nesagent.Quiet, answerBytes int) {
	level := slog.LevelDebug
	if quiet.Rule == RuleUnfitText {
		level = slog.LevelWarn
	}
	e.cfg.Log.Log(ctx, level, "model: answer dropped: "+quiet.Why, "rule", quiet.Rule, "uri", uri, "format", e.format.Name(), "answer_bytes", answerBytes)
}
