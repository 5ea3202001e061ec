"""Stop signals turned into exceptions, so that a stopped job or build cleans up what it began (a staging folder,
a temporary file, a child process) instead of dying in the middle: :class:`StopOnSignals` raises :class:`Stopped`
on the first SIGTERM or SIGHUP within its ``with`` block; :class:`SignalScope` is the handler swap it rests on.
"""

from __future__ import annotations

import signal
import threading

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Stopped(SystemExit):
    """The process was told to stop (SIGTERM, SIGHUP) while it ran a job or a build: nothing of it is kept, and it
    exits with 128 + the signal's number, as a shell reports a process ended by that signal."""

    def __init__(self, signum: int):
        super().__init__(128 + signum)
        self.signum = signum

    def __str__(self) -> str:
        return f"stopped by {signal.Signals(self.signum).name}: the run was not recorded"


class SignalScope:
    """Within its ``with`` block, ``_handle`` gets ``signums``; the handlers before are put back after it.
    A signal the process ignores stays ignored (``nohup`` ignores SIGHUP, a shell's background job SIGINT),
    and only the main thread can catch signals: elsewhere nothing is installed."""

    signums: tuple = STOP_SIGNALS

    def __enter__(self):
        self._saved = {}
        if threading.current_thread() is threading.main_thread():
            self._saved = {s: signal.signal(s, self._handle) for s in self.signums
                           if signal.getsignal(s) is not signal.SIG_IGN}
        return self

    def __exit__(self, *exc) -> None:
        for s, handler in self._saved.items():
            signal.signal(s, handler)

    def _handle(self, signum, frame) -> None:
        raise NotImplementedError


class StopOnSignals(SignalScope):
    """Turn the first of ``signums`` into :class:`Stopped` (later ones are ignored, so that the clean-up
    it starts runs to its end)."""

    def __init__(self, *signums):
        self.signums = signums
        self.raised = False

    def _handle(self, signum, frame) -> None:
        if not self.raised:
            self.raised = True
            raise Stopped(signum)
