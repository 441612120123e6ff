;;; copilot-signin-eglot.el --- init file of the emacs -nw session of e2e/copilot_editors_signin_test.go  -*- lexical-binding: t -*-

;; emacs -nw -Q -l copilot-signin-eglot.el main.txt: a user's init file with the shipped
;; editors/emacs/acp-lsp-bridge-eglot.el set up for GitHub Copilot as editors/emacs/README.md says
;; (`acp-lsp-bridge-agent' nil, "--agent" "copilot" in `acp-lsp-bridge-args'), and Eglot started
;; by `eglot-ensure' in text-mode buffers.  The test types keys and reads the screen; nothing here
;; checks anything.
;;
;; Environment: ACP_EMACS_CONFIG (the shipped file), ACP_LSP_BRIDGE, EMACS_TEST_BRIDGE_LOG.

(load (getenv "ACP_EMACS_CONFIG") nil t)
(setq acp-lsp-bridge-program (getenv "ACP_LSP_BRIDGE")
      acp-lsp-bridge-agent nil
      acp-lsp-bridge-args (list "--agent" "copilot"
                                "--log-file" (getenv "EMACS_TEST_BRIDGE_LOG") "--log-level" "debug"))
(setq project-find-functions nil
      make-backup-files nil
      auto-save-default nil)
(add-hook 'text-mode-hook #'eglot-ensure)

;;; copilot-signin-eglot.el ends here
