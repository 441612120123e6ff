package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

// emacsDiagnosticsScenario is what testdata/emacs/eglot-diagnostics.el and
// lsp-mode-diagnostics.el read: main.txt's text, and where their diagnostics are (each spans from
// the first From to the end of the first To after it). Both follow non-ASCII text on their line,
// astral-plane characters among it and inside them, so that the column differs in each encoding.
type emacsDiagnosticsScenario struct {
	Text           string `json:"text"`
	ErrorFrom      string `json:"errorFrom"`
	ErrorTo        string `json:"errorTo"`
	ErrorMessage   string `json:"errorMessage"`
	WarningFrom    string `json:"warningFrom"`
	WarningTo      string `json:"warningTo"`
	WarningMessage string `json:"warningMessage"`
}

// For Eglot, the user's Flymake backend reports both: the error on line 2, the warning on line 1.
var eglotDiagnosticsScenario = emacsDiagnosticsScenario{
	Text:           "// 日本語のメモ: e\u0301, 😀 warn here\n\tlabel := \"e\u0301 中文 𐐀\"; broken(𐐀, 日本)\n\treturn 0\n}\n",
	ErrorFrom:      "broken(",
	ErrorTo:        ")",
	ErrorMessage:   "undefined: broken (𐐀)",
	WarningFrom:    "😀 warn",
	WarningTo:      "here",
	WarningMessage: "warn: 😀 is unused",
}

// For lsp-mode, the user's Flymake backend reports the error on line 2, and the buffer's own
// language server publishes the warning on line 3.
var lspModeDiagnosticsScenario = emacsDiagnosticsScenario{
	Text:           "// 日本語のメモ: e\u0301, n\u0303, 𐐀 and 😀\n\tlabel := \"e\u0301 中文 𐐀\"; broken(𐐀, 日本)\n\t😀 := 終(𐐀)\n\treturn 0\n}\n",
	ErrorFrom:      "broken(",
	ErrorTo:        ")",
	ErrorMessage:   "undefined: broken (𐐀)",
	WarningFrom:    "終(",
	WarningTo:      ")",
	WarningMessage: "終 is unused",
}

type lspPos struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

type lspRange struct {
	Start lspPos `json:"start"`
	End   lspPos `json:"end"`
}

func (r lspRange) String() string {
	return fmt.Sprintf("%d:%d-%d:%d", r.Start.Line, r.Start.Character, r.End.Line, r.End.Character)
}

// span returns where the scenario's From…To is in text, as a range in enc ("utf-16" or
// "utf-32"), counted as the editor and the agent count.
func (s emacsDiagnosticsScenario) span(t *testing.T, from, to, enc string) lspRange {
	t.Helper()
	b := strings.Index(s.Text, from)
	if b < 0 {
		t.Fatalf("%q is not in the scenario's text", from)
	}
	e := strings.Index(s.Text[b:], to)
	if e < 0 {
		t.Fatalf("%q is not after %q in the scenario's text", to, from)
	}
	pos := func(off int) lspPos {
		before := s.Text[:off]
		line := strings.Count(before, "\n")
		col := before[strings.LastIndex(before, "\n")+1:]
		n := utf8.RuneCountInString(col)
		if enc == "utf-16" {
			n = len(utf16.Encode([]rune(col)))
		}
		return lspPos{Line: line, Character: n}
	}
	return lspRange{Start: pos(b), End: pos(b + e + len(to))}
}

type emacsDiagnosticsResult struct {
	Sent int    `json:"sent"`
	URI  string `json:"uri"`
	// Last is the last acp-lsp-bridge/diagnostics the configuration sent.
	Last *struct {
		TextDocument struct {
			URI string `json:"uri"`
		} `json:"textDocument"`
		Diagnostics []struct {
			Range    lspRange `json:"range"`
			Severity int      `json:"severity"`
			Message  string   `json:"message"`
		} `json:"diagnostics"`
	} `json:"last"`
}

type nesDiagnostic struct {
	URI      string   `json:"uri"`
	Range    lspRange `json:"range"`
	Severity string   `json:"severity"`
	Message  string   `json:"message"`
}

