package acpside

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"go.lsp.dev/jsonrpc2"
)

// GitHub Copilot's language server (@github/copilot-language-server) is an ACP agent with --acp.
// What the bridge knows of it, read from its code (1.539.0) and measured:
//   - its one auth method, github_oauth, opens a browser on the agent's machine (a code flow on a
//     local port); with no browser it fails ("OAuth code flow requires a browser but none is
//     available");
//   - in its LSP mode (--stdio) the same program offers GitHub's device flow (signInInitiate, then
//     the command github.copilot.finishDeviceFlow): a code to enter on any device. The sign-in is
//     kept in Copilot's own store, which its ACP mode reads (any editor's saved sign-in is adopted);
//   - a token in GH_COPILOT_TOKEN or GITHUB_COPILOT_TOKEN signs it in without the store;
//   - its default ACP mode also starts the Copilot CLI for chat sessions (slow on a first start),
//     which the bridge never uses: GITHUB_COPILOT_ACP_USE_CLI=0 leaves it out.

// CopilotCommandName is the program of Copilot's language server.
const CopilotCommandName = "copilot-language-server"

// CopilotAuthMethod is the id of Copilot's browser sign-in method.
const CopilotAuthMethod = "github_oauth"

// CopilotUseCLIEnv is the variable by which Copilot's language server leaves out the Copilot CLI.
const CopilotUseCLIEnv = "GITHUB_COPILOT_ACP_USE_CLI"

// CopilotTokenVars are the variables a Copilot token is read from, in Copilot's order.
var CopilotTokenVars = []string{"GH_COPILOT_TOKEN", "GITHUB_COPILOT_TOKEN"}

// CopilotDeviceURL is where a device-flow code is entered (github.com's; Copilot names it).
const CopilotDeviceURL = "https://github.com/login/device"

// IsCopilotName reports whether an agent's name is GitHub Copilot's.
func IsCopilotName(name string) bool {
	return strings.Contains(strings.ToLower(name), "copilot")
}

