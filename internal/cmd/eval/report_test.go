package eval

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

// results makes a result per outcome: a scenario that expects "B" on its second line, or nothing.
func testResults() []*Result {
	change := &Scenario{Name: "edit-me", Kind: KindFinishLine, Language: "go", Path: "a.go",
		Versions: []string{"a\nb\nc\n", "a\nb\nc\n\n"}, WantChange: true, Expected: "a\nB\nc\n\n"}
	rename := &Scenario{Name: "rename-me", Kind: KindRename, Language: "python", Path: "b.py",
		Versions: []string{"x\ny\n", "x\ny\n\n"}, WantChange: true, Expected: "x\nz\n\n"}
	quiet := &Scenario{Name: "leave-me", Kind: KindNothing, Language: "rust", Path: "c.rs",
		Versions: []string{"q\n", "q\nr\n"}, Expected: "q\nr\n"}
	mk := func(s *Scenario, ms int, shown bool, got string) *Result {
		r := &Result{Scenario: s, Shown: shown, Latency: time.Duration(ms) * time.Millisecond}
		r.Score(got)
		r.First = First{Latency: r.Latency, Shown: r.Shown, Exact: r.Exact, ChrF: r.ChrF} // given whole
		return r
	}
	return []*Result{
		mk(change, 100, true, "a\nB\nc\n\n"),  // exact
		mk(rename, 300, true, "x\nw\n\n"),     // wrong edit: chrF("w", "z") = 0
		mk(rename, 200, false, "x\ny\n\n"),    // quiet where an edit was expected
		mk(quiet, 400, false, "q\nr\n"),       // quiet, as expected: exact
		mk(quiet, 500, true, "q\nr\n// no\n"), // noise
		{Scenario: change, Err: "model: request to http://127.0.0.1:9/v1/chat/completions: connection refused"},
	}
}

func TestSummarize(t *testing.T) {
	tot := Summarize(testResults())
	want := Totals{Scenarios: 6, Evaluated: 5, Failed: 1, Exact: 2, ExpectChange: 3, Shown: 2, ExpectNothing: 2, Quiet: 1,
		ChrF: 100.0 / 3, ChrFCount: 3, P50: 300 * time.Millisecond, P90: 500 * time.Millisecond, LatencyCount: 5,
		First: FirstTotals{Exact: 2, Shown: 2, Quiet: 1, ChrF: 100.0 / 3, P50: 300 * time.Millisecond, P90: 500 * time.Millisecond}}
	if !reflect.DeepEqual(tot, want) {
		t.Errorf("totals\n%+v, want\n%+v", tot, want)
	}
}

// TestFirstAndSettled: a scenario whose answer grew has its first suggestion (when it came, its
// score) and its settled one apart, per scenario and in the totals, in the table and the JSON.
func TestFirstAndSettled(t *testing.T) {
	rs := testResults()[:1]
	grown := &Result{Scenario: rs[0].Scenario, Shown: true, Latency: 900 * time.Millisecond, Grew: 2}
	grown.Score("a\nB\nc\n\n")
	first := &Result{Scenario: rs[0].Scenario}
	first.Score("a\nb\nc\n\n") // the first part changed nothing of the expected lines
	grown.First = First{Latency: 150 * time.Millisecond, Shown: true, Exact: false, ChrF: first.ChrF}
	rs = append(rs, grown)
	tot := Summarize(rs)
	if tot.Exact != 2 || tot.First.Exact != 1 || tot.Grew != 1 || tot.First.P50 != 100*time.Millisecond || tot.P90 != 900*time.Millisecond {
		t.Errorf("totals %+v", tot)
	}
	if tot.ChrF != 100 || tot.First.ChrF != 50 {
		t.Errorf("chrF settled %.1f, first %.1f; want 100 and 50", tot.ChrF, tot.First.ChrF)
	}
	r := &Report{Scenarios: 2, Results: rs}
	r.summarize()
	table := strings.Join(strings.Fields(r.Human()), " ")
	for _, want := range []string{"edit-me finish-line go exact 100.0 900 - - - - 0.0 150", "first suggestion chrF 50.0, exact 1/2, shown where expected 2/2", "(1 of 2 grew after the first)",
		// speed on the first suggestion, the settled one's time beside it
		"nes/suggest latency p50 100 ms, p90 150 ms to the first suggestion shown", "settled p50 100 ms, p90 900 ms to the answer's end"} {
		if !strings.Contains(table, want) {
			t.Errorf("the table does not say %q:\n%s", want, r.Human())
		}
	}
	var j struct {
		Results []struct {
			ChrF  *float64 `json:"chrF"`
			Grew  int      `json:"grew"`
			First struct {
				ChrF      *float64 `json:"chrF"`
				LatencyMs *float64 `json:"latencyMs"`
				Exact     *bool    `json:"exact"`
			} `json:"first"`
		} `json:"results"`
		Total struct {
			Grew  int `json:"grew"`
			First struct {
				ExactN *int     `json:"exactCount"`
				ChrF   *float64 `json:"chrF"`
			} `json:"first"`
		} `json:"total"`
	}
	if err := json.Unmarshal(r.JSON(), &j); err != nil {
		t.Fatal(err)
	}
	g := j.Results[1]
	if g.Grew != 2 || *g.ChrF != 100 || g.First.ChrF == nil || *g.First.ChrF != 0 || *g.First.LatencyMs != 150 || *g.First.Exact {
		t.Errorf("the JSON of the grown result: %+v", g)
	}
	if j.Total.Grew != 1 || *j.Total.First.ExactN != 1 || *j.Total.First.ChrF != 50 {
		t.Errorf("the JSON totals: %+v", j.Total)
	}
}

