package acpside

import (
	"context"
	"errors"
	"fmt"
	"strings"

	acp "github.com/coder/acp-go-sdk"
)

// AuthMethod is one way the agent offers to sign in (initialize's authMethods).
type AuthMethod struct {
	ID, Name, Description string
	// Type is "agent" (the agent signs in by itself when asked with authenticate), "env_var" (the
	// user sets Vars in the agent's environment) or "terminal" (the user runs the agent with Args
	// in a terminal).
	Type string
	Vars []string
	Args []string
	Env  map[string]string // what a terminal method sets in the environment
}

// AuthMethods lists what initialize offered, in the agent's order.
func (a *Agent) AuthMethods() []AuthMethod {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.init == nil {
		return nil
	}
	return AuthMethodsOf(a.init)
}

// AuthMethodsOf lists the auth methods of an initialize response.
func AuthMethodsOf(resp *acp.InitializeResponse) []AuthMethod {
	var out []AuthMethod
	for _, m := range resp.AuthMethods {
		switch {
		case m.Agent != nil:
			out = append(out, AuthMethod{ID: m.Agent.Id, Name: m.Agent.Name, Description: deref(m.Agent.Description), Type: "agent"})
		case m.EnvVar != nil:
			am := AuthMethod{ID: m.EnvVar.Id, Name: m.EnvVar.Name, Description: deref(m.EnvVar.Description), Type: "env_var"}
			for _, v := range m.EnvVar.Vars {
				am.Vars = append(am.Vars, v.Name)
			}
			out = append(out, am)
		case m.Terminal != nil:
			am := AuthMethod{ID: m.Terminal.Id, Name: m.Terminal.Name, Description: deref(m.Terminal.Description), Type: "terminal", Args: m.Terminal.Args}
			for k, v := range m.Terminal.Env {
				if am.Env == nil {
					am.Env = map[string]string{}
				}
				am.Env[k] = fmt.Sprint(v)
			}
			out = append(out, am)
		}
	}
	return out
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// AuthRequired reports an agent error that asks the client to authenticate first: data.reason
// "auth_required" (the NES proposal's form), or code -32000, ACP's AuthRequired, whatever its
// message (gemini says "Gemini API key is missing or not configured.").
func AuthRequired(err error) bool {
	var re *acp.RequestError
	if !errors.As(err, &re) {
		return false
	}
	if m, ok := re.Data.(map[string]any); ok && m["reason"] == "auth_required" {
		return true
	}
	return re.Code == -32000
}

// Authenticate asks the agent to sign in with one of its auth methods.
func (a *Agent) Authenticate(ctx context.Context, methodID string) error {
	if _, err := acp.SendRequest[acp.AuthenticateResponse](a.conn, ctx, acp.AgentMethodAuthenticate, acp.AuthenticateRequest{MethodId: methodID}); err != nil {
		return fmt.Errorf("authenticate: %w", err)
	}
	return nil
}

// Name is the agent's name from initialize (see [DisplayName]).
func (a *Agent) Name() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.init == nil {
		return DisplayName(nil)
	}
	return DisplayName(a.init.AgentInfo)
}

// DisplayName is what the user is told an agent is called: its title ("Claude Agent"), else its
// name (a package name such as "@zed-industries/claude-agent-acp"), else "the agent".
func DisplayName(info *acp.Implementation) string {
	switch {
	case info == nil:
		return "the agent"
	case info.Title != nil && strings.TrimSpace(*info.Title) != "":
		return strings.TrimSpace(*info.Title)
	case info.Name != "":
		return info.Name
	}
	return "the agent"
}

// OutOfSync reports an agent error saying its copy of the document is not the editor's: GitHub
// Copilot's "Document version mismatch for …" and "Document is not open: …", which follow a
// document/didChange it dropped (one whose version was not higher than its own, or whose range
// did not fit its text) or a document/didOpen it ignored.
func OutOfSync(err error) bool {
	var re *acp.RequestError
	if !errors.As(err, &re) {
		return false
	}
	return strings.Contains(re.Message, "Document version mismatch") || strings.Contains(re.Message, "Document is not open")
}
