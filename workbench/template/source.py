"""Find a chat template and its special tokens wherever a model keeps them.

Accepted: a ``.jinja`` file; a ``tokenizer_config.json`` (``chat_template`` as a string or as a list of
named templates); a model folder (``chat_template.jinja``, ``chat_templates/*.jinja``,
``tokenizer_config.json``); a GGUF file (metadata only, tensors are never read); a Hugging Face id
(online only).  Every failure is a :class:`SourceError` with one line that says what to pass instead.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.spec import FormatSpec

HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
# The project's own templates live at the repository root (``templates/``); the package is installed
# editable by the Makefile, so they are found beside it.
PROJECT_TEMPLATES = Path(__file__).resolve().parents[2] / "templates"


class SourceError(Exception):
    """A template could not be found or read."""


@dataclass(frozen=True)
class TemplateSource:
    """A chat template's text plus what a render needs besides messages (special tokens)."""

    text: str
    name: str
    origin: str
    bos_token: str = ""
    eos_token: str = ""
    named: dict[str, str] = field(default_factory=dict)
    selected: str = "default"
    spec: FormatSpec | None = None  # set when loaded from an exported spec file

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    def render_kwargs(self) -> dict[str, Any]:
        """Special tokens that transformers passes to every render."""
        return {"bos_token": self.bos_token, "eos_token": self.eos_token}

    def for_tools(self, with_tools: bool) -> TemplateSource:
        """Pick the ``tool_use`` template when tools are given and the config has one (as transformers)."""
        if with_tools and "tool_use" in self.named and self.selected == "default":
            return _replace_text(self, "tool_use")
        return self


def _replace_text(src: TemplateSource, name: str) -> TemplateSource:
    return TemplateSource(
        text=src.named[name],
        name=src.name,
        origin=src.origin,
        bos_token=src.bos_token,
        eos_token=src.eos_token,
        named=src.named,
        selected=name,
    )


def load_template(ref: str | os.PathLike[str], *, template_name: str | None = None) -> TemplateSource:
    """Load a template from any supported reference (see module docstring)."""
    ref_str = str(ref)
    path = Path(ref_str).expanduser()
    if path.is_dir():
        return _from_folder(path, template_name)
    if path.is_file():
        suffix = path.suffix.lower()
        if suffix == ".gguf":
            return _from_gguf(path)
        if suffix == ".json":
            return _from_config(path, template_name)
        return _from_jinja(path)
    if ref_str in BUILTIN_ALIASES:
        return load_template(BUILTIN_ALIASES[ref_str])
    if HUB_ID.match(ref_str) and not path.suffix and not ref_str.startswith((".", "/")):
        return _from_hub(ref_str, template_name)
    raise SourceError(f"template not found: {ref_str} (pass a .jinja file, a tokenizer_config.json, a model "
                      "folder, a .gguf file, or a Hugging Face id)")


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise SourceError(f"{path} is not UTF-8 text; pass a .jinja template file") from None
    except OSError as exc:
        raise SourceError(f"cannot read {path}: {exc.strerror}") from None


def _from_jinja(path: Path) -> TemplateSource:
    text = _read_text(path)
    bos, eos = _tokens_beside(path.parent)
    return TemplateSource(text=text, name=path.stem, origin=str(path), bos_token=bos, eos_token=eos)


def _token_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict):  # AddedToken serialisation
        return str(value.get("content", ""))
    return ""


def _tokens_beside(folder: Path) -> tuple[str, str]:
    """bos/eos from a ``tokenizer_config.json`` next to a template file, if there is one."""
    cfg = folder / "tokenizer_config.json"
    if not cfg.is_file():
        return "", ""
    try:
        data = json.loads(cfg.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError, UnicodeDecodeError):
        return "", ""
    return _token_text(data.get("bos_token")), _token_text(data.get("eos_token"))


def _from_config(path: Path, template_name: str | None) -> TemplateSource:
    try:
        data = json.loads(_read_text(path))
    except json.JSONDecodeError as exc:
        raise SourceError(f"{path} is not valid JSON: {exc.msg} at line {exc.lineno}") from None
    if not isinstance(data, dict):
        raise SourceError(f"{path}: expected a JSON object (a tokenizer_config.json)")
    if "reasoning" in data and "tools" in data and "version" in data:
        raise SourceError(f"{path} is a format spec, not a template: pass it with --spec")
    bos, eos = _token_text(data.get("bos_token")), _token_text(data.get("eos_token"))
    raw = data.get("chat_template")
    if raw is None:
        sibling = path.parent / "chat_template.jinja"
        if sibling.is_file():
            return TemplateSource(_read_text(sibling), path.parent.name, str(sibling), bos, eos)
        raise SourceError(f"{path} has no chat_template; pass the model's .jinja template file instead")
    return _pick_named(raw, path, path.parent.name or path.stem, bos, eos, template_name)


