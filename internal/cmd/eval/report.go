package eval

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// Report is a run's results and their totals.
type Report struct {
	// Model and URL name what was evaluated (set by the caller); Agent is what the agent said of
	// itself.
	Model, URL string
	Agent      *AgentInfo
	// Set is the built-in set that ran (SetNES, SetFIM), or Dir the folder of the scenarios
	// (set by the caller).
	Set, Dir string
	// Scenarios is how many were to run; Results are those that ran, in order.
	Scenarios int
	Results   []*Result
	// Stopped says why the run ended before its last scenario, with the words of the failure
	// that ended it; "" when it did not. StopWhy is the same without those words, and StoppedBy
	// the result whose failure ended it (nil for an interrupted run).
	Stopped   string
	StopWhy   string
	StoppedBy *Result
	// Total sums every result; ByKind the results of each kind that has any.
	Total  Totals
	ByKind map[string]Totals
	// WithoutGate, when set, is the total of the same scenarios run with the agent's quality
	// gate off (eval --gate-effect).
	WithoutGate *Totals
}

// Totals are the metrics of a set of results.
type Totals struct {
	// Scenarios counts the results; Evaluated those that ran to their score, Failed the others.
	Scenarios, Evaluated, Failed int
	// Exact counts the evaluated results whose text is the expected one (for a scenario that
	// expects nothing, the agent kept quiet or suggested no change).
	Exact int
	// ExpectChange counts the evaluated scenarios that expect an edit; Shown those of them where
	// the agent suggested one.
	ExpectChange, Shown int
	// ExpectNothing counts the evaluated scenarios that expect no edit; Quiet those of them where
	// the agent suggested none.
	ExpectNothing, Quiet int
	// ChrF is the mean chrF of the evaluated scenarios that expect a change (ChrFCount of them).
	ChrF      float64
	ChrFCount int
	// P50 and P90 are percentiles of nes/suggest's latency over the LatencyCount answers.
	P50, P90     time.Duration
	LatencyCount int
	// ModelP50 and ModelP90 are percentiles of the model's time (Result.Model) over the
	// ModelCount results that have it; ConnectP50 and ConnectP90 of the part of the first request
	// before the server had the prompt (Result.Connect); StartP50 and StartP90 of the agent's
	// start (Result.Start).
	ModelP50, ModelP90     time.Duration
	ModelCount             int
	ConnectP50, ConnectP90 time.Duration
	ConnectCount           int
	StartP50, StartP90     time.Duration
	StartCount             int
	// KeptBack counts the evaluated results whose answer the agent kept back, by rule;
	// KeptBackRight those of them where nothing was expected (the rule kept noise back), and
	// KeptBackWanted those where an edit was.
	KeptBack                      map[string]int
	KeptBackRight, KeptBackWanted int
	// NoChange counts the evaluated results whose model answered with nothing to change
	// (Result.NoChange), and NoChangeWanted those of them where an edit was expected.
	NoChange, NoChangeWanted int
	// Prompt sums the server's timings over the Timed results that have them: the prompt
	// tokens evaluated anew and those taken from its cache; NewShare is the median over those
	// results of the share evaluated anew.
	Prompt   Timings
	Timed    int
	NewShare float64
	// First are the same metrics of the first suggestions (Result.First), the fields above being
	// the settled ones'; Grew counts the results whose answer grew after the first.
	First FirstTotals
	Grew  int
}

// FirstTotals are the metrics of the first suggestions of a set of results.
type FirstTotals struct {
	Exact, Shown, Quiet int
	ChrF                float64
	P50, P90            time.Duration
}

func (r *Report) evaluated() int {
	n := 0
	for _, res := range r.Results {
		if res.Evaluated() {
			n++
		}
	}
	return n
}

func (r *Report) summarize() {
	r.Total = Summarize(r.Results)
	r.ByKind = map[string]Totals{}
	for _, k := range Kinds {
		var of []*Result
		for _, res := range r.Results {
			if res.Scenario.Kind == k {
				of = append(of, res)
			}
		}
		if len(of) > 0 {
			r.ByKind[k] = Summarize(of)
		}
	}
}

