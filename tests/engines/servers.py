"""Real serving engines for the end-to-end tests: a tiny model folder, a server process, OpenAI requests.

Not a test module.  ``test_serve_e2e.py`` builds a tiny random Qwen3-style model with the real Qwen3
tokenizer and a project template as its chat template, starts ``vllm serve`` (or SGLang through the exported
launcher) from the engines venv on 127.0.0.1, and talks to it over HTTP with the standard library only (the
main venv has no HTTP client of its own to spare).

Every server runs in its own session (process group): :meth:`Server.stop` ends the whole group (API server,
engine core, workers) with SIGTERM, then SIGKILL after a grace period, and the fixtures call it from their
finalizers, so a failing test never leaves a server behind.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Big enough for vLLM's CPU attention (head sizes from 32 up; 16 kills the engine on the first request)
#: and small enough that a step costs milliseconds at Qwen3's 151k vocabulary.
HIDDEN, HEADS, HEAD_DIM = 64, 2, 32
#: Start-up took 100-190 s on two busy cores (vLLM imports twice: API server and engine core).
START_TIMEOUT = 900.0
REQUEST_TIMEOUT = 300.0


def build_tiny_model(folder: Path, template_text: str, tokenizer_dir: Path, *, seed: int = 0) -> Path:
    """A random Qwen3-style causal LM saved as a model folder a server loads: weights, config, the real
    tokenizer's files copied as shipped, and ``template_text`` as its chat template."""
    import torch
    from transformers import AutoTokenizer, Qwen3Config, Qwen3ForCausalLM

    tokenizer = AutoTokenizer.from_pretrained(str(tokenizer_dir))
    eos = tokenizer.convert_tokens_to_ids("<|im_end|>")
    config = Qwen3Config(
        vocab_size=len(tokenizer),
        hidden_size=HIDDEN,
        intermediate_size=HIDDEN * 2,
        num_hidden_layers=2,
        num_attention_heads=HEADS,
        num_key_value_heads=1,
        head_dim=HEAD_DIM,
        max_position_embeddings=4096,
        tie_word_embeddings=True,
        eos_token_id=eos,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=None,
    )
    torch.manual_seed(seed)
    model = Qwen3ForCausalLM(config)
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(folder))
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copyfile(tokenizer_dir / name, folder / name)
    (folder / "chat_template.jinja").write_text(template_text, encoding="utf-8")
    return folder


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Server:
    """One server process group, its URL and its log file."""

    name: str
    process: subprocess.Popen[bytes]
    base_url: str
    log: Path
    started_in: float = 0.0
    model: str = ""
    #: The server sends ``token_ids`` with streamed chunks (vLLM); SGLang refuses ``return_token_ids`` there.
    streams_token_ids: bool = True
    stopped: bool = field(default=False, init=False)

    def log_tail(self, chars: int = 4000) -> str:
        try:
            return self.log.read_text(errors="replace")[-chars:]
        except OSError:
            return "(no log)"

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self, grace: float = 30.0) -> None:
        """End the server's whole process group: SIGTERM, then SIGKILL after ``grace`` seconds."""
        if self.stopped:
            return
        self.stopped = True
        for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 10.0)):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, sig)
            deadline = time.monotonic() + wait
            while time.monotonic() < deadline and _group_alive(self.process.pid):
                self.process.poll()
                time.sleep(0.5)
            if not _group_alive(self.process.pid):
                break
        self.process.poll()


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - another user's group
        return True
    return True


def start_server(
    name: str,
    argv: Sequence[str],
    *,
    env: dict[str, str],
    cwd: Path,
    log: Path,
    timeout: float = START_TIMEOUT,
) -> Server:
    """Start ``argv`` in its own process group and wait until ``/health`` answers 200; the log (stdout and
    stderr) goes to ``log``.  Raises RuntimeError, with the log's tail, when the process exits or does not
    become healthy within ``timeout`` (the server is stopped first)."""
    port = int(argv[argv.index("--port") + 1])
    base = f"http://127.0.0.1:{port}"
    out = log.open("wb")
    started = time.monotonic()
    process = subprocess.Popen(
        list(argv), stdout=out, stderr=subprocess.STDOUT, env=env, cwd=cwd, start_new_session=True
    )
    out.close()
    server = Server(name, process, base, log)
    try:
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"{name} exited with {process.returncode} during start-up")
            if time.monotonic() - started > timeout:
                raise RuntimeError(f"{name} was not healthy after {timeout:.0f} s")
            with (
                contextlib.suppress(OSError, urllib.error.URLError),
                urllib.request.urlopen(base + "/health", timeout=5) as response,
            ):
                if response.status == 200:
                    break
            time.sleep(2)
        server.started_in = time.monotonic() - started
        models = get_json(base + "/v1/models")
        server.model = models["data"][0]["id"]
    except BaseException as exc:
        server.stop()
        if isinstance(exc, RuntimeError):
            raise RuntimeError(f"{exc}\n--- {log} (tail) ---\n{server.log_tail()}") from None
        raise
    return server


