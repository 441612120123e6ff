package testagent

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/document"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/translate"
)

// The stand-in for GitHub Copilot's language server (Config.Copilot): what
// `copilot-language-server --acp` 1.539.0 does with NES, read from its dist/main.js (the class
// ACPNESHandler, the CopilotACPAgent's initialize and authenticate, the sign-in checks) and from
// the real server's answers here (no network, so it cannot suggest: the stand-in suggests from
// the rules instead). The order of its checks, its error codes and messages, and what it ignores
// and says so on stderr are the real server's:
//
//   - initialize: agentInfo "GitHub Copilot" 1.539.0, utf-16, nes with didOpen, incremental
//     didChange, didClose and didFocus, context {diagnostics: {}}, one auth method github_oauth.
//   - Signed in when GH_COPILOT_TOKEN (without "=") or GITHUB_COPILOT_TOKEN is set, or once
//     authenticate {methodId: "github_oauth"} succeeded, which needs a browser: here
//     ACP_TEST_COPILOT_BROWSER=1 stands for one. Otherwise 1004 (CodeFlowFailed).
//   - nes/start: -32000 "Authentication required" (no data) when not signed in; one session per
//     connection (-32602). nes/close of the active session closes every document; of none, {}.
//   - document/*: only for the active session; a duplicate didOpen, a didChange that is stale
//     (version not above the agent's) or whose ranges are missing or invalid, a didClose of an
//     unknown document, a didFocus whose version is not the agent's: each ignored, with a line
//     on stderr. The stand-in's own fault, Config.DropChange, drops one didChange as if judged
//     stale (logged as test/droppedChange).
//   - nes/suggest: the session, then the document ("Document is not open: U"), then its version
//     ("Document version mismatch for U: expected A, received B"), all -32602; suggestions of
//     kind "edit" only, uri the request's, no cursorPosition. A new nes/suggest supersedes the
//     one in flight, which answers no suggestions.
//   - nes/reject with reason "rejected" or none counts as a rejection, any other reason as
//     ignored; accept and reject of an id this session did not suggest (or that ended already)
//     do nothing. Each reject is logged as {"method":"test/copilotReject","params":{"id": …,
//     "counted": "rejected" | "ignored" | "unknown"}}.
//
// As in the real server, whose TypeScript SDK runs each message's handler as it is read (the
// notification handlers at once, to the end), a request sees every notification sent before it.
// The Go SDK runs requests at once and queues notifications, so the tap counts them (copilotTap)
// and each request waits until that many are handled.

// copilotVersion is the version of the real server the stand-in follows.
const copilotVersion = "1.539.0"

// copilotNoBrowser is the real server's message when authenticate cannot open a browser.
const copilotNoBrowser = "OAuth code flow requires a browser but none is available: Browser not available (SSH session or headless environment). Cannot perform OAuth code flow."

// copilotCodeFlowFailed is the real server's code for a failed sign-in (CodeFlowFailed).
const copilotCodeFlowFailed = 1004

// copilotNotes are the notifications the stand-in handles in order (counted for the barrier of
// nes/suggest).
var copilotNotes = map[string]bool{
	acp.AgentMethodDocumentDidOpen: true, acp.AgentMethodDocumentDidChange: true, acp.AgentMethodDocumentDidClose: true,
	acp.AgentMethodDocumentDidSave: true, acp.AgentMethodDocumentDidFocus: true, acp.AgentMethodNesAccept: true,
	acp.AgentMethodNesReject: true,
}

// copilotState is what the stand-in keeps besides the documents (Agent.docs, Agent.versions).
// Agent.mu guards it.
type copilotState struct {
	authed  bool            // authenticate succeeded
	session *copilotSession // the active NES session, nil when none
	changes int             // didChange notifications received, for DropChange
	// The barrier of requests: notifications read from the wire (by the tap), handled, and for
	// each request read (by its method and params' text) how many notifications came before it.
	notesRead, notesDone int
	before               map[string][]int
}

type copilotSession struct {
	id          string
	suggestions map[string]bool // ids suggested and not yet accepted or rejected
	inflight    chan struct{}   // closed when a newer nes/suggest supersedes the one in flight
}

func copilotRequestError(code int, format string, args ...any) *acp.RequestError {
	return &acp.RequestError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// copilotTap counts, as the tap reads them in wire order, the notifications and what came before
// each nes/suggest. It runs on the connection's reading goroutine.
func (a *Agent) copilotTap(id json.RawMessage, method string, params json.RawMessage) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case id == nil && copilotNotes[method]:
		a.cop.notesRead++
	case id != nil:
		if a.cop.before == nil {
			a.cop.before = map[string][]int{}
		}
		k := method + "\x00" + string(params)
		a.cop.before[k] = append(a.cop.before[k], a.cop.notesRead)
	}
}

