package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// contextAgent returns node and testdata/peers/context-agent.mjs, an agent written with the
// official ACP SDK that records the nes/suggest context it gets (see the script).
func contextAgent(t *testing.T) (node, script string) {
	t.Helper()
	if os.Getenv("PEERS_NODE_MODULES") == "" {
		skipWithoutPeer(t, "PEERS_NODE_MODULES is not set (eval \"$(../shared/tools/install-test-peers.sh)\")")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		skipWithoutPeer(t, "node is not on PATH")
	}
	return node, filepath.Join(moduleRoot(t), "testdata", "peers", "context-agent.mjs")
}

// ctxLogLine is a line of context-agent.mjs's log.
type ctxLogLine struct {
	Kind     string          `json:"kind"`
	Seq      int             `json:"seq"`
	Event    string          `json:"event"`
	Method   string          `json:"method"`
	Params   json.RawMessage `json:"params"`
	Raw      json.RawMessage `json:"raw"`
	Result   json.RawMessage `json:"result"`
	Error    *ctxRPCError    `json:"error"`
	Mirror   *string         `json:"mirror"`
	Ask      bool            `json:"ask"`
	SDKError json.RawMessage `json:"sdkError"`
	Issue    string          `json:"issue"`
	line     string
}

type ctxRPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

func readContextLog(t *testing.T, path string) []ctxLogLine {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []ctxLogLine
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 4<<20)
	for sc.Scan() {
		var l ctxLogLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("agent log line %q: %v", sc.Text(), err)
		}
		l.line = sc.Text()
		out = append(out, l)
	}
	return out
}

// The nes/suggest params as the agent's handler received them (what the SDK validated).
type ctxPos struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

type ctxRange struct {
	Start ctxPos `json:"start"`
	End   ctxPos `json:"end"`
}

type ctxDocRef struct {
	URI        string `json:"uri"`
	LanguageID string `json:"languageId"`
}

type ctxSuggest struct {
	SessionID   string `json:"sessionId"`
	URI         string `json:"uri"`
	Version     int    `json:"version"`
	Position    ctxPos `json:"position"`
	TriggerKind string `json:"triggerKind"`
	Context     *struct {
		RecentFiles []struct {
			URI        string `json:"uri"`
			LanguageID string `json:"languageId"`
			Text       string `json:"text"`
		} `json:"recentFiles"`
		RelatedSnippets []struct {
			URI      string `json:"uri"`
			Excerpts []struct {
				StartLine int    `json:"startLine"`
				EndLine   int    `json:"endLine"`
				Text      string `json:"text"`
			} `json:"excerpts"`
		} `json:"relatedSnippets"`
		EditHistory []struct {
			URI  string `json:"uri"`
			Diff string `json:"diff"`
		} `json:"editHistory"`
		UserActions []struct {
			Action      string  `json:"action"`
			URI         string  `json:"uri"`
			Position    ctxPos  `json:"position"`
			TimestampMs float64 `json:"timestampMs"`
		} `json:"userActions"`
		OpenFiles []struct {
			URI           string    `json:"uri"`
			LanguageID    string    `json:"languageId"`
			VisibleRange  *ctxRange `json:"visibleRange"`
			LastFocusedMs *float64  `json:"lastFocusedMs"`
		} `json:"openFiles"`
		Diagnostics []struct {
			URI      string   `json:"uri"`
			Range    ctxRange `json:"range"`
			Severity string   `json:"severity"`
			Message  string   `json:"message"`
		} `json:"diagnostics"`
	} `json:"context"`
}

// TestSDKPeerContext drives the real bridge binary as an editor would, with an agent written with
// the official ACP SDK (testdata/peers/context-agent.mjs), and checks, from the agent's own log,
// the context of nes/suggest an agent author gets for a scripted editing session, and the answers
// to the agent's calls to the client (editor state, files, permission).
//
// The agent works in utf-16. The editor offers only utf-16 in one run, so what it sends reaches
// the agent unchanged, and only utf-8 in the other, so that every position (changes, focus,
// requests, diagnostics) is converted, across "日本": the agent must see the same either way.
func TestSDKPeerContext(t *testing.T) {
	node, script := contextAgent(t)
	for _, enc := range []string{"utf-16", "utf-8"} {
		t.Run("editor-"+enc, func(t *testing.T) {
			t.Parallel()
			runContextSession(t, node, script, enc)
		})
	}
}