// TestReportKeptBack: the answers the agent kept back are counted by rule and by whether an edit
// was expected, and said per scenario, in the table and in the JSON.
func TestReportKeptBack(t *testing.T) {
	results := testResults()
	results[2].KeptBack, results[2].KeptBackWhy = "undo", "it undoes the most recent edit" // an edit was expected
	results[3].KeptBack, results[3].KeptBackWhy = "rewrite", "a rewrite, not an edit"      // nothing was
	tot := Summarize(results)
	if !reflect.DeepEqual(tot.KeptBack, map[string]int{"undo": 1, "rewrite": 1}) || tot.KeptBackWanted != 1 || tot.KeptBackRight != 1 {
		t.Errorf("kept back %v, where expected %d, where none %d", tot.KeptBack, tot.KeptBackWanted, tot.KeptBackRight)
	}
	rep := &Report{Model: "m", URL: "u", Scenarios: len(results), Results: results}
	rep.summarize()
	human := strings.Join(strings.Fields(rep.Human()), " ")
	for _, want := range []string{"KEPT BACK", "rename-me rename python quiet (missed) 0.0 200 - - - undo", "leave-me nothing rust quiet (right) - 400 - - - rewrite", "kept back 2 (rewrite 1, undo 1) answers the agent kept back: 1 where nothing was expected, 1 where an edit was (--no-gate shows them)"} {
		if !strings.Contains(human, want) {
			t.Errorf("the table does not say %q:\n%s", want, human)
		}
	}
	if s := results[2].Summary(); !strings.Contains(s, "kept its answer back (undo: it undoes the most recent edit)") {
		t.Errorf("summary %q", s)
	}
	var j struct {
		Results []struct {
			KeptBack *struct{ Rule, Why string } `json:"keptBack"`
		} `json:"results"`
		Total struct {
			KeptBack map[string]int `json:"keptBack"`
		} `json:"total"`
	}
	if err := json.Unmarshal(rep.JSON(), &j); err != nil {
		t.Fatal(err)
	}
	if j.Results[2].KeptBack == nil || j.Results[2].KeptBack.Rule != "undo" || j.Results[0].KeptBack != nil || j.Total.KeptBack["rewrite"] != 1 {
		t.Errorf("JSON: results %+v, total %+v", j.Results, j.Total)
	}
}