def _pick_named(
    raw: Any, origin: Path | str, name: str, bos: str, eos: str, template_name: str | None
) -> TemplateSource:
    if isinstance(raw, str):
        if template_name not in (None, "default"):
            raise SourceError(f"{origin} has a single chat template; there is no template named {template_name!r}")
        return TemplateSource(raw, name, str(origin), bos, eos)
    if isinstance(raw, list):
        named = {
            str(item["name"]): str(item["template"])
            for item in raw
            if isinstance(item, dict) and "name" in item and "template" in item
        }
        if not named:
            raise SourceError(f"{origin}: chat_template list holds no named templates")
        choice = template_name or ("default" if "default" in named else next(iter(named)))
        if choice not in named:
            raise SourceError(f"{origin}: no template named {choice!r} (has: {', '.join(named)})")
        return TemplateSource(named[choice], name, str(origin), bos, eos, named=named, selected=choice)
    raise SourceError(f"{origin}: chat_template must be a string or a list of named templates")


def _from_folder(folder: Path, template_name: str | None) -> TemplateSource:
    bos, eos = _tokens_beside(folder)
    jinja = folder / "chat_template.jinja"
    named_dir = folder / "chat_templates"
    named: dict[str, str] = {}
    if named_dir.is_dir():
        named = {p.stem: _read_text(p) for p in sorted(named_dir.glob("*.jinja"))}
    if jinja.is_file():
        named = {"default": _read_text(jinja), **named}
    if named:
        choice = template_name or ("default" if "default" in named else next(iter(named)))
        if choice not in named:
            raise SourceError(f"{folder}: no template named {choice!r} (has: {', '.join(named)})")
        return TemplateSource(named[choice], folder.name, str(folder), bos, eos, named=named, selected=choice)
    cfg = folder / "tokenizer_config.json"
    if cfg.is_file():
        return _from_config(cfg, template_name)
    ggufs = sorted(folder.glob("*.gguf"))
    if ggufs:
        return _from_gguf(ggufs[0])
    raise SourceError(
        f"{folder} holds no chat template (looked for chat_template.jinja, chat_templates/, "
        "tokenizer_config.json, *.gguf)"
    )


def _from_gguf(path: Path) -> TemplateSource:
    try:
        from gguf import GGUFReader
    except ImportError:  # pragma: no cover - gguf is a dependency
        raise SourceError("reading GGUF files needs the 'gguf' package") from None
    try:
        reader = GGUFReader(str(path), "r")
    except Exception as exc:
        raise SourceError(f"{path} is not a readable GGUF file ({type(exc).__name__}: {exc})") from None

    def field_str(key: str) -> str | None:
        f = reader.fields.get(key)
        if f is None or not f.data:
            return None
        try:
            return bytes(f.parts[f.data[0]]).decode("utf-8")
        except Exception:
            return None

    def token_by_id(key: str) -> str:
        f = reader.fields.get(key)
        tokens = reader.fields.get("tokenizer.ggml.tokens")
        if f is None or tokens is None:
            return ""
        try:
            idx = int(f.parts[f.data[0]][0])
            return bytes(tokens.parts[tokens.data[idx]]).decode("utf-8")
        except Exception:
            return ""

    text = field_str("tokenizer.chat_template")
    if text is None:
        raise SourceError(f"{path} has no tokenizer.chat_template in its metadata; pass a .jinja template instead")
    return TemplateSource(
        text=text,
        name=path.stem,
        origin=str(path),
        bos_token=token_by_id("tokenizer.ggml.bos_token_id"),
        eos_token=token_by_id("tokenizer.ggml.eos_token_id"),
    )


def _from_hub(repo_id: str, template_name: str | None) -> TemplateSource:
    if os.environ.get("HF_HUB_OFFLINE") == "1":
        raise SourceError(
            f"cannot fetch {repo_id}: offline (HF_HUB_OFFLINE=1); pass a local .jinja, tokenizer_config.json, "
            "model folder or .gguf instead"
        )
    try:
        from huggingface_hub import hf_hub_download
        from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError
    except ImportError:  # pragma: no cover
        raise SourceError("fetching from the hub needs huggingface_hub") from None
    for filename in ("chat_template.jinja", "tokenizer_config.json"):
        try:
            local = hf_hub_download(repo_id, filename, etag_timeout=5)
        except LocalEntryNotFoundError:
            raise SourceError(
                f"cannot fetch {repo_id} from the Hugging Face hub (offline or unreachable); pass a local .jinja, "
                "tokenizer_config.json, model folder or .gguf instead"
            ) from None
        except HfHubHTTPError as exc:
            if getattr(exc.response, "status_code", None) == 404 and filename == "chat_template.jinja":
                continue
            raise SourceError(f"cannot fetch {repo_id}: {exc}") from None
        except Exception as exc:
            raise SourceError(
                f"cannot fetch {repo_id} ({type(exc).__name__}); pass a local .jinja, tokenizer_config.json, "
                "model folder or .gguf instead"
            ) from None
        p = Path(local)
        if filename == "chat_template.jinja":
            src = _from_jinja(p)
            return TemplateSource(src.text, repo_id, repo_id, src.bos_token, src.eos_token)
        return _from_config(p, template_name)
    raise SourceError(f"{repo_id} has no chat template on the hub")


# Short names for the project's own templates (``workbench analyze qwen3-like``).
BUILTIN_ALIASES: dict[str, str] = {
    p.stem: str(p) for p in sorted(PROJECT_TEMPLATES.glob("*.jinja"))
} if PROJECT_TEMPLATES.is_dir() else {}
DEFAULT_TEMPLATE = "chatml-think-tools"
