// Package testagent is a small scripted ACP agent with NES, for the bridge's tests: it records
// every message it receives, mirrors the documents from the document/* events, and answers
// nes/suggest from rules or from a function the test supplies.
package testagent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/document"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testutil"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/translate"
)

// Rule: when the cursor line contains When, replace the first occurrence of Find in that line with
// Replace (Find "" inserts at the cursor).
type Rule struct {
	When    string `json:"when"`
	Find    string `json:"find"`
	Replace string `json:"replace"`
	// Alternative: when an earlier rule matched too, this one adds a suggestion after its (the
	// first matching rule alone answers otherwise).
	Alternative bool `json:"alternative"`
}

// Config configures the agent.
type Config struct {
	Encoding string // "utf-8", "utf-16" or "utf-32"; "" picks utf-16
	Sync     string // "incremental" or "full"
	NoNES    bool   // answer initialize without the nes capability
	// Sessions makes a coding agent (with NoNES): session/new (modes "default", "read-only"),
	// session/set_mode, and session/prompt answered in text: the prompt's editable region (the
	// one holding the cursor marker) with each rule's Find replaced by its Replace, between the
	// markers (sessions.go). With RequireAuth, session/new answers auth_required until
	// authenticate.
	Sessions bool
	// DidFocus asks for document/didFocus events.
	DidFocus bool
	// InfoMeta, when set, is sent as agentInfo._meta (an agent that says it is billed per
	// request, say).
	InfoMeta map[string]any
	// ContextDiagnostics asks for the diagnostics context in nes/suggest.
	ContextDiagnostics bool
	// StartError, when set, is the error nes/start answers with.
	StartError *acp.RequestError
	// Context, when set, is the nes.context the agent asks for (ContextDiagnostics adds to it).
	Context *acp.NesContextCapabilities
	// AuthMethods are offered in initialize. With RequireAuth, nes/start and nes/suggest answer
	// auth_required until authenticate names one of them (Revoke undoes it).
	AuthMethods []acp.AuthMethod
	RequireAuth bool
	Rules       []Rule
	// Suggest, when set, answers nes/suggest instead of the rules. doc is the agent's mirror text.
	Suggest func(ctx context.Context, req acp.UnstableSuggestNesRequest, doc string) (any, *acp.RequestError)
	// Log receives one JSON line per received message.
	Log io.Writer
	// MirrorDir, when set, receives the agent's copy of each document after every didOpen and
	// didChange (testutil.WriteMirror), for tests that compare it with an editor's buffer.
	MirrorDir string
	// Fault makes the agent misbehave on purpose, for the bridge's robustness tests: one of the
	// modes in Faults ("" behaves).
	Fault string
	// Exit ends the process for the "exit" fault; nil calls os.Exit. Should it return, the
	// agent answers as usual.
	Exit func(code int)
	// StartDelay and StartGate make an agent that is slow to start: the answer to initialize
	// waits StartDelay, and then until StartGate (when set) is closed.
	StartDelay time.Duration
	StartGate  <-chan struct{}
	// SuggestDelay makes a busy agent: each nes/suggest is answered after it (sooner when it is
	// cancelled, with the cancellation).
	SuggestDelay time.Duration
	// Stall makes an agent that stops reading its input for this long once its NES session has
	// started (the next read after nes/start waits), as a Node agent doing synchronous work does;
	// the log then gets {"method":"test/stallEnded"}. With StallOnce, only when that file does not
	// exist yet (it is created), so that the agent started again reads normally.
	Stall     time.Duration
	StallOnce string
	// Trickle makes an agent that reads its input one byte at a time.
	Trickle bool
	// Answer, when set, is a JSON array of suggestions that every nes/suggest is answered with,
	// each id suffixed with "-n" (hostile.go): URIs of the test's choosing.
	Answer json.RawMessage
	// Reads makes the agent read Path with fs/read_text_file Count times once nes/start is
	// answered, logging each answer (hostile.go).
	Reads ReadLoop
	// Copilot makes the agent a stand-in for GitHub Copilot's language server in --acp mode
	// (copilot.go): its initialize, sign-in, one NES session, document rules and errors, with
	// the suggestions from Rules. Encoding, Sync, NoNES, Sessions, DidFocus, Context, AuthMethods,
	// RequireAuth, Answer and Fault do not apply to it.
	Copilot bool
	// DropChange, with Copilot, drops the DropChange-th document/didChange received (1-based),
	// as the real server ignores one it judged stale, and logs {"method":"test/droppedChange"}.
	DropChange int
	// Getenv reads the stand-in's environment (GH_COPILOT_TOKEN, ...); nil is os.Getenv.
	Getenv func(string) string
	// Stderr receives the stand-in's warnings (what it ignored and why); nil is os.Stderr.
	Stderr io.Writer
}

