"""The training allocator: which library, when the command starts again, and that it really gets preloaded."""
from __future__ import annotations

import ctypes.util
import logging
import os
import subprocess
import sys

import pytest

from mobile_actions.training import allocator


def test_choices_and_bad_values(monkeypatch, tmp_path):
    assert allocator.find_allocator("system") is None
    with pytest.raises(ValueError, match="--allocator: 'tcmaloc' is none of auto, tcmalloc, jemalloc, system"):
        allocator.find_allocator("tcmaloc")
    so = tmp_path / "libmine.so"
    so.write_bytes(b"")
    assert allocator.find_allocator(str(so)) == str(so)
    monkeypatch.setattr(ctypes.util, "find_library", lambda name: None)
    assert allocator.find_allocator("auto") is None
    with pytest.raises(ValueError, match="--allocator jemalloc: not installed"):
        allocator.find_allocator("jemalloc")
    monkeypatch.setattr(ctypes.util, "find_library", lambda name: "libjemalloc.so.2" if name == "jemalloc" else None)
    assert allocator.find_allocator("auto") == "libjemalloc.so.2"   # tcmalloc first, jemalloc when it is missing


def test_starts_the_same_command_again_once(monkeypatch, caplog):
    started = []
    monkeypatch.setattr(ctypes.util, "find_library", lambda name: "libtcmalloc_minimal.so.4" if "tcmalloc" in name else None)
    monkeypatch.setattr(allocator, "preloaded", lambda library: False)
    monkeypatch.setattr(os, "execve", lambda exe, argv, env: started.append((exe, argv, env)))
    monkeypatch.setattr(sys, "orig_argv", ["python", "-m", "mobile_actions.recipes.train_caller", "--data", "x.jsonl"])
    monkeypatch.setenv("LD_PRELOAD", "libmine.so")
    monkeypatch.delenv(allocator.REEXEC_MARK, raising=False)
    allocator.use_allocator("auto")
    (exe, argv, env), = started
    assert exe == sys.executable and argv == [sys.executable, "-m", "mobile_actions.recipes.train_caller", "--data", "x.jsonl"]
    assert env["LD_PRELOAD"] == "libtcmalloc_minimal.so.4 libmine.so" and env[allocator.REEXEC_MARK]
    # started again but the loader did not preload it: say so, never start a third time
    monkeypatch.setenv(allocator.REEXEC_MARK, "libtcmalloc_minimal.so.4")
    with caplog.at_level(logging.WARNING):
        allocator.use_allocator("auto")
    assert len(started) == 1 and "could not be preloaded" in caplog.text
    allocator.use_allocator("system")
    assert len(started) == 1


def test_no_allocator_installed_keeps_malloc_and_says_how(monkeypatch, caplog):
    monkeypatch.setattr(ctypes.util, "find_library", lambda name: None)
    monkeypatch.setattr(os, "execve", lambda *a: pytest.fail("started again without an allocator"))
    with caplog.at_level(logging.WARNING):
        allocator.use_allocator("auto")
    assert "libtcmalloc-minimal4" in caplog.text


@pytest.mark.skipif(sys.platform != "linux" or not (ctypes.util.find_library("tcmalloc_minimal")
                                                    or ctypes.util.find_library("jemalloc")),
                    reason="neither tcmalloc nor jemalloc is installed")
def test_a_started_process_really_runs_on_it():
    code = ("from mobile_actions.training.allocator import find_allocator, preloaded, use_allocator\n"
            "use_allocator('auto'); print(preloaded(find_allocator('auto')))")
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", allocator.REEXEC_MARK)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "True"
