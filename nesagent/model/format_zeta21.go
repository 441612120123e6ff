package model

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// zeta21Format is Zeta 2.1, Zed's ZetaFormat::V0318SeedMultiRegions (serde alias "Zeta2.1") in
// crates/zeta_prompt: the Seed-Coder prompt of Zeta 2 with the editable region cut into blocks by
// <|marker_N|> tags (build_v0318_cursor_prefix, write_editable_with_markers_v0318,
// compute_marker_offsets_v0318), and an answer that rewrites the blocks between two tags
// (apply_marker_span_v0318).
type zeta21Format struct{}

func (zeta21Format) Name() string { return "zeta2.1" }

const (
	markerTagPrefix = "<|marker_"
	markerTagSuffix = "|>"
	// zeta21EndMarker is Seed-Coder's end of sentence, the format's stop string; "▁" is U+2581.
	zeta21EndMarker = "<[end\u2581of\u2581sentence]>"
	// The lines of a block (V0318_MIN_BLOCK_LINES, V0318_MAX_BLOCK_LINES), and how far a boundary
	// may move to a better line (MAX_NUDGE_LINES).
	zeta21MinBlockLines = 6
	zeta21MaxBlockLines = 16
	zeta21MaxNudge      = 5
)

var zeta21Tokens = []string{seedFIMSuffix, seedFIMPrefix, seedFIMMiddle, seedFileMarker, zeta21EndMarker, zetaCursor, markerTagPrefix}

func markerTag(n int) string { return markerTagPrefix + strconv.Itoa(n) + markerTagSuffix }

func (zeta21Format) Build(in *input, lim limits) (*call, error) {
	r := zetaRegions(in, zetaEditableTokens, zetaContextTokens)
	if t, ok := holdsToken(in.text[r.excerptStart:r.excerptEnd], zeta21Tokens); ok {
		return nil, fmt.Errorf("the text holds Zeta 2.1's token %q", t)
	}
	context := in.text[r.contextStart:r.contextEnd]
	es, ee, c := r.editStart-r.contextStart, r.editEnd-r.contextStart, r.cursor-r.contextStart
	region := context[es:ee]
	offsets := markerOffsets(region)
	maxTokens := zetaMaxTokens(lim)
	related := zetaRelatedFiles(in, region, zetaRelatedMax, zetaRelatedLines)
	prompt, err := seedPrompt(in.events, related, zetaBudget(lim, maxTokens), context[ee:], zeta21CursorSection(in.path, context, es, ee, c, offsets))
	if err != nil {
		return nil, err
	}
	return &call{
		Prompt: Prompt{Raw: prompt, Stop: []string{zeta21EndMarker}, MaxTokens: maxTokens},
		start:  r.editStart, end: r.editEnd,
		read: func(answer string) (string, int, error) {
			answer = cutAtStops(answer, zeta21EndMarker)
			text, err := applyMarkerSpan(region, answer, offsets)
			if err != nil {
				return "", -1, err
			}
			text, cursor := cutCursor(text, zetaCursor)
			return text, cursor, nil
		},
		markers: zeta21Tokens,
	}, nil
}

// zeta21CursorSection is build_v0318_cursor_prefix: the file's name, the context before the
// editable region, the region cut into blocks by marker tags with the cursor marked, a line break.
func zeta21CursorSection(path, context string, es, ee, c int, offsets []int) string {
	var b strings.Builder
	b.WriteString(seedFileMarker + path + "\n")
	b.WriteString(context[:es])
	writeWithMarkers(&b, context[es:ee], c-es, offsets)
	if !strings.HasSuffix(b.String(), "\n") {
		b.WriteByte('\n')
	}
	return b.String()
}

// writeWithMarkers is write_editable_with_markers_v0318: a tag before each block and after the
// last, the cursor marker in the block that holds the cursor (the earlier one on a boundary).
func writeWithMarkers(b *strings.Builder, region string, cursor int, offsets []int) {
	placed := false
	for i, off := range offsets {
		b.WriteString(markerTag(i + 1))
		if i+1 < len(offsets) {
			next := offsets[i+1]
			block := region[off:next]
			if !placed && cursor >= off && cursor <= next {
				placed = true
				b.WriteString(block[:cursor-off])
				b.WriteString(zetaCursor)
				b.WriteString(block[cursor-off:])
			} else {
				b.WriteString(block)
			}
		}
	}
}

// markerLine is collect_line_info's LineInfo.
type markerLine struct {
	start            int
	blank, goodStart bool
}

