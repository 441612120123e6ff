;;; eglot-diagnostics.el --- the shipped Eglot configuration sends Flymake's diagnostics  -*- lexical-binding: t -*-

;; Loads editors/emacs/acp-lsp-bridge-eglot.el as a user does, against acp-lsp-bridge and
;; acp-test-agent (--context '{"diagnostics":{}}', so that the bridge passes diagnostics on):
;;
;;  1. A tiny Flymake backend of the user's (added back in `eglot-managed-mode-hook', as the
;;     file's header says) reports an error on line 2 and a warning on line 1 of main.txt, both
;;     after non-ASCII text.
;;  2. Flymake runs it; the configuration sends acp-lsp-bridge/diagnostics once (the script
;;     records what went out through `jsonrpc-notify').  Flymake running the backend again, with
;;     the same result, sends nothing more.  With EMACS_TEST_SEND=0 (the option off), nothing
;;     is sent at all.
;;  3. C-c n n asks the agent (acp-lsp-bridge.suggest); the script waits for the agent's
;;     nes/suggest.  What it carries in context.diagnostics is checked by
;;     e2e/emacs_diagnostics_test.go, from the agent's log.
;;
;; Environment: ACP_EMACS_CONFIG, ACP_LSP_BRIDGE, ACP_TEST_AGENT, EMACS_TEST_DIR (the project),
;; EMACS_TEST_SCENARIO (JSON: text, errorFrom, errorTo, errorMessage, warningFrom, warningTo,
;; warningMessage: the diagnostics span from the first occurrence of From to the end of the
;; first occurrence of To after it), EMACS_TEST_SEND ("1" or "0"), EMACS_TEST_BRIDGE_LOG,
;; EMACS_TEST_AGENT_LOG, EMACS_TEST_RESULT (JSON written on success: {sent, uri, encoding}).
;; "PASS" and exit code 0, or "FAIL: ..." and exit code 1 (2 from the watchdog).

(load (expand-file-name "lib.el" (file-name-directory load-file-name)) nil t)
(run-at-time 50 nil (lambda () (message "FAIL: watchdog: the script did not finish in 50 s")
                      (acp-test--dump) (kill-emacs 2)))

(defvar acp-test--scenario nil "The scenario, a plist.")
(defvar acp-test--sent nil "The params of each acp-lsp-bridge/diagnostics sent, newest first.")
(defvar acp-test--reports 0 "How many times the test backend reported.")

(defun acp-test--span (from to)
  "The region from the first FROM to the end of the first TO after it."
  (save-excursion
    (goto-char (point-min))
    (let ((beg (progn (search-forward from) (match-beginning 0))))
      (goto-char beg)
      (search-forward to)
      (cons beg (point)))))

(defun acp-test--backend (report-fn &rest _)
  "A Flymake backend of the user's: an error and a warning, from the scenario."
  (let ((err (acp-test--span (plist-get acp-test--scenario :errorFrom)
                             (plist-get acp-test--scenario :errorTo)))
        (warn (acp-test--span (plist-get acp-test--scenario :warningFrom)
                              (plist-get acp-test--scenario :warningTo))))
    (cl-incf acp-test--reports)
    (funcall report-fn
             (list (flymake-make-diagnostic (current-buffer) (car err) (cdr err) :error
                                            (plist-get acp-test--scenario :errorMessage))
                   (flymake-make-diagnostic (current-buffer) (car warn) (cdr warn) :warning
                                            (plist-get acp-test--scenario :warningMessage))))))

(defun acp-test--keep-backend ()
  "What the file's header suggests: the user's backend beside Eglot's."
  (when (eglot-managed-p)
    (add-hook 'flymake-diagnostic-functions #'acp-test--backend nil t)))

(defun acp-test--record (_server method &optional params)
  (when (eq method :acp-lsp-bridge/diagnostics)
    (push params acp-test--sent)))

(defun acp-test--run ()
  (acp-test--check (>= emacs-major-version 30) "Emacs %s; the test needs Emacs 30" emacs-version)
  (let* ((config (expand-file-name (acp-test--env "ACP_EMACS_CONFIG")))
         (dir (file-name-as-directory (expand-file-name (acp-test--env "EMACS_TEST_DIR"))))
         (agent-log (acp-test--env "EMACS_TEST_AGENT_LOG"))
         (send (equal (acp-test--env "EMACS_TEST_SEND") "1"))
         (file (expand-file-name "main.txt" dir))
         server)
    (setq acp-test--scenario (acp-test--read-json (acp-test--env "EMACS_TEST_SCENARIO")))
    (load config nil t)
    (setq acp-lsp-bridge-program (acp-test--env "ACP_LSP_BRIDGE")
          acp-lsp-bridge-args (list "--log-file" (acp-test--env "EMACS_TEST_BRIDGE_LOG")
                                    "--log-level" "debug")
          acp-lsp-bridge-agent (list (acp-test--env "ACP_TEST_AGENT") "--encoding" "utf-16"
                                     "--context" "{\"diagnostics\":{}}" "--log" agent-log)
          acp-lsp-bridge-eglot-send-diagnostics send)
    (add-hook 'eglot-managed-mode-hook #'acp-test--keep-backend)
    (advice-add 'jsonrpc-notify :before #'acp-test--record)
    (add-hook 'text-mode-hook #'eglot-ensure)
    ;; Flymake runs the backends when the script says, not when Eglot turns it on.
    (setq flymake-start-on-flymake-mode nil)
    (setq project-find-functions nil
          eglot-sync-connect t
          eglot-connect-timeout 20
          eglot-autoreconnect nil)
    (let ((coding-system-for-write 'utf-8-unix))
      (write-region (plist-get acp-test--scenario :text) nil file nil 'silent))

    ;; 1. C-x C-f main.txt: eglot-ensure connects when the command ends.
    (let ((coding-system-for-read 'utf-8-unix))
      (find-file file))
    (run-hooks 'post-command-hook)
    (setq server (eglot-current-server)
          acp-test--server server)
    (acp-test--check (and server acp-lsp-bridge-eglot-mode)
                     "eglot-ensure did not start the bridge: %S" server)
    (acp-test--check (memq #'acp-test--backend flymake-diagnostic-functions)
                     "the user's backend is not among %S" flymake-diagnostic-functions)
    (acp-test--wait-for (lambda () (acp-test--agent-messages agent-log)) "the agent to start" 10)

    ;; Nothing goes out before Flymake has diagnostics.
    (let ((until (+ (float-time) (* 3 acp-lsp-bridge-eglot-diagnostics-delay))))
      (while (< (float-time) until) (accept-process-output nil 0.05)))
    (acp-test--check (and (= acp-test--reports 0) (null acp-test--sent))
                     "before Flymake ran: %d reports, sent %S" acp-test--reports acp-test--sent)

    ;; 2. Flymake runs the backends (as it would once the buffer is shown or changed).
    (flymake-start)
    (acp-test--wait-for (lambda () (> acp-test--reports 0)) "Flymake to run the backend" 10)
    (acp-test--check (= (length (flymake-diagnostics)) 2)
                     "Flymake shows %S" (flymake-diagnostics))
    (if send
        (acp-test--wait-for (lambda () acp-test--sent) "acp-lsp-bridge/diagnostics" 10)
      (let ((until (+ (float-time) 1.5)))
        (while (< (float-time) until) (accept-process-output nil 0.05))))
    (message "sent after the first report: %S" acp-test--sent)
    ;; The same diagnostics again: nothing more goes out.
    (let ((before acp-test--reports))
      (flymake-start)
      (acp-test--wait-for (lambda () (> acp-test--reports before)) "Flymake to run it again" 10))
    (let ((until (+ (float-time) (* 3 acp-lsp-bridge-eglot-diagnostics-delay))))
      (while (< (float-time) until) (accept-process-output nil 0.05)))
    (acp-test--check (= (length acp-test--sent) (if send 1 0))
                     "sent acp-lsp-bridge/diagnostics %d times, want %d: %S"
                     (length acp-test--sent) (if send 1 0) acp-test--sent)

    ;; 3. C-c n n on line 3, away from the diagnostics; the agent has no suggestion.
    (goto-char (point-min))
    (forward-line 2)
    (cl-letf (((symbol-function 'completing-read)
               (lambda (prompt collection &rest _)
                 (acp-test--fail "unexpected question %S %S" prompt collection))))
      (acp-test--press "C-c n n")
      (acp-test--wait-for
       (lambda () (cl-find "nes/suggest" (acp-test--agent-messages agent-log)
                           :key (lambda (m) (plist-get m :method)) :test #'equal))
       "the agent's nes/suggest" 15))
    (let ((result (json-serialize
                   (list :sent (length acp-test--sent)
                         :uri (plist-get (eglot--TextDocumentIdentifier) :uri)
                         :encoding (plist-get (eglot--capabilities server) :positionEncoding)
                         :last (or (car acp-test--sent) :null)))))
      (let ((coding-system-for-write 'utf-8-unix))
        (with-temp-file (acp-test--env "EMACS_TEST_RESULT")
          (insert result))))
    (eglot-shutdown server nil 5 t)
    (message "PASS")))

(condition-case err
    (acp-test--run)
  (error (acp-test--fail "error: %s" (error-message-string err))))
(kill-emacs 0)

;;; eglot-diagnostics.el ends here
