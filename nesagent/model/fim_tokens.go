package model

import (
	"sort"
	"strings"
)

// fimFamily is how a family of code models was trained to fill in the middle: its FIM tokens,
// their order, the tokens of a repository-level prompt where it was trained with one, and the
// strings that end its answer. docs/model-agent.md cites each family's source.
type fimFamily struct {
	name string
	// pre, suf and mid are the tokens written before the prefix, the suffix and the middle.
	pre, suf, mid string
	// spm: the suffix is written before the prefix (Codestral).
	spm bool
	// repoName and fileSep, when set, write a repository-level prompt: the repository's name,
	// then each other file as fileSep, its path, a line break and its text (Qwen2.5-Coder's
	// and StarCoder2's training layout).
	repoName, fileSep string
	// fileSepOnly: the family separates files but names no repository (CodeGemma).
	stop []string
}

// fimFamilies are the families by the name --fim-tokens takes.
var fimFamilies = map[string]fimFamily{
	"qwen": {
		name: "qwen", pre: "<|fim_prefix|>", suf: "<|fim_suffix|>", mid: "<|fim_middle|>",
		repoName: "<|repo_name|>", fileSep: "<|file_sep|>",
		stop: []string{"<|endoftext|>", "<|file_sep|>", "<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>", "<|fim_pad|>", "<|repo_name|>", "<|im_start|>", "<|im_end|>"},
	},
	"codegemma": {
		name: "codegemma", pre: "<|fim_prefix|>", suf: "<|fim_suffix|>", mid: "<|fim_middle|>",
		stop: []string{"<|file_separator|>", "<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>", "<eos>", "<end_of_turn>"},
	},
	"starcoder": {
		name: "starcoder", pre: "<fim_prefix>", suf: "<fim_suffix>", mid: "<fim_middle>",
		repoName: "<repo_name>", fileSep: "<file_sep>",
		stop: []string{"<|endoftext|>", "<file_sep>", "<fim_prefix>", "<fim_suffix>", "<fim_middle>", "<repo_name>"},
	},
	"deepseek": {
		name: "deepseek", pre: "<｜fim▁begin｜>", suf: "<｜fim▁hole｜>", mid: "<｜fim▁end｜>",
		stop: []string{"<｜end▁of▁sentence｜>", "<｜fim▁begin｜>", "<｜fim▁hole｜>", "<｜fim▁end｜>", "<|EOT|>"},
	},
	"codellama": {
		name: "codellama", pre: "<PRE> ", suf: " <SUF>", mid: " <MID>",
		stop: []string{"<EOT>", "<PRE>", "<SUF>", "<MID>", "</s>"},
	},
	"codestral": {
		name: "codestral", pre: "[PREFIX]", suf: "[SUFFIX]", spm: true,
		stop: []string{"</s>", "[PREFIX]", "[SUFFIX]", "[MIDDLE]"},
	},
}

// fimAliases are the other names --fim-tokens takes for a family.
var fimAliases = map[string]string{"qwen2.5-coder": "qwen", "qwen3": "qwen", "starcoder2": "starcoder", "granite": "starcoder", "deepseek-coder": "deepseek", "code-llama": "codellama", "mistral": "codestral"}

// FIMTokenNames lists the families --fim-tokens takes.
func FIMTokenNames() string {
	var names []string
	for n := range fimFamilies {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// fimFamilyOf is the family a model's name calls for, or "" when it names none of them: Qwen's
// coders and Qwen 3/3.5, CodeGemma, StarCoder 2 and IBM's Granite code models, DeepSeek-Coder,
// CodeLlama, Codestral.
func fimFamilyOf(model string) string {
	m := strings.ToLower(model)
	switch {
	case strings.Contains(m, "codegemma"):
		return "codegemma"
	case strings.Contains(m, "qwen"):
		return "qwen"
	case strings.Contains(m, "starcoder"), strings.Contains(m, "granite"):
		return "starcoder"
	case strings.Contains(m, "deepseek") && strings.Contains(m, "coder"):
		return "deepseek"
	case strings.Contains(m, "codellama"), strings.Contains(m, "code-llama"), strings.Contains(m, "code_llama"):
		return "codellama"
	case strings.Contains(m, "codestral"):
		return "codestral"
	}
	return ""
}

// family is the family named by --fim-tokens (an alias or a family's name), and whether it is one.
func family(name string) (string, bool) {
	name = strings.ToLower(strings.TrimSpace(name))
	if a, ok := fimAliases[name]; ok {
		name = a
	}
	_, ok := fimFamilies[name]
	return name, ok
}

// markers are the family's tokens: text that holds one cannot be sent, and an answer that holds
// one copied its prompt.
func (f *fimFamily) markers() []string {
	var out []string
	for _, t := range []string{f.pre, f.suf, f.mid, f.repoName, f.fileSep} {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// raw writes the FIM prompt with the family's tokens: the other files' chunks first where the
// family was trained with repository context (Qwen2.5-Coder's "<|repo_name|>NAME\n<|file_sep|>PATH
// \nTEXT" layout), then the prefix, the suffix and the middle in the family's order.
func (f *fimFamily) raw(p *FIMPrompt) string {
	var b strings.Builder
	prefix := p.Prefix + p.Line
	if f.fileSep != "" && len(p.Extra) > 0 {
		repo := p.Repo
		if repo == "" {
			repo = "workspace"
		}
		b.WriteString(f.repoName + repo + "\n")
		for _, c := range p.Extra {
			b.WriteString(f.fileSep + c.Filename + "\n" + strings.TrimSuffix(c.Text, "\n") + "\n")
		}
		b.WriteString(f.fileSep + p.Path + "\n")
	}
	if f.spm {
		b.WriteString(f.suf + p.Suffix + f.pre + prefix)
		return b.String()
	}
	b.WriteString(f.pre + prefix + f.suf + p.Suffix + f.mid)
	return b.String()
}
