;;; lib.el --- helpers of the Emacs batch-mode scripts in this directory  -*- lexical-binding: t -*-

;; Loaded by code-action.el, shipped.el and lsp-mode.el.  Output goes to stderr: "FAIL: <what>"
;; followed by the client's logs (Eglot's events buffer, both sides of the wire, and the bridge's
;; stderr; lsp-mode's *lsp-log* and its per-server I/O logs), then exit code 1.

(require 'cl-lib)
(require 'lisp-mnt)
(require 'find-func)

(defvar acp-test--server nil "The Eglot server to shut down when a check fails.")

(defun acp-test--dump ()
  "Print what the LSP client saw and sent, and the servers' stderr."
  (dolist (buf (buffer-list))
    (when (string-match-p "\\`\\*\\(EGLOT .*\\(events\\|stderr\\)\\|lsp-log.*\\|.*::stderr\\)\\*\\'"
                          (buffer-name buf))
      (with-current-buffer buf
        (message "----- %s -----\n%s" (buffer-name buf)
                 (buffer-substring-no-properties (point-min) (point-max)))))))

(defun acp-test--fail (fmt &rest args)
  (message "FAIL: %s" (apply #'format fmt args))
  (acp-test--dump)
  (when acp-test--server
    (ignore-errors (eglot-shutdown acp-test--server nil 1.5 t)))
  (kill-emacs 1))

(defun acp-test--check (ok fmt &rest args)
  (unless ok (apply #'acp-test--fail fmt args)))

(defun acp-test--env (name)
  (let ((v (getenv name)))
    (unless v (acp-test--fail "environment variable %s is not set" name))
    v))

(defun acp-test--read-json (file)
  (with-temp-buffer
    (let ((coding-system-for-read 'utf-8-unix))
      (insert-file-contents file))
    (json-parse-buffer :object-type 'plist :null-object nil :false-object nil)))

(defun acp-test--wait-for (pred what seconds)
  "Let Emacs run (process output, timers) until PRED is non-nil; return its value."
  (let ((deadline (+ (float-time) seconds))
        v)
    (while (not (setq v (funcall pred)))
      (when (> (float-time) deadline)
        (acp-test--fail "timed out after %s s waiting for %s" seconds what))
      (accept-process-output nil 0.05))
    v))

(defun acp-test--library-version (lib)
  "The Version: header of library LIB (Eglot and jsonrpc have no version variable)."
  (ignore-errors
    (with-temp-buffer
      (insert-file-contents (find-library-name lib))
      (lm-header "Version"))))

(defun acp-test--first-difference (got want)
  "Where GOT and WANT first differ, with code points (combining marks look alike)."
  (let ((n (compare-strings got nil nil want nil nil)))
    (if (eq n t)
        "no difference"
      (let ((i (1- (abs n))))
        (cl-flet ((at (s) (if (< i (length s)) (format "U+%04X" (aref s i)) "the end")))
          (format "first difference at character %d: %s, want %s" i (at got) (at want)))))))

(defun acp-test--file-contains (file string)
  (and (file-exists-p file)
       (with-temp-buffer
         (insert-file-contents-literally file)
         (search-forward string nil t))))

(defun acp-test--agent-messages (file)
  "The messages the test agent logged to FILE: a list of plists (:method :params)."
  (when (file-exists-p file)
    (with-temp-buffer
      (let ((coding-system-for-read 'utf-8-unix))
        (insert-file-contents file))
      (let (out)
        (dolist (line (split-string (buffer-string) "\n" t))
          ;; The agent may be writing the last line right now.
          (let ((m (ignore-errors
                     (json-parse-string line :object-type 'plist :null-object nil
                                        :false-object nil))))
            (when m (push m out))))
        (nreverse out)))))

(defun acp-test--press (keys)
  "Press KEYS (a `kbd' string) through the command loop, as a user would."
  (execute-kbd-macro (kbd keys)))

;;; lib.el ends here
