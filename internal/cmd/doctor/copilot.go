package doctor

import (
	"fmt"
	"os"
	"strings"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/acpside"
)

// copilotReport is what doctor says of GitHub Copilot's language server: the mode it runs in, the
// sign-in found without asking it, whether a browser it opens could reach the user, and what to
// do next.
type copilotReport struct {
	// UsesCLI is whether it runs in its default mode, which starts the Copilot CLI first
	// (GITHUB_COPILOT_ACP_USE_CLI is not 0).
	UsesCLI bool `json:"usesCli"`
	// TokenVar is the token variable set for it (GH_COPILOT_TOKEN, GITHUB_COPILOT_TOKEN), or null.
	TokenVar *string `json:"tokenVar"`
	// Store is Copilot's folder of saved sign-ins; Saved whether anything is saved there.
	Store string `json:"store"`
	Saved bool   `json:"saved"`
	// NoBrowser says why a browser Copilot opens would not reach the user here, or is null.
	NoBrowser *string `json:"noBrowser"`
	// Next is what to do next, in a sentence; empty when nothing is to be done.
	Next string `json:"next"`
}

// signInWays are the ways to sign in to Copilot with no browser on this machine.
const signInWays = "run `acp-lsp-bridge sign-in copilot` here (it shows a code to enter on any device), " +
	"or sign in once with Copilot's own tools on this machine (copilot.vim's or copilot.lua's :Copilot setup), " +
	"or set GH_COPILOT_TOKEN for the agent to a GitHub token with Copilot access"

// copilot fills in what doctor says of Copilot's language server, once the checks are over.
func (r *Report) copilot(run Run) {
	named := r.Agent != nil && r.Agent.Info != nil && acpside.IsCopilotName(r.Agent.Info.Name)
	if !named && !acpside.IsCopilotCommand(run.Command) {
		return
	}
	getenv := func(k string) string {
		if v, ok := run.Command.Env[k]; ok {
			return v
		}
		return os.Getenv(k)
	}
	found := acpside.FindCopilotSignIn(run.Command.Env)
	c := &copilotReport{UsesCLI: getenv(acpside.CopilotUseCLIEnv) != "0", Store: found.Store, Saved: found.Saved}
	if found.TokenVar != "" {
		c.TokenVar = &found.TokenVar
	}
	if why := acpside.NoBrowserHere(getenv); why != "" {
		c.NoBrowser = &why
	}
	failure := ""
	if r.Failure != nil {
		failure = *r.Failure
	}
	switch failure {
	case "":
		if found.TokenVar != "" {
			c.Next = fmt.Sprintf("signed in with %s; Copilot checks it with GitHub at the first suggestion", found.TokenVar)
		}
	case failNotFound:
		c.Next = "install it: npm install -g @github/copilot-language-server (or mason's copilot-language-server package), or give its path"
		r.Reason += ". " + capitalize(c.Next)
	case failInitializeTimeout, failExited, failInitializeError:
		if c.UsesCLI {
			c.Next = fmt.Sprintf("run it with %s=0, as `--agent copilot` does: its default mode starts the Copilot CLI first (on a first start it unpacks it, 10 s or more), which the bridge never uses", acpside.CopilotUseCLIEnv)
		} else {
			c.Next = "run it by hand (copilot-language-server --acp) to see what it says; it needs Node 20 or its platform package"
		}
		r.Reason += ". GitHub Copilot's language server: " + c.Next
	case failNESStartRefused:
		if r.Error == nil || r.Error.Code != -32000 {
			break
		}
		switch {
		case found.TokenVar != "":
			c.Next = fmt.Sprintf("%s is set, and Copilot did not accept it (not a token with Copilot access?); unset it, or %s", found.TokenVar, signInWays)
		case c.NoBrowser != nil:
			c.Next = fmt.Sprintf("a browser cannot open for you here (%s), so Copilot's \"Sign in with GitHub\" cannot work: %s", *c.NoBrowser, signInWays)
		default:
			c.Next = "choose \"Sign in with GitHub\" when the editor asks (a browser opens on this machine), or " + signInWays
		}
		where := "nothing is saved in " + found.Store
		if found.Saved {
			where = found.Store + " has no sign-in it accepts"
		}
		r.Reason = fmt.Sprintf("GitHub Copilot is not signed in (nes/start: -32000 Authentication required; no token variable, %s). To sign in: %s", where, c.Next)
		if found.TokenVar != "" {
			r.Reason = "GitHub Copilot is not signed in (nes/start: -32000 Authentication required). " + capitalize(c.Next)
		}
	}
	r.Copilot = c
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// text is the report's lines on Copilot.
func (c *copilotReport) lines(line func(label, value string)) {
	mode := "without the Copilot CLI (" + acpside.CopilotUseCLIEnv + "=0)"
	if c.UsesCLI {
		mode = "default: it starts the Copilot CLI first, which the bridge never uses (" + acpside.CopilotUseCLIEnv + "=0, as --agent copilot sets, starts faster)"
	}
	line("copilot", "mode "+mode)
	switch {
	case c.TokenVar != nil:
		line("sign-in", "a token in "+*c.TokenVar)
	case c.Saved:
		line("sign-in", "Copilot's store "+c.Store+" holds saved data (whether a sign-in Copilot accepts, nes/start says)")
	default:
		line("sign-in", "none found: no GH_COPILOT_TOKEN or GITHUB_COPILOT_TOKEN, nothing saved in "+c.Store)
	}
	if c.NoBrowser != nil {
		line("browser", "none can reach you here ("+*c.NoBrowser+"): sign in with a code or a token instead")
	}
}
