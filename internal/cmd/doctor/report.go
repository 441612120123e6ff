// Package doctor checks that an agent can give the bridge Next Edit Suggestions: it starts the
// agent as the bridge does, with the bridge's own client options (acpside.ClientOptions), runs
// initialize, nes/start and nes/close, ends it, and reports what it found (Check), as a few lines
// for a person or one JSON object (docs/doctor.md). What happened to the agent (its stderr, its
// exit, the faults on its wire) comes from acpside's structured events, not from log text.
package doctor

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/acpside"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/lspside"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/workspace"
)

// FormatVersion is the version of the doctor --json format (its "protocolVersion"). It
// changes only for a change that is not additive; see docs/doctor.md.
const FormatVersion = 1

// The values of Report.Failure: stable, documented in docs/doctor.md.
const (
	failNotFound          = "not-found"
	failStart             = "start-failed"
	failInitializeTimeout = "initialize-timeout"
	failInitializeError   = "initialize-error"
	failNoNES             = "no-nes"
	failNESStartRefused   = "nes-start-refused"
	failNESStartTimeout   = "nes-start-timeout"
	failNESStartError     = "nes-start-error"
	failSessionRefused    = "session-new-refused"
	failSessionTimeout    = "session-new-timeout"
	failSessionError      = "session-new-error"
	failExited            = "agent-exited"
	failInterrupted       = "interrupted"
	failSample            = "sample-failed"
	failModelServer       = "model-server-unreachable"
	failModelKey          = "model-server-refused-key"
)

// Report is what doctor found; its JSON form is the stable --json output.
type Report struct {
	ProtocolVersion int           `json:"protocolVersion"`
	OK              bool          `json:"ok"`
	Reason          string        `json:"reason"`
	Failure         *string       `json:"failure"`
	Step            *string       `json:"step"`
	Bridge          bridgeReport  `json:"bridge"`
	Command         []string      `json:"command"`
	Workspace       string        `json:"workspace"`
	Agent           *agentReport  `json:"agent"`
	Error           *errorReport  `json:"error"`
	AgentExit       *string       `json:"agentExit"`
	AgentStderr     []string      `json:"agentStderr"`
	Timings         timingsReport `json:"timings"`
	Capabilities    capsReport    `json:"capabilities"`
	// Prompts is set for an agent without NES that the bridge asks through prompts.
	Prompts *promptsReport `json:"prompts"`
	// Sample is the sample suggestion asked with --prompt.
	Sample *sampleReport `json:"sample"`
	// Exclusions are the files of the workspace the agent never sees.
	Exclusions exclusionsReport `json:"exclusions"`
	// Copilot is set for GitHub Copilot's language server: its mode, its sign-in, what next.
	Copilot  *copilotReport `json:"copilot,omitempty"`
	Warnings []string       `json:"warnings"`
	// Advice is what to do, for people, when the model's server or the sample failed; null
	// otherwise.
	Advice *string `json:"advice"`
}

// exclusionsReport says what the exclusion globs keep from the agent in the workspace folder.
type exclusionsReport struct {
	Globs []string `json:"globs"`
	// HeldBack are the files and folders they match (a folder ends in "/"), each with its glob;
	// More is set when there may be more than listed.
	HeldBack []heldReport `json:"heldBack"`
	More     bool         `json:"more"`
}

type heldReport struct {
	Path string `json:"path"`
	Glob string `json:"glob"`
}

// maxHeldListed bounds the files held back that a report lists.
const maxHeldListed = 20

func describeExclusions(files *workspace.Workspace) exclusionsReport {
	r := exclusionsReport{Globs: files.Excludes().Globs(), HeldBack: []heldReport{}}
	if r.Globs == nil {
		r.Globs = []string{}
	}
	held, more := files.HeldBack(maxHeldListed)
	for _, h := range held {
		r.HeldBack = append(r.HeldBack, heldReport{Path: h.Rel, Glob: h.Glob})
	}
	r.More = more
	return r
}

// text is the report's line on exclusions: what is kept back here, by which glob.
func (e exclusionsReport) text() string {
	if len(e.Globs) == 0 {
		return "none: the agent may read every file of the workspace (--no-default-excludes and no --exclude)"
	}
	if len(e.HeldBack) == 0 {
		return fmt.Sprintf("no file here matches the %d exclusion globs (.env, keys, ...; --exclude adds)", len(e.Globs))
	}
	var parts []string
	for _, h := range e.HeldBack {
		parts = append(parts, fmt.Sprintf("%s (%s)", h.Path, h.Glob))
	}
	s := "kept from the agent: " + strings.Join(parts, ", ")
	if e.More {
		s += ", and more"
	}
	return s
}

