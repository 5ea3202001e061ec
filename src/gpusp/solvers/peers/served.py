"""A peer's driver served over a pipe (gpusp's drivers of Gunrock and GAPBS): :class:`Served` starts one on a graph it
loads once, sends it one command per line and reads its one JSON line of answer, and stops it, also when gpusp's
process ends. Design: docs/peers.md.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import weakref
from pathlib import Path

from ...errors import SolverError, SolverUnavailable

PR_SET_PDEATHSIG = 1  # Linux prctl: the signal a process gets when its parent ends
QUIT_TIMEOUT_S = 30


def _die_with_parent() -> None:
    """Run in the driver's process before it starts (Linux): a SIGKILL when gpusp's process ends, so that a solve
    killed at its time budget never leaves the driver running."""
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def _stop(proc: subprocess.Popen, stderr) -> None:
    """End a driver process: ``quit`` on its stdin, then a kill if it does not exit; close its files."""
    if proc.poll() is None:
        try:
            proc.stdin.write("quit\n")
            proc.stdin.close()
            proc.wait(timeout=QUIT_TIMEOUT_S)
        except (OSError, ValueError, subprocess.TimeoutExpired):
            proc.kill()
            proc.wait()
    for stream in (proc.stdin, proc.stdout, stderr):
        if stream and not stream.closed:
            stream.close()


class Served:
    """One driver process: ``cmd`` started with its standard error kept in ``stderr_path``; ``name`` names it in
    errors. An exit with status ``unavailable_status`` (the driver found nothing it can run on) raises
    SolverUnavailable, any other exit SolverError, each with the driver's last words."""

    def __init__(self, cmd, stderr_path, name: str, *, env=None, unavailable_status: int | None = None):
        self.name = name
        self.unavailable_status = unavailable_status
        self.stderr = open(Path(stderr_path), "w+")
        self.proc = subprocess.Popen([str(c) for c in cmd], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.stderr, text=True, bufsize=1, env=env,
                                     preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None)
        self.stop = weakref.finalize(self, _stop, self.proc, self.stderr)

    def ask(self, command: str | None) -> dict:
        """Send ``command`` (None: only read) and return the driver's JSON answer; errors name the driver's words."""
        proc = self.proc
        try:
            if command is not None:
                proc.stdin.write(command + "\n")
                proc.stdin.flush()
            line = proc.stdout.readline()
        except (BrokenPipeError, OSError, ValueError):
            line = ""
        if not line:
            try:
                proc.wait(timeout=QUIT_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            self.stderr.seek(0)
            said = " | ".join(self.stderr.read().strip().splitlines()[-3:]) or "no message"
            error = SolverUnavailable if proc.returncode == self.unavailable_status else SolverError
            raise error(f"{self.name} exited {proc.returncode}: {said}")
        try:
            reply = json.loads(line)
        except ValueError:
            raise SolverError(f"{self.name} answered {line.strip()[:200]!r}, not a JSON line") from None
        if "error" in reply:
            raise SolverError(f"{self.name}: {reply['error']}")
        return reply
