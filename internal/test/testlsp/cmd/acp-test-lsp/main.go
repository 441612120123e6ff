// Command acp-test-lsp is the second language server of the bridge's editor tests: it mirrors the
// documents the editor sends and writes its copy of each to --mirror-dir; see package testlsp.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/testlsp"
)

func main() {
	dir := flag.String("mirror-dir", "", "write each document's text here after every change (required)")
	logFile := flag.String("log", "", "append a line per message to this file")
	codeAction := flag.String("code-action", "", "offer a code action of this `title` for every range, at once (a language's own fix)")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "acp-test-lsp: --mirror-dir is required")
		os.Exit(2)
	}
	var log io.Writer = io.Discard
	if *logFile != "" {
		f, err := os.OpenFile(*logFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			fmt.Fprintln(os.Stderr, "acp-test-lsp:", err)
			os.Exit(2)
		}
		defer f.Close()
		log = f
	}
	if err := testlsp.Serve(os.Stdin, os.Stdout, *dir, *codeAction, log); err != nil {
		fmt.Fprintln(os.Stderr, "acp-test-lsp:", err)
		os.Exit(1)
	}
}
