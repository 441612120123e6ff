;;; shipped.el --- the shipped Eglot configuration: start, focus, keys  -*- lexical-binding: t -*-

;; Loads editors/emacs/acp-lsp-bridge-eglot.el as a user does (after byte-compiling it into a
;; scratch directory, which must give no warning), sets its variables, and uses it against
;; acp-lsp-bridge and acp-test-agent (--focus, rules for two files):
;;
;;  1. `eglot-ensure' in text-mode-hook starts the bridge for a.txt, once the command that
;;     visited it ends (post-command-hook, run by the script: batch mode has no command loop);
;;     b.txt joins the same server.
;;  2. Focus: the selected window shows a.txt again with the cursor at line 2, column 3; the
;;     configuration's window-change function (run as redisplay runs it: batch mode does not
;;     redisplay) sends acp-lsp-bridge/didFocus, and the agent gets document/didFocus there.
;;  3. C-c n n (acp-lsp-bridge.suggest): the bridge asks Apply/Dismiss in the minibuffer (the
;;     script answers Apply); the edit is applied and the agent hears nes/accept.
;;  4. C-c n k (acp-lsp-bridge.reject) after a code-action request made b.txt's suggestion live:
;;     the agent hears nes/reject "rejected", b.txt is unchanged.
;;  4b. C-c n t (acp-lsp-bridge.toggle): "off for b.txt", and the mode line's lighter says NES:off;
;;      C-u C-c n t: "off for every file".
;;  5. C-c n s (acp-lsp-bridge.signIn): the bridge says there is nothing to sign in to.
;;  6. C-c n r (acp-lsp-bridge.restart): a second agent process gets initialize and both files.
;;
;; Environment: ACP_EMACS_CONFIG, ACP_LSP_BRIDGE, ACP_TEST_AGENT, EMACS_TEST_DIR (the project),
;; EMACS_TEST_SCRATCH (for the .elc), EMACS_TEST_RULES, EMACS_TEST_BRIDGE_LOG,
;; EMACS_TEST_AGENT_LOG, EMACS_TEST_RESULT (JSON written on success: {accepted, rejected}).
;; "PASS" and exit code 0, or "FAIL: ..." and exit code 1 (2 from the watchdog).

(load (expand-file-name "lib.el" (file-name-directory load-file-name)) nil t)
(require 'bytecomp)

(defun acp-test--messages (agent-log method &optional pred)
  "The params of the messages METHOD the agent received, for which PRED holds."
  (delq nil (mapcar (lambda (m)
                      (let ((params (plist-get m :params)))
                        (and (equal (plist-get m :method) method)
                             (or (null pred) (funcall pred params))
                             (or params t))))
                    (acp-test--agent-messages agent-log))))

(defun acp-test--lighter (mode)
  "MODE's lighter in the current buffer, as the mode line shows it; nil when MODE is off."
  (let ((entry (cadr (assq mode minor-mode-alist))))
    (and (symbol-value mode)
         (substring-no-properties
          (if (eq (car-safe entry) :eval) (eval (cadr entry) t) (format "%s" entry))))))

(defun acp-test--said (text)
  "Whether *Messages* holds TEXT."
  (with-current-buffer "*Messages*"
    (save-excursion
      (goto-char (point-min))
      (search-forward text nil t))))

(defun acp-test--uri (buf)
  (with-current-buffer buf (plist-get (eglot--TextDocumentIdentifier) :uri)))

(defun acp-test--goto (line column)
  "Go to LINE (1-based) and COLUMN (0-based) in the selected window's buffer."
  (goto-char (point-min))
  (forward-line (1- line))
  (forward-char column))

(defun acp-test--redisplayed ()
  "Run the window-change functions as redisplay would after a buffer switch."
  (run-hook-with-args 'window-buffer-change-functions (selected-frame)))

(defun acp-test--run ()
  (acp-test--check (>= emacs-major-version 30) "Emacs %s; the test needs Emacs 30" emacs-version)
  (let* ((config (expand-file-name (acp-test--env "ACP_EMACS_CONFIG")))
         (bridge (acp-test--env "ACP_LSP_BRIDGE"))
         (agent (acp-test--env "ACP_TEST_AGENT"))
         (dir (file-name-as-directory (expand-file-name (acp-test--env "EMACS_TEST_DIR"))))
         (scratch (file-name-as-directory (expand-file-name (acp-test--env "EMACS_TEST_SCRATCH"))))
         (rules (acp-test--env "EMACS_TEST_RULES"))
         (bridge-log (acp-test--env "EMACS_TEST_BRIDGE_LOG"))
         (agent-log (acp-test--env "EMACS_TEST_AGENT_LOG"))
         (result-file (acp-test--env "EMACS_TEST_RESULT"))
         (a-text "alpha\nx := old(1)\nomega\n")
         (a-expected "alpha\nx := new(1)\nomega\n")
         (b-text "one\nkeep(2)\nthree\n")
         a b server accepted rejected)
    ;; 0. The configuration byte-compiles without a warning (into the scratch directory).
    (let ((byte-compile-dest-file-function
           (lambda (_) (expand-file-name "acp-lsp-bridge-eglot.elc" scratch)))
          (byte-compile-error-on-warn t))
      (acp-test--check (byte-compile-file config)
                       "byte-compiling %s failed or warned (messages above)" config))

    ;; The user's configuration: the shipped file (its source, as the README says), settings,
    ;; and Eglot started by `eglot-ensure'.
    (load config nil t)
    (message "Emacs %s, Eglot %s" emacs-version (acp-test--library-version "eglot"))
    (setq acp-lsp-bridge-program bridge
          acp-lsp-bridge-args (list "--log-file" bridge-log "--log-level" "debug")
          acp-lsp-bridge-agent (list agent "--encoding" "utf-32" "--focus" "--rules" rules
                                     "--log" agent-log))
    (add-hook 'text-mode-hook #'eglot-ensure)
    (setq project-find-functions nil
          eglot-sync-connect t
          eglot-connect-timeout 20
          eglot-autoreconnect nil)
    (let ((coding-system-for-write 'utf-8-unix))
      (write-region a-text nil (expand-file-name "a.txt" dir) nil 'silent)
      (write-region b-text nil (expand-file-name "b.txt" dir) nil 'silent))

    ;; 1. C-x C-f a.txt: eglot-ensure connects when the command ends.
    (setq a (find-file (expand-file-name "a.txt" dir)))
    (run-hooks 'post-command-hook)
    (setq server (eglot-current-server)
          acp-test--server server)
    (acp-test--check (and server (eq (eieio-object-class server) 'acp-lsp-bridge-eglot-server)
                          (jsonrpc-running-p server))
                     "eglot-ensure did not start the configuration's server: %S" server)
    (acp-test--check (and (eglot-managed-p) acp-lsp-bridge-eglot-mode)
                     "a.txt: managed %S, key map %S" (eglot-managed-p) acp-lsp-bridge-eglot-mode)
    (setq b (find-file (expand-file-name "b.txt" dir)))
    (run-hooks 'post-command-hook)
    (acp-test--redisplayed)
    (acp-test--check (and (eq (eglot-current-server) server) acp-lsp-bridge-eglot-mode)
                     "b.txt: server %S (want the one of a.txt), key map %S"
                     (eglot-current-server) acp-lsp-bridge-eglot-mode)
    (acp-test--wait-for (lambda () (>= (length (acp-test--messages agent-log "document/didOpen")) 2))
                        "the agent's document/didOpen of both files" 10)

    ;; 2. Back to a.txt, cursor at line 2, column 3: the configuration tells the bridge.
    (switch-to-buffer a)
    (acp-test--goto 2 3)
    (acp-test--redisplayed)
    (let ((uri (acp-test--uri a)))
      (acp-test--wait-for
       (lambda ()
         (acp-test--messages agent-log "document/didFocus"
                             (lambda (p) (and (equal (plist-get p :uri) uri)
                                              (equal (plist-get (plist-get p :position) :line) 1)
                                              (equal (plist-get (plist-get p :position) :character)
                                                     3)))))
       "the agent's document/didFocus for a.txt at line 1, character 3" 10))

    ;; 3. C-c n n: ask now; Apply.
    (acp-test--check (eq (key-binding (kbd "C-c n n")) #'acp-lsp-bridge-eglot-suggest)
                     "C-c n n runs %S" (key-binding (kbd "C-c n n")))
    (let (question)
      (cl-letf (((symbol-function 'completing-read)
                 (lambda (prompt collection &rest _)
                   (message "%s %S" prompt collection)
                   (setq question prompt)
                   (acp-test--check (member "Apply" collection) "no Apply in %S" collection)
                   "Apply")))
        (acp-test--press "C-c n n")
        (acp-test--wait-for (lambda () (equal (with-current-buffer a (buffer-string)) a-expected))
                            "a.txt to read as the suggestion proposed" 15))
      (acp-test--check (string-match-p "Next edit: `old` → `new`" question)
                       "the question was %S" question))
    (acp-test--check (acp-test--messages agent-log "nes/suggest"
                                         (lambda (p) (equal (plist-get p :triggerKind) "manual")))
                     "no nes/suggest with triggerKind manual")
    (setq accepted (plist-get (car (acp-test--wait-for
                                    (lambda () (acp-test--messages agent-log "nes/accept"))
                                    "nes/accept after Apply" 10))
                              :id))

    ;; 4. b.txt: a code-action request makes its suggestion live; C-c n k dismisses it.
    (switch-to-buffer b)
    (acp-test--goto 2 4)
    (acp-test--redisplayed)
    (let* ((actions (eglot-code-actions (point) (point)))
           (next (cl-find-if (lambda (act) (string-prefix-p "Next edit: " (plist-get act :title)))
                             actions)))
      (acp-test--check next "no \"Next edit: \" code action for b.txt: %S" actions)
      (setq rejected (aref (plist-get (plist-get next :command) :arguments) 0)))
    (acp-test--press "C-c n k")
    (acp-test--wait-for (lambda ()
                          (acp-test--messages agent-log "nes/reject"
                                              (lambda (p) (and (equal (plist-get p :id) rejected)
                                                               (equal (plist-get p :reason) "rejected")))))
                        (format "nes/reject %s \"rejected\"" rejected) 10)
    (acp-test--check (equal (buffer-string) b-text) "b.txt changed: %S" (buffer-string))

    ;; 4b. C-c n t: suggestions while typing off for b.txt; C-u C-c n t: the other way for every
    ;; file. Each says what is now in force.
    (acp-test--press "C-c n t")
    (acp-test--wait-for (lambda () (acp-test--said "suggestions while typing are off for b.txt"))
                        "the message after C-c n t" 10)
    ;; The mode line's lighter follows the bridge's acp-lsp-bridge/status. Batch mode draws no
    ;; mode line (format-mode-line gives ""), so the lighter's construct in `minor-mode-alist' is
    ;; evaluated as the mode line would.
    (acp-test--wait-for (lambda () (equal (acp-test--lighter 'acp-lsp-bridge-eglot-mode) " NES:off"))
                        (format "NES:off as the mode's lighter, which is %S"
                                (acp-test--lighter 'acp-lsp-bridge-eglot-mode))
                        10)
    (acp-test--press "C-u C-c n t")
    (acp-test--wait-for (lambda () (acp-test--said "suggestions while typing are off for every file"))
                        "the message after C-u C-c n t" 10)

    ;; 5. C-c n s: nothing to sign in to, says the bridge.
    (acp-test--press "C-c n s")
    (acp-test--wait-for (lambda ()
                          (with-current-buffer (jsonrpc-events-buffer server)
                            (save-excursion
                              (goto-char (point-min))
                              (search-forward "nothing to sign in to" nil t))))
                        "the bridge's answer to acp-lsp-bridge.signIn" 10)

    ;; 6. C-c n r: the agent is started again and gets both files.
    (acp-test--press "C-c n r")
    (acp-test--wait-for (lambda ()
                          (and (= (length (acp-test--messages agent-log "initialize")) 2)
                               (>= (length (acp-test--messages agent-log "document/didOpen")) 4)))
                        "a second agent process with both files" 15)

    (let ((coding-system-for-write 'utf-8-unix))
      (with-temp-file result-file
        (insert (json-serialize (list :accepted accepted :rejected rejected)))))
    (eglot-shutdown server)
    (setq acp-test--server nil)
    (message "PASS accepted %s, rejected %s" accepted rejected)))

(run-with-timer 45 nil (lambda ()
                         (message "FAIL: watchdog: the script did not finish within 45 s")
                         (acp-test--dump)
                         (kill-emacs 2)))

(condition-case err
    (acp-test--run)
  (error (acp-test--fail "error: %s" (error-message-string err))))
(kill-emacs 0)

;;; shipped.el ends here