func TestReportHuman(t *testing.T) {
	rep := &Report{Model: "fake-coder", URL: "http://127.0.0.1:8080", Agent: &AgentInfo{Format: "chat"}, Scenarios: 7, Results: testResults(),
		Stopped: "interrupted"}
	rep.summarize()
	out := rep.Human()
	for _, want := range []string{
		`acp-lsp-bridge eval: 7 scenarios, model "fake-coder" at http://127.0.0.1:8080, prompt format chat`,
		"edit-me    finish-line  go        exact           100.0  100",
		"rename-me  rename       python    wrong edit      0.0    300",
		"rename-me  rename       python    quiet (missed)  0.0    200",
		"leave-me   nothing      rust      quiet (right)   -      400",
		"leave-me   nothing      rust      shown (noise)   -      500",
		"edit-me    finish-line  go        FAILED          -      -",
		"edit-me failed: model: request to http://127.0.0.1:9/v1/chat/completions: connection refused",
		"finish-line  1/1    100.0  1/1                   -                 1",
		"rename       0/2    0.0    1/2                   -                 0",
		"nothing      1/2    -      -                     1/2               0",
		"total        2/5    33.3   2/3                   1/2               1",
		"scenarios              6 run of 7: 5 evaluated, 1 failed",
		"exact matches          2/5 (40.0%)",
		"chrF of changed lines  33.3",
		"shown where expected   2/3 (66.7%)",
		"quiet where none       1/2 (50.0%)",
		"nes/suggest latency    p50 300 ms, p90 500 ms",
		"stopped: interrupted",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the report has no line with %q:\n%s", want, out)
		}
	}
}

func TestReportJSON(t *testing.T) {
	rep := &Report{Model: "fake-coder", URL: "http://h", Scenarios: 6, Results: testResults()}
	rep.summarize()
	var j struct {
		Model   string  `json:"model"`
		Stopped *string `json:"stopped"`
		Results []struct {
			Name          string   `json:"name"`
			Kind          string   `json:"kind"`
			Error         *string  `json:"error"`
			Exact         bool     `json:"exact"`
			Shown         bool     `json:"shown"`
			ChrF          *float64 `json:"chrF"`
			LatencyMs     *float64 `json:"latencyMs"`
			ExpectedLines *string  `json:"expectedLines"`
			GotLines      *string  `json:"gotLines"`
		} `json:"results"`
		Total  map[string]any            `json:"total"`
		ByKind map[string]map[string]any `json:"byKind"`
	}
	if err := json.Unmarshal(rep.JSON(), &j); err != nil {
		t.Fatal(err)
	}
	if j.Model != "fake-coder" || j.Stopped != nil || len(j.Results) != 6 {
		t.Fatalf("%+v", j)
	}
	r := j.Results
	if !r[0].Exact || *r[0].ChrF != 100 || *r[0].LatencyMs != 100 || r[0].ExpectedLines != nil {
		t.Errorf("exact result %+v", r[0])
	}
	if r[1].Exact || *r[1].ChrF != 0 || *r[1].ExpectedLines != "z\n" || *r[1].GotLines != "w\n" {
		t.Errorf("wrong result %+v", r[1])
	}
	if r[3].ChrF != nil || !r[3].Exact {
		t.Errorf("quiet result %+v", r[3])
	}
	if *r[4].GotLines != "// no\n" || *r[4].ExpectedLines != "" {
		t.Errorf("noise %+v", r[4])
	}
	if r[5].Error == nil || r[5].LatencyMs != nil || r[5].ChrF != nil {
		t.Errorf("failed result %+v", r[5])
	}
	for k, want := range map[string]any{"scenarios": 6.0, "evaluated": 5.0, "failed": 1.0, "exact": 2.0, "expectChange": 3.0,
		"shownWhereExpected": 2.0, "expectNothing": 2.0, "quietWhereNone": 1.0, "chrF": 33.3, "chrFScenarios": 3.0,
		"latencyP50Ms": 300.0, "latencyP90Ms": 500.0} {
		if j.Total[k] != want {
			t.Errorf("total.%s = %v, want %v", k, j.Total[k], want)
		}
	}
	if j.ByKind[KindNothing]["chrF"] != nil || j.ByKind[KindRename]["exact"] != 0.0 || len(j.ByKind) != 3 {
		t.Errorf("byKind %v", j.ByKind)
	}
}

// The report names the scenarios that ran: a built-in set, or a folder.
func TestReportNamesItsScenarios(t *testing.T) {
	for _, tc := range []struct {
		set, dir, human, json string
	}{
		{SetFIM, "", "prompt format fim; the built-in FIM set\n", `"set": "fim"`},
		{SetNES, "", "prompt format fim; the built-in NES set\n", `"set": "nes"`},
		{"", "my/scenarios", "prompt format fim; the scenarios of my/scenarios\n", `"dir": "my/scenarios"`},
	} {
		rep := &Report{Model: "m", URL: "http://h", Agent: &AgentInfo{Format: "fim"}, Set: tc.set, Dir: tc.dir, Scenarios: 6, Results: testResults()}
		rep.summarize()
		if h := rep.Human(); !strings.Contains(h, tc.human) {
			t.Errorf("the table does not say %q:\n%s", tc.human, h)
		}
		if j := string(rep.JSON()); !strings.Contains(j, tc.json) {
			t.Errorf("the JSON does not say %q:\n%s", tc.json, j)
		}
	}
}

