;;; allow-in-the-dialog.el --- a turn from stock eglot: no waiting, the dialog, the end  -*- lexical-binding: t -*-

;; The provider stub is scripted with one `command' call, then an answer that takes
;; longer to write than jsonrpc's request timeout (10 s).  eglot starts the turn with
;; "wait": false and gets the session at once; the approval dialog reaches eglot's own
;; window/showMessageRequest handler, where the person picks Allow; the command runs;
;; the turn's end is read from tether.sessions and tether.history (eglot ignores
;; tether/update).

(load (expand-file-name "helper.el" (file-name-directory load-file-name)) nil t)

(defvar tether-test-started nil "When the turn was started, as (SECONDS).")

(let* ((server (tether-test-connect))
       (_ (setq tether-test-started (list (float-time))))
       (timed (tether-test-timed
               (lambda ()
                 (tether-test-command server "tether.run"
                                      (list :prompt "write hi to out.txt" :wait :json-false)))))
       (started (car timed))
       (session (plist-get started :session)))
  (tether-test-note 'started `((session . ,session) (status . ,(plist-get started :status))))
  (tether-test-note 'run_seconds (cdr timed))
  (tether-test-note 'request_timeout jsonrpc-default-request-timeout)
  (tether-test-check (stringp session) "tether.run named no session: %S" started)
  (let* ((status (tether-test-wait-for server session '("done" "error" "stopped"
                                                          "cancelled" "awaiting_approval")
                                       60))
         (messages (append (plist-get (tether-test-history server session) :messages) nil))
         (tool (seq-find (lambda (m) (equal (plist-get m :role) "tool")) messages))
         (last (car (last messages))))
    (tether-test-note 'status status)
    (tether-test-note 'turn_seconds (- (float-time) (car tether-test-started)))
    (tether-test-note 'tool `((status . ,(plist-get tool :status))
                              (content . ,(plist-get tool :content))))
    (tether-test-note 'answer (plist-get last :content)))
  (tether-test-finish server))
