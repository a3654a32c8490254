"""`tether serve` starts without the `mcp` library: it takes about as long to import as all
of pygls, so only a server that starts pays for it (issue 19's start-up row)."""

from __future__ import annotations

import subprocess
import sys


def test_serving_imports_no_mcp_until_a_server_starts() -> None:
    probe = (
        "import sys, tether.app, tether.cli, tether.lsp.server; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'mcp', 'mcp_types', 'acp'}))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
