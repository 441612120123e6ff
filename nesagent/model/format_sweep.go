package model

import (
	"fmt"
	"strings"
)

// sweepFormat is Sweep's next-edit models. Their model cards on Hugging Face define the prompt,
// and cannot be read from here, so it follows open implementations of them
// (docs/model-agent.md says which):
//   - sweep-next-edit-0.5B and -1.5B: Zed's crates/edit_prediction/src/sweep_prompt.rs
//     (build_prompt, build_recent_change_blocks, the 10-line window around the cursor, the stop
//     strings), itself after the 1.5B card's run_model.py;
//   - sweep-next-edit-v2-7B: the v2 card's inference.py build_prompt with its prefill of the
//     updated window (PROMPT_TEMPLATE, DIFF_FORMAT, compute_prefill), as its ports copy it.
//
// The layout is the format's (--model-format sweep-small or sweep-7b), or with "sweep" the one
// the model's name calls for: a name with "7b" in it takes the v2 prompt.
type sweepFormat struct{ layout sweepLayout }

// sweepLayout is which card's prompt a Sweep model takes.
type sweepLayout int

const (
	sweepByName sweepLayout = iota // from the model's name
	sweepSmall                     // the 0.5B and 1.5B card's
	sweep7B                        // the v2 7B card's
)

func (f sweepFormat) Name() string {
	switch f.layout {
	case sweepSmall:
		return "sweep-small"
	case sweep7B:
		return "sweep-7b"
	}
	return "sweep"
}

// v2 reports whether the model takes the v2 7B card's prompt.
func (f sweepFormat) v2(model string) bool {
	return f.layout == sweep7B || f.layout == sweepByName && sweepV2(model)
}

const (
	sweepFileSep = "<|file_sep|>"
	sweepEOS     = "</s>"
	// Zed's WINDOW_LINES_ABOVE, WINDOW_LINES_BELOW, MAX_RECENT_CHANGE_BLOCKS and
	// MAX_RECENT_CHANGE_LINES; the card's max_tokens and n_ctx.
	sweepLinesAround      = 10
	sweepMaxChanges       = 3
	sweepMaxChangeLines   = 40
	sweepMaxTokens        = 512
	sweepContextTokens    = 8192
	sweepV2MaxTokens      = 1024 // inference.py's DEFAULT_MAX_NEW_TOKENS
	sweepV2ContextLines   = 150  // initial_file: the lines around the cursor
	sweepV2Cursor         = "<|cursor|>"
	sweepV2EndOfText      = "<|endoftext|>"
	sweepRelatedLines     = 40
	sweepRelatedMax       = 3
	sweepPromptBytesToken = 3 // the estimate of the prompt's tokens, as for Zeta
)

var sweepMarkers = []string{sweepFileSep, sweepEOS, sweepV2Cursor, sweepV2EndOfText}

func (f sweepFormat) Build(in *input, lim limits) (*call, error) {
	if f.v2(lim.cfg.Model) {
		return f.buildV2(in, lim)
	}
	return f.buildV1(in, lim)
}

// sweepWindow is the window of lines around the cursor that the model rewrites: [start, end) in
// input.text, without the last line's line break (Zed's fixed_line_window_around_cursor).
func sweepWindow(in *input, above, below int) (start, end int) {
	spans, _, row := linesAround(in.text, in.cursor, above, below)
	return spans[0].start, spans[min(row+below, len(spans)-1)].end
}

// sweepOriginal is the window as it read before the document's most recent edit (Zed's
// original_window_for_current_window), or the window as it is when that edit lies elsewhere.
func sweepOriginal(in *input, start, end int) string {
	window := in.text[start:end]
	if e, ok := in.lastEvent(); ok && e.oldAt >= start && e.end <= end {
		return in.text[start:e.oldAt] + e.old + in.text[e.end:end]
	}
	return window
}

