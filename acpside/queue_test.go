package acpside

import (
	"bufio"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"
)

func frame(t *testing.T, id int, method string, params any) []byte {
	t.Helper()
	m := map[string]any{"jsonrpc": "2.0", "method": method, "params": params}
	if id > 0 {
		m["id"] = id
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

func change(uri, text string, ranged bool) map[string]any {
	c := map[string]any{"text": text}
	if ranged {
		c["range"] = map[string]any{"start": map[string]any{"line": 0, "character": 0}, "end": map[string]any{"line": 0, "character": 0}}
	}
	return map[string]any{"uri": uri, "contentChanges": []any{c}}
}

// TestOutQueueNeverWaitsAndCollapsesWholeTexts: with a reader that reads nothing, writes return at
// once; once the reader is behind, pending whole texts of one document collapse to the newest unless a request or another
// message about the document lies between; once read, everything comes in order.
func TestOutQueueNeverWaitsAndCollapsesWholeTexts(t *testing.T) {
	r, w := io.Pipe()
	stuck := make(chan string, 1)
	q := newOutQueue(w, time.Hour, func(why string) { stuck <- why })
	big := strings.Repeat("x", collapseBytes+1) // more than a pipe holds, and the agent is behind
	writes := [][]byte{
		frame(t, 0, "document/didOpen", map[string]any{"uri": "a", "text": big}),
		frame(t, 0, "document/didChange", change("a", "a1", false)),
		frame(t, 0, "document/didChange", change("b", "b1", false)),
		frame(t, 0, "document/didChange", change("a", "a2", false)), // replaces a1
		frame(t, 1, "nes/suggest", map[string]any{"uri": "a"}),
		frame(t, 0, "document/didChange", change("a", "a3", false)), // not across the request
		frame(t, 0, "document/didSave", map[string]any{"uri": "a"}),
		frame(t, 0, "document/didChange", change("a", "a4", false)), // not across the save
		frame(t, 0, "document/didChange", change("a", "a5", true)),  // a range: not a whole text
		frame(t, 0, "document/didChange", change("b", "b2", false)), // not b1: a request lies between
	}
	done := make(chan struct{})
	go func() {
		for _, f := range writes {
			if _, err := q.Write(f); err != nil {
				t.Error(err)
			}
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Write waited for the reader")
	}
	var got []string
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 4<<20)
	for len(got) < 8 && sc.Scan() {
		var m struct {
			Method string `json:"method"`
			Params struct {
				URI            string `json:"uri"`
				ContentChanges []struct {
					Text string `json:"text"`
				} `json:"contentChanges"`
			} `json:"params"`
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		d := m.Method
		if len(m.Params.ContentChanges) > 0 {
			d += " " + m.Params.ContentChanges[0].Text
		}
		got = append(got, d)
	}
	want := []string{"document/didOpen", "document/didChange b1", "document/didChange a2", "nes/suggest", "document/didChange a3", "document/didSave", "document/didChange a4", "document/didChange a5"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the agent read:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if q.collapsed() != 1 {
		t.Errorf("collapsed %d, want 1", q.collapsed())
	}
	select {
	case why := <-stuck:
		t.Errorf("stuck: %s", why)
	default:
	}
	r.Close()
	q.Close()
}

// TestOutQueueReportsAStuckReader: a reader that reads nothing for longer than the bound is
// reported once; Close then ends the blocked write.
func TestOutQueueReportsAStuckReader(t *testing.T) {
	r, w := io.Pipe()
	defer r.Close()
	stuck := make(chan string, 2)
	q := newOutQueue(w, 50*time.Millisecond, func(why string) { stuck <- why })
	if _, err := q.Write(frame(t, 0, "document/didOpen", map[string]any{"uri": "a", "text": "x"})); err != nil {
		t.Fatal(err)
	}
	select {
	case why := <-stuck:
		if !strings.Contains(why, "read nothing of its input for 50ms") {
			t.Errorf("reason %q", why)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a reader that reads nothing was not reported")
	}
	q.Close()
	select {
	case why := <-stuck:
		t.Errorf("reported twice: %s", why)
	default:
	}
	if _, err := q.Write([]byte("{}\n")); err == nil {
		t.Error("Write after Close succeeded")
	}
}

// TestOutQueueKeepsEveryChangeForAnAgentThatKeepsUp: a reader that is not behind gets every whole
// text.
func TestOutQueueKeepsEveryChangeForAnAgentThatKeepsUp(t *testing.T) {
	r, w := io.Pipe()
	q := newOutQueue(w, time.Hour, func(string) {})
	defer q.Close()
	defer r.Close()
	for _, text := range []string{"a1", "a2", "a3"} {
		if _, err := q.Write(frame(t, 0, "document/didChange", change("a", text, false))); err != nil {
			t.Fatal(err)
		}
	}
	sc := bufio.NewScanner(r)
	for _, want := range []string{"a1", "a2", "a3"} {
		if !sc.Scan() || !strings.Contains(sc.Text(), `"text":"`+want+`"`) {
			t.Fatalf("read %q, want the change to %s", sc.Text(), want)
		}
	}
	if q.collapsed() != 0 {
		t.Errorf("collapsed %d", q.collapsed())
	}
}

// chunkWriter records each write it gets.
type chunkWriter struct {
	writes chan string
}

func (c chunkWriter) Write(p []byte) (int, error) { c.writes <- string(p); return len(p), nil }
func (c chunkWriter) Close() error                { return nil }

// TestOutQueueLazyFramesGoWithTheNext: a lazy message (the end of a suggestion) waits for the next
// one and goes in the same write, before it; alone, it goes after lazyWait.
func TestOutQueueLazyFramesGoWithTheNext(t *testing.T) {
	w := chunkWriter{writes: make(chan string, 10)}
	q := newOutQueue(w, time.Hour, func(string) {})
	defer q.Close()
	reject := frame(t, 0, "nes/reject", map[string]any{"id": "s1"})
	suggest := frame(t, 2, "nes/suggest", map[string]any{"uri": "a"})
	if err := q.WriteLazy(reject); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Write(suggest); err != nil {
		t.Fatal(err)
	}
	if got := <-w.writes; got != string(reject)+string(suggest) {
		t.Errorf("one write %q, want the reject, then the request", got)
	}
	began := time.Now()
	if err := q.WriteLazy(reject); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-w.writes:
		if got != string(reject) || time.Since(began) < lazyWait/2 {
			t.Errorf("alone, %q came after %v; want the reject after about %v", got, time.Since(began), lazyWait)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a lazy message alone never went")
	}
}
