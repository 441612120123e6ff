package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	acp "github.com/coder/acp-go-sdk"
	"github.com/rs/zerolog"
	"go.lsp.dev/uri"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/acpside"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
)

// doctorFormatVersion is the version of the doctor --json format (its "protocolVersion"). It
// changes only for a change that is not additive; see docs/doctor.md.
const doctorFormatVersion = 1

const doctorUsage = `acp-lsp-bridge doctor: check that an agent can give the bridge Next Edit Suggestions.

Usage:
  acp-lsp-bridge doctor [--json] [--timeout 20s] [--verbose] -- AGENT [ARGS...]

doctor starts AGENT exactly as the bridge does (a child process in its own process group, never
through a shell), runs ACP initialize and nes/start with the current directory as the workspace,
then nes/close, ends the agent, and reports:
  - the ACP protocol version, the agent's name, title and version, and its auth methods;
  - the document events it asked for (didOpen, didChange and its sync kind, didClose, didSave,
    didFocus) and the nes/suggest context keys (with maxCount);
  - the negotiated position encoding, and how long initialize and nes/start took;
  - the editor surfaces the bridge will offer with it (inline completion, Copilot inline edits,
    code actions, completion items).

Exit status: 0 when the agent can do Next Edit Suggestions; 1 when it cannot, and the last line
says why (the command was not found or could not start, no answer to initialize or nes/start in
time, no nes capability, nes/start refused, the agent exited); 2 for a usage error.

The report goes to stdout: a few lines, or with --json one JSON object (every field is described
in docs/doctor.md). Logs go to stderr, and only with --verbose.

Flags:
`

// doctorOptions are the doctor subcommand's arguments.
type doctorOptions struct {
	json    bool
	verbose bool
	timeout time.Duration
	command acpside.Command
}

func parseDoctorArgs(args []string, stdout, stderr io.Writer) (opts doctorOptions, code int, done bool) {
	var agentArgs []string
	dash := false
	for i, a := range args {
		if a == "--" {
			agentArgs, args, dash = args[i+1:], args[:i], true
			break
		}
	}
	fs := flag.NewFlagSet("acp-lsp-bridge doctor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.BoolVar(&opts.json, "json", false, "print one JSON object instead of the report (fields in docs/doctor.md)")
	fs.DurationVar(&opts.timeout, "timeout", 20*time.Second, "how long to wait for each of the agent's answers to initialize and nes/start")
	fs.BoolVar(&opts.verbose, "verbose", false, "log the agent's start, its stderr and its exit, and the ACP SDK's messages, to stderr")
	fs.Usage = func() {} // the flag package calls it on every error; --help is answered below
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, doctorUsage)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return opts, 0, true
		}
		fmt.Fprintln(stderr, "usage: acp-lsp-bridge doctor [--json] [--timeout 20s] [--verbose] -- AGENT [ARGS...] (see --help)")
		return opts, 2, true
	}
	if !dash {
		// Without "--", the first argument that is not a flag starts the agent command.
		agentArgs = fs.Args()
	} else if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "acp-lsp-bridge doctor: unexpected argument %q before \"--\"\n", fs.Arg(0))
		return opts, 2, true
	}
	if len(agentArgs) == 0 {
		fmt.Fprintln(stderr, "acp-lsp-bridge doctor: name the agent to check: acp-lsp-bridge doctor -- AGENT [ARGS...]")
		return opts, 2, true
	}
	if opts.timeout <= 0 {
		fmt.Fprintf(stderr, "acp-lsp-bridge doctor: --timeout %v: must be more than 0\n", opts.timeout)
		return opts, 2, true
	}
	opts.command = acpside.Command{Path: agentArgs[0], Args: agentArgs[1:]}
	return opts, 0, false
}

