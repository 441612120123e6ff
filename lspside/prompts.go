package lspside

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	"go.lsp.dev/protocol"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/acpside"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/promptagent"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent/model"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/workspace"
)

// When an agent has no Next Edit Suggestions, the bridge asks it through prompts
// (acpside.PromptOptions). A prompt costs the user tokens and seconds, so by default only what the
// user asks for is prompted: the suggest command, inline requests invoked by hand, code actions
// other than the editor's automatic ones. Automatic requests answer empty at once unless prompts
// are "auto".

// Prompt modes (Config.Prompts, initializationOptions.prompts).
const (
	// PromptsExplicit prompts for requests the user made (the default).
	PromptsExplicit = "explicit"
	// PromptsAuto also prompts for automatic requests (while typing), after PromptDebounce.
	PromptsAuto = "auto"
	// PromptsOff keeps the bridge from prompting: an agent without NES gives no suggestions.
	PromptsOff = "off"
)

// DefaultPromptTimeout is Config.PromptTimeout's default.
const DefaultPromptTimeout = 30 * time.Second

// DefaultPromptDebounce is Config.PromptDebounce's default.
const DefaultPromptDebounce = 600 * time.Millisecond

// ValidPrompts reports whether m names a prompt mode.
func ValidPrompts(m string) bool {
	return m == PromptsExplicit || m == PromptsAuto || m == PromptsOff
}

// promptsMode is the mode in force: the flag's, else initializationOptions.prompts, else explicit.
func (s *Server) promptsMode() string {
	if s.cfg.Prompts != "" {
		return s.cfg.Prompts
	}
	if o := s.session().init.InitializationOptions; o != nil && ValidPrompts(o.Prompts) {
		return o.Prompts
	}
	return PromptsExplicit
}

// promptOptions are the acpside options of an agent asked through prompts; nil when prompts are
// off.
func (s *Server) promptOptions() *acpside.PromptOptions {
	if s.promptsMode() == PromptsOff {
		return nil
	}
	return &acpside.PromptOptions{
		Workspace: func() string { return s.workspace().root },
		Turns:     s.cfg.PromptTurns,
		Serve:     promptagent.Serve(s.cfg.Version, model.Config{}, slog.New(zerolog.NewSlogHandler(s.log.With().Str("via", "prompts").Logger()))),
		Saved:     s.savedByEditor,
		// Called once per agent (acpside reports the first file only).
		Tainted: func(path string) {
			s.showMessage(context.Background(), protocol.MessageTypeError, fmt.Sprintf(
				"acp-lsp-bridge: the agent changed %s on disk by itself while it was asked for a suggestion. "+
					"The bridge asks it nothing more; check the file, then run the command %s to ask it again.", path, CommandRestart))
		},
	}
}

// promptedReady tells the user, once the agent is ready, that its suggestions come through
// prompts, what that costs, and when they are asked.
func (s *Server) promptedReady(ctx context.Context, name string) {
	when := "when you ask for one (the suggest command, an invoked inline completion, a code action), never while you type"
	if s.promptsMode() == PromptsAuto {
		when = "also while you type (prompts \"auto\")"
	}
	s.showMessage(ctx, protocol.MessageTypeInfo, fmt.Sprintf(
		"acp-lsp-bridge: %s has no Next Edit Suggestions of its own, so the bridge asks it through prompts: "+
			"each suggestion takes seconds and is billed to the agent's model. Suggestions are asked %s.", name, when))
}

// promptGate says whether a request to a prompted agent is sent; it may take PromptTimeout.
func (s *Server) promptGate(explicit bool) (send bool) {
	return explicit || s.promptsMode() == PromptsAuto
}

// progressSeq numbers the bridge's progress tokens.
var progressSeq atomic.Uint64

// progress shows a work-done progress in the editor while a prompt runs ($/progress, after
// window/workDoneProgress/create), when the editor supports it; the returned function ends it. It
// never holds the request: the progress is created and begun on the side.
func (s *Server) progress(ctx context.Context, title, message string) (end func()) {
	if !s.clientSupports(func(c clientCaps) bool { return c.workDoneProgress }) {
		return func() {}
	}
	token := fmt.Sprintf("acp-lsp-bridge/%d", progressSeq.Add(1))
	begun := make(chan bool, 1)
	go func() {
		err := s.callEditor(context.WithoutCancel(ctx), s.cfg.ClientWait, "window/workDoneProgress/create", map[string]any{"token": token}, nil)
		if err != nil {
			s.log.Debug().Err(err).Msg("window/workDoneProgress/create")
			begun <- false
			return
		}
		err = s.conn.Notify(context.Background(), "$/progress", map[string]any{"token": token, "value": map[string]any{
			"kind": "begin", "title": title, "message": message, "cancellable": false,
		}})
		begun <- err == nil
	}()
	return func() {
		go func() {
			if <-begun {
				_ = s.conn.Notify(context.Background(), "$/progress", map[string]any{"token": token, "value": map[string]any{"kind": "end"}})
			}
		}()
	}
}

// savedByEditor reports a file open in the editor whose text on disk is the editor's text: the
// editor saved it (by hand, or auto-save) while the agent was prompted.
func (s *Server) savedByEditor(path string) bool {
	key := workspace.Host.Key(path)
	for _, snap := range s.docs.All() {
		p, ok := workspace.Host.URIToPath(snap.URI)
		if !ok || workspace.Host.Key(p) != key {
			continue
		}
		disk, err := os.ReadFile(path)
		return err == nil && string(disk) == snap.Text()
	}
	return false
}
