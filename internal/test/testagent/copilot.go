package testagent

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	acp "github.com/coder/acp-go-sdk"
	"go.lsp.dev/jsonrpc2"

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
//   - Signed in when GH_COPILOT_TOKEN (without "=") or GITHUB_COPILOT_TOKEN is set, when its store
//     holds a sign-in (read at each check, so a sign-in the LSP mode saved counts at the next
//     nes/start), or once authenticate {methodId: "github_oauth"} succeeded, which needs a
//     browser: here ACP_TEST_COPILOT_BROWSER=1 stands for one. Otherwise 1004 (CodeFlowFailed).
//     authenticate succeeds at once, without a browser, when already signed in.
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
//
// The same program has an LSP mode (`copilot-language-server --stdio`, here ServeLSP), where it
// offers GitHub's device flow; see "The stand-in's LSP mode" below.

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
	lsp                  copilotLSPState // the LSP mode's
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
// server reads it), a successful authenticate, or a sign-in saved in the store (read each time,
// as the real server does at each nes/start). a.mu is held.
func (a *Agent) copilotSignedIn() bool {
	if t := a.getenv("GH_COPILOT_TOKEN"); t != "" && !strings.Contains(t, "=") {
		return true
	}
	if a.getenv("GITHUB_COPILOT_TOKEN") != "" || a.cop.authed {
		return true
	}
	_, saved := a.copilotStoredUser()
	return saved
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

// The stand-in's LSP mode: what `copilot-language-server --stdio` 1.539.0 does for a sign-in with
// a code (GitHub's device flow), read from its dist/main.js (handleSignInInitiateChecked, the
// FinishDeviceFlowCommand) and from its answers here, offline. It speaks LSP (Content-Length
// frames) and answers:
//
//   - initialize with the real server's capabilities and serverInfo; initialized (then a
//     window/logMessage, as the real server says it is initialized), shutdown (null), exit (the
//     process ends: status 0 after shutdown, 1 without).
//   - signInInitiate {}: {status: "AlreadySignedIn", user} when the store holds a sign-in;
//     without ACP_TEST_COPILOT_CODE_ENTERED, error 1001 (DeviceFlowFailed), the real server's
//     message offline (GitHub not reached); otherwise {status: "PromptUserDeviceFlow", userCode
//     "WXYZ-1234", verificationUri, expiresIn 900, interval 5, command finishDeviceFlow}.
//   - workspace/executeCommand github.copilot.finishDeviceFlow: with no sign-in pending, -32600
//     "No pending sign in"; otherwise it first asks the client to open the address
//     (window/showDocument {uri, external: true}; the answer is logged as
//     test/showDocumentAnswer, and whatever it is the flow goes on, as in the real server), then
//     waits until the file ACP_TEST_COPILOT_CODE_ENTERED names exists (the test's stand-in for the
//     user entering the code on another device; the real server polls GitHub), saves the sign-in
//     in the store and answers {status: "OK", user: "octocat"}. Past expiresIn it fails (1001).
//     $/cancelRequest ends the wait (-32800).
//
// Every message received is logged (Config.Log) as in the ACP mode: method and params.

const (
	// CopilotUserCode is the code the stand-in's device flow shows, and CopilotUser the account
	// it signs in.
	CopilotUserCode = "WXYZ-1234"
	CopilotUser     = "octocat"
	// CopilotCodeEnteredEnv names the file whose existence means the user entered the code.
	CopilotCodeEnteredEnv = "ACP_TEST_COPILOT_CODE_ENTERED"

	copilotDeviceURI        = "https://github.com/login/device"
	copilotFinishDeviceFlow = "github.copilot.finishDeviceFlow"
	copilotDeviceExpiresIn  = 900 // seconds
	copilotDeviceInterval   = 5   // seconds
	// copilotDeviceFlowFailed is the real server's code for a failed device flow
	// (DeviceFlowFailed), and copilotOffline its message when GitHub cannot be reached.
	copilotDeviceFlowFailed = 1001
	copilotOffline          = "Could not log in with device flow on https://github.com/: getaddrinfo ENOTFOUND github.com"
	// copilotAppKey is the key of a sign-in in the store's apps.json: the host and the OAuth
	// app's client id.
	copilotAppKey = "github.com:Iv1.b507a08c87ecfe98"
	// copilotRequestCancelled is LSP's code for a cancelled request.
	copilotRequestCancelled jsonrpc2.Code = -32800
	// copilotPoll is how often the wait for the code looks for the file.
	copilotPoll = 50 * time.Millisecond
)

// copilotLSPState is the LSP mode's state (in copilotState; Agent.mu guards it).
type copilotLSPState struct {
	initialized, shutdown bool
	pending               bool // a device flow was started (signInInitiate) and not finished
}

// copilotStoreDir is the real server's folder of saved sign-ins: under XDG_CONFIG_HOME when it is
// absolute, else %USERPROFILE%\AppData\Local on Windows and $HOME/.config elsewhere; "" when
// neither is set (a test's environment: never the machine's own store).
func (a *Agent) copilotStoreDir() string {
	if x := a.getenv("XDG_CONFIG_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "github-copilot")
	}
	if runtime.GOOS == "windows" {
		if h := a.getenv("USERPROFILE"); h != "" {
			return filepath.Join(h, "AppData", "Local", "github-copilot")
		}
		return ""
	}
	if h := a.getenv("HOME"); h != "" {
		return filepath.Join(h, ".config", "github-copilot")
	}
	return ""
}

// copilotStoredUser is the account of a sign-in saved in the store: an entry of apps.json (or of
// hosts.json, as older versions wrote it) with an oauth_token, the OAuth app's own first.
func (a *Agent) copilotStoredUser() (string, bool) {
	dir := a.copilotStoreDir()
	if dir == "" {
		return "", false
	}
	for _, f := range []string{"apps.json", "hosts.json"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			continue
		}
		var entries map[string]struct {
			User       string `json:"user"`
			OAuthToken string `json:"oauth_token"`
		}
		if json.Unmarshal(b, &entries) != nil {
			continue
		}
		if e, ok := entries[copilotAppKey]; ok && e.OAuthToken != "" {
			return e.User, true
		}
		keys := make([]string, 0, len(entries))
		for k := range entries {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if e := entries[k]; e.OAuthToken != "" {
				return e.User, true
			}
		}
	}
	return "", false
}