// promptsReport says how an agent without NES is asked.
type promptsReport struct {
	// Mode is the session mode the bridge chose ("" when the agent lists none that only reads).
	Mode string `json:"mode"`
	Note string `json:"note"`
}

// sampleReport is one suggestion asked on a small sample document (--prompt).
type sampleReport struct {
	Ms          *float64 `json:"ms"`
	Suggestions int      `json:"suggestions"`
	// First is the first suggestion's first edit's new text, shortened.
	First *string `json:"first"`
	Error *string `json:"error"`
	// Quiet is why the agent answered with no suggestion, as it said (its result's
	// _meta["acp-lsp-bridge/quiet"]); null when it said nothing, or suggested something.
	Quiet *quietReport `json:"quiet"`
	// Reason is the reason the agent gave for a failure of the service behind it
	// (data.reason: "credentials_refused", "backend_error", ...), "" when it gave none.
	Reason string `json:"reason"`
	// BridgeTimeoutMs is how long the bridge waits for a suggestion, set by BridgeTimeoutFlag
	// (or initializationOptions.BridgeTimeoutKey); SlowerThanBridge says the sample took longer
	// (answered or not): in the editor it would come back empty.
	BridgeTimeoutMs   float64 `json:"bridgeTimeoutMs"`
	BridgeTimeoutFlag string  `json:"bridgeTimeoutFlag"`
	BridgeTimeoutKey  string  `json:"bridgeTimeoutKey"`
	SlowerThanBridge  bool    `json:"slowerThanBridge"`
}

// quietReport is an agent's reason for answering with no suggestion: the rule that kept its
// answer back ("undo", "no-change", ...) and its words.
type quietReport struct {
	Rule string `json:"rule"`
	Why  string `json:"why"`
}

type bridgeReport struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

type agentReport struct {
	ProtocolVersion        int          `json:"protocolVersion"`
	Info                   *infoReport  `json:"info"`
	PositionEncoding       string       `json:"positionEncoding"`
	PositionEncodingSource string       `json:"positionEncodingSource"` // "agent", "default" or "bridge"
	AuthMethods            []authReport `json:"authMethods"`
	// Model is what the bridge's own model agent says of its model: the prompt format it speaks
	// and why; null for any other agent.
	Model *modelReport `json:"model"`
	NES   *nesReport   `json:"nes"`
}

type modelReport struct {
	Name   string `json:"name"`
	Format string `json:"format"`
	Why    string `json:"why"`
	// Server is what serves the model, as the agent found it; KeyEnv the environment variable
	// its API key is read from (never the key), "" for none.
	Server string `json:"server"`
	KeyEnv string `json:"keyEnv"`
	// Billed says whether the agent takes each request to be billed to the user (it then asks
	// nothing ahead of the user: no prefetch, and the bridge does not ask ahead), and BilledWhy
	// why; null when the agent did not say.
	Billed    *bool  `json:"billed"`
	BilledWhy string `json:"billedWhy"`
	// ServerAnswers says whether the model's server answered the agent's question of what it
	// is, and ServerWhy why not; null for a hosted service, or an agent that did not say.
	ServerAnswers *bool  `json:"serverAnswers"`
	ServerWhy     string `json:"serverWhy"`
	// ServerRefusedKey says the server answered the agent's question by refusing the key (401
	// or 403), ServerWhy with what; every request would be refused alike.
	ServerRefusedKey bool `json:"serverRefusedKey"`
}

type infoReport struct {
	Name    string  `json:"name"`
	Title   *string `json:"title"`
	Version string  `json:"version"`
}

type authReport struct {
	ID          string  `json:"id"`
	Name        string  `json:"name"`
	Type        string  `json:"type"`
	Description *string `json:"description"`
	// Vars are an env_var method's variables; Args and Env what a terminal method runs the agent
	// with (its arguments, and what it sets in the environment). null for the other types.
	Vars []string          `json:"vars"`
	Args []string          `json:"args"`
	Env  map[string]string `json:"env"`
}

type nesReport struct {
	Events  eventsReport  `json:"events"`
	Context contextReport `json:"context"`
}

type eventsReport struct {
	DidOpen   bool    `json:"didOpen"`
	DidChange bool    `json:"didChange"`
	SyncKind  *string `json:"syncKind"`
	DidClose  bool    `json:"didClose"`
	DidSave   bool    `json:"didSave"`
	DidFocus  bool    `json:"didFocus"`
}

// contextReport mirrors agentCapabilities.nes.context: a key is present when the agent asked for
// it, with its maxCount when it gave one.
type contextReport struct {
	RecentFiles     *contextKey `json:"recentFiles,omitempty"`
	RelatedSnippets *contextKey `json:"relatedSnippets,omitempty"`
	EditHistory     *contextKey `json:"editHistory,omitempty"`
	UserActions     *contextKey `json:"userActions,omitempty"`
	OpenFiles       *contextKey `json:"openFiles,omitempty"`
	Diagnostics     *contextKey `json:"diagnostics,omitempty"`
}

