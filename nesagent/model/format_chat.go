package model

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent"
)

// DefaultInstructions is the system message unless Config.Instructions replaces it.
const DefaultInstructions = `You predict the next edit a programmer will make to the file they are editing.

You get excerpts of other files they have open, the file around the cursor, and their recent edits to this file as unified diffs (oldest first). In the file, the editable region lies between ` + markStart + ` and ` + markEnd + `, and the cursor is at ` + markCursor + `.

Rewrite the editable region as it will read after the programmer's next edit. Continue what the recent edits started: finish the code being typed, make the same change at the other places that need it (a renamed name, a new parameter, a changed type), fix what the last edit broke. Change only what that edit needs and copy everything else in the region exactly, with the same indentation and line breaks. Never change text outside the region. When no edit is called for, return the region unchanged.

Answer with the region only, in this form and nothing else (no explanation, no code fence, no ` + markCursor + `):
` + markStart + `
the rewritten region
` + markEnd

// closing is the last paragraph of the user message.
const closing = "Rewrite the editable region as the next edit will leave it. Answer with " + markStart + ", the region's new text, " + markEnd + ", and nothing else."

// maxLineBytes bounds each line of context, history and excerpts in the prompt (the region is
// never cut).
const maxLineBytes = 400

// chatFormat is the bridge's own prompt for instruction-following chat models (the format of any
// model that is not a next-edit model): instructions in the system message; in the user message
// excerpts of the other open files, the file around the cursor with the editable region between
// Zeta 1's marker names, the problems the editor shows and the recent edits as a unified diff; the
// answer is the rewritten region between the same markers.
//
// The order is the format's own, and is chosen for the server's prompt cache (llama-server's
// cache_prompt, any server's prefix caching): what changes least comes first, so that a request
// shares the longest start with the one before it and only the rest is evaluated anew. The
// instructions never change; the other files' excerpts change when the user works elsewhere; the
// file's lines above the region start at a line anchored to a multiple of contextAnchor, and the
// header names no line that moves with the cursor, so they stay the same while the user types
// around one place; the region changes at the cursor, and after it come the problems and the
// history, whose newest edit grows with every key typed.
type chatFormat struct{}

// contextAnchor is the multiple of lines at which the context shown above the region starts,
// within the bounds (ContextLines, ContextBytes): the start moves once in that many lines the
// cursor moves, not with every line.
const contextAnchor = 8

func (chatFormat) Name() string { return "chat" }

// chatMarkers are the chat prompt's own markers.
var chatMarkers = []string{markStart, markEnd, markCursor, "<|current_file|>", "<|/current_file|>", "<|edit_history|>", "<|/edit_history|>", "<|excerpt|>", "<|/excerpt|>"}

func (chatFormat) Build(in *input, lim limits) (*call, error) {
	p, ok := buildChat(lim.cfg, in)
	if !ok {
		return nil, fmt.Errorf("the cursor's line is longer than MaxRegionBytes (%d)", lim.cfg.MaxRegionBytes)
	}
	// Under --model-context (estimated at 3 bytes a token, as the Zeta formats estimate): the
	// excerpts of other files go first, then the history, then the lines around the region.
	if ctx := lim.contextTokens; ctx > 0 {
		cfg := *lim.cfg
		for _, drop := range []func(){
			func() { cfg.MaxOpenDocs = 0 },
			func() { cfg.MaxHistory = 0 },
			func() { cfg.ContextLines = 0 },
		} {
			if zetaEstimateTokens(len(p.system)+len(p.user))+p.maxTokens <= ctx {
				break
			}
			drop()
			p, _ = buildChat(&cfg, in)
		}
		if zetaEstimateTokens(len(p.system)+len(p.user))+p.maxTokens > ctx {
			return nil, fmt.Errorf("the region (about %d tokens) and the answer do not fit in the model's context of %d tokens", zetaEstimateTokens(len(p.user)), ctx)
		}
	}
	return &call{
		Prompt: Prompt{System: p.system, User: p.user, MaxTokens: p.maxTokens},
		start:  p.start, end: p.start + len(p.rw.region),
		read: func(answer string) (string, int, error) {
			text, ok := p.rw.parse(answer)
			if !ok {
				return "", -1, errors.New("the answer holds no marked region")
			}
			return text, -1, nil
		},
		markers: chatMarkers,
		ends:    []string{markEnd},
	}, nil
}

// prompt is the chat for one request and what is needed to read its answer.
type prompt struct {
	system, user string
	start        int // the region's offset in the input's text
	rw           rewrite
	maxTokens    int
}

