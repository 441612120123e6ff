package acpside

import (
	"path/filepath"
	"strings"
	"testing"
)

// The cmd shims npm writes for a package's bin (cmd-shim 4 and later, and an earlier one).
const (
	npmShimNew = "@ECHO off\r\nGOTO start\r\n:find_dp0\r\nSET dp0=%~dp0\r\nEXIT /b\r\n:start\r\nSETLOCAL\r\nCALL :find_dp0\r\n\r\n" +
		"IF EXIST \"%dp0%\\node.exe\" (\r\n  SET \"_prog=%dp0%\\node.exe\"\r\n) ELSE (\r\n  SET \"_prog=node\"\r\n  SET PATHEXT=%PATHEXT:;.JS;=;%\r\n)\r\n\r\n" +
		"endLocal & goto #_undefined_# 2>NUL || title %COMSPEC% & \"%_prog%\"  \"%dp0%\\node_modules\\@zed-industries\\codex-acp\\bin\\codex-acp.js\" %*\r\n"
	npmShimOld = "@IF EXIST \"%~dp0\\node.exe\" (\r\n  \"%~dp0\\node.exe\"  \"%~dp0\\node_modules\\agent\\cli.js\" %*\r\n) ELSE (\r\n" +
		"  @SETLOCAL\r\n  @SET PATHEXT=%PATHEXT:;.JS;=;%\r\n  node  \"%~dp0\\node_modules\\agent\\cli.js\" %*\r\n)\r\n"
)

func TestNpmShimRunsNodeWithTheScript(t *testing.T) {
	dir := filepath.Join("npm", "global")
	shim := filepath.Join(dir, "codex-acp.cmd")
	never := func(string) bool { return false }
	prog, argv, err := shimCommand(shim, npmShimNew, []string{"--acp", "a b", `50%&calc`}, never)
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "node_modules", "@zed-industries", "codex-acp", "bin", "codex-acp.js")
	if prog != "node" || strings.Join(argv, "|") != script+"|--acp|a b|50%&calc" {
		t.Errorf("runs %q %q", prog, argv)
	}
	// node.exe beside the shim is the one it runs.
	beside := filepath.Join(dir, "node.exe")
	prog, _, err = shimCommand(shim, npmShimNew, nil, func(p string) bool { return p == beside })
	if err != nil || prog != beside {
		t.Errorf("with node.exe beside: %q, %v", prog, err)
	}
	prog, argv, err = shimCommand(shim, npmShimOld, nil, never)
	if err != nil || prog != "node" || len(argv) != 1 || argv[0] != filepath.Join(dir, "node_modules", "agent", "cli.js") {
		t.Errorf("an older shim: %q %q %v", prog, argv, err)
	}
	for _, text := range []string{"@echo off\r\npython agent.py %*\r\n", "", `"%_prog%" "%dp0%\%EVIL%\x.js" %*`} {
		if _, _, err := shimCommand(shim, text, nil, never); err == nil {
			t.Errorf("%q read as an npm shim", text)
		}
	}
}

func TestBatchCommandLineRefusesWhatCmdReads(t *testing.T) {
	line, err := batchCommandLine(`C:\Windows\System32\cmd.exe`, `C:\tools\agent.bat`, []string{"--acp", "a b", `C:\work dir`})
	if err != nil {
		t.Fatal(err)
	}
	if want := `"C:\Windows\System32\cmd.exe" /d /s /c ""C:\tools\agent.bat" "--acp" "a b" "C:\work dir""`; line != want {
		t.Errorf("command line %s, want %s", line, want)
	}
	for _, arg := range []string{`a&calc`, `%PATH%`, `x"y`, `a|b`, `!x!`, "a\nb", `^`, `(x)`, `<in`, `>out`} {
		if _, err := batchCommandLine("cmd.exe", `C:\tools\agent.bat`, []string{arg}); err == nil {
			t.Errorf("argument %q passed to cmd.exe", arg)
		}
	}
}