type contextKey struct {
	MaxCount *int `json:"maxCount,omitempty"`
}

type errorReport struct {
	Method  string `json:"method"`
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data"`
}

type timingsReport struct {
	InitializeMs *float64 `json:"initializeMs"`
	NESStartMs   *float64 `json:"nesStartMs"`
	SessionNewMs *float64 `json:"sessionNewMs"`
	CloseMs      *float64 `json:"closeMs"`
}

// capsReport is what the bridge will offer with this agent: the editor surfaces, and what it
// will send the agent.
type capsReport struct {
	InlineCompletion  bool     `json:"inlineCompletion"`
	CopilotInlineEdit bool     `json:"copilotInlineEdit"`
	CodeAction        bool     `json:"codeAction"`
	Completion        bool     `json:"completion"`
	SuggestionKinds   []string `json:"suggestionKinds"`
	DocumentEvents    []string `json:"documentEvents"`
	DocumentSync      *string  `json:"documentSync"`
	SuggestContext    []string `json:"suggestContext"`
}

func newReport(cmd acpside.Command, workspace, version string) *Report {
	return &Report{
		ProtocolVersion: FormatVersion,
		Bridge:          bridgeReport{Name: "acp-lsp-bridge", Version: version},
		Command:         append([]string{cmd.Path}, hideKeyEnv(cmd.Args)...),
		Workspace:       workspace,
		AgentStderr:     []string{},
		Warnings:        []string{},
		Exclusions:      exclusionsReport{Globs: []string{}, HeldBack: []heldReport{}},
		Capabilities:    capsReport{SuggestionKinds: []string{}, DocumentEvents: []string{}, SuggestContext: []string{}},
	}
}

func (r *Report) fail(step, failure, reason string) {
	r.OK = false
	r.Step, r.Failure, r.Reason = &step, &failure, reason
}

// JSON is the --json output: one indented object and a newline.
func (r *Report) JSON() []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		// Only Error.Data comes from the agent, and it was decoded from JSON.
		return fmt.Appendf(nil, "{\"protocolVersion\":%d,\"ok\":false,\"reason\":%q}\n", FormatVersion, "cannot encode the report: "+err.Error())
	}
	return b.Bytes()
}

