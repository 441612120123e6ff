package e2e

import (
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"
)

// TestBinaryAskAhead: with --ask-ahead, through the real bridge and the model agent, a change
// the user pauses after reaches the model before the editor asks; the editor's request at the
// change's end then shows that answer, and the model was asked once. Without it, nothing is
// asked until the editor asks.
func TestBinaryAskAhead(t *testing.T) {
	for _, on := range []bool{true, false} {
		name := "on"
		if !on {
			name = "off"
		}
		t.Run(name, func(t *testing.T) {
			m := newFakeModel(t)
			bridge, _ := binaries(t)
			// --no-prefetch: the model's requests are counted, and a suggestion prefetched after the
			// answer (prefetch_test.go) would be one more.
			args := []string{"--", bridge, "agent", "--model-url", m.srv.URL, "--model", "zeta-2", "--verbose", "--no-prefetch"}
			if on {
				args = append([]string{"--ask-ahead", "30ms"}, args...)
			} else {
				args = append([]string{"--ask-ahead", "0"}, args...)
			}
			b := startBridgeEnv(t, os.Environ(), args...)
			b.InitializeWith(fakeeditor.InitParams{Encodings: []string{"utf-16"}})
			b.waitMessage("acp-lsp-bridge-model is ready")
			text := strings.Replace(modelDoc, "x := fo\n", "x := f\n", 1)
			b.Open(modelURI, text)
			// The editor asks while the user types (the bridge asks ahead only for such an editor).
			if _, err := b.Inline(modelURI, fakeeditor.At(0, 0)); err != nil {
				t.Fatal(err)
			}
			base := m.posts()
			// The user types the "o" of "fo" and pauses.
			b.Edit(modelURI, len(text)-1, len(text)-1, "o")
			if on {
				deadline := time.Now().Add(10 * time.Second)
				for m.posts() < base+1 {
					if time.Now().After(deadline) {
						t.Fatal("the model was not asked ahead of the editor")
					}
					time.Sleep(10 * time.Millisecond)
				}
			}
			items, err := b.Inline(modelURI, fakeeditor.At(2, 7))
			if err != nil || len(items) != 1 || !strings.HasSuffix("x := foo()", items[0].InsertText) {
				t.Fatalf("the editor's request: %+v %v, want the model's suggestion", items, err)
			}
			if n := m.posts() - base; n != 1 {
				t.Errorf("the model was asked %d times after the change, want once", n)
			}
			if on {
				waitBridgeLog(t, b.logFile, "asking ahead: the document is still")
			} else if strings.Contains(readFile(t, b.logFile), "asking ahead") {
				t.Error("asked ahead with --ask-ahead 0")
			}
		})
	}
}

// TestBinaryAskAheadNotForAHostedService: the model agent says a hosted service bills each
// request, and the bridge does not ask it ahead, --ask-ahead or not: only the editor's request
// reaches the service.
func TestBinaryAskAheadNotForAHostedService(t *testing.T) {
	m := newFakeModel(t)
	m.set(func(w http.ResponseWriter, r *http.Request, _ []byte) {
		_, _ = io.WriteString(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":"o()"},"finish_reason":"stop"}]}`)
	})
	bridge, _ := binaries(t)
	b := startBridgeEnv(t, append(os.Environ(), "CODESTRAL_API_KEY="+testKey), "--ask-ahead", "30ms", "--", bridge, "agent", "--model-format", "codestral", "--model-url", m.srv.URL, "--verbose")
	b.InitializeWith(fakeeditor.InitParams{Encodings: []string{"utf-16"}})
	b.waitMessage("acp-lsp-bridge-model is ready")
	text := strings.Replace(modelDoc, "x := fo\n", "x := f\n", 1)
	b.Open(modelURI, text)
	// The editor asks while the user types: were the service not billed, the bridge would ask
	// it ahead.
	if _, err := b.Inline(modelURI, fakeeditor.At(0, 0)); err != nil {
		t.Fatal(err)
	}
	base := m.posts()
	b.Edit(modelURI, len(text)-1, len(text)-1, "o")
	time.Sleep(300 * time.Millisecond) // ten times the ask-ahead's wait: nothing may come of it
	items, err := b.InlineTriggered(modelURI, fakeeditor.At(2, 7), 1)
	if err != nil || len(items) != 1 {
		t.Fatalf("the editor's request: %+v %v", items, err)
	}
	if n := m.posts() - base; n != 1 {
		t.Errorf("the hosted service was asked %d times after the change, want only the editor's request", n)
	}
	if strings.Contains(readFile(t, b.logFile), "asking ahead") {
		t.Error("a hosted service billed per request was asked ahead")
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
