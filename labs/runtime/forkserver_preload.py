"""Imported first by the launcher's forkserver, and nowhere else (see ``labs.runtime.forkserver``).

A Ctrl-C in a terminal, or Jupyter's interrupt button, sends SIGINT to the kernel's whole
process group, the forkserver included. The server starts with SIGINT blocked (the launcher
blocks it around the start); here, before the slow ``import torch``, it ignores SIGINT for
good and unblocks it. The ranks it forks inherit the ignore: the launcher stops them itself.

Must not: do anything but ignore SIGINT, or be imported by anything but the forkserver.
"""

import signal

__all__ = []

signal.signal(signal.SIGINT, signal.SIG_IGN)
if hasattr(signal, "pthread_sigmask"):
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
