package acpside

import (
	"bytes"
	"testing"

	acp "github.com/coder/acp-go-sdk"
	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// sameJSON fails unless a and b are the same JSON value (members in any order).
func sameJSON(t *testing.T, what string, got, want []byte) {
	t.Helper()
	var g, w any
	if err := jsonv2.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: %s is not JSON: %v", what, got, err)
	}
	if err := jsonv2.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	gb, _ := jsonv2.Marshal(g, jsonv2.Deterministic(true))
	wb, _ := jsonv2.Marshal(w, jsonv2.Deterministic(true))
	if !bytes.Equal(gb, wb) {
		t.Errorf("%s:\n got %s\nwant %s", what, got, want)
	}
}

// TestHandWrittenMessagesAreWhatTheEncoderWrites: the bridge's own nes/suggest, nes/accept and
// nes/reject, written by hand, are the JSON the generic encoder writes for the same values.
func TestHandWrittenMessagesAreWhatTheEncoderWrites(t *testing.T) {
	reason := acp.UnstableNesRejectReasonReplaced
	suggests := map[string]acp.UnstableSuggestNesRequest{
		"plain":     {SessionId: "s1", Uri: "file:///w/a.go", Version: 3, Position: acp.UnstablePosition{Line: 10, Character: 4}, TriggerKind: acp.UnstableNesTriggerKindAutomatic},
		"quoting":   {SessionId: `s"\` + "\n", Uri: "file:///w/é 中/\u2028x.go", Version: -1, TriggerKind: acp.UnstableNesTriggerKindManual},
		"selection": {SessionId: "s", Uri: "file:///a", Selection: &acp.UnstableRange{Start: acp.UnstablePosition{Line: 1, Character: 2}, End: acp.UnstablePosition{Line: 3, Character: 4}}},
		"context and meta": {
			SessionId: "s", Uri: "file:///a", Meta: map[string]any{"trace": "x", "n": 1.5},
			Context: &acp.UnstableNesSuggestContext{
				EditHistory: []acp.UnstableNesEditHistoryEntry{{Uri: "file:///a", Diff: "-a\n+b\n"}},
				OpenFiles:   []acp.UnstableNesOpenFile{{Uri: "file:///b", LanguageId: "go"}},
			},
		},
	}
	for name, r := range suggests {
		got, err := appendSuggestParams(nil, &r)
		if err != nil {
			t.Fatal(err)
		}
		want, err := jsonv2.Marshal(&r)
		if err != nil {
			t.Fatal(err)
		}
		sameJSON(t, "nes/suggest "+name, got, want)
	}

	v1Accept, _ := jsonv2.Marshal(acp.UnstableAcceptNesNotification{SessionId: "s", Id: "sug-1"})
	sameJSON(t, "nes/accept v1", appendEndParams(nil, "s", "id", "sug-1", ""), v1Accept)
	v1Reject, _ := jsonv2.Marshal(acp.UnstableRejectNesNotification{SessionId: "s", Id: "sug-1", Reason: &reason})
	sameJSON(t, "nes/reject v1", appendEndParams(nil, "s", "id", "sug-1", reason), v1Reject)
	sameJSON(t, "nes/accept v2", appendEndParams(nil, "s", "suggestionId", "sug-1", ""), []byte(`{"sessionId":"s","suggestionId":"sug-1"}`))
	sameJSON(t, "nes/reject v2", appendEndParams(nil, "s", "suggestionId", "sug-1", reason), []byte(`{"sessionId":"s","suggestionId":"sug-1","reason":"replaced"}`))

	line := appendMessage(nil, `"nes-7"`, "nes/suggest", []byte(`{"a":1}`))
	if !bytes.HasSuffix(line, []byte("\n")) || bytes.Count(line, []byte("\n")) != 1 {
		t.Errorf("a message is one line: %q", line)
	}
	sameJSON(t, "request", line, []byte(`{"jsonrpc":"2.0","id":"nes-7","method":"nes/suggest","params":{"a":1}}`))
	sameJSON(t, "notification", appendMessage(nil, "", "nes/reject", []byte(`{}`)), []byte(`{"jsonrpc":"2.0","method":"nes/reject","params":{}}`))
	if s := appendString(nil, "a\xffb"); !jsontext.Value(s).IsValid() {
		t.Errorf("text that is not UTF-8 must still make valid JSON: %q", s)
	}
}
