;;; lsp-mode.el --- the shipped lsp-mode configuration in the real lsp-mode 10, beside a second server  -*- lexical-binding: t -*-

;; Emacs 30 in batch mode with the real lsp-mode 10 (its own code, from LSPMODE_LOAD_PATH) and
;; the shipped editors/emacs/acp-lsp-bridge-lsp-mode.el, loaded as a user loads it, its settings
;; naming the built bridge and the scripted test agent.  Beside the bridge (an add-on client),
;; lsp-mode runs the buffer's own language server: acp-test-lsp, which, as LSP 3.17 asks of
;; servers, takes the client's first position encoding.  lsp-mode keeps one position encoding per
;; buffer, the one of the server that initialized last, so unless both servers take the same one,
;; one of them reads every column of a line with non-ASCII text in the wrong unit.
;;
;; The script opens a file with astral-plane, CJK and combining-mark text, starts lsp-mode (both
;; servers), types after the non-ASCII text on several lines (characters, a deletion, a new line),
;; and waits until both servers' copies of the document (the agent's mirror of the bridge's, and
;; acp-test-lsp's) equal the buffer.  It checks that lsp-mode offered utf-32 first and that both
;; servers chose it.
;;
;; Environment: as lsp-mode-setup.el says.  "PASS" and exit code 0, or "FAIL: ..." and exit
;; code 1; a 50 s watchdog exits 2.

(load (expand-file-name "lib.el" (file-name-directory load-file-name)) nil t)
(run-at-time 50 nil (lambda () (message "FAIL: watchdog: the script did not finish in 50 s")
                      (acp-test--dump) (kill-emacs 2)))

(load (expand-file-name "lsp-mode-setup.el" (file-name-directory load-file-name)) nil t)

(defconst acp-test--text
  (concat "// 日本語のメモ: e\u0301, n\u0303, 𐐀 and 😀\n"
          "\tlabel := \"e\u0301 中文 𐐀\"; 𐐀 = f; // 🎉 終\n"
          "}\n"))

(defun acp-test--mirror (var)
  "The text of main.txt in the folder of environment variable VAR, or nil."
  (let ((f (expand-file-name "main.txt" (acp-test--env var))))
    (when (file-exists-p f)
      (with-temp-buffer
        (let ((coding-system-for-read 'utf-8-unix))
          (insert-file-contents f))
        (buffer-string)))))

(defun acp-test--copies-equal (what)
  "Wait until both servers' copies equal the buffer, after WHAT."
  (let ((want (buffer-substring-no-properties (point-min) (point-max))))
    (let ((deadline (+ (float-time) 15)))
      (while (not (and (equal (acp-test--mirror "EMACS_TEST_BRIDGE_MIRROR") want)
                       (equal (acp-test--mirror "EMACS_TEST_MAIN_MIRROR") want)))
        (when (> (float-time) deadline)
          (dolist (server '(("the bridge's agent" . "EMACS_TEST_BRIDGE_MIRROR")
                            ("the buffer's own server" . "EMACS_TEST_MAIN_MIRROR")))
            (let ((got (acp-test--mirror (cdr server))))
              (unless (equal got want)
                (message "%s has %S; %s" (car server) got
                         (if got (acp-test--first-difference got want) "no copy")))))
          (acp-test--fail "after %s, the servers' copies of the document differ from the buffer %S"
                          what want))
        (accept-process-output nil 0.05)))
    (message "after %s: both servers' copies equal the buffer" what)))

(defun acp-test--workspaces ()
  "The buffer's lsp-mode workspaces, by server id."
  (mapcar (lambda (ws) (cons (lsp--client-server-id (lsp--workspace-client ws)) ws))
          (lsp-workspaces)))

(defun acp-test--type (keys)
  "Type KEYS through the command loop, as a user does; lsp-mode sends each change."
  (execute-kbd-macro (kbd keys)))

(let ((file (expand-file-name "main.txt" acp-test--dir)))
  (with-temp-file file
    (set-buffer-file-coding-system 'utf-8-unix)
    (insert acp-test--text))
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
  ;; What each server chose is checked at the end: first, what a user would suffer from a
  ;; disagreement, the copies.
  (dolist (w (acp-test--workspaces))
    (message "%s chose position encoding %s" (car w)
             (lsp:server-capabilities-position-encoding?
              (lsp--workspace-server-capabilities (cdr w)))))
  (message "the buffer's position encoding: %s" lsp--position-column-function)
  (acp-test--copies-equal "opening")

  ;; Type after the non-ASCII text of line 2: "o" after "𐐀 = f", then a word after "終".
  (goto-char (point-min))
  (search-forward "𐐀 = f")
  (acp-test--type "o o")
  (acp-test--copies-equal "typing after 𐐀 = f")
  (search-forward "終")
  (acp-test--type "SPC 완료")
  (acp-test--copies-equal "typing after 終")
  ;; Delete the character before the one typed first, and break the line after the note's 😀.
  (goto-char (point-min))
  (search-forward "𐐀 = fo")
  (acp-test--type "<backspace> <backspace>")
  (acp-test--copies-equal "deleting after 𐐀 = ")
  (goto-char (point-min))
  (search-forward "😀")
  (acp-test--type "RET é 🎉")
  (acp-test--copies-equal "a new line after 😀")

  (dolist (w (acp-test--workspaces))
    (let ((enc (lsp:server-capabilities-position-encoding?
                (lsp--workspace-server-capabilities (cdr w)))))
      (acp-test--check (equal enc "utf-32")
                       "%s chose %s, not lsp-mode's first choice utf-32" (car w) enc)))
  (set-buffer-modified-p nil)
  (let ((procs (mapcar (lambda (w) (lsp--workspace-proc (cdr w))) (acp-test--workspaces))))
    (dolist (w (acp-test--workspaces))
      (lsp-workspace-shutdown (cdr w)))
    (acp-test--wait-for (lambda () (cl-notany #'process-live-p procs)) "both servers to exit" 10))
  (message "PASS")
  (kill-emacs 0))