// ReadLoop is Config.Reads.
type ReadLoop struct {
	Path  string
	Count int
}

// Message is one received message.
type Message struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
}

// Agent is one running test agent.
type Agent struct {
	cfg  Config
	enc  encoding.Kind
	wire *wireWriter
	// conn is set by Serve, which then closes connected; read it through connection().
	conn      *acp.Connection
	connected chan struct{}

	mu       sync.Mutex
	received []Message
	docs     map[string]*encoding.Mapper
	versions map[string]int
	next     int
	changed  chan struct{}
	authed   bool
	suggests int  // nes/suggest requests received
	stall    bool // the next read waits Config.Stall
	cop      copilotState
}

// Revoke makes the agent require authentication again (a session that expired).
func (a *Agent) Revoke() {
	a.mu.Lock()
	a.authed = false
	a.mu.Unlock()
}

func (a *Agent) needsAuth() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.cfg.RequireAuth && !a.authed
}

var errAuthRequired = &acp.RequestError{Code: -32000, Message: "Authentication required", Data: map[string]any{"reason": "auth_required"}}

func authMethodID(m acp.AuthMethod) string {
	switch {
	case m.Agent != nil:
		return m.Agent.Id
	case m.EnvVar != nil:
		return m.EnvVar.Id
	case m.Terminal != nil:
		return m.Terminal.Id
	}
	return ""
}

// New makes an agent.
func New(cfg Config) *Agent {
	enc, ok := encoding.ParseKind(cfg.Encoding)
	if !ok || cfg.Copilot {
		enc = encoding.UTF16
	}
	return &Agent{cfg: cfg, enc: enc, docs: map[string]*encoding.Mapper{}, versions: map[string]int{}, changed: make(chan struct{}), connected: make(chan struct{})}
}

// Serve speaks ACP on r (what the client writes) and w until r ends.
func (a *Agent) Serve(r io.Reader, w io.Writer) {
	if a.cfg.Stall > 0 || a.cfg.Trickle {
		r = &slowReader{r: r, a: a}
	}
	r = &wireTap{r: r, a: a}
	a.wire = &wireWriter{w: w, utf8Fault: a.cfg.Fault == FaultUTF8}
	a.conn = acp.NewConnection(a.handle, a.wire, r)
	close(a.connected)
	<-a.conn.Done()
}

// connection is the ACP connection, once Serve has made it: the connection reads (and runs
// handlers) before NewConnection returns, so a handler or a test that learnt of a message may get
// here before Serve stored it.
func (a *Agent) connection() *acp.Connection {
	<-a.connected
	return a.conn
}

// Call sends a request to the client (fs/read_text_file, ...) and returns its raw result.
func (a *Agent) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	select {
	case <-a.connected:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return acp.SendRequest[json.RawMessage](a.connection(), ctx, method, params)
}

// Received returns the messages received so far.
func (a *Agent) Received() []Message {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]Message(nil), a.received...)
}

// Changed returns a channel closed at the next received message.
func (a *Agent) Changed() <-chan struct{} {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.changed
}

// Mirror returns the agent's text of a document.
func (a *Agent) Mirror(uri string) (string, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	m, ok := a.docs[uri]
	if !ok {
		return "", false
	}
	return m.Text(), true
}

// Version returns the version of the agent's copy of a document: the last didOpen or didChange
// it applied. It costs the same whatever the size of the document.
func (a *Agent) Version(uri string) (int, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	v, ok := a.versions[uri]
	return v, ok
}

func (a *Agent) record(method string, params json.RawMessage) {
	a.mu.Lock()
	a.received = append(a.received, Message{Method: method, Params: append(json.RawMessage(nil), params...)})
	a.mu.Unlock()
	if a.cfg.Log != nil {
		b, _ := json.Marshal(Message{Method: method, Params: params})
		a.mu.Lock()
		_, _ = a.cfg.Log.Write(append(b, '\n'))
		a.mu.Unlock()
	}
	// Those waiting see the message now, not only once it is handled: a slow start holds its
	// answer.
	a.signal()
}