// runDoctor is the doctor subcommand.
func runDoctor(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	opts, code, done := parseDoctorArgs(args, stdout, stderr)
	if done {
		return code
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	var forward io.Writer
	if opts.verbose {
		forward = zerolog.ConsoleWriter{Out: stderr, NoColor: !isTerminal(stderr), TimeFormat: "15:04:05.000"}
	}
	tap := newDoctorLogTap(forward)
	zerolog.TimeFieldFormat = time.RFC3339Nano
	log := zerolog.New(tap).Level(zerolog.DebugLevel).With().Timestamp().Logger()
	// The ACP SDK logs through slog's default logger: never to stdout, and only with --verbose.
	slog.SetDefault(slog.New(zerolog.NewSlogHandler(log.With().Str("dir", "acp sdk").Logger())))

	dir, err := os.Getwd()
	if err != nil {
		fmt.Fprintf(stderr, "acp-lsp-bridge doctor: %v\n", err)
		return 2
	}
	opts.command.Dir = dir
	cmd := opts.command
	rep := doctorCheck(ctx, doctorRun{
		command: cmd,
		dir:     dir,
		timeout: opts.timeout,
		log:     log,
		tap:     tap,
		start:   func(o acpside.Options) (*acpside.Agent, error) { return acpside.Start(cmd, o) },
	})
	if opts.json {
		_, err = stdout.Write(rep.JSON())
	} else {
		_, err = io.WriteString(stdout, rep.Human(isTerminal(stdout) && os.Getenv("NO_COLOR") == ""))
	}
	if err != nil {
		fmt.Fprintf(stderr, "acp-lsp-bridge doctor: %v\n", err)
	}
	if !rep.OK {
		return 1
	}
	return 0
}

// The values of doctorReport.Failure: stable, documented in docs/doctor.md.
const (
	failNotFound          = "not-found"
	failStart             = "start-failed"
	failInitializeTimeout = "initialize-timeout"
	failInitializeError   = "initialize-error"
	failNoNES             = "no-nes"
	failNESStartRefused   = "nes-start-refused"
	failNESStartTimeout   = "nes-start-timeout"
	failNESStartError     = "nes-start-error"
	failExited            = "agent-exited"
	failInterrupted       = "interrupted"
)

// doctorReport is what doctor found; its JSON form is the stable --json output.
type doctorReport struct {
	ProtocolVersion int           `json:"protocolVersion"`
	OK              bool          `json:"ok"`
	Reason          string        `json:"reason"`
	Failure         *string       `json:"failure"`
	Step            *string       `json:"step"`
	Bridge          doctorBridge  `json:"bridge"`
	Command         []string      `json:"command"`
	Workspace       string        `json:"workspace"`
	Agent           *doctorAgent  `json:"agent"`
	Error           *doctorError  `json:"error"`
	AgentExit       *string       `json:"agentExit"`
	AgentStderr     []string      `json:"agentStderr"`
	Timings         doctorTimings `json:"timings"`
	Capabilities    doctorCaps    `json:"capabilities"`
	Warnings        []string      `json:"warnings"`
}

type doctorBridge struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

type doctorAgent struct {
	ProtocolVersion        int          `json:"protocolVersion"`
	Info                   *doctorInfo  `json:"info"`
	PositionEncoding       string       `json:"positionEncoding"`
	PositionEncodingSource string       `json:"positionEncodingSource"` // "agent" or "default"
	AuthMethods            []doctorAuth `json:"authMethods"`
	NES                    *doctorNES   `json:"nes"`
}

type doctorInfo struct {
	Name    string  `json:"name"`
	Title   *string `json:"title"`
	Version string  `json:"version"`
}

type doctorAuth struct {
	ID          string  `json:"id"`
	Name        string  `json:"name"`
	Type        string  `json:"type"`
	Description *string `json:"description"`
}

type doctorNES struct {
	Events  doctorEvents  `json:"events"`
	Context doctorContext `json:"context"`
}

type doctorEvents struct {
	DidOpen   bool    `json:"didOpen"`
	DidChange bool    `json:"didChange"`
	SyncKind  *string `json:"syncKind"`
	DidClose  bool    `json:"didClose"`
	DidSave   bool    `json:"didSave"`
	DidFocus  bool    `json:"didFocus"`
}

// doctorContext mirrors agentCapabilities.nes.context: a key is present when the agent asked for
// it, with its maxCount when it gave one.
type doctorContext struct {
	RecentFiles     *doctorContextKey `json:"recentFiles,omitempty"`
	RelatedSnippets *doctorContextKey `json:"relatedSnippets,omitempty"`
	EditHistory     *doctorContextKey `json:"editHistory,omitempty"`
	UserActions     *doctorContextKey `json:"userActions,omitempty"`
	OpenFiles       *doctorContextKey `json:"openFiles,omitempty"`
	Diagnostics     *doctorContextKey `json:"diagnostics,omitempty"`
}

type doctorContextKey struct {
	MaxCount *int `json:"maxCount,omitempty"`
}

type doctorError struct {
	Method  string `json:"method"`
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data"`
}

type doctorTimings struct {
	InitializeMs *float64 `json:"initializeMs"`
	NESStartMs   *float64 `json:"nesStartMs"`
	CloseMs      *float64 `json:"closeMs"`
}

// doctorCaps is what the bridge will offer with this agent: the editor surfaces, and what it
// will send the agent.
type doctorCaps struct {
	InlineCompletion  bool     `json:"inlineCompletion"`
	CopilotInlineEdit bool     `json:"copilotInlineEdit"`
	CodeAction        bool     `json:"codeAction"`
	Completion        bool     `json:"completion"`
	SuggestionKinds   []string `json:"suggestionKinds"`
	DocumentEvents    []string `json:"documentEvents"`
	DocumentSync      *string  `json:"documentSync"`
	SuggestContext    []string `json:"suggestContext"`
}

func newDoctorReport(cmd acpside.Command, workspace string) *doctorReport {
	return &doctorReport{
		ProtocolVersion: doctorFormatVersion,
		Bridge:          doctorBridge{Name: "acp-lsp-bridge", Version: version},
		Command:         append([]string{cmd.Path}, cmd.Args...),
		Workspace:       workspace,
		AgentStderr:     []string{},
		Warnings:        []string{},
		Capabilities:    doctorCaps{SuggestionKinds: []string{}, DocumentEvents: []string{}, SuggestContext: []string{}},
	}
}

func (r *doctorReport) fail(step, failure, reason string) {
	r.OK = false
	r.Step, r.Failure, r.Reason = &step, &failure, reason
}

// JSON is the --json output: one indented object and a newline.
func (r *doctorReport) JSON() []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		// Only Error.Data comes from the agent, and it was decoded from JSON.
		return fmt.Appendf(nil, "{\"protocolVersion\":%d,\"ok\":false,\"reason\":%q}\n", doctorFormatVersion, "cannot encode the report: "+err.Error())
	}
	return b.Bytes()
}

