;;; copilot-lsp-mode.el --- lsp-mode 10 with the shipped configuration and the Copilot stand-in  -*- lexical-binding: t -*-

;; Emacs 30 in batch mode with the real lsp-mode 10 and the shipped
;; editors/emacs/acp-lsp-bridge-lsp-mode.el, as lsp-mode-setup.el sets them up (the bridge an
;; add-on beside the buffer's own server, acp-test-lsp), the bridge's agent being the Copilot
;; stand-in (acp-test-agent --copilot), signed in through GH_COPILOT_TOKEN in the environment Emacs
;; starts the bridge in.  Run by e2e/copilot_emacs_test.go; EMACS_TEST_CASE picks the case:
;;
;;   suggest  main.txt has empty lines 4 to 7.
;;            1. Line 4: "retur"; C-c n a (lsp-execute-code-action) applies "Next edit: ...
;;               return nil" and lsp-mode runs its command (nes/accept).
;;            2. Line 5: "fmt.Prin"; C-c n i shows the ghost text (lsp-inline-completion-display);
;;               C-<return> accepts it: the line reads "fmt.Println(err)", nes/accept.
;;            3. Line 6: "log.Pri"; C-c n i shows its ghost text; C-c n k dismisses it (the ghost
;;               text goes, the stand-in counts it "rejected", the line stays as typed).  Nothing
;;               was counted "rejected" before.
;;            4. Line 7: "retur"; C-c n i shows its ghost text; the user types "z" over it: it ends,
;;               counted "ignored".
;;            5. A code-action request shows a suggestion on line 7 again; C-x C-s saves, C-x k
;;               closes the file (lsp-mode sends didClose): counted "ignored".  No dismissal was
;;               counted after step 3.
;;   drop     the stand-in drops the EMACS_TEST_DROP-th didChange while the user types "retur" on
;;            line 4 a key at a time (lsp-mode sends each change as it is made); C-c n a still
;;            applies "return nil"; C-x C-s saves; the stand-in's copy (--mirror-dir) is the buffer.
;;
;; Environment: as lsp-mode-setup.el says, and GH_COPILOT_TOKEN, EMACS_TEST_CASE, EMACS_TEST_DROP,
;; EMACS_TEST_RESULT (JSON written on success: {accepted: [ids], rejected, typedOver, closed, uri}).
;; "PASS" and exit code 0, or "FAIL: ..." and exit code 1 (2 from the watchdog).

(load (expand-file-name "lib.el" (file-name-directory load-file-name)) nil t)
(load (expand-file-name "copilot-lib.el" (file-name-directory load-file-name)) nil t)
(run-at-time 50 nil (lambda () (message "FAIL: watchdog: the script did not finish in 50 s")
                      (acp-test--dump) (kill-emacs 2)))
(load (expand-file-name "lsp-mode-setup.el" (file-name-directory load-file-name)) nil t)

;; The agent: the Copilot stand-in instead of lsp-mode-setup.el's scripted agent (read when
;; lsp-mode starts the bridge).
(setq acp-test--agent-log (acp-test--env "EMACS_TEST_AGENT_LOG")
      acp-lsp-bridge-agent
      (append (list (acp-test--env "ACP_TEST_AGENT") "--copilot"
                    "--rules" (acp-test--env "EMACS_TEST_RULES")
                    "--log" acp-test--agent-log
                    "--mirror-dir" (acp-test--env "EMACS_TEST_BRIDGE_MIRROR"))
              (and (equal (getenv "EMACS_TEST_CASE") "drop")
                   (list "--drop-change" (acp-test--env "EMACS_TEST_DROP"))))
      make-backup-files nil)

(defun acp-test--workspaces ()
  "The buffer's lsp-mode workspaces, by server id."
  (mapcar (lambda (ws) (cons (lsp--client-server-id (lsp--workspace-client ws)) ws))
          (lsp-workspaces)))

(defun acp-test--choose (want)
  "A `completing-read' that picks the \"Next edit: \" choice containing WANT."
  (lambda (prompt collection &rest _)
    (let* ((titles (mapcar (lambda (c) (if (consp c) (car c) c))
                           (if (functionp collection) (all-completions "" collection) collection)))
           (title (cl-find-if (lambda (s) (and (string-prefix-p "Next edit: " s) (string-search want s)))
                              titles)))
      (message "%s%S" prompt titles)
      (acp-test--check title "no \"Next edit: \" choice with %S among %S" want titles)
      title)))

