package model

import (
	"errors"
	"fmt"
	"strings"
)

// zeta1Format is Zeta 1 (zed-industries/zeta), as Zed builds its prompt for a self-hosted server:
// crates/zeta_prompt, module zeta1 (format_zeta1_from_input, format_zeta1_events,
// format_zeta1_excerpt, clean_zeta1_model_output) and the Zeta1 arm of crates/edit_prediction's
// zeta.rs (the editable_350 / editable_350_context_150 ranges, the four stop strings).
type zeta1Format struct{}

func (zeta1Format) Name() string { return "zeta1" }

// Zeta 1's markers.
const (
	zeta1Cursor        = "<|user_cursor_is_here|>"
	zeta1StartOfFile   = "<|start_of_file|>"
	zeta1EditableStart = "<|editable_region_start|>"
	zeta1EditableEnd   = "<|editable_region_end|>"
)

const (
	zeta1InstructionHeader = "### Instruction:\n" +
		"You are a code completion assistant and your task is to analyze user edits and then rewrite an " +
		"excerpt that the user provides, suggesting the appropriate edits within the excerpt, taking " +
		"into account the cursor location.\n\n" +
		"### User Edits:\n\n"
	zeta1ExcerptHeader  = "\n\n### User Excerpt:\n\n"
	zeta1ResponseHeader = "\n\n### Response:\n"
)

var zeta1Markers = []string{zeta1Cursor, zeta1StartOfFile, zeta1EditableStart, zeta1EditableEnd, "### Instruction:", "### User Edits:", "### User Excerpt:", "### Response:"}

func (zeta1Format) Build(in *input, lim limits) (*call, error) {
	r := zetaRegions(in, zetaEditableTokens, zetaContextTokens)
	if t, ok := holdsToken(in.text[r.contextStart:r.contextEnd], zeta1Markers[:4]); ok {
		return nil, fmt.Errorf("the text holds Zeta 1's marker %q", t)
	}
	maxTokens := zetaMaxTokens(lim)
	events := in.events
	var prompt string
	for {
		prompt = zeta1Prompt(events, zeta1Excerpt(in.path, in.text, r))
		// Zed bounds Zeta 1's prompt by its region sizes alone; a smaller context given with
		// --model-context drops the oldest edits first.
		if lim.contextTokens == 0 || zetaEstimateTokens(len(prompt))+maxTokens <= lim.contextTokens {
			break
		}
		if len(events) == 0 {
			return nil, fmt.Errorf("the prompt (about %d tokens) and the answer do not fit in the model's context of %d tokens", zetaEstimateTokens(len(prompt)), lim.contextTokens)
		}
		events = events[1:]
	}
	region := in.text[r.editStart:r.editEnd]
	return &call{
		Prompt: Prompt{
			Raw: prompt,
			Stop: []string{
				zeta1EditableEnd, zeta1EditableEnd + "\n", zeta1EditableEnd + "\n\n", zeta1EditableEnd + "\n\n\n",
			},
			MaxTokens: maxTokens,
		},
		start: r.editStart, end: r.editEnd,
		read: func(answer string) (string, int, error) {
			// The model echoes the region's start marker before its rewrite (Zed's earlier
			// parser required it); an answer without it is not a rewrite of the region, and
			// reading all of it as one (as clean_zeta1_model_output would) shows noise.
			if !strings.Contains(answer, zeta1EditableStart) {
				return "", -1, errors.New("no " + zeta1EditableStart + " in the answer")
			}
			if !strings.Contains(answer, zeta1EditableEnd) {
				// The stop string took the end marker, and left the line break the prompt
				// writes before it (format_zeta1_excerpt: region, "\n", end marker), which
				// clean_zeta1_model_output keeps only when the marker is there to cut at.
				answer = strings.TrimSuffix(answer, "\n")
			}
			text, cursor := zeta1Clean(answer)
			return sameEnding(text, region), cursor, nil
		},
		markers: zeta1Markers,
		ends:    []string{zeta1EditableEnd},
	}, nil
}

// zeta1Prompt is format_zeta1_prompt.
func zeta1Prompt(events []event, excerpt string) string {
	return zeta1InstructionHeader + zeta1Events(events) + zeta1ExcerptHeader + excerpt + zeta1ResponseHeader
}

// zeta1Events is format_zeta1_events: the six newest edits, oldest first, each "User edited
// PATH:" and its diff in a fence, separated by a blank line.
func zeta1Events(events []event) string {
	var b strings.Builder
	for _, e := range events[max(len(events)-zetaMaxEvents, 0):] {
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		fmt.Fprintf(&b, "User edited %s:\n```diff\n%s\n```", e.path, zetaEventDiff(e))
	}
	return b.String()
}

// zeta1Excerpt is format_zeta1_excerpt, over the regions of text t.
func zeta1Excerpt(path, t string, r zetaRegion) string {
	var b strings.Builder
	b.WriteString("```" + path + "\n")
	if r.excerptStartRow == 0 && r.contextStart == r.excerptStart {
		b.WriteString(zeta1StartOfFile + "\n")
	}
	b.WriteString(t[r.contextStart:r.editStart])
	b.WriteString(zeta1EditableStart + "\n")
	b.WriteString(t[r.editStart:r.cursor])
	b.WriteString(zeta1Cursor)
	b.WriteString(t[r.cursor:r.editEnd])
	b.WriteString("\n" + zeta1EditableEnd)
	b.WriteString(t[r.editEnd:r.contextEnd])
	b.WriteString("\n```")
	return b.String()
}

// zeta1Clean is clean_zeta1_model_output: the text after the start marker (and its line break) up
// to the end marker (less the line break before it), or to the end when the stop string took the
// end marker; the cursor marker's place becomes the cursor (-1 when the model placed none).
func zeta1Clean(output string) (string, int) {
	content := strings.ReplaceAll(output, zeta1Cursor, "")
	start := 0
	if i := strings.Index(content, zeta1EditableStart); i >= 0 {
		start = i + len(zeta1EditableStart)
		if start < len(content) && content[start] == '\n' {
			start++
		}
	}
	end := len(content)
	if i := strings.Index(content, zeta1EditableEnd); i >= 0 {
		end = i
		if i > 0 && content[i-1] == '\n' {
			end = i - 1
		}
	}
	if start > end {
		return "", -1
	}
	text := content[start:end]
	cursor := -1
	if at := strings.Index(output, zeta1Cursor); at >= 0 {
		before := strings.ReplaceAll(output[:at], zeta1Cursor, "")
		skip := 0
		if i := strings.Index(before, zeta1EditableStart); i >= 0 {
			skip = i + len(zeta1EditableStart)
			if skip < len(before) && before[skip] == '\n' {
				skip++
			}
		}
		cursor = min(max(len(before)-skip, 0), len(text))
	}
	return text, cursor
}