// Human is the short report; color marks the verdict.
func (r *doctorReport) Human(color bool) string {
	var b strings.Builder
	line := func(label, value string) {
		if label == "" {
			fmt.Fprintf(&b, "%11s%s\n", "", value)
			return
		}
		fmt.Fprintf(&b, "%-11s%s\n", label, value)
	}
	line("command", doctorShellJoin(r.Command))
	line("workspace", r.Workspace)
	if a := r.Agent; a != nil {
		line("agent", a.describe())
		line("protocol", fmt.Sprintf("ACP %d", a.ProtocolVersion))
		if a.PositionEncodingSource == "default" {
			line("encoding", a.PositionEncoding+" (the protocol's default: the agent named none)")
		} else {
			line("encoding", a.PositionEncoding+" (the agent's choice)")
		}
		line("auth", a.authText())
		if a.NES == nil {
			line("nes", "not offered (no agentCapabilities.nes)")
		} else {
			line("events", a.NES.Events.text())
			line("context", a.NES.Context.text())
		}
	}
	if t := r.Timings.text(); t != "" {
		line("timings", t)
	}
	if r.OK {
		line("surfaces", "inline completion, Copilot inline edits, code actions, completion items")
		line("", "(completion items by default only for editors without inline completion)")
		if ev := r.Capabilities.DocumentEvents; len(ev) > 0 {
			s := "the agent gets " + doctorJoinEvents(ev, r.Capabilities.DocumentSync) + " from the editor"
			s = strings.Replace(s, "didFocus", "didFocus (Copilot-style clients only)", 1)
			line("", s)
		} else {
			line("", "the agent gets no document events (it asked for none)")
		}
	} else {
		line("surfaces", "none: the bridge would tell the editor once and answer with empty results")
		if n := len(r.AgentStderr); n > 0 {
			tail := r.AgentStderr[max(0, n-5):]
			for i, l := range tail {
				label := ""
				if i == 0 {
					label = "stderr"
				}
				// Whole: the agent's last words usually say what to do (up to a bound, for an
				// agent that writes a whole file on one line).
				line(label, doctorShorten(l, 2000))
			}
		}
	}
	for _, w := range r.Warnings {
		line("warning", w)
	}
	verdict, code := "OK", "32"
	if !r.OK {
		verdict, code = "FAIL", "31"
	}
	pad := strings.Repeat(" ", 11-len(verdict))
	if color {
		verdict = "\x1b[1;" + code + "m" + verdict + "\x1b[0m"
	}
	b.WriteString(verdict + pad + r.Reason + "\n")
	return b.String()
}

