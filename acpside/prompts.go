package acpside

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	acp "github.com/coder/acp-go-sdk"
	"github.com/rs/zerolog"
)

// PromptOptions turn on suggestions through prompts for an agent without Next Edit Suggestions
// (every coding agent today: they offer sessions). The bridge keeps such an agent, opens one
// session (session/new) and asks each suggestion with a session/prompt. In front of it runs an
// NES agent of the bridge's own, in-process (Serve; internal/promptagent: the model agent's prompt
// and reading of the answer, the agent as the model), so that the rest of the bridge speaks NES to
// it as to any other: documents, history, ids, accept and reject.
//
// The agent never changes a file through the bridge: a read-only mode is chosen when it offers
// one, every permission request is refused, a proposed edit (a tool call's diff, a
// fs/write_text_file) becomes the suggestion instead of being written, and terminals are refused.
type PromptOptions struct {
	// Workspace is the folder of the session (its cwd) and the one watched for files the agent
	// changes on disk by itself; "" when there is none (the process's directory is the cwd).
	Workspace func() string
	// Turns is how many prompts a session takes before the next prompt opens a new one, so that
	// its history stays small; 0 means DefaultPromptTurns.
	Turns int
	// Serve runs the in-process NES agent on in/out until in ends, asking ask for each
	// suggestion (required).
	Serve func(ask Ask, in io.Reader, out io.Writer)
	// Tainted is called, once, when the agent changed a file of the workspace on disk during a
	// prompt: prompts to this agent stop until it is started again.
	Tainted func(path string)
	// Saved, when set, reports a file the editor holds open whose text on disk is the editor's
	// (the editor saved it, by hand or by auto-save, while the agent was prompted): not the
	// agent's doing.
	Saved func(path string) bool
}

// DefaultPromptTurns is PromptOptions.Turns' default.
const DefaultPromptTurns = 20

// ErrPromptsStopped reports a prompt not sent because the agent wrote a file by itself.
var ErrPromptsStopped = errors.New("prompts to this agent are stopped: it changed a file on disk by itself during a prompt; restart the agent to ask it again")

// Ask sends one prompt to the agent's session and returns its answer.
type Ask func(ctx context.Context, text string) (PromptAnswer, error)

// PromptAnswer is what the agent answered a prompt: its message text, and the edits it proposed
// instead of making them (tool calls' diffs, permission requests, fs/write_text_file).
type PromptAnswer struct {
	Text    string
	Changes []ProposedChange
}

// ProposedChange is an edit the agent proposed to a file: OldText replaced by NewText, or, when
// OldText is nil, NewText as the file's whole new text.
type ProposedChange struct {
	Path    string
	OldText *string
	NewText string
}

// prompter asks an agent's session for suggestions: the Ask of the in-process NES agent.
type prompter struct {
	a    *Agent
	opts PromptOptions
	log  zerolog.Logger

	slot chan struct{} // one prompt at a time in the session

	mu      sync.Mutex
	session acp.SessionId
	mode    string // the mode chosen, for the log
	turns   int    // prompts in this session
	cur     *promptRun
	tainted string
	// failure is why the last prompt failed, as it came (the agent's auth_required answer:
	// claude-agent-acp opens sessions before sign-in and refuses the first prompt; or
	// ErrPromptsStopped): the in-process agent passes it on as text, so Suggest returns this
	// instead, and the bridge can tell a sign-in from a stop.
	failure error
}

// promptRun is one prompt in flight and what the agent answered so far.
type promptRun struct {
	session acp.SessionId
	cancel  context.CancelFunc
	text    strings.Builder
	changes []ProposedChange
}

func newPrompter(a *Agent, opts PromptOptions) *prompter {
	if opts.Turns <= 0 {
		opts.Turns = DefaultPromptTurns
	}
	if opts.Workspace == nil {
		opts.Workspace = func() string { return "" }
	}
	return &prompter{a: a, opts: opts, log: a.log.With().Str("via", "prompts").Logger(), slot: make(chan struct{}, 1)}
}

