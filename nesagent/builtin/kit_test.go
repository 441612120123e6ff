package builtin_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"
	"github.com/rs/zerolog"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/acpside"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent/builtin"
)

func TestMain(m *testing.M) {
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	os.Exit(m.Run())
}

// connect runs the built-in engine in a kit agent and returns the bridge's client side, which
// offers utf-16 only, so that every position crosses a conversion.
func connect(t *testing.T) *acpside.Agent {
	t.Helper()
	return connectWith(t, acpside.ClientKinds{})
}

// connectWith is connect for a client that presents these suggestion kinds.
func connectWith(t *testing.T, kinds acpside.ClientKinds) *acpside.Agent {
	t.Helper()
	toAgentR, toAgentW := io.Pipe()
	fromAgentR, fromAgentW := io.Pipe()
	go func() {
		nesagent.New(builtin.New(), nesagent.Options{Name: "builtin", Version: "test"}).Serve(toAgentR, fromAgentW)
		fromAgentW.Close()
	}()
	c := acpside.Connect(fromAgentR, toAgentW, acpside.Options{Log: zerolog.Nop(), Encodings: []encoding.Kind{encoding.UTF16}, Kinds: kinds})
	t.Cleanup(func() { c.Close(context.Background()) })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	if c.Encoding() != encoding.UTF16 {
		t.Fatalf("encoding %s", c.Encoding())
	}
	if err := c.StartNES(ctx, acp.UnstableStartNesRequest{}); err != nil {
		t.Fatal(err)
	}
	return c
}

func pos(line, char int) acp.UnstablePosition {
	return acp.UnstablePosition{Line: line, Character: char}
}

func replace(from, to acp.UnstablePosition, text string) []acp.UnstableTextDocumentContentChangeEvent {
	return []acp.UnstableTextDocumentContentChangeEvent{{Range: &acp.UnstableRange{Start: from, End: to}, Text: text}}
}

// got describes a suggestion's single edit as line:char-line:char → text, and its cursor.
type got struct {
	start, end, cursor acp.UnstablePosition
	text               string
}

func suggestions(t *testing.T, c *acpside.Agent, uri string, version int, at acp.UnstablePosition) []got {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sugs, err := c.Suggest(ctx, acp.UnstableSuggestNesRequest{Uri: uri, Version: version, Position: at, TriggerKind: "automatic"})
	if err != nil {
		t.Fatal(err)
	}
	var out []got
	for _, s := range sugs {
		if s.Edit == nil || len(s.Edit.Edits) != 1 || s.Edit.CursorPosition == nil {
			t.Fatalf("suggestion %+v", s)
		}
		e := s.Edit.Edits[0]
		out = append(out, got{e.Range.Start, e.Range.End, *s.Edit.CursorPosition, e.NewText})
	}
	return out
}

func TestKitRename(t *testing.T) {
	c := connect(t)
	ctx := context.Background()
	const u = "file:///w/a.go"
	text := "// 日本語 𐐀 count\n" +
		"count := 0\n" +
		"𐐀 := count + 1 // 日本\n" +
		"log(\"é\", count)\n"
	if err := c.DidOpen(ctx, acp.UnstableDidOpenDocumentNotification{Uri: u, LanguageId: "go", Version: 1, Text: text}); err != nil {
		t.Fatal(err)
	}
	// The user renames count on line 1 (a replacement of the word, as after a double click).
	if err := c.DidChange(ctx, acp.UnstableDidChangeDocumentNotification{Uri: u, Version: 2, ContentChanges: replace(pos(1, 0), pos(1, 5), "total")}); err != nil {
		t.Fatal(err)
	}
	sugs := suggestions(t, c, u, 2, pos(1, 5))
	// Nearest first; utf-16 columns: 𐐀 counts 2, 日本語 3, é 1.
	want := []got{
		{pos(0, 10), pos(0, 15), pos(0, 15), "total"},
		{pos(2, 6), pos(2, 11), pos(2, 11), "total"},
		{pos(3, 9), pos(3, 14), pos(3, 14), "total"},
	}
	if len(sugs) != len(want) {
		t.Fatalf("suggestions %+v, want %+v", sugs, want)
	}
	for i := range want {
		if sugs[i] != want[i] {
			t.Errorf("suggestion %d: %+v, want %+v", i, sugs[i], want[i])
		}
	}
}