// Human is the short report; color marks the verdict.
func (r *Report) Human(color bool) string {
	var b strings.Builder
	line := func(label, value string) {
		if label == "" {
			fmt.Fprintf(&b, "%11s%s\n", "", value)
			return
		}
		fmt.Fprintf(&b, "%-11s%s\n", label, value)
	}
	line("command", shellJoin(r.Command))
	line("workspace", r.Workspace)
	line("secrets", r.Exclusions.text())
	if a := r.Agent; a != nil {
		line("agent", a.describe())
		if m := a.Model; m != nil {
			line("model", fmt.Sprintf("%s, asked in the %s prompt format (%s)", m.Name, m.Format, m.Why))
			if m.Server != "" {
				line("server", m.Server)
			}
			if m.KeyEnv != "" {
				line("key", "from the environment variable "+m.KeyEnv)
			}
			if m.Billed != nil {
				if *m.Billed {
					line("billed", "yes, each request is taken to be billed to you: "+m.BilledWhy+"; nothing is asked ahead of you (no prefetch, no asking ahead)")
				} else {
					line("billed", "no: "+m.BilledWhy+"; the bridge may ask ahead of you and prefetch")
				}
			}
		}
		line("protocol", fmt.Sprintf("ACP %d", a.ProtocolVersion))
		switch a.PositionEncodingSource {
		case "default":
			line("encoding", a.PositionEncoding+" (the protocol's default: the agent named none)")
		case "bridge":
			line("encoding", a.PositionEncoding+" (the bridge's own: the agent is asked through prompts, which carry text, not positions)")
		default:
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
	if p := r.Prompts; p != nil {
		mode := "the agent's own mode (it lists none that only reads; its permission requests are refused)"
		if p.Mode != "" {
			mode = "mode " + p.Mode
		}
		line("prompts", "asked through session/prompt, in "+mode)
		line("", p.Note)
	}
	if s := r.Sample; s != nil {
		switch {
		case s.Error != nil:
			line("sample", "no answer: "+*s.Error)
		case s.Suggestions == 0:
			line("sample", fmt.Sprintf("answered in %s with no suggestion: %s", formatMs(*s.Ms), s.Quiet.text()))
		default:
			line("sample", fmt.Sprintf("answered in %s: %d suggestion(s), the first writes %q", formatMs(*s.Ms), s.Suggestions, *s.First))
		}
		if s.SlowerThanBridge {
			limit := time.Duration(s.BridgeTimeoutMs) * time.Millisecond
			raise := lspside.RaisedTimeout(limit, time.Duration(*s.Ms*float64(time.Millisecond)))
			line("", fmt.Sprintf("slower than the bridge's %s (%v): in the editor it would come back empty. Run the bridge with %s %v, or set initializationOptions.%s = %d (milliseconds)",
				s.BridgeTimeoutFlag, limit, s.BridgeTimeoutFlag, raise, s.BridgeTimeoutKey, raise.Milliseconds()))
		}
	}
	if r.OK {
		line("surfaces", "inline completion, Copilot inline edits, code actions, completion items")
		line("", "(completion items by default only for editors without inline completion)")
		if r.Prompts != nil {
			line("", "the agent gets one prompt per suggestion: the lines around the cursor, your recent edits, excerpts of the other open files")
		} else if ev := r.Capabilities.DocumentEvents; len(ev) > 0 {
			line("", "the agent gets "+joinEvents(ev, r.Capabilities.DocumentSync)+" from the editor")
			if ctx := r.Capabilities.SuggestContext; len(ctx) > 0 {
				line("", "and with each nes/suggest: "+strings.Join(ctx, ", "))
			}
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
				line(label, shorten(l, 2000))
			}
		}
	}
	if r.Copilot != nil {
		r.Copilot.lines(line)
	}
	for _, w := range r.Warnings {
		line("warning", w)
	}
	if r.Advice != nil {
		line("fix", *r.Advice)
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

func (a *agentReport) describe() string {
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

func (a *agentReport) authText() string {
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

func (e eventsReport) text() string {
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
	return joinEvents(asked, e.SyncKind)
}

// joinEvents lists document events, didChange with its sync kind.
func joinEvents(events []string, sync *string) string {
	out := make([]string, len(events))
	for i, ev := range events {
		out[i] = ev
		if ev == "didChange" && sync != nil {
			out[i] += " (" + *sync + ")"
		}
	}
	return strings.Join(out, ", ")
}

func (c contextReport) keys() []string {
	var out []string
	for _, k := range []struct {
		key  *contextKey
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

func (c contextReport) text() string {
	keys := c.keys()
	if len(keys) == 0 {
		return "none"
	}
	return strings.Join(keys, ", ")
}

// text is the timings line of the report, empty when the agent never answered initialize.
func (t timingsReport) text() string {
	if t.InitializeMs == nil {
		return ""
	}
	parts := []string{"initialize " + formatMs(*t.InitializeMs) + " after process start"}
	if t.NESStartMs != nil {
		parts = append(parts, "nes/start "+formatMs(*t.NESStartMs))
	}
	if t.SessionNewMs != nil {
		parts = append(parts, "session/new "+formatMs(*t.SessionNewMs))
	}
	if t.CloseMs != nil {
		parts = append(parts, "close "+formatMs(*t.CloseMs))
	}
	return strings.Join(parts, ", ")
}

func formatMs(ms float64) string {
	switch {
	case ms < 10:
		return fmt.Sprintf("%.1f ms", ms)
	case ms < 10000:
		return fmt.Sprintf("%.0f ms", ms)
	default:
		return fmt.Sprintf("%.1f s", ms/1000)
	}
}

func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// shellJoin writes a command line as a POSIX shell would read it back.
func shellJoin(args []string) string {
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

func msSince(t time.Time) *float64 {
	ms := float64(time.Since(t).Microseconds()) / 1000
	ms = float64(int64(ms*10+0.5)) / 10
	return &ms
}

// hideKeyEnv is workspace.HideKeyEnv: a key given where its variable's name belongs is not shown.
func hideKeyEnv(args []string) []string { return workspace.HideKeyEnv(args) }

// text says why there was no suggestion, for the sample's line.
func (q *quietReport) text() string {
	if q == nil {
		return "the agent did not say why (it found no edit to make here)"
	}
	// The model agent's reasons often start with the rule's words ("no change: …").
	why := strings.TrimSuffix(q.Why, ".")
	for _, lead := range []string{q.Rule, strings.ReplaceAll(q.Rule, "-", " ")} {
		if rest, ok := strings.CutPrefix(why, lead); ok && (rest == "" || strings.HasPrefix(rest, ": ")) {
			why = strings.TrimPrefix(rest, ": ")
			break
		}
	}
	if q.Rule == "no-change" {
		if why == "" {
			return "the model's answer changed nothing"
		}
		return "the model's answer changed nothing (" + why + ")"
	}
	if why == "" {
		return "the agent kept its answer back (" + q.Rule + ")"
	}
	return "the agent kept its answer back (" + q.Rule + ": " + why + ")"
}