// startFront starts the in-process NES agent over p and connects to it; the agent's connection
// (a.front) then carries every NES message.
func (a *Agent) startFront(p *prompter) error {
	if p.opts.Serve == nil {
		return errors.New("prompts: no in-process agent to serve them (PromptOptions.Serve)")
	}
	clientIn, agentOut := io.Pipe()
	agentIn, clientOut := io.Pipe()
	served := make(chan struct{})
	go func() {
		defer close(served)
		p.opts.Serve(p.ask, agentIn, agentOut)
		_ = agentOut.Close()
	}()
	front := acp.NewConnection(func(_ context.Context, method string, _ json.RawMessage) (any, *acp.RequestError) {
		return nil, acp.NewMethodNotFound(method)
	}, clientOut, clientIn)
	a.mu.Lock()
	a.front, a.frontIn, a.prompts = front, clientOut, p
	a.mu.Unlock()
	// The agent's end is the front's end: its input closes, and requests to it fail.
	go func() {
		<-a.conn.Done()
		_ = clientOut.Close()
	}()
	go func() {
		<-served
		_ = clientIn.Close()
	}()
	return nil
}

// PromptMode is the session mode chosen for prompts: "" when the agent lists none that only reads
// (or before the session is open).
func (a *Agent) PromptMode() string {
	p := a.prompter()
	if p == nil {
		return ""
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mode
}

// Prompted reports whether the agent serves suggestions through prompts (it has no NES).
func (a *Agent) Prompted() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.prompts != nil
}

// nesConn is the connection NES messages go to: the in-process agent in front of a prompted one,
// else the agent's own.
func (a *Agent) nesConn() *acp.Connection {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.front != nil {
		return a.front
	}
	return a.conn
}

func (a *Agent) prompter() *prompter {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.prompts
}

// open makes the session prompts go to: session/new with the workspace as cwd and no MCP
// servers, then a read-only mode when the agent offers one. An auth_required answer is returned
// as it is, so that the sign-in dialog runs and calls open again.
func (p *prompter) open(ctx context.Context) error {
	cwd := p.opts.Workspace()
	if cwd == "" {
		if wd, err := os.Getwd(); err == nil {
			cwd = wd
		}
	}
	resp, err := acp.SendRequest[acp.NewSessionResponse](p.a.conn, ctx, acp.AgentMethodSessionNew, acp.NewSessionRequest{Cwd: cwd, McpServers: []acp.McpServer{}})
	if err != nil {
		return fmt.Errorf("session/new: %w", err)
	}
	if resp.SessionId == "" {
		return errors.New("session/new: the agent returned no sessionId")
	}
	mode := ""
	if m, ok := readOnlyMode(resp.Modes); ok {
		mode = string(m)
		if resp.Modes.CurrentModeId != m {
			if _, err := acp.SendRequest[acp.SetSessionModeResponse](p.a.conn, ctx, acp.AgentMethodSessionSetMode, acp.SetSessionModeRequest{SessionId: resp.SessionId, ModeId: m}); err != nil {
				p.log.Warn().Err(err).Str("mode", mode).Msg("session/set_mode refused; prompting in the agent's own mode (its permission requests are refused all the same)")
				mode = ""
			}
		}
	}
	p.mu.Lock()
	p.session, p.turns, p.mode = resp.SessionId, 0, mode
	p.mu.Unlock()
	p.log.Info().Str("session", string(resp.SessionId)).Str("mode", mode).Str("cwd", cwd).Msg("prompt session opened")
	return nil
}

// closeTimeout bounds the wait for the agent's answer to session/close.
const closeTimeout = 10 * time.Second

