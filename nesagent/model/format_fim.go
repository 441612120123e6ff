package model

import (
	"fmt"
	"strings"
)

// fimFormat is a completion at the cursor from a code model by fill-in-the-middle, the way
// llama.cpp's own editor plugins ask it (ggml-org/llama.vim, autoload/llama.vim, and
// llama.vscode): the text before the cursor, the text after it, and chunks of other files the
// user worked in (fimRing). Where the request goes depends on what serves the model
// (transport.go): llama-server's /infill, which builds the prompt with the model's own FIM
// tokens; Ollama's /api/generate with suffix, which applies the model's FIM template; a hosted
// FIM endpoint (/v1/fim/completions: Mistral's Codestral, Inception's Mercury); or, on any other
// server, /v1/completions with the family's FIM tokens written out (fimFamilies). The answer is
// inserted at the cursor once cleaned as the references clean it (cleanFIM).
type fimFormat struct{}

func (fimFormat) Name() string { return "fim" }

// FIMPrompt is a fill-in-the-middle request, as llama-server's /infill takes it: the lines above
// the cursor's, the cursor's line up to the cursor, and the rest of the document from the cursor,
// with chunks of other files. Each transport writes it as its server takes it.
type FIMPrompt struct {
	// Prefix is the lines above the cursor's line, each ending in its line break (/infill's
	// input_prefix); Line is the cursor's line up to the cursor (prompt); Suffix is the rest
	// of the cursor's line and the lines below (input_suffix).
	Prefix, Line, Suffix string
	// Extra are chunks of other files, the ones that change least first (input_extra).
	Extra []FIMChunk
	// Path is the document's name, relative to the workspace (the file separator's name in a
	// repository-level prompt).
	Path string
	// Repo is the workspace folder's name, for a family trained with repository context.
	Repo string
	// Indent is the indentation of the cursor's line, in columns: the answer stops at a line
	// indented less (llama-server's n_indent).
	Indent int
	// Lead is the indentation before the cursor when nothing else is (Line is then empty): the
	// model writes the line whole, and the answer's first line loses that much indentation.
	Lead int
	// Tokens is the family whose FIM tokens write the prompt on a server that does not apply
	// them itself, nil when none is known (Family names what was asked).
	Tokens *fimFamily
	Family string
	// Hosted is a hosted FIM endpoint's path ("/v1/fim/completions"), when the format or the
	// server's address names one.
	Hosted string
}

// FIMChunk is a piece of another file (or of the document, far from the cursor) that the model
// sees before the document: input_extra's {filename, text}.
type FIMChunk struct {
	Filename string `json:"filename"`
	Text     string `json:"text"`
}

// The bounds of a FIM prompt, as llama.vim's defaults: 256 lines before the cursor's line and 64
// after it, an answer of at most 128 tokens; and bounds in bytes of our own, so that a file of
// long lines does not make a prompt larger than a small model's context.
const (
	fimPrefixLines   = 256
	fimSuffixLines   = 64
	fimPrefixBytes   = 12000
	fimSuffixBytes   = 4000
	fimMaxTokens     = 128
	fimBytesPerToken = 3
)

// RuleRepeatsSuffix is the FIM gate's rule for a completion that only writes again the text after
// the cursor.
const RuleRepeatsSuffix = "repeats-suffix"

// RulePastLine is the FIM gate's rule for a completion that starts a new line after a finished
// one, where the document goes on below: the line was whole, and what the model writes there
// would come before the code that follows (cursortab's RejectLeadingNewlineWithSuffix, for a line
// that is finished: one ending in an opening bracket, an operator or ":" wants its next line).
const RulePastLine = "past-line"

// RuleRepeatsAbove is the FIM gate's rule for a completion that makes the cursor's line a copy of
// the line above it (Continue's rewritesLineAbove).
const RuleRepeatsAbove = "repeats-above"

