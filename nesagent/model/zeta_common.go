package model

import (
	"fmt"
	"sort"
	"strings"
)

// What Zed's Zeta formats share (crates/zeta_prompt in Zed; docs/model-agent.md cites the
// functions): the token estimate, the excerpt around the cursor, the editable and context ranges
// inside it, the edit history events, the related files, the budget.

// zetaEstimateTokens is Zed's estimate_tokens: three bytes a token.
func zetaEstimateTokens(bytes int) int { return bytes / 3 }

// Zed's sizes for Zeta 1, Zeta 2 and Zeta 2.1 on self-hosted servers.
const (
	zetaExcerptTokens   = 8192 // compute_cursor_excerpt's CURSOR_EXCERPT_TOKEN_BUDGET
	zetaEditableTokens  = 350  // token_limits_for_format: editable
	zetaContextTokens   = 150  // and context
	zetaMaxPromptTokens = 4096 // max_prompt_tokens_for_format
	zetaMaxEvents       = 6    // max_edit_event_count_for_format
	zetaMaxOutputTokens = 1024 // Zed asks max_output_tokens*4, max_output_tokens 256 by default
)

// zetaRegion is the part of the document a Zeta prompt shows: the excerpt around the cursor and,
// inside it, the context shown and the editable region, all as offsets in input.text.
type zetaRegion struct {
	excerptStart, excerptEnd int
	excerptStartRow          int
	contextStart, contextEnd int
	editStart, editEnd       int
	cursor                   int
}

// zetaRegions computes the regions as Zed does: the cursor excerpt (compute_cursor_excerpt: the
// largest line-wise symmetric region around the cursor within 8192 estimated tokens), then the
// editable and context ranges inside it (compute_editable_and_context_ranges with no syntax
// ranges: 75% of the editable budget symmetrically from the cursor, then line-wise, up first; the
// context line-wise around it).
func zetaRegions(in *input, editableTokens, contextTokens int) zetaRegion {
	return zetaRegionsWithin(in, editableTokens, contextTokens, zetaReach)
}

func zetaRegionsWithin(in *input, editableTokens, contextTokens, zetaReach int) zetaRegion {
	// The excerpt holds at most zetaExcerptTokens of lines that each count at least one token
	// and at most a third of their bytes: under 3 × (8192 + 8192) bytes on either side of the
	// cursor. Only the whole lines within zetaReach of it are read.
	lo, hi := 0, len(in.text)
	if in.cursor > zetaReach {
		lo = strings.LastIndexByte(in.text[:in.cursor-zetaReach], '\n') + 1
	}
	if in.cursor+zetaReach < len(in.text) {
		if i := strings.IndexByte(in.text[in.cursor+zetaReach:], '\n'); i >= 0 {
			hi = in.cursor + zetaReach + i
		}
	}
	text := in.text[lo:hi]
	starts := lineStarts(text)
	cursorRow := offsetRow(starts, in.cursor-lo)
	maxRow := len(starts) - 1
	sr, er, _ := expandSymmetric(text, starts, cursorRow, maxRow, zetaExcerptTokens)
	r := zetaRegion{excerptStart: lo + starts[sr], excerptEnd: lo + rowEnd(text, starts, er), excerptStartRow: strings.Count(in.text[:lo], "\n") + sr}
	excerpt := in.text[r.excerptStart:r.excerptEnd]
	es, ee, cs, ce := editableAndContext(excerpt, in.cursor-r.excerptStart, editableTokens, contextTokens)
	r.editStart, r.editEnd = r.excerptStart+es, r.excerptStart+ee
	r.contextStart, r.contextEnd = r.excerptStart+cs, r.excerptStart+ce
	r.cursor = in.cursor
	return r
}

// zetaReach bounds the text read on either side of the cursor for the excerpt: more than the
// excerpt's budget can take (6 bytes a token at most, counting a line's break).
const zetaReach = 6*zetaExcerptTokens + 1024

// lineStarts is compute_line_starts: the offset of each line's start.
func lineStarts(text string) []int {
	starts := make([]int, 1, strings.Count(text, "\n")+1)
	for at := 0; ; {
		i := strings.IndexByte(text[at:], '\n')
		if i < 0 {
			return starts
		}
		at += i + 1
		starts = append(starts, at)
	}
}

// linesAround are the lines from above lines before the one holding at to below lines after it
// (fewer at the text's ends; a text that ends with "\n", or is empty, has an empty last line), the
// number of the first of them in the text, and the index among them of at's line: what a format
// needs of a long document, found without reading all of it.
func linesAround(text string, at, above, below int) (spans []lineSpan, first, cur int) {
	start := strings.LastIndexByte(text[:at], '\n') + 1
	for ; cur < above && start > 0; cur++ {
		start = strings.LastIndexByte(text[:start-1], '\n') + 1
	}
	first = strings.Count(text[:start], "\n")
	spans = make([]lineSpan, 0, cur+below+1)
	for pos := start; len(spans) <= cur+below; {
		j := strings.IndexByte(text[pos:], '\n')
		if j < 0 {
			spans = append(spans, lineSpan{pos, len(text), len(text)})
			break
		}
		end := pos + j
		if end > pos && text[end-1] == '\r' {
			end--
		}
		spans = append(spans, lineSpan{pos, end, pos + j + 1})
		pos += j + 1
	}
	return spans, first, cur
}