func (sweepFormat) buildV1(in *input, lim limits) (*call, error) {
	start, end := sweepWindow(in, sweepLinesAround, sweepLinesAround)
	window := in.text[start:end]
	original := sweepOriginal(in, start, end)
	related := zetaRelatedFiles(in, window, sweepRelatedMax, sweepRelatedLines)
	changes := in.events[max(len(in.events)-sweepMaxChanges, 0):]
	for _, s := range []string{in.path, window, original} {
		if t, ok := holdsToken(s, sweepMarkers[:2]); ok {
			return nil, fmt.Errorf("the text holds Sweep's token %q", t)
		}
	}
	maxTokens := lim.maxTokens
	if maxTokens == 0 {
		maxTokens = sweepMaxTokens
	}
	ctx := lim.contextTokens
	if ctx == 0 {
		ctx = sweepContextTokens
	}
	var prompt string
	for {
		var blocks []sweepChangeBlock
		for _, e := range changes {
			orig, upd := sweepChange(e)
			blocks = append(blocks, sweepChangeBlock{e.path, orig, upd})
		}
		prompt = sweepV1Prompt(related, blocks, in.path, original, window)
		if len(prompt)/sweepPromptBytesToken+maxTokens <= ctx {
			break
		}
		// Too long for the model's context: the related files go first, then the oldest change.
		switch {
		case len(related) > 0:
			related = related[:len(related)-1]
		case len(changes) > 0:
			changes = changes[1:]
		default:
			return nil, fmt.Errorf("the window (about %d tokens) and the answer do not fit in the model's context of %d tokens", len(prompt)/sweepPromptBytesToken, ctx)
		}
	}
	return &call{
		Prompt: Prompt{Raw: prompt, Stop: []string{sweepFileSep, sweepEOS}, MaxTokens: maxTokens},
		start:  start, end: end,
		read: func(answer string) (string, int, error) {
			answer = cutAtStops(answer, sweepFileSep, sweepEOS)
			if answer == "" || answer == window {
				return "", -1, errNoEdit
			}
			return sameEnding(answer, window), -1, nil
		},
		markers: sweepMarkers,
		lines:   &lineSpec{ends: []string{sweepFileSep, sweepEOS}},
	}, nil
}

// sweepChangeBlock is Zed's RecentChangeBlock: a recent edit's lines before and after.
type sweepChangeBlock struct{ path, original, updated string }

// sweepV1Prompt is Zed's build_prompt: the related files, the recent changes as "PATH.diff" blocks
// ("original:" and "updated:"), the window before the last edit, the window now, and the header
// of the window the model writes.
func sweepV1Prompt(related []relatedFile, changes []sweepChangeBlock, path, original, window string) string {
	var b strings.Builder
	for _, r := range related {
		sweepBlock(&b, r.path, r.text)
	}
	for _, c := range changes {
		body := "original:\n" + c.original
		if !strings.HasSuffix(c.original, "\n") {
			body += "\n"
		}
		body += "updated:\n" + c.updated
		sweepBlock(&b, c.path+".diff", body)
	}
	sweepBlock(&b, "original/"+path, original)
	sweepBlock(&b, "current/"+path, window)
	b.WriteString(sweepFileSep + "updated/" + path + "\n")
	return b.String()
}

// sweepBlock is write_file_block: the separator and the path, a line break, the content, ended by a
// line break.
func sweepBlock(b *strings.Builder, path, content string) {
	b.WriteString(sweepFileSep + path + "\n")
	b.WriteString(content)
	if !strings.HasSuffix(content, "\n") {
		b.WriteByte('\n')
	}
}

// sweepChange is recent_change_block_from_event: the hunk's removed and context lines as the
// original, its added and context lines as the updated, each at most 40 lines.
func sweepChange(e event) (original, updated string) {
	var o, u []string
	for _, l := range strings.Split(strings.TrimSuffix(zetaEventDiff(e), "\n"), "\n") {
		switch {
		case strings.HasPrefix(l, "@@"):
		case strings.HasPrefix(l, "-"):
			o = append(o, l[1:])
		case strings.HasPrefix(l, "+"):
			u = append(u, l[1:])
		case strings.HasPrefix(l, " "):
			o = append(o, l[1:])
			u = append(u, l[1:])
		}
	}
	return limitLines(o, sweepMaxChangeLines), limitLines(u, sweepMaxChangeLines)
}

// limitLines is limit_change_lines: the first half, "...", and the last lines, within max.
func limitLines(lines []string, max int) string {
	if len(lines) <= max {
		return strings.Join(lines, "\n")
	}
	head := max / 2
	tail := max - head - 1
	out := append(append(append([]string{}, lines[:head]...), "..."), lines[len(lines)-tail:]...)
	return strings.Join(out, "\n")
}