// Summarize computes the totals of results.
func Summarize(results []*Result) Totals {
	var t Totals
	var lat, firstLat, model, connect, start []time.Duration
	var timed []Timings
	sum, firstSum := 0.0, 0.0
	for _, r := range results {
		t.Scenarios++
		if !r.Evaluated() {
			t.Failed++
			continue
		}
		t.Evaluated++
		lat = append(lat, r.Latency)
		firstLat = append(firstLat, r.First.Latency)
		if r.Grew > 0 {
			t.Grew++
		}
		if r.First.Exact {
			t.First.Exact++
		}
		switch {
		case r.Scenario.WantChange && r.First.Shown:
			t.First.Shown++
		case !r.Scenario.WantChange && !r.First.Shown:
			t.First.Quiet++
		}
		if r.HasChrF {
			firstSum += r.First.ChrF
		}
		if r.Model != nil {
			model = append(model, *r.Model)
		}
		if r.Connect != nil {
			connect = append(connect, *r.Connect)
		}
		if r.Start > 0 {
			start = append(start, r.Start)
		}
		if r.Exact {
			t.Exact++
		}
		if r.Scenario.WantChange {
			t.ExpectChange++
			if r.Shown {
				t.Shown++
			}
		} else {
			t.ExpectNothing++
			if !r.Shown {
				t.Quiet++
			}
		}
		if r.HasChrF {
			sum += r.ChrF
			t.ChrFCount++
		}
		if r.Timings != nil {
			timed = append(timed, *r.Timings)
			t.Prompt.PromptN += r.Timings.PromptN
			t.Prompt.CacheN += r.Timings.CacheN
		}
		if r.NoChange {
			t.NoChange++
			if r.Scenario.WantChange {
				t.NoChangeWanted++
			}
		}
		if r.KeptBack != "" {
			if t.KeptBack == nil {
				t.KeptBack = map[string]int{}
			}
			t.KeptBack[r.KeptBack]++
			if r.Scenario.WantChange {
				t.KeptBackWanted++
			} else {
				t.KeptBackRight++
			}
		}
	}
	if t.ChrFCount > 0 {
		t.ChrF = sum / float64(t.ChrFCount)
		t.First.ChrF = firstSum / float64(t.ChrFCount)
	}
	t.First.P50, t.First.P90 = Percentile(firstLat, 50), Percentile(firstLat, 90)
	t.LatencyCount = len(lat)
	t.P50, t.P90 = Percentile(lat, 50), Percentile(lat, 90)
	t.ModelCount, t.ModelP50, t.ModelP90 = len(model), Percentile(model, 50), Percentile(model, 90)
	t.ConnectCount, t.ConnectP50, t.ConnectP90 = len(connect), Percentile(connect, 50), Percentile(connect, 90)
	t.StartCount, t.StartP50, t.StartP90 = len(start), Percentile(start, 50), Percentile(start, 90)
	t.Timed, t.NewShare = len(timed), MedianShare(timed)
	return t
}

// Summary is a result in a few words, for the progress line and the table.
func (r *Result) Summary() string {
	if !r.Evaluated() {
		return "failed: " + r.Err
	}
	ms := fmt.Sprintf("%d ms", r.Latency.Milliseconds())
	switch s := r.Scenario; {
	case s.WantChange && r.Exact:
		return "exact (" + ms + ")"
	case s.WantChange && r.Shown:
		return fmt.Sprintf("shown, not exact, chrF %.1f (%s)", r.ChrF, ms)
	case s.WantChange && r.NoChange:
		return "quiet, an edit was expected; the model's answer changed nothing (" + r.NoChangeWhy + ") (" + ms + ")"
	case s.WantChange && r.KeptBack != "":
		return "quiet, an edit was expected; the agent kept its answer back (" + r.KeptBack + ": " + r.KeptBackWhy + ") (" + ms + ")"
	case s.WantChange:
		return "quiet, an edit was expected (" + ms + ")"
	case r.Shown && r.Exact:
		return "shown, but it changes nothing (" + ms + ")"
	case r.Shown:
		return "shown, nothing was expected (" + ms + ")"
	}
	if r.KeptBack != "" {
		return "quiet, as expected; the agent kept its answer back (" + r.KeptBack + ") (" + ms + ")"
	}
	return "quiet, as expected (" + ms + ")"
}

