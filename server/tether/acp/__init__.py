"""The ACP front: tether as an Agent Client Protocol agent (Zed, JetBrains, Emacs, Neovim).

A sibling of ``lsp/``: it speaks ACP's newline-delimited JSON-RPC on stdio and calls the
same ``Service`` (``app.py`` builds it), with ACP's own implementations of the agent's seams.
"""