func (fimFormat) Build(in *input, lim limits) (*call, error) {
	cfg := lim.cfg
	lineStart := strings.LastIndexByte(in.text[:in.cursor], '\n') + 1
	p := &FIMPrompt{Line: in.text[lineStart:in.cursor], Path: in.path}
	prefixBytes, suffixBytes := fimPrefixBytes, fimSuffixBytes
	maxTokens := lim.maxTokens
	if maxTokens == 0 {
		maxTokens = fimMaxTokens
	}
	extraBudget := cfg.FIMChunks * cfg.FIMChunkLines * 80
	if lim.contextTokens > 0 {
		// The prompt and the answer within the model's context, a quarter of it at most for
		// the other files' chunks, the rest shared three to one before and after the cursor.
		room := (lim.contextTokens - maxTokens) * fimBytesPerToken
		if room <= len(p.Line) {
			return nil, fmt.Errorf("the cursor's line and the answer do not fit in the model's context of %d tokens", lim.contextTokens)
		}
		extraBudget = min(extraBudget, room/4)
		room -= extraBudget + len(p.Line)
		prefixBytes, suffixBytes = min(prefixBytes, room*3/4), min(suffixBytes, room/4)
	}
	// The lines above, up to the bounds, whole lines only.
	start := lineStart
	for n := 0; n < fimPrefixLines && start > 0; n++ {
		prev := strings.LastIndexByte(in.text[:start-1], '\n') + 1
		if lineStart-prev > prefixBytes {
			break
		}
		start = prev
	}
	p.Prefix = in.text[start:lineStart]
	end := in.cursor
	if i := strings.IndexByte(in.text[end:], '\n'); i >= 0 {
		end += i + 1
	} else {
		end = len(in.text)
	}
	for n := 0; n < fimSuffixLines && end < len(in.text); n++ {
		next := len(in.text)
		if i := strings.IndexByte(in.text[end:], '\n'); i >= 0 {
			next = end + i + 1
		}
		if next-in.cursor > suffixBytes {
			break
		}
		end = next
	}
	if end-in.cursor > suffixBytes {
		// The cursor's line alone is longer: as much of it as fits.
		end = in.cursor + suffixBytes
		for end > in.cursor && end < len(in.text) && in.text[end]&0xC0 == 0x80 {
			end--
		}
	}
	p.Suffix = in.text[in.cursor:end]
	p.Indent = indentWidth(p.Line)
	if strings.TrimSpace(p.Line) == "" {
		// Only indentation before the cursor: as llama.vim asks, the middle starts at the
		// line's start, and the answer's first line loses the indentation already there.
		p.Lead, p.Line = len(p.Line), ""
	}
	if cfg.FIMChunks > 0 && lim.ring != nil {
		p.Extra = lim.ring.update(in, ringConfig{n: cfg.FIMChunks, lines: cfg.FIMChunkLines}, start, end, extraBudget)
	}
	if in.req.Root != "" {
		p.Repo = baseName(in.req.Root)
	}
	p.Family = cfg.FIMTokens
	if p.Family == "" || p.Family == "auto" {
		p.Family = fimFamilyOf(cfg.Model)
	}
	if name, ok := family(p.Family); ok {
		p.Family = name
		fam := fimFamilies[name]
		p.Tokens = &fam
	}
	var stop []string
	var markers []string
	if p.Tokens != nil {
		stop = p.Tokens.stop
		markers = p.Tokens.markers()
		if t, ok := holdsToken(p.Prefix+p.Line+p.Suffix, markers); ok {
			return nil, fmt.Errorf("the text holds the FIM token %q", t)
		}
	}
	return &call{
		Prompt: Prompt{FIM: p, Stop: stop, MaxTokens: maxTokens},
		start:  in.cursor, end: in.cursor,
		read: func(answer string) (string, int, error) {
			return answer, len(answer), nil
		},
		markers: markers,
		fim:     p,
	}, nil
}

// hostedFIMPath is the FIM endpoint of the hosted services (Mistral's Codestral, Inception's
// Mercury): {model, prompt, suffix, max_tokens, temperature, stop}.
const hostedFIMPath = "/v1/fim/completions"

// indentWidth is the width of s's leading whitespace, a tab counting as one column (as
// llama-server counts n_indent).
func indentWidth(s string) int {
	n := 0
	for n < len(s) && (s[n] == ' ' || s[n] == '\t') {
		n++
	}
	return n
}