// copilotSave saves the device flow's sign-in in the store, as the real server does once GitHub
// gave it a token.
func (a *Agent) copilotSave() error {
	dir := a.copilotStoreDir()
	if dir == "" {
		return errors.New("no store: neither XDG_CONFIG_HOME (absolute) nor HOME is set")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	b, _ := json.Marshal(map[string]any{copilotAppKey: map[string]any{
		"user": CopilotUser, "oauth_token": "gho_test", "githubAppId": "Iv1.b507a08c87ecfe98",
	}})
	tmp := filepath.Join(dir, "apps.json.tmp")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, "apps.json")) // whole, for the ACP mode reading it
}

// lspStream is the LSP mode's stdio as one stream.
type lspStream struct {
	io.Reader
	io.Writer
}

func (s lspStream) Close() error {
	var err error
	if c, ok := s.Writer.(io.Closer); ok {
		err = c.Close()
	}
	if c, ok := s.Reader.(io.Closer); ok {
		_ = c.Close()
	}
	return err
}

// ServeLSP speaks the stand-in's LSP mode (copilot-language-server --stdio) on r (what the client
// writes) and w until exit or the end of r, and returns the status the process exits with: 0
// after shutdown and exit, or when r ended; 1 for an exit without shutdown (as LSP asks).
//
// The handlers use the mode's own context, never the request's: the connection pools its request
// contexts, and a context derived from one (or a wait on it) could outlive the request.
func (a *Agent) ServeLSP(r io.Reader, w io.Writer) int {
	conn := jsonrpc2.NewConn(jsonrpc2.NewStream(lspStream{r, w}))
	base, end := context.WithCancel(context.Background()) // ends when the mode does
	exited := make(chan struct{})
	var exitOnce sync.Once
	var mu sync.Mutex
	waiting := map[string]context.CancelFunc{} // the requests that wait, by id (%q), for $/cancelRequest
	conn.Go(base, func(ctx context.Context, req *jsonrpc2.Request) (any, error) {
		// Logged in wire order, as it is read.
		a.record(req.Method(), json.RawMessage(req.Params()))
		switch req.Method() {
		case "exit":
			exitOnce.Do(func() { close(exited) })
			return nil, nil
		case "$/cancelRequest":
			var p struct {
				ID any `json:"id"`
			}
			_ = json.Unmarshal(req.Params(), &p)
			var id jsonrpc2.ID
			switch v := p.ID.(type) {
			case float64:
				id = jsonrpc2.NewNumberID(int64(v))
			case string:
				id = jsonrpc2.NewStringID(v)
			}
			mu.Lock()
			if cancel := waiting[fmt.Sprintf("%q", id)]; cancel != nil {
				cancel()
			}
			mu.Unlock()
			return nil, nil
		}
		rctx := base
		if req.IsCall() {
			key := fmt.Sprintf("%q", req.ID())
			var cancel context.CancelFunc
			rctx, cancel = context.WithCancel(base)
			mu.Lock()
			waiting[key] = cancel
			mu.Unlock()
			defer func() {
				mu.Lock()
				delete(waiting, key)
				mu.Unlock()
				cancel()
			}()
		}
		res, err := a.copilotLSP(ctx, rctx, conn, req)
		if !req.IsCall() {
			return nil, nil // a notification's error would end the connection
		}
		return res, err
	})
	select {
	case <-conn.Done():
	case <-exited:
	}
	end()
	_ = conn.Close()
	a.mu.Lock()
	defer a.mu.Unlock()
	select {
	case <-exited:
		if !a.cop.lsp.shutdown {
			return 1
		}
	default:
	}
	return 0
}

