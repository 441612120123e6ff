;;; lsp-mode-config.el --- weak checks of editors/emacs/acp-lsp-bridge-lsp-mode.el without lsp-mode  -*- lexical-binding: t -*-

;; lsp-mode is not among the test peers, so the shipped lsp-mode configuration cannot be tried
;; in lsp-mode here. These checks are weaker than a real run:
;;
;;  1. Syntax: the file's parentheses balance (`check-parens') and every top-level form reads.
;;  2. Names: it byte-compiles without a warning against the stand-in below, which defines only
;;     names that lsp-mode 10.0.1 defines (checked in its lsp-mode.el, lsp-protocol.el and
;;     lsp-inline-completion.el): a misspelt lsp-mode function or variable is a warning.
;;  3. Logic, against the stand-in: what it registers with `lsp-register-client' (server id,
;;     add-on, the command line from the settings, activation by major mode,
;;     initializationOptions, the handler for acp-lsp-bridge.accept), its keys, and that its
;;     commands send workspace/executeCommand to the bridge's workspace only.
;;
;; Whether lsp-mode itself behaves as its source reads (starting the add-on client, showing
;; ghost text, running the handler) is not checked.
;;
;; Environment: ACP_EMACS_LSP_CONFIG (the file), EMACS_TEST_SCRATCH (for the .elc).
;; "PASS" and exit code 0, or "FAIL: ..." and exit code 1.

(load (expand-file-name "lib.el" (file-name-directory load-file-name)) nil t)
(require 'bytecomp)

;;; The stand-in for lsp-mode: the names the configuration uses, with lsp-mode's signatures.

(defvar lsp--cur-workspace nil)
(defvar lsp-after-open-hook nil)
(defvar lsp-unconfigure-hook nil)
(defvar lsp-inline-completion-enable t)
(defvar acp-test--clients nil "What `lsp-register-client' got.")
(defvar acp-test--requests nil "(WORKSPACE METHOD PARAMS) of each `lsp-request-async'.")
(defvar acp-test--buffer-workspaces nil "What `lsp-workspaces' returns.")