// retire is told of a session the bridge stops using (why says when): when the agent offers
// session/close, it is asked to close it, so that it frees what it keeps for it (a history, a
// process of its own) now rather than when the bridge exits. Prompts do not wait for it.
func (p *prompter) retire(session acp.SessionId, why string) {
	if !p.a.closesSessions() {
		p.log.Debug().Str("session", string(session)).Str("why", why).Msg("prompt session left; the agent offers no session/close")
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
		defer cancel()
		if _, err := acp.SendRequest[acp.CloseSessionResponse](p.a.conn, ctx, acp.AgentMethodSessionClose, acp.CloseSessionRequest{SessionId: session}); err != nil {
			p.log.Warn().Err(err).Str("session", string(session)).Str("why", why).Msg("session/close failed")
			return
		}
		p.log.Info().Str("session", string(session)).Str("why", why).Msg("prompt session closed")
	}()
}

// closesSessions reports whether the agent offers session/close (sessionCapabilities.close).
func (a *Agent) closesSessions() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.init != nil && a.init.AgentCapabilities.SessionCapabilities.Close != nil
}

// readOnlyMode picks, among the agent's modes, one in which it only reads: one whose id or name
// says read-only first, then one that plans, then one that asks. Words are compared whole ("Task"
// is not "ask").
func readOnlyMode(s *acp.SessionModeState) (acp.SessionModeId, bool) {
	if s == nil {
		return "", false
	}
	words := func(m acp.SessionMode) []string {
		return strings.FieldsFunc(strings.ToLower(string(m.Id)+" "+m.Name), func(r rune) bool {
			return !unicode.IsLetter(r) && !unicode.IsDigit(r)
		})
	}
	readOnly := func(w []string) bool {
		for i, x := range w {
			if x == "readonly" || (x == "read" && i+1 < len(w) && w[i+1] == "only") {
				return true
			}
		}
		return false
	}
	// A plan or ask mode is named by that word alone ("Plan Mode", "ask"): "Don't Ask" is the
	// opposite.
	only := func(word string) func([]string) bool {
		return func(w []string) bool {
			return slices.Contains(w, word) && !slices.ContainsFunc(w, func(x string) bool { return x != word && x != "mode" })
		}
	}
	for _, is := range []func([]string) bool{readOnly, only("plan"), only("ask")} {
		for _, m := range s.AvailableModes {
			if is(words(m)) {
				return m.Id, true
			}
		}
	}
	return "", false
}

// ask sends one prompt and returns the agent's answer: its message text, and the edits it
// proposed through tool calls, permission requests or fs/write_text_file. A newer prompt
// supersedes one in flight (that one is cancelled: session/cancel). Its error is kept for Suggest
// (failure).
func (p *prompter) ask(ctx context.Context, text string) (PromptAnswer, error) {
	ans, err := p.askOnce(ctx, text)
	p.mu.Lock()
	p.failure = err
	p.mu.Unlock()
	return ans, err
}

