"""A peer's build tool (make, a C++ compiler, nvcc) run with its output into the build's log: the child leads a process
group that any exception kills whole, and a failure is told by the compiler's first error line and the log's end.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
from pathlib import Path


def run_logged(cmd, log, *, env=None, timeout: float = 1800) -> int:
    """Run ``cmd`` with its output into the open file ``log``; its exit code. The child leads a process group of its
    own, and any exception here (a timeout, a stop signal turned into :class:`~gpusp.stopping.Stopped`) kills that
    whole group, so no compiler that make started runs on."""
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        return proc.wait(timeout=timeout)
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise


def failure(log_path: Path, lines: int) -> str:
    """The compiler's first error line in the log (make's last lines only say that a target failed), then the
    log's last ``lines`` lines."""
    text = log_path.read_text(errors="replace").splitlines()
    first = next((line.strip() for line in text if re.search(r"\berror\b", line) and not line.startswith("make")), "")
    tail = "\n".join(text[-lines:]).strip()
    return f"{first} ... {tail}" if first and first not in tail else tail