// TestEmacsEglotDiagnostics runs the shipped editors/emacs/acp-lsp-bridge-eglot.el in Emacs 30
// (testdata/emacs/eglot-diagnostics.el) against the bridge and the test agent, which asks for the
// diagnostics context: a Flymake backend of the user's (kept beside Eglot's) reports an error and
// a warning after non-ASCII text; the configuration sends them in acp-lsp-bridge/diagnostics,
// once, in the encoding Eglot negotiated (utf-32), with severities 1 and 2; and the nes/suggest
// that C-c n n then makes carries both in context.diagnostics, converted to the agent's utf-16.
// With acp-lsp-bridge-eglot-send-diagnostics off, nothing is sent and the agent gets none.
func TestEmacsEglotDiagnostics(t *testing.T) {
	emacs := os.Getenv("EMACS")
	if emacs == "" {
		skipWithoutPeer(t, `EMACS is not set; run eval "$(PEERS_EMACS=1 bash ../shared/tools/install-test-peers.sh)"`)
	}
	bridge, agent := binaries(t)
	for _, send := range []bool{true, false} {
		t.Run(map[bool]string{true: "on", false: "off"}[send], func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			p := func(name string) string { return filepath.Join(dir, name) }
			for _, d := range []string{"work", "home"} {
				if err := os.MkdirAll(p(d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			writeScenario(t, p("scenario.json"), eglotDiagnosticsScenario)
			out, ok := emacsBatch(t, emacs, filepath.Join(moduleRoot(t), "testdata", "emacs", "eglot-diagnostics.el"), p("work"),
				"HOME="+p("home"),
				"ACP_EMACS_CONFIG="+emacsEglotConfig(t),
				"ACP_LSP_BRIDGE="+bridge,
				"ACP_TEST_AGENT="+agent,
				"EMACS_TEST_DIR="+p("work"),
				"EMACS_TEST_SCENARIO="+p("scenario.json"),
				"EMACS_TEST_SEND="+map[bool]string{true: "1", false: "0"}[send],
				"EMACS_TEST_BRIDGE_LOG="+p("bridge.log"),
				"EMACS_TEST_AGENT_LOG="+p("agent.log"),
				"EMACS_TEST_RESULT="+p("result.json"),
			)
			checkEmacsDiagnostics(t, out, ok, p, send, 1, eglotDiagnosticsScenario, "utf-32", []wantDiagnostic{
				{eglotDiagnosticsScenario.ErrorFrom, eglotDiagnosticsScenario.ErrorTo, eglotDiagnosticsScenario.ErrorMessage, 1, "error"},
				{eglotDiagnosticsScenario.WarningFrom, eglotDiagnosticsScenario.WarningTo, eglotDiagnosticsScenario.WarningMessage, 2, "warning"},
			})
		})
	}
}

// TestLspModeDiagnostics runs the real lsp-mode 10 in Emacs 30 with the shipped
// editors/emacs/acp-lsp-bridge-lsp-mode.el (testdata/emacs/lsp-mode-diagnostics.el), the bridge
// beside the buffer's own server and the test agent asking for the diagnostics context: a Flymake
// backend of the user's reports an error, then the buffer's own server publishes a warning while
// another buffer is current (only lsp-diagnostics-updated-hook tells), which lsp-mode's Flymake
// backend later shows too. The configuration sends the error, then both, to the bridge alone, in
// lsp-mode's encoding (utf-32), never the warning twice nor an unchanged list again; and the
// nes/suggest that C-c n n then makes carries both in context.diagnostics, converted to the
// agent's utf-16. With acp-lsp-bridge-lsp-send-diagnostics off, nothing is sent and the agent
// gets none.
func TestLspModeDiagnostics(t *testing.T) {
	emacs, loadPath := lspModeEnv(t)
	for _, send := range []bool{true, false} {
		t.Run(map[bool]string{true: "on", false: "off"}[send], func(t *testing.T) {
			t.Parallel()
			env, p := lspModeFiles(t, loadPath, nil)
			writeScenario(t, p("scenario.json"), lspModeDiagnosticsScenario)
			env = append(env,
				"EMACS_TEST_SCENARIO="+p("scenario.json"),
				"EMACS_TEST_SEND="+map[bool]string{true: "1", false: "0"}[send],
				"EMACS_TEST_RESULT="+p("result.json"),
			)
			out, ok := emacsBatch(t, emacs, filepath.Join(moduleRoot(t), "testdata", "emacs", "lsp-mode-diagnostics.el"), p("work"), env...)
			checkEmacsDiagnostics(t, out, ok, p, send, 2, lspModeDiagnosticsScenario, "utf-32", []wantDiagnostic{
				{lspModeDiagnosticsScenario.ErrorFrom, lspModeDiagnosticsScenario.ErrorTo, lspModeDiagnosticsScenario.ErrorMessage, 1, "error"},
				{lspModeDiagnosticsScenario.WarningFrom, lspModeDiagnosticsScenario.WarningTo, lspModeDiagnosticsScenario.WarningMessage, 2, "warning"},
			})
		})
	}
}

type wantDiagnostic struct {
	from, to, message string
	severity          int    // as the editor sends it
	agentSeverity     string // as the agent gets it
}

func writeScenario(t *testing.T, path string, s emacsDiagnosticsScenario) {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// checkEmacsDiagnostics checks what a diagnostics script reported and what the agent received:
// with send, acp-lsp-bridge/diagnostics sent sends times, the last with exactly want in the
// editor's encoding (editorEnc), and want in the agent's nes/suggest, in its utf-16; without,
// nothing sent and none of want in the agent's context.
func checkEmacsDiagnostics(t *testing.T, out string, ok bool, p func(string) string, send bool, sends int, s emacsDiagnosticsScenario, editorEnc string, want []wantDiagnostic) {
	t.Helper()
	defer func() {
		if t.Failed() || testing.Verbose() {
			t.Logf("emacs output:\n%s", emacsIndent(out))
			for _, f := range []string{"bridge.log", "agent.log"} {
				b, _ := os.ReadFile(p(f))
				t.Logf("%s:\n%s", f, emacsIndent(string(b)))
			}
		}
	}()
	if !ok {
		return
	}
	var res emacsDiagnosticsResult
	b, err := os.ReadFile(p("result.json"))
	if err == nil {
		err = json.Unmarshal(b, &res)
	}
	if err != nil {
		t.Fatalf("result.json %s: %v", b, err)
	}

	// What the configuration sent, in the editor's encoding.
	if !send {
		if res.Sent != 0 || res.Last != nil {
			t.Errorf("with the option off, the configuration sent acp-lsp-bridge/diagnostics %d times: %s", res.Sent, b)
		}
	} else {
		if res.Sent != sends || res.Last == nil {
			t.Fatalf("the configuration sent acp-lsp-bridge/diagnostics %d times, want %d: %s", res.Sent, sends, b)
		}
		if res.Last.TextDocument.URI != res.URI {
			t.Errorf("acp-lsp-bridge/diagnostics for %q, want %q", res.Last.TextDocument.URI, res.URI)
		}
		if len(res.Last.Diagnostics) != len(want) {
			t.Errorf("acp-lsp-bridge/diagnostics has %d diagnostics, want %d: %s", len(res.Last.Diagnostics), len(want), b)
		}
		for _, w := range want {
			r := s.span(t, w.from, w.to, editorEnc)
			found := false
			for _, d := range res.Last.Diagnostics {
				found = found || d.Message == w.message && d.Range == r && d.Severity == w.severity
			}
			if !found {
				t.Errorf("acp-lsp-bridge/diagnostics lacks %q at %v (%s), severity %d: %s", w.message, r, editorEnc, w.severity, b)
			}
		}
	}

	// What the agent got in nes/suggest.
	msgs, err := emacsReadAgentLog(p("agent.log"))
	if err != nil {
		t.Fatal(err)
	}
	var suggests []string
	var got []nesDiagnostic
	for _, m := range msgs {
		if m.Method != "nes/suggest" {
			continue
		}
		suggests = append(suggests, m.raw)
		var sm struct {
			Params struct {
				Context struct {
					Diagnostics []nesDiagnostic `json:"diagnostics"`
				} `json:"context"`
			} `json:"params"`
		}
		if err := json.Unmarshal([]byte(m.raw), &sm); err != nil {
			t.Fatalf("nes/suggest %s: %v", m.raw, err)
		}
		got = sm.Params.Context.Diagnostics
	}
	if len(suggests) == 0 {
		t.Fatal("the agent received no nes/suggest")
	}
	last := suggests[len(suggests)-1]
	for _, w := range want {
		r := s.span(t, w.from, w.to, "utf-16")
		found, named := false, false
		for _, d := range got {
			if d.Message == w.message {
				named = true
				found = found || d.Range == r && d.Severity == w.agentSeverity && d.URI == res.URI
			}
		}
		switch {
		case send && !found:
			t.Errorf("nes/suggest's context.diagnostics lacks %q at %v (utf-16), severity %s, in %s: %s", w.message, r, w.agentSeverity, res.URI, last)
		case !send && named:
			t.Errorf("with the option off, nes/suggest carries %q: %s", w.message, last)
		}
	}
	if send && len(got) != len(want) {
		t.Errorf("nes/suggest's context.diagnostics has %d diagnostics, want %d: %s", len(got), len(want), last)
	}
}
