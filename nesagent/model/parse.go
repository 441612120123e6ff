package model

import (
	"strings"
)

// The markers of the prompt and of the answer.
const (
	markStart  = "<|editable_region_start|>"
	markEnd    = "<|editable_region_end|>"
	markCursor = "<|user_cursor_is_here|>"
)

// extractRegion finds the rewritten region in a model's answer: the text between a
// markStart and the markEnd that follows it. Reasoning in <think>…</think> is
// ignored; chatter and code fences around the markers are ignored; when the answer holds several
// marked regions, the last one whose start marker ends its line wins (an explanation that names
// the markers does not). The text is returned as written, from the line after the start marker;
// ok is false when there is no complete marked region.
func extractRegion(answer string) (body string, ok bool) {
	answer = stripThinking(answer)
	var own, last string
	var haveOwn, haveLast bool
	for i := 0; ; {
		s := strings.Index(answer[i:], markStart)
		if s < 0 {
			break
		}
		from := i + s + len(markStart)
		e := strings.Index(answer[from:], markEnd)
		if e < 0 {
			break
		}
		to := from + e
		if k := strings.LastIndex(answer[from:to], markStart); k >= 0 {
			from += k + len(markStart)
		}
		b := strings.TrimLeft(answer[from:to], " \t")
		switch {
		case strings.HasPrefix(b, "\r\n"):
			own, haveOwn = b[2:], true
		case strings.HasPrefix(b, "\n"):
			own, haveOwn = b[1:], true
		case strings.HasPrefix(b, "```"):
			// A fence opened on the marker's line: the body starts with it.
			own, haveOwn = b, true
		}
		last, haveLast = answer[from:to], true
		i = to + len(markEnd)
	}
	switch {
	case haveOwn:
		return own, true
	case haveLast:
		return last, true
	}
	return "", false
}

// stripThinking drops <think>…</think> blocks (a reasoning model's thoughts may quote the markers);
// an unclosed one runs to the end.
func stripThinking(s string) string {
	for {
		i := strings.Index(s, "<think>")
		if i < 0 {
			return s
		}
		j := strings.Index(s[i:], "</think>")
		if j < 0 {
			return s[:i]
		}
		s = s[:i] + s[i+j+len("</think>"):]
	}
}

// stripFence removes a code fence wrapped around the whole body (```lang on the first non-blank
// line, ``` on the last).
func stripFence(body string) string {
	lines := strings.Split(body, "\n")
	first, last := -1, -1
	for i, l := range lines {
		if strings.TrimSpace(l) != "" {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 || last == first || !strings.HasPrefix(strings.TrimSpace(lines[first]), "```") || strings.TrimSpace(lines[last]) != "```" {
		return body
	}
	if last == first+1 {
		return ""
	}
	return strings.Join(lines[first+1:last], "\n") + "\n"
}

// rewrite is what a prompt needs to read the answer to it.
type rewrite struct {
	region string // the region's original text
	// added tells that the prompt put a line break after the region's text (with the cursor
	// marker) to end its last line before the end marker.
	added bool
	// fenced tells that the region itself starts with a code fence (Markdown), which must then
	// not be taken for the model's wrapping.
	fenced bool
}

// parse turns a model's answer into the region's new text, with "\n" line breaks; ok is false when
// the answer holds no usable region.
func (r rewrite) parse(answer string) (string, bool) {
	body, ok := extractRegion(answer)
	if !ok {
		return "", false
	}
	body = strings.ReplaceAll(body, markCursor, "")
	body = strings.ReplaceAll(body, "\r\n", "\n")
	if !r.fenced {
		body = stripFence(body)
	}
	if body != "" && !strings.HasSuffix(body, "\n") {
		body += "\n"
	}
	if r.added {
		body = strings.TrimSuffix(body, "\n")
	}
	if body != "" && !strings.HasSuffix(body, "\n") && strings.HasSuffix(r.region, "\n") {
		body += "\n"
	}
	if strings.TrimSpace(body) == "" && strings.TrimSpace(r.region) != "" {
		// Emptying the whole region is far more often a failed answer than the next edit.
		return "", false
	}
	return body, true
}
