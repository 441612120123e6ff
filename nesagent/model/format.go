package model

import (
	"errors"
	"fmt"
	"strings"
)

// A Format is one model's prompt and answer format: each open next-edit model was trained on
// exactly one, and answers well only to it. One file per format (format_*.go), after its public
// reference (docs/model-agent.md cites each).
type Format interface {
	// Name is the format's name for --model-format.
	Name() string
	// Build makes the request for one suggestion, or returns an error that says why nothing is
	// asked (no room for the region, the text holds the format's own markers).
	Build(in *input, lim limits) (*call, error)
}

// limits are what the user set that bounds a prompt and its answer, and the engine's settings.
type limits struct {
	cfg *Config
	// contextTokens is the model's context (--model-context); 0: the format's reference bound.
	contextTokens int
	// maxTokens is Config.MaxTokens; 0: the format's own.
	maxTokens int
}

// call is one request to the model and how to read its answer.
type call struct {
	Prompt
	// start and end bound the region the answer rewrites, in input.text.
	start, end int
	// read turns the answer into the region's new text (with "\n" line breaks) and the cursor's
	// offset in it (-1: the model placed none); an error says why the answer is of no use.
	read func(answer string) (text string, cursor int, err error)
	// markers are the strings of the format's prompts that no code holds: an answer whose new
	// text has one the region did not is the model copying its prompt (gate, engine.go).
	markers []string
	// ends are what marks the end of a whole answer in the format (Zeta 1's end marker, Zeta 2's
	// ">>>>>>> UPDATED"): an answer cut short by its bound on tokens is read only when it holds
	// one; in a format without one (the end is where the model stopped) it is dropped.
	ends []string
	// given is how much of the region the prompt already wrote as the answer's start (Sweep v2's
	// prefill): the gate judges what the model wrote after it.
	given int
}

// errNoEdit is an answer that says "nothing to change".
var errNoEdit = errors.New("the model proposes no edit")

// Formats are the formats by name.
var Formats = map[string]Format{
	"chat":     chatFormat{},
	"zeta1":    zeta1Format{},
	"zeta2":    zeta2Format{},
	"zeta2.1":  zeta21Format{},
	"sweep":    sweepFormat{},
	"instinct": instinctFormat{},
}

// MetaKey is the key of agentInfo._meta under which the model agent says its format, the reason
// for it and the model (doctor shows them).
const MetaKey = "acp-lsp-bridge/model"

// FormatNames lists the names --model-format takes, "auto" last.
const FormatNames = "chat, zeta1, zeta2, zeta2.1, sweep, instinct or auto"

// PickFormat is the format named, or with "auto" (or "") the one the model's name calls for, as
// Zed's prompt_format "infer" does: zeta-2.1 or zeta2.1 is Zeta 2.1, zeta-2 or zeta2 Zeta 2, any
// other zeta Zeta 1, sweep Sweep, instinct Instinct, anything else the chat format. why says how
// it was chosen, for the log and doctor.
func PickFormat(name, model string) (f Format, why string, err error) {
	name = strings.ToLower(strings.TrimSpace(name))
	if name != "" && name != "auto" {
		if f, ok := Formats[name]; ok {
			return f, "--model-format " + name, nil
		}
		return nil, "", fmt.Errorf("--model-format %q: want %s", name, FormatNames)
	}
	m := strings.ToLower(model)
	for _, r := range []struct {
		marks  []string
		format string
	}{
		{[]string{"zeta-2.1", "zeta2.1", "zeta2_1", "zeta-2_1"}, "zeta2.1"},
		{[]string{"zeta-2", "zeta2"}, "zeta2"},
		{[]string{"zeta"}, "zeta1"},
		{[]string{"sweep"}, "sweep"},
		{[]string{"instinct"}, "instinct"},
	} {
		for _, mark := range r.marks {
			if strings.Contains(m, mark) {
				return Formats[r.format], fmt.Sprintf("the model's name %q holds %q", model, mark), nil
			}
		}
	}
	if model == "" {
		return Formats["chat"], "no model name", nil
	}
	return Formats["chat"], fmt.Sprintf("the model's name %q names none of the next-edit models (zeta, sweep, instinct)", model), nil
}
