package model

import (
	"errors"
	"fmt"
	"strings"
)

// zeta2Format is Zeta 2 (zed-industries/zeta-2, on Seed-Coder), Zed's ZetaFormat::V0211SeedCoder
// (serde alias "Zeta2") in crates/zeta_prompt: seed_coder::assemble_fim_prompt and
// build_cursor_prefix_section for the prompt, parse_zeta2_model_output for the answer.
type zeta2Format struct{}

func (zeta2Format) Name() string { return "zeta2" }

// Seed-Coder's tokens and Zeta 2's markers (module seed_coder).
const (
	seedFIMSuffix   = "<[fim-suffix]>"
	seedFIMPrefix   = "<[fim-prefix]>"
	seedFIMMiddle   = "<[fim-middle]>"
	seedFileMarker  = "<filename>"
	seedStartMarker = "<<<<<<< CURRENT\n"
	seedSeparator   = "=======\n"
	seedEndMarker   = ">>>>>>> UPDATED\n"
	zetaCursor      = "<|user_cursor|>"
	zeta2NoEdits    = "NO_EDITS"
)

var zeta2Tokens = []string{seedFIMSuffix, seedFIMPrefix, seedFIMMiddle, seedFileMarker, seedStartMarker, seedSeparator, seedEndMarker, zetaCursor}

func (zeta2Format) Build(in *input, lim limits) (*call, error) {
	r := zetaRegions(in, zetaEditableTokens, zetaContextTokens)
	if t, ok := holdsToken(in.text[r.excerptStart:r.excerptEnd], zeta2Tokens); ok {
		return nil, fmt.Errorf("the text holds Zeta 2's token %q", strings.TrimSuffix(t, "\n"))
	}
	context := in.text[r.contextStart:r.contextEnd]
	es, ee, c := r.editStart-r.contextStart, r.editEnd-r.contextStart, r.cursor-r.contextStart
	maxTokens := zetaMaxTokens(lim)
	related := zetaRelatedFiles(in, context[es:ee], zetaRelatedMax, zetaRelatedLines)
	prompt, err := seedPrompt(in.events, related, zetaBudget(lim, maxTokens), context[ee:], zeta2CursorSection(in.path, context, es, ee, c))
	if err != nil {
		return nil, err
	}
	region := in.text[r.editStart:r.editEnd]
	return &call{
		Prompt: Prompt{Raw: prompt, MaxTokens: maxTokens},
		start:  r.editStart, end: r.editEnd,
		read: func(answer string) (string, int, error) {
			// parse_zeta2_model_output strips the end marker when the answer ends with it; a
			// server may return it without its line break, or more after it: cut at it.
			if i := strings.LastIndex(answer, strings.TrimSuffix(seedEndMarker, "\n")); i >= 0 {
				answer = answer[:i]
			}
			if strings.TrimSpace(answer) == zeta2NoEdits {
				return "", -1, errNoEdit
			}
			if answer == "" {
				return "", -1, errors.New("an empty answer")
			}
			text, cursor := cutCursor(answer, zetaCursor)
			return sameEnding(text, region), cursor, nil
		},
		markers: zeta2Tokens,
		ends:    []string{strings.TrimSuffix(seedEndMarker, "\n"), zeta2NoEdits},
		lines:   &lineSpec{ends: []string{strings.TrimSuffix(seedEndMarker, "\n")}, cursor: zetaCursor, noEdit: zeta2NoEdits},
	}, nil
}

// zeta2CursorSection is seed_coder's build_cursor_prefix_section: the file's name, the context
// before the editable region, the region between "<<<<<<< CURRENT" and "=======" with the cursor
// marked.
func zeta2CursorSection(path, context string, es, ee, c int) string {
	var b strings.Builder
	b.WriteString(seedFileMarker + path + "\n")
	b.WriteString(context[:es])
	b.WriteString(seedStartMarker)
	b.WriteString(context[es:c])
	b.WriteString(zetaCursor)
	b.WriteString(context[c:ee])
	if !strings.HasSuffix(b.String(), "\n") {
		b.WriteByte('\n')
	}
	b.WriteString(seedSeparator)
	return b.String()
}

// The other open files a Zeta prompt excerpts, and the lines of each excerpt: what the budget
// leaves room for.
const (
	zetaRelatedMax   = 3
	zetaRelatedLines = 40
)

// seedPrompt is seed_coder::assemble_fim_prompt for a cursor section: the suffix section (the
// context after the editable region), then after the prefix token the related files, the edit
// history and the cursor section, within the budget (Zed's 4096 tokens less a tenth; the related
// files go first when it is short, then the history); no prompt when even that is too long.
func seedPrompt(events []event, files []relatedFile, maxPrompt int, after, cursorSection string) (string, error) {
	budget := maxPrompt * 9 / 10 // apply_prompt_budget_margin
	suffix := seedFIMSuffix + after
	if !strings.HasSuffix(suffix, "\n") {
		suffix += "\n"
	}
	left := max(budget-zetaEstimateTokens(len(suffix)+len(seedFIMPrefix))-zetaEstimateTokens(len(cursorSection)+len(seedFIMMiddle)), 0)
	history := zetaHistory(events, seedFileMarker, "edit_history", left)
	left = max(left-zetaEstimateTokens(len(history)+1), 0)
	related := zetaRelated(files, seedFileMarker, left)
	var b strings.Builder
	b.WriteString(suffix)
	b.WriteString(seedFIMPrefix)
	if related != "" {
		b.WriteString(related + "\n")
	}
	if history != "" {
		b.WriteString(history + "\n")
	}
	b.WriteString(cursorSection)
	b.WriteString(seedFIMMiddle)
	prompt := b.String()
	if t := zetaEstimateTokens(len(prompt)); t > maxPrompt {
		return "", fmt.Errorf("the prompt (about %d tokens) does not fit in %d tokens", t, maxPrompt)
	}
	return prompt, nil
}
