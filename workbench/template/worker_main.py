"""Entry point of the render worker: ``python -m workbench.template.worker_main MEMORY_BYTES PARENT_PID``.

Kept minimal on purpose: it imports only the sandbox (jinja2 and this package), never torch or the TUI,
so a fresh interpreter is ready in a fraction of a second and can be started safely from a process that
has imported torch or runs threads (no fork of a threaded process).

Protocol (see :mod:`workbench.template.worker`): requests arrive on stdin as 8-byte big-endian length +
pickle (from the trusted parent); replies leave on the original stdout as 8-byte length + one status byte
+ payload, where the payload is UTF-8 text or JSON (never pickle: this process runs untrusted templates).
A batch gets one reply per call (status ``I``), each sent as soon as its render is done.
"""

from __future__ import annotations

import collections
import json
import math
import os
import pickle
import resource
import signal
import struct
import sys
import time
from typing import Any

_HEADER = struct.Struct(">Q")
# Compiled sources remembered by id; twice the parent's table, so every id the parent believes known is here.
_MAX_SOURCES = 256


def _read_exact(fd: int, size: int) -> bytes | None:
    chunks = []
    while size:
        chunk = os.read(fd, min(size, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _reply(fd: int, status: bytes, payload: bytes) -> None:
    _write_all(fd, _HEADER.pack(len(payload) + 1) + status + payload)


def _error(exc: BaseException) -> bytes:
    from workbench.template.errors import TemplateError

    if isinstance(exc, TemplateError):
        return json.dumps(exc.to_wire()).encode()
    fields = {
        "cls": "TemplateError",
        "detail": f"render failed: {type(exc).__name__}: {exc}",
        "kind": "render",
    }
    return json.dumps(fields).encode()


def _arm_cpu_watchdog(seconds: float) -> None:
    """Let this request use at most ``seconds`` more CPU time, enforced by the kernel (SIGXCPU kills).

    The parent kills an overrunning worker by wall clock; this is the backstop for a worker whose parent
    died mid-render (an idle orphan exits at the closed pipe; a busy one would otherwise spin on).  Two
    syscalls, far cheaper than re-arming a watchdog thread per request.
    """
    usage = resource.getrusage(resource.RUSAGE_SELF)
    soft = math.ceil(usage.ru_utime + usage.ru_stime + seconds)
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def _batch(sandbox: Any, compiled: Any, args: dict[str, Any], replies: int) -> None:
    """Render every context of a batch, each under the per-call limit, and send each outcome as soon as it
    is made (one ``I`` reply each, JSON): the caller then waits for each call as for one render, and knows
    which call a worker it has to stop was on (a C-level bomb that no in-process check interrupts)."""
    from workbench.template.errors import TemplateError, until_timeouts

    sent = 0

    def send(outcome: str | TemplateError) -> None:
        nonlocal sent
        item = {"text": outcome} if isinstance(outcome, str) else {"error": outcome.to_wire()}
        _reply(replies, b"I", json.dumps(item, ensure_ascii=False).encode("utf-8", "surrogatepass"))
        sent += 1

    def one(context: dict[str, Any]) -> str | TemplateError:
        try:
            outcome: str | TemplateError = str(
                sandbox.render_in_process(
                    compiled, context, float(args["time_limit"]), args.get("now"), args.get("max_output")
                )
            )
        except TemplateError as exc:
            outcome = exc
        send(outcome)
        return outcome

    outcomes = until_timeouts(one, args["calls"], args.get("stop_after_timeouts"))
    for skipped in outcomes[sent:]:  # the calls not made once the batch stopped: always the last ones
        send(skipped)


def _serve(requests: int, replies: int) -> None:
    from workbench.template import limits, sandbox
    from workbench.template.errors import RenderTimeout

    _reply(replies, b"R", b"")  # imports done: the caller starts its clocks from here

    sources: collections.OrderedDict[int, str] = collections.OrderedDict()
    while True:
        header = _read_exact(requests, _HEADER.size)
        if header is None:
            return  # the parent closed the pipe (or died): nothing left to do
        body = _read_exact(requests, _HEADER.unpack(header)[0])
        if body is None:
            return
        started = time.monotonic()
        try:
            op, sid, text, args = pickle.loads(body)
            time_limit = float(args["time_limit"])
            _arm_cpu_watchdog(time_limit * len(args.get("calls", (0,))) + limits.KILL_GRACE + 2.0)
            if text is not None:
                sources[sid] = text
            source = sources.get(sid)
            if source is None:
                _reply(replies, b"U", b"")
                continue
            sources.move_to_end(sid)
            while len(sources) > _MAX_SOURCES:
                sources.popitem(last=False)
            compiled = sandbox.compile_in_process(source)
            if op == "compile":
                _reply(replies, b"T", b"")
                continue
            if op == "batch":
                _batch(sandbox, compiled, args, replies)
                continue
            left = time_limit - (time.monotonic() - started)
            if left <= 0:
                raise RenderTimeout(
                    f"render timed out while compiling the template (time limit {time_limit:g} s)",
                    kind="timeout",
                )
            text_out = sandbox.render_in_process(
                compiled, args["context"], left, args.get("now"), args.get("max_output")
            )
            _reply(replies, b"T", text_out.encode("utf-8", "surrogatepass"))
        except BaseException as exc:  # every failure goes back to the caller as an error reply
            _reply(replies, b"E", _error(exc))


def _die_with_parent(parent: int) -> None:
    """Ask Linux to SIGKILL this process when its parent dies (``PR_SET_PDEATHSIG``), even mid-render.

    The parent starts workers from its main thread or from one long-lived thread, because the signal
    follows the thread that started the process.  Elsewhere the closed pipe and the CPU limit remain.
    """
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if parent and os.getppid() != parent:  # the parent died before the request above took effect
        os._exit(0)


def main() -> None:
    memory = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    _die_with_parent(int(sys.argv[2]) if len(sys.argv) > 2 else 0)
    if memory > 0:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    # Ctrl+C in the terminal reaches the whole process group; the parent decides what to cancel.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # Keep the protocol pipes on private descriptors so a stray print cannot corrupt a reply.
    requests, replies = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    _serve(requests, replies)


if __name__ == "__main__":
    main()
