package eval

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	acp "github.com/coder/acp-go-sdk"
	"github.com/rs/zerolog"
	"go.lsp.dev/uri"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/acpside"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent/model"
)

// Config configures a run.
type Config struct {
	// Agent is the agent evaluated, normally this executable's "agent --model-url … --model …".
	// A fresh process runs each scenario, so that no scenario sees another's documents or edits;
	// its Dir is set to the run's workspace folder.
	Agent acpside.Command
	// Version is the bridge's version, sent in clientInfo.
	Version string
	// StartTimeout bounds the agent's answers to initialize and nes/start (default 30s).
	StartTimeout time.Duration
	// SuggestTimeout bounds each nes/suggest (default 60s); the agent's own --timeout bounds its
	// request to the model, and should be shorter.
	SuggestTimeout time.Duration
	// Progress receives a line per scenario while the run goes on ("eval: 3/24 NAME … RESULT");
	// nil: none.
	Progress io.Writer
	// AgentStderr, when set, receives what the agent writes to stderr, a line at a time.
	AgentStderr io.Writer
	// AgentVerbose says that the agent logs at debug level (the model agent's --verbose, which
	// eval always gives it): its line of each answer of its model ("model: answer"), or that it
	// asked nothing, is then waited for after nes/suggest, for the model's time and the server's
	// timings (the line can come after the answer to nes/suggest: stderr is read apart from
	// stdout, and a streamed answer can be shown before it ends).
	AgentVerbose bool
	// Log is acpside's log of the agent connection (zerolog.Nop() for none).
	Log zerolog.Logger
}

// Result is the outcome of one scenario.
type Result struct {
	Scenario *Scenario
	// Err says why the scenario could not be evaluated; "" when it was.
	Err string
	// Shown tells that the agent answered with an edit of the document (the first is applied).
	Shown bool
	// Got is the document after the suggestion was applied: the last version when none was shown.
	Got string
	// Exact tells that Got is the expected text.
	Exact bool
	// ChrF scores the changed lines (ChangedLines) of Got against those of the expected text;
	// HasChrF is false for a scenario that expects no change.
	ChrF    float64
	HasChrF bool
	// Latency is how long the settled suggestion took (nes/suggest, asked again while the answer
	// grew; First.Latency is the first answer's): the agent's work and, as the agent is new, its first
	// request to the model's server, the time before the server had the prompt (Connect) and the
	// model's (Model) included; the agent's start (Start) is not.
	Latency time.Duration
	// Model is the model's time for the scenario's answers, from the agent's log line of each
	// ("model: answer": took less setup, from the prompt written to the server to the answer read
	// whole; a streamed answer may be shown before it ends); Connect is the part of the first of
	// those requests before the server had the prompt (the agent's first connection to it, and
	// for a raw or FIM prompt the question of what serves the model). nil when the agent logged
	// no answer (another agent, or no request to the model), or, for Connect, no setup.
	Model, Connect *time.Duration
	// Start is how long the agent took to start: from just before its process started to its
	// answer to nes/start (the process, initialize, nes/start); 0 when it got no answer.
	Start time.Duration
	// Dropped says what of the answer was left aside: suggestions of other kinds or for other
	// documents, edit suggestions after the first, edits that could not be applied.
	Dropped []string
	// KeptBack is the rule by which the agent kept its model's answer back, and KeptBackWhy its
	// reason (the answer's _meta "acp-lsp-bridge/quiet"); "" when it said none.
	KeptBack, KeptBackWhy string
	// NoChange: the agent answered with no suggestion because its model's answer changed nothing
	// (an empty completion, the region as it was; its _meta rule "no-change"), and NoChangeWhy
	// says it as the agent did. Not an answer kept back: there was nothing to show.
	NoChange    bool
	NoChangeWhy string
	// Timings are the prompt tokens the model's server evaluated and took from its cache for the
	// scenario's answers, summed (llama-server's timings, which the model agent logs at
	// --verbose, as eval runs it); nil when the agent logged none.
	Timings *Timings
	// First is the first suggestion, as the agent answered it while its model may still have
	// been writing; the fields above are the settled one, once the answer had ended (the agent
	// asked again at the same place for as long as it said its answer was growing: _meta
	// "acp-lsp-bridge/growing"). For an answer that did not grow, the two are the same.
	First First
	// Grew counts the answers that followed the first (0 for an answer given whole).
	Grew int
}

