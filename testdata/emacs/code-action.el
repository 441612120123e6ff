;;; code-action.el --- the shipped Eglot configuration applies acp-lsp-bridge's "Next edit" code action  -*- lexical-binding: t -*-

;; Emacs 30's own LSP client, Eglot, configured by the shipped
;; editors/emacs/acp-lsp-bridge-eglot.el (loaded as a user loads it, not a copy), talks to
;; acp-lsp-bridge, which runs acp-test-agent. The script opens a file with non-ASCII text, starts
;; the bridge with M-x eglot (which finds it through the entry the configuration put in
;; `eglot-server-programs'), types one character so that the agent's rule fires, presses the
;; configuration's key C-c n a (`eglot-code-actions', exactly as a user does; only the minibuffer
;; choice is answered by the script), and lets Eglot apply the chosen "Next edit: ..." action: its
;; WorkspaceEdit, then its command through workspace/executeCommand. See NOTES.md for the Eglot
;; behaviour relied on.
;;
;;   emacs --batch -Q -l testdata/emacs/code-action.el
;;
;; Environment (set by e2e/emacs_test.go; paths only, so that no text goes through the locale):
;;   ACP_EMACS_CONFIG          editors/emacs/acp-lsp-bridge-eglot.el, the shipped configuration
;;   ACP_LSP_BRIDGE            the acp-lsp-bridge binary
;;   ACP_TEST_AGENT            the acp-test-agent binary
;;   EMACS_TEST_DIR            workspace root (a transient project); the file is created there
;;   EMACS_TEST_SCENARIO       JSON file: {"file", "text", "cursorAfter", "type", "expected"}
;;   EMACS_TEST_RULES          the agent's --rules file
;;   EMACS_TEST_ENCODING       "" for Eglot's own offer (utf-32, utf-8, utf-16), else the one
;;                             position encoding Eglot offers
;;   EMACS_TEST_DOCUMENT_CHANGES "0": Eglot does not advertise workspaceEdit.documentChanges
;;                             (it does by default), so the bridge must use `changes'
;;   EMACS_TEST_WANT_ENCODING  the positionEncoding the bridge must choose
;;   EMACS_TEST_AGENT_ENCODING the agent's --encoding
;;   EMACS_TEST_BRIDGE_LOG     the bridge's --log-file (debug level)
;;   EMACS_TEST_AGENT_LOG      the agent's --log (one JSON line per message it received)
;;   EMACS_TEST_RESULT         JSON written on success: {encoding, id, title, kind, buffer}
;;
;; Output on stderr. "PASS <id>" and exit code 0 when every check passed; otherwise
;; "FAIL: <what>", Eglot's events buffer (both sides of the wire) and the bridge's stderr, and
;; exit code 1 (2 when the watchdog fires).

(load (expand-file-name "lib.el" (file-name-directory load-file-name)) nil t)

;; The shipped configuration, as a user loads it.
(load (expand-file-name (acp-test--env "ACP_EMACS_CONFIG")) nil t)

;; Offer exactly one position encoding, or no workspaceEdit.documentChanges, when the test asks
;; for it. Everything else stays Eglot's: the configuration's server class gets Eglot's own
;; capabilities with those two entries replaced.
(defvar acp-test--offer nil "The one position encoding to offer; nil: Eglot's own offer.")
(defvar acp-test--document-changes t "Whether to advertise workspaceEdit.documentChanges.")
(cl-defmethod eglot-client-capabilities :around ((_s acp-lsp-bridge-eglot-server))
  (let ((caps (cl-call-next-method)))
    (when acp-test--offer
      (setq caps (plist-put caps :general (list :positionEncodings (vector acp-test--offer)))))
    (unless acp-test--document-changes
      (plist-put (plist-get caps :workspace) :workspaceEdit '(:documentChanges :json-false)))
    caps))

(defun acp-test--run ()
  (acp-test--check (>= emacs-major-version 30) "Emacs %s; the test needs Emacs 30" emacs-version)
  (let* ((bridge (acp-test--env "ACP_LSP_BRIDGE"))
         (agent (acp-test--env "ACP_TEST_AGENT"))
         (dir (file-name-as-directory (expand-file-name (acp-test--env "EMACS_TEST_DIR"))))
         (scenario (acp-test--read-json (acp-test--env "EMACS_TEST_SCENARIO")))
         (rules (acp-test--env "EMACS_TEST_RULES"))
         (offer (getenv "EMACS_TEST_ENCODING"))
         (want-encoding (acp-test--env "EMACS_TEST_WANT_ENCODING"))
         (agent-encoding (acp-test--env "EMACS_TEST_AGENT_ENCODING"))
         (bridge-log (acp-test--env "EMACS_TEST_BRIDGE_LOG"))
         (agent-log (acp-test--env "EMACS_TEST_AGENT_LOG"))
         (result-file (acp-test--env "EMACS_TEST_RESULT"))
         (file (expand-file-name (plist-get scenario :file) dir))
         (expected (plist-get scenario :expected))
         buf server chosen actions version-at-choice)
    (setq acp-test--offer (and offer (not (string-empty-p offer)) offer)
          acp-test--document-changes (not (equal (getenv "EMACS_TEST_DOCUMENT_CHANGES") "0")))
    (message "Emacs %s, Eglot %s, jsonrpc %s; Eglot offers %s, %s workspaceEdit.documentChanges"
             emacs-version (acp-test--library-version "eglot")
             (acp-test--library-version "jsonrpc")
             (or acp-test--offer "its default encodings")
             (if acp-test--document-changes "with" "without"))

    ;; The user's settings: where the bridge is, and the agent with its arguments.
    (setq acp-lsp-bridge-program bridge
          acp-lsp-bridge-args (list "--log-file" bridge-log "--log-level" "debug")
          acp-lsp-bridge-agent (list agent "--encoding" agent-encoding "--rules" rules
                                     "--log" agent-log))

    ;; The project is the file's directory (Eglot's "transient" project), never an enclosing VC
    ;; repository; no prompts: stdin is /dev/null, a prompt is an error.
    (setq project-find-functions nil
          eglot-sync-connect t
          eglot-connect-timeout 20
          eglot-autoreconnect nil)

    ;; Open the file as a user would.
    (let ((coding-system-for-write 'utf-8-unix))
      (write-region (plist-get scenario :text) nil file nil 'silent))
    (setq buf (let ((coding-system-for-read 'utf-8-unix)) (find-file-noselect file)))
    (set-buffer buf)
    (switch-to-buffer buf)
    (acp-test--check (eq major-mode 'text-mode) "major mode %s, want text-mode" major-mode)
    (acp-test--check (equal (buffer-string) (plist-get scenario :text))
                     "the file reads back as %S" (buffer-string))

    ;; M-x eglot: the contact comes from the configuration's `eglot-server-programs' entry.
    (let ((this-command 'eglot))
      (condition-case err
          (call-interactively #'eglot)
        (error (acp-test--fail "M-x eglot: %s" (error-message-string err)))))
    (setq server (eglot-current-server))
    (setq acp-test--server server)
    (acp-test--check (and server (jsonrpc-running-p server)) "eglot did not connect")
    (acp-test--check (cl-typep server 'acp-lsp-bridge-eglot-server)
                     "the server is a %S, not the configuration's acp-lsp-bridge-eglot-server"
                     (eieio-object-class server))
    (acp-test--check eglot--managed-mode "the buffer is not managed by Eglot")
    (acp-test--check acp-lsp-bridge-eglot-mode "the configuration's key map is not on")
    (let ((enc (plist-get (eglot--capabilities server) :positionEncoding)))
      (message "negotiated positionEncoding %S; Eglot uses %s / %s" enc
               eglot-current-linepos-function eglot-move-to-linepos-function)
      (acp-test--check (equal enc want-encoding) "positionEncoding %S, want %S" enc want-encoding))
    (acp-test--check (eglot-server-capable :codeActionProvider)
                     "the bridge does not advertise codeActionProvider: %S"
                     (eglot--capabilities server))

    ;; Let the agent get the document, as it would while a user reads the file.
    (acp-test--wait-for (lambda () (acp-test--file-contains agent-log "\"document/didOpen\""))
                        "the agent's document/didOpen" 10)
    ;; The language id comes from `acp-lsp-bridge-eglot-modes': text-mode is "plaintext".
    (acp-test--check (acp-test--file-contains agent-log "\"languageId\":\"plaintext\"")
                     "the agent's document/didOpen does not say languageId \"plaintext\"")

    ;; Type, through the command loop's machinery (self-insert-command, post-command-hook).
    (goto-char (point-min))
    (acp-test--check (search-forward (plist-get scenario :cursorAfter) nil t)
                     "%S not found in the buffer" (plist-get scenario :cursorAfter))
    (execute-kbd-macro (plist-get scenario :type))

    ;; C-c n a, the configuration's key for `eglot-code-actions': Eglot computes the bounds
    ;; itself (the sexp at point), flushes the pending didChange, asks, offers the titles with
    ;; `completing-read' (a key, not a mouse event, invoked it), and calls `eglot-execute' on the
    ;; chosen action. The script answers the minibuffer: the one action whose title starts with
    ;; "Next edit: ".
    (acp-test--check (eq (key-binding (kbd "C-c n a")) #'eglot-code-actions)
                     "C-c n a runs %S, want eglot-code-actions" (key-binding (kbd "C-c n a")))
    (cl-letf (((symbol-function 'completing-read)
               (lambda (prompt collection &rest _)
                 (setq actions (mapcar #'cdr collection))
                 (message "%s%S" prompt (mapcar #'car collection))
                 (let ((next (cl-remove-if-not
                              (lambda (item) (string-prefix-p "Next edit: " (car item)))
                              collection)))
                   (acp-test--check (= (length next) 1)
                                    "want exactly one \"Next edit: \" action, got %S" actions)
                   (setq chosen (cdar next)
                         version-at-choice eglot--versioned-identifier)
                   (caar next)))))
      (acp-test--press "C-c n a"))
    (acp-test--check chosen "no code action was chosen")
    (message "chosen action: %S" chosen)

    ;; What the contract promises for an edit suggestion of this file.
    (let* ((uri (plist-get (eglot--TextDocumentIdentifier) :uri))
           (edit (plist-get chosen :edit))
           (command (plist-get chosen :command))
           (doc-changes (plist-get edit :documentChanges))
           (id (and command (> (length (plist-get command :arguments)) 0)
                    (aref (plist-get command :arguments) 0))))
      (acp-test--check (member (plist-get chosen :kind) '("quickfix" "refactor.rewrite"))
                       "kind %S, want quickfix or refactor.rewrite" (plist-get chosen :kind))
      (acp-test--check (and command (equal (plist-get command :command) "acp-lsp-bridge.accept")
                            (stringp id))
                       "command %S, want acp-lsp-bridge.accept [id]" command)
      (if acp-test--document-changes
          ;; Eglot advertises workspace.workspaceEdit.documentChanges: the edit uses it.
          (progn
            (acp-test--check (and (vectorp doc-changes) (= (length doc-changes) 1)
                                  (not (plist-member edit :changes)))
                             "edit %S, want documentChanges (one entry) and no changes" edit)
            (let ((td (plist-get (aref doc-changes 0) :textDocument)))
              (acp-test--check (equal (plist-get td :uri) uri)
                               "documentChanges uri %S, want %S" (plist-get td :uri) uri)
              ;; Eglot refuses edits for another version (`eglot--apply-text-edits'); the buffer
              ;; did not change between the request and the choice, so the version is that one.
              (acp-test--check (equal (plist-get td :version) version-at-choice)
                               "documentChanges version %S; when the action was chosen, the buffer's was %S"
                               (plist-get td :version) version-at-choice)))
        ;; Without documentChanges: `changes', one URI (a plist key, as jsonrpc.el parses it).
        (let ((changes (plist-get edit :changes)))
          (acp-test--check (and (= (length changes) 2) (eq (car changes) (intern (concat ":" uri)))
                                (not (plist-member edit :documentChanges)))
                           "edit %S, want changes for %s only and no documentChanges" edit uri)))

      ;; Eglot applied the edit (and sent its didChange) and then ran the command.
      (acp-test--check (equal (buffer-string) expected)
                       "buffer after the action (%s):\n%S\nwant:\n%S"
                       (acp-test--first-difference (buffer-string) expected) (buffer-string) expected)
      (acp-test--check (not (get-buffer "*EGLOT proposed server changes*"))
                       "Eglot proposed a diff instead of applying")

      (let ((coding-system-for-write 'utf-8-unix))
        (with-temp-file result-file
          (insert (json-serialize
                   (list :encoding (plist-get (eglot--capabilities server) :positionEncoding)
                         :id id
                         :title (plist-get chosen :title)
                         :kind (plist-get chosen :kind)
                         :buffer (with-current-buffer buf (buffer-string)))))))
      ;; Polite shutdown: shutdown, exit; the bridge then closes the agent.
      (eglot-shutdown server)
      (setq acp-test--server nil)
      (message "PASS %s" id))))

;; The Go test kills Emacs after 60 s; fail first, with the events buffer.
(run-with-timer 45 nil (lambda ()
                         (message "FAIL: watchdog: the script did not finish within 45 s")
                         (acp-test--dump)
                         (kill-emacs 2)))

(condition-case err
    (acp-test--run)
  (error (acp-test--fail "error: %s" (error-message-string err))))
(kill-emacs 0)

;;; code-action.el ends here
