package model

import (
	"fmt"
	"strings"
)

// instinctFormat is Continue's Instinct (continuedev/instinct, Ollama's nate/instinct), a chat
// model, as Continue builds its prompt in core/nextEdit: INSTINCT_SYSTEM_PROMPT and
// INSTINCT_USER_PROMPT_PREFIX (constants.ts), the instinct template of NextEditPromptEngine.ts,
// contextSnippetsBlock, currentFileContentBlock and editHistoryBlock (templating/instinct.ts), and
// InstinctNextEditProvider's window (25 lines around the cursor) and editable region (the line
// above the cursor's to five lines below). Two things differ, as docs/model-agent.md says: the
// file is named relative to the workspace, not by its URI, and the system prompt is always sent
// (Continue leaves it to Ollama's model file; other servers have none).
type instinctFormat struct{}

func (instinctFormat) Name() string { return "instinct" }

const (
	instinctCursor        = "<|user_cursor_is_here|>"
	instinctEditableStart = "<|editable_region_start|>"
	instinctEditableEnd   = "<|editable_region_end|>"
	instinctContextFile   = "<|context_file|>"
	instinctSnippet       = "<|snippet|>"
	// InstinctNextEditProvider's margins.
	instinctWindow      = 25
	instinctTopMargin   = 1
	instinctBelowMargin = 5
	instinctMaxEdits    = 5   // NextEditProvider keeps the last five diffs
	instinctMaxTokens   = 512 // the region's rewrite, with room
	instinctRelatedMax  = 3
	instinctRelatedLen  = 20
)

const instinctSystemPrompt = `You are Instinct, an intelligent next-edit predictor developed by Continue.dev. Your role as an AI agent is to help developers complete their code tasks by predicting the next edit that they will make within the section of code marked by <|editable_region_start|> and <|editable_region_end|> tags.

You have access to the following information to help you make informed suggestions:

- Context: In the section marked "### Context", there are context items from potentially relevant files in the developer's codebase. Each context item consists of a <|context_file|> marker, the filepath, a <|snippet|> marker, and then some content from that file, in that order. Keep in mind that not all of the context information may be relevant to the task, so use your judgement to determine which parts to consider.
- User Edits: In the section marked "### User Edits:", there is a record of the most recent changes made to the code, helping you understand the evolution of the code and the developer's intentions. These changes are listed from most recent to least recent. It's possible that some of the edit diff history is entirely irrelevant to the developer's change. The changes are provided in a unified line-diff format, i.e. with pluses and minuses for additions and deletions to the code.
- User Excerpt: In the section marked "### User Excerpt:", there is a filepath to the developer's current file, and then an excerpt from that file. The <|editable_region_start|> and <|editable_region_end|> markers are within this excerpt. Your job is to rewrite only this editable region, not the whole excerpt. The excerpt provides additional context on the surroundings of the developer's edit.
- Cursor Position: Within the user excerpt's editable region, the <|user_cursor_is_here|> flag indicates where the developer's cursor is currently located, which can be crucial for understanding what part of the code they are focusing on. Do not produce this marker in your output; simply take it into account.

Your task is to predict and complete the changes the developer would have made next in the editable region. The developer may have stopped in the middle of typing. Your goal is to keep the developer on the path that you think they're following. Some examples include further implementing a class, method, or variable, or improving the quality of the code. Make sure the developer doesn't get distracted by ensuring your suggestion is relevant. Consider what changes need to be made next, if any. If you think changes should be made, ask yourself if this is truly what needs to happen. If you are confident about it, then proceed with the changes.

# Steps

1. **Review Context**: Analyze the context from the resources provided, such as recently viewed snippets, edit history, surrounding code, and cursor location.
2. **Evaluate Current Code**: Determine if the current code within the tags requires any corrections or enhancements.
3. **Suggest Edits**: If changes are required, ensure they align with the developer's patterns and improve code quality.
4. **Maintain Consistency**: Ensure indentation and formatting follow the existing code style.

# Output Format

- Provide only the revised code within the tags. Do not include the tags in your output.
- Ensure that you do not output duplicate code that exists outside of these tags.
- Avoid undoing or reverting the developer's last change unless there are obvious typos or errors.`

const instinctUserPrefix = "Reference the user excerpt, user edits, and the snippets to understand the developer's intent. Update the editable region of the user excerpt by predicting and completing the changes they would have made next. This may be a deletion, addition, or modification of code."

var instinctMarkers = []string{instinctCursor, instinctEditableStart, instinctEditableEnd, instinctContextFile, instinctSnippet, "### User Excerpt:", "### Response:"}