// buildChat makes the prompt for a request; ok is false when no region fits (the cursor's line
// alone is longer than MaxRegionBytes).
func buildChat(cfg *Config, in *input) (p prompt, ok bool) {
	req := in.req
	text := in.text
	cur := in.cursor
	// The lines the region and the context around it can reach (line numbers below are relative
	// to first).
	lines, first, cl := linesAround(text, cur, cfg.LinesAbove+cfg.ContextLines, cfg.LinesBelow+cfg.ContextLines)
	a, b := max(cl-cfg.LinesAbove, 0), min(cl+cfg.LinesBelow, len(lines)-1)
	for lines[b].next-lines[a].start > cfg.MaxRegionBytes && (a < cl || b > cl) {
		if a < cl && (cl-a >= b-cl || b == cl) {
			a++
		} else {
			b--
		}
	}
	if lines[b].next-lines[a].start > cfg.MaxRegionBytes {
		return p, false
	}
	start, end := lines[a].start, lines[b].next
	region := text[start:end]
	rc := cur - start
	if encoding.SplitsCRLF(region, rc) {
		rc--
	}
	body := lf(region[:rc]) + markCursor + lf(region[rc:])
	p.rw = rewrite{
		region: region,
		added:  !strings.HasSuffix(body, "\n"),
		fenced: strings.HasPrefix(strings.TrimSpace(region), "```"),
	}
	if p.rw.added {
		body += "\n"
	}
	p.start = start
	p.maxTokens = cfg.MaxTokens
	if p.maxTokens == 0 {
		p.maxTokens = min(max(len(body)/2+256, 512), 4096)
	}

	name := in.path
	var u strings.Builder
	if ex := excerpts(cfg, in, region); ex != "" {
		u.WriteString("Other open files (excerpts):\n\n")
		u.WriteString(ex)
	}
	// The lines around the region, nearest first, within the bounds; the first of those above
	// anchored (contextAnchor) unless that leaves out more than half of them.
	ca := a
	for n := 0; ca > 0 && a-ca < cfg.ContextLines; ca-- {
		n += min(lines[ca-1].next-lines[ca-1].start, maxLineBytes)
		if n > cfg.ContextBytes {
			break
		}
	}
	if anchored := ca + (contextAnchor-(first+ca)%contextAnchor)%contextAnchor; 2*(a-anchored) >= a-ca {
		ca = anchored
	}
	cb := b
	for n := 0; cb < len(lines)-1 && cb-b < cfg.ContextLines && lines[cb+1].start < len(text); cb++ {
		n += min(lines[cb+1].next-lines[cb+1].start, maxLineBytes)
		if n > cfg.ContextBytes {
			break
		}
	}
	lang := ""
	if req.LanguageID != "" {
		lang = " (" + req.LanguageID + ")"
	}
	// The header names the first line shown, which moves seldom, and none that moves with the
	// cursor: the region is marked in the text.
	fmt.Fprintf(&u, "The file %s%s from line %d, with the editable region marked:\n\n<|current_file|>\n", name, lang, first+ca+1)
	for i := ca; i < a; i++ {
		u.WriteString(clip(text[lines[i].start:lines[i].end]) + "\n")
	}
	u.WriteString(markStart + "\n" + body + markEnd + "\n")
	for i := b + 1; i <= cb; i++ {
		u.WriteString(clip(text[lines[i].start:lines[i].end]) + "\n")
	}
	u.WriteString("<|/current_file|>\n\n")
	if d := diagnostics(req, first+a, first+b); d != "" {
		fmt.Fprintf(&u, "Problems the editor shows in %s:\n%s\n", name, d)
	}
	if h := history(cfg, req, name); h != "" {
		fmt.Fprintf(&u, "Recent edits to %s, oldest first:\n\n<|edit_history|>\n%s<|/edit_history|>\n\n", name, h)
	}
	u.WriteString(closing + "\n")
	p.system, p.user = cfg.Instructions, u.String()
	return p, true
}

// clip shortens a line of context to maxLineBytes, on a character boundary.
func clip(s string) string {
	s = strings.TrimSuffix(s, "\r")
	if len(s) <= maxLineBytes {
		return s
	}
	n := maxLineBytes
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// history renders the recent edits, oldest first, as hunks of one unified diff, within
// MaxHistory and HistoryBytes (the newest are kept).
func history(cfg *Config, req nesagent.Request, name string) string {
	if cfg.HistoryBytes == 0 {
		return ""
	}
	var hunks []string
	total := 0
	for i := len(req.Recent) - 1; i >= 0 && len(hunks) < cfg.MaxHistory; i-- {
		ed := req.Recent[i]
		if ed.OldLines == ed.NewLines {
			continue
		}
		// Where the edit's lines are now: later edits before them moved them.
		pos := ed.LineStart
		for _, later := range req.Recent[i+1:] {
			switch {
			case later.Start+len(later.Old) <= pos:
				pos += len(later.New) - len(later.Old)
			case later.Start < pos:
				pos = later.Start
			}
		}
		pos = min(max(pos, 0), len(req.Text))
		h := hunk1(lf(ed.OldLines), lf(ed.NewLines), strings.Count(req.Text[:pos], "\n")+1)
		if total+len(h) > cfg.HistoryBytes && len(hunks) > 0 {
			break
		}
		total += len(h)
		hunks = append(hunks, h)
	}
	if len(hunks) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "--- %s\n+++ %s\n", name, name)
	for i := len(hunks) - 1; i >= 0; i-- {
		b.WriteString(hunks[i])
	}
	return b.String()
}

