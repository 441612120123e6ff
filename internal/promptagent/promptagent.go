// Package promptagent is the in-process NES agent in front of an agent asked through prompts
// (acpside.PromptOptions): the model agent's engine (nesagent/model: the region around the cursor
// with markers, the recent edits as diffs, excerpts of the other open files; the answer read
// between the markers) over the agent's session instead of an OpenAI-compatible server. One
// engine, two transports.
package promptagent

import (
	"context"
	"io"
	"log/slog"

	acp "github.com/coder/acp-go-sdk"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/acpside"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/nesagent/model"
)

// Instructions come before the model agent's in each prompt: a coding agent would otherwise set
// about making the edit itself.
const Instructions = `An editor asks you to predict the user's next edit, as a Next Edit Suggestion. Do not run commands, do not use tools and do not change any file: the editor shows your answer to the user, who decides. Answer in text only, in the form below.

`

// Serve returns acpside.PromptOptions.Serve: an NES agent named "acp-lsp-bridge-prompts" at
// version, whose engine asks through ask. cfg bounds the prompt's parts (its URL, Model and HTTP
// fields are not used); log receives the engine's lines (nil: none).
func Serve(version string, cfg model.Config, log *slog.Logger) func(acpside.Ask, io.Reader, io.Writer) {
	return func(ask acpside.Ask, in io.Reader, out io.Writer) {
		cfg := cfg
		cfg.Instructions = Instructions + model.DefaultInstructions
		// The agent's tools name files by their paths: the prompt does too.
		cfg.AbsolutePaths = true
		cfg.Log = log
		engine, err := model.WithCompleter(cfg, completer(ask))
		if err != nil {
			panic(err) // only a nil completer fails, and ask is never nil
		}
		// The editor's diagnostics go into the prompt (the bridge sends them when asked).
		ctx := &acp.NesContextCapabilities{Diagnostics: &acp.NesDiagnosticsCapabilities{}}
		nesagent.New(engine, nesagent.Options{Name: "acp-lsp-bridge-prompts", Version: version, Context: ctx}).Serve(in, out)
	}
}

// completer is the model engine's transport over an agent's session.
type completer acpside.Ask

func (c completer) Complete(ctx context.Context, p model.Prompt) (model.Answer, error) {
	a, err := c(ctx, p.System+"\n\n"+p.User)
	if err != nil {
		return model.Answer{}, err
	}
	out := model.Answer{Text: a.Text}
	for _, ch := range a.Changes {
		out.Changes = append(out.Changes, model.Change{Path: ch.Path, OldText: ch.OldText, NewText: ch.NewText})
	}
	return out, nil
}