func (p *prompter) askOnce(ctx context.Context, text string) (PromptAnswer, error) {
	p.mu.Lock()
	if p.tainted != "" {
		p.mu.Unlock()
		return PromptAnswer{}, ErrPromptsStopped
	}
	if p.cur != nil {
		p.cur.cancel()
	}
	p.mu.Unlock()
	select {
	case p.slot <- struct{}{}:
	case <-ctx.Done():
		return PromptAnswer{}, ctx.Err()
	}
	defer func() { <-p.slot }()
	if err := ctx.Err(); err != nil {
		return PromptAnswer{}, err
	}
	p.mu.Lock()
	session, turns := p.session, p.turns
	if session != "" && turns >= p.opts.Turns {
		p.session = ""
	}
	p.mu.Unlock()
	if session == "" || turns >= p.opts.Turns {
		if session != "" {
			p.retire(session, fmt.Sprintf("renewed after %d prompts", turns))
		}
		if err := p.open(ctx); err != nil {
			return PromptAnswer{}, err
		}
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	p.mu.Lock()
	run := &promptRun{session: p.session, cancel: cancel}
	p.cur = run
	p.turns++
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		if p.cur == run {
			p.cur = nil
		}
		p.mu.Unlock()
	}()

	before := p.stamps()
	began := time.Now()
	resp, err := p.prompt(rctx, run.session, text)
	if changed := p.changedOnDisk(before); changed != "" {
		p.taint(changed)
	}
	if err != nil {
		// A prompt the agent ended when cancelled (with an answer, in time, as ACP asks) leaves
		// its session as it was: cancels come with every newer request, and a session costs the
		// agent seconds to open. After anything else, whatever state the session is in, the next
		// prompt starts a new one.
		p.mu.Lock()
		left := p.session == run.session && (!errors.Is(err, ErrCancelled) || errors.Is(err, errUnclean))
		if left {
			p.session = ""
		}
		p.mu.Unlock()
		if left {
			p.retire(run.session, "its prompt failed")
		}
		return PromptAnswer{}, err
	}
	p.mu.Lock()
	answer := PromptAnswer{Text: run.text.String(), Changes: run.changes}
	p.mu.Unlock()
	p.log.Debug().Str("stop", string(resp.StopReason)).Int("answer_bytes", len(answer.Text)).Int("changes", len(answer.Changes)).Dur("took", time.Since(began)).Msg("prompt answered")
	return answer, nil
}

// cancelGrace is how long a cancelled prompt is waited for before the bridge stops waiting.
const cancelGrace = 3 * time.Second

// errUnclean comes with ErrCancelled when the agent did not end a cancelled prompt with an answer
// within cancelGrace: the state of its session is unknown.
var errUnclean = errors.New("the agent did not end the cancelled prompt cleanly")

// prompt sends session/prompt and waits for its answer. When ctx ends first, the agent is asked to
// stop (session/cancel, as ACP has it) and given cancelGrace to answer "cancelled".
func (p *prompter) prompt(ctx context.Context, session acp.SessionId, text string) (acp.PromptResponse, error) {
	wctx, stopWaiting := context.WithCancel(context.Background())
	defer stopWaiting()
	type result struct {
		resp acp.PromptResponse
		err  error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := acp.SendRequest[acp.PromptResponse](p.a.conn, wctx, acp.AgentMethodSessionPrompt, acp.PromptRequest{SessionId: session, Prompt: []acp.ContentBlock{acp.TextBlock(text)}})
		done <- result{resp, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			return r.resp, fmt.Errorf("session/prompt: %w", r.err)
		}
		return r.resp, nil
	case <-ctx.Done():
	}
	if err := p.a.conn.SendNotification(context.Background(), acp.AgentMethodSessionCancel, acp.CancelNotification{SessionId: session}); err != nil {
		p.log.Debug().Err(err).Msg("session/cancel")
	}
	select {
	case r := <-done:
		if r.err != nil {
			p.log.Debug().Err(r.err).Msg("the agent ended a cancelled prompt with an error; its session is left")
			return acp.PromptResponse{}, fmt.Errorf("%w: %w", ErrCancelled, errUnclean)
		}
	case <-time.After(cancelGrace):
		p.log.Warn().Msg("the agent did not end a cancelled prompt in time; its session is left")
		return acp.PromptResponse{}, fmt.Errorf("%w: %w", ErrCancelled, errUnclean)
	}
	return acp.PromptResponse{}, ErrCancelled
}

// takeFailure returns and forgets why the last prompt failed.
func (p *prompter) takeFailure() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	err := p.failure
	p.failure = nil
	return err
}

// close cancels a prompt in flight.
func (p *prompter) close() {
	p.mu.Lock()
	if p.cur != nil {
		p.cur.cancel()
	}
	p.mu.Unlock()
}