// signal wakes those waiting on Changed.
func (a *Agent) signal() {
	a.mu.Lock()
	close(a.changed)
	a.changed = make(chan struct{})
	a.mu.Unlock()
}

func invalid(err error) *acp.RequestError {
	return acp.NewInvalidParams(map[string]any{"error": err.Error()})
}

// handle answers a message, which wireTap has recorded already.
func (a *Agent) handle(ctx context.Context, method string, params json.RawMessage) (any, *acp.RequestError) {
	defer a.signal()
	if a.cfg.Copilot {
		return a.copilot(ctx, method, params)
	}
	switch method {
	case acp.AgentMethodInitialize:
		if !a.slowStart(ctx) {
			return nil, acp.NewInternalError(map[string]any{"error": "the connection ended while starting"})
		}
		caps := acp.AgentCapabilities{}
		pe := acp.PositionEncodingKind(a.enc.String())
		caps.PositionEncoding = &pe
		if !a.cfg.NoNES {
			sync := acp.TextDocumentSyncKindIncremental
			if a.cfg.Sync == "full" {
				sync = acp.TextDocumentSyncKindFull
			}
			caps.Nes = &acp.NesCapabilities{Events: &acp.NesEventCapabilities{Document: &acp.NesDocumentEventCapabilities{
				DidOpen:   &acp.NesDocumentDidOpenCapabilities{},
				DidChange: &acp.NesDocumentDidChangeCapabilities{SyncKind: sync},
				DidClose:  &acp.NesDocumentDidCloseCapabilities{},
				DidSave:   &acp.NesDocumentDidSaveCapabilities{},
			}}}
			if a.cfg.DidFocus {
				caps.Nes.Events.Document.DidFocus = &acp.NesDocumentDidFocusCapabilities{}
			}
			if a.cfg.Context != nil {
				c := *a.cfg.Context
				caps.Nes.Context = &c
			}
			if a.cfg.ContextDiagnostics {
				if caps.Nes.Context == nil {
					caps.Nes.Context = &acp.NesContextCapabilities{}
				}
				caps.Nes.Context.Diagnostics = &acp.NesDiagnosticsCapabilities{}
			}
		}
		methods := a.cfg.AuthMethods
		if methods == nil {
			methods = []acp.AuthMethod{}
		}
		return acp.InitializeResponse{
			ProtocolVersion:   acp.ProtocolVersionNumber,
			AgentCapabilities: caps,
			AgentInfo:         &acp.Implementation{Name: "acp-test-agent", Version: "1", Meta: a.cfg.InfoMeta},
			AuthMethods:       methods,
		}, nil
	case acp.AgentMethodAuthenticate:
		var p acp.AuthenticateRequest
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, invalid(err)
		}
		for _, m := range a.cfg.AuthMethods {
			if authMethodID(m) == p.MethodId {
				a.mu.Lock()
				a.authed = true
				a.mu.Unlock()
				return acp.AuthenticateResponse{}, nil
			}
		}
		return nil, invalid(fmt.Errorf("unknown auth method %q", p.MethodId))
	case acp.AgentMethodSessionNew, acp.AgentMethodSessionSetMode, acp.AgentMethodSessionPrompt, acp.AgentMethodSessionCancel:
		if !a.cfg.Sessions {
			return nil, acp.NewMethodNotFound(method)
		}
		return a.session(ctx, method, params)
	case acp.AgentMethodNesStart:
		if a.cfg.NoNES {
			return nil, acp.NewMethodNotFound(method)
		}
		if a.cfg.StartError != nil {
			return nil, a.cfg.StartError
		}
		if a.needsAuth() {
			return nil, errAuthRequired
		}
		if a.cfg.Stall > 0 {
			a.armStall()
		}
		if a.cfg.Reads.Count > 0 {
			go func() {
				time.Sleep(50 * time.Millisecond) // after the answer has gone out
				a.readLoop()
			}()
		}
		return acp.UnstableStartNesResponse{SessionId: "test-session"}, nil
	case acp.AgentMethodNesClose:
		return acp.UnstableCloseNesResponse{}, nil
	case acp.AgentMethodDocumentDidOpen:
		var p acp.UnstableDidOpenDocumentNotification
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, invalid(err)
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		a.docs[p.Uri] = encoding.NewMapper(p.Text)
		a.versions[p.Uri] = p.Version
		return nil, a.mirror(p.Uri)
	case acp.AgentMethodDocumentDidChange:
		var p acp.UnstableDidChangeDocumentNotification
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, invalid(err)
		}
		changes := translate.ChangesFromACP(p.ContentChanges)
		a.mu.Lock()
		defer a.mu.Unlock()
		m, ok := a.docs[p.Uri]
		if !ok {
			return nil, invalid(fmt.Errorf("didChange for unopened %s", p.Uri))
		}
		m2, _, err := document.Apply(m, changes, a.enc)
		if err != nil {
			return nil, invalid(err)
		}
		a.docs[p.Uri] = m2
		a.versions[p.Uri] = p.Version
		return nil, a.mirror(p.Uri)
	case acp.AgentMethodDocumentDidClose:
		var p acp.UnstableDidCloseDocumentNotification
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, invalid(err)
		}
		a.mu.Lock()
		delete(a.docs, p.Uri)
		a.mu.Unlock()
		return nil, nil
	case acp.AgentMethodDocumentDidSave, acp.AgentMethodDocumentDidFocus, acp.AgentMethodNesAccept, acp.AgentMethodNesReject:
		return nil, nil
	case acp.AgentMethodNesSuggest:
		var p acp.UnstableSuggestNesRequest
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, invalid(err)
		}
		// Requests overtake the queue of notifications in the ACP SDK: wait for the document events
		// up to the requested version.
		if a.needsAuth() {
			return nil, errAuthRequired
		}
		a.mu.Lock()
		a.suggests++
		n := a.suggests
		a.mu.Unlock()
		switch a.cfg.Fault {
		case FaultExit:
			a.exit(3)
		case FaultHang:
			// Never answer, whatever $/cancel_request says: only the connection's end frees this.
			<-a.connection().Done()
			return nil, acp.NewInternalError(map[string]any{"error": "hung"})
		}
		if a.cfg.Fault == FaultRequests {
			a.badRequests(n)
		}
		if a.cfg.SuggestDelay > 0 {
			t := time.NewTimer(a.cfg.SuggestDelay)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return nil, acp.NewRequestCancelled(nil)
			}
		}
		doc := a.waitVersion(ctx, p.Uri, p.Version)
		var res any
		if a.cfg.Answer != nil {
			return a.answerWith(n)
		}
		if a.cfg.Suggest != nil {
			var rerr *acp.RequestError
			if res, rerr = a.cfg.Suggest(ctx, p, doc); rerr != nil {
				return nil, rerr
			}
		} else {
			res = a.suggestByRules(p, doc)
		}
		if a.cfg.Fault != "" {
			return a.faultyAnswer(ctx, n, p, res)
		}
		return res, nil
	}
	return nil, acp.NewMethodNotFound(method)
}

