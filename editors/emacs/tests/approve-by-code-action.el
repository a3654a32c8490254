;;; approve-by-code-action.el --- stock eglot: a parked call allowed by a code action  -*- lexical-binding: t -*-

;; With dialogs off (approval.dialogs false, from eglot-server-programs'
;; :initializationOptions), the command parks at once: the turn ends awaiting_approval.
;; `eglot-code-actions' on the open buffer offers Allow and Deny for it; the person picks
;; Allow, eglot executes the action's command (tether.approve), the command runs and the
;; turn ends done.

(load (expand-file-name "helper.el" (file-name-directory load-file-name)) nil t)

(let* ((server (tether-test-connect '(:approval (:dialogs :json-false))))
       (started (tether-test-command server "tether.run"
                                     (list :prompt "write hi to out.txt" :wait :json-false)))
       (session (plist-get started :session)))
  (tether-test-check (stringp session) "tether.run named no session: %S" started)
  (tether-test-note 'parked (tether-test-wait-for server session
                                                  '("awaiting_approval" "done" "error")))
  (setq tether-test-answer "Allow:")
  ;; As M-x eglot-code-actions does: a key, not a mouse click, brought it here.
  (let ((last-nonmenu-event ?\r))
    (eglot-code-actions (point-min) (point-max) nil t))
  (tether-test-note 'status (tether-test-wait-for server session
                                                  '("done" "error" "stopped" "awaiting_approval")))
  (tether-test-finish server))