// offsetRow is offset_to_row.
func offsetRow(starts []int, off int) int {
	i := sort.SearchInts(starts, off)
	if i < len(starts) && starts[i] == off {
		return i
	}
	return max(i-1, 0)
}

// rowEnd is row_end_offset: the end of a row before its "\n".
func rowEnd(text string, starts []int, row int) int {
	if row+1 < len(starts) {
		return min(max(starts[row+1]-1, 0), len(text))
	}
	return len(text)
}

// lineTokens is line_token_count_from_text: a row's estimated tokens, at least one.
func lineTokens(text string, starts []int, row int) int {
	return max(zetaEstimateTokens(rowEnd(text, starts, row)-starts[row]), 1)
}

// expandSymmetric is expand_symmetric: from the cursor's row, a row below then a row above, until
// the budget runs out or a row does not fit.
func expandSymmetric(text string, starts []int, cursorRow, maxRow, budget int) (int, int, int) {
	start, end := cursorRow, cursorRow
	budget = max(budget-lineTokens(text, starts, cursorRow), 0)
	for {
		up, down := start > 0, end < maxRow
		if budget == 0 || (!up && !down) {
			break
		}
		if down {
			t := lineTokens(text, starts, end+1)
			if t > budget {
				break
			}
			end++
			budget -= t
		}
		if up && budget > 0 {
			t := lineTokens(text, starts, start-1)
			if t > budget {
				break
			}
			start--
			budget -= t
		}
	}
	return start, end, budget
}

// expandLinewise is expand_linewise with prefer_up: a row above, then a row below, until neither
// fits. (Zed prefers down only after a syntax expansion went further up, and the agent has no
// syntax ranges.)
func expandLinewise(text string, starts []int, start, end, maxRow, remaining int) (int, int, int) {
	for {
		if remaining == 0 || (start == 0 && end >= maxRow) {
			break
		}
		expanded := false
		if start > 0 {
			if t := lineTokens(text, starts, start-1); t <= remaining {
				start--
				remaining -= t
				expanded = true
			}
		}
		if end < maxRow && remaining > 0 {
			if t := lineTokens(text, starts, end+1); t <= remaining {
				end++
				remaining -= t
				expanded = true
			}
		}
		if !expanded {
			break
		}
	}
	return start, end, remaining
}

// editableAndContext is compute_editable_and_context_ranges without syntax ranges: the editable
// range and the context range around it, as offsets in the excerpt; each ends before the "\n" of
// its last row.
func editableAndContext(excerpt string, cursor, editableTokens, contextTokens int) (es, ee, cs, ce int) {
	starts := lineStarts(excerpt)
	cursorRow := offsetRow(starts, cursor)
	maxRow := len(starts) - 1
	initial := editableTokens * 3 / 4
	sr, er, remaining := expandSymmetric(excerpt, starts, cursorRow, maxRow, initial)
	remaining += editableTokens - initial
	// With no syntax boundaries, both ways were expanded alike: up first.
	sr, er, _ = expandLinewise(excerpt, starts, sr, er, maxRow, remaining)
	es, ee = starts[sr], rowEnd(excerpt, starts, er)
	csr, cer, _ := expandLinewise(excerpt, starts, sr, er, maxRow, contextTokens)
	return es, ee, starts[csr], rowEnd(excerpt, starts, cer)
}

// zetaEventDiff is an event's body as Zed's history writes it: a unified diff hunk with up to
// three lines of context on each side (taken from the document as it is now).
func zetaEventDiff(e event) string {
	if e.diff != "" {
		return e.diff
	}
	var b strings.Builder
	before := splitKeep(e.ctxBefore)
	after := splitKeep(e.ctxAfter)
	oldLines, newLines := strings.Split(e.old, "\n"), strings.Split(e.new, "\n")
	first := e.line - len(before)
	fmt.Fprintf(&b, "@@ -%d,%d +%d,%d @@\n", first, len(before)+len(oldLines)+len(after), first, len(before)+len(newLines)+len(after))
	for _, l := range before {
		b.WriteString(" " + l + "\n")
	}
	for _, l := range oldLines {
		b.WriteString("-" + l + "\n")
	}
	for _, l := range newLines {
		b.WriteString("+" + l + "\n")
	}
	for _, l := range after {
		b.WriteString(" " + l + "\n")
	}
	return b.String()
}

