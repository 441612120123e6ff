package doctor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	acp "github.com/coder/acp-go-sdk"
	"github.com/rs/zerolog"
	"go.lsp.dev/uri"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/acpside"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/promptagent"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/lspside"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent/model"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/workspace"
)

// sampleText is the document of the sample suggestion: a loop whose return is half typed.
const sampleText = "package main\n\nfunc total(prices []int) int {\n\tsum := 0\n\tfor _, p := range prices {\n\t\tsum += p\n\t}\n\treturn su\n}\n"

// sample asks one suggestion at the end of "return su" in sampleText, by hand, and reports how
// long it took and what came back.
func sample(ctx context.Context, agent *acpside.Agent, run Run) *sampleReport {
	rep := &sampleReport{}
	fail := func(err error) *sampleReport {
		// The agent's own words, bounded and cleaned: not the JSON of its error, which may hold
		// anything the agent wrote.
		msg := nesagent.CleanText(acpside.ErrorWords(err), 1000)
		rep.Error = &msg
		if f, ok := acpside.BackendFailure(err); ok {
			rep.Reason = f.Reason
		}
		return rep
	}
	doc := string(uri.File(filepath.Join(run.Dir, "acp-lsp-bridge-doctor-sample.go")))
	if agent.Events().DidOpen {
		if err := agent.DidOpen(ctx, acp.UnstableDidOpenDocumentNotification{Uri: doc, LanguageId: "go", Version: 1, Text: sampleText}); err != nil {
			return fail(err)
		}
	}
	timeout := run.SampleTimeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	setting := lspside.SuggestTimeoutSetting(agent.Prompted())
	rep.BridgeTimeoutFlag, rep.BridgeTimeoutKey = setting.Flag, setting.Key
	bridge := setting.Default
	if run.BridgeTimeout > 0 {
		bridge = run.BridgeTimeout
	}
	rep.BridgeTimeoutMs = float64(bridge.Milliseconds())
	sctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	t0 := time.Now()
	// Line 7 is "\treturn su"; the cursor after "su" (one byte per character in every encoding).
	req := acp.UnstableSuggestNesRequest{Uri: doc, Version: 1, Position: acp.UnstablePosition{Line: 7, Character: 10}, TriggerKind: acp.UnstableNesTriggerKindManual}
	sugs, note, growing, err := agent.SuggestGrowing(sctx, req)
	// Asked again while the agent says its model still writes: the answer is the whole one, as
	// the editor shows once the model has finished.
	for err == nil && growing {
		sugs, note, growing, err = agent.SuggestGrowing(sctx, req)
	}
	rep.Ms = msSince(t0)
	rep.SlowerThanBridge = time.Since(t0) > bridge
	if errors.Is(err, acpside.ErrCancelled) {
		return fail(fmt.Errorf("no answer within %v", timeout))
	}
	if err != nil {
		return fail(err)
	}
	rep.Suggestions = len(sugs)
	if len(sugs) == 0 && note != nil {
		rep.Quiet = &quietReport{Rule: nesagent.CleanText(note.Rule, 40), Why: nesagent.CleanText(strings.Join(strings.Fields(note.Why), " "), 300)}
	}
	for _, sg := range sugs {
		if sg.Edit != nil && len(sg.Edit.Edits) > 0 {
			first := shorten(sg.Edit.Edits[0].NewText, 80)
			rep.First = &first
			break
		}
	}
	if rep.First == nil && len(sugs) > 0 {
		first := "(a " + sugs[0].Kind + ")"
		rep.First = &first
	}
	return rep
}

// modelOf is the report's model agent's part, nil for any other agent.
func modelOf(r *Report) *modelReport {
	if r.Agent == nil {
		return nil
	}
	return r.Agent.Model
}

