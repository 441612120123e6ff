package acpside

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
)

// npm installs a command on Windows as a batch file (a "cmd shim": codex-acp.cmd) that runs
// node with the package's script. Running a batch file means running cmd.exe, which reads the
// command line with its own rules (%VAR%, ^, &, |, …): the bridge would pass the user's
// arguments through a shell. So the bridge reads the shim instead and runs what it runs: node
// (the node.exe beside the shim when there is one, as the shim does, else node on the PATH) with
// the script. Only a batch file that is not an npm shim is run through cmd.exe, and then only
// with arguments free of cmd.exe's metacharacters (batchCommandLine).

// shimTarget matches the line of an npm cmd shim that runs the script: `"%_prog%"  "%dp0%\x.js" %*`
// (cmd-shim 4 and later) or `"%~dp0\node.exe"  "%~dp0\x.js" %*` (earlier ones).
var shimTarget = regexp.MustCompile(`(?m)"(%_prog%|%~dp0\\node\.exe|node)"\s+"(?:%dp0%|%~dp0)\\([^"%]+)"\s+%\*`)

// npmShim is what an npm cmd shim runs: node with Script, a path relative to the shim's folder.
type npmShim struct {
	Script string
}

var errNotShim = errors.New("not an npm cmd shim")

// parseNpmShim reads an npm cmd shim's text.
func parseNpmShim(text string) (npmShim, error) {
	m := shimTarget.FindStringSubmatch(text)
	if m == nil {
		return npmShim{}, errNotShim
	}
	return npmShim{Script: m[2]}, nil
}

// shimCommand is the program and arguments that run the npm shim at path (its text given), for
// the arguments args: node, the script (absolute), then args. node is the node.exe beside the
// shim when exists says so, else "node" (looked up on the PATH by the caller).
func shimCommand(path, text string, args []string, exists func(string) bool) (prog string, argv []string, err error) {
	sh, err := parseNpmShim(text)
	if err != nil {
		return "", nil, err
	}
	dir := filepath.Dir(path)
	prog = "node"
	if beside := filepath.Join(dir, "node.exe"); exists(beside) {
		prog = beside
	}
	script := filepath.Join(dir, filepath.FromSlash(strings.ReplaceAll(sh.Script, `\`, "/")))
	return prog, append([]string{script}, args...), nil
}

// batchMeta are the characters cmd.exe reads specially on a command line, even inside quotes
// (%, !) or outside them; an argument holding one is refused rather than passed through cmd.exe.
const batchMeta = "\"%!^&|<>()\r\n"

// batchCommandLine is the command line that runs the batch file path with args through cmd.exe
// (/d: no AutoRun; /s /c: the rest, quotes kept), each argument quoted. It fails for an
// argument holding one of cmd.exe's metacharacters, which no quoting makes safe.
func batchCommandLine(comspec, path string, args []string) (string, error) {
	words := []string{`"` + path + `"`}
	if strings.ContainsAny(path, batchMeta) {
		return "", fmt.Errorf("the batch file %q: its path holds one of %q, which cmd.exe reads specially", path, batchMeta)
	}
	for _, a := range args {
		if strings.ContainsAny(a, batchMeta) {
			return "", fmt.Errorf("the argument %q of the batch file %s holds one of %q, which cmd.exe reads specially; name the program the batch file runs instead", a, filepath.Base(path), batchMeta)
		}
		words = append(words, `"`+a+`"`)
	}
	return fmt.Sprintf(`"%s" /d /s /c "%s"`, comspec, strings.Join(words, " ")), nil
}
