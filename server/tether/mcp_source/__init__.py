"""MCP servers as a second source of tools: each server's tools, wrapped as tether tools
(``tool.py``), from servers started in the background (``servers.py``).

The package is not named ``mcp`` so that ``import mcp`` here is the ``mcp`` library.
"""

from tether.mcp_source.servers import McpServers

__all__ = ["McpServers"]
