"""Render worker processes: the guarantee behind the time limit and the memory cap.

In-process checks cannot stop one C call (``sorted`` of ten million items, ``'%0999999999d' % 1``) or
bound memory, so templates are compiled and rendered in separate worker processes:

* each worker runs ``python -m workbench.template.worker_main`` (a fresh interpreter, safe to start from
  a process that imported torch or runs threads) under ``RLIMIT_AS`` = the memory cap;
* the caller waits for a reply until its deadline (time limit + ``KILL_GRACE``), then kills the worker
  and starts a fresh one, so C-level work inside filters is bounded too;
* workers stay alive between renders and keep compiled templates, so a render costs one pipe round trip;
* a worker dies with its parent: it exits when its request pipe closes, and the kernel ends it
  (``RLIMIT_CPU``, re-armed per request) if a render outlives its deadline by two seconds of CPU time with
  nobody left to kill it;
* :func:`RenderPool.cancel` kills busy workers so a caller (the TUI on quit) never waits for a render.

Replies are text or JSON, never pickle: the worker runs untrusted templates.
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import itertools
import json
import math
import os
import pickle
import select
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path
from typing import Any

from workbench.template import limits
from workbench.template.errors import (
    CompileTimeout,
    RenderCancelled,
    RenderMemoryLimit,
    RenderTimeout,
    TemplateError,
    from_wire,
    until_timeouts,
)
from workbench.template.worker_main import _HEADER

# Source ids the caller remembers per worker (the worker remembers twice as many).
_KNOWN_SOURCES = 128
# Largest reply accepted from a worker (UTF-8 bytes of one render).
MAX_REPLY_BYTES = 256 << 20
# Most workers alive at once (callers beyond that wait for one to be free).
MAX_WORKERS = 4
# Longest wait for a new worker's interpreter and imports (~0.2 s; more on a loaded machine).
STARTUP_TIMEOUT = 60.0
_PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])


def _start(command: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
    """Start a worker from the main thread or from one long-lived thread, never from a passing one.

    The worker asks Linux to kill it when its parent dies, and Linux means the parent *thread*: a worker
    started from a short-lived thread (a TUI task) would die with that thread.
    """

    def popen() -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            close_fds=True,
            # ``-m`` puts the working directory first on sys.path: started from a folder holding another
            # ``workbench`` (another checkout), the worker would run that one's code and protocol
            cwd=_PACKAGE_ROOT,
        )

    if threading.current_thread() is threading.main_thread():
        return popen()
    global _spawner
    with _spawner_lock:
        if _spawner is None:
            _spawner = ThreadPoolExecutor(max_workers=1, thread_name_prefix="workbench-render-spawner")
    return _spawner.submit(popen).result()


_spawner: ThreadPoolExecutor | None = None
_spawner_lock = threading.Lock()


class _WorkerDied(Exception):
    """The worker closed its pipe or was killed before replying."""


class _Worker:
    """One worker process and the sources it has compiled (by id)."""

    def __init__(self, memory_limit: int) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (_PACKAGE_ROOT, env.get("PYTHONPATH", "")) if p)
        command = [
            sys.executable,
            "-m",
            "workbench.template.worker_main",
            str(memory_limit),
            str(os.getpid()),
        ]
        self.proc = _start(command, env)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._out = self.proc.stdin.fileno()
        self._in = self.proc.stdout.fileno()
        os.set_blocking(self._out, False)
        self._readable = select.poll()
        self._readable.register(self._in, select.POLLIN | select.POLLHUP | select.POLLERR)
        self._writable = select.poll()
        self._writable.register(self._out, select.POLLOUT | select.POLLHUP | select.POLLERR)
        self.known: collections.OrderedDict[str, int] = collections.OrderedDict()
        self._buffer = bytearray()  # replies read ahead (a batch's)
        self.cancelled = False
        self.dead = False
        self.ready = False

    def kill(self) -> None:
        self.dead = True
        with contextlib.suppress(OSError):
            self.proc.kill()
        with contextlib.suppress(Exception):
            self.proc.wait(timeout=5)
        for stream in (self.proc.stdin, self.proc.stdout):
            with contextlib.suppress(OSError):
                if stream is not None:
                    stream.close()

    def wait_ready(self) -> None:
        """Wait for the worker's imports (not counted in any template's time limit)."""
        if self.ready:
            return
        status, _ = self.reply(time.monotonic() + STARTUP_TIMEOUT)
        if status != b"R":
            raise _WorkerDied
        self.ready = True

    def exchange(self, request: bytes, deadline: float) -> tuple[bytes, bytes]:
        """Send one request and wait for its reply until ``deadline`` (``TimeoutError`` after it).

        The fast path is one write, one poll and one read: replies of a few KB arrive in one chunk.
        """
        self.send(request, deadline)
        return self.reply(deadline)

    def reply(self, deadline: float) -> tuple[bytes, bytes]:
        """The next reply (status byte, payload), waiting until ``deadline`` (``TimeoutError`` after it).
        Bytes read past it (a batch's next replies, sent as each call is done) stay for the next call."""
        self._receive(_HEADER.size, deadline)
        size = _HEADER.unpack_from(self._buffer)[0]
        if size > MAX_REPLY_BYTES or size < 1:
            raise RenderMemoryLimit(
                f"render output too large ({size:,} bytes; limit {MAX_REPLY_BYTES:,})", kind="limit"
            )
        end = _HEADER.size + size
        self._receive(end, deadline)
        frame = bytes(self._buffer[_HEADER.size : end])
        del self._buffer[:end]
        return frame[:1], frame[1:]

    def send(self, request: bytes, deadline: float) -> None:
        self._send(_HEADER.pack(len(request)) + request, deadline)

    def _send(self, data: bytes, deadline: float) -> None:
        view = memoryview(data)
        while view:
            try:
                view = view[os.write(self._out, view) :]
            except BlockingIOError:
                self._wait(self._writable, deadline)
            except OSError:
                raise _WorkerDied from None

    def _receive(self, size: int, deadline: float) -> None:
        """Read until the buffer holds at least ``size`` bytes."""
        while len(self._buffer) < size:
            self._wait(self._readable, deadline)
            try:
                chunk = os.read(self._in, max(size - len(self._buffer), 1 << 16))
            except OSError:
                raise _WorkerDied from None
            if not chunk:
                raise _WorkerDied
            self._buffer += chunk

    def _wait(self, poller: select.poll, deadline: float) -> None:
        """Block until the pipe is ready or the deadline passes; short steps so a kill is noticed."""
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            if poller.poll(min(left, 0.25) * 1000):
                return


def _call_deadline(time_limit: float, deadline: float) -> float:
    """When to stop waiting for one call of a batch: its own time limit from now, or the batch's deadline
    if that comes first, and the grace a worker gets to reply past it."""
    return min(time.monotonic() + time_limit, deadline) + limits.KILL_GRACE


def _out_of_batch_time(time_limit: float) -> RenderTimeout:
    return RenderTimeout(
        f"render timed out after {time_limit:g} s (the batch ran out of time)", kind="timeout"
    )


class RenderPool:
    """The worker processes of this process, started on demand, killed on overrun, cancel and exit."""

    def __init__(self, memory_limit: int = limits.DEFAULT_MEMORY_LIMIT) -> None:
        self.memory_limit = memory_limit
        self._lock = threading.Condition()
        self._idle: list[_Worker] = []
        self._busy: set[_Worker] = set()
        self._ids = itertools.count(1)
        self.started = 0  # workers started so far (for tests and benchmarks)
        # Seconds spent waiting for new workers' imports, per thread: a render budget does not count them.
        self._startup = threading.local()

    # ---------------------------------------------------------------------------------------- public
    def compile(self, source: str, time_limit: float) -> None:
        """Compile ``source`` in a worker (bounded by ``time_limit``); raises its :class:`TemplateError`."""
        with self._worker() as worker:
            self._compile_on(worker, source, time_limit)

    def render(
        self,
        source: str,
        context: dict[str, Any],
        time_limit: float,
        now: datetime | None,
        max_output: int | None = None,
    ) -> str:
        """Compile (once per worker) and render ``source`` with ``context``; the deadline covers both.
        ``max_output``: the most characters the worker may send back (it stops the render past it)."""
        with self._worker() as worker:
            started = time.monotonic()
            if source not in worker.known:
                self._compile_on(worker, source, time_limit)
            left = time_limit - (time.monotonic() - started)
            if left <= 0:
                raise RenderTimeout(
                    f"render timed out while compiling the template (time limit {time_limit:g} s)",
                    kind="timeout",
                )
            sid = worker.known[source]
            worker.known.move_to_end(source)
            args = {"time_limit": left, "context": context, "now": now, "max_output": max_output}
            status, payload = self._call(worker, ("render", sid, None, args), left, time_limit)
            if status == b"U":  # the worker forgot the source: send it again
                args["time_limit"] = max(time_limit - (time.monotonic() - started), 0.001)
                status, payload = self._call(worker, ("render", sid, source, args), left, time_limit)
            return self._result(worker, status, payload)

    def render_batch(
        self,
        source: str,
        contexts: list[dict[str, Any]],
        time_limit: float,
        now: datetime | None,
        max_output: int | None = None,
        total: float | None = None,
        stop_after_timeouts: int | None = None,
    ) -> list[str | TemplateError]:
        """Render several contexts of one template with one request, each under ``time_limit``.

        A compile failure raises; a render failure is returned in its slot.  The worker replies to each
        call as it is done and each is waited for as one render is (its own time limit), so a call that
        has to be stopped (a C-level bomb) or that kills the worker (the memory cap) costs what it cost
        alone: it gets that error, and the calls after it are made one at a time, so every other call
        still gets its own result.  ``max_output`` caps each call's output; ``total`` (seconds, None: no
        bound but each call's) bounds the whole batch, the one-at-a-time calls included (calls past it
        get :class:`RenderTimeout`).  ``stop_after_timeouts``: once that many calls have run out of time, the
        rest are not rendered (each gets a :class:`RenderTimeout` saying so), as a caller rendering one at a
        time would stop.
        """
        deadline = time.monotonic() + total if total is not None else math.inf
        outcomes: list[str | TemplateError] = []
        with self._worker() as worker:
            if source not in worker.known:
                self._compile_on(worker, source, time_limit)
            sid = worker.known[source]
            worker.known.move_to_end(source)
            args = {
                "time_limit": time_limit,
                "calls": contexts,
                "now": now,
                "max_output": max_output,
                "stop_after_timeouts": stop_after_timeouts,
            }
            body = pickle.dumps(("batch", sid, source, args), protocol=pickle.HIGHEST_PROTOCOL)
            try:
                worker.send(body, _call_deadline(time_limit, deadline))
                for _ in contexts:  # each call waited for as one render: its own time limit
                    status, payload = worker.reply(_call_deadline(time_limit, deadline))
                    if status != b"I":
                        self._result(worker, status, payload)  # raises the worker's error
                    outcomes.append(self._item(worker, payload))
            except (TimeoutError, _WorkerDied, RenderMemoryLimit) as exc:
                failure = self._failure(worker, exc, time_limit)
                if isinstance(failure, RenderCancelled):
                    raise failure from None
                if isinstance(failure, RenderTimeout) and time.monotonic() >= deadline:
                    failure = _out_of_batch_time(time_limit)
                outcomes.append(failure)  # the call the worker was on when it was stopped
        if len(outcomes) < len(contexts):
            # The rest one at a time, as a caller rendering one at a time would go on after that call.
            seen = sum(isinstance(o, RenderTimeout) for o in outcomes)
            stop = None if stop_after_timeouts is None else max(stop_after_timeouts - seen, 0)
            outcomes += until_timeouts(
                lambda context: self._one(source, context, time_limit, now, max_output, deadline),
                contexts[len(outcomes) :],
                stop,
            )
        return outcomes

    def _item(self, worker: _Worker, payload: bytes) -> str | TemplateError:
        """One call's outcome in a batch reply."""
        try:
            item = json.loads(payload)
            return str(item["text"]) if "text" in item else from_wire(item["error"])
        except (ValueError, TypeError, KeyError):
            worker.kill()
            raise TemplateError("the render worker sent a malformed reply", kind="render") from None

    def _one(
        self,
        source: str,
        context: dict[str, Any],
        time_limit: float,
        now: datetime | None,
        max_output: int | None,
        deadline: float,
    ) -> str | TemplateError:
        left = min(time_limit, deadline - time.monotonic())
        if left <= 0:
            return _out_of_batch_time(time_limit)
        try:
            return self.render(source, context, left, now, max_output)
        except TemplateError as exc:
            return exc

    def cancel(self) -> int:
        """Kill every busy worker; their callers get :class:`RenderCancelled`.  Returns how many."""
        with self._lock:
            busy = list(self._busy)
        for worker in busy:
            worker.cancelled = True
            worker.kill()
        return len(busy)

    def shutdown(self) -> None:
        """Kill every worker (idle and busy); the pool starts new ones if used again."""
        with self._lock:
            workers = self._idle + list(self._busy)
            self._idle = []
        for worker in workers:
            worker.cancelled = True
            worker.kill()

    def has_spare(self, *, start: bool = True) -> bool:
        """Are two workers idle (one for the caller, one for renders made alongside)?  When not, ``start``,
        and the pool has room, a worker is started now for next time (not waited for); the answer is no."""
        with self._lock:
            idle = [w for w in self._idle if not w.dead]
            if len(idle) >= 2:
                return True
            if not start or not idle or len(self._idle) + len(self._busy) >= MAX_WORKERS:
                return False
            self._idle.insert(0, _Worker(self.memory_limit))  # the caller's own worker stays first in line
            self.started += 1
            return False

    def startup_seconds(self) -> float:
        """Seconds this thread has waited for workers to start (their imports): not template time."""
        return float(getattr(self._startup, "seconds", 0.0))

    # ------------------------------------------------------------------------------------- internals
    def _compile_on(self, worker: _Worker, source: str, time_limit: float) -> None:
        sid = worker.known.get(source)
        if sid is None:
            sid = next(self._ids)
        status, payload = self._call(
            worker, ("compile", sid, source, {"time_limit": time_limit}), time_limit, time_limit, "compile"
        )
        self._result(worker, status, payload)
        worker.known[source] = sid
        while len(worker.known) > _KNOWN_SOURCES:
            worker.known.popitem(last=False)

    def _call(
        self, worker: _Worker, request: tuple[Any, ...], wait: float, time_limit: float, what: str = "render"
    ) -> tuple[bytes, bytes]:
        """One request; ``wait`` is what is left of ``time_limit`` (the caller's, named in errors)."""
        body = pickle.dumps(request, protocol=pickle.HIGHEST_PROTOCOL)
        deadline = time.monotonic() + wait + limits.KILL_GRACE
        try:
            return worker.exchange(body, deadline)
        except (TimeoutError, _WorkerDied, RenderMemoryLimit) as exc:
            raise self._failure(worker, exc, time_limit, what) from None

    def _failure(
        self, worker: _Worker, exc: Exception, time_limit: float, what: str = "render"
    ) -> TemplateError:
        """What a worker that had to be stopped (or died) means for the call it was on; the worker is
        killed (a fresh one serves the next call)."""
        worker.kill()
        if isinstance(exc, TimeoutError):
            if what == "compile":
                return CompileTimeout(
                    f"template compile timed out after {time_limit:g} s (too large or too complex)",
                    kind="timeout",
                )
            return RenderTimeout(
                f"render timed out after {time_limit:g} s (the render worker was stopped)", kind="timeout"
            )
        if isinstance(exc, _WorkerDied):
            if worker.cancelled:
                return RenderCancelled("render cancelled", kind="cancelled")
            code = worker.proc.returncode
            return RenderMemoryLimit(
                f"the render worker died (exit status {code}) during the {what}: the template probably "
                f"exhausted its memory limit ({self.memory_limit >> 20} MiB)",
                kind="limit",
            )
        assert isinstance(exc, TemplateError)
        return exc

    def _result(self, worker: _Worker, status: bytes, payload: bytes) -> str:
        if status == b"T":
            return payload.decode("utf-8", "surrogatepass")
        if status == b"E":
            try:
                exc = from_wire(json.loads(payload))
            except (ValueError, TypeError):
                worker.kill()
                exc = TemplateError("the render worker sent a malformed reply", kind="render")
            if isinstance(exc, RenderMemoryLimit):
                worker.kill()  # a worker that hit its cap may be fragmented: start a clean one
            raise exc
        worker.kill()
        raise TemplateError("the render worker sent a malformed reply", kind="render")

    @contextlib.contextmanager
    def _worker(self) -> Any:
        worker = self._acquire()
        try:
            try:
                if not worker.ready:
                    began = time.monotonic()
                    try:
                        worker.wait_ready()
                    finally:
                        self._startup.seconds = self.startup_seconds() + time.monotonic() - began
                worker.wait_ready()
            except (_WorkerDied, TimeoutError, RenderMemoryLimit):
                worker.kill()
                if worker.cancelled:
                    raise RenderCancelled("render cancelled", kind="cancelled") from None
                raise TemplateError(
                    f"the render worker did not start ({sys.executable} -m workbench.template.worker_main)",
                    kind="render",
                ) from None
            yield worker
        finally:
            self._release(worker)

    def _acquire(self) -> _Worker:
        with self._lock:
            while True:
                while self._idle:
                    worker = self._idle.pop()
                    if not worker.dead and worker.proc.poll() is None:
                        self._busy.add(worker)
                        return worker
                    worker.kill()
                if len(self._busy) < MAX_WORKERS:
                    worker = _Worker(self.memory_limit)
                    self.started += 1
                    self._busy.add(worker)
                    return worker
                self._lock.wait()

    def _release(self, worker: _Worker) -> None:
        with self._lock:
            self._busy.discard(worker)
            if worker.dead:
                # Start the replacement now: its interpreter boots while the caller handles the error.
                if not self._idle and not self._busy:
                    self._idle.append(_Worker(self.memory_limit))
                    self.started += 1
            else:
                self._idle.append(worker)
            self._lock.notify()


_pool: RenderPool | None = None
_pool_lock = threading.Lock()


def pool_started() -> bool:
    """Whether the process-wide pool exists (no state change: never starts one)."""
    return _pool is not None


def get_pool() -> RenderPool:
    """The process-wide pool (created on first use, with :data:`limits.DEFAULT_MEMORY_LIMIT`)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = RenderPool()
        return _pool


def configure(memory_limit: int) -> RenderPool:
    """Replace the pool with one whose workers have another memory cap (tests use small caps)."""
    global _pool
    with _pool_lock:
        old, _pool = _pool, RenderPool(memory_limit)
    if old is not None:
        old.shutdown()
    return _pool


def _forget_after_fork() -> None:
    """A forked child must not share its parent's workers (their pipes); it starts its own on demand."""
    global _pool, _spawner, _pool_lock, _spawner_lock
    _pool = None
    _spawner = None
    _pool_lock = threading.Lock()  # another thread may have held them at the fork
    _spawner_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)


@atexit.register
def _shutdown_at_exit() -> None:
    if _pool is not None:
        _pool.shutdown()
