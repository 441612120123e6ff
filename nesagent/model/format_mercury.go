package model

import (
	"errors"
	"fmt"
	"strings"
)

// mercuryFormat is Inception's Mercury Edit, asked at its next-edit endpoint
// (/v1/edit/completions, model mercury-edit): one user message (the endpoint takes no system
// message) with three sections, as Inception's next-edit documentation lays them out and Zed's
// (crates/edit_prediction/src/mercury.rs), Continue's (core/nextEdit, mercuryCoderNextEdit) and
// cursortab.nvim's (server/provider/mercuryapi) clients write them: the recently viewed snippets,
// the current file with the region to edit and the cursor marked, and the edit history as
// unified diffs, oldest first. The answer is the region rewritten, most often in a bare code
// fence; "None" means nothing to change.
type mercuryFormat struct{}

func (mercuryFormat) Name() string { return "mercury" }

// Mercury's markers.
const (
	mercurySnippets    = "<|recently_viewed_code_snippets|>"
	mercurySnippetsEnd = "<|/recently_viewed_code_snippets|>"
	mercurySnippet     = "<|recently_viewed_code_snippet|>"
	mercurySnippetEnd  = "<|/recently_viewed_code_snippet|>"
	mercuryFile        = "<|current_file_content|>"
	mercuryFileEnd     = "<|/current_file_content|>"
	mercuryEdit        = "<|code_to_edit|>"
	mercuryEditEnd     = "<|/code_to_edit|>"
	mercuryCursor      = "<|cursor|>"
	mercuryHistory     = "<|edit_diff_history|>"
	mercuryHistoryEnd  = "<|/edit_diff_history|>"
	mercuryEditPath    = "/v1/edit/completions"
)

var mercuryMarkers = []string{mercurySnippets, mercurySnippetsEnd, mercurySnippet, mercurySnippetEnd, mercuryFile, mercuryFileEnd, mercuryEdit, mercuryEditEnd, mercuryCursor, mercuryHistory, mercuryHistoryEnd}

// Mercury's sizes: Zed's editable region (350 tokens) and context around it (150), three
// recently viewed snippets of at most 30 lines (as Zed's and Sweep's clients show other files),
// the six newest edits.
const (
	mercuryEditableTokens = 350
	mercuryContextTokens  = 150
	mercurySnippetFiles   = 3
	mercurySnippetLines   = 30
	mercuryMaxEvents      = 6
	mercuryMaxTokens      = 1024
)

func (mercuryFormat) Build(in *input, lim limits) (*call, error) {
	r := zetaRegions(in, mercuryEditableTokens, mercuryContextTokens)
	if t, ok := holdsToken(in.text[r.contextStart:r.contextEnd], mercuryMarkers); ok {
		return nil, fmt.Errorf("the text holds Mercury's marker %q", t)
	}
	var b strings.Builder
	b.WriteString(mercurySnippets + "\n")
	for i, d := range in.others {
		if i >= mercurySnippetFiles {
			break
		}
		at := 0
		if i < len(in.req.Open) {
			o := in.req.Open[i]
			switch {
			case o.Visit >= 0 && o.Visit <= len(o.Text):
				at = o.Visit - strings.Count(o.Text[:o.Visit], "\r\n")
			case len(o.Recent) > 0:
				l := min(max(o.Recent[len(o.Recent)-1].LineStart, 0), len(o.Text))
				at = l - strings.Count(o.Text[:l], "\r\n")
			}
		}
		snippet := chunkAround(d.text, at, mercurySnippetLines)
		if strings.TrimSpace(snippet) == "" {
			continue
		}
		if _, ok := holdsToken(snippet, mercuryMarkers); ok {
			continue
		}
		b.WriteString(mercurySnippet + "\ncode_snippet_file_path: " + d.path + "\n" + strings.TrimSuffix(snippet, "\n") + "\n" + mercurySnippetEnd + "\n")
	}
	b.WriteString(mercurySnippetsEnd + "\n\n")
	b.WriteString(mercuryFile + "\ncurrent_file_path: " + in.path + "\n")
	b.WriteString(in.text[r.contextStart:r.editStart])
	b.WriteString(mercuryEdit + "\n")
	b.WriteString(in.text[r.editStart:r.cursor] + mercuryCursor + in.text[r.cursor:r.editEnd])
	if !strings.HasSuffix(in.text[r.editStart:r.editEnd], "\n") {
		b.WriteString("\n")
	}
	b.WriteString(mercuryEditEnd + "\n")
	b.WriteString(in.text[r.editEnd:r.contextEnd])
	if r.contextEnd > r.editEnd && !strings.HasSuffix(in.text[r.editEnd:r.contextEnd], "\n") {
		b.WriteString("\n")
	}
	b.WriteString(mercuryFileEnd + "\n\n")
	b.WriteString(mercuryHistory + "\n")
	events := in.events[max(len(in.events)-mercuryMaxEvents, 0):]
	for _, e := range events {
		fmt.Fprintf(&b, "--- a/%s\n+++ b/%s\n%s", e.path, e.path, zetaEventDiff(e))
	}
	b.WriteString(mercuryHistoryEnd + "\n")
	maxTokens := lim.maxTokens
	if maxTokens == 0 {
		maxTokens = mercuryMaxTokens
	}
	region := in.text[r.editStart:r.editEnd]
	return &call{
		Prompt: Prompt{User: b.String(), MaxTokens: maxTokens, Path: mercuryEditPath},
		start:  r.editStart, end: r.editEnd,
		read: func(answer string) (string, int, error) {
			text := unfence(answer)
			if strings.TrimSpace(text) == "None" {
				return "", -1, fmt.Errorf("%w (Mercury answered None)", errNoEdit)
			}
			if strings.Contains(text, mercuryEdit) || strings.Contains(text, mercuryEditEnd) {
				// The region's markers around the rewrite: what is between them.
				if i := strings.Index(text, mercuryEdit); i >= 0 {
					text = strings.TrimPrefix(text[i+len(mercuryEdit):], "\n")
				}
				if i := strings.Index(text, mercuryEditEnd); i >= 0 {
					text = text[:i]
				}
			}
			text, cursor := cutCursor(text, mercuryCursor)
			if text == "" && region != "" {
				return "", -1, errors.New("an empty rewrite")
			}
			return sameEnding(text, region), cursor, nil
		},
		markers: mercuryMarkers,
	}, nil
}

// unfence is s without the code fence around it, if any: the text between the first line
// starting "```" and the last "```" (Zed and cursortab strip "```\n" and "\n```", Continue takes
// what is between the first and the last fence).
func unfence(s string) string {
	t := strings.TrimSpace(s)
	if !strings.HasPrefix(t, "```") {
		return s
	}
	nl := strings.IndexByte(t, '\n')
	if nl < 0 {
		return s
	}
	body := t[nl+1:]
	if i := strings.LastIndex(body, "```"); i >= 0 {
		body = body[:i]
	}
	return strings.TrimSuffix(body, "\n") + "\n"
}
