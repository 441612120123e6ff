package nesagent

import (
	"context"
	"io"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"
	"github.com/rs/zerolog"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/acpside"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
)

func TestMain(m *testing.M) {
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	os.Exit(m.Run())
}

// recorder is an engine that remembers its requests and suggests inserting "!" at the cursor.
type recorder struct {
	mu   sync.Mutex
	reqs []Request
}

func (r *recorder) Suggest(_ context.Context, req Request) ([]Suggestion, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	cur := req.Cursor + 1
	return []Suggestion{{Edits: []TextEdit{{Start: req.Cursor, End: req.Cursor, NewText: "!"}}, Cursor: &cur}}, nil
}

// connect runs an agent around engine and returns the bridge's client side, initialized with an
// offer of encodings.
func connect(t *testing.T, engine Engine, offer ...encoding.Kind) *acpside.Agent {
	t.Helper()
	toAgentR, toAgentW := io.Pipe()
	fromAgentR, fromAgentW := io.Pipe()
	go func() {
		New(engine, Options{Name: "test", Version: "1"}).Serve(toAgentR, fromAgentW)
		fromAgentW.Close()
	}()
	c := acpside.Connect(fromAgentR, toAgentW, acpside.Options{Log: zerolog.Nop(), Encodings: offer})
	t.Cleanup(func() { c.Close(context.Background()) })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.StartNES(ctx, acp.UnstableStartNesRequest{}); err != nil {
		t.Fatal(err)
	}
	return c
}

func insert(line, char int, text string) acp.UnstableTextDocumentContentChangeEvent {
	p := acp.UnstablePosition{Line: line, Character: char}
	return acp.UnstableTextDocumentContentChangeEvent{Range: &acp.UnstableRange{Start: p, End: p}, Text: text}
}

func TestKitGroupsKeystrokesAndConvertsPositions(t *testing.T) {
	eng := &recorder{}
	c := connect(t, eng, encoding.UTF16, encoding.UTF32) // no utf-8 offered: utf-32 is chosen
	if c.Encoding() != encoding.UTF32 {
		t.Fatalf("encoding %s, want utf-32", c.Encoding())
	}
	ctx := context.Background()
	const u = "file:///w/a.go"
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(c.DidOpen(ctx, acp.UnstableDidOpenDocumentNotification{Uri: u, LanguageId: "go", Version: 1, Text: "x := 𐐀(a)\ny := 𐐀(a)\n"}))
	// The user types ", b" after "a" on line 0, one key at a time (utf-32 column 8), then fixes a
	// typo with a backspace.
	v := 1
	for i, ch := range []string{",", " ", "c"} {
		v++
		must(c.DidChange(ctx, acp.UnstableDidChangeDocumentNotification{Uri: u, Version: v, ContentChanges: []acp.UnstableTextDocumentContentChangeEvent{insert(0, 8+i, ch)}}))
	}
	v++
	must(c.DidChange(ctx, acp.UnstableDidChangeDocumentNotification{Uri: u, Version: v, ContentChanges: []acp.UnstableTextDocumentContentChangeEvent{{
		Range: &acp.UnstableRange{Start: acp.UnstablePosition{Line: 0, Character: 10}, End: acp.UnstablePosition{Line: 0, Character: 11}}, Text: "b",
	}}}))
	sugs, err := c.Suggest(ctx, acp.UnstableSuggestNesRequest{Uri: u, Version: v, Position: acp.UnstablePosition{Line: 0, Character: 11}, TriggerKind: "automatic"})
	must(err)
	eng.mu.Lock()
	req := eng.reqs[0]
	eng.mu.Unlock()
	if req.Text != "x := 𐐀(a, b)\ny := 𐐀(a)\n" || req.Cursor != len("x := 𐐀(a, b") || req.Version != v {
		t.Fatalf("request text %q cursor %d version %d", req.Text, req.Cursor, req.Version)
	}
	if len(req.Recent) != 1 {
		t.Fatalf("recent edits %+v, want the keystrokes as one edit", req.Recent)
	}
	e := req.Recent[0]
	if e.Old != "" || e.New != ", b" || e.Start != len("x := 𐐀(a") || e.OldLines != "x := 𐐀(a)" || e.NewLines != "x := 𐐀(a, b)" || e.LineStart != 0 {
		t.Errorf("edit %+v", e)
	}
	if len(sugs) != 1 || sugs[0].Edit == nil {
		t.Fatalf("suggestions %+v", sugs)
	}
	got := sugs[0].Edit
	if got.Edits[0].Range.Start.Character != 11 || got.Edits[0].NewText != "!" || got.CursorPosition == nil || got.CursorPosition.Character != 12 {
		t.Errorf("suggestion %+v cursor %+v (utf-32 positions)", got.Edits, got.CursorPosition)
	}
	// An edit somewhere else starts a new one; the first keeps its lines.
	v++
	must(c.DidChange(ctx, acp.UnstableDidChangeDocumentNotification{Uri: u, Version: v, ContentChanges: []acp.UnstableTextDocumentContentChangeEvent{insert(1, 0, "\t")}}))
	_, err = c.Suggest(ctx, acp.UnstableSuggestNesRequest{Uri: u, Version: v, Position: acp.UnstablePosition{Line: 1, Character: 1}})
	must(err)
	eng.mu.Lock()
	req = eng.reqs[1]
	eng.mu.Unlock()
	if len(req.Recent) != 2 || req.Recent[0].NewLines != "x := 𐐀(a, b)" || req.Recent[1].New != "\t" || req.Recent[1].NewLines != "\ty := 𐐀(a)" {
		t.Errorf("recent edits %+v", req.Recent)
	}
}
