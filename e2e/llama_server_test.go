package e2e

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testutil"
)

// llamaServer is a running llama.cpp llama-server (../shared/tools/llama-server.sh: Debian's
// build and a tiny random-weight model with the real Qwen2 tokenizer, whose text is gibberish).
type llamaServer struct {
	URL string
	log testutil.SyncBuffer
}

// Log is what the server wrote so far.
func (l *llamaServer) Log() string { return l.log.String() }

// waitLog waits until the server's log holds want n times or more, and fails the test after d.
func (l *llamaServer) waitLog(t *testing.T, want string, n int, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for strings.Count(l.Log(), want) < n {
		if time.Now().After(deadline) {
			t.Fatalf("llama-server never logged %q %d times within %v; its log ends:\n%s", want, n, d, logTail(l.Log()))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// logTail is the last lines of a log, enough to see why a server failed.
func logTail(s string) string {
	const n = 4000
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// startLlamaServer runs the llama-server that `llama-server.sh env` names in LLAMA_SERVER (a
// command) with the model in LLAMA_MODEL; .ci/run sets both.
func startLlamaServer(t testing.TB, extra ...string) *llamaServer {
	t.Helper()
	skipIfShort(t, "a real llama-server")
	command, model := strings.Fields(os.Getenv("LLAMA_SERVER")), os.Getenv("LLAMA_MODEL")
	if len(command) == 0 || model == "" || runtime.GOOS == "windows" {
		skipWithoutPeer(t, "LLAMA_SERVER and LLAMA_MODEL are not set (eval \"$(../shared/tools/llama-server.sh env)\" after its setup and model)")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	l := &llamaServer{URL: fmt.Sprintf("http://127.0.0.1:%d", port)}
	// Two slots: a cancelled generation's slot is freed while another request may already run.
	args := append(command[1:], "-m", model, "--host", "127.0.0.1", "--port", fmt.Sprint(port), "-c", "8192", "-np", "2", "-t", "2", "--no-webui")
	args = append(args, extra...)
	cmd := exec.Command(command[0], args...)
	cmd.Stdout, cmd.Stderr = &l.log, &l.log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
		if t.Failed() {
			t.Logf("llama-server log:\n%s", logTail(l.Log()))
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(l.URL + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return l
			}
		}
		select {
		case <-done:
			t.Fatalf("llama-server exited: %s", logTail(l.Log()))
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("llama-server not healthy within 60s: %s", logTail(l.Log()))
		}
	}
}

// llamaDoc is the document the tests ask about: a call being typed, after an edit that added a
// parameter.
const llamaDoc = "package shop\n\n// Total adds the prices.\nfunc Total(prices []int, tax int) int {\n\tsum := tax\n\tfor _, p := range prices {\n\t\tsum += p\n\t}\n\treturn sum\n}\n\nfunc main() {\n\tprintln(Total([]int{1, 2}\n}\n"

// TestRealLlamaServer runs the model agent, through the real bridge, against the llama-server
// users run, in every prompt format: the raw formats (Zeta 1, 2, 2.1, Sweep 1.5B and v2 7B) on
// /v1/completions with their stop strings, chat and Instinct on /v1/chat/completions. The server
// accepts each request and answers it; its model's text is gibberish, which the quality gate drops
// with its reason in the agent's log, so the editor is shown nothing.
func TestRealLlamaServer(t *testing.T) {
	// At most 64 tokens an answer (the agent's --max-tokens): the tiny model writes a few hundred
	// tokens a second alone and tens under a loaded test run, and the editor waits 15 s. The gate
	// drops an answer that ends there as cut short, and says so.
	l := startLlamaServer(t)
	for _, tc := range []struct{ model, format, endpoint string }{
		{"zed-industries/zeta", "zeta1", "/v1/completions"},
		{"zeta-2-Q8_0.gguf", "zeta2", "/v1/completions"},
		{"zeta-2.1", "zeta2.1", "/v1/completions"},
		{"sweep-next-edit-1.5b", "sweep", "/v1/completions"},
		{"sweepai/sweep-next-edit-v2-7B", "sweep", "/v1/completions"},
		{"nate/instinct", "instinct", "/v1/chat/completions"},
		{"qwen2.5-coder:7b", "chat", "/v1/chat/completions"},
	} {
		t.Run(strings.ReplaceAll(tc.model, "/", "_"), func(t *testing.T) {
			b, uri := llamaSession(t, l, tc.model, "60s", "64", llamaDoc)
			items, err := b.Inline(uri, fakeeditor.At(12, len("\tprintln(Total([]int{1, 2}")))
			if err != nil {
				t.Fatal(err)
			}
			if len(items) != 0 {
				t.Errorf("the editor was shown %+v: the gibberish passed the gate", items)
			}
			log := waitBridgeLog(t, b.logFile, "model: answer dropped: ")
			for _, want := range []string{
				"model: prompt format " + tc.format,
				"endpoint=" + l.URL + tc.endpoint,
			} {
				if !strings.Contains(log, want) {
					t.Errorf("the agent's log does not say %q:\n%s", want, agentLines(log))
				}
			}
			for _, line := range strings.Split(agentLines(log), "\n") {
				if strings.Contains(line, "model: answer") {
					t.Log(line[max(0, strings.Index(line, "model: answer")):])
				}
			}
			if strings.Contains(log, "cut short") && !strings.Contains(log, "the request allowed 64 tokens") {
				t.Errorf("an answer was cut short at another bound than --max-tokens 64:\n%s", agentLines(log))
			}
			if strings.Contains(log, "nes/suggest failed") {
				t.Errorf("the server refused the request:\n%s", agentLines(log))
			}
		})
	}
}

// TestRealLlamaServerCancelAndTimeout: a request the editor cancels is cancelled on the server
// (llama-server logs "cancel task"), and so is one that outlasts the agent's --timeout, which the
// user hears about when they asked for the suggestion.
func TestRealLlamaServerCancelAndTimeout(t *testing.T) {
	l := startLlamaServer(t)
	// Zeta 1 allows a long answer (1,024 tokens): the tiny model takes seconds to write it.
	long := strings.Repeat("\t// a long comment line for the region to be large enough\n", 60)
	text := strings.Replace(llamaDoc, "func main() {\n", "func main() {\n"+long, 1)
	at := fakeeditor.At(12+60, len("\tprintln(Total([]int{1, 2}"))

	// cancelled asks with the model's name and cancels the request once the server works on it:
	// the server logs "cancel task".
	cancelled := func(t *testing.T, model string) {
		b, uri := llamaSession(t, l, model, "60s", "0", text)
		before := strings.Count(l.Log(), "cancel task")
		began := strings.Count(l.Log(), "processing task")
		p := b.Start("textDocument/inlineCompletion", fakeeditor.InlineParams(uri, at, 2), nil)
		l.waitLog(t, "processing task", began+1, 30*time.Second)
		if err := p.Cancel(); err != nil {
			t.Fatal(err)
		}
		if err := p.Wait(); err != nil && fakeeditor.ErrorCode(err) != -32800 {
			t.Errorf("the cancelled request ended with %v", err)
		}
		l.waitLog(t, "cancel task", before+1, 20*time.Second)
	}
	t.Run("cancel", func(t *testing.T) { cancelled(t, "zeta") })
	// Zeta 2 streams its answer: cancelling the request closes the stream, and the server stops
	// the generation all the same.
	t.Run("cancel a stream", func(t *testing.T) { cancelled(t, "zeta-2") })

	// A request the user asks for gets the agent's failure; one made while typing gets an empty
	// result (no error per key), and the bridge's log says why.
	t.Run("timeout", func(t *testing.T) {
		b, uri := llamaSession(t, l, "zeta", "700ms", "0", text)
		before := strings.Count(l.Log(), "cancel task")
		_, err := b.InlineTriggered(uri, at, 1)
		if err == nil || !strings.Contains(err.Error(), "700ms") {
			t.Errorf("the editor got %v, want the agent's failure naming its 700ms timeout", err)
		}
		l.waitLog(t, "cancel task", before+1, 20*time.Second)
		if items, err := b.Inline(uri, at); err != nil || len(items) != 0 {
			t.Errorf("an automatic request past the model's timeout: items %v, error %v; want an empty result", items, err)
		}
		waitBridgeLog(t, b.logFile, "within 700ms (the agent's --timeout)")
		l.waitLog(t, "cancel task", before+2, 20*time.Second)
	})
}

// llamaSession is the real bridge with the model agent asking l for model, the agent's requests
// bounded by timeout and its answers by maxTokens (--max-tokens), and text open as main.go in a
// fresh workspace.
func llamaSession(t *testing.T, l *llamaServer, model, timeout, maxTokens, text string) (*bridgeProc, string) {
	t.Helper()
	bridge, _ := binaries(t)
	// The tiny model is slow under a loaded CI machine: the editor waits as long as the agent.
	b := startBridge(t, "--suggest-timeout", "90s", "--", bridge, "agent", "--model-url", l.URL, "--model", model, "--timeout", timeout, "--verbose", "--max-tokens", maxTokens)
	root := t.TempDir()
	b.Initialize(fileURI(root), "utf-16")
	b.waitMessage("acp-lsp-bridge-model is ready")
	uri := fileURI(root + "/main.go")
	b.Open(uri, text)
	return b, uri
}

// waitBridgeLog waits for want in the bridge's log file and returns the log.
func waitBridgeLog(t *testing.T, path, want string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		data, _ := os.ReadFile(path)
		if strings.Contains(string(data), want) {
			return string(data)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the bridge's log never said %q:\n%s", want, agentLines(string(data)))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// agentLines is the part of a bridge log that the agent wrote.
func agentLines(log string) string {
	var out []string
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, "model:") || strings.Contains(line, "nes/suggest") {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
