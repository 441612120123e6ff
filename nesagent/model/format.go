package model

import (
	"errors"
	"fmt"
	"regexp"
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
	// ring is the engine's chunks of other files for FIM prompts (nil: none).
	ring *fimRing
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
	// fim, for a completion at the cursor, is its prompt: the answer is cleaned (cleanFIM) and
	// inserted at the cursor, and the gate has FIM rules of its own.
	fim *FIMPrompt
	// ref, when set, is the service's name for the suggestion read (Sweep's autocomplete_id),
	// once read has run.
	ref func() string
	// narrow: the answer is exact replacements, not a rewrite; the gate judges only the lines
	// they change (narrowed).
	narrow bool
	// lines, for a format whose answer is the region rewritten line by line, says how to read
	// it while it streams (early.go); nil: read when whole.
	lines *lineSpec
}

// errNoEdit is an answer that says "nothing to change".
var errNoEdit = errors.New("the model proposes no edit")

// Formats are the formats by name.
var Formats = map[string]Format{
	"chat":        chatFormat{},
	"zeta1":       zeta1Format{},
	"zeta2":       zeta2Format{},
	"zeta2.1":     zeta21Format{},
	"sweep":       sweepFormat{},
	"sweep-small": sweepFormat{layout: sweepSmall},
	"sweep-7b":    sweepFormat{layout: sweep7B},
	"instinct":    instinctFormat{},
	"fim":         fimFormat{},
	"codestral":   codestralFormat{},
	"mercury":     mercuryFormat{},
	"sweep-api":   sweepAPIFormat{},
}

// MetaKey is the key of agentInfo._meta under which the model agent says its format, the reason
// for it and the model (doctor shows them).
const MetaKey = "acp-lsp-bridge/model"

// FormatNames lists the names --model-format takes, "auto" last.
const FormatNames = "chat, zeta1, zeta2, zeta2.1, sweep, sweep-small, sweep-7b, instinct, fim, codestral, mercury, sweep-api or auto"

// The names the open next-edit models are published and served under, once modelBase has set
// aside what is not the model's own (an Ollama tag, an owner, a file's suffixes). Zed's
// prompt_format "infer" takes zeta2 and zeta2.1 exactly, and any name holding sweep-next-edit;
// the others are the names of the models' cards and of their GGUF files.
var formatNames = []struct {
	names  []string
	format string
}{
	{[]string{"zeta2.1", "zeta-2.1", "zeta2_1", "zeta-2_1", "zeta-2-1"}, "zeta2.1"},
	{[]string{"zeta2", "zeta-2"}, "zeta2"},
	{[]string{"zeta", "zeta1", "zeta-1"}, "zeta1"},
	{[]string{"instinct"}, "instinct"},
}

// modelOwners are the publishers whose names GGUF re-publishers put before the model's
// (bartowski's "zed-industries_zeta-GGUF").
var modelOwners = map[string]bool{"zed-industries": true, "sweepai": true, "continuedev": true}

// buildSuffix is one suffix of a GGUF file's or upload's name that says how it was built, not
// which model it is: a quantization (-Q8_0, .q4_k_m, IQ3_XS), a precision (f16, bf16), "-GGUF",
// mradermacher's "-i1", a file revision (".v2").
var buildSuffix = regexp.MustCompile(`[-._](i?q\d(_[a-z0-9]+)*|f16|bf16|f32|fp16|gguf|ggml|i1|imat|v\d+)$`)

// modelBase is the name of the model a served name stands for: in lower case, without an Ollama
// tag (":latest", ":Q4_K_M"), a path or owner ("zed-industries/", "hf.co/bartowski/"), a ".gguf"
// extension and its build suffixes, and a re-publisher's owner prefix.
func modelBase(model string) string {
	m := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndex(m, ":"); i >= 0 && !strings.Contains(m[i:], "/") {
		m = m[:i]
	}
	if i := strings.LastIndex(m, "/"); i >= 0 {
		m = m[i+1:]
	}
	m = strings.TrimSuffix(m, ".gguf")
	for {
		cut := buildSuffix.ReplaceAllString(m, "")
		if cut == m || cut == "" {
			break
		}
		m = cut
	}
	if owner, rest, ok := strings.Cut(m, "_"); ok && modelOwners[owner] {
		m = rest
	}
	return m
}