// outcome is the table's short word for a result.
func (r *Result) outcome() string {
	switch s := r.Scenario; {
	case !r.Evaluated():
		return "FAILED"
	case s.WantChange && r.Exact:
		return "exact"
	case s.WantChange && r.Shown:
		return "wrong edit"
	case s.WantChange:
		return "quiet (missed)"
	case !r.Shown:
		return "quiet (right)"
	}
	return "shown (noise)"
}

func ratio(n, of int) string {
	if of == 0 {
		return "-"
	}
	return fmt.Sprintf("%d/%d (%.1f%%)", n, of, 100*float64(n)/float64(of))
}

func frac(n, of int) string {
	if of == 0 {
		return "-"
	}
	return fmt.Sprintf("%d/%d", n, of)
}

func chrfText(t Totals) string {
	if t.ChrFCount == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", t.ChrF)
}

func firstChrFText(t Totals) string {
	if t.ChrFCount == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", t.First.ChrF)
}

// keptBackText is how many answers the agent kept back, by rule.
func keptBackText(t Totals) string {
	n := t.KeptBackRight + t.KeptBackWanted
	if n == 0 {
		return "0"
	}
	rules := make([]string, 0, len(t.KeptBack))
	for rule := range t.KeptBack {
		rules = append(rules, rule)
	}
	sort.Strings(rules)
	for i, rule := range rules {
		rules[i] = fmt.Sprintf("%s %d", rule, t.KeptBack[rule])
	}
	return fmt.Sprintf("%d (%s)", n, strings.Join(rules, ", "))
}

// keptBackNote says what the answers kept back were: noise, or edits that were wanted.
func keptBackNote(t Totals) string {
	if t.KeptBackRight+t.KeptBackWanted == 0 {
		return "answers the agent kept back (its quality gate, or answers it could not read)"
	}
	return fmt.Sprintf("answers the agent kept back: %d where nothing was expected, %d where an edit was (--no-gate shows them)", t.KeptBackRight, t.KeptBackWanted)
}

// stop records why the run ended early (why), and the result whose failure ended it (nil for
// none: an interrupted run).
func (r *Report) stop(why string, by *Result) {
	r.StopWhy, r.StoppedBy, r.Stopped = why, by, why
	if by != nil && by.Err != "" {
		r.Stopped = why + ": " + by.Err
	}
}