// copilotLSP answers one LSP message (exit and $/cancelRequest aside). reqCtx is the
// connection's, for Async only; ctx ends when the request is cancelled or the mode ends.
func (a *Agent) copilotLSP(reqCtx, ctx context.Context, conn jsonrpc2.Conn, req *jsonrpc2.Request) (any, error) {
	method := req.Method()
	a.mu.Lock()
	st := a.cop.lsp
	a.mu.Unlock()
	if req.IsCall() && method != "initialize" && !st.initialized {
		return nil, jsonrpc2.NewError(jsonrpc2.ServerNotInitialized, "Server not initialized")
	}
	if req.IsCall() && st.shutdown {
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, "Server is shutting down")
	}
	switch method {
	case "initialize":
		a.mu.Lock()
		a.cop.lsp.initialized = true
		a.mu.Unlock()
		// As the real server answers it (but nodeVersion).
		return map[string]any{
			"capabilities": map[string]any{
				"textDocumentSync":     map[string]any{"openClose": true, "change": 2},
				"notebookDocumentSync": map[string]any{"notebookSelector": []any{map[string]any{"notebook": "*"}}},
				"workspace":            map[string]any{"workspaceFolders": map[string]any{"supported": false, "changeNotifications": false}},
				"executeCommandProvider": map[string]any{"commands": []string{
					copilotFinishDeviceFlow, "github.copilot.didAcceptCompletionItem", "github.copilot.didAcceptNextEditSuggestionItem",
					"github.copilot.didRejectNextEditSuggestionItem", "github.copilot.didIgnoreNextEditSuggestionItem", "github.copilot.didAcceptPanelCompletionItem",
				}},
				"inlineCompletionProvider": map[string]any{},
			},
			"serverInfo": map[string]any{"name": "GitHub Copilot Language Server", "version": copilotVersion},
		}, nil
	case "initialized":
		_ = conn.Notify(ctx, "window/logMessage", map[string]any{"type": 3, "message": "[lsp] GitHub Copilot Language Server " + copilotVersion + " initialized"})
		return nil, nil
	case "shutdown":
		a.mu.Lock()
		a.cop.lsp.shutdown = true
		a.mu.Unlock()
		return nil, nil
	case "signInInitiate":
		a.mu.Lock()
		defer a.mu.Unlock()
		if user, ok := a.copilotStoredUser(); ok {
			return map[string]any{"status": "AlreadySignedIn", "user": user}, nil
		}
		if a.getenv(CopilotCodeEnteredEnv) == "" {
			return nil, jsonrpc2.NewError(copilotDeviceFlowFailed, copilotOffline)
		}
		a.cop.lsp.pending = true
		return map[string]any{
			"status": "PromptUserDeviceFlow", "userCode": CopilotUserCode, "verificationUri": copilotDeviceURI,
			"expiresIn": copilotDeviceExpiresIn, "interval": copilotDeviceInterval,
			"command": map[string]any{"command": copilotFinishDeviceFlow, "title": "Sign in with GitHub", "arguments": []any{}},
		}, nil
	case "workspace/executeCommand":
		var p struct {
			Command string `json:"command"`
		}
		if err := json.Unmarshal(req.Params(), &p); err != nil {
			return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "%v", err)
		}
		if p.Command != copilotFinishDeviceFlow {
			return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "Unknown command: %s", p.Command)
		}
		jsonrpc2.Async(reqCtx) // it asks the client, and waits: the connection reads on meanwhile
		return a.copilotFinishDeviceFlow(ctx, conn)
	}
	if req.IsCall() {
		return nil, jsonrpc2.Errorf(jsonrpc2.MethodNotFound, "Unhandled method %s", method)
	}
	return nil, nil
}