// First is a scenario's first suggestion: when it came, whether one was shown, and its score.
type First struct {
	Latency time.Duration
	Shown   bool
	Exact   bool
	ChrF    float64
}

// Evaluated tells that the scenario ran to its score.
func (r *Result) Evaluated() bool { return r.Err == "" }

// Score fills in what follows from the text after the suggestion: Got, Exact, and chrF for a
// scenario that expects a change.
func (r *Result) Score(got string) {
	s := r.Scenario
	r.Got = got
	r.Exact, r.ChrF = score(s, got)
	r.HasChrF = s.WantChange
}

// score is whether got is s's expected text, and for a scenario that expects a change, the chrF
// of its changed lines.
func score(s *Scenario, got string) (exact bool, chrf float64) {
	if s.WantChange {
		want, have := ChangedLines(s.Last(), s.Expected, got)
		chrf = ChrF(have, want)
	}
	return got == s.Expected, chrf
}

// AgentInfo is what the agent said of itself in its initialize answer.
type AgentInfo struct {
	Name      string `json:"name"`
	Version   string `json:"version"`
	Model     string `json:"model,omitempty"`
	Format    string `json:"format,omitempty"`
	FormatWhy string `json:"formatWhy,omitempty"`
}

// ErrStopped reports a run that stopped before its last scenario: the first scenario could not
// be evaluated (the model's server is down, the agent cannot start), or the run was interrupted.
var ErrStopped = errors.New("eval stopped")

// Run runs the scenarios in order through the agent and reports. When the first scenario fails
// (nothing could be evaluated yet) the run stops there, as it does when ctx ends: the report
// holds what was done, and the error wraps ErrStopped with the reason. A later scenario that fails
// is reported as failed and the run goes on.
func Run(ctx context.Context, cfg Config, scenarios []*Scenario) (*Report, error) {
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = 30 * time.Second
	}
	if cfg.SuggestTimeout <= 0 {
		cfg.SuggestTimeout = 60 * time.Second
	}
	progress := cfg.Progress
	if progress == nil {
		progress = io.Discard
	}
	rep := &Report{Scenarios: len(scenarios)}
	// The workspace folder the agent is started in and told of; the scenarios' documents exist in
	// it only as open documents (the agent gets their text in document/didOpen).
	root, err := os.MkdirTemp("", "acp-lsp-bridge-eval-")
	if err != nil {
		return rep, err
	}
	defer os.RemoveAll(root)
	r := &runner{cfg: cfg, root: root}
	for i, s := range scenarios {
		if ctx.Err() != nil {
			rep.stop("interrupted", nil)
			break
		}
		// The line is finished when the scenario is, unless the agent's stderr comes in between.
		if cfg.AgentStderr != nil {
			fmt.Fprintf(progress, "eval: %d/%d %s …\n", i+1, len(scenarios), s.Name)
		} else {
			fmt.Fprintf(progress, "eval: %d/%d %s … ", i+1, len(scenarios), s.Name)
		}
		res, info := r.one(ctx, s)
		if rep.Agent == nil && info != nil {
			rep.Agent = info
		}
		rep.Results = append(rep.Results, res)
		if cfg.AgentStderr != nil {
			fmt.Fprintf(progress, "eval: %d/%d %s: ", i+1, len(scenarios), s.Name)
		}
		fmt.Fprintln(progress, res.Summary())
		if !res.Evaluated() && ctx.Err() != nil {
			rep.stop("interrupted", nil)
			break
		}
		if !res.Evaluated() && rep.evaluated() == 0 {
			if i < len(scenarios)-1 {
				rep.stop(fmt.Sprintf("the first scenario, %s, failed, so the other %d were not run", s.Name, len(scenarios)-1-i), res)
			} else {
				rep.stop(fmt.Sprintf("the scenario %s failed", s.Name), res)
			}
			break
		}
	}
	rep.summarize()
	if rep.Stopped != "" {
		return rep, fmt.Errorf("%w: %s", ErrStopped, rep.Stopped)
	}
	return rep, nil
}

// answerWait bounds the wait for the agent's log line of its model's answer after nes/suggest:
// a streamed answer is shown once its first change is written, and logged once it ends.
const answerWait = 5 * time.Second

