"""Rank output reaching the notebook live: each rank writes fd 1 and 2 to files (C++ output
included) that the launcher tails, echoing complete lines with a ``[rank r]`` prefix.

Owns: tailing the ranks' output files. Must not: import torch or another labs module, or start or
stop ranks."""

from __future__ import annotations

__all__ = ["OutputTail"]


class OutputTail:
    """Tails one rank's output file and echoes complete lines with a rank prefix."""

    def __init__(self, path, prefix, stream, keep=30):
        self.path, self.prefix, self.stream, self.keep = path, prefix, stream, keep
        self.offset, self.partial, self.lines = 0, b"", []

    def pump(self, final=False):
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except FileNotFoundError:
            return
        self.offset += len(data)
        data = self.partial + data
        *complete, self.partial = data.split(b"\n")
        if final and self.partial:
            complete, self.partial = complete + [self.partial], b""
        for raw in complete:
            line = raw.decode("utf-8", errors="replace")
            self.lines = (self.lines + [line])[-self.keep:]
            if self.stream is not None:
                self.stream.write(f"{self.prefix}{line}\n")
        if complete and self.stream is not None:
            self.stream.flush()
