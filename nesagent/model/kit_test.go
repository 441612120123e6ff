package model

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	acp "github.com/coder/acp-go-sdk"
	"github.com/rs/zerolog"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/acpside"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent"
)

// serveKit runs a nesagent agent around engine on pipes and returns the bridge's client side,
// initialized (offering only utf-16, so that the kit converts positions) and with NES started.
func serveKit(t *testing.T, engine nesagent.Engine) *acpside.Agent {
	t.Helper()
	toAgentR, toAgentW := io.Pipe()
	fromAgentR, fromAgentW := io.Pipe()
	go func() {
		nesagent.New(engine, nesagent.Options{Name: "model", Version: "test"}).Serve(toAgentR, fromAgentW)
		fromAgentW.Close()
	}()
	c := acpside.Connect(fromAgentR, toAgentW, acpside.Options{Log: zerolog.Nop(), Encodings: []encoding.Kind{encoding.UTF16}})
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

func utf16Len(s string) int { return len(utf16.Encode([]rune(s))) }

func TestThroughTheKit(t *testing.T) {
	// The model finishes the change the user started: a third argument to add.
	srv := newFake(t, rewriter(t, func(r string) string {
		return strings.Replace(r, `add("𐐀", 3)`, `add("𐐀", 3, 4)`, 1)
	}, marked))
	eng, err := New(Config{URL: srv.URL, Model: "local", Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	c := serveKit(t, eng)
	ctx := context.Background()
	const u = "file:///w/main.go"
	text := "package main\n\nfunc main() {\n\tx := add(\"𐐀\", 1)\n\ty := add(\"𐐀\", 3)\n}\n"
	if err := c.DidOpen(ctx, acp.UnstableDidOpenDocumentNotification{Uri: u, LanguageId: "go", Version: 1, Text: text}); err != nil {
		t.Fatal(err)
	}
	// The user types ", 2" after the 1 on line 3, one key at a time (utf-16 columns).
	col := utf16Len("\tx := add(\"𐐀\", 1")
	for i, ch := range []string{",", " ", "2"} {
		p := acp.UnstablePosition{Line: 3, Character: col + i}
		if err := c.DidChange(ctx, acp.UnstableDidChangeDocumentNotification{Uri: u, Version: 2 + i, ContentChanges: []acp.UnstableTextDocumentContentChangeEvent{{
			Range: &acp.UnstableRange{Start: p, End: p}, Text: ch,
		}}}); err != nil {
			t.Fatal(err)
		}
	}
	sugs, err := c.Suggest(ctx, acp.UnstableSuggestNesRequest{Uri: u, Version: 4, Position: acp.UnstablePosition{Line: 3, Character: col + 3}, TriggerKind: "automatic"})
	if err != nil {
		t.Fatal(err)
	}
	user := srv.last(t).Body.Messages[1].Content
	for _, want := range []string{
		"@@ -4,1 +4,1 @@\n-\tx := add(\"𐐀\", 1)\n+\tx := add(\"𐐀\", 1, 2)\n",
		markStart + "\npackage main\n\nfunc main() {\n\tx := add(\"𐐀\", 1, 2" + markCursor + ")\n",
	} {
		if !strings.Contains(user, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, user)
		}
	}
	if len(sugs) != 1 || sugs[0].Edit == nil || len(sugs[0].Edit.Edits) != 1 {
		t.Fatalf("suggestions %+v", sugs)
	}
	e := sugs[0].Edit
	at := acp.UnstablePosition{Line: 4, Character: utf16Len("\ty := add(\"𐐀\", 3")}
	if e.Uri != u || e.Edits[0].Range.Start != at || e.Edits[0].Range.End != at || e.Edits[0].NewText != ", 4" {
		t.Errorf("edit %+v, want \", 4\" inserted at %+v", e.Edits, at)
	}
}

func TestCancelThroughTheKit(t *testing.T) {
	arrived, aborted := make(chan struct{}), make(chan struct{})
	srv := newFake(t, func(w http.ResponseWriter, r *http.Request, _ chatRequest) {
		close(arrived)
		select {
		case <-time.After(10 * time.Second):
		case <-r.Context().Done():
			close(aborted)
			return
		}
		reply(w, "")
	})
	eng, err := New(Config{URL: srv.URL, Model: "local", Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	c := serveKit(t, eng)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const u = "file:///w/a.txt"
	if err := c.DidOpen(ctx, acp.UnstableDidOpenDocumentNotification{Uri: u, Version: 1, Text: "hello\n"}); err != nil {
		t.Fatal(err)
	}
	go func() {
		<-arrived
		cancel() // the editor gives up: $/cancel_request reaches the agent
	}()
	_, err = c.Suggest(ctx, acp.UnstableSuggestNesRequest{Uri: u, Version: 1, Position: acp.UnstablePosition{Line: 0, Character: 5}})
	if !errors.Is(err, acpside.ErrCancelled) {
		t.Fatalf("error %v, want ErrCancelled", err)
	}
	select {
	case <-aborted:
	case <-time.After(3 * time.Second):
		t.Fatal("the request to the model was not aborted")
	}
}
