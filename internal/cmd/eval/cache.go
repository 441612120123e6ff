package eval

import (
	"slices"
	"strconv"
	"strings"
	"time"
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

// answerMsg is how the model agent's log line of each answer of the model reads;
// nothingAskedMsg how its line for a request it did not ask the model begins.
const (
	answerMsg       = `msg="model: answer"`
	nothingAskedMsg = `msg="model: nothing asked`
)

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

// loggedAnswer is what the model agent logged of one answer of its model (its "model: answer"
// line): the server's timings (nil when it gave none), how long the request took (took: from the
// engine's request to the answer read whole), and the part of that before the server had the
// prompt (setup: asking what serves the model, a new connection, writing the request).
type loggedAnswer struct {
	timings           *Timings
	took, setup       time.Duration
	hasTook, hasSetup bool
	// none: the agent said it asked the model nothing (its "model: nothing asked" line).
	none bool
}

// model is the model's time of the answer: took less setup (took when the line has no setup);
// ok is false when the line said neither.
func (a loggedAnswer) model() (time.Duration, bool) {
	if !a.hasTook {
		return 0, false
	}
	if a.hasSetup && a.setup <= a.took {
		return a.took - a.setup, true
	}
	return a.took, true
}

// answerFromLog reads one line of the model agent's log: ok is false for a line that is not its
// "model: answer" line.
func answerFromLog(line string) (a loggedAnswer, ok bool) {
	if !strings.Contains(line, answerMsg) {
		return a, false
	}
	if t, ok := TimingsFromLog(line); ok {
		a.timings = &t
	}
	a.took, a.hasTook = logDuration(line, "took")
	a.setup, a.hasSetup = logDuration(line, "setup")
	return a, true
}

// logDuration is the duration value of key in a line of slog's text form (Go's form: 41ms,
// 1.5s, 812.4µs).
func logDuration(line, key string) (d time.Duration, ok bool) {
	ok = logValue(line, key, func(v string) bool {
		var err error
		d, err = time.ParseDuration(v)
		return err == nil && d >= 0
	})
	if !ok {
		d = 0
	}
	return d, ok
}

// logInt is the integer value of key in a line of slog's text form.
func logInt(line, key string) (n int, ok bool) {
	ok = logValue(line, key, func(v string) bool {
		var err error
		n, err = strconv.Atoi(v)
		return err == nil && n >= 0
	})
	if !ok {
		n = 0
	}
	return n, ok
}

// logValue hands take each value of key in a line of slog's text form, in order, until it takes
// one; it reports whether one was taken.
func logValue(line, key string, take func(v string) bool) bool {
	for rest := line; ; {
		i := strings.Index(rest, " "+key+"=")
		if i < 0 {
			return false
		}
		v := rest[i+len(key)+2:]
		if j := strings.IndexByte(v, ' '); j >= 0 {
			v = v[:j]
		}
		if take(v) {
			return true
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
