;;; lsp-mode-diagnostics.el --- the shipped lsp-mode configuration sends the buffer's diagnostics  -*- lexical-binding: t -*-

;; Emacs 30 in batch mode with the real lsp-mode 10 and the shipped
;; editors/emacs/acp-lsp-bridge-lsp-mode.el (lsp-mode-setup.el), the bridge beside the buffer's own
;; server, acp-test-lsp; the agent asks for the diagnostics context (--context
;; '{"diagnostics":{}}'):
;;
;;  1. lsp-mode shows diagnostics with Flymake (its default without Flycheck).  A tiny Flymake
;;     backend of the user's reports an error on line 2 of main.txt, after non-ASCII text; the
;;     configuration sends it.
;;  2. The buffer's own server publishes a warning on line 3 (textDocument/publishDiagnostics,
;;     handed to lsp-mode's message handler as if acp-test-lsp had sent it, while another buffer
;;     is current, so that only `lsp-diagnostics-updated-hook' tells; acp-test-lsp publishes
;;     none itself); the configuration sends both.
;;  3. The same diagnostics again send nothing more: Flymake runs the backends again, and
;;     lsp-mode's hook runs in main.txt, where lsp-mode's Flymake backend then shows the warning
;;     too (the configuration leaves lsp-mode's Flymake diagnostics out: they are the servers').
;;     Everything sent went to the bridge only (the script records what lsp-mode sends to which
;;     server).  With EMACS_TEST_SEND=0 (the option off), nothing is sent at all.
;;  4. C-c n n asks the agent (acp-lsp-bridge.suggest); the script waits for the agent's
;;     nes/suggest.  What it carries in context.diagnostics is checked by
;;     e2e/emacs_diagnostics_test.go, from the agent's log.
;;
;; Environment: as lsp-mode-setup.el says, and EMACS_TEST_SCENARIO (JSON: text, errorFrom,
;; errorTo, errorMessage, warningFrom, warningTo, warningMessage: each diagnostic spans from the
;; first occurrence of From to the end of the first occurrence of To after it), EMACS_TEST_SEND
;; ("1" or "0"), EMACS_TEST_RESULT (JSON written on success: {sent, uri, last}).  "PASS" and
;; exit code 0, or "FAIL: ..." and exit code 1; a 50 s watchdog exits 2.

(load (expand-file-name "lib.el" (file-name-directory load-file-name)) nil t)
(run-at-time 50 nil (lambda () (message "FAIL: watchdog: the script did not finish in 50 s")
                      (acp-test--dump) (kill-emacs 2)))

(load (expand-file-name "lsp-mode-setup.el" (file-name-directory load-file-name)) nil t)

(defvar acp-test--scenario nil "The scenario, a plist.")
(defvar acp-test--sent nil
  "Each acp-lsp-bridge/diagnostics sent, newest first: (SERVER-IDS . PARAMS).")
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
  "A Flymake backend of the user's: an error, from the scenario."
  (let ((err (acp-test--span (plist-get acp-test--scenario :errorFrom)
                             (plist-get acp-test--scenario :errorTo))))
    (cl-incf acp-test--reports)
    (funcall report-fn
             (list (flymake-make-diagnostic (current-buffer) (car err) (cdr err) :error
                                            (plist-get acp-test--scenario :errorMessage))))))

(defun acp-test--record (body)
  "Record the acp-lsp-bridge/diagnostics in BODY, with the servers it goes to."
  (when (equal (plist-get body :method) "acp-lsp-bridge/diagnostics")
    (push (cons (mapcar (lambda (ws) (lsp--client-server-id (lsp--workspace-client ws)))
                        (lsp-workspaces))
                (plist-get body :params))
          acp-test--sent)))

(defun acp-test--workspaces ()
  "The buffer's lsp-mode workspaces, by server id."
  (mapcar (lambda (ws) (cons (lsp--client-server-id (lsp--workspace-client ws)) ws))
          (lsp-workspaces)))

(defun acp-test--idle (seconds)
  (let ((until (+ (float-time) seconds)))
    (while (< (float-time) until) (accept-process-output nil 0.05))))

(defun acp-test--run ()
  (let* ((agent-log (acp-test--env "EMACS_TEST_AGENT_LOG"))
         (send (equal (acp-test--env "EMACS_TEST_SEND") "1"))
         (file (expand-file-name "main.txt" acp-test--dir))
         main)
    (setq acp-test--scenario (acp-test--read-json (acp-test--env "EMACS_TEST_SCENARIO")))
    (setq acp-lsp-bridge-agent (append acp-lsp-bridge-agent
                                       (list "--context" "{\"diagnostics\":{}}"))
          acp-lsp-bridge-lsp-send-diagnostics send)
    (advice-add 'lsp--send-notification :before #'acp-test--record)
    ;; Flymake runs the backends when the script says, not when lsp-mode turns it on.
    (setq flymake-start-on-flymake-mode nil)
    (let ((coding-system-for-write 'utf-8-unix))
      (write-region (plist-get acp-test--scenario :text) nil file nil 'silent))
    (let ((coding-system-for-read 'utf-8-unix))
      (find-file file))
    (text-mode)
    (lsp)
    (acp-test--wait-for
     (lambda ()
       (let ((ws (acp-test--workspaces)))
         (and (assq 'acp-lsp-bridge ws) (assq 'acp-test-main ws)
              (cl-every (lambda (w) (eq (lsp--workspace-status (cdr w)) 'initialized)) ws))))
     "lsp-mode to start both servers" 20)
    (acp-test--wait-for (lambda () acp-lsp-bridge-lsp-mode) "the bridge to open main.txt" 10)
    (acp-test--check (bound-and-true-p flymake-mode)
                     "lsp-mode did not turn on Flymake (lsp-diagnostics-provider %S)"
                     lsp-diagnostics-provider)
    (setq main (cdr (assq 'acp-test-main (acp-test--workspaces))))

    ;; Nothing goes out before there are diagnostics.
    (acp-test--idle (* 3 acp-lsp-bridge-lsp-diagnostics-delay))
    (acp-test--check (null acp-test--sent) "sent before there were diagnostics: %S" acp-test--sent)

    ;; 1. The user's Flymake backend, beside lsp-mode's.
    (add-hook 'flymake-diagnostic-functions #'acp-test--backend nil t)
    (flymake-start)
    (acp-test--wait-for (lambda () (> acp-test--reports 0)) "Flymake to run the backend" 10)
    (if send
        (acp-test--wait-for (lambda () acp-test--sent) "acp-lsp-bridge/diagnostics with the error" 10)
      (acp-test--idle 1.5))
    (acp-test--check (equal (mapcar (lambda (s) (length (plist-get (cdr s) :diagnostics)))
                                    acp-test--sent)
                            (if send '(1) nil))
                     "after the backend's report, sent %S" acp-test--sent)

    ;; 2. The buffer's own server publishes a warning, in lsp-mode's position encoding.
    (let* ((warn (acp-test--span (plist-get acp-test--scenario :warningFrom)
                                 (plist-get acp-test--scenario :warningTo)))
           (msg (json-serialize
                 (list :jsonrpc "2.0" :method "textDocument/publishDiagnostics"
                       :params (list :uri (lsp--buffer-uri)
                                     :diagnostics
                                     (vector
                                      (list :range (list :start (lsp--point-to-position (car warn))
                                                         :end (lsp--point-to-position (cdr warn)))
                                            :severity 2 :source "acp-test-main"
                                            :message (plist-get acp-test--scenario
                                                                :warningMessage))))))))
      ;; While the user is in another buffer: lsp-mode's Flymake backend updates only the
      ;; buffer current when diagnostics arrive, so only `lsp-diagnostics-updated-hook' tells.
      (with-current-buffer (get-buffer-create "*scratch*")
        (lsp--parser-on-message (lsp--read-json msg) main)))
    (if send
        (acp-test--wait-for (lambda () (= (length (plist-get (cdar acp-test--sent) :diagnostics)) 2))
                            "acp-lsp-bridge/diagnostics with both diagnostics" 10)
      (acp-test--idle 1.5))
    (message "sent: %S" acp-test--sent)
    ;; The same diagnostics again: nothing more goes out.  lsp-mode's hook, run in main.txt,
    ;; also makes its Flymake backend show the server's warning there: not a new diagnostic.
    (let ((sent (length acp-test--sent))
          (before acp-test--reports))
      (flymake-start)
      (acp-test--wait-for (lambda () (> acp-test--reports before)) "Flymake to run it again" 10)
      (run-hooks 'lsp-diagnostics-updated-hook)
      (acp-test--wait-for (lambda () (= (length (flymake-diagnostics)) 2))
                          "Flymake to show the error and lsp-mode's warning" 10)
      (acp-test--idle (* 3 acp-lsp-bridge-lsp-diagnostics-delay))
      (acp-test--check (= (length acp-test--sent) sent)
                       "the same diagnostics were sent again: %S" acp-test--sent))
    (acp-test--check (if send acp-test--sent (null acp-test--sent))
                     "sent %S with the option %s" acp-test--sent send)
    (dolist (s acp-test--sent)
      (acp-test--check (equal (car s) '(acp-lsp-bridge))
                       "acp-lsp-bridge/diagnostics went to %S, not the bridge alone" (car s)))

    ;; 4. C-c n n on line 4, away from the diagnostics; the agent has no suggestion.
    (goto-char (point-min))
    (forward-line 3)
    (cl-letf (((symbol-function 'completing-read)
               (lambda (prompt collection &rest _)
                 (acp-test--fail "unexpected question %S %S" prompt collection))))
      (acp-test--press "C-c n n")
      (acp-test--wait-for
       (lambda () (cl-find "nes/suggest" (acp-test--agent-messages agent-log)
                           :key (lambda (m) (plist-get m :method)) :test #'equal))
       "the agent's nes/suggest" 15))
    (let ((result (json-serialize (list :sent (length acp-test--sent)
                                        :uri (lsp--buffer-uri)
                                        :last (or (cdar acp-test--sent) :null)))))
      (let ((coding-system-for-write 'utf-8-unix))
        (with-temp-file (acp-test--env "EMACS_TEST_RESULT")
          (insert result))))
    (set-buffer-modified-p nil)
    (let ((procs (mapcar (lambda (w) (lsp--workspace-proc (cdr w))) (acp-test--workspaces))))
      (dolist (w (acp-test--workspaces))
        (lsp-workspace-shutdown (cdr w)))
      (acp-test--wait-for (lambda () (cl-notany #'process-live-p procs)) "both servers to exit" 10))
    (message "PASS")))

(condition-case err
    (acp-test--run)
  (error (acp-test--fail "error: %s" (error-message-string err))))
(kill-emacs 0)

;;; lsp-mode-diagnostics.el ends here
