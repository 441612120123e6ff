;;; lsp-mode-setup.el --- lsp-mode 10 with the shipped configuration, beside a second server  -*- lexical-binding: t -*-

;; What the lsp-mode scripts share, as a user's init file has it: lsp-mode and its dependencies
;; from LSPMODE_LOAD_PATH (as package.el installs them), lsp-mode's settings for a quiet
;; configuration, the shipped editors/emacs/acp-lsp-bridge-lsp-mode.el (its settings naming the
;; built bridge and the scripted test agent), and the buffer's own language server, acp-test-lsp,
;; for text-mode buffers.  The project folder is a workspace folder, as a user answers lsp-mode's
;; first question.
;;
;; Loaded by lsp-mode.el (batch mode) and lsp-mode-tmux.el (emacs -nw in tmux).
;; Environment: LSPMODE_LOAD_PATH, ACP_EMACS_LSP_CONFIG (the shipped file), ACP_LSP_BRIDGE,
;; ACP_TEST_AGENT, ACP_TEST_LSP, EMACS_TEST_DIR (the project), EMACS_TEST_SCRATCH (lsp-mode's
;; session file), EMACS_TEST_BRIDGE_MIRROR and EMACS_TEST_MAIN_MIRROR (the servers' copies of each
;; document), EMACS_TEST_BRIDGE_LOG, EMACS_TEST_AGENT_LOG, and EMACS_TEST_RULES (optional: the
;; agent's rules).

(load (expand-file-name "lib.el" (file-name-directory load-file-name)) nil t)

;; lsp-mode and its dependencies as package.el installs them: on the load path, autoloads loaded.
(dolist (dir (split-string (acp-test--env "LSPMODE_LOAD_PATH") ":" t))
  (add-to-list 'load-path dir)
  (dolist (f (directory-files dir t "-autoloads\\.el\\'"))
    (load f nil t)))

(defconst acp-test--dir (file-name-as-directory (acp-test--env "EMACS_TEST_DIR")))
(defconst acp-test--scratch (file-name-as-directory (acp-test--env "EMACS_TEST_SCRATCH")))

;; lsp-mode's own settings, as a user with a quiet configuration has them: no session file in
;; ~/.emacs.d, no file watchers, no breadcrumbs, lenses or modeline extras.
(setq lsp-session-file (expand-file-name "lsp-session" acp-test--scratch)
      lsp-server-install-dir (expand-file-name "lsp-servers" acp-test--scratch)
      lsp-enable-file-watchers nil
      lsp-enable-snippet nil
      lsp-headerline-breadcrumb-enable nil
      lsp-modeline-code-actions-enable nil
      lsp-modeline-diagnostics-enable nil
      lsp-lens-enable nil
      lsp-restart 'ignore
      lsp-log-io t
      lsp-auto-guess-root nil)

(require 'lsp-mode)

;; The shipped configuration, loaded after lsp-mode as its header says.
(setq acp-lsp-bridge-program (acp-test--env "ACP_LSP_BRIDGE")
      acp-lsp-bridge-args (list "--log-file" (acp-test--env "EMACS_TEST_BRIDGE_LOG")
                                "--log-level" "debug")
      acp-lsp-bridge-agent (list (acp-test--env "ACP_TEST_AGENT")
                                 "--encoding" "utf-16"
                                 "--log" (acp-test--env "EMACS_TEST_AGENT_LOG")
                                 "--mirror-dir" (acp-test--env "EMACS_TEST_BRIDGE_MIRROR"))
      acp-lsp-bridge-agent (append acp-lsp-bridge-agent
                                   (and (getenv "EMACS_TEST_RULES")
                                        (list "--rules" (getenv "EMACS_TEST_RULES")))))
(load (acp-test--env "ACP_EMACS_LSP_CONFIG") nil t)

;; The buffer's own server.
(lsp-register-client
 (make-lsp-client
  :new-connection (lsp-stdio-connection
                   (list (acp-test--env "ACP_TEST_LSP")
                         "--mirror-dir" (acp-test--env "EMACS_TEST_MAIN_MIRROR")))
  :activation-fn (lambda (_file mode) (eq mode 'text-mode))
  :server-id 'acp-test-main))

(lsp-workspace-folders-add acp-test--dir)

(provide 'lsp-mode-setup)
;;; lsp-mode-setup.el ends here
