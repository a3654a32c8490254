;;; helper.el --- what the eglot scenarios share  -*- lexical-binding: t -*-

;; Stock eglot, no plugin: the server is named in `eglot-server-programs' as a person's
;; configuration would (editors/emacs/README.md), and everything goes through eglot's own
;; handlers and `jsonrpc-request'.  A scenario is run by tests/editors/test_eglot.py as
;;
;;     emacs --batch -l SCENARIO.el
;;
;; in a git workspace holding notes.txt, with `tether' on PATH and the provider stub's
;; address in TETHER_BASE_URL.  It writes what it saw, as JSON, to the file named by
;; TETHER_SCENARIO_REPORT (the driver checks the rest from outside), and exits non-zero
;; when an expectation fails.

(require 'cl-lib)
(require 'eglot)
(require 'json)
(require 'subr-x)

(defvar tether-test-report nil
  "What the scenario saw, an alist written as JSON at the end.")

(defvar tether-test-dialogs nil
  "The dialogs eglot showed (window/showMessageRequest), oldest first:
each an alist of the prompt and the choices.")

(defvar tether-test-answer "Allow"
  "What the person picks when eglot asks: the first choice that begins with it.")

(defun tether-test-fail (format-string &rest args)
  "Say what failed and leave Emacs with exit code 1."
  (message "FAIL: %s" (apply #'format format-string args))
  (kill-emacs 1))

(defun tether-test-check (ok format-string &rest args)
  "Fail with FORMAT-STRING and ARGS unless OK."
  (unless ok
    (apply #'tether-test-fail format-string args)))

(defun tether-test-note (key value)
  "Keep VALUE under KEY in the report."
  (setq tether-test-report (append tether-test-report (list (cons key value)))))

;; eglot asks with `completing-read': the server's dialog (its window/showMessageRequest
;; handler) and the code action menu (`eglot-code-actions').  The person answers here.
(advice-add 'completing-read :override
            (lambda (prompt collection &rest _)
              (let ((choices (all-completions "" collection)))
                (setq tether-test-dialogs
                      (append tether-test-dialogs
                              (list `((prompt . ,(substring-no-properties prompt))
                                      (choices . ,(vconcat choices))))))
                (or (seq-find (lambda (choice) (string-prefix-p tether-test-answer choice))
                              choices)
                    (tether-test-fail "nothing to pick for %S in %S" tether-test-answer
                                      choices)))))
(advice-add 'y-or-n-p :override (lambda (&rest _) t))

(defun tether-test-connect (&optional settings)
  "Visit notes.txt and connect eglot to `tether serve' as configured, with SETTINGS
(a plist) as its initializationOptions; the server."
  (setq eglot-server-programs
        `((text-mode . ("tether" "serve"
                        ,@(when settings `(:initializationOptions (:tether ,settings)))))))
  (setq eglot-sync-connect t)           ; in batch, wait for `initialize' here
  (find-file (expand-file-name "notes.txt"))
  (tether-test-check (eq major-mode 'text-mode) "notes.txt is in %s" major-mode)
  (call-interactively #'eglot)
  (let ((server (eglot-current-server)))
    (tether-test-check server "eglot did not connect")
    (tether-test-check
     (seq-contains-p (eglot--server-capable :executeCommandProvider :commands) "tether.run")
     "the server does not offer tether.run")
    server))

(defun tether-test-command (server command argument)
  "COMMAND's result, through workspace/executeCommand, ARGUMENT its one object."
  (jsonrpc-request server :workspace/executeCommand
                   (list :command command :arguments (vector argument))))

(defun tether-test-timed (thunk)
  "Call THUNK; (RESULT . SECONDS)."
  (let* ((start (float-time))
         (result (funcall thunk)))
    (cons result (- (float-time) start))))

(defun tether-test-status (server session)
  "SESSION's status as `tether.sessions' lists it."
  (let ((listed (plist-get (tether-test-command server "tether.sessions" eglot--{})
                           :sessions)))
    (cl-loop for row across listed
             when (equal (plist-get row :id) session)
             return (plist-get row :status))))

(defun tether-test-wait-for (server session statuses &optional seconds)
  "Poll SESSION until its status is one of STATUSES (eglot ignores `tether/update');
the status.  Fail after SECONDS (default 30)."
  (let ((deadline (+ (float-time) (or seconds 30)))
        status)
    (while (not (member (setq status (tether-test-status server session)) statuses))
      (when (> (float-time) deadline)
        (tether-test-fail "session %s still %s after %ss" session status (or seconds 30)))
      (accept-process-output nil 0.05))
    status))

(defun tether-test-history (server session)
  "SESSION's transcript, `tether.history' as a plist."
  (tether-test-command server "tether.history" (list :session session)))

(defun tether-test-finish (server)
  "Write the report, shut the server down and leave Emacs with exit code 0."
  (tether-test-note 'dialogs (vconcat tether-test-dialogs))
  (let ((path (getenv "TETHER_SCENARIO_REPORT")))
    (when path
      (with-temp-file path
        (insert (json-encode tether-test-report)))))
  (eglot-shutdown server)
  (kill-emacs 0))

(provide 'helper)
;;; helper.el ends here