// unreadableSample is a warning for a sample the model answered in words the agent could not
// read (the rule unreadable): an answer came, but in the editor every one would likely come back
// empty alike, as the model does not write the format it was asked in. "" for any other sample.
func unreadableSample(s *sampleReport, m *modelReport) string {
	if s.Suggestions > 0 || s.Quiet == nil || s.Quiet.Rule != model.RuleUnreadable {
		return ""
	}
	format := "the format it was asked in"
	if m != nil && m.Format != "" {
		format = "the format " + m.Format
	}
	return "the sample's answer could not be read (" + strings.TrimPrefix(s.Quiet.Why, s.Quiet.Rule+": ") + "): the model may not write " + format + "; if every suggestion comes back empty, name the format it writes with --model-format (docs/model-agent.md lists them)"
}

// sampleAdvice is what to do about a sample suggestion that failed, from the reason the agent
// gave (acpside.BackendFailure) and its words: the model agent's words name the address, the
// status and the variable.
func sampleAdvice(reason, words string) string {
	w := strings.ToLower(words)
	switch {
	case reason == acpside.ReasonCredentialsRefused:
		return "the service refused the key: set a valid one in the variable the agent reads it from (doctor's key line names it), where the editor is started, and start the editor again (the agent reads the key once, when it starts; acp-lsp-bridge.restart keeps the editor's environment)"
	case reason == acpside.ReasonRateLimited:
		return "the service asks for a pause (HTTP 429: a rate limit, or your quota is spent): wait, or check your plan with the service"
	case reason == acpside.ReasonRedirectRefused:
		return "the server sent the request to another address: name that address in --model-url"
	case strings.Contains(w, "no such host") || strings.Contains(w, "server misbehaving") || strings.Contains(w, "name resolution") || strings.Contains(w, "is not found:"):
		return "the model's host name does not resolve: check the host in --model-url, and the network"
	case reason == acpside.ReasonBackendUnreachable || strings.Contains(w, "connection refused") || strings.Contains(w, "nothing answers at"):
		return "nothing answers at the model's address: start the model's server there (llama-server, Ollama, vLLM), or point --model-url at the one that runs"
	case notFoundStatus.MatchString(w) && (strings.Contains(w, "pull") || strings.Contains(w, "model \"") || strings.Contains(w, "model '") || strings.Contains(w, "model not found")):
		return "the server does not have that model: pull it (Ollama: ollama pull NAME), or name one it serves in --model"
	case notFoundStatus.MatchString(w):
		return "the server has no such endpoint: name the server's root in --model-url (no /v1 path), and what it is with --model-server"
	case reason == acpside.ReasonBackendTimeout:
		return "the model's server did not answer in time: is the model loaded and the machine free? raise the agent's --timeout"
	case serverStatus.MatchString(w):
		return "the model's server failed (an HTTP 5xx): its own log says why"
	case reason == acpside.ReasonBackendError:
		return "the model's server could not answer (" + words + "): is it running at --model-url?"
	}
	return "the agent could not answer a suggestion: " + words
}

// notFoundStatus and serverStatus find an HTTP 404 and a 5xx status in an error's words, as the
// model agent writes a status ("answered 404 Not Found"): never a port or a number of the address.
var (
	notFoundStatus = regexp.MustCompile(`\b404 not found\b`)
	serverStatus   = regexp.MustCompile(`\b5[0-9][0-9] [a-z]`)
)

// Run is one check.
type Run struct {
	// Command is the agent, started in Dir, the workspace folder.
	Command acpside.Command
	Dir     string
	// Timeout bounds each of the agent's answers to initialize and nes/start.
	Timeout time.Duration
	Log     zerolog.Logger
	// Version is the bridge's, sent to the agent and reported.
	Version string
	// Start starts the agent with the options given (acpside.Start, or an agent in the test's
	// process).
	Start func(acpside.Options) (*acpside.Agent, error)
	// Sample asks one suggestion on a small sample document once the session is open, and
	// reports it with its latency (--prompt); SampleTimeout bounds it.
	Sample        bool
	SampleTimeout time.Duration
	// BridgeTimeout is how long the bridge will wait for a suggestion (its --suggest-timeout, or
	// --prompt-timeout for an agent asked through prompts): the sample says whether the agent
	// answers within it. 0: the bridge's default.
	BridgeTimeout time.Duration
	// Excludes keep files from the agent, as the bridge's --exclude and --no-default-excludes
	// make them; nil keeps nothing back.
	Excludes *workspace.Excludes
}

