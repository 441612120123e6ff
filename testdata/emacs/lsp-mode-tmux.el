;;; lsp-mode-tmux.el --- init file of the lsp-mode session that e2e/lspmode_test.go drives in tmux  -*- lexical-binding: t -*-

;; emacs -nw -Q -l lsp-mode-tmux.el FILE: a user's init file with lsp-mode 10 and the shipped
;; configuration (lsp-mode-setup.el), lsp-mode started in text-mode buffers as the shipped file's
;; header says for prog-mode.  The test types keys and reads the screen; nothing here checks
;; anything.

(load (expand-file-name "lsp-mode-setup.el" (file-name-directory load-file-name)) nil t)
(setq make-backup-files nil
      auto-save-default nil)
(add-hook 'text-mode-hook #'lsp-deferred)
