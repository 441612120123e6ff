package main

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/acpside"
)

// namedAgents are the agents --agent names, each the command it runs.
var namedAgents = map[string]func() acpside.Command{
	// GitHub Copilot's language server in its ACP mode. Its default mode also starts the Copilot
	// CLI for chat sessions, which the bridge never opens (it uses nes/*); on a first start that
	// unpacks the CLI and initialize took 10 s (2 s without). Unless the user chose, it is left out.
	"copilot": func() acpside.Command {
		c := acpside.Command{Path: acpside.CopilotCommandName, Args: []string{"--acp"}}
		if _, set := os.LookupEnv(acpside.CopilotUseCLIEnv); !set {
			c.Env = map[string]string{acpside.CopilotUseCLIEnv: "0"}
		}
		return c
	},
}

// agentNames lists the names --agent takes.
func agentNames() string {
	names := make([]string, 0, len(namedAgents))
	for n := range namedAgents {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// namedAgent is the command of --agent NAME.
func namedAgent(name string) (acpside.Command, error) {
	f, ok := namedAgents[strings.ToLower(strings.TrimSpace(name))]
	if !ok {
		return acpside.Command{}, fmt.Errorf("--agent %q: the names are %s; for any other agent, put its command after \"--\"", name, agentNames())
	}
	return f(), nil
}

// agentFlagHelp is --agent's usage line.
func agentFlagHelp() string {
	return "run a known agent by its `name` instead of a command after \"--\": copilot (GitHub Copilot's language server, `copilot-language-server --acp` with " +
		acpside.CopilotUseCLIEnv + "=0 unless you set it; install it with `npm install -g @github/copilot-language-server`; sign in with `acp-lsp-bridge sign-in copilot`)"
}
