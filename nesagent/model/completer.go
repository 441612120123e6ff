package model

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent"
)

// Prompt is what the engine asks a model for one request: for a chat model a system message (the
// instructions) and a user message (the file around the cursor with the editable region marked,
// the recent edits, the excerpts); for a raw-completion model the prompt itself and the strings
// that end its answer; a bound on the answer's length, and the document the request is about.
type Prompt struct {
	System, User string
	// Raw, when set, is a raw completion's prompt (System and User are then empty), sent as it
	// is: no chat template is applied to it.
	Raw string
	// FIM, when set, is a fill-in-the-middle request (System, User and Raw are then empty),
	// written as the server takes it (transport.go).
	FIM *FIMPrompt
	// Path, when set, is a hosted service's own endpoint below the server's address
	// (Inception's /v1/edit/completions for a chat-shaped request). Body, when set, is that
	// service's own request (Sweep's), sent as JSON, compressed by brotli when Brotli is set;
	// the answer's body is the Answer's text, for the format to read.
	Path      string
	Body      any
	Brotli    bool
	Stop      []string
	MaxTokens int
	URI       string
}

// Answer is a model's answer to a Prompt: its text, which the request's format reads (the
// rewritten region, in that format's grammar), and the changes to files that a coding agent
// proposed instead (its edit tools), which the engine prefers when there are any.
type Answer struct {
	Text    string
	Changes []Change
	// Cut says the answer was cut short by the request's bound on tokens (finish_reason
	// "length"): its end may be missing.
	Cut bool
	// Timings are llama-server's figures for the answer, when it gave them.
	Timings *Timings
}

// Change is a change a coding agent proposed to a file: OldText replaced by NewText, or, when
// OldText is nil, NewText as the file's whole new text.
type Change struct {
	Path    string // the file's absolute path on this machine
	OldText *string
	NewText string
}

// Completer is how the engine reaches a model: one prompt in, one answer out. It must return
// promptly when ctx ends.
type Completer interface {
	Complete(ctx context.Context, p Prompt) (Answer, error)
}

// WithCompleter is the engine over another transport than an OpenAI-compatible server: the same
// prompt and the same reading of the answer, the answer from c (an ACP agent's session, for one).
// cfg's URL, Model, APIKey, Timeout and HTTPClient are not used: c has its own.
func WithCompleter(cfg Config, c Completer) (nesagent.Engine, error) {
	if c == nil {
		return nil, errors.New("model: no completer")
	}
	e, err := withDefaults(cfg)
	if err != nil {
		return nil, err
	}
	e.c = c
	return e, nil
}

// changeSuggestions turns the changes a coding agent proposed into suggestions: one per document
// that the request has (the requested one, or another open one), with the smallest edits that
// make the change. Changes to files that are not open are left out: the bridge shows only what it
// can place in a document.
func changeSuggestions(req nesagent.Request, changes []Change, log *slog.Logger) []nesagent.Suggestion {
	type target struct {
		uri, text string
		cursor    int
		edits     []nesagent.TextEdit
	}
	docs := []*target{{uri: req.URI, text: req.Text, cursor: req.Cursor}}
	for _, d := range req.Open {
		docs = append(docs, &target{uri: d.URI, text: d.Text, cursor: -1})
	}
	for _, c := range changes {
		var t *target
		for _, d := range docs {
			if sameFile(d.uri, c.Path) {
				t = d
				break
			}
		}
		if t == nil {
			log.Info("model: the agent proposed a change to a file that is not open; left out", "path", c.Path)
			continue
		}
		var edits []nesagent.TextEdit
		if c.OldText == nil || (*c.OldText == "" && t.text != "") {
			edits = regionEdits(t.text, c.NewText, 0)
		} else {
			at := nearest(t.text, *c.OldText, t.cursor)
			if at < 0 {
				log.Info("model: the agent proposed to replace text the document does not hold; left out", "path", c.Path)
				continue
			}
			edits = regionEdits(*c.OldText, c.NewText, at)
		}
		if why := unfitEdits(edits, t.text); why != "" {
			log.Info("model: the agent's change left out: "+why, "path", c.Path)
			continue
		}
		t.edits = append(t.edits, edits...)
	}
	var out []nesagent.Suggestion
	for i, t := range docs {
		edits := disjoint(t.edits)
		if len(edits) == 0 {
			continue
		}
		s := nesagent.Suggestion{Edits: edits}
		if i > 0 {
			s.URI = t.uri
		}
		out = append(out, s)
	}
	return out
}

// nearest is the offset of the occurrence of old in text nearest to cursor (the first when cursor
// is negative), or -1.
func nearest(text, old string, cursor int) int {
	best := -1
	for from := 0; from <= len(text); {
		i := strings.Index(text[from:], old)
		if i < 0 {
			break
		}
		i += from
		if best < 0 || (cursor >= 0 && absInt(i-cursor) < absInt(best-cursor)) {
			best = i
		}
		if cursor < 0 || old == "" {
			break
		}
		from = i + 1
	}
	return best
}

func absInt(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// disjoint sorts edits and drops any that overlaps one before it.
func disjoint(edits []nesagent.TextEdit) []nesagent.TextEdit {
	sort.SliceStable(edits, func(i, j int) bool { return edits[i].Start < edits[j].Start })
	var out []nesagent.TextEdit
	for _, e := range edits {
		if n := len(out); n > 0 && e.Start < out[n-1].End {
			continue
		}
		out = append(out, e)
	}
	return out
}

// sameFile reports whether a document's file: URI names the file at path, as this platform
// compares paths (case-insensitively on Windows and macOS).
func sameFile(uri, path string) bool {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" || path == "" {
		return false
	}
	p := u.Path
	if runtime.GOOS == "windows" {
		// file:///C:/x is C:\x; file://server/share/x is \\server\share\x.
		p = strings.TrimPrefix(p, "/")
		if u.Host != "" {
			p = `\\` + u.Host + `\` + p
		}
	}
	a, b := filepath.Clean(filepath.FromSlash(p)), filepath.Clean(path)
	if runtime.GOOS == "windows" || runtime.GOOS == "darwin" {
		return strings.EqualFold(a, b)
	}
	return a == b
}

// unfitEdits says why one of edits of text cannot go to the editor (unfitText, with the control
// characters text holds allowed), or "".
func unfitEdits(edits []nesagent.TextEdit, text string) string {
	for _, ed := range edits {
		if ed.Start < 0 || ed.End > len(text) || ed.Start > ed.End {
			return "an edit outside the file"
		}
		if why := unfitText(ed.NewText, text); why != "" {
			return why
		}
	}
	return ""
}