// handle answers what the agent asks of the client while it is prompted; ok is false for what the
// bridge answers as for any agent (fs/read_text_file, the editor state).
func (p *prompter) handle(method string, params json.RawMessage) (res any, rerr *acp.RequestError, ok bool) {
	switch method {
	case acp.ClientMethodSessionUpdate:
		var n acp.SessionNotification
		if err := json.Unmarshal(params, &n); err != nil {
			return nil, nil, true
		}
		p.update(n)
		return nil, nil, true
	case acp.ClientMethodSessionRequestPermission:
		var r acp.RequestPermissionRequest
		if err := json.Unmarshal(params, &r); err != nil {
			return nil, acp.NewInvalidParams(err.Error()), true
		}
		p.collect(r.SessionId, r.ToolCall.Content)
		return refusal(r.Options), nil, true
	case acp.ClientMethodFsWriteTextFile:
		var r acp.WriteTextFileRequest
		if err := json.Unmarshal(params, &r); err != nil {
			return nil, acp.NewInvalidParams(err.Error()), true
		}
		p.mu.Lock()
		run := p.cur
		if run != nil && (r.SessionId == "" || r.SessionId == run.session) {
			run.changes = append(run.changes, ProposedChange{Path: r.Path, NewText: r.Content})
			p.mu.Unlock()
			// Not written: the change is shown to the user as a suggestion.
			return acp.WriteTextFileResponse{}, nil, true
		}
		p.mu.Unlock()
		return nil, &acp.RequestError{Code: -32603, Message: "acp-lsp-bridge writes no file for an agent it asks for suggestions; propose the edit in your answer"}, true
	}
	if strings.HasPrefix(method, "terminal/") {
		return nil, &acp.RequestError{Code: -32603, Message: "acp-lsp-bridge runs no commands for an agent it asks for suggestions"}, true
	}
	return nil, nil, false
}

// update takes one session/update of the prompt in flight: message text and proposed edits.
func (p *prompter) update(n acp.SessionNotification) {
	u := n.Update
	switch {
	case u.AgentMessageChunk != nil && u.AgentMessageChunk.Content.Text != nil:
		p.mu.Lock()
		if run := p.cur; run != nil && n.SessionId == run.session {
			run.text.WriteString(u.AgentMessageChunk.Content.Text.Text)
		}
		p.mu.Unlock()
	case u.ToolCall != nil:
		p.collect(n.SessionId, u.ToolCall.Content)
	case u.ToolCallUpdate != nil:
		p.collect(n.SessionId, u.ToolCallUpdate.Content)
	}
}

// collect keeps the diffs among a tool call's content as proposed edits of the prompt in flight.
func (p *prompter) collect(session acp.SessionId, content []acp.ToolCallContent) {
	p.mu.Lock()
	defer p.mu.Unlock()
	run := p.cur
	if run == nil || session != run.session {
		return
	}
	for _, c := range content {
		if d := c.Diff; d != nil {
			ch := ProposedChange{Path: d.Path, NewText: d.NewText, OldText: d.OldText}
			// A permission request repeats its tool call's diff.
			if !slices.ContainsFunc(run.changes, ch.same) {
				run.changes = append(run.changes, ch)
			}
		}
	}
}

// same reports whether c and o are the same edit.
func (c ProposedChange) same(o ProposedChange) bool {
	return c.Path == o.Path && c.NewText == o.NewText && (c.OldText == nil) == (o.OldText == nil) &&
		(c.OldText == nil || *c.OldText == *o.OldText)
}

// refusal answers a permission request with a reject option, or cancelled when there is none.
func refusal(options []acp.PermissionOption) acp.RequestPermissionResponse {
	for _, kind := range []acp.PermissionOptionKind{acp.PermissionOptionKindRejectOnce, acp.PermissionOptionKindRejectAlways} {
		for _, o := range options {
			if o.Kind == kind {
				return acp.RequestPermissionResponse{Outcome: acp.NewRequestPermissionOutcomeSelected(o.OptionId)}
			}
		}
	}
	return acp.RequestPermissionResponse{Outcome: acp.NewRequestPermissionOutcomeCancelled()}
}