// TestReportModelTime: the model's time, the first connection and the agent's start of each
// result are given apart from its latency, per scenario and as percentiles in the totals, in the
// table and in the JSON; a result without them has "-" and null, and totals over none say nothing.
func TestReportModelTime(t *testing.T) {
	results := testResults()
	d := func(ms int) *time.Duration { v := time.Duration(ms) * time.Millisecond; return &v }
	for i, r := range results[:5] {
		r.Model, r.Connect, r.Start = d(50*(i+1)), d(10), 30*time.Millisecond*time.Duration(i+1)
	}
	results[4].Connect = nil // an answer whose line said no setup
	results[5].Start = 25 * time.Millisecond
	rep := &Report{Model: "m", URL: "u", Scenarios: len(results), Results: results}
	rep.summarize()
	tot := rep.Total
	if tot.ModelCount != 5 || tot.ModelP50 != 150*time.Millisecond || tot.ModelP90 != 250*time.Millisecond ||
		tot.ConnectCount != 4 || tot.ConnectP50 != 10*time.Millisecond ||
		tot.StartCount != 5 || tot.StartP50 != 90*time.Millisecond || tot.StartP90 != 150*time.Millisecond {
		t.Errorf("totals %+v", tot)
	}
	human := strings.Join(strings.Fields(rep.Human()), " ")
	for _, want := range []string{
		"CHRF SUGGEST MS MODEL MS CONNECT MS START MS KEPT BACK",
		"edit-me finish-line go exact 100.0 100 50 10 30 -",
		"leave-me nothing rust shown (noise) - 500 250 - 150 -",
		"edit-me finish-line go FAILED - - - - 25 -",
		"model's time p50 150 ms, p90 250 ms from the prompt sent to the server to the answer read whole, as the agent logged it, over 5 answers",
		"first connection p50 10 ms, p90 10 ms",
		"agent start p50 90 ms, p90 150 ms",
	} {
		if !strings.Contains(human, want) {
			t.Errorf("the table does not say %q:\n%s", want, rep.Human())
		}
	}
	var j struct {
		Results []map[string]any `json:"results"`
		Total   map[string]any   `json:"total"`
	}
	if err := json.Unmarshal(rep.JSON(), &j); err != nil {
		t.Fatal(err)
	}
	if r := j.Results[0]; r["modelMs"] != 50.0 || r["connectMs"] != 10.0 || r["startMs"] != 30.0 || r["latencyMs"] != 100.0 {
		t.Errorf("result 0: %v", r)
	}
	if r := j.Results[5]; r["modelMs"] != nil || r["connectMs"] != nil || r["startMs"] != 25.0 {
		t.Errorf("the failed result: %v", r)
	}
	for key, want := range map[string]float64{"modelP50Ms": 150, "modelP90Ms": 250, "connectP50Ms": 10, "connectP90Ms": 10, "startP50Ms": 90, "startP90Ms": 150, "latencyP50Ms": 300} {
		if j.Total[key] != want {
			t.Errorf("total.%s %v, want %v", key, j.Total[key], want)
		}
	}

	rep = &Report{Model: "m", URL: "u", Scenarios: len(results), Results: testResults()}
	rep.summarize()
	if h := strings.Join(strings.Fields(rep.Human()), " "); strings.Contains(h, "model's time p50") || strings.Contains(h, "first connection p50") || strings.Contains(h, "agent start p50") {
		t.Errorf("a run without them reports them:\n%s", h)
	}
	j.Total = nil
	if err := json.Unmarshal(rep.JSON(), &j); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"modelP50Ms", "connectP90Ms", "startP50Ms"} {
		if v, ok := j.Total[key]; !ok || v != nil {
			t.Errorf("total.%s %v (present %v), want null", key, v, ok)
		}
	}
}