func (a *doctorAgent) describe() string {
	if a.Info == nil {
		return "(no agentInfo)"
	}
	s := a.Info.Name
	if s == "" {
		s = "(no name)"
	}
	if a.Info.Version != "" {
		s += " " + a.Info.Version
	}
	if a.Info.Title != nil && *a.Info.Title != "" && *a.Info.Title != a.Info.Name {
		s += fmt.Sprintf(" (%q)", *a.Info.Title)
	}
	return s
}

func (a *doctorAgent) authText() string {
	if len(a.AuthMethods) == 0 {
		return "none"
	}
	parts := make([]string, len(a.AuthMethods))
	for i, m := range a.AuthMethods {
		name := m.Name
		if name == "" {
			name = m.ID
		}
		parts[i] = fmt.Sprintf("%s [%s, %s]", name, m.ID, m.Type)
	}
	return strings.Join(parts, ", ")
}

func (e doctorEvents) text() string {
	var asked []string
	for _, ev := range []struct {
		on   bool
		name string
	}{{e.DidOpen, "didOpen"}, {e.DidChange, "didChange"}, {e.DidClose, "didClose"}, {e.DidSave, "didSave"}, {e.DidFocus, "didFocus"}} {
		if ev.on {
			asked = append(asked, ev.name)
		}
	}
	if len(asked) == 0 {
		return "none"
	}
	return doctorJoinEvents(asked, e.SyncKind)
}

// doctorJoinEvents lists document events, didChange with its sync kind.
func doctorJoinEvents(events []string, sync *string) string {
	out := make([]string, len(events))
	for i, ev := range events {
		out[i] = ev
		if ev == "didChange" && sync != nil {
			out[i] += " (" + *sync + ")"
		}
	}
	return strings.Join(out, ", ")
}

func (c doctorContext) keys() []string {
	var out []string
	for _, k := range []struct {
		key  *doctorContextKey
		name string
	}{{c.RecentFiles, "recentFiles"}, {c.RelatedSnippets, "relatedSnippets"}, {c.EditHistory, "editHistory"},
		{c.UserActions, "userActions"}, {c.OpenFiles, "openFiles"}, {c.Diagnostics, "diagnostics"}} {
		if k.key == nil {
			continue
		}
		s := k.name
		if k.key.MaxCount != nil {
			s += fmt.Sprintf(" (maxCount %d)", *k.key.MaxCount)
		}
		out = append(out, s)
	}
	return out
}

func (c doctorContext) text() string {
	keys := c.keys()
	if len(keys) == 0 {
		return "none"
	}
	s := strings.Join(keys, ", ")
	switch {
	case c.Diagnostics == nil:
		s += " (the bridge sends none of these)"
	case len(keys) > 1:
		s += " (the bridge sends only diagnostics)"
	}
	return s
}

// text is the timings line of the report, empty when the agent never answered initialize.
func (t doctorTimings) text() string {
	if t.InitializeMs == nil {
		return ""
	}
	parts := []string{"initialize " + doctorFormatMs(*t.InitializeMs) + " after process start"}
	if t.NESStartMs != nil {
		parts = append(parts, "nes/start "+doctorFormatMs(*t.NESStartMs))
	}
	if t.CloseMs != nil {
		parts = append(parts, "close "+doctorFormatMs(*t.CloseMs))
	}
	return strings.Join(parts, ", ")
}

func doctorFormatMs(ms float64) string {
	switch {
	case ms < 10:
		return fmt.Sprintf("%.1f ms", ms)
	case ms < 10000:
		return fmt.Sprintf("%.0f ms", ms)
	default:
		return fmt.Sprintf("%.1f s", ms/1000)
	}
}

func doctorShorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// doctorShellJoin writes a command line as a POSIX shell would read it back.
func doctorShellJoin(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a != "" && strings.IndexFunc(a, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@+,%", r))
		}) < 0 {
			out[i] = a
			continue
		}
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}

func doctorMsSince(t time.Time) *float64 {
	ms := float64(time.Since(t).Microseconds()) / 1000
	ms = float64(int64(ms*10+0.5)) / 10
	return &ms
}

