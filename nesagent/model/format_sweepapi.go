package model

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
)

// sweepAPIFormat is Sweep's hosted next-edit service (/backend/next_edit_autocomplete), asked as
// Sweep's own clients ask it: Zed's (crates/edit_prediction/src/sweep_ai.rs), Sweep's VS Code
// extension before it moved to a local server (sweepai/vscode-nes, src/api) and cursortab.nvim's
// (server/client/sweepapi). The request is one JSON object compressed by brotli: the file's
// contents, the cursor as a byte offset, the recent changes as diffs, the other files' first
// lines, the recent edits as user actions, the diagnostics. The answer replaces
// file_contents[start_index:end_index] (byte offsets, with use_bytes) by completion: one JSON
// object, or one per line as a stream of them (each a further replacement), or a list of them in
// completions.
type sweepAPIFormat struct{}

func (sweepAPIFormat) Name() string { return "sweep-api" }

const sweepAPIPath = "/backend/next_edit_autocomplete"

// sweepAPIRequest is the service's request; the fields are those all three clients send.
type sweepAPIRequest struct {
	DebugInfo          string            `json:"debug_info"`
	RepoName           string            `json:"repo_name"`
	Branch             *string           `json:"branch"`
	FilePath           string            `json:"file_path"`
	FileContents       string            `json:"file_contents"`
	OriginalContents   string            `json:"original_file_contents"`
	CursorPosition     int               `json:"cursor_position"`
	RecentChanges      string            `json:"recent_changes"`
	ChangesAboveCursor bool              `json:"changes_above_cursor"`
	MultipleSuggestion bool              `json:"multiple_suggestions"`
	FileChunks         []sweepFileChunk  `json:"file_chunks"`
	RetrievalChunks    []sweepFileChunk  `json:"retrieval_chunks"`
	RecentUserActions  []sweepUserAction `json:"recent_user_actions"`
	EditorDiagnostics  []sweepDiagnostic `json:"editor_diagnostics"`
	UseBytes           bool              `json:"use_bytes"`
	PrivacyMode        bool              `json:"privacy_mode_enabled"`
}

type sweepFileChunk struct {
	FilePath  string `json:"file_path"`
	StartLine int    `json:"start_line"`
	EndLine   int    `json:"end_line"`
	Content   string `json:"content"`
}

type sweepUserAction struct {
	ActionType string `json:"action_type"`
	LineNumber int    `json:"line_number"` // 1-based
	Offset     int    `json:"offset"`      // bytes
	FilePath   string `json:"file_path"`
	Timestamp  int64  `json:"timestamp"` // milliseconds
}

type sweepDiagnostic struct {
	Line     int    `json:"line"` // 1-based
	Severity string `json:"severity"`
	Message  string `json:"message"`
}

// Sweep's sizes, as Zed's client: three other files, their first 30 lines.
const (
	sweepAPIFiles      = 3
	sweepAPIChunkLines = 30
)

// sweepAPIAnswer is one suggestion of the service.
type sweepAPIAnswer struct {
	AutocompleteID string           `json:"autocomplete_id"`
	StartIndex     *int             `json:"start_index"`
	EndIndex       *int             `json:"end_index"`
	Completion     *string          `json:"completion"`
	Completions    []sweepAPIAnswer `json:"completions"`
}

func (sweepAPIFormat) Build(in *input, lim limits) (*call, error) {
	req := sweepAPIRequest{
		DebugInfo:          "acp-lsp-bridge",
		RepoName:           "untitled",
		FilePath:           in.path,
		FileContents:       in.text,
		OriginalContents:   in.text,
		CursorPosition:     in.cursor,
		ChangesAboveCursor: true,
		UseBytes:           true,
		FileChunks:         []sweepFileChunk{},
		RetrievalChunks:    []sweepFileChunk{},
		RecentUserActions:  []sweepUserAction{},
		EditorDiagnostics:  []sweepDiagnostic{},
	}
	if in.req.Root != "" {
		req.RepoName = baseName(in.req.Root)
	}
	// The text before the recent edits of this document, as the VS Code extension sends it.
	if _, ok := in.lastEvent(); ok {
		req.OriginalContents = originalText(in)
	}
	var changes strings.Builder
	now := time.Now().UnixMilli()
	for _, e := range in.events[max(len(in.events)-zetaMaxEvents, 0):] {
		fmt.Fprintf(&changes, "File: %s:\n%s\n", e.path, zetaEventDiff(e))
		kind := "INSERT_CHAR"
		if len(e.new) < len(e.old) {
			kind = "DELETE_CHAR"
		}
		req.RecentUserActions = append(req.RecentUserActions, sweepUserAction{ActionType: kind, LineNumber: e.line, Offset: max(e.oldAt, 0), FilePath: e.path, Timestamp: now})
	}
	req.RecentChanges = changes.String()
	for i, d := range in.others {
		if i >= sweepAPIFiles {
			break
		}
		c := chunkAround(d.text, 0, sweepAPIChunkLines)
		req.FileChunks = append(req.FileChunks, sweepFileChunk{FilePath: d.path, StartLine: 0, EndLine: strings.Count(c, "\n"), Content: c})
	}
	for _, dg := range in.diags {
		req.EditorDiagnostics = append(req.EditorDiagnostics, sweepDiagnostic{Line: dg.Line + 1, Severity: dg.Severity, Message: dg.Message})
	}
	text := in.text
	var id string
	return &call{
		ref:    func() string { return id },
		narrow: true,
		Prompt: Prompt{Path: sweepAPIPath, Body: req, Brotli: true},
		start:  0, end: len(text),
		read: func(answer string) (string, int, error) {
			reps, ref, err := readSweepAPI(answer)
			if err != nil {
				return "", -1, err
			}
			id = ref
			return applyReplacements(text, reps)
		},
	}, nil
}

