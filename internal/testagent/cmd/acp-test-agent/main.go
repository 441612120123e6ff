// Command acp-test-agent is the scripted NES agent of the bridge's end-to-end tests. It speaks ACP
// on stdin/stdout; see package testagent.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"slices"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/testagent"
)

func main() {
	enc := flag.String("encoding", "utf-16", "position encoding to choose: utf-8, utf-16 or utf-32")
	sync := flag.String("sync", "incremental", "didChange sync kind: incremental or full")
	logFile := flag.String("log", "", "append one JSON line per received message to this file")
	mirrorDir := flag.String("mirror-dir", "", "write the agent's copy of each document to this folder after every change (file named by the document's base name)")
	rules := flag.String("rules", "", "JSON file with rules [{when, find, replace}]")
	noNES := flag.Bool("no-nes", false, "answer initialize without the nes capability")
	auth := flag.Bool("auth", false, `require authentication: offer the auth method "login" ("Sign in with Test") and answer auth_required until authenticate names it`)
	focus := flag.Bool("focus", false, "ask for document/didFocus events")
	contextJSON := flag.String("context", "", `nes.context to ask for, as JSON, e.g. {"diagnostics":{},"editHistory":{"maxCount":4}}`)
	fault := flag.String("fault", "", testagent.FaultHelp)
	startDelay := flag.Duration("start-delay", 0, "wait this long before answering initialize: an agent that is slow to start")
	flag.Parse()
	cfg := testagent.Config{Encoding: *enc, Sync: *sync, NoNES: *noNES, DidFocus: *focus, Fault: *fault, Exit: os.Exit, StartDelay: *startDelay, MirrorDir: *mirrorDir}
	if *fault != "" && !slices.Contains(testagent.Faults, *fault) {
		fmt.Fprintf(os.Stderr, "acp-test-agent: --fault %q: use one of %v\n", *fault, testagent.Faults)
		os.Exit(2)
	}
	if *contextJSON != "" {
		cfg.Context = &acp.NesContextCapabilities{}
		if err := json.Unmarshal([]byte(*contextJSON), cfg.Context); err != nil {
			fmt.Fprintln(os.Stderr, "acp-test-agent: --context:", err)
			os.Exit(2)
		}
	}
	if *auth {
		cfg.RequireAuth = true
		cfg.AuthMethods = []acp.AuthMethod{{Agent: &acp.AuthMethodAgent{Id: "login", Name: "Sign in with Test"}}}
	}
	if *rules != "" {
		b, err := os.ReadFile(*rules)
		if err == nil {
			err = json.Unmarshal(b, &cfg.Rules)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "acp-test-agent: --rules:", err)
			os.Exit(2)
		}
	}
	if *logFile != "" {
		f, err := os.OpenFile(*logFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			fmt.Fprintln(os.Stderr, "acp-test-agent: --log:", err)
			os.Exit(2)
		}
		defer f.Close()
		cfg.Log = f
	}
	testagent.New(cfg).Serve(os.Stdin, os.Stdout)
}