// doctorRun is one check.
type doctorRun struct {
	command acpside.Command
	dir     string // the workspace folder
	timeout time.Duration
	log     zerolog.Logger
	tap     *doctorLogTap // nil when the agent is not a process (tests)
	start   func(acpside.Options) (*acpside.Agent, error)
}

// doctorAgentOptions are the options the bridge starts its agent with (lspside.connectAgent).
func doctorAgentOptions(log zerolog.Logger) acpside.Options {
	return acpside.Options{
		Log:           log,
		ClientName:    "acp-lsp-bridge",
		ClientVersion: version,
		Encodings:     []encoding.Kind{encoding.UTF8, encoding.UTF32, encoding.UTF16},
		Kinds:         acpside.ClientKinds{Jump: true, Rename: true, SearchAndReplace: true},
	}
}

// doctorCheck starts the agent, runs initialize, nes/start and nes/close, ends it, and reports.
func doctorCheck(ctx context.Context, run doctorRun) *doctorReport {
	workspace := string(uri.File(run.dir))
	rep := newDoctorReport(run.command, workspace)
	opts := doctorAgentOptions(run.log)

	t0 := time.Now()
	agent, err := run.start(opts)
	if err != nil {
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
			where := "on $PATH"
			if strings.ContainsRune(run.command.Path, '/') {
				where = "at that path"
			}
			rep.fail("start", failNotFound, fmt.Sprintf("cannot start the agent: command %q not found (no executable %s)", run.command.Path, where))
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
		rep.Timings.CloseMs = doctorMsSince(tc)
		if run.tap != nil {
			run.tap.settle()
			rep.AgentStderr = run.tap.stderrTail()
			if w := run.tap.stdoutWarning(); w != "" {
				rep.Warnings = append(rep.Warnings, w)
			}
		}
	}
	defer finish()

	// initialize
	ictx, cancel := context.WithTimeout(ctx, run.timeout)
	resp, err := agent.Initialize(ictx)
	if resp != nil {
		rep.Timings.InitializeMs = doctorMsSince(t0)
		rep.Agent = doctorDescribeAgent(resp, agent.Encoding())
		rep.Warnings = append(rep.Warnings, doctorWarnings(resp, opts.Encodings)...)
	}
	if errors.Is(err, acpside.ErrNoNES) {
		cancel()
		rep.fail("initialize", failNoNES, "the agent has no nes capability (agentCapabilities.nes): it does not offer Next Edit Suggestions")
		return rep
	}
	if err != nil {
		rep.classify(ctx, ictx, run, agent, "initialize", err, finish)
		cancel()
		return rep
	}
	cancel()

	// nes/start
	name := filepath.Base(run.dir)
	req := acp.UnstableStartNesRequest{
		WorkspaceUri:     &workspace,
		WorkspaceFolders: []acp.UnstableWorkspaceFolder{{Uri: workspace, Name: name}},
	}
	sctx, cancel := context.WithTimeout(ctx, run.timeout)
	ts := time.Now()
	err = agent.StartNES(sctx, req)
	if err == nil || doctorAgentError(err) != nil {
		rep.Timings.NESStartMs = doctorMsSince(ts)
	}
	if err != nil {
		rep.classify(ctx, sctx, run, agent, "nes/start", err, finish)
		cancel()
		return rep
	}
	cancel()

	rep.OK = true
	rep.Reason = "the agent can do Next Edit Suggestions"
	ev := agent.Events()
	rep.Capabilities = doctorCaps{
		InlineCompletion:  true,
		CopilotInlineEdit: true,
		CodeAction:        true,
		Completion:        true,
		SuggestionKinds:   []string{"edit", "jump", "rename", "searchAndReplace"},
		DocumentEvents:    []string{},
		SuggestContext:    []string{},
	}
	for _, e := range []struct {
		on   bool
		name string
	}{{ev.DidOpen, "didOpen"}, {ev.DidChange, "didChange"}, {ev.DidClose, "didClose"}, {ev.DidSave, "didSave"}, {ev.DidFocus, "didFocus"}} {
		if e.on {
			rep.Capabilities.DocumentEvents = append(rep.Capabilities.DocumentEvents, e.name)
		}
	}
	if ev.DidChange {
		sync := "incremental"
		if ev.FullSync {
			sync = "full"
		}
		rep.Capabilities.DocumentSync = &sync
	}
	if agent.Context().Diagnostics {
		rep.Capabilities.SuggestContext = append(rep.Capabilities.SuggestContext, "diagnostics")
	}
	finish()
	return rep
}

