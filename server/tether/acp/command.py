"""``tether acp``'s place on the command line (the serving code loads only when it runs)."""

from __future__ import annotations

import argparse

HELP = """\
An editor that hosts ACP agents starts this itself, e.g. Zed's settings.json:

  "agent_servers": {
    "tether": { "type": "custom", "command": "tether", "args": ["acp"],
                "env": {"TETHER_MODEL": "..."} }
  }

Each session's cwd is its workspace. Sessions live in the same store as `tether serve`'s
(TETHER_HOME): a session started in one editor loads in the other.

environment: as `tether serve` (TETHER_PROVIDER, TETHER_BASE_URL, TETHER_MODEL,
TETHER_API_KEY, TETHER_HOME...). The log goes to stderr; stdout carries ACP only.

exit codes:
  0    the client hung up
  130  interrupted (Ctrl-C)"""


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    command = sub.add_parser(
        "acp",
        help="speak ACP (the Agent Client Protocol) on stdio: Zed, JetBrains, Emacs, Neovim",
        description="Speak the Agent Client Protocol to an editor over stdin and stdout.",
        epilog=HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    command.add_argument(
        "--log-level",
        default="INFO",
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="of the log on stderr (default: INFO)",
    )


def run(args: argparse.Namespace) -> int:
    from tether.acp.serving import serve

    return serve(args.log_level)
