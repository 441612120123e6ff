package wiretrace

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestFramesAreSplitAndRecorded(t *testing.T) {
	var out bytes.Buffer
	w := New(&out)
	w.now = func() time.Time { return time.Date(2026, 11, 22, 10, 0, 0, 5, time.UTC) }
	f := w.Frames(EditorToBridge)
	stream := "Content-Length: 17\r\n\r\n{\"jsonrpc\":\"2.0\"}" +
		"Content-Length: 5\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\nnot j" +
		"garbage header\r\n\r\n" +
		"content-length: 2\r\n\r\n{}"
	for i := 0; i < len(stream); i += 7 { // arrives in pieces
		end := min(i+7, len(stream))
		if _, err := f.Write([]byte(stream[i:end])); err != nil {
			t.Fatal(err)
		}
	}
	want := strings.Join([]string{
		`{"time":"2026-11-22T10:00:00.000000005Z","dir":"editor→bridge","message":{"jsonrpc":"2.0"}}`,
		`{"time":"2026-11-22T10:00:00.000000005Z","dir":"editor→bridge","raw":"not j"}`,
		`{"time":"2026-11-22T10:00:00.000000005Z","dir":"editor→bridge","raw":"garbage header"}`,
		`{"time":"2026-11-22T10:00:00.000000005Z","dir":"editor→bridge","message":{}}`,
	}, "\n") + "\n"
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}

func TestRecordCompactsLines(t *testing.T) {
	var out bytes.Buffer
	w := New(&out)
	w.Record(AgentToBridge, []byte("{\"a\": [1, 2]}\n"))
	if !strings.HasSuffix(out.String(), `"dir":"agent→bridge","message":{"a":[1,2]}}`+"\n") {
		t.Errorf("got %s", out.String())
	}
	var nilWriter *Writer
	nilWriter.Record(AgentToBridge, []byte("{}")) // a nil writer records nothing
}
