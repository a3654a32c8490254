"""``--tcp``'s address check and token file (``lsp/tcp.py``); the door itself is tested end
to end in ``tests/e2e/test_tcp.py``."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tether.lsp.tcp import Address, BadAddress, token_file

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX modes")


@pytest.mark.parametrize(
    ("text", "hosts", "port"),
    [
        ("127.0.0.1:0", ["127.0.0.1"], 0),
        ("127.0.0.1:8765", ["127.0.0.1"], 8765),
        ("127.9.9.9:1", ["127.9.9.9"], 1),
        ("[::1]:0", ["::1"], 0),
        ("::1:5", ["::1"], 5),
    ],
)
def test_loopback_addresses_are_taken(text: str, hosts: list[str], port: int) -> None:
    assert Address.parse(text, allow_remote=False) == Address(hosts, port)


def test_localhost_binds_only_loopback_and_port_zero_one_address() -> None:
    address = Address.parse("localhost:0", allow_remote=False)

    assert len(address.hosts) == 1 and address.port == 0


@pytest.mark.parametrize("text", ["0.0.0.0:0", "[::]:0", "192.0.2.1:80", "10.1.2.3:0"])
def test_other_addresses_need_allow_remote(text: str) -> None:
    with pytest.raises(BadAddress, match=r"not a loopback address.*--allow-remote"):
        Address.parse(text, allow_remote=False)
    assert Address.parse(text, allow_remote=True).hosts


@pytest.mark.parametrize("text", ["8080", ":8080", "localhost:", "localhost:http", "h:70000"])
def test_malformed_addresses_say_what_is_wanted(text: str) -> None:
    with pytest.raises(BadAddress, match="HOST:PORT"):
        Address.parse(text, allow_remote=False)


@posix_only
def test_the_token_file_is_made_once_readable_only_by_its_owner(tmp_path: Path) -> None:
    state = tmp_path / "new" / "state"

    path = token_file(state)
    token = path.read_text()

    assert path == state / "tcp-token"
    assert path.stat().st_mode & 0o777 == 0o600
    assert len(token.strip()) >= 32
    assert token_file(state) == path and path.read_text() == token  # kept
    assert [p.name for p in state.iterdir()] == ["tcp-token"]  # no temporary file left


@posix_only
def test_a_token_others_could_read_is_replaced(tmp_path: Path) -> None:
    path = tmp_path / "tcp-token"
    path.write_text("leaked-token\n")
    path.chmod(0o644)

    assert token_file(tmp_path) == path
    assert "leaked-token" not in path.read_text() and path.stat().st_mode & 0o777 == 0o600


@posix_only
def test_a_symlinked_token_file_is_replaced_not_followed(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text("someone else's token\n")
    elsewhere.chmod(0o600)
    (tmp_path / "state").mkdir()
    path = tmp_path / "state" / "tcp-token"
    os.symlink(elsewhere, path)

    token_file(tmp_path / "state")

    assert not path.is_symlink() and "someone else" not in path.read_text()
    assert elsewhere.read_text() == "someone else's token\n"


def test_an_empty_token_file_gets_a_token(tmp_path: Path) -> None:
    path = tmp_path / "tcp-token"
    path.write_text("")
    if sys.platform != "win32":
        path.chmod(0o600)

    assert token_file(tmp_path).read_text().strip()