// fileStamp is what is compared of a file before and after a prompt.
type fileStamp struct {
	size int64
	mod  time.Time
}

// maxWatched bounds the files compared before and after a prompt.
const maxWatched = 20000

// stamps records the workspace's files, at most maxWatched: not those of version control,
// dependencies and build output (which tools other than the agent write while it is prompted:
// a language server's build, a package manager), nor editors' swap and backup files.
func (p *prompter) stamps() map[string]fileStamp {
	root := p.opts.Workspace()
	if root == "" {
		return nil
	}
	out := map[string]fileStamp{}
	_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if path != root && unwatchedDirs[d.Name()] {
				return filepath.SkipDir
			}
			return nil
		}
		if len(out) >= maxWatched {
			return filepath.SkipAll
		}
		if editorFile(d.Name()) {
			return nil
		}
		if info, err := d.Info(); err == nil && info.Mode().IsRegular() {
			out[path] = fileStamp{info.Size(), info.ModTime()}
		}
		return nil
	})
	return out
}

// unwatchedDirs are folders whose files change without the agent: version control, dependencies,
// build output, caches.
var unwatchedDirs = map[string]bool{
	".git": true, ".hg": true, ".svn": true, ".jj": true, "node_modules": true, "target": true, "build": true,
	"dist": true, "out": true, "bin": true, "obj": true, "__pycache__": true, ".venv": true, "venv": true,
	".cache": true, ".gradle": true, ".idea": true, ".vscode": true, ".zig-cache": true, "zig-out": true,
}

// editorFile reports the swap, backup and lock files editors write beside a file they edit.
func editorFile(name string) bool {
	return strings.HasSuffix(name, "~") || strings.HasSuffix(name, ".swp") || strings.HasSuffix(name, ".swo") ||
		strings.HasSuffix(name, ".swx") || strings.HasPrefix(name, ".#") || (strings.HasPrefix(name, "#") && strings.HasSuffix(name, "#")) ||
		name == "4913" // Vim's check that it can write in a folder
}

// changedOnDisk is a workspace file made, changed or removed since before by someone other than
// the editor, or "".
func (p *prompter) changedOnDisk(before map[string]fileStamp) string {
	if before == nil {
		return ""
	}
	after := p.stamps()
	byEditor := func(path string) bool { return p.opts.Saved != nil && p.opts.Saved(path) }
	for path, s := range after {
		if b, ok := before[path]; (!ok || b != s) && !byEditor(path) {
			return path
		}
	}
	if len(after) < maxWatched {
		for path := range before {
			if _, ok := after[path]; !ok {
				return path
			}
		}
	}
	return ""
}

// taint stops prompts to the agent and tells the bridge, once.
func (p *prompter) taint(path string) {
	p.mu.Lock()
	first := p.tainted == ""
	if first {
		p.tainted = path
	}
	p.mu.Unlock()
	if !first {
		return
	}
	p.log.Warn().Str("path", path).Msg("the agent changed a workspace file on disk by itself during a prompt; no more prompts to it")
	if p.opts.Tainted != nil {
		p.opts.Tainted(path)
	}
}

// BilledMetaKey is the key of agentInfo._meta by which an agent says each request to it is billed
// (a hosted model's per-request price): the bridge then asks it only when the editor asks.
const BilledMetaKey = "acp-lsp-bridge/billed"

// Billed reports whether each request to the agent costs the user: an agent asked through
// prompts, one that says so (BilledMetaKey), or GitHub Copilot, whose plans count every
// suggestion asked (Copilot Free's monthly allowance of completions; docs/real-agents.md).
func (a *Agent) Billed() bool {
	if a.Prompted() || a.IsCopilot() {
		return true
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.init == nil || a.init.AgentInfo == nil {
		return false
	}
	b, _ := a.init.AgentInfo.Meta[BilledMetaKey].(bool)
	return b
}