// copilotBarrier waits until the notifications sent before the request (method, params) have
// been handled (for at most 5 s).
func (a *Agent) copilotBarrier(ctx context.Context, method string, params json.RawMessage) {
	a.mu.Lock()
	k := method + "\x00" + string(params)
	q := a.cop.before[k]
	if len(q) == 0 {
		a.mu.Unlock()
		return // a notification the stand-in does not know: handled in its turn already
	}
	want := q[0]
	if len(q) == 1 {
		delete(a.cop.before, k)
	} else {
		a.cop.before[k] = q[1:]
	}
	a.mu.Unlock()
	deadline := time.NewTimer(5 * time.Second)
	defer deadline.Stop()
	for {
		a.mu.Lock()
		done, ch := a.cop.notesDone, a.changed
		a.mu.Unlock()
		if done >= want {
			return
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return
		case <-deadline.C:
			return
		}
	}
}

func (a *Agent) getenv(k string) string {
	if a.cfg.Getenv != nil {
		return a.cfg.Getenv(k)
	}
	return os.Getenv(k)
}

// warn writes one line to the stand-in's stderr, as the real server's logger does.
func (a *Agent) warn(format string, args ...any) {
	var w io.Writer = os.Stderr
	if a.cfg.Stderr != nil {
		w = a.cfg.Stderr
	}
	fmt.Fprintf(w, "[acp.nes] "+format+"\n", args...)
}

// copilotSignedIn: a token in the environment (GH_COPILOT_TOKEN only without "=", as the real
// server reads it), or a successful authenticate. a.mu is held.
func (a *Agent) copilotSignedIn() bool {
	if t := a.getenv("GH_COPILOT_TOKEN"); t != "" && !strings.Contains(t, "=") {
		return true
	}
	return a.getenv("GITHUB_COPILOT_TOKEN") != "" || a.cop.authed
}

func newSessionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// copilot answers a message as the stand-in.
func (a *Agent) copilot(ctx context.Context, method string, params json.RawMessage) (any, *acp.RequestError) {
	if !copilotNotes[method] {
		a.copilotBarrier(ctx, method, params)
	}
	if copilotNotes[method] {
		defer func() {
			a.mu.Lock()
			a.cop.notesDone++
			a.mu.Unlock()
		}()
	}
	switch method {
	case acp.AgentMethodInitialize:
		if !a.slowStart(ctx) {
			return nil, acp.NewInternalError(map[string]any{"error": "the connection ended while starting"})
		}
		// As the real server answers it, field for field.
		return map[string]any{
			"protocolVersion": acp.ProtocolVersionNumber,
			"agentCapabilities": map[string]any{
				"loadSession": false,
				"nes": map[string]any{
					"events": map[string]any{"document": map[string]any{
						"didOpen": map[string]any{}, "didChange": map[string]any{"syncKind": "incremental"},
						"didClose": map[string]any{}, "didFocus": map[string]any{},
					}},
					"context": map[string]any{"diagnostics": map[string]any{}},
				},
				"positionEncoding":   "utf-16",
				"promptCapabilities": map[string]any{"audio": false, "embeddedContext": true, "image": false},
			},
			"agentInfo": map[string]any{"name": "GitHub Copilot", "version": copilotVersion},
			"authMethods": []any{map[string]any{
				"id": "github_oauth", "name": "Sign in with GitHub", "description": "Authenticate using GitHub OAuth (opens browser)",
			}},
		}, nil
	case acp.AgentMethodAuthenticate:
		var p acp.AuthenticateRequest
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, invalid(err)
		}
		if p.MethodId != "github_oauth" {
			return nil, copilotRequestError(-32602, "Unknown authentication method: %s", p.MethodId)
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.copilotSignedIn() {
			return map[string]any{}, nil
		}
		if a.getenv("ACP_TEST_COPILOT_BROWSER") != "1" {
			return nil, copilotRequestError(copilotCodeFlowFailed, "%s", copilotNoBrowser)
		}
		a.cop.authed = true
		return map[string]any{}, nil
	case acp.AgentMethodNesStart:
		a.mu.Lock()
		defer a.mu.Unlock()
		if !a.copilotSignedIn() {
			return nil, copilotRequestError(-32000, "Authentication required")
		}
		if a.cop.session != nil {
			return nil, copilotRequestError(-32602, "Only one active NES session is supported per ACP connection")
		}
		a.cop.session = &copilotSession{id: newSessionID(), suggestions: map[string]bool{}}
		return map[string]any{"sessionId": a.cop.session.id}, nil
	case acp.AgentMethodNesClose:
		var p acp.UnstableCloseNesRequest
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, invalid(err)
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		s := a.cop.session
		if s == nil {
			return map[string]any{}, nil
		}
		if s.id != string(p.SessionId) {
			return nil, copilotRequestError(-32602, "Unknown NES session: %s", p.SessionId)
		}
		if s.inflight != nil {
			close(s.inflight)
			s.inflight = nil
		}
		// Closing the session closes every document.
		for uri := range a.docs {
			delete(a.docs, uri)
			delete(a.versions, uri)
		}
		a.cop.session = nil
		return map[string]any{}, nil
	case acp.AgentMethodDocumentDidOpen, acp.AgentMethodDocumentDidChange, acp.AgentMethodDocumentDidClose,
		acp.AgentMethodDocumentDidSave, acp.AgentMethodDocumentDidFocus:
		a.copilotDocument(method, params)
		return nil, nil
	case acp.AgentMethodNesAccept:
		var p acp.UnstableAcceptNesNotification
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, nil
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		if s := a.copilotSessionFor(string(p.SessionId)); s != nil {
			delete(s.suggestions, p.Id)
		}
		return nil, nil
	case acp.AgentMethodNesReject:
		var p acp.UnstableRejectNesNotification
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, nil
		}
		a.mu.Lock()
		s := a.copilotSessionFor(string(p.SessionId))
		counted := "unknown"
		if s != nil && s.suggestions[p.Id] {
			delete(s.suggestions, p.Id)
			counted = "ignored"
			if p.Reason == nil || *p.Reason == acp.UnstableNesRejectReasonRejected {
				counted = "rejected"
			}
		}
		a.mu.Unlock()
		b, _ := json.Marshal(map[string]any{"id": p.Id, "counted": counted})
		a.record("test/copilotReject", b)
		return nil, nil
	case acp.AgentMethodNesSuggest:
		return a.copilotSuggest(ctx, params)
	case acp.AgentMethodSessionNew, acp.AgentMethodSessionPrompt, acp.AgentMethodSessionSetMode:
		a.mu.Lock()
		signedIn := a.copilotSignedIn()
		a.mu.Unlock()
		if !signedIn {
			return nil, copilotRequestError(-32000, "Authentication required")
		}
		return nil, acp.NewInternalError(map[string]any{"error": "the Copilot stand-in has no chat sessions"})
	case acp.AgentMethodSessionCancel:
		return nil, nil
	}
	return nil, acp.NewMethodNotFound(method)
}