// splitKeep splits lines written with "\n" (a final "\n" ends the last line; "" is no line).
func splitKeep(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// zetaWriteEvent is Zed's write_event: "--- a/PATH\n+++ b/PATH\n" and the diff.
func zetaWriteEvent(b *strings.Builder, e event) {
	b.WriteString("--- a/" + e.path + "\n+++ b/" + e.path + "\n")
	b.WriteString(zetaEventDiff(e))
}

// zetaHistory is format_edit_history_within_budget: the newest events first, at most six, as long
// as they fit, written oldest first after the header; "" when none fits.
func zetaHistory(events []event, fileMarker, name string, maxTokens int) string {
	header := fileMarker + name + "\n"
	total := zetaEstimateTokens(len(header))
	if total >= maxTokens {
		return ""
	}
	var parts []string
	for i := len(events) - 1; i >= 0 && len(parts) < zetaMaxEvents; i-- {
		var b strings.Builder
		zetaWriteEvent(&b, events[i])
		t := zetaEstimateTokens(b.Len())
		if total+t > maxTokens {
			break
		}
		total += t
		parts = append(parts, b.String())
	}
	if len(parts) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(header)
	for i := len(parts) - 1; i >= 0; i-- {
		b.WriteString(parts[i])
	}
	return b.String()
}

// relatedFile is one of Zed's related files: an excerpt of another open document.
type relatedFile struct {
	path             string
	maxRow           int // the document's line count
	startRow, endRow int // the excerpt's rows [startRow, endRow)
	text             string
	order            int
}

// zetaRelatedFiles takes from each other open document (most recently edited first) the lines
// that share the most names with the editable region: Zed's related excerpts come from its
// language servers, which the agent has not; the open files are what it has.
func zetaRelatedFiles(in *input, region string, maxFiles, lines int) []relatedFile {
	names := identifiers(region)
	var out []relatedFile
	for i, d := range in.others {
		if len(out) >= maxFiles {
			break
		}
		if strings.TrimSpace(d.text) == "" {
			continue
		}
		ix := in.words.of(d.uri, d.text)
		ls, best := ix.spans, ix.best(names)
		lo := max(best-lines/4, 0)
		hi := min(lo+lines, len(ls))
		text := d.text[ls[lo].start:ls[hi-1].next]
		out = append(out, relatedFile{path: d.path, maxRow: len(ls), startRow: lo, endRow: hi, text: text, order: i})
	}
	return out
}

// zetaRelated is format_related_files_within_budget: the excerpts taken by order (lowest first)
// as long as they fit, stopping at the first that does not, then written in the files' order,
// "...\n" after an excerpt that leaves rows out.
func zetaRelated(files []relatedFile, fileMarker string, maxTokens int) string {
	idx := make([]int, len(files))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return files[idx[a]].order < files[idx[b]].order })
	included := make([]bool, len(files))
	total := 0
	for _, i := range idx {
		f := files[i]
		cost := zetaEstimateTokens(len(fileMarker + f.path + "\n"))
		n := len(f.text)
		if !strings.HasSuffix(f.text, "\n") {
			n++
		}
		if f.endRow < f.maxRow {
			n += len("...\n")
		}
		cost += zetaEstimateTokens(n)
		if total+cost > maxTokens {
			break
		}
		total += cost
		included[i] = true
	}
	var b strings.Builder
	for i, f := range files {
		if !included[i] {
			continue
		}
		b.WriteString(fileMarker + f.path + "\n")
		b.WriteString(f.text)
		if !strings.HasSuffix(f.text, "\n") {
			b.WriteByte('\n')
		}
		if f.endRow < f.maxRow {
			b.WriteString("...\n")
		}
	}
	return b.String()
}

// zetaBudget is the prompt budget: Zed's 4096 tokens, or less when the model's context leaves less
// room beside the answer.
func zetaBudget(lim limits, maxTokens int) int {
	budget := zetaMaxPromptTokens
	if lim.contextTokens > 0 {
		budget = min(budget, lim.contextTokens-maxTokens)
	}
	return budget
}

// zetaMaxTokens is the answer's bound.
func zetaMaxTokens(lim limits) int {
	if lim.maxTokens > 0 {
		return lim.maxTokens
	}
	return zetaMaxOutputTokens
}

// holdsToken reports whether text holds one of the format's special tokens (a token ending in a
// line break only as a whole line), which would make the prompt ambiguous: Zed asks nothing then
// (prompt_input_contains_special_tokens).
func holdsToken(text string, tokens []string) (string, bool) {
	for _, t := range tokens {
		if line, ok := strings.CutSuffix(t, "\n"); ok {
			for _, l := range strings.Split(text, "\n") {
				if l == line {
					return t, true
				}
			}
			continue
		}
		if strings.Contains(text, t) {
			return t, true
		}
	}
	return "", false
}

// cutCursor removes the first cursor marker from s and returns its offset (-1 when none); any
// further copy is removed too.
func cutCursor(s, marker string) (string, int) {
	i := strings.Index(s, marker)
	if i < 0 {
		return s, -1
	}
	s = s[:i] + s[i+len(marker):]
	return strings.ReplaceAll(s, marker, ""), i
}

// sameEnding gives text the region's final line break, or its absence: Zed ends both old and new
// text with "\n" before it compares them, so a model's trailing line break adds no line.
func sameEnding(text, region string) string {
	switch {
	case strings.HasSuffix(region, "\n") && text != "" && !strings.HasSuffix(text, "\n"):
		return text + "\n"
	case !strings.HasSuffix(region, "\n") && strings.HasSuffix(text, "\n"):
		return strings.TrimSuffix(text, "\n")
	}
	return text
}