// markerOffsets is compute_marker_offsets_with_limits with V0318's limits: 0, the starts of lines
// that begin blocks (after a blank line once a block has six lines, or after sixteen, nudged to a
// line that does not close a structure), and the region's length.
func markerOffsets(region string) []int {
	if region == "" {
		return []int{0, 0}
	}
	var lines []markerLine
	off := 0
	for _, l := range strings.Split(region, "\n") {
		t := strings.TrimFunc(l, unicode.IsSpace)
		blank := t == ""
		lines = append(lines, markerLine{start: off, blank: blank, goodStart: !blank && !structuralTail(t)})
		off += len(l) + 1
	}
	if strings.HasSuffix(region, "\n") && len(lines) > 1 {
		lines = lines[:len(lines)-1]
	}
	goodFrom := func(from int) int {
		for i := from; i < min(len(lines), from+zeta21MaxNudge); i++ {
			if lines[i].goodStart {
				return i
			}
		}
		return -1
	}
	offsets := []int{0}
	last := 0
	for i := 0; i < len(lines); {
		gap := i - last
		if gap >= zeta21MinBlockLines && !lines[i].blank && i > 0 && lines[i-1].blank {
			target := i
			if !lines[i].goodStart {
				if g := goodFrom(i); g >= 0 {
					target = g
				}
			}
			if len(lines)-target >= zeta21MinBlockLines && lines[target].start > offsets[len(offsets)-1] {
				offsets = append(offsets, lines[target].start)
				last = target
				i = target + 1
				continue
			}
		}
		if gap >= zeta21MaxBlockLines {
			target := i
			if g := goodFrom(i); g >= 0 {
				target = g
			}
			if lines[target].start > offsets[len(offsets)-1] {
				offsets = append(offsets, lines[target].start)
				last = target
				i = target + 1
				continue
			}
		}
		i++
	}
	if offsets[len(offsets)-1] != len(region) {
		offsets = append(offsets, len(region))
	}
	return offsets
}

// structuralTail is is_structural_tail: a line that closes something is a poor block start.
func structuralTail(t string) bool {
	if strings.HasPrefix(t, "}") || strings.HasPrefix(t, "]") || strings.HasPrefix(t, ")") {
		return true
	}
	switch strings.TrimRight(t, ";") {
	case "break", "continue", "return", "throw", "end":
		return true
	}
	return false
}

// markerTagAt is one <|marker_N|> tag found in an answer.
type markerTagAt struct{ n, start, end int }

// markerTags is collect_marker_tags.
func markerTags(s string) []markerTagAt {
	var tags []markerTagAt
	for from := 0; ; {
		i := strings.Index(s[from:], markerTagPrefix)
		if i < 0 {
			return tags
		}
		start := from + i
		payload := start + len(markerTagPrefix)
		if j := strings.Index(s[payload:], markerTagSuffix); j >= 0 {
			if n, err := strconv.Atoi(s[payload : payload+j]); err == nil && n >= 0 {
				end := payload + j + len(markerTagSuffix)
				tags = append(tags, markerTagAt{n, start, end})
				from = end
				continue
			}
		}
		from = start + len(markerTagPrefix)
	}
}

// applyMarkerSpan is apply_marker_span_v0318: the text between the first and the last tag (the
// tags between them dropped) replaces the region's bytes between the two tags' offsets; the same
// tag first and last means no edit; fewer than two tags, a number out of range or the end before
// the start, no answer.
func applyMarkerSpan(region, answer string, offsets []int) (string, error) {
	tags := markerTags(answer)
	switch len(tags) {
	case 0:
		return "", errors.New("no marker tags in the answer")
	case 1:
		return "", errors.New("one marker tag in the answer, where two are needed")
	}
	first, last := tags[0].n, tags[len(tags)-1].n
	if first == last {
		return "", errNoEdit
	}
	if first < 1 || last < 1 || first > len(offsets) || last > len(offsets) {
		return "", fmt.Errorf("marker %d or %d is out of range (the region has %d)", first, last, len(offsets))
	}
	start, end := offsets[first-1], offsets[last-1]
	if start > end {
		return "", fmt.Errorf("marker %d comes after marker %d", first, last)
	}
	var b strings.Builder
	b.WriteString(region[:start])
	for i := 0; i+1 < len(tags); i++ {
		if tags[i].end <= tags[i+1].start {
			b.WriteString(answer[tags[i].end:tags[i+1].start])
		}
	}
	b.WriteString(region[end:])
	return b.String(), nil
}