(cl-defstruct (acp-test--workspace (:constructor acp-test--workspace-create)) server-id)
(defmacro with-lsp-workspace (workspace &rest body)
  (declare (indent 1))
  `(let ((lsp--cur-workspace ,workspace)) ,@body))
(defun make-lsp-client (&rest args) args)
(defun lsp-register-client (client) (push client acp-test--clients))
(defun lsp-stdio-connection (command &optional _test-command) (list :command command))
(defun lsp-workspaces ()
  (if lsp--cur-workspace (list lsp--cur-workspace) acp-test--buffer-workspaces))
(defun lsp--workspace-client (workspace) workspace)
(defun lsp--client-server-id (client) (acp-test--workspace-server-id client))
(cl-defun lsp-request-async (method params _callback &key _mode _error-handler _cancel-handler
                                    _no-merge _cancel-token)
  (dolist (ws (lsp-workspaces))
    (push (list (acp-test--workspace-server-id ws) method params) acp-test--requests)))
(defun lsp--warn (format &rest args) (apply #'message format args))
(defun lsp-get (from key) (plist-get from key))
(defun lsp--buffer-uri () "file:///work/a.txt")
(defun lsp--cur-position () (list :line 1 :character 3))
(defun lsp-execute-code-action (_action) (interactive))
(defun lsp-inline-completion-display (&optional _implicit) (interactive))
(define-minor-mode lsp-inline-completion-mode "Stand-in." :lighter nil)
(provide 'lsp-mode)

(defun acp-test--run ()
  (let* ((config (expand-file-name (acp-test--env "ACP_EMACS_LSP_CONFIG")))
         (scratch (file-name-as-directory (expand-file-name (acp-test--env "EMACS_TEST_SCRATCH"))))
         (forms 0))
    ;; 1. Syntax.
    (with-temp-buffer
      (insert-file-contents config)
      (emacs-lisp-mode)
      (condition-case err
          (check-parens)
        (error (acp-test--fail "check-parens: %s" (error-message-string err))))
      (goto-char (point-min))
      (condition-case err
          (while (progn (forward-comment (buffer-size)) (not (eobp)))
            (read (current-buffer))
            (setq forms (1+ forms)))
        (error (acp-test--fail "reading form %d at %d: %s" (1+ forms) (point)
                               (error-message-string err)))))
    (message "%s: %d top-level forms read" (file-name-nondirectory config) forms)

    ;; 2. Names: no warning against the stand-in.
    (let ((byte-compile-dest-file-function
           (lambda (_) (expand-file-name "acp-lsp-bridge-lsp-mode.elc" scratch)))
          (byte-compile-error-on-warn t))
      (acp-test--check (byte-compile-file config)
                       "byte-compiling %s against the stand-in failed or warned" config))

    ;; 3. Logic.
    (load config nil t)
    (acp-test--check (= (length acp-test--clients) 1) "registered %S" acp-test--clients)
    (let* ((client (car acp-test--clients))
           (command (plist-get (plist-get client :new-connection) :command))
           (activate (plist-get client :activation-fn))
           (options (plist-get client :initialization-options))
           (handler (gethash "acp-lsp-bridge.accept" (plist-get client :action-handlers))))
      (acp-test--check (eq (plist-get client :server-id) 'acp-lsp-bridge)
                       "server id %S" (plist-get client :server-id))
      (acp-test--check (eq (plist-get client :add-on?) t) "add-on? %S" (plist-get client :add-on?))
      (let ((acp-lsp-bridge-program "/opt/acp-lsp-bridge")
            (acp-lsp-bridge-args '("--log-file" "/tmp/b.log"))
            (acp-lsp-bridge-agent '("my-nes-agent" "--acp")))
        (acp-test--check (equal (funcall command)
                                '("/opt/acp-lsp-bridge" "--log-file" "/tmp/b.log"
                                  "--" "my-nes-agent" "--acp"))
                         "command %S" (funcall command)))
      (let ((acp-lsp-bridge-agent nil))
        (acp-test--check (equal (funcall command) '("acp-lsp-bridge"))
                         "command without an agent %S" (funcall command)))
      (dolist (c '((text-mode . t) (emacs-lisp-mode . t) (fundamental-mode . nil)
                   (special-mode . nil)))
        (acp-test--check (eq (and (funcall activate "/work/f" (car c)) t) (cdr c))
                         "activation for %s: want %S" (car c) (cdr c)))
      (let ((lsp-inline-completion-enable t))
        (acp-test--check (equal (funcall options) '(:completion :json-false))
                         "initializationOptions with ghost text: %S" (funcall options)))
      (let ((lsp-inline-completion-enable nil))
        (acp-test--check (equal (funcall options) '(:completion t))
                         "initializationOptions without ghost text: %S" (funcall options)))

      ;; Keys and commands, in a buffer that the bridge and another server manage.
      (with-temp-buffer
        (setq acp-test--buffer-workspaces
              (list (acp-test--workspace-create :server-id 'gopls)
                    (acp-test--workspace-create :server-id 'acp-lsp-bridge)))
        (let ((lsp--cur-workspace (cadr acp-test--buffer-workspaces)))
          (run-hooks 'lsp-after-open-hook))
        (acp-test--check (and acp-lsp-bridge-lsp-mode lsp-inline-completion-mode)
                         "after the bridge opened the buffer: keys %S, ghost text %S"
                         acp-lsp-bridge-lsp-mode lsp-inline-completion-mode)
        (dolist (k '(("C-c n i" . lsp-inline-completion-display)
                     ("C-c n a" . lsp-execute-code-action)
                     ("C-c n n" . acp-lsp-bridge-lsp-suggest)
                     ("C-c n k" . acp-lsp-bridge-lsp-reject)
                     ("C-c n s" . acp-lsp-bridge-lsp-sign-in)
                     ("C-c n r" . acp-lsp-bridge-lsp-restart-agent)))
          (acp-test--check (and (eq (key-binding (kbd (car k))) (cdr k)) (commandp (cdr k)))
                           "%s runs %S, want the command %S"
                           (car k) (key-binding (kbd (car k))) (cdr k)))
        (setq acp-test--requests nil)
        (call-interactively #'acp-lsp-bridge-lsp-suggest)
        (funcall handler (list :title "Accept next edit" :command "acp-lsp-bridge.accept"
                               :arguments ["sugg-1"]))
        (call-interactively #'acp-lsp-bridge-lsp-reject)
        (acp-test--check
         (equal (reverse acp-test--requests)
                '((acp-lsp-bridge "workspace/executeCommand"
                                  (:command "acp-lsp-bridge.suggest"
                                            :arguments [(:uri "file:///work/a.txt"
                                                              :position (:line 1 :character 3))]))
                  (acp-lsp-bridge "workspace/executeCommand"
                                  (:command "acp-lsp-bridge.accept" :arguments ["sugg-1"]))
                  (acp-lsp-bridge "workspace/executeCommand"
                                  (:command "acp-lsp-bridge.reject"
                                            :arguments [(:uri "file:///work/a.txt")]))))
         "requests (server, method, params): %S" (reverse acp-test--requests))))
    (message "PASS")))

(condition-case err
    (acp-test--run)
  (error (acp-test--fail "error: %s" (error-message-string err))))
(kill-emacs 0)

;;; lsp-mode-config.el ends here
