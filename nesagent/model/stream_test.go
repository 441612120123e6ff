package model

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent"
)

func TestReadStream(t *testing.T) {
	cases := []struct {
		name   string
		kind   streamKind
		body   string
		text   string
		finish string
		err    string
	}{
		{"completions", sseCompletion, "data: {\"choices\":[{\"text\":\"ab\"}]}\n\ndata: {\"choices\":[{\"text\":\"c\",\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n", "abc", "stop", ""},
		{"completions cut by its bound", sseCompletion, "data: {\"choices\":[{\"text\":\"ab\"}]}\n\ndata: {\"choices\":[{\"text\":\"\",\"finish_reason\":\"length\"}]}\n\ndata: [DONE]\n\n", "ab", "length", ""},
		{"chat, with comments and a usage event", sseChat, ": keep-alive\n\nevent: message\ndata: {\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"x\\n\"}}]}\n\ndata: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: {\"choices\":[],\"usage\":{\"total_tokens\":3}}\n\ndata: [DONE]\n\n", "x\n", "stop", ""},
		{"llama-server", sseLlama, "data: {\"content\":\"a\",\"stop\":false}\n\ndata: {\"content\":\"b\",\"stop\":false}\n\ndata: {\"content\":\"\",\"stop\":true,\"stop_type\":\"eos\",\"timings\":{\"prompt_n\":3,\"cache_n\":10}}\n\n", "ab", "stop", ""},
		{"llama-server at its limit", sseLlama, "data: {\"content\":\"a\",\"stop\":false}\n\ndata: {\"content\":\"\",\"stop\":true,\"stop_type\":\"limit\"}\n\n", "a", "length", ""},
		{"Ollama", ndjsonOllama, "{\"response\":\"a\",\"done\":false}\n{\"response\":\"b\",\"done\":false}\n{\"response\":\"\",\"done\":true,\"done_reason\":\"stop\"}\n", "ab", "stop", ""},
		{"a malformed event", sseCompletion, "data: {\"choices\":[{\"text\":\"ab\"}]}\n\ndata: {oops\n\n", "", "", "a malformed event"},
		{"an error event", sseLlama, "data: {\"content\":\"a\",\"stop\":false}\n\ndata: {\"error\":{\"message\":\"slot unavailable\"}}\n\n", "", "", "slot unavailable"},
		{"cut before its end", sseCompletion, "data: {\"choices\":[{\"text\":\"ab\"}]}\n\n", "", "", "ended before its last event"},
		{"Ollama cut before its end", ndjsonOllama, "{\"response\":\"a\",\"done\":false}\n", "", "", "ended before its last event"},
		{"Ollama's chat", ndjsonOllama, "{\"message\":{\"role\":\"assistant\",\"content\":\"a\"},\"done\":false}\n{\"message\":{\"role\":\"assistant\",\"content\":\"b\"},\"done\":false}\n{\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done\":true,\"done_reason\":\"length\"}\n", "ab", "length", ""},
		{"Ollama, neither response nor message", ndjsonOllama, "{\"done\":false}\n", "", "", "without response or message"},
	}
	for _, tc := range cases {
		var pieces []string
		r, err := readStream(strings.NewReader(tc.body), tc.kind, func(s string) { pieces = append(pieces, s) })
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || r.text != tc.text || r.finish != tc.finish || strings.Join(pieces, "") != tc.text {
			t.Errorf("%s: %q %q (pieces %q), %v; want %q %q", tc.name, r.text, r.finish, pieces, err, tc.text, tc.finish)
		}
	}
	r, _ := readStream(strings.NewReader("data: {\"content\":\"\",\"stop\":true,\"timings\":{\"prompt_n\":3,\"cache_n\":10}}\n\n"), sseLlama, nil)
	if r.timings == nil || r.timings.PromptN != 3 || r.timings.CacheN != 10 {
		t.Errorf("timings %+v", r.timings)
	}
	for endpoint, want := range map[string]streamKind{"http://h/infill": sseLlama, "http://h/api/chat": ndjsonOllama, "http://h/api/generate": ndjsonOllama, "http://h/v1/chat/completions": sseChat} {
		if got := streamKindOf(endpoint); got != want {
			t.Errorf("%s streams as %v, want %v", endpoint, got, want)
		}
	}
	// Ollama's OpenAI layer says so on every chunk, as on a whole answer.
	r, _ = readStream(strings.NewReader("data: {\"system_fingerprint\":\"fp_ollama\",\"choices\":[{\"delta\":{\"content\":\"x\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"), sseChat, nil)
	if r.fingerprint != ollamaFingerprint {
		t.Errorf("fingerprint %q of a streamed answer of Ollama's", r.fingerprint)
	}
}