// mirror writes the agent's copy of uri to Config.MirrorDir, when set. a.mu is held.
func (a *Agent) mirror(uri string) *acp.RequestError {
	if a.cfg.MirrorDir == "" {
		return nil
	}
	if err := testutil.WriteMirror(a.cfg.MirrorDir, uri, a.docs[uri].Text()); err != nil {
		return acp.NewInternalError(map[string]any{"error": err.Error()})
	}
	return nil
}

// slowStart waits StartDelay, then for StartGate; false when the request's context (which ends
// with the connection) ended first.
func (a *Agent) slowStart(ctx context.Context) bool {
	if a.cfg.StartDelay > 0 {
		t := time.NewTimer(a.cfg.StartDelay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done(): // the connection ended
			return false
		}
	}
	if a.cfg.StartGate != nil {
		select {
		case <-a.cfg.StartGate:
		case <-ctx.Done(): // the connection ended
			return false
		}
	}
	return true
}

func (a *Agent) waitVersion(ctx context.Context, uri string, version int) string {
	deadline := time.After(2 * time.Second)
	for {
		a.mu.Lock()
		m, ok := a.docs[uri]
		v := a.versions[uri]
		ch := a.changed
		a.mu.Unlock()
		if ok && v >= version {
			return m.Text()
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ""
		case <-deadline:
			if ok {
				return m.Text()
			}
			return ""
		}
	}
}