// baseName is the last element of a path, with either separator.
func baseName(p string) string {
	p = strings.TrimRight(strings.ReplaceAll(p, `\`, "/"), "/")
	return p[strings.LastIndexByte(p, '/')+1:]
}

// cleanFIM turns a FIM answer into the text to insert at the cursor, as the references clean it
// (llama.vim's, Continue's and Zed's post-processing), and says by which rule nothing is left:
//   - the answer ends at the first of the family's stop strings (a server that did not stop at
//     it, or a hosted one that has no such strings);
//   - when cut by the bound on tokens, its last line, which may be cut in the middle, is dropped;
//   - a line break at its start is dropped where the cursor starts its line (nothing but
//     indentation before it): the break would leave an empty line;
//   - it ends before the first line indented less than the cursor's line (the end of the block
//     the cursor is in: llama-server's n_indent, and llama.vim's rule);
//   - it ends before the lines that write again the start of the text after the cursor, and its
//     first line does not write again the rest of the cursor's line;
//   - trailing blank lines and spaces are dropped.
//
// What is left is empty (RuleNoChange), repeats the text after the cursor (RuleRepeatsSuffix) or
// was the first line cut short (RuleCutShort): nothing to show; but for RuleNoChange, text is
// what would be shown without the quality gate.
func cleanFIM(p *FIMPrompt, answer string, cut bool) (text, rule, why string) {
	a := answer
	for strings.Contains(a, "\r\n") { // "\r\r\n" too
		a = strings.ReplaceAll(a, "\r\n", "\n")
	}
	if p.Tokens != nil {
		for _, s := range p.Tokens.stop {
			if i := strings.Index(a, s); i >= 0 {
				a = a[:i]
				cut = false // it ended at its own end
			}
		}
	}
	if cut {
		if i := strings.LastIndexByte(a, '\n'); i >= 0 {
			a = a[:i]
		} else {
			return strings.TrimRight(a, " \t"), RuleCutShort, "cut short: the server stopped at its bound on tokens in the answer's first line"
		}
	}
	restOfLine, below, _ := strings.Cut(p.Suffix, "\n")
	// A new line started after a finished one, with the document going on below it.
	pastLine := strings.TrimSpace(restOfLine) == "" && finishedLine(p.Line) && strings.TrimSpace(below) != "" &&
		strings.HasPrefix(strings.TrimLeft(a, " \t"), "\n")
	blankLine := strings.TrimSpace(p.Line) == ""
	if blankLine {
		a = strings.TrimLeft(a, "\n")
	}
	lines := strings.Split(a, "\n")
	if p.Lead > 0 {
		lines[0] = lines[0][min(indentWidth(lines[0]), p.Lead):]
	}
	// The end of the block: a line (after the first) indented less than the cursor's line.
	for i := 1; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "" && indentWidth(lines[i]) < p.Indent {
			lines = lines[:i]
			break
		}
	}
	// The start of what follows the cursor, written again.
	next := firstTextLine(below)
	for i := 1; i < len(lines) && strings.IndexFunc(next, isWordRune) >= 0; i++ {
		// Only a line with a word in it: a closing bracket alone may close what the answer
		// opened.
		if strings.TrimSpace(lines[i]) == next {
			lines = lines[:i]
			break
		}
	}
	a = strings.TrimRight(strings.Join(lines, "\n"), " \t\n")
	if next != "" && !strings.Contains(a, "\n") && strings.TrimSpace(p.Line+a) == next {
		// The cursor's line made into the line below it (llama.vim's test).
		return a, RuleRepeatsSuffix, "the answer makes the cursor's line a copy of the next one"
	}
	if rest := strings.TrimSpace(restOfLine); rest != "" && !strings.Contains(a, "\n") {
		// One line that ends with what already follows the cursor on its line (a closing
		// bracket the editor put there): that part is there already.
		if strings.HasSuffix(a, rest) {
			if cut := strings.TrimRight(strings.TrimSuffix(a, rest), " \t"); cut != "" {
				a = cut
			} else {
				return a, RuleRepeatsSuffix, "the answer only writes again the rest of the cursor's line"
			}
		}
	}
	if strings.TrimSpace(a) == "" {
		return "", RuleNoChange, "no change: the answer is empty once cleaned"
	}
	if after := strings.TrimLeft(p.Suffix, " \t\n"); after != "" && strings.HasPrefix(after, strings.TrimLeft(a, " \t\n")) {
		return a, RuleRepeatsSuffix, "the answer only writes again the text after the cursor"
	}
	if pastLine {
		return a, RulePastLine, "the answer starts a new line after a finished one, above code already there"
	}
	if first, _, _ := strings.Cut(a, "\n"); !strings.HasPrefix(a, "\n") {
		if line := strings.TrimSpace(p.Line + first); strings.IndexFunc(line, isWordRune) >= 0 && line == lastTextLine(p.Prefix) {
			return a, RuleRepeatsAbove, "the answer makes the cursor's line a copy of the one above it"
		}
	}
	return a, "", ""
}

// finishedLine reports whether line (the cursor's, up to the cursor) reads as a whole line: text
// that ends in neither an opening bracket nor an operator, a ",", a ":" or a "." (which want a
// next line); no comment or decorator (which the code they describe follows); and no statement
// whose body comes on the next line (an if without braces, an else, a definition's head).
func finishedLine(line string) bool {
	t := strings.TrimSpace(line)
	if t == "" {
		return false
	}
	for _, c := range []string{"//", "#", "--", "/*", "*", ";;", "@"} {
		if strings.HasPrefix(t, c) {
			return false
		}
	}
	first := t
	if i := strings.IndexFunc(t, func(r rune) bool { return !isWordRune(r) }); i >= 0 {
		first = t[:i]
	}
	if bodyNext[first] {
		return false
	}
	return !strings.ContainsAny(t[len(t)-1:], "{([,:=+-*/%&|^!<>.\\?")
}

// bodyNext are the words that start a statement whose body may come on the next line.
var bodyNext = map[string]bool{
	"if": true, "else": true, "elif": true, "for": true, "while": true, "do": true, "switch": true, "case": true,
	"try": true, "catch": true, "finally": true, "with": true, "def": true, "class": true, "fn": true, "func": true,
	"function": true, "struct": true, "enum": true, "impl": true, "match": true, "loop": true, "foreach": true,
}

// lastTextLine is the last line of s with text, its indentation trimmed.
func lastTextLine(s string) string {
	lines := strings.Split(s, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if t := strings.TrimSpace(lines[i]); t != "" {
			return t
		}
	}
	return ""
}

// firstTextLine is the first line of s with text, its indentation trimmed.
func firstTextLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if t := strings.TrimSpace(l); t != "" {
			return t
		}
	}
	return ""
}

// AtCursor reports whether a format's answers are completions inserted at the cursor (the FIM
// formats), rather than next edits in a region: eval runs its FIM scenarios for them.
func AtCursor(f Format) bool {
	switch f.(type) {
	case fimFormat, codestralFormat:
		return true
	}
	return false
}