// TestReadStreamTooLarge: a stream that goes on past the bound is cut, however its events come.
func TestReadStreamTooLarge(t *testing.T) {
	event := "data: {\"content\":\"" + strings.Repeat("x", 60000) + "\",\"stop\":false}\n\n"
	body := io.MultiReader(strings.NewReader(strings.Repeat(event, maxAnswerBytes/60000+2)), endless{})
	if _, err := readStream(body, sseLlama, nil); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("error %v, want the stream cut as too large", err)
	}
	if _, err := readStream(io.MultiReader(strings.NewReader("data: "), endless{}), sseLlama, nil); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("one endless line: %v", err)
	}
}

// endless reads as an endless run of "x".
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}

// TestStreamedAnswers: a server that streams its answer is read event by event, whatever the
// request asked: the completion is shown; a stream that stalls is cut at the timeout, one cut
// before its end or with a malformed event is refused, and none of them shows anything.
func TestStreamedAnswers(t *testing.T) {
	req := fimCase("file:///w/a.go", "package a\n\nfunc f() int {\n\treturn |\n}\n")
	serve := func(events []string, stall bool) func(w http.ResponseWriter, r *http.Request, _ []byte) {
		return func(w http.ResponseWriter, r *http.Request, _ []byte) {
			if r.URL.Path == "/props" {
				llamaServer("")(w, r, nil)
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			for _, e := range events {
				fmt.Fprintf(w, "data: %s\n\n", e)
				w.(http.Flusher).Flush()
			}
			if stall {
				<-r.Context().Done()
			}
		}
	}
	ask := func(t *testing.T, events []string, stall bool) ([]nesagent.Suggestion, error) {
		srv := newService(t, serve(events, stall))
		eng, err := New(Config{URL: srv.URL, Model: "qwen", Format: "fim", Timeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		return eng.Suggest(context.Background(), req)
	}
	sugs, err := ask(t, []string{`{"content":"4","stop":false}`, `{"content":"2","stop":false}`, `{"content":"","stop":true,"timings":{"prompt_n":5}}`}, false)
	if err != nil || len(sugs) != 1 || sugs[0].Edits[0].NewText != "42" {
		t.Errorf("a whole stream: %+v, %v", sugs, err)
	}
	for name, tc := range map[string]struct {
		events []string
		stall  bool
		err    string
	}{
		"stalls":    {[]string{`{"content":"4","stop":false}`}, true, "within 1s"},
		"cut":       {[]string{`{"content":"4","stop":false}`}, false, "ended before its last event"},
		"malformed": {[]string{`{"content":"4","stop":false}`, `{"content":`}, false, "a malformed event"},
	} {
		sugs, err := ask(t, tc.events, tc.stall)
		if err == nil || !strings.Contains(err.Error(), tc.err) || len(sugs) != 0 {
			t.Errorf("%s: %+v, %v; want no suggestion and %q", name, sugs, err, tc.err)
		}
	}
}

// TestTimingsOfEveryAnswer: llama-server's timings are read from its OpenAI layer's answers too,
// whole or streamed, for the debug log.
func TestTimingsOfEveryAnswer(t *testing.T) {
	r, err := readCompletion([]byte(`{"choices":[{"text":"x","finish_reason":"stop"}],"timings":{"prompt_n":7,"cache_n":120}}`))
	if err != nil || r.timings == nil || r.timings.CacheN != 120 {
		t.Errorf("whole: %+v %v", r.timings, err)
	}
	r, err = readChat([]byte(`{"choices":[{"message":{"content":"x"},"finish_reason":"stop"}],"timings":{"prompt_n":7,"cache_n":3}}`))
	if err != nil || r.timings == nil || r.timings.PromptN != 7 {
		t.Errorf("chat: %+v %v", r.timings, err)
	}
	r, err = readStream(strings.NewReader("data: {\"choices\":[{\"text\":\"x\"}]}\n\ndata: {\"choices\":[{\"text\":\"\",\"finish_reason\":\"stop\"}],\"timings\":{\"prompt_n\":2,\"cache_n\":50}}\n\ndata: [DONE]\n\n"), sseCompletion, nil)
	if err != nil || r.timings == nil || r.timings.CacheN != 50 {
		t.Errorf("streamed: %+v %v", r.timings, err)
	}
}