// Human is the report as a table for a person.
func (r *Report) Human() string {
	var b strings.Builder
	fmt.Fprintf(&b, "acp-lsp-bridge eval: %d scenarios, model %q at %s", r.Scenarios, r.Model, r.URL)
	if r.Agent != nil && r.Agent.Format != "" {
		fmt.Fprintf(&b, ", prompt format %s", r.Agent.Format)
	}
	switch {
	case r.Set != "":
		fmt.Fprintf(&b, "; the built-in %s set", strings.ToUpper(r.Set))
	case r.Dir != "":
		fmt.Fprintf(&b, "; the scenarios of %s", r.Dir)
	}
	b.WriteString("\n\n")
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "SCENARIO\tKIND\tLANGUAGE\tRESULT\tCHRF\tSUGGEST MS\tMODEL MS\tCONNECT MS\tSTART MS\tKEPT BACK\tFIRST CHRF\tFIRST MS")
	for _, res := range r.Results {
		s := res.Scenario
		chrf, ms, model, connect, start := "-", "-", "-", "-", "-"
		firstChrF, firstMS := "-", "-"
		if res.Evaluated() {
			ms = fmt.Sprint(res.Latency.Milliseconds())
			firstMS = fmt.Sprint(res.First.Latency.Milliseconds())
			if res.HasChrF {
				chrf = fmt.Sprintf("%.1f", res.ChrF)
				firstChrF = fmt.Sprintf("%.1f", res.First.ChrF)
			}
			if res.Model != nil {
				model = fmt.Sprint(res.Model.Milliseconds())
			}
			if res.Connect != nil {
				connect = fmt.Sprint(res.Connect.Milliseconds())
			}
		}
		if res.Start > 0 {
			start = fmt.Sprint(res.Start.Milliseconds())
		}
		kept := "-"
		if res.KeptBack != "" {
			kept = res.KeptBack
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.Name, s.Kind, s.Language, res.outcome(), chrf, ms, model, connect, start, kept, firstChrF, firstMS)
	}
	w.Flush()
	for _, res := range r.Results {
		if !res.Evaluated() && res != r.StoppedBy {
			// (The failure that stopped the run is said once, at the end.)
			fmt.Fprintf(&b, "%s failed: %s\n", res.Scenario.Name, res.Err)
		}
	}

	b.WriteString("\n")
	w = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "KIND\tEXACT\tCHRF\tSHOWN WHERE EXPECTED\tQUIET WHERE NONE\tFAILED")
	row := func(name string, t Totals) {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%d\n", name, frac(t.Exact, t.Evaluated), chrfText(t), frac(t.Shown, t.ExpectChange), frac(t.Quiet, t.ExpectNothing), t.Failed)
	}
	for _, k := range Kinds {
		if t, ok := r.ByKind[k]; ok {
			row(k, t)
		}
	}
	row("total", r.Total)
	w.Flush()

	t := r.Total
	b.WriteString("\n")
	w = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "scenarios\t%d run of %d: %d evaluated, %d failed\n", len(r.Results), r.Scenarios, t.Evaluated, t.Failed)
	fmt.Fprintf(w, "exact matches\t%s\tthe text after the suggestion is the expected text\n", ratio(t.Exact, t.Evaluated))
	fmt.Fprintf(w, "chrF of changed lines\t%s\tmean over the %d scenarios that expect a change\n", chrfText(t), t.ChrFCount)
	fmt.Fprintf(w, "shown where expected\t%s\ta suggestion where an edit was expected\n", ratio(t.Shown, t.ExpectChange))
	fmt.Fprintf(w, "quiet where none\t%s\tno suggestion where none was expected\n", ratio(t.Quiet, t.ExpectNothing))
	fmt.Fprintf(w, "kept back\t%s\t%s\n", keptBackText(t), keptBackNote(t))
	if t.NoChange > 0 {
		fmt.Fprintf(w, "no change\t%d\tanswers of the model that changed nothing (empty, or the text as it was), so no suggestion and none kept back; %d where an edit was expected\n", t.NoChange, t.NoChangeWanted)
	}
	if t.LatencyCount > 0 {
		// Speed is when the first of a suggestion appears; quality (above) is the settled one's.
		fmt.Fprintf(w, "nes/suggest latency\tp50 %d ms, p90 %d ms\tto the first suggestion shown, over %d answers; each holds the agent's first request to the server and its own work, not its start\n", t.First.P50.Milliseconds(), t.First.P90.Milliseconds(), t.LatencyCount)
		fmt.Fprintf(w, "settled\tp50 %d ms, p90 %d ms\tto the answer's end, the suggestion the figures above score (%d of %d grew after the first)\n", t.P50.Milliseconds(), t.P90.Milliseconds(), t.Grew, t.Evaluated)
		fmt.Fprintf(w, "first suggestion\tchrF %s, exact %s, shown where expected %s, quiet where none %s\tthe agent's first answer, while its model may still write\n",
			firstChrFText(t), frac(t.First.Exact, t.Evaluated), frac(t.First.Shown, t.ExpectChange), frac(t.First.Quiet, t.ExpectNothing))
	} else {
		fmt.Fprintf(w, "nes/suggest latency\t-\n")
	}
	if t.ModelCount > 0 {
		fmt.Fprintf(w, "model's time\tp50 %d ms, p90 %d ms\tfrom the prompt sent to the server to the answer read whole, as the agent logged it, over %d answers\n", t.ModelP50.Milliseconds(), t.ModelP90.Milliseconds(), t.ModelCount)
	}
	if t.ConnectCount > 0 {
		fmt.Fprintf(w, "first connection\tp50 %d ms, p90 %d ms\tof the agent's first request, before the server had the prompt: a new connection, and for a raw or FIM prompt the question of what serves the model\n", t.ConnectP50.Milliseconds(), t.ConnectP90.Milliseconds())
	}
	if t.StartCount > 0 {
		fmt.Fprintf(w, "agent start\tp50 %d ms, p90 %d ms\tfrom its process's start to its answer to nes/start, once per scenario\n", t.StartP50.Milliseconds(), t.StartP90.Milliseconds())
	}
	if t.Timed > 0 {
		fmt.Fprintf(w, "prompt cache\t%d of %d prompt tokens evaluated anew, median share %.2f\tthe server's timings (llama-server's prompt_n and cache_n) over %d scenarios\n",
			t.Prompt.PromptN, t.Prompt.PromptN+t.Prompt.CacheN, t.NewShare, t.Timed)
	}
	w.Flush()
	if g := r.WithoutGate; g != nil {
		b.WriteString("\n")
		w = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(w, "THE GATE'S EFFECT\tWITH THE GATE\tWITHOUT IT")
		fmt.Fprintf(w, "shown where expected\t%s\t%s\n", ratio(t.Shown, t.ExpectChange), ratio(g.Shown, g.ExpectChange))
		fmt.Fprintf(w, "quiet where none\t%s\t%s\n", ratio(t.Quiet, t.ExpectNothing), ratio(g.Quiet, g.ExpectNothing))
		fmt.Fprintf(w, "chrF of changed lines\t%s\t%s\n", chrfText(t), chrfText(*g))
		fmt.Fprintf(w, "exact matches\t%s\t%s\n", ratio(t.Exact, t.Evaluated), ratio(g.Exact, g.Evaluated))
		w.Flush()
	}
	if r.Stopped != "" {
		fmt.Fprintf(&b, "\nstopped: %s\n", r.Stopped)
	}
	return b.String()
}