def get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=30) as response:
        return json.loads(response.read())


def _post(url: str, body: dict[str, Any]) -> Any:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"content-type": "application/json"}
    )
    return urllib.request.urlopen(request, timeout=REQUEST_TIMEOUT)


class RequestFailed(AssertionError):
    """The server answered with an HTTP error: the status and the body are in the message."""


def chat(server: Server, body: dict[str, Any]) -> dict[str, Any]:
    """One ``/v1/chat/completions`` request, answered in one piece."""
    try:
        with _post(server.base_url + "/v1/chat/completions", {**body, "stream": False}) as response:
            data: dict[str, Any] = json.loads(response.read())
            return data
    except urllib.error.HTTPError as exc:
        raise RequestFailed(f"HTTP {exc.code}: {exc.read()[:2000]!r}") from None


def chat_stream(server: Server, body: dict[str, Any]) -> list[dict[str, Any]]:
    """The same request streamed: every ``chat.completion.chunk`` of the server-sent events, in order."""
    chunks = []
    if not server.streams_token_ids:
        body = {k: v for k, v in body.items() if k != "return_token_ids"}
    try:
        with _post(server.base_url + "/v1/chat/completions", {**body, "stream": True}) as response:
            for raw in response:
                line = raw.decode("utf-8").strip()
                if line.startswith("data:") and line[5:].strip() != "[DONE]":
                    chunks.append(json.loads(line[5:]))
    except urllib.error.HTTPError as exc:
        raise RequestFailed(f"HTTP {exc.code}: {exc.read()[:2000]!r}") from None
    return chunks


@dataclass
class Answer:
    """One choice's message, however it arrived: text fields, calls (name, arguments text), finish reason
    and the output's token ids."""

    content: str
    reasoning: str
    calls: list[tuple[str, str]]
    finish_reason: str | None
    token_ids: list[int]


def _reasoning_of(fields: dict[str, Any]) -> str:
    return str(fields.get("reasoning") or fields.get("reasoning_content") or "")


def one_shot_answer(response: dict[str, Any]) -> Answer:
    choice = response["choices"][0]
    message = choice["message"]
    calls = [
        (call["function"]["name"], call["function"]["arguments"]) for call in message.get("tool_calls") or []
    ]
    return Answer(
        content=message.get("content") or "",
        reasoning=_reasoning_of(message),
        calls=calls,
        finish_reason=choice.get("finish_reason"),
        token_ids=list(choice.get("token_ids") or choice.get("response_token_ids") or []),  # vLLM, SGLang
    )


def streamed_answer(chunks: Sequence[dict[str, Any]]) -> Answer:
    """The deltas added up: texts concatenated, each call's name and argument fragments joined by index."""
    content, reasoning, token_ids = [], [], []
    calls: dict[int, list[str]] = {}
    finish = None
    for chunk in chunks:
        for choice in chunk.get("choices") or ():
            delta = choice.get("delta") or {}
            content.append(delta.get("content") or "")
            reasoning.append(_reasoning_of(delta))
            for call in delta.get("tool_calls") or ():
                slot = calls.setdefault(call["index"], ["", ""])
                fn = call.get("function") or {}
                slot[0] += fn.get("name") or ""
                slot[1] += fn.get("arguments") or ""
            token_ids.extend(choice.get("token_ids") or [])
            finish = choice.get("finish_reason") or finish
    return Answer(
        content="".join(content),
        reasoning="".join(reasoning),
        calls=[(calls[i][0], calls[i][1]) for i in sorted(calls)],
        finish_reason=finish,
        token_ids=token_ids,
    )


def clean_env(**extra: str) -> dict[str, str]:
    """The environment a server starts with: this one without the test runner's Python settings, one
    thread each (two cores are shared), and ``extra``."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env.update(OMP_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false", HF_HUB_OFFLINE="1")
    env.update(extra)
    return env


@contextlib.contextmanager
def running(server_factory: Any) -> Iterator[Server]:
    server = server_factory()
    try:
        yield server
    finally:
        server.stop()
