;;; copilot-lib.el --- helpers of copilot-eglot.el and copilot-lsp-mode.el  -*- lexical-binding: t -*-

;; What the stand-in (acp-test-agent --copilot --log FILE) heard, and the buffer's lines.  Loaded
;; after lib.el; `acp-test--agent-log' is set by the script.

(defvar acp-test--agent-log nil)

(defun acp-test--messages (method &optional pred)
  "The params of the messages METHOD the stand-in received, for which PRED holds."
  (delq nil (mapcar (lambda (m)
                      (let ((params (plist-get m :params)))
                        (and (equal (plist-get m :method) method)
                             (or (null pred) (funcall pred params))
                             (or params t))))
                    (acp-test--agent-messages acp-test--agent-log))))

(defun acp-test--counted (id)
  "How the stand-in counted the end of suggestion ID (test/copilotReject), or nil."
  (plist-get (car (acp-test--messages "test/copilotReject"
                                      (lambda (p) (equal (plist-get p :id) id))))
             :counted))

(defun acp-test--rejections ()
  "How many suggestions the stand-in counted as rejected so far."
  (length (acp-test--messages "test/copilotReject"
                              (lambda (p) (equal (plist-get p :counted) "rejected")))))

(defun acp-test--line (n)
  "The text of line N (1-based) of the current buffer."
  (save-excursion
    (goto-char (point-min))
    (forward-line (1- n))
    (buffer-substring-no-properties (line-beginning-position) (line-end-position))))

(defun acp-test--type-at-end (line keys)
  "Go to the end of LINE (1-based) and type KEYS through the command loop."
  (goto-char (point-min))
  (forward-line (1- line))
  (end-of-line)
  (acp-test--press keys))

(provide 'copilot-lib)
;;; copilot-lib.el ends here
