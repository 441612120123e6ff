package lspside

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/acpside"
	"github.com/acp-lsp-bridge/acp-lsp-bridge/encoding"
)

// initializeParams is the part of LSP InitializeParams the bridge reads. URIs stay strings, exactly
// as the editor sent them.
type initializeParams struct {
	ProcessID  *int `json:"processId"`
	ClientInfo *struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"clientInfo"`
	RootURI          *string           `json:"rootUri"`
	RootPath         *string           `json:"rootPath"`
	WorkspaceFolders []workspaceFolder `json:"workspaceFolders"`
	Capabilities     struct {
		General *struct {
			PositionEncodings []string `json:"positionEncodings"`
		} `json:"general"`
		// TextDocument is kept by key: a client that supports inline completion but has nothing
		// to say of it may send "inlineCompletion": null (lsp-mode does), which still counts.
		TextDocument map[string]json.RawMessage `json:"textDocument"`
		Workspace    *struct {
			WorkspaceEdit *struct {
				DocumentChanges    bool     `json:"documentChanges"`
				ResourceOperations []string `json:"resourceOperations"`
			} `json:"workspaceEdit"`
		} `json:"workspace"`
		Window *struct {
			ShowDocument *struct {
				Support bool `json:"support"`
			} `json:"showDocument"`
			WorkDoneProgress bool `json:"workDoneProgress"`
		} `json:"window"`
	} `json:"capabilities"`
	InitializationOptions *initOptions `json:"initializationOptions"`
}

// initOptions are the bridge's initializationOptions.
type initOptions struct {
	Agent *acpside.Command `json:"agent"`
	// Completion turns the completion-item surface on or off; by default it is on for
	// clients without inline completion.
	Completion *bool `json:"completion"`
	// Prompts is how an agent without Next Edit Suggestions is asked: "explicit" (the
	// default), "auto" or "off" (prompts.go).
	Prompts string `json:"prompts"`
	// Exclude are globs of files kept from the agent, besides the defaults; DefaultExcludes
	// false clears the defaults (secrets.go).
	Exclude         []string `json:"exclude"`
	DefaultExcludes *bool    `json:"defaultExcludes"`
	// Delay is how long a document must be still before automatic suggestions are asked:
	// milliseconds or a duration string (automatic.go). Automatic false starts with them off.
	Delay     json.RawMessage `json:"delay"`
	Automatic *bool           `json:"automatic"`
	// SuggestTimeout and PromptTimeout are --suggest-timeout and --prompt-timeout, for editors
	// that set no flags: milliseconds or a duration string (slow.go). The flags win.
	SuggestTimeout json.RawMessage `json:"suggestTimeout"`
	PromptTimeout  json.RawMessage `json:"promptTimeout"`
	// SuggestionReady asks for acp-lsp-bridge/suggestionReady (ahead.go): an editor
	// configuration that can ask for inline completion at once (the Neovim plugin, the VS Code
	// extension) hears when a suggestion asked ahead is ready, rather than waiting on its own.
	SuggestionReady bool `json:"suggestionReady"`
	// AsksItself says the editor asks for suggestions by itself while the user types (the Neovim
	// plugin, the VS Code extension): the bridge asks ahead from the first change on, rather than
	// once the editor's first automatic request has shown it does (ahead.go).
	AsksItself bool `json:"asksItself"`
}

// UnmarshalJSON takes an empty array as no options: Neovim encodes an empty Lua table
// (init_options = {}) as [].
func (o *initOptions) UnmarshalJSON(b []byte) error {
	if t := strings.TrimSpace(string(b)); t == "[]" {
		*o = initOptions{}
		return nil
	}
	type plain initOptions
	return json.Unmarshal(b, (*plain)(o))
}

// clientCaps is what the bridge needs to know of the client.
type clientCaps struct {
	documentChanges  bool // WorkspaceEdit.documentChanges
	createFiles      bool // the create resource operation in documentChanges
	showDocument     bool // window/showDocument
	workDoneProgress bool // window/workDoneProgress/create and $/progress
	inlineCompletion bool
	completion       bool // serve completion items
}

func (p initializeParams) clientCaps() clientCaps {
	var c clientCaps
	caps := p.Capabilities
	_, c.inlineCompletion = caps.TextDocument["inlineCompletion"]
	if caps.Workspace != nil && caps.Workspace.WorkspaceEdit != nil {
		c.documentChanges = caps.Workspace.WorkspaceEdit.DocumentChanges
		for _, op := range caps.Workspace.WorkspaceEdit.ResourceOperations {
			c.createFiles = c.createFiles || op == "create"
		}
	}
	c.showDocument = caps.Window != nil && caps.Window.ShowDocument != nil && caps.Window.ShowDocument.Support
	c.workDoneProgress = caps.Window != nil && caps.Window.WorkDoneProgress
	c.completion = !c.inlineCompletion
	if o := p.InitializationOptions; o != nil && o.Completion != nil {
		c.completion = *o.Completion
	}
	return c
}

// session is what initialize negotiated with the editor; it does not change after.
type session struct {
	editorEnc encoding.Kind
	init      initializeParams
	client    clientCaps
	// delay is initializationOptions.delay, when given and readable (automatic.go).
	delay *time.Duration
	// suggestTimeout and promptTimeout are those of initializationOptions, when given and
	// readable (slow.go).
	suggestTimeout, promptTimeout *time.Duration
}

// session returns what initialize negotiated (zero values before it).
func (s *Server) session() *session {
	if p := s.sess.Load(); p != nil {
		return p
	}
	return &session{editorEnc: encoding.UTF16}
}

// clientCaps returns what the client can do.
func (s *Server) clientCaps() clientCaps { return s.session().client }

// clientSupports reports a client capability.
func (s *Server) clientSupports(f func(clientCaps) bool) bool { return f(s.session().client) }

func (s *Server) initialize(ctx context.Context, raw json.RawMessage) (any, error) {
	var p initializeParams
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, invalidParams("initialize: %v", err)
		}
	}
	var offered []string
	if p.Capabilities.General != nil {
		offered = p.Capabilities.General.PositionEncodings
	}
	enc := encoding.ClientPreferred(offered)
	ex := s.excludes(ctx, p.InitializationOptions)
	ws := newWorkspace(p.RootURI, p.RootPath, p.WorkspaceFolders, ex)
	for _, f := range ws.start.WorkspaceFolders { // the editor's, or the one its root names
		ws.folders = append(ws.folders, workspaceFolder{URI: f.Uri, Name: f.Name})
	}
	client := p.clientCaps()
	delay := s.applyAutomaticOptions(ctx, p.InitializationOptions)
	s.ws.Store(ws)
	sess := &session{editorEnc: enc, init: p, client: client, delay: delay}
	if o := p.InitializationOptions; o != nil {
		sess.suggestTimeout = s.durationOption(ctx, "suggestTimeout", o.SuggestTimeout, timeoutBounds)
		sess.promptTimeout = s.durationOption(ctx, "promptTimeout", o.PromptTimeout, timeoutBounds)
		if o.AsksItself {
			s.editorAsksItself.Store(true)
		}
	}
	s.sess.Store(sess)
	s.life.Store(int32(stateInitialized))
	name := "unknown client"
	if p.ClientInfo != nil {
		name = p.ClientInfo.Name + " " + p.ClientInfo.Version
	}
	s.log.Info().Str("client", name).Bool("completionItems", client.completion).Strs("offered", offered).Str("positionEncoding", enc.String()).Msg("initialize")
	s.log.Info().Strs("globs", ex.Globs()).Msg("files kept from the agent")
	// The agent starts in the background so that initialize is answered at once.
	go s.startAgent(jsonrpc2.DetachContext(ctx))
	return result(protocol.InitializeResult{
		Capabilities: capabilities(enc, client),
		ServerInfo:   protocol.ServerInfo{Name: "acp-lsp-bridge", Version: protocol.NewOptional(s.cfg.Version)},
	})
}

// capabilities is the one place where the server's capabilities are built: only what is
// implemented is advertised.
func capabilities(enc encoding.Kind, client clientCaps) protocol.ServerCapabilities {
	yes := true
	change := protocol.TextDocumentSyncKindIncremental
	caps := protocol.ServerCapabilities{
		PositionEncoding: protocol.PositionEncodingKind(enc.String()),
		TextDocumentSync: &protocol.TextDocumentSyncOptions{
			OpenClose: &yes,
			Change:    &change,
			Save:      &protocol.SaveOptions{},
		},
		InlineCompletionProvider: protocol.Boolean(true),
		CodeActionProvider: &protocol.CodeActionOptions{
			CodeActionKinds: []protocol.CodeActionKind{protocol.CodeActionKindQuickFix, protocol.CodeActionKindRefactorRewrite},
		},
		ExecuteCommandProvider: protocol.ExecuteCommandOptions{
			Commands: []string{CommandAccept, CommandReject, CommandSuggest, CommandSignIn, CommandRestart, CommandEnable, CommandDisable, CommandToggle},
		},
		// The workspace's folders bound the files the agent may read; their changes are followed.
		Workspace: &protocol.WorkspaceOptions{WorkspaceFolders: &protocol.WorkspaceFoldersServerCapabilities{
			Supported: &yes, ChangeNotifications: protocol.Boolean(true),
		}},
	}
	// textDocument/copilotInlineEdit is not a standard capability: Copilot's clients ask without
	// one, and it is answered whatever the client advertises.
	if client.completion {
		caps.CompletionProvider = &protocol.CompletionOptions{}
	}
	return caps
}

func (s *Server) initialized(ctx context.Context) {
	// The agent is already starting; its problems are shown when they happen. From now on the
	// editor hears the bridge's state (status.go).
	_ = ctx
	s.statusOnce.Do(func() { go s.publishStatus(s.served) })
}

func (s *Server) shutdown(ctx context.Context) (any, error) {
	if !s.life.CompareAndSwap(int32(stateInitialized), int32(stateShutdown)) {
		return nil, nil // some clients send shutdown twice
	}
	s.exitCode.Store(0)
	s.log.Info().Msg("shutdown")
	// The agent is closed in the background, so that shutdown is answered at once whatever the
	// agent does; the bridge waits for it to end before it exits (Serve).
	go s.shutdownAgent()
	return nil, nil
}

func (s *Server) exit() {
	s.log.Info().Msg("exit")
	s.exitOnce.Do(func() { close(s.exited) })
}