type runner struct {
	cfg  Config
	root string
}

// stderrTail keeps the agent's last stderr lines, to say why it failed, and the server's timings
// of its model's answers that it logged.
type stderrTail struct {
	mu    sync.Mutex
	lines []string
	out   io.Writer
	// answers are the model's answers the agent logged (its "model: answer" lines, at debug
	// level), and its lines saying it asked the model nothing (none set); debug tells that it
	// logs at debug level (its --verbose), where those lines are.
	answers []loggedAnswer
	debug   bool
}

func (t *stderrTail) event(e acpside.Event) {
	if e.Kind != acpside.EventStderr {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.out != nil {
		fmt.Fprintf(t.out, "agent: %s\n", e.Line)
	}
	if a, ok := answerFromLog(e.Line); ok {
		t.answers = append(t.answers, a)
	} else if strings.Contains(e.Line, nothingAskedMsg) {
		t.answers = append(t.answers, loggedAnswer{none: true})
	}
	if strings.Contains(e.Line, "level=DEBUG") {
		t.debug = true
	}
	if strings.TrimSpace(e.Line) == "" {
		return
	}
	t.lines = append(t.lines, e.Line)
	if len(t.lines) > 3 {
		t.lines = t.lines[1:]
	}
}

// answered are the answers logged after the first n. The line of an answer can come after the
// agent answered nes/suggest (its stderr is read apart from its stdout, and a streamed answer can
// be shown before it ends): from an agent that logs at debug level (verbose: eval runs it with
// --verbose), it is waited for up to wait, or the line saying the model was asked nothing; an
// answer the server gave no timings has its line all the same, and is not waited past.
func (t *stderrTail) answered(n int, verbose bool, wait time.Duration) []loggedAnswer {
	deadline := time.Now().Add(wait)
	for {
		t.mu.Lock()
		got, debug := slices.Clone(t.answers[min(n, len(t.answers)):]), verbose || t.debug || t.out != nil
		t.mu.Unlock()
		if len(got) > 0 || !debug || time.Now().After(deadline) {
			return got
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// record puts what the agent logged of a scenario's answers in its result: the server's timings
// summed (nil when none had them), the model's time summed, and the setup of the first (the
// agent's first request to the server, as each scenario's agent is new).
func (r *Result) record(answers []loggedAnswer) {
	var model time.Duration
	timed := false
	first := true
	for _, a := range answers {
		if a.none {
			continue
		}
		if tm := a.timings; tm != nil {
			if r.Timings == nil {
				r.Timings = &Timings{}
			}
			r.Timings.PromptN += tm.PromptN
			r.Timings.CacheN += tm.CacheN
		}
		if d, ok := a.model(); ok {
			model += d
			timed = true
		}
		if first && a.hasSetup {
			c := a.setup
			r.Connect = &c
		}
		first = false
	}
	if timed {
		r.Model = &model
	}
}

// logged is how many of the model's answers the agent logged so far.
func (t *stderrTail) logged() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.answers)
}

func (t *stderrTail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(t.lines, " | ")
}

// one runs one scenario with an agent of its own: initialize, nes/start, the other files opened,
// the document opened as it was before the recorded edits, a document/didChange per edit, and
// nes/suggest at the cursor.
func (r *runner) one(ctx context.Context, s *Scenario) (*Result, *AgentInfo) {
	res := &Result{Scenario: s}
	cmd := r.cfg.Agent
	cmd.Dir = r.root
	opts := acpside.ClientOptions(r.cfg.Log, r.cfg.Version)
	// The documents exist only in the editor (here): nothing to read or write on disk, and no
	// editor state to ask for beyond the open documents the agent is sent.
	opts.FS, opts.EditorState = false, false
	tail := &stderrTail{out: r.cfg.AgentStderr}
	opts.Events = tail.event
	started := time.Now()
	agent, err := acpside.Start(cmd, opts)
	if err != nil {
		res.Err = "cannot start the agent: " + err.Error()
		return res, nil
	}
	defer agent.Close(context.WithoutCancel(ctx))
	var info *AgentInfo
	failed := func(step string, err error) (*Result, *AgentInfo) {
		res.Err = agentFailure(step, err, agent, tail)
		return res, info
	}

	ictx, cancel := context.WithTimeout(ctx, r.cfg.StartTimeout)
	defer cancel()
	resp, err := agent.Initialize(ictx)
	if err != nil {
		return failed("initialize", err)
	}
	info = describe(resp)
	ev := agent.Events()
	if !ev.DidOpen || !ev.DidChange {
		res.Err = "the agent does not take document/didOpen and document/didChange (nes.events.document): the recorded edits cannot be replayed to it"
		return res, info
	}
	wsURI := string(uri.File(r.root))
	if err := agent.StartNES(ictx, acp.UnstableStartNesRequest{
		WorkspaceUri:     &wsURI,
		WorkspaceFolders: []acp.UnstableWorkspaceFolder{{Uri: wsURI, Name: filepath.Base(r.root)}},
	}); err != nil {
		return failed("nes/start", err)
	}
	res.Start = time.Since(started)
	enc := agent.Encoding()
	docURI := r.uri(s.Path)
	for _, o := range s.Open {
		if err := agent.DidOpen(ctx, acp.UnstableDidOpenDocumentNotification{Uri: r.uri(o.Path), LanguageId: o.Language, Version: 1, Text: o.Text}); err != nil {
			return failed("document/didOpen", err)
		}
	}
	if err := agent.DidOpen(ctx, acp.UnstableDidOpenDocumentNotification{Uri: docURI, LanguageId: s.Language, Version: 1, Text: s.Versions[0]}); err != nil {
		return failed("document/didOpen", err)
	}
	for i := 1; i < len(s.Versions); i++ {
		change, err := ChangeToACP(s.Versions[i-1], s.Versions[i], enc, ev.FullSync)
		if err != nil {
			res.Err = fmt.Sprintf("edit %d: %v", i, err)
			return res, info
		}
		if err := agent.DidChange(ctx, acp.UnstableDidChangeDocumentNotification{
			Uri: docURI, Version: i + 1, ContentChanges: []acp.UnstableTextDocumentContentChangeEvent{change},
		}); err != nil {
			return failed("document/didChange", err)
		}
	}

	last := s.Last()
	m := encoding.NewMapper(last)
	pos, err := m.OffsetPosition(s.CursorOffset, enc)
	if err != nil {
		res.Err = "the cursor: " + err.Error()
		return res, info
	}
	req := acp.UnstableSuggestNesRequest{
		Uri: docURI, Version: len(s.Versions),
		Position:    acp.UnstablePosition{Line: pos.Line, Character: pos.Character},
		TriggerKind: acp.UnstableNesTriggerKindAutomatic, // as while typing
	}
	if agent.Context().Diagnostics && len(s.Diagnostics) > 0 {
		req.Context = &acp.UnstableNesSuggestContext{Diagnostics: diagnostics(m, docURI, s.Diagnostics, enc)}
	}
	sctx, scancel := context.WithTimeout(ctx, r.cfg.SuggestTimeout)
	defer scancel()
	t0 := time.Now()
	logged := tail.logged()
	sugs, note, growing, err := agent.SuggestGrowing(sctx, req)
	res.First.Latency = time.Since(t0)
	if err == nil && growing {
		// The first suggestion of an answer that goes on; one given whole is the settled one.
		first, firstShown, _ := applyFirst(last, docURI, sugs, enc)
		res.First.Shown = firstShown
		res.First.Exact, res.First.ChrF = score(s, first)
	}
	// Asked again at the same place while the agent says its model still writes the answer:
	// what the user sees once it has finished is the answer to the last of these.
	for err == nil && growing {
		sugs, note, growing, err = agent.SuggestGrowing(sctx, req)
		res.Grew++
	}
	res.Latency = time.Since(t0)
	if err == nil {
		res.record(tail.answered(logged, r.cfg.AgentVerbose, answerWait))
	}
	switch {
	case note != nil && note.Rule == model.RuleNoChange:
		// One that changes nothing is no answer to keep back: counted apart.
		res.NoChange, res.NoChangeWhy = true, nesagent.CleanText(note.Why, 300)
	case note != nil:
		// An answer the agent had and did not show.
		res.KeptBack, res.KeptBackWhy = nesagent.CleanText(note.Rule, 40), nesagent.CleanText(note.Why, 300)
	}
	switch {
	case errors.Is(err, acpside.ErrCancelled) && ctx.Err() != nil:
		res.Err = "interrupted"
		return res, info
	case errors.Is(err, acpside.ErrCancelled):
		res.Err = fmt.Sprintf("no answer to nes/suggest within %v", r.cfg.SuggestTimeout)
		return res, info
	case err != nil:
		return failed("nes/suggest", err)
	}

	var got string
	got, res.Shown, res.Dropped = applyFirst(last, docURI, sugs, enc)
	res.Score(got)
	if res.Grew == 0 {
		res.First = First{Latency: res.Latency, Shown: res.Shown, Exact: res.Exact, ChrF: res.ChrF}
	}
	return res, info
}

// applyFirst is last with the first edit suggestion of docURI among sugs made (shown), and what
// of sugs was left aside.
func applyFirst(last, docURI string, sugs []acpside.Suggestion, enc encoding.Kind) (got string, shown bool, dropped []string) {
	got = last
	for _, sg := range sugs {
		switch {
		case sg.Edit == nil:
			why := sg.Problem
			if why == "" {
				why = "not an edit"
			}
			dropped = append(dropped, fmt.Sprintf("a %s suggestion (%s)", orUnknown(sg.Kind), why))
		case sg.Edit.Uri != docURI:
			dropped = append(dropped, "an edit of another document, "+sg.Edit.Uri)
		case shown:
			dropped = append(dropped, "an edit suggestion after the first")
		default:
			after, err := ApplyEdits(last, sg.Edit.Edits, enc)
			if err != nil {
				dropped = append(dropped, err.Error())
				continue
			}
			got, shown = after, true
		}
	}
	return got, shown, dropped
}

func orUnknown(s string) string {
	if s == "" {
		return "malformed"
	}
	return s
}

// uri is the file: URI of a scenario path in the workspace folder.
func (r *runner) uri(p string) string {
	return string(uri.File(filepath.Join(r.root, filepath.FromSlash(p))))
}

// diagnostics are a scenario's problems, each over its whole line, in the agent's encoding.
func diagnostics(m *encoding.Mapper, docURI string, ds []Diagnostic, enc encoding.Kind) []acp.UnstableNesDiagnostic {
	var out []acp.UnstableNesDiagnostic
	for _, d := range ds {
		r, err := m.OffsetsRange(m.LineStart(d.Line), m.LineContentEnd(d.Line), enc)
		if err != nil {
			continue
		}
		out = append(out, acp.UnstableNesDiagnostic{
			Uri: docURI, Message: d.Message, Severity: acp.UnstableNesDiagnosticSeverity(d.Severity),
			Range: acp.UnstableRange{
				Start: acp.UnstablePosition{Line: r.Start.Line, Character: r.Start.Character},
				End:   acp.UnstablePosition{Line: r.End.Line, Character: r.End.Character},
			},
		})
	}
	return out
}

// describe reads what the agent said of itself, and the prompt format the model agent chose.
func describe(resp *acp.InitializeResponse) *AgentInfo {
	info := &AgentInfo{}
	if resp == nil || resp.AgentInfo == nil {
		return info
	}
	info.Name, info.Version = resp.AgentInfo.Name, resp.AgentInfo.Version
	if m, ok := resp.AgentInfo.Meta[model.MetaKey].(map[string]any); ok {
		str := func(k string) string { s, _ := m[k].(string); return s }
		info.Model, info.Format, info.FormatWhy = str("model"), str("format"), str("why")
	}
	return info
}

// agentFailure says why a step failed: the agent's own message for an error it answered (for
// the model agent, the model server's failure: unreachable, an error status, too slow), or how
// the agent ended.
func agentFailure(step string, err error, agent *acpside.Agent, tail *stderrTail) string {
	var re *acp.RequestError
	if errors.As(err, &re) {
		if d, ok := re.Data.(map[string]any); ok {
			if msg, ok := d["error"].(string); ok && msg != "" && !strings.HasPrefix(msg, "peer disconnected") {
				return msg
			}
		}
	}
	if status, _, ok := agent.Exited(500 * time.Millisecond); ok {
		msg := fmt.Sprintf("the agent exited (%s) before answering %s", status, step)
		if t := tail.String(); t != "" {
			msg += ": " + t
		}
		return msg
	}
	if re != nil && re.Message != "" {
		return fmt.Sprintf("%s: %d %s", step, re.Code, re.Message)
	}
	return err.Error()
}
