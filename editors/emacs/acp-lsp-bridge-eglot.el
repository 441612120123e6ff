;;; acp-lsp-bridge-eglot.el --- Next Edit Suggestions in Eglot, through acp-lsp-bridge  -*- lexical-binding: t; -*-

;; For Emacs 30 and its built-in Eglot 1.17 (tested with 1.17.30); Eglot 1.16 or later from GNU
;; ELPA on Emacs 29 should do (untested): it uses `eglot-server-capable', public since 1.16.
;;
;; Copy this file into your configuration and `load' it, or put its directory on `load-path'
;; and (require 'acp-lsp-bridge-eglot).  See editors/emacs/README.md.
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
;;   (require 'acp-lsp-bridge-eglot)
;;   (add-hook 'prog-mode-hook #'eglot-ensure)                    ; or M-x eglot once per project
;;   (add-hook 'text-mode-hook #'eglot-ensure)
;;
;; The agent.  It is given to the bridge on its command line, after "--"
;; (acp-lsp-bridge [ARGS] -- AGENT ARGS...), not in initializationOptions: that is the bridge's
;; primary form, the one `acp-lsp-bridge doctor -- AGENT ARGS...' checks, so a command that the
;; doctor approves works here as it is; and it shows in Eglot's events buffer and in the process
;; list.  The bridge starts the agent itself, never through a shell.  For environment variables,
;; start it with env: '("env" "KEY=value" "my-nes-agent").
;;
;; Which buffers.  Eglot gives a buffer one language server.  This file puts the bridge first in
;; `eglot-server-programs' for the major modes in `acp-lsp-bridge-eglot-modes', so in those modes
;; the bridge is *the* server and, say, gopls or pylsp no longer run under Eglot.  Leave out the
;; modes where you want to keep your language server (set the variable before this file is
;; loaded, or with `setopt' / M-x customize afterwards), or use lsp-mode, which runs the bridge
;; beside other servers (acp-lsp-bridge-lsp-mode.el).  All the listed modes of a project share
;; one bridge, so the agent sees every open file.
;;
;; Keys, in buffers the bridge manages (minor mode `acp-lsp-bridge-eglot-mode'; prefix C-c n,
;; change it in `acp-lsp-bridge-eglot-mode-map'):
;;   C-c n a   code actions (`eglot-code-actions'): "Next edit: ..." edits, also of other files,
;;             jumps, renames, search-and-replace.  Eglot applies the WorkspaceEdit, then runs the
;;             action's command, so the agent hears nes/accept.
;;   C-c n n   ask the agent now (acp-lsp-bridge.suggest, trigger "manual"): the bridge shows where
;;             the best suggestion applies and asks "Apply" or "Dismiss" in the minibuffer.
;;   C-c n k   dismiss this file's suggestions (acp-lsp-bridge.reject; nes/reject "rejected");
;;             with C-u, every file's.
;;   C-c n t   suggestions while typing off or on for this file (acp-lsp-bridge.toggle); C-u: for
;;             every file.  What you ask for (C-c n n, code actions) still works while they are off.
;;   C-c n s   sign in again, for an agent that waits for it (acp-lsp-bridge.signIn).
;;   C-c n r   restart the agent (acp-lsp-bridge.restart); M-x eglot-reconnect restarts the bridge.
;;
;; What Eglot shows.  Eglot has no inline completion (ghost text), so the bridge offers:
;; - code actions, for every kind of suggestion (above);
;; - completion items, one per edit on the cursor's line: M-x completion-at-point (C-M-i), or
;;   company/corfu, which use it.  Eglot applies the item's edits but never runs an item's
;;   command; the bridge notices that the text now reads as suggested and still ends the
;;   suggestion with nes/accept, when the next request or change comes.
;; - messages (window/showMessage) in the echo area, questions (sign in, permissions, Apply or
;;   Dismiss) in the minibuffer; the bridge's log in M-x eglot-stderr-buffer, unless
;;   `acp-lsp-bridge-args' names a --log-file.
;;
;; Focus.  When the selected window starts showing another file the bridge manages, this file
;; sends the bridge acp-lsp-bridge/didFocus (the file, the cursor, the visible lines), which
;; reaches agents that ask for document/didFocus.
;;
;; Diagnostics.  In a buffer the bridge manages, this file tells the bridge which diagnostics
;; Flymake shows, from every backend but Eglot's own (whose server is the bridge), with
;; acp-lsp-bridge/diagnostics: the file's whole list, which replaces the previous one.  They
;; reach agents that ask for the diagnostics context (GitHub Copilot's does), nearest the cursor
;; first.  Positions are in the encoding Eglot negotiated with the bridge; Flymake's :error,
;; :warning and :note (and the types of their categories, such as Eglot's) become severities 1,
;; 2 and 3.  It sends after a Flymake backend reports (Flymake has no hook for that: an :after
;; advice on `flymake--handle-report', which every backend's report function calls), when
;; Flymake is turned on or off, and when Eglot opens the file again; at most every
;; `acp-lsp-bridge-eglot-diagnostics-delay' seconds (0.5), and only a list that differs from the
;; one last sent.  In the buffers it manages, Eglot sets `flymake-diagnostic-functions' to its
;; own backend alone, so for the agent to see your other backends' diagnostics, add them back
;; in `eglot-managed-mode-hook':
;;
;;   (add-hook 'eglot-managed-mode-hook
;;             (lambda () (add-hook 'flymake-diagnostic-functions #'my-backend nil t)))
;;
;; or run Flymake yourself with (add-to-list 'eglot-stay-out-of 'flymake).  Turn it off with
;; (setq acp-lsp-bridge-eglot-send-diagnostics nil): the agent then gets no diagnostics from
;; Emacs (Eglot's code actions carry only its own server's).
;;
;; Tested: e2e/emacs_test.go loads this very file in Emacs 30 in batch mode (TestEmacsEglotCodeAction:
;; M-x eglot through `eglot-server-programs', C-c n a, the "Next edit: ..." action applied;
;; TestEmacsShippedEglotConfig: `eglot-ensure', focus, C-c n n with Apply, C-c n k, C-c n s,
;; C-c n r, and a byte-compilation without warnings); e2e/emacs_diagnostics_test.go
;; (TestEmacsEglotDiagnostics): a Flymake backend's error and warning reach the agent's
;; nes/suggest, their ranges converted, sent once, and nothing with the option off.

;;; Code:

(require 'cl-lib)
(require 'seq)
(require 'eglot)

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

(defcustom acp-lsp-bridge-command-timeout 180
  "Seconds to wait for the bridge to finish a command.
acp-lsp-bridge.suggest lasts until you answer its question; the
bridge itself gives up after two minutes."
  :type 'number)

(defcustom acp-lsp-bridge-eglot-send-diagnostics t
  "Whether to tell the bridge which diagnostics Flymake shows.
When non-nil, in the buffers the bridge manages, the diagnostics
of every Flymake backend but Eglot's go to the bridge
\(acp-lsp-bridge/diagnostics) whenever they change, for agents
that ask for them; nil: the bridge gets none of them."
  :type 'boolean)

(defcustom acp-lsp-bridge-eglot-diagnostics-delay 0.5
  "Seconds to wait after Flymake's diagnostics change before sending them.
Changes in the meantime go with the same notification."
  :type 'number)

(defcustom acp-lsp-bridge-eglot-modes
  '((c-mode :language-id "c") (c-ts-mode :language-id "c")
    (c++-mode :language-id "cpp") (c++-ts-mode :language-id "cpp")
    (csharp-mode :language-id "csharp") (csharp-ts-mode :language-id "csharp")
    (css-mode :language-id "css") (css-ts-mode :language-id "css")
    (elixir-mode :language-id "elixir") (elixir-ts-mode :language-id "elixir")
    (emacs-lisp-mode :language-id "emacs-lisp")
    (go-mode :language-id "go") (go-ts-mode :language-id "go")
    (haskell-mode :language-id "haskell")
    (html-mode :language-id "html") (mhtml-mode :language-id "html")
    (java-mode :language-id "java") (java-ts-mode :language-id "java")
    (js-mode :language-id "javascript") (js-ts-mode :language-id "javascript")
    (json-mode :language-id "json") (json-ts-mode :language-id "json")
    (kotlin-mode :language-id "kotlin")
    (lua-mode :language-id "lua") (lua-ts-mode :language-id "lua")
    (php-mode :language-id "php")
    (python-mode :language-id "python") (python-ts-mode :language-id "python")
    (ruby-mode :language-id "ruby") (ruby-ts-mode :language-id "ruby")
    (rust-mode :language-id "rust") (rust-ts-mode :language-id "rust")
    (scala-mode :language-id "scala")
    (sh-mode :language-id "shellscript") (bash-ts-mode :language-id "shellscript")
    (swift-mode :language-id "swift")
    (typescript-mode :language-id "typescript") (typescript-ts-mode :language-id "typescript")
    (tsx-ts-mode :language-id "typescriptreact")
    (yaml-mode :language-id "yaml") (yaml-ts-mode :language-id "yaml")
    (zig-mode :language-id "zig")
    (markdown-mode :language-id "markdown") (gfm-mode :language-id "markdown")
    (org-mode :language-id "org")
    ;; Last: modes derived from text-mode that are not listed above.
    (text-mode :language-id "plaintext"))
  "Major modes whose buffers Eglot gives to acp-lsp-bridge.
Each element is a mode, or (MODE :language-id ID) with the LSP
language id the agent is told; modes derived from a listed mode
match too, the first listed match giving the id.  Eglot runs one
server per buffer, so in these modes the bridge replaces another
Eglot server: leave out the modes where you want to keep yours.
nil: do not register the bridge (start it by hand, see README).
Setting it with `setopt' or Customize registers the bridge again;
after `setq', call `acp-lsp-bridge-eglot-register'."
  :type '(repeat (choice symbol (cons symbol plist)))
  :initialize #'custom-initialize-default
  :set (lambda (symbol value)
         (set-default-toplevel-value symbol value)
         (when (fboundp 'acp-lsp-bridge-eglot-register)
           (acp-lsp-bridge-eglot-register))))

(defclass acp-lsp-bridge-eglot-server (eglot-lsp-server) ()
  :documentation "An Eglot connection to acp-lsp-bridge.")

(defun acp-lsp-bridge-eglot-contact (&optional _interactive _project)
  "The `eglot-server-programs' contact of the bridge, from the settings.
Computed when Eglot starts the bridge, so that changing
`acp-lsp-bridge-agent' takes effect at the next M-x eglot or
eglot-reconnect."
  `(acp-lsp-bridge-eglot-server
    ,acp-lsp-bridge-program ,@acp-lsp-bridge-args
    ,@(and acp-lsp-bridge-agent (cons "--" acp-lsp-bridge-agent))))

(defun acp-lsp-bridge-eglot-register ()
  "Put the bridge first in `eglot-server-programs'.
For the modes of `acp-lsp-bridge-eglot-modes'."
  (interactive)
  (setq eglot-server-programs
        (cl-remove #'acp-lsp-bridge-eglot-contact eglot-server-programs :key #'cdr))
  (when acp-lsp-bridge-eglot-modes
    (push (cons acp-lsp-bridge-eglot-modes #'acp-lsp-bridge-eglot-contact)
          eglot-server-programs)))

;;; Commands

(defun acp-lsp-bridge-eglot--bridge-p ()
  "Whether the current buffer's Eglot server is acp-lsp-bridge.
Told by its commands, so that a server started with another
contact (M-x eglot with C-u) counts too."
  (and (eglot-managed-p)
       (eglot-current-server)
       (seq-contains-p (eglot-server-capable :executeCommandProvider :commands)
                       "acp-lsp-bridge.suggest")))

(defun acp-lsp-bridge-eglot--server ()
  "The current buffer's acp-lsp-bridge server, or a `user-error'."
  (unless (acp-lsp-bridge-eglot--bridge-p)
    (user-error "acp-lsp-bridge does not manage this buffer (M-x eglot starts it)"))
  (eglot-current-server))

(defun acp-lsp-bridge-eglot--execute (command arguments &optional then)
  "Send workspace/executeCommand COMMAND with ARGUMENTS, a vector.
Without waiting, unlike `eglot-execute': acp-lsp-bridge.suggest
answers only once you have chosen Apply or Dismiss, and a
synchronous request would give up after
`jsonrpc-default-request-timeout' with the question still open.
THEN, when given, is called with the command's answer."
  (let ((server (acp-lsp-bridge-eglot--server)))
    ;; Send pending changes first, so that positions refer to the text the bridge has.
    (eglot--signal-textDocument/didChange)
    (jsonrpc-async-request
     server :workspace/executeCommand `(:command ,command :arguments ,arguments)
     :success-fn (or then #'ignore)
     :error-fn (lambda (err)
                 (message "[acp-lsp-bridge] %s failed: %s" command (plist-get err :message)))
     :timeout-fn (lambda () (message "[acp-lsp-bridge] %s: no answer" command))
     :timeout acp-lsp-bridge-command-timeout)))

(defun acp-lsp-bridge-eglot-suggest ()
  "Ask the agent for a next edit at point now.
The bridge shows where its best suggestion applies and asks
whether to apply it; unanswered, it stays among the code actions."
  (interactive)
  (acp-lsp-bridge-eglot--server)
  ;; Eglot's own conversion: the position in the encoding negotiated with the bridge.
  (let ((params (eglot--TextDocumentPositionParams)))
    (acp-lsp-bridge-eglot--execute
     "acp-lsp-bridge.suggest"
     (vector (list :uri (plist-get (plist-get params :textDocument) :uri)
                   :position (plist-get params :position))))))

(defun acp-lsp-bridge-eglot-reject (&optional all)
  "Dismiss the suggestions of this file.
With prefix argument ALL, dismiss every suggestion."
  (interactive "P")
  (acp-lsp-bridge-eglot--server)
  (acp-lsp-bridge-eglot--execute
   "acp-lsp-bridge.reject"
   (if all [] (vector (list :uri (plist-get (eglot--TextDocumentIdentifier) :uri))))))

(defun acp-lsp-bridge-eglot-sign-in ()
  "Ask again how to sign in to an agent that waits for it."
  (interactive)
  (acp-lsp-bridge-eglot--execute "acp-lsp-bridge.signIn" []))

(defun acp-lsp-bridge-eglot-restart-agent ()
  "End the agent and start it again (the bridge keeps running)."
  (interactive)
  (acp-lsp-bridge-eglot--execute "acp-lsp-bridge.restart" []))

(defun acp-lsp-bridge-eglot-toggle (&optional all)
  "Turn suggestions while typing off or on for this file.
With prefix argument ALL, for every file.  What you ask for by
hand (C-c n n, code actions) still works while they are off."
  (interactive "P")
  (acp-lsp-bridge-eglot--server)
  (let ((where (if all "every file" (buffer-name))))
    (acp-lsp-bridge-eglot--execute
     "acp-lsp-bridge.toggle"
     (if all [] (vector (list :uri (plist-get (eglot--TextDocumentIdentifier) :uri))))
     (lambda (res)
       (message "[acp-lsp-bridge] suggestions while typing are %s for %s"
                (if (eq (plist-get res :automatic) t) "on" "off") where)))))

(defvar-keymap acp-lsp-bridge-eglot-command-map
  :doc "acp-lsp-bridge commands, under C-c n."
  "t" #'acp-lsp-bridge-eglot-toggle
  "a" #'eglot-code-actions
  "n" #'acp-lsp-bridge-eglot-suggest
  "k" #'acp-lsp-bridge-eglot-reject
  "s" #'acp-lsp-bridge-eglot-sign-in
  "r" #'acp-lsp-bridge-eglot-restart-agent)

(defvar-keymap acp-lsp-bridge-eglot-mode-map
  :doc "Keys of `acp-lsp-bridge-eglot-mode'."
  "C-c n" acp-lsp-bridge-eglot-command-map)

(defvar acp-lsp-bridge-eglot--statuses (make-hash-table :test #'eq :weakness 'key)
  "Each bridge's latest acp-lsp-bridge/status, by Eglot server.
A plist (:state :message :uri :agent).")

(defconst acp-lsp-bridge-eglot--lighters
  '(("starting" . " NES:starting") ("signingIn" . " NES:sign-in") ("ready" . " NES")
    ("asking" . " NES:asking") ("off" . " NES:off") ("excluded" . " NES:excluded")
    ("slow" . " NES:slow") ("failed" . " NES:failed"))
  "The mode-line lighter of each state of the bridge.")

(defun acp-lsp-bridge-eglot--lighter ()
  "The mode-line lighter: the bridge's state, as it last said it."
  (let* ((status (gethash (eglot-current-server) acp-lsp-bridge-eglot--statuses))
         (state (plist-get status :state)))
    (propertize (or (cdr (assoc state acp-lsp-bridge-eglot--lighters)) " NES")
                'help-echo (or (plist-get status :message) "acp-lsp-bridge"))))

(cl-defmethod eglot-handle-notification
  (server (_method (eql acp-lsp-bridge/status)) &key state message uri agent &allow-other-keys)
  "Keep SERVER's state (STATE, MESSAGE, URI, AGENT) and show it in the mode line."
  (puthash server (list :state state :message message :uri uri :agent agent)
           acp-lsp-bridge-eglot--statuses)
  (force-mode-line-update t))

(define-minor-mode acp-lsp-bridge-eglot-mode
  "Keys for acp-lsp-bridge, in buffers it manages through Eglot.
Turned on and off with Eglot's management of the buffer.  Its
mode-line lighter is the bridge's state: NES when ready,
NES:asking, NES:starting, NES:off (suggestions while typing are
off), NES:excluded (the file is kept from the agent),
NES:sign-in, NES:failed; the mouse shows the bridge's message.

\\{acp-lsp-bridge-eglot-mode-map}"
  :lighter (:eval (acp-lsp-bridge-eglot--lighter))
  :keymap acp-lsp-bridge-eglot-mode-map)

;;; Focus: acp-lsp-bridge/didFocus

(defvar acp-lsp-bridge-eglot--focused nil
  "The buffer the selected window showed when last looked at.")

(defun acp-lsp-bridge-eglot--focus (&optional _frame)
  "Send acp-lsp-bridge/didFocus when the selected window shows a new buffer.
Only for buffers the bridge manages.  Run by redisplay through
`window-buffer-change-functions' and
`window-selection-change-functions', and when Eglot starts
managing the buffer shown."
  (let* ((win (selected-window))
         (buf (window-buffer win)))
    (unless (or (window-minibuffer-p win) (eq buf acp-lsp-bridge-eglot--focused))
      (setq acp-lsp-bridge-eglot--focused buf)
      (with-current-buffer buf
        (when (and acp-lsp-bridge-eglot-mode (acp-lsp-bridge-eglot--bridge-p))
          (eglot--signal-textDocument/didChange)
          (jsonrpc-notify
           (eglot-current-server) :acp-lsp-bridge/didFocus
           (list :textDocument (eglot--TextDocumentIdentifier)
                 :position (eglot--pos-to-lsp-position (window-point win))
                 :visibleRange
                 (list :start (list :line (1- (line-number-at-pos (window-start win) t))
                                    :character 0)
                       :end (list :line (1- (line-number-at-pos (window-end win) t))
                                  :character 0)))))))))

(defun acp-lsp-bridge-eglot--managed ()
  "Follow Eglot's management of the buffer: keys, the first focus, diagnostics."
  (acp-lsp-bridge-eglot-mode (if (acp-lsp-bridge-eglot--bridge-p) 1 -1))
  (when (and acp-lsp-bridge-eglot-mode
             (eq (window-buffer (selected-window)) (current-buffer)))
    (setq acp-lsp-bridge-eglot--focused nil)
    (acp-lsp-bridge-eglot--focus))
  (if acp-lsp-bridge-eglot-mode
      (add-hook 'after-revert-hook #'acp-lsp-bridge-eglot--reopened t t)
    (remove-hook 'after-revert-hook #'acp-lsp-bridge-eglot--reopened t))
  (acp-lsp-bridge-eglot--reopened))

;;; Diagnostics: acp-lsp-bridge/diagnostics

(defvar-local acp-lsp-bridge-eglot--diagnostics-sent nil
  "(SERVER . DIAGNOSTICS): the list last sent for this buffer, and where.")

(defvar acp-lsp-bridge-eglot--diagnostics-pending nil
  "The buffers whose diagnostics may have changed since they were last sent.")

(defvar acp-lsp-bridge-eglot--diagnostics-timer nil
  "The timer that sends the pending buffers' diagnostics, while one waits.")

(defun acp-lsp-bridge-eglot--severity (type)
  "The LSP severity of Flymake diagnostic TYPE: 1 error, 2 warning, 3 note.
Told by TYPE's `flymake-category' (:error, Eglot's eglot-error and
the like); a type without one is an error, as for Flymake."
  (pcase (or (get type 'flymake-category) type)
    ('flymake-warning 2)
    ('flymake-note 3)
    (_ 1)))

(defun acp-lsp-bridge-eglot--diagnostics ()
  "Flymake's diagnostics of the current buffer, as LSP Diagnostics.
Every backend's but Eglot's (whose server is the bridge), in
buffer order; positions in the encoding Eglot negotiated."
  (let (diags)
    (dolist (d (flymake-diagnostics))
      (let ((beg (flymake-diagnostic-beg d))
            (end (flymake-diagnostic-end d)))
        (when (and (integerp beg) (integerp end)
                   (not (eq (flymake-diagnostic-backend d) 'eglot-flymake-backend)))
          (push (list beg end (acp-lsp-bridge-eglot--severity (flymake-diagnostic-type d))
                      (substring-no-properties (or (flymake-diagnostic-text d) "")))
                diags))))
    ;; `flymake-diagnostics' lists them in no particular order: sorted, an unchanged list
    ;; compares equal.
    (setq diags (sort diags (lambda (a b)
                              (or (< (car a) (car b))
                                  (and (= (car a) (car b))
                                       (or (< (cadr a) (cadr b))
                                           (and (= (cadr a) (cadr b))
                                                (string< (nth 3 a) (nth 3 b)))))))))
    (mapcar (lambda (d)
              (list :range (list :start (eglot--pos-to-lsp-position (nth 0 d))
                                 :end (eglot--pos-to-lsp-position (nth 1 d)))
                    :severity (nth 2 d)
                    :message (nth 3 d)))
            diags)))

(defun acp-lsp-bridge-eglot--send-diagnostics ()
  "Send the current buffer's diagnostics to the bridge, unless it has them."
  (when (and acp-lsp-bridge-eglot-send-diagnostics acp-lsp-bridge-eglot-mode
             (acp-lsp-bridge-eglot--bridge-p))
    (let* ((server (eglot-current-server))
           (diags (acp-lsp-bridge-eglot--diagnostics))
           ;; What the bridge has: nothing, for a server that got none from this buffer.
           (known (and (eq (car acp-lsp-bridge-eglot--diagnostics-sent) server)
                       (cdr acp-lsp-bridge-eglot--diagnostics-sent))))
      (unless (or (equal diags known) (not (jsonrpc-running-p server)))
        ;; Pending changes first, so that positions refer to the text the bridge has.
        (eglot--signal-textDocument/didChange)
        (jsonrpc-notify server :acp-lsp-bridge/diagnostics
                        (list :textDocument (eglot--TextDocumentIdentifier)
                              :diagnostics (vconcat diags)))
        (setq acp-lsp-bridge-eglot--diagnostics-sent (cons server diags))))))

(defun acp-lsp-bridge-eglot--send-pending-diagnostics ()
  "Send the diagnostics of the buffers whose diagnostics may have changed."
  (setq acp-lsp-bridge-eglot--diagnostics-timer nil)
  (let ((buffers (reverse acp-lsp-bridge-eglot--diagnostics-pending)))
    (setq acp-lsp-bridge-eglot--diagnostics-pending nil)
    (dolist (buf buffers)
      (when (buffer-live-p buf)
        (with-current-buffer buf
          (with-demoted-errors "[acp-lsp-bridge] diagnostics: %S"
            (acp-lsp-bridge-eglot--send-diagnostics)))))))

(defun acp-lsp-bridge-eglot--diagnostics-changed (&rest _)
  "Send the current buffer's diagnostics soon, when the bridge manages it.
After `acp-lsp-bridge-eglot-diagnostics-delay' seconds, with the
changes made meanwhile, so at most that often."
  (when (and acp-lsp-bridge-eglot-send-diagnostics acp-lsp-bridge-eglot-mode)
    (cl-pushnew (current-buffer) acp-lsp-bridge-eglot--diagnostics-pending)
    (unless acp-lsp-bridge-eglot--diagnostics-timer
      (setq acp-lsp-bridge-eglot--diagnostics-timer
            (run-at-time acp-lsp-bridge-eglot-diagnostics-delay nil
                         #'acp-lsp-bridge-eglot--send-pending-diagnostics)))))

(defun acp-lsp-bridge-eglot--reopened ()
  "After Eglot (re)opened the buffer: the bridge has no diagnostics of it."
  (setq acp-lsp-bridge-eglot--diagnostics-sent nil)
  (acp-lsp-bridge-eglot--diagnostics-changed))

(add-hook 'eglot-managed-mode-hook #'acp-lsp-bridge-eglot--managed)
(add-hook 'window-buffer-change-functions #'acp-lsp-bridge-eglot--focus)
(add-hook 'window-selection-change-functions #'acp-lsp-bridge-eglot--focus)
;; Flymake runs no hook when a backend reports: every backend's report function calls
;; `flymake--handle-report' in the buffer reported on.
(advice-add 'flymake--handle-report :after #'acp-lsp-bridge-eglot--diagnostics-changed)
(add-hook 'flymake-mode-hook #'acp-lsp-bridge-eglot--diagnostics-changed)

(defun acp-lsp-bridge-eglot-unload-function ()
  "Remove the advice on Flymake and the timer, for `unload-feature'."
  (advice-remove 'flymake--handle-report #'acp-lsp-bridge-eglot--diagnostics-changed)
  (when (timerp acp-lsp-bridge-eglot--diagnostics-timer)
    (cancel-timer acp-lsp-bridge-eglot--diagnostics-timer))
  nil)

(acp-lsp-bridge-eglot-register)

(provide 'acp-lsp-bridge-eglot)
;;; acp-lsp-bridge-eglot.el ends here