(defun acp-test--code-action (want)
  "C-c n a, the \"Next edit: \" action containing WANT chosen when lsp-mode asks; its id."
  (acp-test--check (eq (key-binding (kbd "C-c n a")) #'lsp-execute-code-action)
                   "C-c n a runs %S" (key-binding (kbd "C-c n a")))
  (let ((n (length (acp-test--messages "nes/accept"))))
    (cl-letf (((symbol-function 'completing-read) (acp-test--choose want)))
      (acp-test--press "C-c n a"))
    (plist-get (car (last (acp-test--wait-for
                           (lambda () (let ((a (acp-test--messages "nes/accept")))
                                        (and (> (length a) n) a)))
                           "nes/accept for the code action" 10)))
               :id)))

(defun acp-test--shown (want)
  "Ask for code actions at point, as lsp-mode does for its menu, and leave them unanswered.
The id of the \"Next edit: \" action whose title contains WANT."
  (let ((next (cl-find-if (lambda (act)
                            (let ((title (lsp:code-action-title act)))
                              (and (string-prefix-p "Next edit: " title) (string-search want title))))
                          (lsp-code-actions-at-point))))
    (acp-test--check next "no \"Next edit: \" code action with %S" want)
    (aref (lsp:command-arguments? (lsp:code-action-command? next)) 0)))

(defun acp-test--ghost (want)
  "C-c n i: the ghost text shows, the suggestion's text containing WANT; its id."
  (acp-test--check (eq (key-binding (kbd "C-c n i")) #'lsp-inline-completion-display)
                   "C-c n i runs %S" (key-binding (kbd "C-c n i")))
  (acp-test--press "C-c n i")
  (acp-test--check (lsp-inline-completion--active-p) "C-c n i showed no ghost text")
  (let* ((item (elt lsp-inline-completion--items lsp-inline-completion--current))
         (text (lsp:inline-completion-item-insert-text item))
         (command (lsp:inline-completion-item-command? item)))
    (acp-test--check (and (stringp text) (string-search want text))
                     "the ghost text is %S, want one with %S" text want)
    (acp-test--check command "the ghost text has no command")
    (aref (lsp:command-arguments? command) 0)))

(defun acp-test--suggest-case (result)
  (let (accepted rejected typed-over closed before file procs)
    ;; 1. A code action.
    (acp-test--type-at-end 4 "retur")
    (push (acp-test--code-action "return nil") accepted)
    (acp-test--check (equal (acp-test--line 4) "\treturn nil") "line 4 reads %S" (acp-test--line 4))

    ;; 2. Ghost text, C-<return>.
    (acp-test--type-at-end 5 "fmt.Prin")
    (let ((id (acp-test--ghost "Println(err)")))
      (acp-test--press "C-<return>")
      (acp-test--check (not (lsp-inline-completion--active-p)) "the ghost text stayed after C-<return>")
      (acp-test--check (equal (acp-test--line 5) "\tfmt.Println(err)")
                       "after C-<return> line 5 reads %S" (acp-test--line 5))
      (acp-test--wait-for (lambda () (acp-test--messages "nes/accept" (lambda (p) (equal (plist-get p :id) id))))
                          (format "nes/accept %s after C-<return>" id) 10)
      (push id accepted))

    ;; 3. Ghost text, dismissed with C-c n k.
    (acp-test--type-at-end 6 "log.Pri")
    (setq rejected (acp-test--ghost "Printf"))
    (acp-test--check (= (acp-test--rejections) 0)
                     "the stand-in counted %d rejections before any dismissal" (acp-test--rejections))
    (acp-test--check (eq (key-binding (kbd "C-c n k")) #'acp-lsp-bridge-lsp-reject)
                     "C-c n k runs %S" (key-binding (kbd "C-c n k")))
    (acp-test--press "C-c n k")
    (acp-test--check (not (lsp-inline-completion--active-p)) "the ghost text stayed after C-c n k")
    (acp-test--wait-for (lambda () (acp-test--counted rejected))
                        (format "test/copilotReject for %s after C-c n k" rejected) 10)
    (acp-test--check (equal (acp-test--counted rejected) "rejected")
                     "C-c n k: the stand-in counted %s as %S" rejected (acp-test--counted rejected))
    (acp-test--check (equal (acp-test--line 6) "\tlog.Pri") "line 6 reads %S" (acp-test--line 6))
    (accept-process-output nil 0.3)
    (setq before (acp-test--rejections))

    ;; 4. Ghost text, typed over.
    (acp-test--type-at-end 7 "retur")
    (setq typed-over (acp-test--ghost "return nil"))
    (acp-test--press "z")
    (acp-test--check (not (lsp-inline-completion--active-p)) "the ghost text stayed after typing over it")
    (acp-test--wait-for (lambda () (acp-test--counted typed-over))
                        (format "test/copilotReject for %s after typing over it" typed-over) 10)
    (acp-test--check (equal (acp-test--counted typed-over) "ignored")
                     "typing over %s: the stand-in counted it %S" typed-over (acp-test--counted typed-over))

    ;; 5. Shown, then the file saved and closed.
    (setq closed (acp-test--shown "return nil"))
    (acp-test--press "C-x C-s")
    (setq file buffer-file-name
          procs (mapcar (lambda (w) (lsp--workspace-proc (cdr w))) (acp-test--workspaces))
          result (append result (list :workspaces (mapcar #'cdr (acp-test--workspaces)))))
    (acp-test--press "C-x k RET")
    (acp-test--check (not (get-file-buffer file)) "C-x k did not close main.txt")
    (acp-test--wait-for (lambda () (acp-test--counted closed))
                        (format "test/copilotReject for %s after closing the file" closed) 10)
    (acp-test--check (equal (acp-test--counted closed) "ignored")
                     "closing the file: the stand-in counted %s as %S" closed (acp-test--counted closed))
    (accept-process-output nil 0.3)
    (acp-test--check (= (acp-test--rejections) before)
                     "%d rejections counted after the dismissal, by typing over or closing"
                     (- (acp-test--rejections) before))
    (append result (list :procs procs
                         :accepted (vconcat (reverse accepted)) :rejected rejected
                         :typedOver typed-over :closed closed))))

(defun acp-test--mirror ()
  "The stand-in's copy of main.txt, or nil."
  (let ((f (expand-file-name "main.txt" (acp-test--env "EMACS_TEST_BRIDGE_MIRROR"))))
    (when (file-exists-p f)
      (with-temp-buffer
        (let ((coding-system-for-read 'utf-8-unix))
          (insert-file-contents f))
        (buffer-string)))))

(defun acp-test--drop-case (result)
  (let ((n (length (acp-test--messages "document/didChange"))))
    (goto-char (point-min))
    (forward-line 3)
    (end-of-line)
    ;; A key at a time: lsp-mode sends each change at once; the next key comes once the stand-in
    ;; has it.
    (dolist (key '("r" "e" "t" "u" "r"))
      (acp-test--press key)
      (setq n (1+ n))
      (acp-test--wait-for (lambda () (>= (length (acp-test--messages "document/didChange")) n))
                          (format "the stand-in's didChange #%d" n) 10))
    (acp-test--check (acp-test--messages "test/droppedChange") "the stand-in dropped no change")
    (let ((id (acp-test--code-action "return nil")))
      (acp-test--check (equal (acp-test--line 4) "\treturn nil") "line 4 reads %S" (acp-test--line 4))
      (acp-test--press "C-x C-s")
      (let ((want (buffer-substring-no-properties (point-min) (point-max))))
        (acp-test--wait-for (lambda () (equal (acp-test--mirror) want))
                            (format "the stand-in's copy (%S) to be the buffer" (acp-test--mirror)) 10))
      (append result (list :procs (mapcar (lambda (w) (lsp--workspace-proc (cdr w))) (acp-test--workspaces))
                           :workspaces (mapcar #'cdr (acp-test--workspaces))
                           :accepted (vector id))))))

(condition-case err
    (let ((file (expand-file-name "main.txt" acp-test--dir))
          result)
      (acp-test--env "GH_COPILOT_TOKEN")
      (let ((coding-system-for-read 'utf-8-unix))
        (switch-to-buffer (find-file file)))
      (text-mode)
      (lsp)
      (acp-test--wait-for
       (lambda ()
         (let ((ws (acp-test--workspaces)))
           (and (assq 'acp-lsp-bridge ws) (assq 'acp-test-main ws)
                (cl-every (lambda (w) (eq (lsp--workspace-status (cdr w)) 'initialized)) ws))))
       "lsp-mode to start both servers" 20)
      (acp-test--check acp-lsp-bridge-lsp-mode "the configuration's minor mode is off")
      (acp-test--check (bound-and-true-p lsp-inline-completion-mode) "lsp-inline-completion-mode is off")
      (acp-test--wait-for (lambda () (acp-test--messages "document/didOpen"))
                          "the stand-in's document/didOpen" 15)
      (setq result (list :uri (lsp--buffer-uri)))
      (setq result (if (equal (getenv "EMACS_TEST_CASE") "drop")
                       (acp-test--drop-case result)
                     (acp-test--suggest-case result)))
      (let ((procs (plist-get result :procs)))
        (dolist (ws (plist-get result :workspaces))
          (lsp-workspace-shutdown ws))
        (acp-test--wait-for (lambda () (cl-notany #'process-live-p procs)) "both servers to exit" 10))
      (cl-remf result :procs)
      (cl-remf result :workspaces)
      (let ((coding-system-for-write 'utf-8-unix))
        (with-temp-file (acp-test--env "EMACS_TEST_RESULT")
          (insert (json-serialize result))))
      (message "PASS %S" result))
  (error (acp-test--fail "error: %s" (error-message-string err))))
(kill-emacs 0)

;;; copilot-lsp-mode.el ends here