func runContextSession(t *testing.T, node, script, editorEnc string) {
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	elsewhere, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	agentLog := filepath.Join(elsewhere, "agent.jsonl")
	outside := filepath.Join(elsewhere, "outside.txt")
	notes := filepath.Join(ws, "notes.txt")

	aText := "package b\n\n// Compute doubles x.\nfunc Compute(x int) int {\n\treturn 2 * x\n}\n"
	var bb strings.Builder
	bb.WriteString("package b\n\nvar s = \"日本\"\n\n// ASK the agent what the editor knows\n")
	for i := 5; i < 40; i++ {
		fmt.Fprintf(&bb, "var v%d = %d\n", i, i)
	}
	bText := bb.String()
	for name, text := range map[string]string{
		filepath.Join(ws, "a.go"): aText, filepath.Join(ws, "b.go"): bText,
		notes: "notes on disk\n", outside: "secret\n",
	} {
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	root := fileURI(ws)
	aURI, bURI := root+"/a.go", root+"/b.go"

	// col converts a column of line 2 of b.go from utf-16 to the editor's encoding: the line
	// starts with `var s = "日本"`, 12 utf-16 units and 16 utf-8 bytes.
	col := func(utf16 int) int {
		if editorEnc == "utf-8" && utf16 >= 11 {
			return utf16 + 4
		}
		return utf16
	}

	b := startBridge(t)
	var asked struct {
		sync.Mutex
		message string
		titles  []string
	}
	b.setAnswer(func(message string, titles []string) string {
		asked.Lock()
		defer asked.Unlock()
		asked.message, asked.titles = message, titles
		if len(titles) == 0 {
			return ""
		}
		return titles[0]
	})
	reads, _ := json.Marshal([]string{outside, notes})
	init := b.InitializeWith(fakeeditor.InitParams{Root: root, ProcessID: os.Getpid(), Encodings: []string{editorEnc},
		Options: map[string]any{"agent": map[string]any{
			"command": node, "args": []string{script},
			"env": map[string]string{"CONTEXT_AGENT_LOG": agentLog, "CONTEXT_AGENT_READS": string(reads)},
		}}})
	if init.Capabilities.PositionEncoding != editorEnc {
		t.Fatalf("positionEncoding %q, want %q (the only one offered)", init.Capabilities.PositionEncoding, editorEnc)
	}
	b.waitMessage("context-test-agent is ready")

	pos := func(line, character int) map[string]any { return map[string]any{"line": line, "character": character} }
	doc := func(uri string) map[string]any { return map[string]any{"uri": uri} }
	b.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": aURI, "languageId": "go", "version": 1, "text": aText}})
	b.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": bURI, "languageId": "go", "version": 1, "text": bText}})
	b.Notify("acp-lsp-bridge/didFocus", map[string]any{"textDocument": doc(aURI), "position": pos(3, 5),
		"visibleRange": map[string]any{"start": pos(0, 0), "end": pos(3, 0)}})
	b.Notify("acp-lsp-bridge/didFocus", map[string]any{"textDocument": doc(bURI), "position": pos(2, col(12))})
	version := 1
	change := func(line, character int, text string) {
		version++
		b.Notify("textDocument/didChange", map[string]any{
			"textDocument": map[string]any{"uri": bURI, "version": version},
			"contentChanges": []any{map[string]any{
				"range": map[string]any{"start": pos(line, character), "end": pos(line, character)}, "text": text,
			}},
		})
	}
	// An edit 31 lines below the typing, first: a history entry of its own.
	change(33, len("var v33 = 33"), "0")
	// Type a statement after the string, one character at a time.
	typed := "; var y = Compute(1)"
	for i, r := range typed {
		change(2, col(12+i), string(r))
	}
	end16 := 12 + len(typed) // utf-16 column after the typing
	// The editor's diagnostic on "Compute", in its own encoding.
	b.Notify("acp-lsp-bridge/diagnostics", map[string]any{"textDocument": doc(bURI), "diagnostics": []any{map[string]any{
		"range": map[string]any{"start": pos(2, col(22)), "end": pos(2, col(29))}, "severity": 1, "message": "undefined: Compute",
	}}})
	inline := func(p map[string]any) {
		t.Helper()
		var res struct {
			Items []any `json:"items"`
		}
		if err := b.Call("textDocument/inlineCompletion", map[string]any{
			"textDocument": doc(bURI), "position": p, "context": map[string]any{"triggerKind": 1},
		}, &res); err != nil {
			t.Fatalf("inlineCompletion: %v", err)
		}
		if len(res.Items) != 0 {
			t.Errorf("items %v; the agent suggests nothing", res.Items)
		}
	}
	inline(pos(2, col(end16)))
	// On the ASK line the agent calls the client before it answers.
	inline(pos(4, len("// ASK")))
	if err := b.Call("shutdown", nil, nil); err != nil {
		t.Fatal(err)
	}
	b.Notify("exit", nil)
	if code := b.exitCode(); code != 0 {
		t.Errorf("exit code %d after shutdown and exit, want 0", code)
	}

	lines := readContextLog(t, agentLog)
	defer func() {
		if t.Failed() {
			data, _ := os.ReadFile(agentLog)
			t.Logf("agent log:\n%s", data)
		}
	}()
	var suggests, clientCalls, focus []ctxLogLine
	closed := false
	for _, l := range lines {
		switch {
		case l.SDKError != nil:
			t.Errorf("the SDK reported or rejected something the bridge sent: %s", l.line)
		case l.Issue != "":
			t.Errorf("the agent found a problem: %s", l.line)
		case l.Kind == "initialize":
			var p struct {
				ClientCapabilities struct {
					Fs        struct{ ReadTextFile bool } `json:"fs"`
					Workspace map[string]json.RawMessage  `json:"workspace"`
				} `json:"clientCapabilities"`
			}
			_ = json.Unmarshal(l.Raw, &p)
			if !p.ClientCapabilities.Fs.ReadTextFile || len(p.ClientCapabilities.Workspace) != 3 {
				t.Errorf("initialize %s: want fs.readTextFile and workspace {openDocuments, recentDocuments, activeDocument}", l.Raw)
			}
		case l.Kind == "suggest":
			suggests = append(suggests, l)
		case l.Kind == "client":
			clientCalls = append(clientCalls, l)
		case l.Kind == "close":
			closed = true
		case l.Kind == "notification" && l.Method == "document/didFocus":
			focus = append(focus, l)
		}
	}
	if !closed {
		t.Error("the agent never got nes/close")
	}

	// document/didFocus for a.go, with the visible lines, then for b.go (in wire order: the SDK
	// may run the handlers of one chunk out of order).
	sort.SliceStable(focus, func(i, j int) bool { return focus[i].Seq < focus[j].Seq })
	var focused []string
	for _, l := range focus {
		var p struct {
			URI          string   `json:"uri"`
			Position     ctxPos   `json:"position"`
			VisibleRange ctxRange `json:"visibleRange"`
		}
		_ = json.Unmarshal(l.Params, &p)
		focused = append(focused, p.URI)
		if p.URI == aURI && (p.Position != ctxPos{3, 5} || p.VisibleRange.Start != ctxPos{0, 0} || p.VisibleRange.End.Line != 3) {
			t.Errorf("document/didFocus %s: want position 3:5 and lines 0–3 visible", l.Params)
		}
		if p.URI == bURI && (p.Position != ctxPos{2, 12}) {
			t.Errorf("document/didFocus %s: want position 2:12 (utf-16)", l.Params)
		}
	}
	if !slices.Equal(focused, []string{aURI, bURI}) {
		t.Errorf("document/didFocus for %q, want a.go then b.go", focused)
	}

	if len(suggests) != 2 {
		t.Fatalf("%d nes/suggest, want 2", len(suggests))
	}
	// Only the keys the agent asked for, on the wire (the SDK's parse would drop others); in the
	// first request, all of them.
	asked6 := []string{"diagnostics", "editHistory", "openFiles", "recentFiles", "relatedSnippets", "userActions"}
	for i, l := range suggests {
		var raw struct {
			Context map[string]json.RawMessage `json:"context"`
		}
		if err := json.Unmarshal(l.Raw, &raw); err != nil {
			t.Fatal(err)
		}
		var keys []string
		for k := range raw.Context {
			keys = append(keys, k)
			if !slices.Contains(asked6, k) {
				t.Errorf("nes/suggest %d: context key %q, which the agent did not ask for", i+1, k)
			}
		}
		sort.Strings(keys)
		if i == 0 && !slices.Equal(keys, asked6) {
			t.Errorf("context keys %q, want exactly %q", keys, asked6)
		}
	}
	first := suggests[0]
	var p ctxSuggest
	if err := json.Unmarshal(first.Params, &p); err != nil {
		t.Fatal(err)
	}
	wantB := strings.Replace(bText, "var v33 = 33\n", "var v33 = 330\n", 1)
	wantB = strings.Replace(wantB, "var s = \"日本\"\n", "var s = \"日本\""+typed+"\n", 1)
	if first.Ask || p.URI != bURI || p.Version != version || p.Position != (ctxPos{2, end16}) || p.TriggerKind != "manual" {
		t.Errorf("nes/suggest %s: want b.go version %d at 2:%d (utf-16), manual", first.Params, version, end16)
	}
	if first.Mirror == nil || *first.Mirror != wantB {
		t.Errorf("the agent's text of b.go from the document events:\n%v\nwant:\n%s", first.Mirror, wantB)
	}
	c := p.Context
	if c == nil {
		t.Fatalf("nes/suggest without context: %s", first.Params)
	}
	if n := len(c.RecentFiles); n < 1 || n > 2 || c.RecentFiles[0].URI != aURI || c.RecentFiles[0].LanguageID != "go" || c.RecentFiles[0].Text != aText {
		t.Errorf("recentFiles %+v: want at most 2 (maxCount), a.go first with its text", c.RecentFiles)
	}
	for _, f := range c.RecentFiles {
		if f.URI == bURI {
			t.Errorf("recentFiles lists b.go, the document of the request")
		}
	}
	wantHistory := []string{
		"--- a/b.go\n+++ b/b.go\n@@ -34,1 +34,1 @@\n-var v33 = 33\n+var v33 = 330\n",
		"--- a/b.go\n+++ b/b.go\n@@ -3,1 +3,1 @@\n-var s = \"日本\"\n+var s = \"日本\"" + typed + "\n",
	}
	var history []string
	for _, e := range c.EditHistory {
		history = append(history, e.Diff)
		if e.URI != bURI {
			t.Errorf("editHistory entry of %s, want b.go", e.URI)
		}
	}
	if !slices.Equal(history, wantHistory) {
		t.Errorf("editHistory diffs %q,\nwant the far edit, then the typing as one entry: %q", history, wantHistory)
	}
	if len(c.UserActions) != 5 {
		t.Errorf("userActions %+v: want exactly 5 (maxCount)", c.UserActions)
	} else {
		for i, a := range c.UserActions {
			want := ctxPos{2, end16 - 4 + i}
			if a.Action != "insertChar" || a.URI != bURI || a.Position != want {
				t.Errorf("userActions[%d] %+v: want insertChar in b.go at %d:%d (utf-16)", i, a, want.Line, want.Character)
			}
			if i > 0 && a.TimestampMs < c.UserActions[i-1].TimestampMs {
				t.Errorf("userActions[%d] at %v ms, before the previous one at %v ms", i, a.TimestampMs, c.UserActions[i-1].TimestampMs)
			}
		}
	}
	if len(c.Diagnostics) != 1 || c.Diagnostics[0].URI != bURI || c.Diagnostics[0].Range != (ctxRange{ctxPos{2, 22}, ctxPos{2, 29}}) ||
		c.Diagnostics[0].Severity != "error" || c.Diagnostics[0].Message != "undefined: Compute" {
		t.Errorf("diagnostics %+v: want the editor's, on Compute at 2:22–2:29 (utf-16), severity error", c.Diagnostics)
	}
	if len(c.OpenFiles) != 2 || c.OpenFiles[0].URI != bURI || c.OpenFiles[1].URI != aURI {
		t.Errorf("openFiles %+v: want b.go (focused last), then a.go", c.OpenFiles)
	} else {
		fa, fb := c.OpenFiles[1], c.OpenFiles[0]
		if fa.LanguageID != "go" || fb.LanguageID != "go" {
			t.Errorf("openFiles languageIds %q %q, want go", fa.LanguageID, fb.LanguageID)
		}
		if fa.VisibleRange == nil || fa.VisibleRange.Start != (ctxPos{0, 0}) || fa.VisibleRange.End.Line != 3 {
			t.Errorf("openFiles a.go visibleRange %+v, want lines 0–3", fa.VisibleRange)
		}
		if fa.LastFocusedMs == nil || fb.LastFocusedMs == nil || *fb.LastFocusedMs < *fa.LastFocusedMs {
			t.Errorf("openFiles lastFocusedMs a.go %v b.go %v: want both, b.go's not before a.go's", fa.LastFocusedMs, fb.LastFocusedMs)
		}
	}
	found := false
	for _, s := range c.RelatedSnippets {
		for _, e := range s.Excerpts {
			if s.URI == aURI && strings.Contains(e.Text, "func Compute(x int) int {") {
				found = true
			}
		}
	}
	if !found {
		t.Errorf("relatedSnippets %+v: want the definition of Compute in a.go", c.RelatedSnippets)
	}

	// The second request, on the ASK line: the calls to the client and their answers.
	var p2 ctxSuggest
	_ = json.Unmarshal(suggests[1].Params, &p2)
	if !suggests[1].Ask || p2.Position != (ctxPos{4, 6}) {
		t.Errorf("second nes/suggest %s: want the ASK line, 4:6", suggests[1].Params)
	}
	var methods []string
	for _, l := range clientCalls {
		methods = append(methods, l.Method)
	}
	wantMethods := []string{"workspace/open_documents", "workspace/recent_documents", "workspace/active_document",
		"fs/read_text_file", "fs/read_text_file", "fs/read_text_file", "session/request_permission"}
	if !slices.Equal(methods, wantMethods) {
		t.Fatalf("the agent's calls %q, want %q", methods, wantMethods)
	}
	ok := func(l ctxLogLine, v any) bool {
		t.Helper()
		if l.Error != nil {
			t.Errorf("%s %s: error %+v", l.Method, l.Params, l.Error)
			return false
		}
		if err := json.Unmarshal(l.Result, v); err != nil {
			t.Errorf("%s result %s: %v", l.Method, l.Result, err)
			return false
		}
		return true
	}
	var docs struct {
		Documents []ctxDocRef `json:"documents"`
	}
	if ok(clientCalls[0], &docs) {
		got := slices.Clone(docs.Documents)
		sort.Slice(got, func(i, j int) bool { return got[i].URI < got[j].URI })
		if want := []ctxDocRef{{aURI, "go"}, {bURI, "go"}}; !slices.Equal(got, want) {
			t.Errorf("workspace/open_documents %s, want a.go and b.go (go)", clientCalls[0].Result)
		}
	}
	docs.Documents = nil
	if ok(clientCalls[1], &docs) && !slices.Equal(docs.Documents, []ctxDocRef{{bURI, "go"}}) {
		t.Errorf("workspace/recent_documents {limit: 1} %s, want exactly b.go", clientCalls[1].Result)
	}
	var active struct {
		Document *ctxDocRef `json:"document"`
	}
	if ok(clientCalls[2], &active) && (active.Document == nil || *active.Document != ctxDocRef{bURI, "go"}) {
		t.Errorf("workspace/active_document %s, want b.go", clientCalls[2].Result)
	}
	var content struct {
		Content string `json:"content"`
	}
	if ok(clientCalls[3], &content) && content.Content != wantB {
		t.Errorf("fs/read_text_file of b.go %q, want the unsaved buffer %q", content.Content, wantB)
	}
	if e := clientCalls[4].Error; e == nil || !strings.Contains(string(clientCalls[4].Params), "outside.txt") {
		t.Errorf("fs/read_text_file %s outside the workspace: result %s error %+v, want an error", clientCalls[4].Params, clientCalls[4].Result, e)
	} else if strings.Contains(string(clientCalls[4].Result)+e.Message+string(e.Data), "secret") {
		t.Errorf("fs/read_text_file outside the workspace leaked the file: %+v", e)
	}
	content.Content = ""
	if ok(clientCalls[5], &content) && content.Content != "notes on disk\n" {
		t.Errorf("fs/read_text_file of notes.txt (not open) %q, want the text on disk", content.Content)
	}
	var perm struct {
		Outcome map[string]any `json:"outcome"`
	}
	if ok(clientCalls[6], &perm) && !reflect.DeepEqual(perm.Outcome, map[string]any{"outcome": "selected", "optionId": "allow-once"}) {
		t.Errorf("session/request_permission %s, want selected allow-once (the first option, which the user picked)", clientCalls[6].Result)
	}
	asked.Lock()
	defer asked.Unlock()
	if !slices.Equal(asked.titles, []string{"Allow once", "Reject"}) || !strings.Contains(asked.message, "context-test-agent") || !strings.Contains(asked.message, "Read the workspace") {
		t.Errorf("the editor was asked %q with %q: want the agent, the tool call's title, and both options", asked.message, asked.titles)
	}
}

// TestSDKPeerContextAgentReports checks the guard the test above relies on: context-agent.mjs logs
// an sdkError when the SDK rejects a nes/suggest (a malformed context entry), when its parse drops
// a malformed value (a visibleRange that fails the schema becomes undefined), and when it rejects
// a notification.
func TestSDKPeerContextAgentReports(t *testing.T) {
	node, script := contextAgent(t)
	t.Parallel()
	agentLog := filepath.Join(t.TempDir(), "agent.jsonl")
	const sid, uri = `"context-session-1"`, `"file:///w/x.go"`
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"positionEncodings":["utf-16"]}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"nes/start","params":{"workspaceUri":"file:///w"}}`,
		`{"jsonrpc":"2.0","method":"document/didOpen","params":{"sessionId":` + sid + `,"uri":` + uri + `,"languageId":"go","version":1,"text":"ab\n"}}`,
		`{"jsonrpc":"2.0","id":3,"method":"nes/suggest","params":{"sessionId":` + sid + `,"uri":` + uri + `,"version":1,"position":{"line":0,"character":2},"triggerKind":"manual",` +
			`"context":{"userActions":[{"action":"insertChar","uri":` + uri + `,"position":{"line":0,"character":-1},"timestampMs":1}]}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"nes/suggest","params":{"sessionId":` + sid + `,"uri":` + uri + `,"version":1,"position":{"line":0,"character":2},"triggerKind":"manual",` +
			`"context":{"openFiles":[{"uri":` + uri + `,"languageId":"go","visibleRange":{"start":{"line":0},"end":{"line":1,"character":0}}}]}}}`,
		`{"jsonrpc":"2.0","method":"document/didFocus","params":{"sessionId":` + sid + `,"uri":` + uri + `}}`,
		`{"jsonrpc":"2.0","id":5,"method":"nes/close","params":{"sessionId":` + sid + `}}`,
	}, "\n") + "\n"
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script)
	cmd.Env = append(os.Environ(), "CONTEXT_AGENT_LOG="+agentLog)
	cmd.Stdin = strings.NewReader(in)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("context-agent.mjs: %v\n%s", err, out.String())
	}
	var rejected, dropped, notification bool
	for _, l := range readContextLog(t, agentLog) {
		s := string(l.SDKError)
		switch {
		case l.SDKError == nil:
		case strings.Contains(s, `"response"`) && strings.Contains(s, `"id":3`) && strings.Contains(s, "-32602"):
			rejected = true
		case strings.Contains(s, `"dropped"`) && strings.Contains(s, "/context/openFiles/0/visibleRange"):
			dropped = true
		case strings.Contains(s, "document/didFocus") && strings.Contains(s, `"issues"`):
			notification = true
		}
	}
	if !rejected || !dropped || !notification {
		data, _ := os.ReadFile(agentLog)
		t.Errorf("sdkError lines: rejected request %v, dropped value %v, rejected notification %v; log:\n%s", rejected, dropped, notification, data)
	}
}