func (a *Agent) suggestByRules(p acp.UnstableSuggestNesRequest, doc string) map[string]any {
	none := map[string]any{"suggestions": []any{}}
	m := encoding.NewMapper(doc)
	if p.Position.Line >= m.LineCount() {
		return none
	}
	start := m.LineStart(p.Position.Line)
	end := len(doc)
	if p.Position.Line+1 < m.LineCount() {
		end = m.LineStart(p.Position.Line + 1)
	}
	line := strings.TrimRight(doc[start:end], "\r\n")
	var sugs []any
	for _, r := range a.cfg.Rules {
		if !strings.Contains(line, r.When) || (len(sugs) > 0 && !r.Alternative) {
			continue
		}
		var s, e int
		if r.Find == "" {
			off, err := m.PositionOffset(encoding.Position{Line: p.Position.Line, Character: p.Position.Character}, a.enc)
			if err != nil {
				return none
			}
			s, e = off, off
		} else {
			i := strings.Index(line, r.Find)
			if i < 0 {
				continue
			}
			s, e = start+i, start+i+len(r.Find)
		}
		rng, err := m.OffsetsRange(s, e, a.enc)
		if err != nil {
			return none
		}
		a.mu.Lock()
		a.next++
		id := fmt.Sprintf("sugg-%d", a.next)
		a.mu.Unlock()
		sugs = append(sugs, map[string]any{
			"kind": "edit", "id": id, "uri": p.Uri,
			"edits": []any{map[string]any{
				"range": map[string]any{
					"start": map[string]any{"line": rng.Start.Line, "character": rng.Start.Character},
					"end":   map[string]any{"line": rng.End.Line, "character": rng.End.Character},
				},
				"newText": r.Replace,
			}},
		})
	}
	if len(sugs) == 0 {
		return none
	}
	return map[string]any{"suggestions": sugs}
}

// armStall makes the next read wait Config.Stall (once, and with StallOnce only when its file is
// new).
func (a *Agent) armStall() {
	if a.cfg.StallOnce != "" {
		f, err := os.OpenFile(a.cfg.StallOnce, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err != nil {
			return
		}
		f.Close()
	}
	a.mu.Lock()
	a.stall = true
	a.mu.Unlock()
}

// slowReader is the agent's input when it stalls or trickles.
// wireTap records each message the client sends as it is read, before the SDK has it: the SDK
// runs a request's handler at once but queues notifications, so a request (nes/close at
// shutdown) can reach its handler before the notifications sent ahead of it. What the agent
// received (Received, Config.Log) is in the order of the wire. Like the SDK, it leaves out
// answers and $/cancel_request, which never reach a handler.
type wireTap struct {
	r       io.Reader
	a       *Agent
	partial []byte // the start of a line not yet ended
}

func (t *wireTap) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	data := p[:n]
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			t.partial = append(t.partial, data...)
			return n, err
		}
		line := data[:i]
		if len(t.partial) > 0 {
			line = append(t.partial, line...)
		}
		t.recordLine(line)
		t.partial = t.partial[:0]
		data = data[i+1:]
	}
}

func (t *wireTap) recordLine(line []byte) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(line, &m) != nil {
		return
	}
	if m.Method == "" && bytes.HasPrefix(m.ID, []byte(`"raw-`)) {
		t.a.record("test/rawAnswer", line) // the answer to a request written by hand (hostile.go)
		return
	}
	if m.Method == "" || (m.ID == nil && m.Method == "$/cancel_request") {
		return
	}
	t.a.record(m.Method, m.Params)
	if t.a.cfg.Copilot {
		t.a.copilotTap(m.ID, m.Method, m.Params)
	}
}

type slowReader struct {
	r io.Reader
	a *Agent
}

func (s *slowReader) Read(p []byte) (int, error) {
	s.a.mu.Lock()
	stall := s.a.stall
	s.a.stall = false
	s.a.mu.Unlock()
	if stall {
		time.Sleep(s.a.cfg.Stall)
		s.a.record("test/stallEnded", nil)
	}
	if s.a.cfg.Trickle && len(p) > 1 {
		p = p[:1]
	}
	return s.r.Read(p)
}