func (instinctFormat) Build(in *input, lim limits) (*call, error) {
	// The window's lines (strings.Split's, the last one empty after a final line break); row
	// numbers are relative to the window's first.
	spans, _, row := linesAround(in.text, in.cursor, instinctWindow, instinctWindow)
	lines := make([]string, len(spans))
	for i, l := range spans {
		lines[i] = in.text[l.start:l.end]
	}
	windowStart, windowEnd := 0, len(lines)-1
	editStart, editEnd := max(row-instinctTopMargin, 0), min(row+instinctBelowMargin, len(lines)-1)
	if t, ok := holdsToken(in.text[spans[windowStart].start:spans[windowEnd].end], instinctMarkers[:5]); ok {
		return nil, fmt.Errorf("the text holds Instinct's marker %q", t)
	}
	excerpt := instinctExcerpt(lines, windowStart, windowEnd, editStart, editEnd, row, in.cursor-spans[row].start)
	user := instinctUserPrefix + "\n\n### Context:\n" + instinctContext(in) +
		"\n\n### User Edits:\n\n" + instinctEdits(in.events) +
		"\n\n### User Excerpt:\n" + in.path + "\n\n" + excerpt + "```\n### Response:"
	maxTokens := lim.maxTokens
	if maxTokens == 0 {
		maxTokens = instinctMaxTokens
	}
	if lim.contextTokens > 0 && (len(instinctSystemPrompt)+len(user))/3+maxTokens > lim.contextTokens {
		return nil, fmt.Errorf("the prompt (about %d tokens) and the answer do not fit in the model's context of %d tokens", (len(instinctSystemPrompt)+len(user))/3, lim.contextTokens)
	}
	start, end := spans[editStart].start, spans[editEnd].end
	region := in.text[start:end]
	return &call{
		Prompt: Prompt{System: instinctSystemPrompt, User: user, MaxTokens: maxTokens},
		start:  start, end: end,
		read: func(answer string) (string, int, error) {
			text := instinctClean(answer)
			if strings.HasSuffix(region, "\n") && !strings.HasSuffix(region, "\n\n") {
				// The excerpt writes the region's lines, its last one empty when the region
				// ends a line, then a line break and the end marker: a model that copies
				// that layout ends with one line break more than the region.
				text = strings.TrimSuffix(text, "\n")
			}
			if strings.TrimSpace(text) == "" && strings.TrimSpace(region) != "" {
				return "", -1, errNoEdit
			}
			return sameEnding(text, region), -1, nil
		},
		markers: instinctMarkers,
	}, nil
}

// instinctExcerpt is currentFileContentBlock: the lines of the window, the cursor marked on its
// line, the editable lines [editStart, editEnd] between the region's markers, each marker on a
// line of its own.
func instinctExcerpt(lines []string, windowStart, windowEnd, editStart, editEnd, row, col int) string {
	withCursor := append([]string(nil), lines...)
	if row >= 0 && row < len(lines) {
		col = min(max(col, 0), len(lines[row]))
		withCursor[row] = lines[row][:col] + instinctCursor + lines[row][col:]
	}
	var out []string
	out = append(out, withCursor[windowStart:editStart]...)
	out = append(out, instinctEditableStart)
	out = append(out, withCursor[editStart:editEnd+1]...)
	out = append(out, instinctEditableEnd)
	out = append(out, withCursor[editEnd+1:windowEnd+1]...)
	return strings.Join(out, "\n")
}

// instinctContext is contextSnippetsBlock over the other open files, each as Continue's
// Codestral-style context renders it: "<|context_file|>: PATH " (the space is Codestral's), then
// "<|snippet|>" and the excerpt, separated by a blank line.
func instinctContext(in *input) string {
	var items []string
	for _, r := range zetaRelatedFiles(in, in.text[max(in.cursor-2000, 0):min(in.cursor+2000, len(in.text))], instinctRelatedMax, instinctRelatedLen) {
		items = append(items, instinctContextFile+": "+r.path+" \n"+instinctSnippet+"\n"+strings.TrimRight(r.text, "\n"))
	}
	return strings.Join(items, "\n\n")
}

// instinctEdits is editHistoryBlock over the last five edits, oldest first: each `User edited file
// "PATH"`, a blank line and its hunk in a diff fence (blank context lines left out, as the
// reference's filter leaves them out), joined by a line break.
func instinctEdits(events []event) string {
	var blocks []string
	for _, e := range events[max(len(events)-instinctMaxEdits, 0):] {
		var hunk []string
		for _, l := range strings.Split(strings.TrimSuffix(zetaEventDiff(e), "\n"), "\n") {
			if strings.TrimSpace(l) != "" {
				hunk = append(hunk, l)
			}
		}
		blocks = append(blocks, "User edited file \""+e.path+"\"\n\n```diff\n"+strings.Join(hunk, "\n")+"\n```")
	}
	return strings.Join(blocks, "\n")
}

// instinctClean reads the region from an answer: the model is told not to write the markers, but
// may; they are dropped, and a code fence around the answer (Continue's removeBackticks).
func instinctClean(answer string) string {
	answer = strings.ReplaceAll(answer, instinctCursor, "")
	var out []string
	for _, l := range strings.Split(answer, "\n") {
		if t := strings.TrimSpace(l); t == instinctEditableStart || t == instinctEditableEnd {
			continue
		}
		out = append(out, l)
	}
	if len(out) > 0 && strings.HasPrefix(strings.TrimSpace(out[0]), "```") {
		out = out[1:]
	}
	if n := len(out); n > 0 && strings.Trim(out[n-1], "`") == "" && strings.Contains(out[n-1], "`") {
		out = out[:n-1]
	}
	return strings.Join(out, "\n")
}
