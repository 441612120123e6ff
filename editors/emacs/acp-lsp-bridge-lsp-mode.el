;;; acp-lsp-bridge-lsp-mode.el --- Next Edit Suggestions in lsp-mode, through acp-lsp-bridge  -*- lexical-binding: t; -*-

;; For lsp-mode 10.0 or later (ghost text needs its lsp-inline-completion.el, first released in
;; 10.0.0; older versions get code actions and completion items only), on Emacs 29 or later.
;;
;; Tested with the real lsp-mode 10.0.0 in Emacs 30 (e2e/lspmode_test.go): the bridge starts
;; as an add-on beside the buffer's own server, both take lsp-mode's position encoding, and both
;; keep the document as lsp-mode sends it while the user types after non-ASCII text.
;; TestEmacsLspModeConfig also byte-compiles it against a stand-in that defines only names
;; lsp-mode defines.
;;
;; Copy this file into your configuration and `load' it after lsp-mode, or put its directory on
;; `load-path' and (require 'acp-lsp-bridge-lsp-mode).  See editors/emacs/README.md.
;;
;;   (setq acp-lsp-bridge-agent '("my-nes-agent" "--its-flags"))  ; nil: the bridge's built-in agent
;;   (setq acp-lsp-bridge-agent '("env" "CODEX_API_KEY=..." "codex-acp"))  ; a coding agent, asked
;;     through prompts: seconds and tokens per suggestion, only when you ask (README, "Using
;;     Claude, Codex or Gemini"); also '("gemini" "--acp"), '("claude-agent-acp")
;;   (setq acp-lsp-bridge-program "/path/to/acp-lsp-bridge")      ; when it is not on `exec-path'
;;   (setq acp-lsp-bridge-args '("--exclude" "secrets/**"))   ; kept from the agent, besides
;;     the defaults (.env, keys, .ssh/**, ...; docs/security.md); repeat --exclude for more
;;   (setq acp-lsp-bridge-program "C:/Users/you/go/bin/acp-lsp-bridge.exe") ; the same, on Windows
;;   (setq acp-lsp-bridge-args '("--delay" "250"))  ; ask while typing only once the buffer has
;;     been still 250 ms (for a local model); "--automatic=false" starts with it off (C-c n t)
;;   (with-eval-after-load 'lsp-mode (require 'acp-lsp-bridge-lsp-mode))
;;   (add-hook 'prog-mode-hook #'lsp-deferred)
;;
;; The bridge is an add-on client (:add-on? t): lsp-mode starts it beside the buffer's language
;; server (gopls, pyright, ...), in the modes of `acp-lsp-bridge-lsp-modes' and those derived
;; from them.  The agent goes to the bridge after "--" on its command line, as in
;; acp-lsp-bridge-eglot.el (the form `acp-lsp-bridge doctor -- AGENT ARGS...' checks).
;;
;; What lsp-mode shows:
;; - ghost text (textDocument/inlineCompletion), with `lsp-inline-completion-mode', which this
;;   file turns on in buffers the bridge manages (unless `lsp-inline-completion-enable' is nil).
;;   lsp-mode asks after `lsp-inline-completion-idle-delay' (2 s) of idle time.  While it shows,
;;   lsp-inline-completion-active-map has: C-<return> accept (lsp-mode then runs the item's
;;   command: the agent hears nes/accept), C-n / C-p the next / previous suggestion,
;;   C-g, <escape> or C-c C-k cancel.
;; - code actions, for every kind of suggestion: edits (also of other files), jumps, renames,
;;   search-and-replace;
;; - completion items only with an lsp-mode that has no inline completion: lsp-mode writes the
;;   client capability textDocument.inlineCompletion as null, which the bridge reads as absent,
;;   so this file tells the bridge through initializationOptions.completion.
;;
;; Keys, in buffers the bridge manages (minor mode `acp-lsp-bridge-lsp-mode'; prefix C-c n):
;;   C-c n i   ghost text now (`lsp-inline-completion-display')
;;   C-c n a   code actions (`lsp-execute-code-action')
;;   C-c n n   ask the agent now (acp-lsp-bridge.suggest): the bridge shows where its best
;;             suggestion applies and asks "Apply" or "Dismiss"
;;   C-c n k   dismiss this file's suggestions (acp-lsp-bridge.reject); C-u: every file's
;;   C-c n t   suggestions while typing off or on for this file (acp-lsp-bridge.toggle);
;;             C-u: for every file.  What you ask for (C-c n n, code actions) still works.
;;   C-c n s   sign in again (acp-lsp-bridge.signIn)
;;   C-c n r   restart the agent (acp-lsp-bridge.restart); M-x lsp-workspace-restart restarts
;;             the bridge
;;
;; The bridge's commands are sent to the bridge only, never to the other servers of the buffer
;; (lsp-mode would otherwise send workspace/executeCommand to every server that has commands).
;; This file does not send the bridge's optional notifications (acp-lsp-bridge/didFocus,
;; acp-lsp-bridge/diagnostics): the bridge then infers the focus from requests.

;;; Code:

(require 'cl-lib)
(require 'lsp-mode)
(require 'lsp-inline-completion nil t)

(defgroup acp-lsp-bridge nil
  "Next Edit Suggestions from ACP agents, through acp-lsp-bridge."
  :group 'tools
  :prefix "acp-lsp-bridge-")

(defcustom acp-lsp-bridge-program "acp-lsp-bridge"
  "The acp-lsp-bridge executable: a name found on `exec-path', or a file name."
  :type 'string)

(defcustom acp-lsp-bridge-agent nil
  "The ACP agent the bridge runs, and its arguments: a list of strings.
For example (\"my-nes-agent\" \"--acp\").  The bridge gets them after
\"--\" and starts the agent itself, without a shell.  nil: the
bridge's built-in agent (`acp-lsp-bridge agent')."
  :type '(repeat string))

(defcustom acp-lsp-bridge-args nil
  "More arguments for acp-lsp-bridge, before \"--\".
For example (\"--log-file\" \"/tmp/acp-lsp-bridge.log\")."
  :type '(repeat string))

(defcustom acp-lsp-bridge-lsp-modes '(prog-mode text-mode)
  "Major modes in which lsp-mode starts the bridge.
Modes derived from them count too."
  :type '(repeat symbol))

(defun acp-lsp-bridge-lsp--command ()
  "The bridge's command line, from the settings (read when lsp-mode starts it)."
  `(,acp-lsp-bridge-program ,@acp-lsp-bridge-args
                            ,@(and acp-lsp-bridge-agent (cons "--" acp-lsp-bridge-agent))))

(defun acp-lsp-bridge-lsp--activate-p (_file-name mode)
  "Whether lsp-mode should start the bridge for a buffer in major MODE."
  (cl-some (lambda (m) (provided-mode-derived-p mode m)) acp-lsp-bridge-lsp-modes))

(defun acp-lsp-bridge-lsp--ghost-text-p ()
  "Whether lsp-mode will show the bridge's ghost text."
  (and (fboundp 'lsp-inline-completion-mode)
       (bound-and-true-p lsp-inline-completion-enable)))

(defun acp-lsp-bridge-lsp--initialization-options ()
  "initializationOptions: completion items only when there is no ghost text."
  (list :completion (if (acp-lsp-bridge-lsp--ghost-text-p) :json-false t)))

;;; Commands

(defun acp-lsp-bridge-lsp--workspace ()
  "The bridge's lsp-mode workspace of the current buffer, or a `user-error'."
  (or (cl-find-if (lambda (ws)
                    (eq (lsp--client-server-id (lsp--workspace-client ws)) 'acp-lsp-bridge))
                  (lsp-workspaces))
      (user-error "acp-lsp-bridge does not manage this buffer (M-x lsp starts it)")))

(defun acp-lsp-bridge-lsp--execute (command arguments &optional then)
  "Send workspace/executeCommand COMMAND with ARGUMENTS, a vector.
To the bridge only, without waiting: acp-lsp-bridge.suggest
answers only once you have chosen Apply or Dismiss.  THEN, when
given, is called with the command's answer."
  (with-lsp-workspace (acp-lsp-bridge-lsp--workspace)
    (lsp-request-async "workspace/executeCommand"
                       (list :command command :arguments arguments)
                       (or then #'ignore)
                       :mode 'detached
                       :error-handler
                       (lambda (err)
                         (lsp--warn "acp-lsp-bridge: %s failed: %s" command
                                    (or (ignore-errors (lsp-get err :message)) err))))))

(defun acp-lsp-bridge-lsp--accept-handler (action)
  "Run ACTION, the bridge's acp-lsp-bridge.accept command, at the bridge only.
lsp-mode calls it for the command of a code action, a completion
item or a ghost text it applied."
  (acp-lsp-bridge-lsp--execute "acp-lsp-bridge.accept" (lsp-get action :arguments)))

(defun acp-lsp-bridge-lsp-suggest ()
  "Ask the agent for a next edit at point now.
The bridge shows where its best suggestion applies and asks
whether to apply it; unanswered, it stays among the code actions."
  (interactive)
  (acp-lsp-bridge-lsp--workspace)
  ;; lsp-mode's own conversion: the position in the encoding it negotiated.
  (acp-lsp-bridge-lsp--execute
   "acp-lsp-bridge.suggest"
   (vector (list :uri (lsp--buffer-uri) :position (lsp--cur-position)))))

(defun acp-lsp-bridge-lsp-reject (&optional all)
  "Dismiss the suggestions of this file.
With prefix argument ALL, dismiss every suggestion."
  (interactive "P")
  (acp-lsp-bridge-lsp--execute "acp-lsp-bridge.reject"
                               (if all [] (vector (list :uri (lsp--buffer-uri))))))

(defun acp-lsp-bridge-lsp-sign-in ()
  "Ask again how to sign in to an agent that waits for it."
  (interactive)
  (acp-lsp-bridge-lsp--execute "acp-lsp-bridge.signIn" []))

(defun acp-lsp-bridge-lsp-restart-agent ()
  "End the agent and start it again (the bridge keeps running)."
  (interactive)
  (acp-lsp-bridge-lsp--execute "acp-lsp-bridge.restart" []))

(defun acp-lsp-bridge-lsp-toggle (&optional all)
  "Turn suggestions while typing off or on for this file.
With prefix argument ALL, for every file.  What you ask for by
hand (C-c n n, code actions) still works while they are off."
  (interactive "P")
  (let ((where (if all "every file" (buffer-name))))
    (acp-lsp-bridge-lsp--execute
     "acp-lsp-bridge.toggle"
     (if all [] (vector (list :uri (lsp--buffer-uri))))
     (lambda (res)
       (message "acp-lsp-bridge: suggestions while typing are %s for %s"
                (if (eq (lsp-get res :automatic) t) "on" "off") where)))))

(defvar acp-lsp-bridge-lsp-command-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "t") #'acp-lsp-bridge-lsp-toggle)
    (define-key map (kbd "i") #'lsp-inline-completion-display)
    (define-key map (kbd "a") #'lsp-execute-code-action)
    (define-key map (kbd "n") #'acp-lsp-bridge-lsp-suggest)
    (define-key map (kbd "k") #'acp-lsp-bridge-lsp-reject)
    (define-key map (kbd "s") #'acp-lsp-bridge-lsp-sign-in)
    (define-key map (kbd "r") #'acp-lsp-bridge-lsp-restart-agent)
    map)
  "acp-lsp-bridge commands, under C-c n.")

(defvar acp-lsp-bridge-lsp-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "C-c n") acp-lsp-bridge-lsp-command-map)
    map)
  "Keys of `acp-lsp-bridge-lsp-mode'.")

(defvar acp-lsp-bridge-lsp--statuses (make-hash-table :test #'eq :weakness 'key)
  "Each bridge's latest acp-lsp-bridge/status, by lsp-mode workspace.
A plist (:state :message :uri :agent).")

(defconst acp-lsp-bridge-lsp--lighters
  '(("starting" . " NES:starting") ("signingIn" . " NES:sign-in") ("ready" . " NES")
    ("asking" . " NES:asking") ("off" . " NES:off") ("excluded" . " NES:excluded")
    ("slow" . " NES:slow") ("failed" . " NES:failed"))
  "The mode-line lighter of each state of the bridge.")

(defun acp-lsp-bridge-lsp--lighter ()
  "The mode-line lighter: the bridge's state, as it last said it."
  (let* ((ws (cl-find-if (lambda (ws)
                               (eq (lsp--client-server-id (lsp--workspace-client ws)) 'acp-lsp-bridge))
                             (lsp-workspaces)))
         (status (and ws (gethash ws acp-lsp-bridge-lsp--statuses)))
         (state (plist-get status :state)))
    (propertize (or (cdr (assoc state acp-lsp-bridge-lsp--lighters)) " NES")
                'help-echo (or (plist-get status :message) "acp-lsp-bridge"))))

(defun acp-lsp-bridge-lsp--status-handler (workspace params)
  "Keep WORKSPACE's acp-lsp-bridge/status PARAMS and show it in the mode line."
  (puthash workspace
           (list :state (lsp-get params :state) :message (lsp-get params :message)
                 :uri (lsp-get params :uri) :agent (lsp-get params :agent))
           acp-lsp-bridge-lsp--statuses)
  (force-mode-line-update t))

(define-minor-mode acp-lsp-bridge-lsp-mode
  "Keys for acp-lsp-bridge, in buffers it manages through lsp-mode.
Its mode-line lighter is the bridge's state: NES when ready,
NES:asking, NES:starting, NES:off (suggestions while typing are
off), NES:excluded (the file is kept from the agent),
NES:sign-in, NES:failed; the mouse shows the bridge's message.

\\{acp-lsp-bridge-lsp-mode-map}"
  :lighter (:eval (acp-lsp-bridge-lsp--lighter))
  :keymap acp-lsp-bridge-lsp-mode-map)

(defun acp-lsp-bridge-lsp--opened ()
  "After the bridge opened the buffer: keys, and ghost text."
  (when (and lsp--cur-workspace
             (eq (lsp--client-server-id (lsp--workspace-client lsp--cur-workspace))
                 'acp-lsp-bridge))
    (acp-lsp-bridge-lsp-mode 1)
    (when (acp-lsp-bridge-lsp--ghost-text-p)
      (lsp-inline-completion-mode 1))))

(defun acp-lsp-bridge-lsp--closed ()
  "When lsp-mode leaves the buffer."
  (acp-lsp-bridge-lsp-mode -1))

(add-hook 'lsp-after-open-hook #'acp-lsp-bridge-lsp--opened)
(add-hook 'lsp-unconfigure-hook #'acp-lsp-bridge-lsp--closed)

(lsp-register-client
 (make-lsp-client
  :new-connection (lsp-stdio-connection #'acp-lsp-bridge-lsp--command)
  :activation-fn #'acp-lsp-bridge-lsp--activate-p
  :server-id 'acp-lsp-bridge
  :add-on? t
  :initialization-options #'acp-lsp-bridge-lsp--initialization-options
  :notification-handlers (let ((handlers (make-hash-table :test #'equal)))
                           (puthash "acp-lsp-bridge/status" #'acp-lsp-bridge-lsp--status-handler
                                    handlers)
                           handlers)
  :action-handlers (let ((handlers (make-hash-table :test #'equal)))
                     (puthash "acp-lsp-bridge.accept" #'acp-lsp-bridge-lsp--accept-handler
                              handlers)
                     handlers)))

(provide 'acp-lsp-bridge-lsp-mode)
;;; acp-lsp-bridge-lsp-mode.el ends here
