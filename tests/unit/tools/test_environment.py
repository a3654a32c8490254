"""The environment children get, and settings this process alone takes from its own."""

from __future__ import annotations

import os
import threading

from tether.tools.environment import child_environment, for_this_process


def test_a_setting_for_this_process_is_gone_after_its_block_and_no_child_sees_it() -> None:
    os.environ["KEPT_AS_IT_WAS"] = "before"
    taken: list[dict[str, str]] = []
    child = threading.Thread(target=lambda: taken.append(child_environment(())))
    with for_this_process(ONLY_HERE_X="1", KEPT_AS_IT_WAS="during"):
        assert os.environ["ONLY_HERE_X"] == "1"
        child.start()  # a child's environment taken meanwhile waits for the block's end
        child.join(0.2)
        assert child.is_alive()
    child.join(5)
    assert "ONLY_HERE_X" not in os.environ and os.environ["KEPT_AS_IT_WAS"] == "before"
    assert "ONLY_HERE_X" not in taken[0] and taken[0]["KEPT_AS_IT_WAS"] == "before"
    del os.environ["KEPT_AS_IT_WAS"]
