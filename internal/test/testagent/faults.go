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
)

// The modes of Config.Fault: bad input from the agent, for the bridge's robustness tests. Each
// mode misbehaves at every nes/suggest unless it says otherwise; ids in the answers are unique
// per answer (the nes/suggest count n ends them) except where a mode reuses them on purpose.
const (
	// FaultExit exits the process (status 3) when a nes/suggest arrives, before answering.
	FaultExit = "exit"
	// FaultHang never answers nes/suggest and ignores $/cancel_request.
	FaultHang = "hang"
	// FaultJunk writes lines that are not JSON-RPC to stdout before each answer: 40 lines of plain
	// text, half a JSON object, and a bare number (valid JSON, not a message).
	FaultJunk = "junk"
	// FaultHuge writes one line of 50 MiB before the first answer: valid JSON, a notification
	// {"jsonrpc":"2.0","method":"_test/huge","params":{"blob":"aaa…"}}; then answers normally.
	FaultHuge = "huge"
	// FaultTypes answers the first nes/suggest with {"suggestions":"x"}, and the later ones with
	// the rules' suggestions plus suggestions of wrong JSON types: a range that is a string,
	// newText a number, negative positions, a numeric id, a string for a suggestion, a kind that
	// is a list, a uri that is a number.
	FaultTypes = "types"
	// FaultUnknown sends the client, around each answer, methods it does not implement: the
	// notifications weird/notice and session/update (for a session that does not exist) and the
	// request weird/method, whose answer the agent logs as {"method":"fault/answer"}.
	FaultUnknown = "unknown"
	// FaultEdits adds to the rules' suggestions edits the bridge must refuse: out of range,
	// overlapping, reversed, a valid edit together with an out-of-range one, no edits at all, and
	// a suggestion of an unknown kind.
	FaultEdits = "edits"
	// FaultIDs gives the rules' suggestion the fixed id "ids-reused" in every answer (an id reused
	// across answers) and repeats it in the same answer with the text "SECOND COPY".
	FaultIDs = "ids"
	// FaultUTF8 adds to the rules' suggestions a copy whose newText carries the raw bytes ff fe
	// on the wire, and writes before each answer a line with invalid UTF-8 outside any string.
	FaultUTF8 = "utf8"
)

// Faults lists the modes of Config.Fault.
var Faults = []string{FaultExit, FaultHang, FaultJunk, FaultHuge, FaultTypes, FaultUnknown, FaultEdits, FaultIDs, FaultUTF8, FaultRequests}

// FaultHelp describes the modes, for a command's flag help.
const FaultHelp = "misbehave on purpose, by `mode`: " + `exit (exit 3 when a nes/suggest arrives), hang (never answer nes/suggest, ignore $/cancel_request), ` +
	`junk (non-JSON lines before each answer), huge (one 50 MiB line of valid JSON before the first answer), ` +
	`types (answers with wrong JSON types), unknown (unknown requests and notifications to the client around each answer), ` +
	`edits (out-of-range, overlapping, reversed edits and an unknown kind beside the valid suggestion), ` +
	`ids (the same suggestion id twice in an answer and in every answer), ` +
	`utf8 (raw invalid UTF-8 in a newText, and a line with invalid UTF-8 outside strings), ` +
	`requests (a request with an empty method and session/update as a request before each answer; their answers logged as test/rawAnswer)`

// invalidUTF8Token, inside a JSON string the agent writes, becomes the raw bytes ff fe on the
// wire (FaultUTF8): json.Marshal would replace them with U+FFFD.
const invalidUTF8Token = "@@invalid-utf8@@"

// wireWriter is the agent's output: the SDK writes one message per Write, and raw lines go
// through the same lock so that they never interleave with it.
type wireWriter struct {
	mu        sync.Mutex
	w         io.Writer
	utf8Fault bool
}

func (w *wireWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	q := p
	if w.utf8Fault && bytes.Contains(p, []byte(invalidUTF8Token)) {
		q = bytes.ReplaceAll(p, []byte(invalidUTF8Token), []byte("\xff\xfe"))
	}
	if _, err := w.w.Write(q); err != nil {
		return 0, err
	}
	return len(p), nil
}

// raw writes lines as they are, each followed by a newline.
func (w *wireWriter) raw(lines ...[]byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, l := range lines {
		_, _ = w.w.Write(append(l, '\n'))
	}
}

func (a *Agent) exit(code int) {
	if a.cfg.Exit != nil {
		a.cfg.Exit(code)
		return
	}
	os.Exit(code)
}

// suggestionsOf reads the suggestions of an answer, whatever Go type holds it.
func suggestionsOf(res any) []any {
	var m struct {
		Suggestions []any `json:"suggestions"`
	}
	b, err := json.Marshal(res)
	if err == nil {
		_ = json.Unmarshal(b, &m)
	}
	return m.Suggestions
}

func pos(line, char int) map[string]any { return map[string]any{"line": line, "character": char} }

func rng(l1, c1, l2, c2 int) map[string]any {
	return map[string]any{"start": pos(l1, c1), "end": pos(l2, c2)}
}

func edit(id, uri string, edits ...any) map[string]any {
	return map[string]any{"kind": "edit", "id": id, "uri": uri, "edits": edits}
}

func textEdit(r any, newText any) map[string]any {
	return map[string]any{"range": r, "newText": newText}
}