func TestKitRepeatedEditTypedKeyByKey(t *testing.T) {
	c := connect(t)
	ctx := context.Background()
	const u = "file:///w/b.go"
	if err := c.DidOpen(ctx, acp.UnstableDidOpenDocumentNotification{Uri: u, LanguageId: "go", Version: 1, Text: "foo(名前)\r\nfoo(値)\r\nbar(𐐀)\r\n"}); err != nil {
		t.Fatal(err)
	}
	// ", ctx" is typed after 値 (utf-16 column 5 of line 1), one key at a time.
	v := 1
	for i, ch := range []string{",", " ", "c", "t", "x"} {
		v++
		if err := c.DidChange(ctx, acp.UnstableDidChangeDocumentNotification{Uri: u, Version: v, ContentChanges: replace(pos(1, 5+i), pos(1, 5+i), ch)}); err != nil {
			t.Fatal(err)
		}
		if ch == " " {
			// "foo(値, )" is unfinished: nothing yet.
			if sugs := suggestions(t, c, u, v, pos(1, 6+i)); len(sugs) != 0 {
				t.Errorf("while typing: %+v", sugs)
			}
		}
	}
	sugs := suggestions(t, c, u, v, pos(1, 10))
	want := got{pos(0, 6), pos(0, 6), pos(0, 11), ", ctx"}
	if len(sugs) != 1 || sugs[0] != want {
		t.Errorf("suggestions %+v, want %+v", sugs, want)
	}
}

// TestKitRenameInOtherDocuments: a rename in one document is suggested in the other open documents
// of its language that use the old name, as an edit of all their uses and a jump to the first, and
// the jump only to a client that accepts jumps.
func TestKitRenameInOtherDocuments(t *testing.T) {
	for _, jumps := range []bool{true, false} {
		t.Run(map[bool]string{true: "jumps", false: "no jumps"}[jumps], func(t *testing.T) {
			c := connectWith(t, acpside.ClientKinds{Jump: jumps})
			ctx := context.Background()
			open := func(uri, lang, text string) {
				t.Helper()
				if err := c.DidOpen(ctx, acp.UnstableDidOpenDocumentNotification{Uri: uri, LanguageId: lang, Version: 1, Text: text}); err != nil {
					t.Fatal(err)
				}
			}
			const u = "file:///w/total.go"
			open("file:///w/main.go", "go", "package main\n\n// 日本 Total\nfunc main() { println(Total(nil), Totals, Total(nil)) }\n")
			open("file:///w/README.md", "markdown", "Total adds.\n")
			open("file:///w/other.go", "go", "package main\n")
			open(u, "go", "package main\n\nfunc Total(p []int) int { return 0 }\n")
			if err := c.DidChange(ctx, acp.UnstableDidChangeDocumentNotification{Uri: u, Version: 2, ContentChanges: replace(pos(2, 5), pos(2, 10), "Sum")}); err != nil {
				t.Fatal(err)
			}
			sugs, err := c.Suggest(ctx, acp.UnstableSuggestNesRequest{Uri: u, Version: 2, Position: pos(2, 8), TriggerKind: "automatic"})
			if err != nil {
				t.Fatal(err)
			}
			var desc []string
			for _, s := range sugs {
				switch {
				case s.Edit != nil:
					d := "edit " + s.Edit.Uri
					for _, e := range s.Edit.Edits {
						d += fmt.Sprintf(" %d:%d-%d:%d=%s", e.Range.Start.Line, e.Range.Start.Character, e.Range.End.Line, e.Range.End.Character, e.NewText)
					}
					desc = append(desc, d)
				case s.Jump != nil:
					desc = append(desc, fmt.Sprintf("jump %s %d:%d", s.Jump.Uri, s.Jump.Position.Line, s.Jump.Position.Character))
				default:
					desc = append(desc, fmt.Sprintf("%+v", s))
				}
			}
			// utf-16 columns; Totals is another identifier; README.md is another language.
			want := []string{"edit file:///w/main.go 2:6-2:11=Sum 3:22-3:27=Sum 3:42-3:47=Sum"}
			if jumps {
				want = append(want, "jump file:///w/main.go 2:6")
			}
			if strings.Join(desc, "\n") != strings.Join(want, "\n") {
				t.Errorf("suggestions:\n%s\nwant:\n%s", strings.Join(desc, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}
