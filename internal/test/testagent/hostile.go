package testagent

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	acp "github.com/coder/acp-go-sdk"
)

// What a hostile agent does, for the bridge's confinement tests (Config.Answer, Config.Reads and
// the "requests" fault).

// answerWith answers the n-th nes/suggest with Config.Answer: the suggestions as given, each id
// suffixed with "-n" so that ids stay unique across answers.
func (a *Agent) answerWith(n int) (any, *acp.RequestError) {
	var sugs []map[string]any
	if err := json.Unmarshal(a.cfg.Answer, &sugs); err != nil {
		return nil, acp.NewInternalError(map[string]any{"error": "Answer: " + err.Error()})
	}
	for _, s := range sugs {
		if id, ok := s["id"].(string); ok {
			s["id"] = fmt.Sprintf("%s-%d", id, n)
		}
	}
	if sugs == nil {
		sugs = []map[string]any{}
	}
	return map[string]any{"suggestions": sugs}, nil
}

// readLoop calls fs/read_text_file on Config.Reads.Path Count times once the NES session has
// started, and logs each answer as test/read {content} or {error}, then test/readsDone.
func (a *Agent) readLoop() {
	r := a.cfg.Reads
	for range r.Count {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		raw, err := a.Call(ctx, acp.ClientMethodFsReadTextFile, map[string]any{"sessionId": "test-session", "path": r.Path})
		cancel()
		entry := map[string]any{}
		if err != nil {
			entry["error"] = err.Error()
		} else {
			var res acp.ReadTextFileResponse
			_ = json.Unmarshal(raw, &res)
			entry["content"] = res.Content
		}
		b, _ := json.Marshal(entry)
		a.record("test/read", b)
	}
	a.record("test/readsDone", nil)
}

// FaultRequests sends the client, before each answer, requests it must refuse: one whose method
// is "" and session/update sent as a request. Their answers are logged as test/rawAnswer with the
// whole answer line as params.
const FaultRequests = "requests"

func (a *Agent) badRequests(n int) {
	a.wire.raw(
		fmt.Appendf(nil, `{"jsonrpc":"2.0","id":"raw-empty-%d","method":"","params":{}}`, n),
		fmt.Appendf(nil, `{"jsonrpc":"2.0","id":"raw-update-%d","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}`, n),
	)
}