// promptNote is what doctor says of an agent asked through prompts.
const promptNote = "the agent has no Next Edit Suggestions of its own: the bridge asks it through prompts, each suggestion slower (seconds) and billed to the agent's model; by default only when you ask for one"

// Check starts the agent, runs initialize, nes/start and nes/close, ends it, and reports.
func Check(ctx context.Context, run Run) *Report {
	wsURI := string(uri.File(run.Dir))
	rep := newReport(run.Command, wsURI, run.Version)
	defer rep.copilot(run)
	// The bridge's own options, so that the agent sees the initialize the bridge sends.
	opts := acpside.ClientOptions(run.Log, run.Version)
	col := newCollector()
	opts.Events = col.event
	files := workspace.New([]string{run.Dir}, run.Excludes)
	opts.Handler = handler(files)
	rep.Exclusions = describeExclusions(files)
	// As the bridge does: an agent without NES is asked through prompts.
	opts.Prompts = &acpside.PromptOptions{
		Workspace: func() string { return run.Dir },
		Serve:     promptagent.Serve(run.Version, model.Config{}, nil),
	}

	t0 := time.Now()
	agent, err := run.Start(opts)
	if err != nil {
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
			where := "on $PATH"
			if strings.ContainsAny(run.Command.Path, `/\`) { // a path, not a name to look up
				where = "at that path"
			}
			rep.fail("start", failNotFound, fmt.Sprintf("cannot start the agent: command \"%s\" not found (no executable %s)", run.Command.Path, where))
		} else {
			rep.fail("start", failStart, "cannot start the agent: "+err.Error())
		}
		return rep
	}
	finished := false
	finish := func() {
		if finished {
			return
		}
		finished = true
		tc := time.Now()
		agent.Close(context.WithoutCancel(ctx))
		rep.Timings.CloseMs = msSince(tc)
		col.settle()
		rep.AgentStderr = col.stderrTail()
		if w := col.stdoutWarning(); w != "" {
			rep.Warnings = append(rep.Warnings, w)
		}
	}
	defer finish()

	// initialize
	ictx, cancel := context.WithTimeout(ctx, run.Timeout)
	resp, err := agent.Initialize(ictx)
	if resp != nil {
		rep.Timings.InitializeMs = msSince(t0)
		rep.Agent = describeAgent(resp, agent.Encoding())
		if agent.Prompted() {
			// The positions are the bridge's own agent's, in front: prompts carry text.
			rep.Agent.PositionEncodingSource = "bridge"
		}
		rep.Warnings = append(rep.Warnings, warnings(resp, opts.Encodings)...)
	}
	if errors.Is(err, acpside.ErrNoNES) { // not after prompts were allowed above; kept for a caller without them
		cancel()
		rep.fail("initialize", failNoNES, "the agent has no nes capability (agentCapabilities.nes): it does not offer Next Edit Suggestions")
		return rep
	}
	if err != nil {
		rep.classify(ctx, ictx, run, col, agent, "initialize", err, finish)
		cancel()
		return rep
	}
	cancel()

	// nes/start
	name := filepath.Base(run.Dir)
	req := acp.UnstableStartNesRequest{
		WorkspaceUri:     &wsURI,
		WorkspaceFolders: []acp.UnstableWorkspaceFolder{{Uri: wsURI, Name: name}},
	}
	step := "nes/start"
	if agent.Prompted() {
		step = "session/new" // what StartNES sends such an agent
	}
	sctx, cancel := context.WithTimeout(ctx, run.Timeout)
	ts := time.Now()
	err = agent.StartNES(sctx, req)
	if err == nil || agentError(err) != nil {
		if step == "session/new" {
			rep.Timings.SessionNewMs = msSince(ts)
		} else {
			rep.Timings.NESStartMs = msSince(ts)
		}
	}
	if errors.Is(err, acpside.ErrNoNES) {
		cancel()
		rep.fail(step, failNoNES, "the agent has no nes capability (agentCapabilities.nes) and no sessions to ask it through prompts (session/new: method not found): it cannot give suggestions")
		return rep
	}
	if err != nil {
		rep.classify(ctx, sctx, run, col, agent, step, err, finish)
		cancel()
		return rep
	}
	cancel()

	rep.OK = true
	rep.Reason = "the agent can do Next Edit Suggestions"
	if agent.Prompted() {
		rep.Reason = "the agent can give suggestions through prompts (slower, billed to its model)"
		rep.Prompts = &promptsReport{Mode: agent.PromptMode(), Note: promptNote}
	}
	if run.Sample {
		rep.Sample = sample(ctx, agent, run)
		if s := rep.Sample; s.Error != nil {
			// The agent starts, but a suggestion asked of it got no answer: in the editor every
			// one would fail alike.
			advice := sampleAdvice(s.Reason, *s.Error)
			head, _, _ := strings.Cut(advice, ": ")
			rep.fail("nes/suggest", failSample, "the agent starts, but the sample suggestion got no answer: "+head)
			rep.Advice = &advice
		} else if w := unreadableSample(s, modelOf(rep)); w != "" {
			rep.Warnings = append(rep.Warnings, w)
		}
	}
	if m := modelOf(rep); !run.Sample && m != nil && m.ServerAnswers != nil && !*m.ServerAnswers {
		// No sample was asked, but the model agent asked its server what it is, and got no
		// answer: no suggestion would get one either.
		advice := sampleAdvice(acpside.ReasonBackendError, m.ServerWhy)
		head, _, _ := strings.Cut(advice, ": ")
		rep.fail("model-server", failModelServer, "the agent starts, but the model's server does not answer: "+head)
		rep.Advice = &advice
	} else if !run.Sample && m != nil && m.ServerRefusedKey {
		// The server answered the question of what it is by refusing the key: so would it
		// every suggestion (with --prompt, the sample says so itself).
		advice := sampleAdvice(acpside.ReasonCredentialsRefused, m.ServerWhy)
		rep.fail("model-server", failModelKey, "the agent starts, but the model's server refused the key: "+m.ServerWhy)
		rep.Advice = &advice
	}
	ev := agent.Events()
	rep.Capabilities = capsReport{
		InlineCompletion:  true,
		CopilotInlineEdit: true,
		CodeAction:        true,
		Completion:        true,
		SuggestionKinds:   []string{"edit", "jump", "rename", "searchAndReplace"},
		// What the bridge sends, from the same definitions the bridge uses (acpside).
		DocumentEvents: ev.Names(),
		SuggestContext: agent.Context().Names(),
	}
	if ev.DidChange {
		sync := "incremental"
		if ev.FullSync {
			sync = "full"
		}
		rep.Capabilities.DocumentSync = &sync
	}
	finish()
	return rep
}

// classify explains why a step failed: an interruption, the agent's error answer, the agent
// exiting, a timeout, or an answer the bridge cannot use.
func (r *Report) classify(ctx, stepCtx context.Context, run Run, col *collector, agent *acpside.Agent, step string, err error, finish func()) {
	failures := map[string][3]string{ // step → error answer, timeout, other
		"initialize":  {failInitializeError, failInitializeTimeout, failInitializeError},
		"nes/start":   {failNESStartRefused, failNESStartTimeout, failNESStartError},
		"session/new": {failSessionRefused, failSessionTimeout, failSessionError},
	}[step]
	if ctx.Err() != nil {
		r.fail(step, failInterrupted, "interrupted while waiting for the agent's answer to "+step)
		return
	}
	if re := agentError(err); re != nil {
		r.Error = &errorReport{Method: step, Code: re.Code, Message: re.Message, Data: re.Data}
		reason := fmt.Sprintf("the agent refused %s: %d %s", step, re.Code, shorten(strings.TrimSpace(re.Message), 120))
		if step == "initialize" {
			reason = fmt.Sprintf("the agent answered initialize with an error: %d %s", re.Code, shorten(strings.TrimSpace(re.Message), 120))
		}
		switch {
		case re.Code == -32601 && step == "nes/start":
			reason += " (it does not implement Next Edit Suggestions sessions)"
		case acpside.AuthRequired(re):
			hint := "sign in with the agent first"
			if r.Agent != nil && len(r.Agent.AuthMethods) > 0 {
				ids := make([]string, len(r.Agent.AuthMethods))
				for i, m := range r.Agent.AuthMethods {
					ids[i] = m.ID
				}
				hint += "; its auth methods: " + strings.Join(ids, ", ")
			}
			reason += " (" + hint + ")"
		}
		r.fail(step, failures[0], reason)
		return
	}
	// A request that could not be written (the agent exited before reading it) fails before the
	// connection is seen to end.
	ended := time.NewTimer(500 * time.Millisecond)
	defer ended.Stop()
	select {
	case <-agent.Done():
	case <-ended.C:
	}
	if agent.Ended() {
		status := col.waitExit(500 * time.Millisecond)
		finish()
		if status != "" {
			r.AgentExit = &status
			r.fail(step, failExited, fmt.Sprintf("the agent exited (%s) before answering %s", status, step))
		} else {
			r.fail(step, failExited, "the agent closed its connection before answering "+step)
		}
		return
	}
	if errors.Is(stepCtx.Err(), context.DeadlineExceeded) {
		r.fail(step, failures[1], fmt.Sprintf("the agent did not answer %s within %v", step, run.Timeout))
		return
	}
	r.fail(step, failures[2], err.Error())
}

// agentError is the JSON-RPC error the agent answered with, or nil when err is not one:
// the Go SDK reports a timeout, a cancellation, a closed connection and a request it could not
// write (the agent exited before reading it, as gemini without --acp does) as errors of its own.
func agentError(err error) *acp.RequestError {
	var re *acp.RequestError
	if !errors.As(err, &re) {
		return nil
	}
	if re.Code == -32603 || re.Code == -32800 {
		if m, ok := re.Data.(map[string]any); ok && len(m) == 1 {
			if s, ok := m["error"].(string); ok && (strings.HasPrefix(s, "peer disconnected") ||
				s == context.DeadlineExceeded.Error() || s == context.Canceled.Error() || writeFailed(s)) {
				return nil
			}
		}
	}
	return re
}

// writeFailed reports the SDK's text for a request it could not write to the agent's stdin.
func writeFailed(s string) bool {
	if !strings.HasPrefix(s, "write ") && s != io.ErrClosedPipe.Error() {
		return false
	}
	for _, e := range []error{syscall.EPIPE, os.ErrClosed, io.ErrClosedPipe} {
		if strings.HasSuffix(s, e.Error()) {
			return true
		}
	}
	return false
}

func describeAgent(resp *acp.InitializeResponse, enc encoding.Kind) *agentReport {
	a := &agentReport{
		ProtocolVersion:        int(resp.ProtocolVersion),
		PositionEncoding:       enc.String(),
		PositionEncodingSource: "agent",
		AuthMethods:            []authReport{},
	}
	if resp.AgentCapabilities.PositionEncoding == nil {
		a.PositionEncodingSource = "default"
	}
	if info := resp.AgentInfo; info != nil {
		a.Info = &infoReport{Name: info.Name, Title: info.Title, Version: info.Version}
		if m, ok := info.Meta[model.MetaKey].(map[string]any); ok {
			str := func(k string) string { s, _ := m[k].(string); return s }
			a.Model = &modelReport{Name: str("model"), Format: str("format"), Why: str("why"), Server: str("server"), KeyEnv: str("keyEnv"), BilledWhy: str("billedWhy")}
			if b, ok := m["billed"].(bool); ok {
				a.Model.Billed = &b
			}
			if b, ok := m["serverAnswers"].(bool); ok {
				a.Model.ServerAnswers, a.Model.ServerWhy = &b, nesagent.CleanText(str("serverWhy"), 500)
			}
			a.Model.ServerRefusedKey, _ = m["serverRefusedKey"].(bool)
		}
	}
	// As the bridge reads them (acpside.AuthMethodsOf), so that doctor shows what the sign-in
	// question will offer.
	for _, m := range acpside.AuthMethodsOf(resp) {
		r := authReport{ID: m.ID, Name: m.Name, Type: m.Type}
		if m.Description != "" {
			r.Description = &m.Description
		}
		switch m.Type {
		case "env_var":
			r.Vars = append([]string{}, m.Vars...)
		case "terminal":
			r.Args = append([]string{}, m.Args...)
			r.Env = map[string]string{}
			maps.Copy(r.Env, m.Env)
		}
		a.AuthMethods = append(a.AuthMethods, r)
	}
	nes := resp.AgentCapabilities.Nes
	if nes == nil {
		return a
	}
	a.NES = &nesReport{}
	if ev := nes.Events; ev != nil && ev.Document != nil {
		d := ev.Document
		a.NES.Events = eventsReport{
			DidOpen:   d.DidOpen != nil,
			DidChange: d.DidChange != nil,
			DidClose:  d.DidClose != nil,
			DidSave:   d.DidSave != nil,
			DidFocus:  d.DidFocus != nil,
		}
		if d.DidChange != nil {
			s := string(d.DidChange.SyncKind)
			a.NES.Events.SyncKind = &s
		}
	}
	if c := nes.Context; c != nil {
		key := func(present bool, maxCount *int) *contextKey {
			if !present {
				return nil
			}
			return &contextKey{MaxCount: maxCount}
		}
		var rf, eh, ua *int
		if c.RecentFiles != nil {
			rf = c.RecentFiles.MaxCount
		}
		if c.EditHistory != nil {
			eh = c.EditHistory.MaxCount
		}
		if c.UserActions != nil {
			ua = c.UserActions.MaxCount
		}
		a.NES.Context = contextReport{
			RecentFiles:     key(c.RecentFiles != nil, rf),
			RelatedSnippets: key(c.RelatedSnippets != nil, nil),
			EditHistory:     key(c.EditHistory != nil, eh),
			UserActions:     key(c.UserActions != nil, ua),
			OpenFiles:       key(c.OpenFiles != nil, nil),
			Diagnostics:     key(c.Diagnostics != nil, nil),
		}
	}
	return a
}

func warnings(resp *acp.InitializeResponse, offered []encoding.Kind) []string {
	var out []string
	if int(resp.ProtocolVersion) != int(acp.ProtocolVersionNumber) {
		out = append(out, fmt.Sprintf("the agent answered ACP protocol version %d; the bridge speaks %d", resp.ProtocolVersion, acp.ProtocolVersionNumber))
	}
	if pe := resp.AgentCapabilities.PositionEncoding; pe != nil {
		k, ok := encoding.ParseKind(string(*pe))
		if ok && !slices.Contains(offered, k) {
			out = append(out, fmt.Sprintf("the agent chose position encoding %s, which the bridge did not offer", k))
		}
	}
	if resp.AgentInfo == nil {
		out = append(out, "the agent sent no agentInfo (name and version)")
	}
	return out
}

// collector keeps what the agent's events told: the last lines it wrote to stderr, the lines of
// its stdout that were not JSON, and its exit status.
type collector struct {
	mu         sync.Mutex
	stderr     []string
	lastStderr time.Time
	notJSON    int    // lines on the agent's stdout that were not JSON
	firstBad   string // the first of them
	exit       string
	exitOnce   sync.Once
	exited     chan struct{}
}

// stderrLines is how many of the agent's last stderr lines the report keeps.
const stderrLines = 20

func newCollector() *collector {
	return &collector{exited: make(chan struct{})}
}

// event is acpside.Options.Events.
func (c *collector) event(e acpside.Event) {
	switch e.Kind {
	case acpside.EventStderr:
		c.mu.Lock()
		c.stderr = append(c.stderr, e.Line)
		if len(c.stderr) > stderrLines {
			c.stderr = c.stderr[len(c.stderr)-stderrLines:]
		}
		c.lastStderr = e.At
		c.mu.Unlock()
	case acpside.EventFault:
		if e.Fault != acpside.FaultNotJSON {
			return
		}
		c.mu.Lock()
		if c.notJSON == 0 {
			c.firstBad = e.Line
		}
		c.notJSON++
		c.mu.Unlock()
	case acpside.EventExited:
		c.exitOnce.Do(func() {
			c.mu.Lock()
			c.exit = e.Status
			c.mu.Unlock()
			close(c.exited)
		})
	}
}

// waitExit waits up to d for the agent process to exit and returns its status, or "".
func (c *collector) waitExit(d time.Duration) string {
	select {
	case <-c.exited:
	case <-time.After(d):
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.exit
}

// settle gives the agent's last stderr lines, already written, a moment to be read: it returns
// once no line has come for 50 ms (counting from the call), and after 300 ms at most.
func (c *collector) settle() {
	start := time.Now()
	deadline := start.Add(300 * time.Millisecond)
	for time.Now().Before(deadline) {
		c.mu.Lock()
		last := c.lastStderr
		c.mu.Unlock()
		if last.Before(start) {
			last = start
		}
		if time.Since(last) > 50*time.Millisecond {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// stdoutWarning describes the lines of the agent's stdout that were not JSON, or is "".
func (c *collector) stdoutWarning() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch c.notJSON {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf("the agent wrote a line to stdout that is not JSON (ignored): %q", shorten(c.firstBad, 80))
	default:
		return fmt.Sprintf("the agent wrote %d lines to stdout that are not JSON (ignored), the first: %q", c.notJSON, shorten(c.firstBad, 80))
	}
}

func (c *collector) stderrTail() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string{}, c.stderr...)
}

// handler answers the agent's requests to the client during a check, as the bridge would without
// an editor: files are read from disk inside the workspace folder, confined as the bridge
// confines them (workspace.Check and ReadFile: links followed and checked, secrets kept back),
// never written; no document is open, none was recent, none is active.
func handler(files *workspace.Workspace) acp.MethodHandler {
	return func(_ context.Context, method string, params json.RawMessage) (any, *acp.RequestError) {
		switch method {
		case acp.ClientMethodFsReadTextFile:
			var p acp.ReadTextFileRequest
			if err := json.Unmarshal(params, &p); err != nil {
				return nil, acp.NewInvalidParams(map[string]any{"error": err.Error()})
			}
			c, err := files.Check(p.Path)
			if err != nil {
				return nil, acp.NewInvalidParams(map[string]any{"path": p.Path, "error": err.Error()})
			}
			b, err := files.ReadFile(c, maxRead)
			if err != nil {
				return nil, acp.NewInvalidParams(map[string]any{"path": p.Path, "error": err.Error()})
			}
			return acp.ReadTextFileResponse{Content: string(b)}, nil
		case acp.ClientMethodFsWriteTextFile:
			return nil, acp.NewInvalidParams(map[string]any{"error": "acp-lsp-bridge doctor writes no files"})
		case acpside.MethodOpenDocuments, acpside.MethodRecentDocuments:
			return map[string]any{"documents": []any{}}, nil
		case acpside.MethodActiveDocument:
			return map[string]any{"document": nil}, nil
		}
		return nil, acp.NewMethodNotFound(method)
	}
}

// maxRead bounds a file read for the agent, as the bridge bounds it.
const maxRead = 8 << 20