// copilotSessionFor is the active session when id names it; otherwise nil, said on stderr (the
// real server's sessionForNotification). a.mu is held.
func (a *Agent) copilotSessionFor(id string) *copilotSession {
	if s := a.cop.session; s != nil && s.id == id {
		return s
	}
	a.warn("Ignoring notification for unknown NES session: %s", id)
	return nil
}

// copilotDocument handles the document/* notifications.
func (a *Agent) copilotDocument(method string, params json.RawMessage) {
	var p struct {
		SessionId      string                                       `json:"sessionId"`
		Uri            string                                       `json:"uri"`
		Version        int                                          `json:"version"`
		Text           string                                       `json:"text"`
		ContentChanges []acp.UnstableTextDocumentContentChangeEvent `json:"contentChanges"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		a.warn("Ignoring malformed %s: %v", method, err)
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if method == acp.AgentMethodDocumentDidChange {
		a.cop.changes++
		if a.cop.changes == a.cfg.DropChange {
			a.warn("acp-test-agent: dropping document/didChange #%d for %s (version %d), as if judged stale (--drop-change)", a.cop.changes, p.Uri, p.Version)
			b, _ := json.Marshal(map[string]any{"n": a.cop.changes, "uri": p.Uri, "version": p.Version})
			a.mu.Unlock()
			a.record("test/droppedChange", b)
			a.mu.Lock()
			return
		}
	}
	if a.copilotSessionFor(p.SessionId) == nil {
		return
	}
	m, open := a.docs[p.Uri]
	switch method {
	case acp.AgentMethodDocumentDidOpen:
		if open {
			a.warn("Ignoring duplicate ACP document/didOpen for %s", p.Uri)
			return
		}
		a.docs[p.Uri] = encoding.NewMapper(p.Text)
		a.versions[p.Uri] = p.Version
		_ = a.mirror(p.Uri)
	case acp.AgentMethodDocumentDidChange:
		if !open || p.Version <= a.versions[p.Uri] {
			a.warn("Ignoring stale or unknown ACP document/didChange for %s", p.Uri)
			return
		}
		m2, ok := copilotApply(m, p.ContentChanges)
		if !ok {
			a.warn("Ignoring invalid ACP document/didChange for %s", p.Uri)
			return
		}
		a.docs[p.Uri] = m2
		a.versions[p.Uri] = p.Version
		_ = a.mirror(p.Uri)
	case acp.AgentMethodDocumentDidClose:
		if !open {
			a.warn("Ignoring ACP document/didClose for an unknown document: %s", p.Uri)
			return
		}
		delete(a.docs, p.Uri)
		delete(a.versions, p.Uri)
	case acp.AgentMethodDocumentDidFocus:
		if !open || a.versions[p.Uri] != p.Version {
			a.warn("Ignoring stale or unknown ACP document/didFocus for %s", p.Uri)
		}
	}
}

// copilotApply applies a didChange's changes in order, each range checked against the text the
// changes before it made (the real server's validatedChanges): every change needs a range, and
// each end of it must be a position of the text as it is (a line of the text, a character within
// that line), start not after end. ok is false when any is not.
func copilotApply(m *encoding.Mapper, changes []acp.UnstableTextDocumentContentChangeEvent) (*encoding.Mapper, bool) {
	for _, c := range changes {
		if c.Range == nil || !copilotValidPosition(m, c.Range.Start) || !copilotValidPosition(m, c.Range.End) {
			return nil, false
		}
		s, _ := m.PositionOffset(encoding.Position{Line: c.Range.Start.Line, Character: c.Range.Start.Character}, encoding.UTF16)
		e, _ := m.PositionOffset(encoding.Position{Line: c.Range.End.Line, Character: c.Range.End.Character}, encoding.UTF16)
		if s > e {
			return nil, false
		}
		m2, _, err := document.Apply(m, translate.ChangesFromACP([]acp.UnstableTextDocumentContentChangeEvent{c}), encoding.UTF16)
		if err != nil {
			return nil, false
		}
		m = m2
	}
	return m, true
}

// copilotValidPosition: p is a position of the text as vscode's TextDocument has it (offsetAt,
// then positionAt, gives p back): a line of the text, a utf-16 character no further than the
// line's end.
func copilotValidPosition(m *encoding.Mapper, p acp.UnstablePosition) bool {
	if p.Line < 0 || p.Character < 0 || p.Line >= m.LineCount() {
		return false
	}
	return p.Character <= encoding.Units(m.Slice(m.LineStart(p.Line), m.LineContentEnd(p.Line)), encoding.UTF16)
}

// copilotSuggest answers nes/suggest.
func (a *Agent) copilotSuggest(ctx context.Context, params json.RawMessage) (any, *acp.RequestError) {
	var p acp.UnstableSuggestNesRequest
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, invalid(err)
	}
	a.mu.Lock()
	if !a.copilotSignedIn() {
		a.mu.Unlock()
		return nil, copilotRequestError(-32000, "Authentication required")
	}
	s := a.cop.session
	if s == nil || s.id != string(p.SessionId) {
		a.mu.Unlock()
		return nil, copilotRequestError(-32602, "Unknown NES session: %s", p.SessionId)
	}
	m, open := a.docs[p.Uri]
	if !open {
		a.mu.Unlock()
		return nil, copilotRequestError(-32602, "Document is not open: %s", p.Uri)
	}
	if v := a.versions[p.Uri]; v != p.Version {
		a.mu.Unlock()
		return nil, copilotRequestError(-32602, "Document version mismatch for %s: expected %d, received %d", p.Uri, v, p.Version)
	}
	// A new request supersedes the one in flight.
	if s.inflight != nil {
		close(s.inflight)
	}
	superseded := make(chan struct{})
	s.inflight = superseded
	a.suggests++
	a.mu.Unlock()
	none := map[string]any{"suggestions": []any{}}
	if a.cfg.SuggestDelay > 0 {
		t := time.NewTimer(a.cfg.SuggestDelay)
		select {
		case <-t.C:
		case <-superseded:
			t.Stop()
			return none, nil
		case <-ctx.Done():
			t.Stop()
			return nil, acp.NewRequestCancelled(nil)
		}
	}
	res := a.suggestByRules(p, m.Text())
	a.mu.Lock()
	defer a.mu.Unlock()
	if s.inflight == superseded {
		s.inflight = nil
	}
	select {
	case <-superseded:
		return none, nil // a newer request, or nes/close, came meanwhile
	default:
	}
	if a.cop.session != s {
		return none, nil
	}
	sugs, _ := res["suggestions"].([]any)
	for _, x := range sugs {
		if sug, ok := x.(map[string]any); ok {
			s.suggestions[sug["id"].(string)] = true
		}
	}
	return res, nil
}
