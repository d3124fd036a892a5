"""The memory allocator a training process runs with, chosen before it starts.

A CPU training step allocates and frees thousands of activation-sized blocks, each of a slightly
different size from step to step (the rows' lengths vary). glibc's malloc serves them from free lists
that fragment as a run goes on: in a profile of the caller recipe its share of the time grew from ~7 %
to ~21 % over 70 steps, and a process 150 steps old ran the same steps 1.4x slower than a fresh one.
tcmalloc (per-size free lists, no walking) ran them 1.4x faster than a fresh glibc process and 2x
faster than an old one; jemalloc 1.07x (docs/experiments.md, "The allocator").

The allocator can only be swapped at process start (`LD_PRELOAD`), so `use_allocator` starts the same
command again, in the same process id, with it preloaded. It is torch-free: it runs before anything
heavy is imported.
"""
from __future__ import annotations

import ctypes.util
import logging
import os
import sys

logger = logging.getLogger(__name__)

CHOICES = ("auto", "tcmalloc", "jemalloc", "system")
LIBRARIES = {"tcmalloc": ("tcmalloc_minimal", "tcmalloc"), "jemalloc": ("jemalloc",)}
REEXEC_MARK = "MOBILE_ACTIONS_ALLOCATOR"   # set in the started-again process: never start a third time
HINT = ("glibc's malloc slows a long CPU run as its heap fragments (up to 2x after 150 steps); "
        "install tcmalloc (apt install libtcmalloc-minimal4) and training preloads it, or --allocator system to silence this")


def find_allocator(choice: str) -> str | None:
    """The shared library of `choice` (a name from CHOICES, or a path to a .so) as the loader finds it, or None
    (system malloc, or not installed). auto: tcmalloc, else jemalloc."""
    if choice == "system":
        return None
    if choice not in CHOICES:
        if not os.path.isfile(choice):
            raise ValueError(f"--allocator: {choice!r} is none of {', '.join(CHOICES)} and not a file")
        return choice
    for kind in (("tcmalloc", "jemalloc") if choice == "auto" else (choice,)):
        for name in LIBRARIES[kind]:
            found = ctypes.util.find_library(name)
            if found:
                return found
    if choice != "auto":
        raise ValueError(f"--allocator {choice}: not installed (no lib{LIBRARIES[choice][0]}.so found)")
    return None


def preloaded(library: str) -> bool:
    """Whether `library` is already in this process (preloaded by the user, or by an earlier start)."""
    stem = os.path.basename(library).split(".so")[0]
    try:
        with open("/proc/self/maps") as maps:
            return any(stem in line for line in maps)
    except OSError:
        return stem in os.environ.get("LD_PRELOAD", "")


def use_allocator(choice: str) -> None:
    """Start this process's command again with `choice`'s allocator preloaded, unless it is loaded already
    or there is none (then glibc's malloc stays and the hint is logged). Call it only from the process's own
    entry point, before the work starts: the command is run again from its first line (`sys.orig_argv`)."""
    library = find_allocator(choice)
    if library is None:
        if choice == "auto" and sys.platform == "linux":
            logger.warning(HINT)
        return
    if preloaded(library) or sys.platform != "linux":
        return
    if os.environ.get(REEXEC_MARK):   # started again, yet not loaded: the loader could not preload it
        logger.warning("memory allocator: %s could not be preloaded; glibc's malloc stays", library)
        return
    env = {**os.environ, REEXEC_MARK: library,
           "LD_PRELOAD": " ".join(p for p in (library, os.environ.get("LD_PRELOAD", "")) if p)}
    logger.info("memory allocator: %s (preloaded; --allocator system keeps glibc's malloc)", library)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], env)