// IsCopilotCommand reports whether a command runs Copilot's language server (by its program's
// name, with or without a Windows suffix).
func IsCopilotCommand(c Command) bool {
	base := strings.ToLower(c.Path)
	if i := strings.LastIndexAny(base, `/\`); i >= 0 {
		base = base[i+1:] // either separator: a Windows path read anywhere
	}
	for _, ext := range []string{".exe", ".cmd", ".bat", ".js"} {
		base = strings.TrimSuffix(base, ext)
	}
	if base == CopilotCommandName {
		return true
	}
	// Run through node or npx: node …/copilot-language-server/dist/language-server.js --acp.
	for _, a := range c.Args {
		if strings.Contains(strings.ToLower(a), CopilotCommandName) {
			return true
		}
	}
	return false
}

// IsCopilot reports whether the agent is GitHub Copilot's language server: by its name, or by
// its command.
func (a *Agent) IsCopilot() bool {
	if c, ok := a.Command(); ok && IsCopilotCommand(c) {
		return true
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.init != nil && a.init.AgentInfo != nil && IsCopilotName(a.init.AgentInfo.Name)
}

// CopilotSignIn is what the bridge found of a Copilot sign-in, without asking Copilot.
type CopilotSignIn struct {
	// TokenVar is the token variable set (for the agent, or in the bridge's environment), if any.
	TokenVar string
	// Store is Copilot's folder for its saved sign-ins, and Saved whether a sign-in file of
	// Copilot's tools there holds a token (whether it is still good only Copilot can say).
	Store string
	Saved bool
}

// FindCopilotSignIn looks for a Copilot token variable (in env first, then the bridge's own
// environment) and Copilot's store of saved sign-ins.
func FindCopilotSignIn(env map[string]string) CopilotSignIn {
	var s CopilotSignIn
	for _, v := range CopilotTokenVars {
		val, ok := env[v]
		if !ok {
			val = os.Getenv(v)
		}
		// Copilot ignores a GH_COPILOT_TOKEN holding "=" (a cookie-style value, not a token).
		if val != "" && (v != "GH_COPILOT_TOKEN" || !strings.Contains(val, "=")) {
			s.TokenVar = v
			break
		}
	}
	s.Store = CopilotStore(func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		return os.Getenv(k)
	})
	// The sign-in files of Copilot's tools (copilot.vim, copilot.lua and the language server
	// before its database). Its database, auth.db, is made at its first start, signed in or
	// not: only Copilot can say whether it holds a sign-in.
	for _, f := range []string{"apps.json", "hosts.json"} {
		if b, err := os.ReadFile(filepath.Join(s.Store, f)); err == nil && strings.Contains(string(b), "token") {
			s.Saved = true
		}
	}
	return s
}

// CopilotStore is the folder where Copilot's language server keeps its sign-ins: under
// XDG_CONFIG_HOME when it is absolute, else %USERPROFILE%\AppData\Local on Windows and
// ~/.config elsewhere.
func CopilotStore(getenv func(string) string) string {
	if x := getenv("XDG_CONFIG_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "github-copilot")
	}
	if runtime.GOOS == "windows" {
		home := getenv("USERPROFILE")
		if home == "" {
			home, _ = os.UserHomeDir()
		}
		return filepath.Join(home, "AppData", "Local", "github-copilot")
	}
	home := getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return filepath.Join(home, ".config", "github-copilot")
}

// NoBrowserHere says why a browser the agent opens would not reach the user (an SSH session, no
// display, a container), or "" when one may.
func NoBrowserHere(getenv func(string) string) string {
	if getenv("SSH_CONNECTION") != "" || getenv("SSH_TTY") != "" {
		return "this is an SSH session"
	}
	for _, f := range []string{"/.dockerenv", "/run/.containerenv"} {
		if _, err := os.Stat(f); err == nil && runtime.GOOS == "linux" {
			return "this is a container"
		}
	}
	switch runtime.GOOS {
	case "windows", "darwin":
		return ""
	}
	if getenv("DISPLAY") == "" && getenv("WAYLAND_DISPLAY") == "" {
		return "there is no display here"
	}
	return ""
}

// DeviceSignIn is a device-flow sign-in running in Copilot's language server (LSP mode).
type DeviceSignIn struct {
	// Already is set when Copilot is signed in already (User names the account); then there is
	// no code.
	Already bool
	User    string
	// UserCode is the code to enter at VerificationURI, within Expires.
	UserCode, VerificationURI string
	Expires                   time.Duration

	proc *process
	conn jsonrpc2.Conn
	cmd  string // the finishing command Copilot named
}

// CopilotLSPCommand is c (Copilot's ACP command) in its LSP mode: --acp replaced by --stdio.
func CopilotLSPCommand(c Command) Command {
	out := c
	out.Args = nil
	for _, a := range c.Args {
		if a != "--acp" && a != "--stdio" {
			out.Args = append(out.Args, a)
		}
	}
	out.Args = append(out.Args, "--stdio")
	return out
}

// StartCopilotDeviceSignIn starts Copilot's language server in its LSP mode and asks it for a
// device-flow code (signInInitiate). client names the bridge to Copilot (its saved sign-in is
// kept for that editor, and adopted by the others). The caller shows the code, then calls Wait,
// and Close in any case.
func StartCopilotDeviceSignIn(ctx context.Context, c Command, client, version string, log zerolog.Logger) (*DeviceSignIn, error) {
	lc := CopilotLSPCommand(c)
	p, err := startProcess(lc, log, nil)
	if err != nil {
		return nil, err
	}
	d := &DeviceSignIn{proc: p}
	d.conn = jsonrpc2.NewConn(jsonrpc2.NewStream(stdio{p.stdout, p.stdin}))
	d.conn.Go(context.Background(), copilotClientHandler)
	fail := func(err error) (*DeviceSignIn, error) {
		d.Close()
		return nil, err
	}
	var initResult json.RawMessage
	info := map[string]string{"name": client, "version": version}
	if _, err := d.conn.Call(ctx, "initialize", map[string]any{
		"processId":    os.Getpid(),
		"capabilities": map[string]any{},
		"clientInfo":   info,
		"initializationOptions": map[string]any{
			"editorInfo": info, "editorPluginInfo": info,
		},
	}, &initResult); err != nil {
		err = fmt.Errorf("%s in its LSP mode did not start: %w", CopilotCommandName, err)
		d.Close()
		if tail := p.stderrTail(); len(tail) > 0 {
			err = fmt.Errorf("%w (it wrote: %s)", err, strings.Join(tail, " / "))
		}
		return nil, err
	}
	if err := d.conn.Notify(ctx, "initialized", map[string]any{}); err != nil {
		return fail(err)
	}
	var r struct {
		Status          string `json:"status"`
		User            string `json:"user"`
		UserCode        string `json:"userCode"`
		VerificationURI string `json:"verificationUri"`
		ExpiresIn       int    `json:"expiresIn"`
		Command         struct {
			Command string `json:"command"`
		} `json:"command"`
	}
	if _, err := d.conn.Call(ctx, "signInInitiate", map[string]any{}, &r); err != nil {
		return fail(&CopilotSignInError{rpcMessage(err)})
	}
	switch r.Status {
	case "AlreadySignedIn":
		d.Already, d.User = true, r.User
		return d, nil
	case "PromptUserDeviceFlow":
	default:
		return fail(fmt.Errorf("Copilot answered the sign-in with %q", r.Status))
	}
	if r.UserCode == "" {
		return fail(errors.New("Copilot gave no code to enter"))
	}
	d.UserCode, d.VerificationURI, d.cmd = r.UserCode, r.VerificationURI, r.Command.Command
	if d.VerificationURI == "" {
		d.VerificationURI = CopilotDeviceURL
	}
	if d.cmd == "" {
		d.cmd = "github.copilot.finishDeviceFlow"
	}
	d.Expires = time.Duration(r.ExpiresIn) * time.Second
	return d, nil
}

// Wait waits until the code has been entered (Copilot polls GitHub), the code expires, or ctx
// ends; it returns the account signed in.
func (d *DeviceSignIn) Wait(ctx context.Context) (string, error) {
	if d.Already {
		return d.User, nil
	}
	if d.Expires > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d.Expires+10*time.Second)
		defer cancel()
	}
	var r struct {
		Status string `json:"status"`
		User   string `json:"user"`
	}
	if _, err := d.conn.Call(ctx, "workspace/executeCommand", map[string]any{"command": d.cmd, "arguments": []any{}}, &r); err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("the code was not entered in time: %w", ctx.Err())
		}
		return "", fmt.Errorf("Copilot's sign-in did not finish: %s", rpcMessage(err))
	}
	if r.Status != "OK" && r.Status != "AlreadySignedIn" {
		return "", fmt.Errorf("Copilot's sign-in ended with %q", r.Status)
	}
	return r.User, nil
}

// Close ends Copilot's LSP-mode process.
func (d *DeviceSignIn) Close() {
	if d.conn != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, _ = d.conn.Call(ctx, "shutdown", nil, nil)
		_ = d.conn.Notify(ctx, "exit", nil)
		cancel()
		_ = d.conn.Close()
	}
	d.proc.stop(time.Second)
}

// copilotClientHandler answers what Copilot's LSP mode asks its client: no document is shown (the
// code is for another device), no configuration, and nothing else.
func copilotClientHandler(ctx context.Context, req *jsonrpc2.Request) (any, error) {
	if !req.IsCall() {
		return nil, nil
	}
	switch req.Method() {
	case "window/showDocument":
		return map[string]bool{"success": false}, nil
	case "workspace/configuration":
		var p struct {
			Items []json.RawMessage `json:"items"`
		}
		_ = json.Unmarshal([]byte(req.Params()), &p)
		return make([]any, len(p.Items)), nil
	}
	return nil, nil
}

// CopilotSignInError is Copilot's refusal to start a sign-in with a code, in its words.
type CopilotSignInError struct{ Message string }

func (e *CopilotSignInError) Error() string {
	return "Copilot could not start a sign-in with a code: " + e.Message
}

func rpcMessage(err error) string {
	var e *jsonrpc2.Error
	if errors.As(err, &e) && e.Message != "" {
		return e.Message
	}
	return err.Error()
}

type stdio struct {
	io.Reader
	io.WriteCloser
}
