package eval

import (
	"slices"
	"strconv"
	"strings"
)

// Timings are what llama-server said of the prompts of one or more answers: the prompt tokens it
// evaluated anew (prompt_n) and those it took from its cache (cache_n). The model agent logs them
// with each answer (its "model: answer" line at --verbose) when the server gives them.
type Timings struct {
	PromptN, CacheN int
}

// NewShare is the share of the prompt's tokens evaluated anew: prompt_n / (prompt_n + cache_n),
// 0 for no tokens.
func (t Timings) NewShare() float64 {
	if t.PromptN+t.CacheN <= 0 {
		return 0
	}
	return float64(t.PromptN) / float64(t.PromptN+t.CacheN)
}

// answerMsg is how the model agent's log line of each answer of the model reads.
const answerMsg = `msg="model: answer"`

// TimingsFromLog reads the server's timings from one line of the model agent's log (slog's text
// form: `msg="model: answer" … prompt_n=412 cache_n=1830 …`); ok is false for any other line, or
// an answer the server gave no timings for.
func TimingsFromLog(line string) (t Timings, ok bool) {
	if !strings.Contains(line, answerMsg) {
		return t, false
	}
	p, okP := logInt(line, "prompt_n")
	c, okC := logInt(line, "cache_n")
	if !okP || !okC {
		return t, false
	}
	return Timings{PromptN: p, CacheN: c}, true
}

// logInt is the integer value of key in a line of slog's text form.
func logInt(line, key string) (int, bool) {
	for rest := line; ; {
		i := strings.Index(rest, " "+key+"=")
		if i < 0 {
			return 0, false
		}
		v := rest[i+len(key)+2:]
		if j := strings.IndexByte(v, ' '); j >= 0 {
			v = v[:j]
		}
		if n, err := strconv.Atoi(v); err == nil && n >= 0 {
			return n, true
		}
		rest = rest[i+1:]
	}
}

// MedianShare is the median of the shares of the prompts' tokens evaluated anew (NewShare), the
// mean of the two middle ones for an even count; 0 for none.
func MedianShare(ts []Timings) float64 {
	if len(ts) == 0 {
		return 0
	}
	s := make([]float64, len(ts))
	for i, t := range ts {
		s[i] = t.NewShare()
	}
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
