package workspace

import "strings"

// The user's key, given by mistake where the name of the variable that holds it belongs
// (acp-lsp-bridge agent --api-key-env sk-…), is a secret on a command line: it is refused by the
// model agent, and hidden wherever the bridge or doctor shows the agent's command.

// KeyEnvProblem says why name is not the name of an environment variable that holds a key: it
// "holds characters no variable's name has", or it "looks like a key itself" (it starts as the
// keys of known services do, or it is long and mixes lower-case letters, capitals and digits
// with no underscore, as random keys do and variables' names do not); "" for a name. The words
// never repeat name.
func KeyEnvProblem(name string) string {
	switch {
	case looksLikeKey(name):
		return "looks like a key itself"
	case name == "" || !isVarName(name):
		return "holds characters no variable's name has"
	}
	return ""
}

// HideKeyEnv is args with the value of each --api-key-env (or -api-key-env, or its =value form)
// that is not a variable's name (KeyEnvProblem) replaced by "[hidden: not a variable's name]":
// a command line as the bridge logs it and doctor shows it.
func HideKeyEnv(args []string) []string {
	const hidden = "[hidden: not a variable's name]"
	out := append([]string(nil), args...)
	for i, a := range out {
		flag := strings.TrimLeft(a, "-")
		if len(flag) == len(a) || len(a)-len(flag) > 2 {
			continue
		}
		switch {
		case flag == "api-key-env" && i+1 < len(out):
			if KeyEnvProblem(out[i+1]) != "" {
				out[i+1] = hidden
			}
		case strings.HasPrefix(flag, "api-key-env="):
			if KeyEnvProblem(strings.TrimPrefix(flag, "api-key-env=")) != "" {
				out[i] = a[:len(a)-len(flag)] + "api-key-env=" + hidden
			}
		}
	}
	return out
}

// isVarName reports whether s is an environment variable's name as shells write them: letters,
// digits and underscores, not starting with a digit.
func isVarName(s string) bool {
	for i, c := range s {
		switch {
		case c == '_' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// keyPrefixes start the keys of the services users name most (OpenAI's and Anthropic's sk-,
// GitHub's, Hugging Face's, Groq's, Google's, Replicate's, NVIDIA's, xAI's, GitLab's, Slack's,
// Perplexity's).
var keyPrefixes = []string{"sk-", "sk_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "hf_", "gsk_", "AIza", "r8_", "nvapi-", "xai-", "glpat-", "xox", "pplx-"}

func looksLikeKey(s string) bool {
	for _, p := range keyPrefixes {
		if strings.HasPrefix(s, p) && len(s) >= len(p)+8 {
			return true
		}
	}
	if len(s) < 20 || strings.Contains(s, "_") {
		return false
	}
	var lower, upper, digit bool
	for _, c := range s {
		switch {
		case 'a' <= c && c <= 'z':
			lower = true
		case 'A' <= c && c <= 'Z':
			upper = true
		case '0' <= c && c <= '9':
			digit = true
		}
	}
	return lower && upper && digit
}
