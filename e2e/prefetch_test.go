package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"
)

// TestBinaryPrefetchAtTheAccept: through the real bridge and the model agent (chat, which does not
// stream). The first suggestion after typing is not prefetched from; the user accepts it, and the
// suggestion at the accept is: the model is asked for the one after it as if it had been
// accepted. The user accepts that one too, and the next request is answered with no request to
// the model at that text after the accept. With --no-prefetch the model is asked nothing beyond
// the requests.
func TestBinaryPrefetchAtTheAccept(t *testing.T) {
	// The model completes "fo" to "foo()", then adds " + bar()", then " + baz()".
	const first, second, third = "x := foo()\n", "x := foo() + bar()\n", "x := foo() + bar() + baz()\n"
	type post struct {
		region string
		at     time.Time
	}
	for _, on := range []bool{true, false} {
		name := "on"
		if !on {
			name = "--no-prefetch"
		}
		t.Run(name, func(t *testing.T) {
			m := newFakeModel(t)
			var mu sync.Mutex
			var posts []post
			m.set(func(w http.ResponseWriter, r *http.Request, body []byte) {
				var req struct {
					Messages []struct {
						Content string `json:"content"`
					} `json:"messages"`
				}
				if json.Unmarshal(body, &req) != nil || len(req.Messages) == 0 {
					http.Error(w, "not a chat request", http.StatusBadRequest)
					return
				}
				const start, end, cursor = "<|editable_region_start|>\n", "<|editable_region_end|>", "<|user_cursor_is_here|>"
				region, ok := between(req.Messages[len(req.Messages)-1].Content, start, end)
				if !ok {
					http.Error(w, "no region", http.StatusBadRequest)
					return
				}
				region = strings.ReplaceAll(region, cursor, "")
				mu.Lock()
				posts = append(posts, post{region, time.Now()})
				mu.Unlock()
				switch {
				case strings.Contains(region, "x := fo\n"):
					region = strings.Replace(region, "x := fo\n", first, 1)
				case strings.Contains(region, first):
					region = strings.Replace(region, first, second, 1)
				case strings.Contains(region, second):
					region = strings.Replace(region, second, third, 1)
				}
				_, _ = w.Write(chatCompletion(start + region + end))
			})
			seen := func() []post {
				mu.Lock()
				defer mu.Unlock()
				return append([]post(nil), posts...)
			}
			bridge, _ := binaries(t)
			args := []string{"--", bridge, "agent", "--model-url", m.srv.URL, "--model", "fake-coder", "--verbose"}
			if !on {
				args = append(args, "--no-prefetch")
			}
			b := startBridgeEnv(t, os.Environ(), args...)
			b.InitializeWith(fakeeditor.InitParams{Encodings: []string{"utf-16"}})
			b.waitMessage("acp-lsp-bridge-model is ready")
			b.Open(modelURI, modelDoc)
			items, err := b.Inline(modelURI, fakeeditor.At(2, 7))
			if err != nil || len(items) != 1 || !strings.HasSuffix("x := foo()", items[0].InsertText) {
				t.Fatalf("the first suggestion: %+v %v", items, err)
			}
			time.Sleep(300 * time.Millisecond) // a prefetch would come in a few ms
			if n := len(seen()); n != 1 {
				t.Errorf("the model got %d requests after the first suggestion after typing, want only the editor's", n)
			}
			// Accepting the ghost text: the editor makes the edit (didChange) and runs the item's
			// command; the bridge asks for the next at once.
			b.Accept(modelURI, items[0])
			next, err := b.Inline(modelURI, fakeeditor.At(2, 10))
			if err != nil || len(next) != 1 {
				t.Fatalf("the suggestion at the accept: %+v %v", next, err)
			}
			if !on {
				time.Sleep(300 * time.Millisecond)
				for _, p := range seen() {
					if strings.Contains(p.region, second) {
						t.Errorf("the model was asked ahead with --no-prefetch: %q", p.region)
					}
				}
				return
			}
			var ahead post
			for deadline := time.Now().Add(15 * time.Second); ahead.region == ""; time.Sleep(5 * time.Millisecond) {
				for _, p := range seen() {
					if strings.Contains(p.region, second) {
						ahead = p
					}
				}
				if time.Now().After(deadline) {
					t.Fatalf("nothing prefetched at the text the suggestion at the accept makes: %v", seen())
				}
			}
			accepted := time.Now()
			b.Accept(modelURI, next[0])
			if got := b.Text(modelURI); got != "package p\n\n"+second {
				t.Fatalf("after the accept the document reads %q", got)
			}
			last, err := b.Inline(modelURI, fakeeditor.At(2, 18))
			if err != nil || len(last) != 1 {
				t.Fatalf("the next suggestion: %+v %v", last, err)
			}
			t.Logf("accept → next suggestion through the bridge: %v", time.Since(accepted))
			for _, p := range seen() {
				if p.at.After(accepted) && strings.Contains(p.region, second) && !strings.Contains(p.region, third) {
					t.Errorf("the model was asked at the accepted text after the accept: %q", p.region)
				}
			}
			waitBridgeLog(t, b.logFile, "the prefetched suggestion, at the accept")
		})
	}
}