// faultyAnswer turns the n-th answer to nes/suggest into what the fault mode sends.
func (a *Agent) faultyAnswer(ctx context.Context, n int, p acp.UnstableSuggestNesRequest, res any) (any, *acp.RequestError) {
	good := suggestionsOf(res)
	uri := p.Uri
	answer := func(sugs []any) map[string]any {
		if sugs == nil {
			sugs = []any{}
		}
		return map[string]any{"suggestions": sugs}
	}
	switch a.cfg.Fault {
	case FaultJunk:
		var lines [][]byte
		for i := range 40 {
			lines = append(lines, fmt.Appendf(nil, "[agent] thinking about suggestion %d, step %d ...", n, i))
		}
		lines = append(lines, []byte(`{"jsonrpc":"2.0","id":`), []byte(`42`))
		a.wire.raw(lines...)
		return res, nil
	case FaultHuge:
		if n == 1 {
			const size = 50 << 20
			var b bytes.Buffer
			b.Grow(size + 100)
			b.WriteString(`{"jsonrpc":"2.0","method":"_test/huge","params":{"blob":"`)
			b.WriteString(strings.Repeat("a", size))
			b.WriteString(`"}}`)
			a.wire.raw(b.Bytes())
		}
		return res, nil
	case FaultTypes:
		if n == 1 {
			return json.RawMessage(`{"suggestions":"x"}`), nil
		}
		id := func(s string) string { return fmt.Sprintf("types-%s-%d", s, n) }
		bad := []any{
			edit(id("range"), uri, textEdit("0:0-0:1", "x")),
			edit(id("newtext"), uri, textEdit(rng(0, 0, 0, 1), 42)),
			edit(id("negative"), uri, textEdit(rng(-1, -3, -1, 0), "x")),
			map[string]any{"kind": "jump", "id": id("jump"), "uri": uri, "position": pos(-2, 0)},
			map[string]any{"kind": "edit", "id": 7, "uri": uri, "edits": []any{textEdit(rng(0, 0, 0, 1), "x")}},
			"a string where a suggestion belongs",
			map[string]any{"kind": []any{"edit"}, "id": id("kind"), "uri": uri, "edits": []any{textEdit(rng(0, 0, 0, 1), "x")}},
			map[string]any{"kind": "edit", "id": id("uri"), "uri": 12, "edits": []any{textEdit(rng(0, 0, 0, 1), "x")}},
		}
		return answer(append(bad, good...)), nil
	case FaultEdits:
		id := func(s string) string { return fmt.Sprintf("edits-%s-%d", s, n) }
		bad := []any{
			edit(id("range"), uri, textEdit(rng(999, 0, 999, 1), "x")),
			edit(id("overlap"), uri, textEdit(rng(0, 0, 0, 4), "a"), textEdit(rng(0, 2, 0, 6), "b")),
			edit(id("reversed"), uri, textEdit(rng(0, 5, 0, 1), "x")),
			edit(id("mixed"), uri, textEdit(rng(0, 0, 0, 1), "P"), textEdit(rng(999, 0, 999, 0), "x")),
			edit(id("none"), uri),
			map[string]any{"kind": "teleport", "id": id("kind"), "uri": uri, "position": pos(0, 0)},
		}
		return answer(append(bad, good...)), nil
	case FaultIDs:
		var out []any
		for _, g := range good {
			s, ok := g.(map[string]any)
			if !ok {
				continue
			}
			s["id"] = "ids-reused"
			second := map[string]any{}
			for k, v := range s {
				second[k] = v
			}
			if edits, ok := s["edits"].([]any); ok && len(edits) > 0 {
				if e, ok := edits[0].(map[string]any); ok {
					second["edits"] = []any{textEdit(e["range"], "SECOND COPY")}
				}
			}
			out = append(out, s, second)
		}
		return answer(out), nil
	case FaultUTF8:
		a.wire.raw([]byte("{\"jsonrpc\":\"2.0\",\"method\":\"_test/utf8\",\xff\xfe}"))
		out := append([]any(nil), good...)
		for _, g := range good {
			s, ok := g.(map[string]any)
			if !ok {
				continue
			}
			bad := map[string]any{}
			for k, v := range s {
				bad[k] = v
			}
			bad["id"] = fmt.Sprintf("utf8-%d", n)
			if edits, ok := s["edits"].([]any); ok && len(edits) > 0 {
				if e, ok := edits[0].(map[string]any); ok {
					bad["edits"] = []any{textEdit(e["range"], fmt.Sprint(e["newText"], invalidUTF8Token))}
				}
			}
			out = append(out, bad)
		}
		return answer(out), nil
	case FaultUnknown:
		_ = a.connection().SendNotification(ctx, "weird/notice", map[string]any{"n": n})
		_ = a.connection().SendNotification(ctx, "session/update", map[string]any{
			"sessionId": "no-such-session",
			"update":    map[string]any{"sessionUpdate": "agent_message_chunk", "content": map[string]any{"type": "text", "text": "hello"}},
		})
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := a.Call(cctx, "weird/method", map[string]any{"n": n})
		cancel()
		answerLog := map[string]any{"method": "weird/method"}
		if re, ok := err.(*acp.RequestError); ok {
			answerLog["error"] = map[string]any{"code": re.Code, "message": re.Message}
		} else if err != nil {
			answerLog["error"] = map[string]any{"message": err.Error()}
		}
		b, _ := json.Marshal(answerLog)
		a.record("fault/answer", b)
		go func() {
			// After the answer has gone out.
			time.Sleep(20 * time.Millisecond)
			_ = a.connection().SendNotification(context.Background(), "weird/notice", map[string]any{"n": n, "after": true})
		}()
		return res, nil
	}
	return res, nil
}
