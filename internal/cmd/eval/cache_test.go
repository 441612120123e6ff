package eval

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

func TestTimingsFromLog(t *testing.T) {
	for _, tc := range []struct {
		line string
		want Timings
		ok   bool
	}{
		{`time=2025-01-01T00:00:00Z level=DEBUG msg="model: answer" uri=file:///w/a.go endpoint=http://127.0.0.1:8080/infill prompt_bytes=812 answer_bytes=9 took=41ms finish_reason=stop prompt_n=24 cache_n=1201 predicted_n=16 prompt_ms=3.1 predicted_ms=20`, Timings{24, 1201}, true},
		// An answer the server gave no timings for (another server than llama-server).
		{`time=2025-01-01T00:00:00Z level=DEBUG msg="model: answer" uri=file:///w/a.go prompt_bytes=812 answer_bytes=9 took=41ms finish_reason=stop`, Timings{}, false},
		// Another line, naming the same keys.
		{`time=2025-01-01T00:00:00Z level=DEBUG msg="model: answer dropped: cut short" prompt_n=1 cache_n=2`, Timings{}, false},
		// A key that only ends like one is not it.
		{`level=DEBUG msg="model: answer" xprompt_n=5 prompt_n=6 cache_n=7`, Timings{6, 7}, true},
	} {
		got, ok := TimingsFromLog(tc.line)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: %+v %v, want %+v %v", tc.line, got, ok, tc.want, tc.ok)
		}
	}
}

// TestAnswerFromLog: the model agent's line of an answer gives how long the request took, the
// part of it before the server had the prompt (setup), and the model's time, took less setup.
func TestAnswerFromLog(t *testing.T) {
	for _, tc := range []struct {
		line        string
		ok          bool
		model       time.Duration
		modelOK     bool
		setup       time.Duration
		setupOK     bool
		withTimings bool
	}{
		{`time=2025-01-01T00:00:00Z level=DEBUG msg="model: answer" uri=file:///w/a.go endpoint=http://127.0.0.1:8080/v1/completions prompt_bytes=812 answer_bytes=9 took=356.5ms setup=150.25ms finish_reason=stop prompt_n=24 cache_n=1201`,
			true, 206250 * time.Microsecond, true, 150250 * time.Microsecond, true, true},
		// An agent that says no setup: the model's time is the whole request's.
		{`level=DEBUG msg="model: answer" uri=file:///w/a.go took=1.5s finish_reason=stop`, true, 1500 * time.Millisecond, true, 0, false, false},
		// No took: no model's time.
		{`level=DEBUG msg="model: answer" uri=file:///w/a.go finish_reason=stop`, true, 0, false, 0, false, false},
		// Another line.
		{`level=DEBUG msg="model: answer dropped: cut short" took=1s`, false, 0, false, 0, false, false},
	} {
		a, ok := answerFromLog(tc.line)
		model, modelOK := a.model()
		if ok != tc.ok || model != tc.model || modelOK != tc.modelOK || a.setup != tc.setup || a.hasSetup != tc.setupOK || (a.timings != nil) != tc.withTimings {
			t.Errorf("%s: ok %v, model %v %v, setup %v %v, timings %v", tc.line, ok, model, modelOK, a.setup, a.hasSetup, a.timings)
		}
	}
}

func TestMedianShare(t *testing.T) {
	if got := MedianShare(nil); got != 0 {
		t.Errorf("none: %v", got)
	}
	if got := MedianShare([]Timings{{1, 3}, {9, 1}, {5, 5}}); got != 0.5 {
		t.Errorf("odd: %v, want 0.5", got)
	}
	if got := MedianShare([]Timings{{1, 3}, {9, 1}, {5, 5}, {0, 0}}); math.Abs(got-0.375) > 1e-9 {
		t.Errorf("even: %v, want the mean of 0.25 and 0.5", got)
	}
}

// TestReportPromptCache: the server's timings of the scenarios' answers are summed, their median
// share evaluated anew reported, in the table and in the JSON; a run without them says nothing
// of them.
func TestReportPromptCache(t *testing.T) {
	results := testResults()
	results[0].Timings = &Timings{PromptN: 100, CacheN: 300}
	results[1].Timings = &Timings{PromptN: 50, CacheN: 50}
	results[3].Timings = &Timings{PromptN: 10, CacheN: 90}
	rep := &Report{Model: "m", URL: "u", Scenarios: len(results), Results: results}
	rep.summarize()
	if tot := rep.Total; tot.Prompt != (Timings{160, 440}) || tot.Timed != 3 || tot.NewShare != 0.25 {
		t.Errorf("totals: %+v over %d, median %v", tot.Prompt, tot.Timed, tot.NewShare)
	}
	human := strings.Join(strings.Fields(rep.Human()), " ")
	if want := "prompt cache 160 of 600 prompt tokens evaluated anew, median share 0.25"; !strings.Contains(human, want) {
		t.Errorf("the table does not say %q:\n%s", want, human)
	}
	var j struct {
		Results []struct {
			PromptN *int `json:"promptN"`
			CacheN  *int `json:"cacheN"`
		} `json:"results"`
		Total struct {
			PromptTokens   *int     `json:"promptTokens"`
			CachedTokens   *int     `json:"cachedTokens"`
			NewShareMedian *float64 `json:"newShareMedian"`
		} `json:"total"`
	}
	if err := json.Unmarshal(rep.JSON(), &j); err != nil {
		t.Fatal(err)
	}
	if r := j.Results[0]; r.PromptN == nil || *r.PromptN != 100 || *r.CacheN != 300 || j.Results[2].PromptN != nil {
		t.Errorf("results' timings: %+v", j.Results)
	}
	if tot := j.Total; tot.PromptTokens == nil || *tot.PromptTokens != 160 || *tot.CachedTokens != 440 || *tot.NewShareMedian != 0.25 {
		t.Errorf("total: %+v", tot)
	}

	rep = &Report{Model: "m", URL: "u", Scenarios: len(results), Results: testResults()}
	rep.summarize()
	if h := rep.Human(); strings.Contains(h, "prompt cache") || strings.Contains(string(rep.JSON()), "newShareMedian") {
		t.Errorf("a run without timings reports them:\n%s\n%s", h, rep.JSON())
	}
}