// PickFormat is the format named, or with "auto" (or "") the one the model's name calls for, as
// Zed's prompt_format "infer" reads a name: not by any text the name holds, but by the name the
// model is published under (modelBase): zeta2.1 (or zeta-2.1) is Zeta 2.1, zeta2 (zeta-2) Zeta
// 2, zeta Zeta 1, instinct Instinct, and, as in Zed, any name holding sweep-next-edit Sweep, in
// the layout its size calls for. Anything else is the chat format, and a name that holds one of
// those names without being it ("my-zeta-finetune-chat") says so. why says what was matched and
// how, for the log and doctor.
func PickFormat(name, model string) (f Format, why string, err error) {
	name = strings.ToLower(strings.TrimSpace(name))
	if name != "" && name != "auto" {
		if f, ok := Formats[name]; ok {
			return f, "--model-format " + name, nil
		}
		return nil, "", fmt.Errorf("--model-format %q: want %s", name, FormatNames)
	}
	if model == "" {
		return Formats["chat"], "no model name", nil
	}
	lower := strings.ToLower(model)
	if strings.Contains(lower, "sweep-next-edit") {
		return Formats["sweep"], fmt.Sprintf("the model's name %q holds \"sweep-next-edit\", as Zed infers Sweep", model), nil
	}
	base := modelBase(model)
	read := ""
	if base != lower {
		read = fmt.Sprintf(", read as %q (its tag, owner and file suffixes aside)", base)
	}
	for _, r := range formatNames {
		for _, n := range r.names {
			if base == n {
				return Formats[r.format], fmt.Sprintf("the model's name %q is %s's%s", model, r.format, read), nil
			}
		}
	}
	for _, near := range []struct{ part, formats string }{{"zeta", "zeta1, zeta2 or zeta2.1"}, {"sweep", "sweep"}, {"instinct", "instinct"}} {
		if strings.Contains(lower, near.part) {
			return Formats["chat"], fmt.Sprintf("the model's name %q holds %q but is not a name that model is published under%s: the chat format; if it is that model, say --model-format %s", model, near.part, read, near.formats), nil
		}
	}
	why = fmt.Sprintf("the model's name %q names none of the next-edit models (zeta, zeta2, zeta2.1, sweep-next-edit, instinct)%s", model, read)
	if family := codeModelFamily(lower); family != "" {
		why += fmt.Sprintf("; it names a code model (%s): to have it complete at the cursor by fill-in-the-middle, as llama.vim asks it, say --model-format fim", family)
	}
	return Formats["chat"], why, nil
}

// codeModelFamilies are parts of the names code models trained for fill-in-the-middle are
// published under, each with the family it names.
var codeModelFamilies = []struct{ part, family string }{
	{"qwen2.5-coder", "Qwen2.5-Coder"}, {"qwen2.5coder", "Qwen2.5-Coder"}, {"qwen3-coder", "Qwen3-Coder"},
	{"starcoder", "StarCoder"}, {"deepseek-coder", "DeepSeek-Coder"}, {"codellama", "CodeLlama"},
	{"code-llama", "CodeLlama"}, {"codegemma", "CodeGemma"}, {"granite-code", "Granite Code"},
	{"granite-3b-code", "Granite Code"}, {"granite-8b-code", "Granite Code"}, {"codestral", "Codestral"},
}

// codeModelFamily is the FIM code model family a lower-case model name names, "" for none.
func codeModelFamily(lower string) string {
	for _, f := range codeModelFamilies {
		if strings.Contains(lower, f.part) {
			return f.family
		}
	}
	return ""
}

// HostedService is what a hosted service's format takes by default: where the service is, the
// model asked, and the environment variable its key is read from (the name the service's own
// documentation and clients use).
type HostedService struct {
	URL, Model, KeyEnv string
}

// Hosted are the hosted services' formats (docs/model-agent.md cites their documentation).
var Hosted = map[string]HostedService{
	"codestral": {URL: "https://codestral.mistral.ai", Model: "codestral-latest", KeyEnv: "CODESTRAL_API_KEY"},
	"mercury":   {URL: "https://api.inceptionlabs.ai", Model: "mercury-edit", KeyEnv: "INCEPTION_API_KEY"},
	"sweep-api": {URL: "https://autocomplete.sweep.dev", Model: "sweep-next-edit", KeyEnv: "SWEEP_AI_TOKEN"},
}