// copilotFinishDeviceFlow runs finishDeviceFlow: the address shown to the client, then the wait
// for the code, then the sign-in saved.
func (a *Agent) copilotFinishDeviceFlow(ctx context.Context, conn jsonrpc2.Conn) (any, error) {
	a.mu.Lock()
	pending := a.cop.lsp.pending
	a.mu.Unlock()
	if !pending {
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, "No pending sign in")
	}
	defer func() {
		a.mu.Lock()
		a.cop.lsp.pending = false
		a.mu.Unlock()
	}()
	var answer json.RawMessage
	if _, err := conn.Call(ctx, "window/showDocument", map[string]any{"uri": copilotDeviceURI, "external": true}, &answer); err != nil {
		answer, _ = json.Marshal(map[string]any{"error": err.Error()})
		a.warn("Failed to open %s", copilotDeviceURI)
	}
	a.record("test/showDocumentAnswer", answer)
	file := a.getenv(CopilotCodeEnteredEnv)
	expired := time.NewTimer(copilotDeviceExpiresIn * time.Second)
	defer expired.Stop()
	tick := time.NewTicker(copilotPoll)
	defer tick.Stop()
	for {
		if _, err := os.Stat(file); err == nil {
			break
		}
		select {
		case <-tick.C:
		case <-expired.C:
			return nil, jsonrpc2.NewError(copilotDeviceFlowFailed, "Error: the device code expired")
		case <-ctx.Done():
			return nil, jsonrpc2.NewError(copilotRequestCancelled, "Request cancelled")
		}
	}
	if err := a.copilotSave(); err != nil {
		return nil, jsonrpc2.Errorf(copilotDeviceFlowFailed, "Error: %v", err)
	}
	return map[string]any{"status": "OK", "user": CopilotUser}, nil
}