// maxHunkLines bounds the lines of one hunk of the history; the middle of a longer one is left
// out.
const maxHunkLines = 16

// hunk1 renders one edit of whole lines as a unified diff hunk starting at line n.
func hunk1(old, new string, n int) string {
	ol, nl := strings.Split(old, "\n"), strings.Split(new, "\n")
	var body []string
	i, j := 0, 0
	emit := func(a1, b1 int) {
		for ; i < a1; i++ {
			body = append(body, "-"+clip(ol[i]))
		}
		for ; j < b1; j++ {
			body = append(body, "+"+clip(nl[j]))
		}
	}
	for _, bl := range diffBlocks(len(ol), len(nl), func(a, b int) bool { return ol[a] == nl[b] }) {
		for i < bl.a0 {
			body = append(body, " "+clip(ol[i]))
			i++
			j++
		}
		emit(bl.a1, bl.b1)
	}
	for i < len(ol) {
		body = append(body, " "+clip(ol[i]))
		i++
	}
	if len(body) > maxHunkLines {
		cut := len(body) - maxHunkLines + 1
		head := (maxHunkLines - 1) / 2
		body = append(append(body[:head:head], fmt.Sprintf(" … (%d lines left out)", cut)), body[head+cut:]...)
	}
	return fmt.Sprintf("@@ -%d,%d +%d,%d @@\n%s\n", n, len(ol), n, len(nl), strings.Join(body, "\n"))
}

// excerpts renders short excerpts of the other open documents, most recently edited first, within
// MaxOpenDocs: in each, the lines around the line that shares the most (and the longest) names
// with the region, or its beginning.
func excerpts(cfg *Config, in *input, region string) string {
	req := in.req
	if cfg.MaxOpenDocs == 0 || cfg.ExcerptLines == 0 || cfg.ExcerptBytes == 0 {
		return ""
	}
	names := identifiers(region)
	if n := len(req.Recent); n > 0 {
		for w := range identifiers(req.Recent[n-1].NewLines) {
			names[w] = true
		}
	}
	var b strings.Builder
	docs := 0
	for i, d := range req.Open {
		if docs >= cfg.MaxOpenDocs {
			break
		}
		if strings.TrimSpace(d.Text) == "" {
			continue
		}
		docs++
		ix := in.words.of(d.URI, d.Text)
		lines, best := ix.spans, ix.best(names)
		lo := max(best-cfg.ExcerptLines/4, 0)
		hi := min(lo+cfg.ExcerptLines, len(lines))
		size := func() int {
			n := 0
			for _, l := range lines[lo:hi] {
				n += min(l.end-l.start, maxLineBytes) + 1
			}
			return n
		}
		for hi-lo > 1 && size() > cfg.ExcerptBytes {
			if hi-1 > best {
				hi--
			} else {
				lo++
			}
		}
		lang := ""
		if d.LanguageID != "" {
			lang = d.LanguageID + ", "
		}
		fmt.Fprintf(&b, "<|excerpt|> %s (%slines %d-%d)\n", in.others[i].path, lang, lo+1, hi)
		for _, l := range lines[lo:hi] {
			b.WriteString(clip(d.Text[l.start:l.end]) + "\n")
		}
		b.WriteString("<|/excerpt|>\n\n")
	}
	return b.String()
}

// maxScanLines bounds the lines of another document searched for the region's names.
const maxScanLines = 20000

// identifiers are the names in s: runs of letters, digits and underscores of at least three
// characters, not all digits.
func identifiers(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !isWordRune(r) }) {
		if len(w) >= 3 && strings.IndexFunc(w, func(r rune) bool { return !unicode.IsDigit(r) }) >= 0 {
			out[w] = true
		}
	}
	return out
}

// maxDiagnostics bounds the problems shown in the prompt.
const maxDiagnostics = 8

// diagnostics lists the problems of the document, those in the region's lines [a, b] first, one
// line each.
func diagnostics(req nesagent.Request, a, b int) string {
	ds := slices.Clone(req.Diagnostics)
	in := func(d nesagent.Diagnostic) bool { return d.Line >= a && d.Line <= b }
	sort.SliceStable(ds, func(i, j int) bool { return in(ds[i]) && !in(ds[j]) })
	var out strings.Builder
	for i, d := range ds {
		if i == maxDiagnostics {
			break
		}
		sev := d.Severity
		if sev == "" {
			sev = "problem"
		}
		fmt.Fprintf(&out, "- line %d, %s: %s\n", d.Line+1, sev, clip(strings.ReplaceAll(d.Message, "\n", " ")))
	}
	return out.String()
}
