;;; copilot-eglot.el --- Eglot with the shipped configuration and the Copilot stand-in  -*- lexical-binding: t -*-

;; Emacs 30 in batch mode, Eglot configured by the shipped editors/emacs/acp-lsp-bridge-eglot.el
;; (loaded as a user loads it), the bridge running the Copilot stand-in (acp-test-agent --copilot:
;; GitHub Copilot's language server as its --acp mode behaves, suggestions from rules), signed in
;; through GH_COPILOT_TOKEN in the environment Emacs starts the bridge in (as the README says).
;; Run by e2e/copilot_emacs_test.go; EMACS_TEST_CASE picks the case:
;;
;;   suggest  main.txt has empty lines 4 to 7.
;;            1. Line 4: the user types "retur"; C-c n a (eglot-code-actions) offers "Next edit:
;;               ... return nil"; chosen, Eglot applies it and runs its command (nes/accept).
;;            2. Line 5: "fmt.Prin", then C-M-i (completion-at-point) lists the bridge's item
;;               fmt.Println(err) in *Completions*; M-<down> M-RET takes it and the line reads
;;               "fmt.Println(err)"; Eglot runs no item command, the bridge notices the text and
;;               sends nes/accept with the next change or request.
;;            3. Line 6: "log.Pri"; a code-action request shows its suggestion (the menu is left
;;               unanswered); C-c n k dismisses it: the stand-in counts it "rejected" and the line
;;               stays as typed.  Nothing was counted "rejected" before.
;;            4. Line 7: "retur", a code-action request shows its suggestion; the user types "z"
;;               over it: it ends, counted "ignored", not "rejected".
;;            5. A suggestion shown on line 7 again, C-x C-s saves, C-x k closes the file: Eglot
;;               sends didClose, the suggestion ends, counted "ignored".  No dismissal was counted
;;               after step 3.
;;   drop     the stand-in drops the EMACS_TEST_DROP-th didChange (--drop-change) while the user
;;            types "retur" on line 4, a key at a time (each key sent as its own didChange, as
;;            Eglot's idle timer does after `eglot-send-changes-idle-time'); C-c n a still offers
;;            "return nil" (the bridge repairs the stand-in's copy), which is applied and saved.
;;
;; Environment: ACP_EMACS_CONFIG, ACP_LSP_BRIDGE, ACP_TEST_AGENT, GH_COPILOT_TOKEN, EMACS_TEST_DIR
;; (the project; main.txt is there), EMACS_TEST_RULES, EMACS_TEST_BRIDGE_LOG, EMACS_TEST_AGENT_LOG,
;; EMACS_TEST_CASE, EMACS_TEST_DROP (case drop), EMACS_TEST_RESULT (JSON written on success:
;; {accepted: [ids], rejected, typedOver, closed, uri}).
;; "PASS" and exit code 0, or "FAIL: ..." and exit code 1 (2 from the watchdog).

(load (expand-file-name "lib.el" (file-name-directory load-file-name)) nil t)
(load (expand-file-name "copilot-lib.el" (file-name-directory load-file-name)) nil t)

(defun acp-test--code-action (want)
  "C-c n a, choosing the \"Next edit: \" action whose title contains WANT; its id."
  (acp-test--check (eq (key-binding (kbd "C-c n a")) #'eglot-code-actions)
                   "C-c n a runs %S" (key-binding (kbd "C-c n a")))
  (let (chosen)
    (cl-letf (((symbol-function 'completing-read)
               (lambda (prompt collection &rest _)
                 (message "%s%S" prompt (mapcar #'car collection))
                 (let ((item (cl-find-if (lambda (item)
                                           (and (string-prefix-p "Next edit: " (car item))
                                                (string-search want (car item))))
                                         collection)))
                   (acp-test--check item "no \"Next edit: \" action with %S among %S"
                                    want (mapcar #'car collection))
                   (setq chosen (cdr item))
                   (car item)))))
      (acp-test--press "C-c n a"))
    (acp-test--check chosen "C-c n a chose no action")
    (aref (plist-get (plist-get chosen :command) :arguments) 0)))

(defun acp-test--shown (want)
  "Ask for code actions at point, as Eglot does for its menu, and leave it unanswered.
The id of the \"Next edit: \" action whose title contains WANT."
  (let* ((actions (eglot-code-actions (point) (point)))
         (next (cl-find-if (lambda (act)
                             (and (string-prefix-p "Next edit: " (plist-get act :title))
                                  (string-search want (plist-get act :title))))
                           actions)))
    (acp-test--check next "no \"Next edit: \" code action with %S: %S" want
                     (mapcar (lambda (a) (plist-get a :title)) actions))
    (aref (plist-get (plist-get next :command) :arguments) 0)))

(defun acp-test--sent ()
  "Send the pending changes, as Eglot's idle timer does (batch mode has no idle time)."
  (eglot--signal-textDocument/didChange))

(defun acp-test--suggest-case (result)
  (let (accepted rejected typed-over closed before file)
    ;; 1. A code action.
    (acp-test--type-at-end 4 "retur")
    (push (acp-test--code-action "return nil") accepted)
    (acp-test--check (equal (acp-test--line 4) "\treturn nil") "line 4 reads %S" (acp-test--line 4))
    (acp-test--wait-for (lambda () (acp-test--messages "nes/accept"
                                                       (lambda (p) (equal (plist-get p :id) (car accepted)))))
                        "nes/accept for the code action" 10)

    ;; 2. A completion item (C-M-i).
    (acp-test--type-at-end 5 "fmt.Prin")
    ;; C-M-i is `complete-symbol' in text-mode: `completion-at-point' without a prefix argument.
    (acp-test--check (memq (key-binding (kbd "C-M-i")) '(completion-at-point complete-symbol))
                     "C-M-i runs %S" (key-binding (kbd "C-M-i")))
    ;; The item's label, fmt.Println(err), does not start with the symbol at point ("Prin": "."
    ;; is punctuation), so C-M-i lists it in *Completions* rather than inserting it; the user
    ;; selects it with M-<down> and takes it with M-RET (`completion-in-region-mode-map').
    (acp-test--press "C-M-i")
    (acp-test--check (get-buffer "*Completions*") "C-M-i showed no *Completions*")
    (acp-test--check (with-current-buffer "*Completions*"
                       (save-excursion (goto-char (point-min)) (search-forward "fmt.Println(err)" nil t)))
                     "*Completions* does not list fmt.Println(err): %S"
                     (with-current-buffer "*Completions*" (buffer-string)))
    (acp-test--press "M-<down> M-RET")
    (acp-test--check (equal (acp-test--line 5) "\tfmt.Println(err)")
                     "after C-M-i line 5 reads %S" (acp-test--line 5))

    ;; 3. Shown, then dismissed with C-c n k.
    (acp-test--type-at-end 6 "log.Pri")
    (setq rejected (acp-test--shown "log.Printf"))
    (acp-test--wait-for (lambda () (>= (length (acp-test--messages "nes/accept")) 2))
                        "nes/accept for the completion item (after the next change)" 10)
    (push (plist-get (car (last (acp-test--messages "nes/accept"))) :id) accepted)
    (acp-test--check (= (acp-test--rejections) 0)
                     "the stand-in counted %d rejections before any dismissal" (acp-test--rejections))
    (acp-test--check (eq (key-binding (kbd "C-c n k")) #'acp-lsp-bridge-eglot-reject)
                     "C-c n k runs %S" (key-binding (kbd "C-c n k")))
    (acp-test--press "C-c n k")
    (acp-test--wait-for (lambda () (acp-test--counted rejected))
                        (format "test/copilotReject for %s after C-c n k" rejected) 10)
    (acp-test--check (equal (acp-test--counted rejected) "rejected")
                     "C-c n k: the stand-in counted %s as %S" rejected (acp-test--counted rejected))
    (acp-test--check (equal (acp-test--line 6) "\tlog.Pri") "line 6 reads %S" (acp-test--line 6))
    (accept-process-output nil 0.3)
    (setq before (acp-test--rejections))

    ;; 4. Shown, then typed over.
    (acp-test--type-at-end 7 "retur")
    (setq typed-over (acp-test--shown "return nil"))
    (acp-test--press "z")
    (acp-test--sent)
    (acp-test--wait-for (lambda () (acp-test--counted typed-over))
                        (format "test/copilotReject for %s after typing over it" typed-over) 10)
    (acp-test--check (equal (acp-test--counted typed-over) "ignored")
                     "typing over %s: the stand-in counted it %S" typed-over (acp-test--counted typed-over))

    ;; 5. Shown, then the file saved and closed.
    (setq closed (acp-test--shown "return nil"))
    (acp-test--check (not (equal closed typed-over)) "the same suggestion %s again" closed)
    (acp-test--press "C-x C-s")
    (setq file buffer-file-name)
    (acp-test--press "C-x k RET")
    (acp-test--check (not (get-file-buffer file)) "C-x k did not close main.txt")
    (acp-test--wait-for (lambda () (acp-test--counted closed))
                        (format "test/copilotReject for %s after closing the file" closed) 10)
    (acp-test--check (equal (acp-test--counted closed) "ignored")
                     "closing the file: the stand-in counted %s as %S" closed (acp-test--counted closed))
    (accept-process-output nil 0.3)
    ;; C-x C-f main.txt again, for `eglot-shutdown' (Eglot 1.17 cannot shut down from a buffer it
    ;; does not manage: it fetches that buffer's changes first, and fails an assertion).
    (let ((coding-system-for-read 'utf-8-unix))
      (switch-to-buffer (find-file file)))
    (acp-test--check (eglot-managed-p) "main.txt opened again is not managed")
    (acp-test--check (= (acp-test--rejections) before)
                     "%d rejections counted after the dismissal, by typing over or closing"
                     (- (acp-test--rejections) before))
    (append result (list :accepted (vconcat (reverse accepted)) :rejected rejected
                         :typedOver typed-over :closed closed))))

(defun acp-test--drop-case (result)
  (let ((n 0))
    (goto-char (point-min))
    (forward-line 3)
    (end-of-line)
    ;; A key at a time, each sent as its own didChange.
    (dolist (key '("r" "e" "t" "u" "r"))
      (acp-test--press key)
      (acp-test--sent)
      (setq n (1+ n))
      (acp-test--wait-for (lambda () (>= (length (acp-test--messages "document/didChange")) n))
                          (format "the stand-in's didChange #%d" n) 10))
    (acp-test--check (acp-test--messages "test/droppedChange") "the stand-in dropped no change")
    (let ((id (acp-test--code-action "return nil")))
      (acp-test--check (equal (acp-test--line 4) "\treturn nil") "line 4 reads %S" (acp-test--line 4))
      (acp-test--wait-for (lambda () (acp-test--messages "nes/accept"
                                                         (lambda (p) (equal (plist-get p :id) id))))
                          "nes/accept for the code action" 10)
      (acp-test--press "C-x C-s")
      (append result (list :accepted (vector id))))))

(defun acp-test--run ()
  (acp-test--check (>= emacs-major-version 30) "Emacs %s; the test needs Emacs 30" emacs-version)
  (let* ((config (expand-file-name (acp-test--env "ACP_EMACS_CONFIG")))
         (dir (file-name-as-directory (expand-file-name (acp-test--env "EMACS_TEST_DIR"))))
         (case (acp-test--env "EMACS_TEST_CASE"))
         (agent (append (list (acp-test--env "ACP_TEST_AGENT") "--copilot"
                              "--rules" (acp-test--env "EMACS_TEST_RULES")
                              "--log" (acp-test--env "EMACS_TEST_AGENT_LOG"))
                        (and (equal case "drop")
                             (list "--drop-change" (acp-test--env "EMACS_TEST_DROP")))))
         server uri result)
    (acp-test--env "GH_COPILOT_TOKEN")
    (setq acp-test--agent-log (acp-test--env "EMACS_TEST_AGENT_LOG"))
    (load config nil t)
    (message "Emacs %s, Eglot %s" emacs-version (acp-test--library-version "eglot"))
    (setq acp-lsp-bridge-program (acp-test--env "ACP_LSP_BRIDGE")
          acp-lsp-bridge-args (list "--log-file" (acp-test--env "EMACS_TEST_BRIDGE_LOG")
                                    "--log-level" "debug")
          acp-lsp-bridge-agent agent)
    (add-hook 'text-mode-hook #'eglot-ensure)
    (setq project-find-functions nil
          eglot-sync-connect t
          eglot-connect-timeout 20
          eglot-autoreconnect nil
          make-backup-files nil)

    ;; C-x C-f main.txt: eglot-ensure connects when the command ends.
    (let ((coding-system-for-read 'utf-8-unix))
      (switch-to-buffer (find-file (expand-file-name "main.txt" dir))))
    (run-hooks 'post-command-hook)
    (setq server (eglot-current-server)
          acp-test--server server)
    (acp-test--check (and server (jsonrpc-running-p server) acp-lsp-bridge-eglot-mode)
                     "eglot-ensure did not start the bridge: %S" server)
    (setq uri (plist-get (eglot--TextDocumentIdentifier) :uri))
    (acp-test--wait-for (lambda () (acp-test--messages "document/didOpen"))
                        "the stand-in's document/didOpen" 15)
    (setq result (list :uri uri))
    (setq result (if (equal case "drop")
                     (acp-test--drop-case result)
                   (acp-test--suggest-case result)))
    (let ((coding-system-for-write 'utf-8-unix))
      (with-temp-file (acp-test--env "EMACS_TEST_RESULT")
        (insert (json-serialize result))))
    (eglot-shutdown server)
    (setq acp-test--server nil)
    (message "PASS %S" result)))

(run-with-timer 50 nil (lambda ()
                         (message "FAIL: watchdog: the script did not finish within 50 s")
                         (acp-test--dump)
                         (kill-emacs 2)))

(condition-case err
    (acp-test--run)
  (error (acp-test--fail "error: %s" (error-message-string err))))
(kill-emacs 0)

;;; copilot-eglot.el ends here
