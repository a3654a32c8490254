;;; readme.el --- the README's functions, as a person would paste them  -*- lexical-binding: t -*-

;; The elisp blocks of editors/emacs/README.md that define functions are evaluated as
;; they stand (the block that configures `eglot-server-programs' is left out: it names a
;; local Ollama, and the scenario's server must reach the provider stub).  `tether-ask'
;; starts a turn and returns at once; the person allows the command in the dialog;
;; `tether-answer' shows the answer; a second `tether-ask' continues the session.

(load (expand-file-name "helper.el" (file-name-directory load-file-name)) nil t)

(defun tether-test-readme-blocks ()
  "The README's elisp blocks that define functions."
  (with-temp-buffer
    (insert-file-contents
     (expand-file-name "../README.md" (file-name-directory load-file-name)))
    (let (blocks)
      (while (re-search-forward "^```elisp\n\\(\\(?:.\\|\n\\)*?\\)\n```$" nil t)
        (when (string-match-p "(defun " (match-string 1))
          (push (match-string 1) blocks)))
      (nreverse blocks))))

(let ((blocks (tether-test-readme-blocks)))
  (tether-test-check blocks "no elisp block with a defun in the README")
  (dolist (block blocks)
    (with-temp-buffer
      (insert block)
      (eval-buffer nil nil nil nil t))))

(let* ((server (tether-test-connect))
       (first (progn (tether-ask "write hi to out.txt") tether-session)))
  (tether-test-check (stringp first) "tether-ask set no session")
  (tether-test-wait-for server first '("done" "error" "stopped" "awaiting_approval"))
  (tether-test-note 'first_answer (tether-answer))
  (tether-ask "and again?")
  (tether-test-note 'same_session (equal tether-session first))
  (tether-test-wait-for server first '("done" "error" "stopped" "awaiting_approval"))
  (tether-test-note 'second_answer (tether-answer))
  (tether-test-finish server))