// The JSON report: eval --json prints one such object.
type jsonReport struct {
	Model     string                `json:"model"`
	URL       string                `json:"url"`
	Agent     *AgentInfo            `json:"agent"`
	Set       string                `json:"set,omitempty"`
	Dir       string                `json:"dir,omitempty"`
	Scenarios int                   `json:"scenarios"`
	Stopped   *string               `json:"stopped"`
	Results   []jsonResult          `json:"results"`
	Total     jsonTotals            `json:"total"`
	ByKind    map[string]jsonTotals `json:"byKind"`
	// WithoutGate is the total with the agent's quality gate off (--gate-effect), else absent.
	WithoutGate *jsonTotals `json:"withoutGate,omitempty"`
}

type jsonResult struct {
	Name         string   `json:"name"`
	File         string   `json:"file"`
	Kind         string   `json:"kind"`
	Language     string   `json:"language"`
	Path         string   `json:"path"`
	ExpectChange bool     `json:"expectChange"`
	Error        *string  `json:"error"`
	Shown        bool     `json:"shown"`
	Exact        bool     `json:"exact"`
	ChrF         *float64 `json:"chrF"`
	LatencyMs    *float64 `json:"latencyMs"`
	// ModelMs is the model's time, ConnectMs the part of the agent's first request before the
	// server had the prompt, StartMs the agent's start (Result); null when not known.
	ModelMs   *float64 `json:"modelMs"`
	ConnectMs *float64 `json:"connectMs"`
	StartMs   *float64 `json:"startMs"`
	// For a result that is not exact: the changed lines expected and those the agent left.
	ExpectedLines *string  `json:"expectedLines,omitempty"`
	GotLines      *string  `json:"gotLines,omitempty"`
	Dropped       []string `json:"dropped,omitempty"`
	// KeptBack is the rule and the reason by which the agent kept its answer back.
	KeptBack *jsonKeptBack `json:"keptBack,omitempty"`
	// NoChange is the agent's reason when its model's answer changed nothing.
	NoChange *string `json:"noChange,omitempty"`
	// PromptN and CacheN are the server's timings: the prompt tokens evaluated anew and those
	// taken from its cache, when the agent logged them.
	PromptN *int `json:"promptN,omitempty"`
	CacheN  *int `json:"cacheN,omitempty"`
	// First is the first suggestion (the fields above are the settled one's), and Grew how many
	// answers followed it; null for a result that failed.
	First *jsonFirst `json:"first"`
	Grew  int        `json:"grew"`
}

