package lspside_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testagent"
)

func (e *editor) agentCall(method string, params any) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return e.agent.Call(ctx, method, params)
}

func TestAgentReadsFilesInsideTheWorkspaceOnly(t *testing.T) {
	root, dir := workspaceDir(t, map[string]string{
		"open.go": "on disk\n",
		"disk.go": "one\ntwo\r\nthree\n",
		"bin.dat": "a\x00b",
	})
	_, elsewhere := workspaceDir(t, map[string]string{"secret.txt": "secret\n"})
	if err := os.Symlink(filepath.Join(elsewhere, "secret.txt"), filepath.Join(dir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	e := newEditor(t, harnessOpts{})
	e.root = root
	e.initialize()
	init := e.waitAgent("initialize", method("initialize"))
	if !strings.Contains(string(init.Params), `"fs":{"readTextFile":true,"writeTextFile":true}`) {
		t.Errorf("initialize does not advertise fs: %s", init.Params)
	}
	e.Open(root+"/open.go", "unsaved 𐐀 text\n")
	e.waitAgent("didOpen", method("document/didOpen"))
	read := func(path string, extra map[string]any) (string, error) {
		params := map[string]any{"sessionId": "test-session", "path": path}
		for k, v := range extra {
			params[k] = v
		}
		raw, err := e.agentCall("fs/read_text_file", params)
		if err != nil {
			return "", err
		}
		var res struct {
			Content string `json:"content"`
		}
		_ = json.Unmarshal(raw, &res)
		return res.Content, nil
	}
	for _, tc := range []struct {
		path  string
		extra map[string]any
		want  string
	}{
		{filepath.Join(dir, "open.go"), nil, "unsaved 𐐀 text\n"}, // the buffer, not the disk
		{filepath.Join(dir, "disk.go"), nil, "one\ntwo\r\nthree\n"},
		{filepath.Join(dir, "disk.go"), map[string]any{"line": 2, "limit": 1}, "two\r\n"},
		{filepath.Join(dir, "disk.go"), map[string]any{"line": 2}, "two\r\nthree\n"},
		{filepath.Join(dir, "disk.go"), map[string]any{"line": 9}, ""},
	} {
		got, err := read(tc.path, tc.extra)
		if err != nil || got != tc.want {
			t.Errorf("read %s %v = %q, %v; want %q", tc.path, tc.extra, got, err, tc.want)
		}
	}
	bads := []struct{ path, why string }{
		{"disk.go", "absolute"},
		{filepath.Join(dir, "..", filepath.Base(elsewhere), "secret.txt"), "outside"},
		{filepath.Join(elsewhere, "secret.txt"), "outside"},
		{filepath.Join(dir, "missing.go"), "no such file"},
		{filepath.Join(dir, "bin.dat"), "binary"},
		{filepath.Join(dir, "disk.go") + "\x00", "NUL byte"},
	}
	if _, err := os.Stat(filepath.Join(dir, "link.txt")); err == nil {
		bads = append(bads, struct{ path, why string }{filepath.Join(dir, "link.txt"), "outside"})
	} else {
		t.Logf("the symlink does not resolve here (%v; Wine makes links Windows cannot follow): its case is left out", err)
	}
	for _, bad := range bads {
		got, err := read(bad.path, nil)
		if err == nil || !strings.Contains(err.Error(), bad.why) {
			t.Errorf("read %q = %q, %v; want an error saying %q", bad.path, got, err, bad.why)
		}
	}
	if _, err := read(filepath.Join(dir, "disk.go"), map[string]any{"line": 0}); err == nil {
		t.Error("line 0 was accepted; lines are one-based")
	}
}

func TestAgentWritesThroughTheEditor(t *testing.T) {
	root, dir := workspaceDir(t, map[string]string{"disk.go": "old\n"})
	_, elsewhere := workspaceDir(t, map[string]string{})
	for _, create := range []bool{false, true} {
		e := newEditor(t, harnessOpts{agentCfg: testagent.Config{}})
		e.root = root
		caps := map[string]any{}
		if create {
			caps["workspace"] = map[string]any{"workspaceEdit": map[string]any{"documentChanges": true, "resourceOperations": []string{"create"}}}
		}
		e.initializeWith(caps)
		e.Open(root+"/open.go", "a 𐐀\nb\n")
		e.waitAgent("didOpen", method("document/didOpen"))
		write := func(path, content string) error {
			_, err := e.agentCall("fs/write_text_file", map[string]any{"sessionId": "test-session", "path": path, "content": content})
			return err
		}
		if err := write(filepath.Join(dir, "open.go"), "new\n"); err != nil {
			t.Fatal(err)
		}
		if err := write(filepath.Join(dir, "disk.go"), "NEW\n"); err != nil {
			t.Fatal(err)
		}
		errNew := write(filepath.Join(dir, "new.go"), "created\n")
		errOut := write(filepath.Join(elsewhere, "x.go"), "no")
		// A new file under a link to a folder elsewhere is elsewhere.
		_ = os.Symlink(elsewhere, filepath.Join(dir, "out"))
		if r, err := filepath.EvalSymlinks(filepath.Join(dir, "out")); err != nil || r == filepath.Join(dir, "out") {
			t.Logf("the link to a folder does not resolve here (%v; Wine makes links Windows cannot follow): its case is left out", err)
		} else {
			if err := write(filepath.Join(dir, "out", "created.go"), "no"); err == nil || !strings.Contains(err.Error(), "outside") {
				t.Errorf("creating a file under a link to a folder outside the workspace: %v", err)
			}
		}
		applied := e.Record().Applied
		var wantEdits []string
		if create {
			if errNew != nil {
				t.Errorf("creating a file: %v", errNew)
			}
			wantEdits = []string{
				`"documentChanges":[{"textDocument":{"uri":"` + root + `/open.go","version":1},"edits":[{"range":{"start":{"line":0,"character":0},"end":{"line":2,"character":0}},"newText":"new\n"}]}]`,
				`"documentChanges":[{"textDocument":{"uri":"` + root + `/disk.go","version":null},"edits":[{"range":{"start":{"line":0,"character":0},"end":{"line":1,"character":0}},"newText":"NEW\n"}]}]`,
				`"documentChanges":[{"kind":"create","uri":"` + root + `/new.go"},{"textDocument":{"uri":"` + root + `/new.go","version":null},"edits":[{"range":{"start":{"line":0,"character":0},"end":{"line":0,"character":0}},"newText":"created\n"}]}]`,
			}
		} else {
			if errNew == nil || !strings.Contains(errNew.Error(), "cannot create files") {
				t.Errorf("creating a file without the capability: %v", errNew)
			}
			wantEdits = []string{
				`"changes":{"` + root + `/open.go":[{"range":{"start":{"line":0,"character":0},"end":{"line":2,"character":0}},"newText":"new\n"}]}`,
				`"changes":{"` + root + `/disk.go":[{"range":{"start":{"line":0,"character":0},"end":{"line":1,"character":0}},"newText":"NEW\n"}]}`,
			}
		}
		if errOut == nil || !strings.Contains(errOut.Error(), "outside") {
			t.Errorf("writing outside the workspace: %v", errOut)
		}
		if len(applied) != len(wantEdits) {
			t.Fatalf("workspace/applyEdit %s, want %d", applied, len(wantEdits))
		}
		for i, w := range wantEdits {
			if !strings.Contains(string(applied[i]), w) {
				t.Errorf("applyEdit %d:\n got %s\nwant %s", i, applied[i], w)
			}
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "disk.go")); string(b) != "old\n" {
		t.Errorf("the bridge wrote the disk itself: %q", b)
	}
}

// TestAgentReadsInWorkspaceFoldersAddedLater: workspace/didChangeWorkspaceFolders moves the bounds
// of what the agent may read: a folder added is readable at once, a folder removed no longer is.
func TestAgentReadsInWorkspaceFoldersAddedLater(t *testing.T) {
	root, _ := workspaceDir(t, map[string]string{"a.go": "a\n"})
	extraURI, extra := workspaceDir(t, map[string]string{"b.go": "b\n"})
	e := newEditor(t, harnessOpts{})
	e.root = root
	e.initialize()
	e.WaitReady()
	read := func() error {
		_, err := e.agentCall("fs/read_text_file", map[string]any{"sessionId": "test-session", "path": filepath.Join(extra, "b.go")})
		return err
	}
	if err := read(); err == nil {
		t.Fatal("read a file outside the workspace")
	}
	folders := func(key string) {
		e.Notify("workspace/didChangeWorkspaceFolders", map[string]any{"event": map[string]any{
			"added": []any{}, "removed": []any{}, key: []any{map[string]any{"uri": extraURI, "name": "extra"}},
		}})
	}
	folders("added")
	deadline := time.Now().Add(5 * time.Second)
	for read() != nil && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if err := read(); err != nil {
		t.Fatalf("a file in an added folder: %v", err)
	}
	folders("removed")
	for read() == nil && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if err := read(); err == nil {
		t.Error("read a file in a folder the editor removed")
	}
}
