"""What each command takes, and its help: the environment it reads and its exit codes.

Apart from ``main`` because most of it is the words ``--help`` prints, which change for
reasons of their own.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from tether import __version__
from tether.acp import command as acp_command

PROVIDER_ENV = """\
  TETHER_MODEL        the model's name, sent to the provider
  TETHER_BASE_URL     the provider's endpoint, e.g. http://127.0.0.1:8000/v1 for vLLM
                      (default: OpenAI's with a key, else a local Ollama; Anthropic's)
  TETHER_PROVIDER     openai (any OpenAI-compatible endpoint) or anthropic (default:
                      anthropic when only ANTHROPIC_API_KEY is set, else openai)
  TETHER_API_KEY      the provider's key (else OPENAI_API_KEY or ANTHROPIC_API_KEY)
  TETHER_HOME         where sessions and remembered approvals are kept (default: the
                      user state dir + /tether)"""
TERMINAL_ENV = (
    """\
environment (for this command and the server it starts; an editor's server reads its own):
"""
    + PROVIDER_ENV
    + """
  TETHER_ASK_OPTIONS  a JSON object of settings, sent as initializationOptions
                      {"tether": ...}, e.g. '{"turn": {"tool_budget": 20}}'
  TETHER_DEBUG        when set: show the server's log and this client's traffic
  NO_COLOR            when set: no colour on stderr"""
)
TURN_EXITS = """\
exit codes:
  0    done
  1    an error (the provider's, a bad argument), the turn stopped (repeat guard,
       tool budget), or the server failed
  3    waiting for approval: `tether approve SESSION` or `tether deny SESSION`
  130  cancelled (Ctrl-C cancels the turn cleanly; a second Ctrl-C quits at once)"""
LIST_EXITS = """\
exit codes:
  0    listed
  1    the sessions store (TETHER_HOME/sessions.sqlite3) could not be read"""
FORGET_EXITS = """\
exit codes:
  0    forgotten
  1    no such rule in this workspace, or the store could not be read"""
SERVE_HELP = (
    """\
environment (an editor's initializationOptions {"tether": ...} and its settings
override these):
"""
    + PROVIDER_ENV
    + """

exit codes:
  0    the client sent `shutdown` then `exit`, or closed the connection
  1    `exit` came without `shutdown`, or --tcp could not listen
  2    bad arguments (--allow-remote without --tcp, --tcp on an address that is not
       loopback without --allow-remote)
  130  interrupted (Ctrl-C)"""
)
WORKSPACE_HELP = (
    "the project folder the agent works in (its tools, commands and edits stay inside "
    "it) and whose sessions and rules these are (default: the git root above the "
    "current folder, else the current folder)"
)


REWIND_EXITS = """\
exit codes:
  0    the turn was rewound (files it could not take back are listed, with why)
  1    nothing was done: an unknown session or turn, one that is running or waits for
       approval, or no turn that changed files"""

DOCTOR_EXITS = """\
exit codes:
  0    all is well: commands will run in the sandbox (or it is off by your choice)
  1    something needs you: a bad setting, no model, or no working sandbox (it says why)"""


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="tether",
        description="An LLM coding agent over LSP.",
        epilog="`tether COMMAND --help` lists each command's environment and exit codes.",
    )
    top.add_argument("--version", action="version", version=f"tether {__version__}")
    sub = top.add_subparsers(dest="command", required=True)
    _serve(
        sub.add_parser(
            "serve",
            help="speak LSP (stdio by default)",
            description="Speak LSP to an editor, over stdio (or --tcp).",
            epilog=SERVE_HELP,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
    )
    acp_command.add(sub)

    def at_workspace(name: str, says: str, exits: str) -> argparse.ArgumentParser:
        command = sub.add_parser(
            name,
            help=says,
            description=f"{says[0].upper()}{says[1:]}.",
            epilog=f"{TERMINAL_ENV}\n\n{exits}",
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        command.add_argument("--workspace", type=Path, metavar="DIR", help=WORKSPACE_HELP)
        return command

    _terminal_commands(at_workspace)
    return top


def _terminal_commands(at_workspace: Callable[[str, str, str], argparse.ArgumentParser]) -> None:
    ask = at_workspace(
        "ask",
        "ask tether from the terminal: the answer on stdout, the calls on stderr",
        TURN_EXITS,
    )
    ask.add_argument("prompt", nargs="+")
    ask.add_argument("--session", help="continue this session (an ID from `tether sessions`)")
    at_workspace("sessions", "list this workspace's sessions", LIST_EXITS)
    at_workspace("rules", "list the approvals this workspace remembers", LIST_EXITS)
    at_workspace(
        "doctor",
        "check what tether finds here: its settings, git, ripgrep, and the sandbox (its probe)",
        DOCTOR_EXITS,
    )
    forget = at_workspace(
        "forget", "forget a remembered approval (an ID from `tether rules`)", FORGET_EXITS
    )
    forget.add_argument("rule", metavar="ID")
    rewind = at_workspace(
        "rewind",
        "take a turn back: its change to the files (your edits since stay), its conversation, "
        "or both",
        REWIND_EXITS,
    )
    rewind.add_argument("session")
    rewind.add_argument(
        "--turn",
        type=int,
        help="which turn (1: the first prompt); default: the last that changed files",
    )
    rewind.add_argument("--what", choices=["files", "conversation", "both"], default="files")
    for verb, says in (("approve", "allow"), ("deny", "deny")):
        decide = at_workspace(verb, f"{says} a parked turn's calls, then let it run on", TURN_EXITS)
        decide.add_argument("session")
        decide.add_argument("--call", action="append", dest="calls", help="only this call id")
        if verb == "approve":
            decide.add_argument(
                "--remember",
                choices=["session", "workspace"],
                help="also remember the approval, as `Allow always` does",
            )
        else:
            decide.add_argument("--reason", help="why: the model reads it")


def _serve(serve: argparse.ArgumentParser) -> None:
    serve.add_argument("--stdio", action="store_true", help="the default; accepted for editors")
    serve.add_argument(
        "--tcp",
        metavar="HOST:PORT",
        help="listen on TCP instead of stdio, on a loopback address (PORT 0: a free port). "
        "Prints `listening on HOST:PORT` and the token file (STATE_DIR/tcp-token, mode 0600) "
        "to stderr; a connection is served only if its initialize sends that token as "
        "initializationOptions.tether.token",
    )
    serve.add_argument(
        "--allow-remote",
        action="store_true",
        help="let --tcp listen on an address that is not loopback: then anyone who can reach "
        "it and holds the token runs commands, over an unencrypted connection",
    )
    serve.add_argument(
        "--log-level",
        default="INFO",
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="of the log on stderr (default: INFO)",
    )