// jsonFirst is a first suggestion, of a result or in the totals.
type jsonFirst struct {
	Shown     *bool    `json:"shown,omitempty"`
	Exact     *bool    `json:"exact,omitempty"`
	ChrF      *float64 `json:"chrF"`
	LatencyMs *float64 `json:"latencyMs,omitempty"`
	// In the totals: counts and percentiles.
	ExactN *int     `json:"exactCount,omitempty"`
	ShownN *int     `json:"shownWhereExpected,omitempty"`
	QuietN *int     `json:"quietWhereNone,omitempty"`
	P50    *float64 `json:"latencyP50Ms,omitempty"`
	P90    *float64 `json:"latencyP90Ms,omitempty"`
}

type jsonKeptBack struct {
	Rule string `json:"rule"`
	Why  string `json:"why"`
}

type jsonTotals struct {
	Scenarios     int      `json:"scenarios"`
	Evaluated     int      `json:"evaluated"`
	Failed        int      `json:"failed"`
	Exact         int      `json:"exact"`
	ExpectChange  int      `json:"expectChange"`
	Shown         int      `json:"shownWhereExpected"`
	ExpectNothing int      `json:"expectNothing"`
	Quiet         int      `json:"quietWhereNone"`
	ChrF          *float64 `json:"chrF"`
	ChrFCount     int      `json:"chrFScenarios"`
	P50           *float64 `json:"latencyP50Ms"`
	P90           *float64 `json:"latencyP90Ms"`
	// The percentiles of the model's time, of the first connection and of the agent's start;
	// null when no result has it.
	ModelP50   *float64 `json:"modelP50Ms"`
	ModelP90   *float64 `json:"modelP90Ms"`
	ConnectP50 *float64 `json:"connectP50Ms"`
	ConnectP90 *float64 `json:"connectP90Ms"`
	StartP50   *float64 `json:"startP50Ms"`
	StartP90   *float64 `json:"startP90Ms"`
	// KeptBack counts the answers kept back by rule; the two others split them by whether an
	// edit was expected.
	KeptBack       map[string]int `json:"keptBack"`
	KeptBackRight  int            `json:"keptBackWhereNone"`
	KeptBackWanted int            `json:"keptBackWhereExpected"`
	// NoChange counts the answers that changed nothing (no suggestion, none kept back), and
	// NoChangeWanted those of them where an edit was expected.
	NoChange       int `json:"noChange"`
	NoChangeWanted int `json:"noChangeWhereExpected"`
	// The server's timings summed, and the median share of a prompt evaluated anew, over the
	// results that have them; absent when none has.
	PromptTokens   *int     `json:"promptTokens,omitempty"`
	CachedTokens   *int     `json:"cachedTokens,omitempty"`
	NewShareMedian *float64 `json:"newShareMedian,omitempty"`
	// First are the first suggestions' figures (the others are the settled ones'), and Grew
	// counts the results whose answer grew after the first.
	First jsonFirst `json:"first"`
	Grew  int       `json:"grew"`
}

func round1(f float64) *float64 {
	v := math.Round(f*10) / 10
	return &v
}

func ms(d time.Duration) *float64 {
	v := math.Round(float64(d.Microseconds())/100) / 10
	return &v
}