func (sweepFormat) buildV2(in *input, lim limits) (*call, error) {
	// The lines (splitlines(True)) the prompt can reach around the cursor's; line numbers are
	// relative to first.
	spans, first, cursorLine := linesAround(in.text, in.cursor, sweepV2ContextLines, sweepV2ContextLines)
	if n := len(spans); n > 1 && spans[n-1].start == len(in.text) {
		// splitlines(True) has no empty last line; a cursor after the final line break is on
		// the line before it.
		spans = spans[:n-1]
		cursorLine = min(cursorLine, n-2)
	}
	lines := make([]string, len(spans))
	for i, l := range spans {
		lines[i] = in.text[l.start:l.next]
	}
	blockStart := max(0, cursorLine-sweepLinesAround)
	blockEnd := min(len(lines), cursorLine+sweepLinesAround+1)
	startIndex := spans[blockStart].start
	codeBlock := strings.Join(lines[blockStart:blockEnd], "")
	rel := min(max(in.cursor-startIndex, 0), len(codeBlock))
	for _, s := range []string{in.path, codeBlock} {
		if t, ok := holdsToken(s, sweepMarkers); ok {
			return nil, fmt.Errorf("the text holds Sweep's token %q", t)
		}
	}
	// compute_prefill without changes above the cursor: every whole line above the cursor's.
	prefill := ""
	if i := strings.LastIndexByte(codeBlock[:rel], '\n'); i >= 0 {
		prefill = codeBlock[:i+1]
	}
	prev := sweepOriginal(in, startIndex, startIndex+len(codeBlock))
	header := fmt.Sprintf(":%d:%d", first+blockStart+1, first+blockEnd)
	maxTokens := lim.maxTokens
	if maxTokens == 0 {
		maxTokens = sweepV2MaxTokens
	}
	ctx := lim.contextTokens
	if ctx == 0 {
		ctx = sweepContextTokens
	}
	related := zetaRelatedFiles(in, codeBlock, sweepRelatedMax, sweepRelatedLines)
	changes := in.events[max(len(in.events)-sweepMaxChanges, 0):]
	around := sweepV2ContextLines
	var prompt string
	for {
		var b strings.Builder
		for _, r := range related { // file_chunks, before the template
			b.WriteString(sweepFileSep + r.path + "\n" + r.text + "\n")
		}
		initial := strings.Join(lines[max(0, cursorLine-around):min(len(lines), cursorLine+around)], "")
		var recent []string
		for _, e := range changes {
			recent = append(recent, fmt.Sprintf("%s%s:%d:%d\noriginal:\n%s\nupdated:\n%s", sweepFileSep, e.path, e.line, e.line+strings.Count(e.new, "\n"), e.old, e.new))
		}
		// PROMPT_TEMPLATE
		b.WriteString(sweepFileSep + in.path + "\n" + initial + "\n")
		b.WriteString(strings.Join(recent, "\n") + "\n")
		b.WriteString(sweepFileSep + "original/" + in.path + header + "\n" + prev + "\n")
		b.WriteString(sweepFileSep + "current/" + in.path + header + "\n" + codeBlock[:rel] + sweepV2Cursor + codeBlock[rel:] + "\n")
		b.WriteString(sweepFileSep + "updated/" + in.path + header + "\n" + prefill)
		prompt = b.String()
		if len(prompt)/sweepPromptBytesToken+maxTokens <= ctx {
			break
		}
		switch {
		case len(related) > 0:
			related = related[:len(related)-1]
		case around > sweepLinesAround+1:
			around /= 2
		case len(changes) > 0:
			changes = changes[1:]
		default:
			return nil, fmt.Errorf("the window (about %d tokens) and the answer do not fit in the model's context of %d tokens", len(prompt)/sweepPromptBytesToken, ctx)
		}
	}
	return &call{
		Prompt: Prompt{Raw: prompt, Stop: []string{sweepV2EndOfText, sweepFileSep}, MaxTokens: maxTokens},
		start:  startIndex, end: startIndex + len(codeBlock), given: len(prefill),
		read: func(answer string) (string, int, error) {
			answer = cutAtStops(answer, sweepV2EndOfText, sweepFileSep)
			if strings.Contains(answer, sweepV2Cursor) {
				return "", -1, fmt.Errorf("the answer holds the cursor marker %s", sweepV2Cursor)
			}
			block := prefill + answer
			if strings.TrimSpace(answer) == "" || block == codeBlock || insertionAboveCursor(codeBlock, block, rel) {
				return "", -1, errNoEdit
			}
			return sameEnding(block, codeBlock), -1, nil
		},
		markers: sweepMarkers,
		lines:   &lineSpec{ends: []string{sweepV2EndOfText, sweepFileSep}, lead: prefill},
	}, nil
}

// insertionAboveCursor is is_pure_insertion_above_cursor: the answer only adds lines above an
// unchanged, non-blank cursor line, which the v2 model's card refuses.
func insertionAboveCursor(block, answer string, rel int) bool {
	lines := strings.SplitAfter(block, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	before := strings.SplitAfter(block[:rel], "\n")
	if before[len(before)-1] == "" {
		before = before[:len(before)-1]
	}
	idx := len(before)
	if idx < 1 || idx > len(lines) {
		return false
	}
	cursorLine := lines[idx-1]
	if strings.TrimSpace(block) == strings.TrimSpace(answer) || strings.TrimSpace(cursorLine) == "" {
		return false
	}
	prefix := strings.Join(lines[:idx-1], "")
	suffix := strings.Join(lines[idx:], "")
	return strings.HasPrefix(answer, prefix) && strings.HasSuffix(answer, cursorLine+suffix)
}

// cutAtStops drops everything from the first of the stop strings on: a server that ignored them
// (or a stop string that arrived split) leaves them in the answer.
func cutAtStops(answer string, stops ...string) string {
	for _, stop := range stops {
		if i := strings.Index(answer, stop); i >= 0 {
			answer = answer[:i]
		}
	}
	return answer
}

// sweepV2 reports whether the model is Sweep's v2 7B, which takes the v2 prompt.
func sweepV2(model string) bool { return strings.Contains(strings.ToLower(model), "7b") }