// originalText is the document as it was before its recent edits (in.text with each of them
// taken back, newest first).
func originalText(in *input) string {
	t := in.text
	for i := len(in.events) - 1; i >= 0; i-- {
		e := in.events[i]
		if !e.current || e.oldAt < 0 || e.end > len(t) || e.oldAt > e.end {
			continue
		}
		if t[e.oldAt:e.end] != e.new && strings.TrimSuffix(t[e.oldAt:e.end], "\n") != e.new {
			break // the text moved under it: stop where it is known
		}
		t = t[:e.oldAt] + e.old + t[e.oldAt+len(e.new):]
	}
	return t
}

// replacement is one of the service's suggestions: text[start:end] replaced by text.
type replacement struct {
	start, end int
	text       string
}

// readSweepAPI reads the service's answer: one JSON object, or one per line (a stream of them),
// each a replacement or a list of them in completions. An empty completion over an empty range
// is no suggestion.
func readSweepAPI(body string) (_ []replacement, id string, _ error) {
	var out []replacement
	var add func(a sweepAPIAnswer) error
	add = func(a sweepAPIAnswer) error {
		if id == "" {
			id = a.AutocompleteID
		}
		if len(a.Completions) > 0 {
			for _, c := range a.Completions {
				if err := add(c); err != nil {
					return err
				}
			}
			return nil
		}
		if a.StartIndex == nil || a.EndIndex == nil || a.Completion == nil {
			return errors.New("an answer without start_index, end_index and completion")
		}
		out = append(out, replacement{start: *a.StartIndex, end: *a.EndIndex, text: *a.Completion})
		return nil
	}
	var whole sweepAPIAnswer
	if err := json.Unmarshal([]byte(body), &whole); err == nil {
		if err := add(whole); err != nil {
			return nil, "", err
		}
		return out, id, nil
	}
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(make([]byte, 64<<10), maxAnswerBytes)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var a sweepAPIAnswer
		if err := json.Unmarshal([]byte(line), &a); err != nil {
			return nil, "", fmt.Errorf("a malformed line of the answer (%v): %s", err, preview([]byte(line)))
		}
		if err := add(a); err != nil {
			return nil, "", err
		}
	}
	if err := sc.Err(); err != nil {
		return nil, "", err
	}
	if len(out) == 0 {
		return nil, "", fmt.Errorf("%w (an empty answer)", errNoEdit)
	}
	return out, id, nil
}

// applyReplacements applies the replacements to text: each within it, on whole characters, none
// overlapping another.
func applyReplacements(text string, reps []replacement) (string, int, error) {
	sort.SliceStable(reps, func(i, j int) bool { return reps[i].start < reps[j].start })
	var b strings.Builder
	at := 0
	for _, r := range reps {
		switch {
		case r.start < 0 || r.end > len(text) || r.start > r.end:
			return "", -1, fmt.Errorf("a replacement of [%d, %d) in a file of %d bytes", r.start, r.end, len(text))
		case r.start < at:
			return "", -1, fmt.Errorf("replacements that overlap at %d", r.start)
		case !onRune(text, r.start) || !onRune(text, r.end):
			return "", -1, fmt.Errorf("a replacement of [%d, %d) that splits a character", r.start, r.end)
		}
		b.WriteString(text[at:r.start])
		b.WriteString(strings.ReplaceAll(r.text, "\r\n", "\n"))
		at = r.end
	}
	b.WriteString(text[at:])
	return b.String(), -1, nil
}

// onRune reports whether offset i of s starts a character (or is its end).
func onRune(s string, i int) bool {
	return i == len(s) || i == 0 || s[i]&0xC0 != 0x80
}
