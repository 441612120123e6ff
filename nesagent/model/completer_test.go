package model

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/uri"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent"
)

// absPath is /w/NAME as an absolute path on this platform (C:\w\NAME on Windows), and fileURI
// its file: URI: an agent's edits name paths, the editor URIs.
func absPath(name string) string {
	p, _ := filepath.Abs(filepath.FromSlash("/w/" + name))
	return p
}

func fileURI(name string) string { return string(uri.File(absPath(name))) }

type fixedCompleter struct {
	answer Answer
	got    []Prompt
}

func (f *fixedCompleter) Complete(_ context.Context, p Prompt) (Answer, error) {
	f.got = append(f.got, p)
	return f.answer, nil
}

// TestWithCompleterReadsProposedChanges: a coding agent's proposed changes (a replacement found
// nearest the cursor, a whole new text, a change to another open file) become suggestions; a
// change to a file that is not open, or of text the document does not hold, is left out.
func TestWithCompleterReadsProposedChanges(t *testing.T) {
	old := "x := 1"
	missing := "not there"
	c := &fixedCompleter{answer: Answer{Text: "ignored when there are changes", Changes: []Change{
		{Path: absPath("a.go"), OldText: &old, NewText: "x := 2"},
		{Path: absPath("b.go"), NewText: "package b\n\nvar y = 3\n"},
		{Path: absPath("c.go"), NewText: "package c\n"},
		{Path: absPath("a.go"), OldText: &missing, NewText: "nothing"},
	}}}
	e, err := WithCompleter(Config{}, c)
	if err != nil {
		t.Fatal(err)
	}
	text := "package a\n\nfunc f() {\n\tx := 1\n}\n\nfunc g() {\n\tx := 1\n}\n"
	req := nesagent.Request{URI: fileURI("a.go"), Text: text, Cursor: len(text) - 4, Open: []nesagent.OpenDocument{{URI: fileURI("b.go"), Text: "package b\n\nvar y = 2\n"}}}
	sugs, err := e.Suggest(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.got) != 1 || c.got[0].URI != fileURI("a.go") || c.got[0].System == "" || c.got[0].User == "" {
		t.Fatalf("prompts %+v", c.got)
	}
	if len(sugs) != 2 {
		t.Fatalf("suggestions %+v, want one for a.go and one for b.go", sugs)
	}
	// The second "x := 1" is the one nearest the cursor.
	a := sugs[0]
	if a.URI != "" || len(a.Edits) != 1 || a.Edits[0].NewText != "2" || a.Edits[0].Start != len(text)-4 {
		t.Errorf("a.go suggestion %+v, want \"2\" over the second 1 at %d", a, len(text)-4)
	}
	b := sugs[1]
	if b.URI != fileURI("b.go") || len(b.Edits) != 1 || b.Edits[0].NewText != "3" {
		t.Errorf("b.go suggestion %+v, want \"3\"", b)
	}
}

