;;; acp-lsp-bridge-lsp-mode.el --- Next Edit Suggestions in lsp-mode, through acp-lsp-bridge  -*- lexical-binding: t; -*-

;; For lsp-mode 10.0 or later (ghost text needs its lsp-inline-completion.el, first released in
;; 10.0.0; older versions get code actions and completion items only), on Emacs 29 or later.
;;
;; Tested with the real lsp-mode 10.0.0 in Emacs 30 (e2e/lspmode_test.go): the bridge starts
;; as an add-on beside the buffer's own server, both take lsp-mode's position encoding, and both
;; keep the document as lsp-mode sends it while the user types after non-ASCII text.
;; TestEmacsLspModeConfig also byte-compiles it against a stand-in that defines only names
;; lsp-mode defines.  TestLspModeDiagnostics (e2e/emacs_diagnostics_test.go): a Flymake backend's
;; error and the other server's warning reach the agent's nes/suggest, their ranges converted,
;; each once, and nothing with the option off.
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
;; This file does not send acp-lsp-bridge/didFocus: the bridge infers the focus from requests.
;;
;; Diagnostics.  In a buffer the bridge manages, this file tells the bridge (and only the
;; bridge) which diagnostics the buffer shows, with acp-lsp-bridge/diagnostics: the file's whole
;; list, which replaces the previous one.  They reach agents that ask for the diagnostics
;; context (GitHub Copilot's does), nearest the cursor first.  The list has:
;; - what the buffer's other language servers published (lsp-mode's diagnostics of the file,
;;   positions as published: in the encoding lsp-mode negotiated for the buffer);
;; - with `flymake-mode' on, what Flymake's other backends show, and with `flycheck-mode' on,
;;   what Flycheck's other checkers show, positions converted by lsp-mode (lsp-mode's own Flymake
;;   backend and `lsp' checker are left out: they show the servers' diagnostics again).
;; Severities are LSP's: 1 error, 2 warning, 3 Flymake's notes and Flycheck's infos.  It is sent
;; when lsp-mode's diagnostics change (`lsp-diagnostics-updated-hook', for every buffer the
;; bridge manages: lsp-mode's own Flymake backend updates only the current buffer), after a
;; Flycheck check (`flycheck-after-syntax-check-hook'), after a Flymake backend reports (Flymake
;; has no hook for that: an :after advice on `flymake--handle-report', which every backend's
;; report function calls), when Flymake or Flycheck is turned on or off, and once the bridge has
;; opened the file; at most every `acp-lsp-bridge-lsp-diagnostics-delay' seconds (0.5), and only
;; a list that differs from the one last sent.  Turn it off with
;; (setq acp-lsp-bridge-lsp-send-diagnostics nil): then only code actions carry diagnostics
;; (lsp-mode's, at point).

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

(defcustom acp-lsp-bridge-lsp-send-diagnostics t
  "Whether to tell the bridge which diagnostics the buffer shows.
When non-nil, in the buffers the bridge manages, the diagnostics
of the buffer's other language servers, and of Flymake's other
backends and Flycheck's other checkers, go to the bridge
\(acp-lsp-bridge/diagnostics) whenever they change, for agents
that ask for them; nil: only code actions carry diagnostics."
  :type 'boolean)

(defcustom acp-lsp-bridge-lsp-diagnostics-delay 0.5
  "Seconds to wait after the diagnostics change before sending them.
Changes in the meantime go with the same notification."
  :type 'number)

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

(defvar-local acp-lsp-bridge-lsp--diagnostics-sent nil
  "(WORKSPACE . DIAGNOSTICS): the list last sent for this buffer, and where.")

(defun acp-lsp-bridge-lsp--opened ()
  "After the bridge opened the buffer: keys, ghost text, and diagnostics soon."
  (when (and lsp--cur-workspace
             (eq (lsp--client-server-id (lsp--workspace-client lsp--cur-workspace))
                 'acp-lsp-bridge))
    (acp-lsp-bridge-lsp-mode 1)
    (when (acp-lsp-bridge-lsp--ghost-text-p)
      (lsp-inline-completion-mode 1))
    ;; The bridge has no diagnostics of a file it has just opened.
    (setq acp-lsp-bridge-lsp--diagnostics-sent nil)
    (acp-lsp-bridge-lsp--diagnostics-changed)))

(defun acp-lsp-bridge-lsp--closed ()
  "When lsp-mode leaves the buffer."
  (acp-lsp-bridge-lsp-mode -1))

;;; Diagnostics: acp-lsp-bridge/diagnostics

(declare-function lsp-notify "lsp-mode" (method params))
(declare-function lsp--fix-path-casing "lsp-mode" (path))
(declare-function lsp--point-to-position "lsp-mode" (point))
(declare-function lsp--workspace-diagnostics "lsp-mode" (workspace))
(declare-function lsp:diagnostic-range "lsp-protocol" (object))
(declare-function lsp:diagnostic-message "lsp-protocol" (object))
(declare-function lsp:diagnostic-severity? "lsp-protocol" (object))
(declare-function lsp:range-start "lsp-protocol" (object))
(declare-function lsp:range-end "lsp-protocol" (object))
(declare-function lsp:position-line "lsp-protocol" (object))
(declare-function lsp:position-character "lsp-protocol" (object))
(declare-function flymake-diagnostics "flymake" (&optional beg end))
(declare-function flymake-diagnostic-beg "flymake" (diag))
(declare-function flymake-diagnostic-end "flymake" (diag))
(declare-function flymake-diagnostic-type "flymake" (diag))
(declare-function flymake-diagnostic-text "flymake" (diag))
(declare-function flymake-diagnostic-backend "flymake" (diag))
(declare-function flycheck-error-buffer "ext:flycheck" (err))
(declare-function flycheck-error-checker "ext:flycheck" (err))
(declare-function flycheck-error-level "ext:flycheck" (err))
(declare-function flycheck-error-message "ext:flycheck" (err))
(declare-function flycheck-error-region-for-mode "ext:flycheck" (err mode))
(declare-function flycheck-error-level-compilation-level "ext:flycheck" (level))
(defvar flymake-mode)
(defvar flycheck-mode)
(defvar flycheck-current-errors)
(defvar flycheck-highlighting-mode)

(defvar acp-lsp-bridge-lsp--diagnostics-pending nil
  "The buffers whose diagnostics may have changed since they were last sent.
t: every buffer the bridge manages.")

(defvar acp-lsp-bridge-lsp--diagnostics-timer nil
  "The timer that sends the pending buffers' diagnostics, while one waits.")

(defun acp-lsp-bridge-lsp--bridge-workspace-p (workspace)
  "Whether lsp-mode WORKSPACE is the bridge's."
  (eq (lsp--client-server-id (lsp--workspace-client workspace)) 'acp-lsp-bridge))

(defun acp-lsp-bridge-lsp--region-diagnostic (beg end severity message)
  "A diagnostic from buffer positions BEG and END, as lsp-mode converts them.
SEVERITY is the LSP severity, MESSAGE the text."
  (list :range (list :start (lsp--point-to-position beg) :end (lsp--point-to-position end))
        :severity severity
        :message (substring-no-properties (or message ""))))

(defun acp-lsp-bridge-lsp--flymake-severity (type)
  "The LSP severity of Flymake diagnostic TYPE: 1 error, 2 warning, 3 note.
Told by TYPE's `flymake-category'; a type without one is an
error, as for Flymake."
  (pcase (or (get type 'flymake-category) type)
    ('flymake-warning 2)
    ('flymake-note 3)
    (_ 1)))

(defun acp-lsp-bridge-lsp--diagnostics ()
  "The diagnostics the current buffer shows, as LSP Diagnostics, sorted.
Those of the buffer's servers other than the bridge, then those
of Flymake's and Flycheck's other sources."
  (let ((file (and buffer-file-name (lsp--fix-path-casing buffer-file-name)))
        diags)
    ;; The other servers': lsp-mode keeps them as published (in its position encoding).
    (dolist (ws (lsp-workspaces))
      (unless (acp-lsp-bridge-lsp--bridge-workspace-p ws)
        (dolist (d (and file (gethash file (lsp--workspace-diagnostics ws))))
          (let* ((range (lsp:diagnostic-range d))
                 (start (lsp:range-start range))
                 (end (lsp:range-end range)))
            (push (list :range
                        (list :start (list :line (lsp:position-line start)
                                           :character (lsp:position-character start))
                              :end (list :line (lsp:position-line end)
                                         :character (lsp:position-character end)))
                        :severity (or (lsp:diagnostic-severity? d) 1)
                        :message (or (lsp:diagnostic-message d) ""))
                  diags)))))
    ;; Flymake's other backends (lsp-mode's shows the servers' diagnostics again).
    (when (bound-and-true-p flymake-mode)
      (dolist (d (flymake-diagnostics))
        (let ((beg (flymake-diagnostic-beg d))
              (end (flymake-diagnostic-end d)))
          (when (and (integerp beg) (integerp end)
                     (not (eq (flymake-diagnostic-backend d) 'lsp-diagnostics--flymake-backend)))
            (push (acp-lsp-bridge-lsp--region-diagnostic
                   beg end (acp-lsp-bridge-lsp--flymake-severity (flymake-diagnostic-type d))
                   (flymake-diagnostic-text d))
                  diags)))))
    ;; Flycheck's other checkers (lsp-mode's is `lsp').
    (when (and (bound-and-true-p flycheck-mode) (fboundp 'flycheck-error-region-for-mode))
      (dolist (err flycheck-current-errors)
        (unless (or (eq (flycheck-error-checker err) 'lsp)
                    (not (eq (flycheck-error-buffer err) (current-buffer))))
          (let ((region (ignore-errors
                          (flycheck-error-region-for-mode
                           err (or flycheck-highlighting-mode 'lines)))))
            (when region
              (push (acp-lsp-bridge-lsp--region-diagnostic
                     (car region) (cdr region)
                     (pcase (flycheck-error-level-compilation-level (flycheck-error-level err))
                       (2 1) (1 2) (_ 3))
                     (flycheck-error-message err))
                    diags))))))
    ;; Sorted, an unchanged list compares equal.
    (sort diags #'acp-lsp-bridge-lsp--diagnostic<)))

(defun acp-lsp-bridge-lsp--diagnostic< (a b)
  "Whether diagnostic A comes before B: by range, then message."
  (let ((ka (acp-lsp-bridge-lsp--diagnostic-key a))
        (kb (acp-lsp-bridge-lsp--diagnostic-key b)))
    (while (and ka (equal (car ka) (car kb)))
      (setq ka (cdr ka) kb (cdr kb)))
    (and ka (if (stringp (car ka)) (string< (car ka) (car kb)) (< (car ka) (car kb))))))

(defun acp-lsp-bridge-lsp--diagnostic-key (d)
  "What diagnostic D is sorted by: start line and character, end, message."
  (let* ((range (plist-get d :range))
         (start (plist-get range :start))
         (end (plist-get range :end)))
    (list (plist-get start :line) (plist-get start :character)
          (plist-get end :line) (plist-get end :character)
          (plist-get d :message))))

(defun acp-lsp-bridge-lsp--send-diagnostics ()
  "Send the current buffer's diagnostics to the bridge, unless it has them."
  (when-let* (((and acp-lsp-bridge-lsp-send-diagnostics acp-lsp-bridge-lsp-mode))
              (ws (cl-find-if #'acp-lsp-bridge-lsp--bridge-workspace-p (lsp-workspaces))))
    (let ((diags (acp-lsp-bridge-lsp--diagnostics))
          ;; What the bridge has: nothing, for a workspace that got none from this buffer.
          (known (and (eq (car acp-lsp-bridge-lsp--diagnostics-sent) ws)
                      (cdr acp-lsp-bridge-lsp--diagnostics-sent))))
      (unless (equal diags known)
        (with-lsp-workspace ws
          (when (fboundp 'lsp--flush-delayed-changes)
            ;; Pending changes first, so that positions refer to the text the bridge has.
            (lsp--flush-delayed-changes))
          (lsp-notify "acp-lsp-bridge/diagnostics"
                      (list :textDocument (list :uri (lsp--buffer-uri))
                            :diagnostics (vconcat diags))))
        (setq acp-lsp-bridge-lsp--diagnostics-sent (cons ws diags))))))

(defun acp-lsp-bridge-lsp--send-pending-diagnostics ()
  "Send the diagnostics of the buffers whose diagnostics may have changed."
  (setq acp-lsp-bridge-lsp--diagnostics-timer nil)
  (let ((buffers (if (eq acp-lsp-bridge-lsp--diagnostics-pending t)
                     (buffer-list)
                   (reverse acp-lsp-bridge-lsp--diagnostics-pending))))
    (setq acp-lsp-bridge-lsp--diagnostics-pending nil)
    (dolist (buf buffers)
      (when (and (buffer-live-p buf) (buffer-local-value 'acp-lsp-bridge-lsp-mode buf))
        (with-current-buffer buf
          (with-demoted-errors "acp-lsp-bridge: diagnostics: %S"
            (acp-lsp-bridge-lsp--send-diagnostics)))))))

(defun acp-lsp-bridge-lsp--diagnostics-changed (&optional all)
  "Send the current buffer's diagnostics soon, when the bridge manages it.
With ALL non-nil, those of every buffer it manages.  After
`acp-lsp-bridge-lsp-diagnostics-delay' seconds, with the changes
made meanwhile, so at most that often."
  (when (and acp-lsp-bridge-lsp-send-diagnostics (or all acp-lsp-bridge-lsp-mode))
    (cond (all (setq acp-lsp-bridge-lsp--diagnostics-pending t))
          ((listp acp-lsp-bridge-lsp--diagnostics-pending)
           (cl-pushnew (current-buffer) acp-lsp-bridge-lsp--diagnostics-pending)))
    (unless acp-lsp-bridge-lsp--diagnostics-timer
      (setq acp-lsp-bridge-lsp--diagnostics-timer
            (run-at-time acp-lsp-bridge-lsp-diagnostics-delay nil
                         #'acp-lsp-bridge-lsp--send-pending-diagnostics)))))

(defun acp-lsp-bridge-lsp--lsp-diagnostics-updated ()
  "For `lsp-diagnostics-updated-hook', which does not say which file changed."
  (acp-lsp-bridge-lsp--diagnostics-changed t))

(defun acp-lsp-bridge-lsp--buffer-diagnostics-changed (&rest _)
  "For Flymake's reports and Flycheck's checks, run in the buffer concerned."
  (acp-lsp-bridge-lsp--diagnostics-changed))

(add-hook 'lsp-after-open-hook #'acp-lsp-bridge-lsp--opened)
(add-hook 'lsp-unconfigure-hook #'acp-lsp-bridge-lsp--closed)
(add-hook 'lsp-diagnostics-updated-hook #'acp-lsp-bridge-lsp--lsp-diagnostics-updated)
(add-hook 'flycheck-after-syntax-check-hook #'acp-lsp-bridge-lsp--buffer-diagnostics-changed)
(add-hook 'flycheck-mode-hook #'acp-lsp-bridge-lsp--buffer-diagnostics-changed)
(add-hook 'flymake-mode-hook #'acp-lsp-bridge-lsp--buffer-diagnostics-changed)
;; Flymake runs no hook when a backend reports: every backend's report function calls
;; `flymake--handle-report' in the buffer reported on.
(advice-add 'flymake--handle-report :after #'acp-lsp-bridge-lsp--buffer-diagnostics-changed)

(defun acp-lsp-bridge-lsp-mode-unload-function ()
  "Remove the advice on Flymake and the timer, for `unload-feature'."
  (advice-remove 'flymake--handle-report #'acp-lsp-bridge-lsp--buffer-diagnostics-changed)
  (when (timerp acp-lsp-bridge-lsp--diagnostics-timer)
    (cancel-timer acp-lsp-bridge-lsp--diagnostics-timer))
  nil)

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