func toJSONTotals(t Totals) jsonTotals {
	j := jsonTotals{
		Scenarios: t.Scenarios, Evaluated: t.Evaluated, Failed: t.Failed, Exact: t.Exact,
		ExpectChange: t.ExpectChange, Shown: t.Shown, ExpectNothing: t.ExpectNothing, Quiet: t.Quiet,
		ChrFCount: t.ChrFCount, KeptBack: map[string]int{}, KeptBackRight: t.KeptBackRight, KeptBackWanted: t.KeptBackWanted,
		NoChange: t.NoChange, NoChangeWanted: t.NoChangeWanted,
	}
	for rule, n := range t.KeptBack {
		j.KeptBack[rule] = n
	}
	exact, shown, quiet := t.First.Exact, t.First.Shown, t.First.Quiet
	j.First = jsonFirst{ExactN: &exact, ShownN: &shown, QuietN: &quiet}
	j.Grew = t.Grew
	if t.ChrFCount > 0 {
		j.First.ChrF = round1(t.First.ChrF)
	}
	if t.LatencyCount > 0 {
		j.First.P50, j.First.P90 = ms(t.First.P50), ms(t.First.P90)
	}
	if t.ChrFCount > 0 {
		j.ChrF = round1(t.ChrF)
	}
	if t.LatencyCount > 0 {
		j.P50, j.P90 = ms(t.P50), ms(t.P90)
	}
	if t.ModelCount > 0 {
		j.ModelP50, j.ModelP90 = ms(t.ModelP50), ms(t.ModelP90)
	}
	if t.ConnectCount > 0 {
		j.ConnectP50, j.ConnectP90 = ms(t.ConnectP50), ms(t.ConnectP90)
	}
	if t.StartCount > 0 {
		j.StartP50, j.StartP90 = ms(t.StartP50), ms(t.StartP90)
	}
	if t.Timed > 0 {
		p, c, share := t.Prompt.PromptN, t.Prompt.CacheN, math.Round(t.NewShare*1000)/1000
		j.PromptTokens, j.CachedTokens, j.NewShareMedian = &p, &c, &share
	}
	return j
}

// JSON is the report as one JSON object, with a final line break.
func (r *Report) JSON() []byte {
	j := jsonReport{Model: r.Model, URL: r.URL, Agent: r.Agent, Set: r.Set, Dir: r.Dir, Scenarios: r.Scenarios, Results: []jsonResult{},
		Total: toJSONTotals(r.Total), ByKind: map[string]jsonTotals{}}
	if r.Stopped != "" {
		j.Stopped = &r.Stopped
	}
	for k, t := range r.ByKind {
		j.ByKind[k] = toJSONTotals(t)
	}
	if r.WithoutGate != nil {
		g := toJSONTotals(*r.WithoutGate)
		j.WithoutGate = &g
	}
	for _, res := range r.Results {
		s := res.Scenario
		jr := jsonResult{Name: s.Name, File: s.File, Kind: s.Kind, Language: s.Language, Path: s.Path,
			ExpectChange: s.WantChange, Shown: res.Shown, Exact: res.Exact, Dropped: res.Dropped}
		if res.KeptBack != "" {
			jr.KeptBack = &jsonKeptBack{Rule: res.KeptBack, Why: res.KeptBackWhy}
		}
		if res.NoChange {
			jr.NoChange = &res.NoChangeWhy
		}
		if tm := res.Timings; tm != nil {
			p, c := tm.PromptN, tm.CacheN
			jr.PromptN, jr.CacheN = &p, &c
		}
		if res.Model != nil {
			jr.ModelMs = ms(*res.Model)
		}
		if res.Connect != nil {
			jr.ConnectMs = ms(*res.Connect)
		}
		if res.Start > 0 {
			jr.StartMs = ms(res.Start)
		}
		if !res.Evaluated() {
			e := res.Err
			jr.Error = &e
		} else {
			jr.LatencyMs = ms(res.Latency)
			if res.HasChrF {
				jr.ChrF = round1(res.ChrF)
			}
			f := res.First
			jr.First = &jsonFirst{Shown: &f.Shown, Exact: &f.Exact, LatencyMs: ms(f.Latency)}
			if res.HasChrF {
				jr.First.ChrF = round1(f.ChrF)
			}
			jr.Grew = res.Grew
			if !res.Exact {
				var want, have string
				if s.WantChange {
					want, have = ChangedLines(s.Last(), s.Expected, res.Got)
				} else {
					// Nothing was expected: the lines the suggestion changed.
					have = changed(s.Last(), res.Got)
				}
				jr.ExpectedLines, jr.GotLines = &want, &have
			}
		}
		j.Results = append(j.Results, jr)
	}
	b, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return []byte(fmt.Sprintf("{\"error\": %q}\n", err.Error()))
	}
	return append(b, '\n')
}