// classify explains why a step failed: an interruption, the agent's error answer, the agent
// exiting, a timeout, or an answer the bridge cannot use.
func (r *doctorReport) classify(ctx, stepCtx context.Context, run doctorRun, agent *acpside.Agent, step string, err error, finish func()) {
	failures := map[string][3]string{ // step → error answer, timeout, other
		"initialize": {failInitializeError, failInitializeTimeout, failInitializeError},
		"nes/start":  {failNESStartRefused, failNESStartTimeout, failNESStartError},
	}[step]
	if ctx.Err() != nil {
		r.fail(step, failInterrupted, "interrupted while waiting for the agent's answer to "+step)
		return
	}
	if re := doctorAgentError(err); re != nil {
		r.Error = &doctorError{Method: step, Code: re.Code, Message: re.Message, Data: re.Data}
		reason := fmt.Sprintf("the agent refused %s: %d %s", step, re.Code, doctorShorten(strings.TrimSpace(re.Message), 120))
		if step == "initialize" {
			reason = fmt.Sprintf("the agent answered initialize with an error: %d %s", re.Code, doctorShorten(strings.TrimSpace(re.Message), 120))
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
		status := ""
		if run.tap != nil {
			status = run.tap.waitExit(500 * time.Millisecond)
		}
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
		r.fail(step, failures[1], fmt.Sprintf("the agent did not answer %s within %v", step, run.timeout))
		return
	}
	r.fail(step, failures[2], err.Error())
}

// doctorAgentError is the JSON-RPC error the agent answered with, or nil when err is not one:
// the Go SDK reports a timeout, a cancellation, a closed connection and a request it could not
// write (the agent exited before reading it, as gemini without --acp does) as errors of its own.
func doctorAgentError(err error) *acp.RequestError {
	var re *acp.RequestError
	if !errors.As(err, &re) {
		return nil
	}
	if re.Code == -32603 || re.Code == -32800 {
		if m, ok := re.Data.(map[string]any); ok && len(m) == 1 {
			if s, ok := m["error"].(string); ok && (strings.HasPrefix(s, "peer disconnected") ||
				s == context.DeadlineExceeded.Error() || s == context.Canceled.Error() || doctorWriteFailed(s)) {
				return nil
			}
		}
	}
	return re
}

// doctorWriteFailed reports the SDK's text for a request it could not write to the agent's stdin.
func doctorWriteFailed(s string) bool {
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

func doctorDescribeAgent(resp *acp.InitializeResponse, enc encoding.Kind) *doctorAgent {
	a := &doctorAgent{
		ProtocolVersion:        int(resp.ProtocolVersion),
		PositionEncoding:       enc.String(),
		PositionEncodingSource: "agent",
		AuthMethods:            []doctorAuth{},
	}
	if resp.AgentCapabilities.PositionEncoding == nil {
		a.PositionEncodingSource = "default"
	}
	if info := resp.AgentInfo; info != nil {
		a.Info = &doctorInfo{Name: info.Name, Title: info.Title, Version: info.Version}
	}
	for _, m := range resp.AuthMethods {
		switch {
		case m.Agent != nil:
			a.AuthMethods = append(a.AuthMethods, doctorAuth{ID: m.Agent.Id, Name: m.Agent.Name, Type: "agent", Description: m.Agent.Description})
		case m.EnvVar != nil:
			a.AuthMethods = append(a.AuthMethods, doctorAuth{ID: m.EnvVar.Id, Name: m.EnvVar.Name, Type: "env_var", Description: m.EnvVar.Description})
		case m.Terminal != nil:
			a.AuthMethods = append(a.AuthMethods, doctorAuth{ID: m.Terminal.Id, Name: m.Terminal.Name, Type: "terminal", Description: m.Terminal.Description})
		}
	}
	nes := resp.AgentCapabilities.Nes
	if nes == nil {
		return a
	}
	a.NES = &doctorNES{}
	if ev := nes.Events; ev != nil && ev.Document != nil {
		d := ev.Document
		a.NES.Events = doctorEvents{
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
		key := func(present bool, maxCount *int) *doctorContextKey {
			if !present {
				return nil
			}
			return &doctorContextKey{MaxCount: maxCount}
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
		a.NES.Context = doctorContext{
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

func doctorWarnings(resp *acp.InitializeResponse, offered []encoding.Kind) []string {
	var out []string
	if int(resp.ProtocolVersion) != int(acp.ProtocolVersionNumber) {
		out = append(out, fmt.Sprintf("the agent answered ACP protocol version %d; the bridge speaks %d", resp.ProtocolVersion, acp.ProtocolVersionNumber))
	}
	if pe := resp.AgentCapabilities.PositionEncoding; pe != nil {
		k, ok := encoding.ParseKind(string(*pe))
		if ok && !doctorOffered(offered, k) {
			out = append(out, fmt.Sprintf("the agent chose position encoding %s, which the bridge did not offer", k))
		}
	}
	if resp.AgentInfo == nil {
		out = append(out, "the agent sent no agentInfo (name and version)")
	}
	return out
}

func doctorOffered(ks []encoding.Kind, k encoding.Kind) bool {
	for _, o := range ks {
		if o == k {
			return true
		}
	}
	return false
}

// doctorLogTap receives the bridge's log lines (zerolog JSON, one per Write). It keeps the last
// lines the agent wrote to stderr and the agent's exit status, and passes everything on to
// forward when that is set (--verbose).
type doctorLogTap struct {
	forward io.Writer

	mu         sync.Mutex
	stderr     []string
	lastStderr time.Time
	notJSON    int    // lines on the agent's stdout that were not JSON
	firstBad   string // the first of them
	exit       string
	exitOnce   sync.Once
	exited     chan struct{}
}

const doctorStderrLines = 20

func newDoctorLogTap(forward io.Writer) *doctorLogTap {
	return &doctorLogTap{forward: forward, exited: make(chan struct{})}
}

func (t *doctorLogTap) Write(p []byte) (int, error) {
	var e struct {
		Dir     string `json:"dir"`
		Message string `json:"message"`
		Status  string `json:"status"`
		Line    string `json:"line"`
		Fault   string `json:"fault"`
		Repeats int    `json:"repeats"`
	}
	if json.Unmarshal(p, &e) == nil {
		switch {
		case e.Dir == "agent stderr":
			t.mu.Lock()
			t.stderr = append(t.stderr, e.Message)
			if len(t.stderr) > doctorStderrLines {
				t.stderr = t.stderr[len(t.stderr)-doctorStderrLines:]
			}
			t.lastStderr = time.Now()
			t.mu.Unlock()
		case e.Dir == "agent→bridge" && strings.Contains(e.Message, "not JSON"):
			t.mu.Lock()
			switch {
			case e.Repeats > 0: // the agent side logs a fault once, then counts it
				t.notJSON += e.Repeats
			default:
				if t.notJSON == 0 {
					t.firstBad = e.Line
				}
				t.notJSON++
			}
			t.mu.Unlock()
		case e.Message == "agent exited" && e.Status != "":
			t.exitOnce.Do(func() {
				t.mu.Lock()
				t.exit = e.Status
				t.mu.Unlock()
				close(t.exited)
			})
		}
	}
	if t.forward != nil {
		_, _ = t.forward.Write(p)
	}
	return len(p), nil
}

// waitExit waits up to d for the agent process to exit and returns its status, or "".
func (t *doctorLogTap) waitExit(d time.Duration) string {
	select {
	case <-t.exited:
	case <-time.After(d):
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.exit
}

// settle gives the agent's last stderr lines, already written, a moment to be read: it returns
// once no line has come for 50 ms (counting from the call), and after 300 ms at most.
func (t *doctorLogTap) settle() {
	start := time.Now()
	deadline := start.Add(300 * time.Millisecond)
	for time.Now().Before(deadline) {
		t.mu.Lock()
		last := t.lastStderr
		t.mu.Unlock()
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
func (t *doctorLogTap) stdoutWarning() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch t.notJSON {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf("the agent wrote a line to stdout that is not JSON (ignored): %q", doctorShorten(t.firstBad, 80))
	default:
		return fmt.Sprintf("the agent wrote %d lines to stdout that are not JSON (ignored), the first: %q", t.notJSON, doctorShorten(t.firstBad, 80))
	}
}

func (t *doctorLogTap) stderrTail() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string{}, t.stderr...)
}