// TestWithCompleterReadsText: without changes, the answer's text is read between the markers as
// for a model server.
func TestWithCompleterReadsText(t *testing.T) {
	c := &fixedCompleter{answer: Answer{Text: markStart + "\npackage a\n\nvar v = 2\n" + markEnd}}
	e, err := WithCompleter(Config{}, c)
	if err != nil {
		t.Fatal(err)
	}
	text := "package a\n\nvar v = 1\n"
	sugs, err := e.Suggest(context.Background(), nesagent.Request{URI: fileURI("a.go"), Text: text, Cursor: len(text) - 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(sugs) != 1 || len(sugs[0].Edits) != 1 || sugs[0].Edits[0].NewText != "2" {
		t.Fatalf("suggestions %+v, want one edit to 2", sugs)
	}
}

// TestPromptShowsDiagnostics: the problems the editor shows are in the prompt, those in the
// region first.
func TestPromptShowsDiagnostics(t *testing.T) {
	c := &fixedCompleter{}
	e, err := WithCompleter(Config{LinesAbove: 1, LinesBelow: 1}, c)
	if err != nil {
		t.Fatal(err)
	}
	text := "package a\n\nfunc f() {\n\tfo(1)\n}\n\n\n\n\n\nvar z = y\n"
	_, _ = e.Suggest(context.Background(), nesagent.Request{URI: fileURI("a.go"), Text: text, Cursor: 14 + 3, Diagnostics: []nesagent.Diagnostic{
		{Line: 10, Severity: "error", Message: "undefined: y"},
		{Line: 3, Severity: "error", Message: "undefined: fo"},
	}})
	if len(c.got) != 1 {
		t.Fatal("no prompt")
	}
	u := c.got[0].User
	want := "- line 4, error: undefined: fo\n- line 11, error: undefined: y\n"
	if !strings.Contains(u, want) {
		t.Errorf("the prompt lacks %q:\n%s", want, u)
	}
}

// blockingCompleter answers after release is closed, or fails when its request is cancelled; it
// counts the requests in flight, per document and at most.
type blockingCompleter struct {
	release chan struct{}
	mu      sync.Mutex
	now     map[string]int
	most    map[string]int
	calls   int
}

func (b *blockingCompleter) Complete(ctx context.Context, p Prompt) (Answer, error) {
	b.mu.Lock()
	b.calls++
	b.now[p.URI]++
	b.most[p.URI] = max(b.most[p.URI], b.now[p.URI])
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		b.now[p.URI]--
		b.mu.Unlock()
	}()
	select {
	case <-b.release:
		return Answer{Text: "unreadable"}, nil
	case <-ctx.Done():
		return Answer{}, ctx.Err()
	}
}

// TestOneGenerationPerDocument: a request for a document ends the one in flight for it before it
// asks the model (at most one generation per document), while other documents' go on.
func TestOneGenerationPerDocument(t *testing.T) {
	c := &blockingCompleter{release: make(chan struct{}), now: map[string]int{}, most: map[string]int{}}
	e, err := WithCompleter(Config{}, c)
	if err != nil {
		t.Fatal(err)
	}
	ask := func(uri string) <-chan error {
		done := make(chan error, 1)
		go func() {
			_, err := e.Suggest(context.Background(), nesagent.Request{URI: uri, Text: "a := 1\n", Cursor: 3})
			done <- err
		}()
		return done
	}
	waitCalls := func(n int) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
			c.mu.Lock()
			got := c.calls
			c.mu.Unlock()
			if got >= n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d calls, want %d", got, n)
			}
		}
	}
	first := ask("file:///w/a.go")
	waitCalls(1)
	other := ask("file:///w/b.go")
	waitCalls(2)
	second := ask("file:///w/a.go")
	select {
	case err := <-first:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the superseded request ended with %v, want it cancelled", err)
		}
	case <-time.After(5 * time.Second):
		close(c.release)
		t.Fatal("the superseded request is still in flight")
	}
	waitCalls(3)
	close(c.release)
	if err := <-second; err != nil {
		t.Error(err)
	}
	if err := <-other; err != nil {
		t.Errorf("another document's request: %v", err)
	}
	if c.most["file:///w/a.go"] != 1 || c.most["file:///w/b.go"] != 1 {
		t.Errorf("in flight at most %v, want 1 per document", c.most)
	}
}

// TestPathsInThePrompt: a model is told the file's name relative to the workspace folder; a
// coding agent (AbsolutePaths), whose tools work on files, its absolute path.
func TestPathsInThePrompt(t *testing.T) {
	req := nesagent.Request{URI: fileURI("src/a.go"), Root: absPath(""), Text: "package a\n", Cursor: 3}
	for _, abs := range []bool{false, true} {
		c := &fixedCompleter{}
		e, err := WithCompleter(Config{AbsolutePaths: abs}, c)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Suggest(context.Background(), req); err != nil || len(c.got) != 1 {
			t.Fatalf("%v, %+v", err, c.got)
		}
		hasAbs, hasRel := strings.Contains(c.got[0].User, absPath("src/a.go")), strings.Contains(c.got[0].User, "src/a.go")
		if hasAbs != abs || !abs && !hasRel {
			t.Errorf("AbsolutePaths %v: the prompt names the file as:\n%s", abs, c.got[0].User)
		}
	}
}
