"""Find a chat template and its special tokens wherever a model keeps them.

Accepted: a ``.jinja`` file; a ``tokenizer_config.json`` (``chat_template`` as a string or as a list of
named templates); a model folder (``chat_template.jinja``, ``chat_templates/*.jinja``,
``tokenizer_config.json``, or a ``.gguf``); a GGUF file (metadata only: tensors are never read); a Hugging
Face id (from the local hub cache, else from the hub when it is reachable); a short name of one of the
project's own templates.  Every failure is a :class:`SourceError` with one line that says what to pass
instead.

Special tokens matter for render parity: transformers passes the tokenizer's ``special_tokens_map``
(``bos_token``, ``eos_token``, ``unk_token``, ``pad_token``, ... but only those that are set) to every
render, so :meth:`TemplateSource.render_kwargs` passes exactly the tokens the config sets.
"""

from __future__ import annotations

import hashlib
import os
import re
import socket
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from workbench.inputs import InputError, loads_bounded, replace_unencodable, unencodable_at
from workbench.runtime.errors import WorkbenchError
from workbench.runtime.spec import FormatSpec
from workbench.template.errors import TemplateError
from workbench.template.gguf_meta import GGUFFormatError, read_metadata
from workbench.template.limits import MAX_SOURCE_BYTES, check_source_size

HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
# The project's own templates live at the repository root (``templates/``); the package is installed
# editable by the Makefile, so they are found beside it.
PROJECT_TEMPLATES = Path(__file__).resolve().parents[2] / "templates"
# The named special tokens transformers puts in ``special_tokens_map`` (SPECIAL_TOKENS_ATTRIBUTES).
SPECIAL_TOKEN_NAMES = (
    "bos_token",
    "eos_token",
    "unk_token",
    "sep_token",
    "pad_token",
    "cls_token",
    "mask_token",
)
# GGUF metadata keys holding special-token ids, by the name transformers gives the token.
_GGUF_TOKEN_IDS = {
    "bos_token": "tokenizer.ggml.bos_token_id",
    "eos_token": "tokenizer.ggml.eos_token_id",
    "unk_token": "tokenizer.ggml.unknown_token_id",
    "sep_token": "tokenizer.ggml.seperator_token_id",  # (sic) the key's spelling in the GGUF spec
    "pad_token": "tokenizer.ggml.padding_token_id",
    "mask_token": "tokenizer.ggml.mask_token_id",
}
_GGUF_ID_KEYS = frozenset(_GGUF_TOKEN_IDS.values())
HUB_TIMEOUT = float(os.environ.get("WORKBENCH_HUB_TIMEOUT", "3"))
# A tokenizer_config.json may hold a large added-token table besides its templates.
MAX_CONFIG_BYTES = 64 << 20
_PASS_LOCAL = "pass a local .jinja file, tokenizer_config.json, model folder or .gguf instead"


class SourceError(WorkbenchError):
    """A template could not be found or read."""


@dataclass(frozen=True)
class TemplateSource:
    """A chat template's text plus what a render needs besides messages (special tokens).

    ``special_tokens`` is ``None`` when nothing but the template text is known (a bare ``.jinja``); then
    :meth:`render_kwargs` falls back to empty ``bos_token``/``eos_token`` so templates that concatenate
    them still render.  ``pinned`` is true when the caller picked the named template explicitly, which
    stops :meth:`for_tools` from switching to ``tool_use`` (transformers' rule).  ``added_tokens`` are the
    tokenizer's added tokens (``added_tokens_decoder`` of its config): the analysis takes their edges as
    evidence of marker boundaries and reports which markers they make up.
    """

    text: str
    name: str
    origin: str
    bos_token: str = ""
    eos_token: str = ""
    named: dict[str, str] = field(default_factory=dict)
    selected: str = "default"
    spec: FormatSpec | None = None  # set when loaded from an exported spec file
    special_tokens: dict[str, str] | None = None
    pinned: bool = False
    added_tokens: tuple[str, ...] = ()  # the tokenizer's added tokens, when its config is known

    def __post_init__(self) -> None:
        # A file name with bytes that are not UTF-8 arrives with lone surrogates; the name and origin are
        # labels (shown, written into exports), so they are made printable rather than refused.
        for label in ("name", "origin"):
            value = getattr(self, label)
            if unencodable_at(value) is not None:
                object.__setattr__(self, label, replace_unencodable(value))

    @property
    def sha256(self) -> str:
        # Files are read as strict UTF-8; an in-memory text with a lone surrogate still hashes (never raises).
        return hashlib.sha256(self.text.encode("utf-8", "surrogatepass")).hexdigest()

    def render_kwargs(self) -> dict[str, Any]:
        """The special tokens transformers passes to every render (only those the config sets)."""
        if self.special_tokens is None:
            return {"bos_token": self.bos_token, "eos_token": self.eos_token}
        return dict(self.special_tokens)

    def for_tools(self, with_tools: bool) -> TemplateSource:
        """The template transformers would use: ``tool_use`` when tools are given and the config names one,
        ``default`` otherwise, unless the caller pinned a name."""
        if self.pinned or not self.named:
            return self
        want = "tool_use" if with_tools and "tool_use" in self.named else "default"
        if want == self.selected or want not in self.named:
            return self
        return replace(self, text=self.named[want], selected=want)


def _with_tokens(tokens: dict[str, str] | None, added: tuple[str, ...] = ()) -> dict[str, Any]:
    """Constructor kwargs for the special tokens (bos/eos fields plus the full map, and added tokens)."""
    if tokens is None:
        return {}
    return {
        "bos_token": tokens.get("bos_token", ""),
        "eos_token": tokens.get("eos_token", ""),
        "special_tokens": tokens,
        "added_tokens": added,
    }


#: At most this many added tokens are kept (a config may list hundreds of reserved ones).
MAX_ADDED_TOKENS = 4096


def _added_tokens(data: dict[str, Any]) -> tuple[str, ...]:
    """The contents of a tokenizer config's ``added_tokens_decoder`` (empty when it has none)."""
    decoder = data.get("added_tokens_decoder")
    if not isinstance(decoder, dict):
        return ()
    out = []
    for entry in list(decoder.values())[:MAX_ADDED_TOKENS]:
        content = entry.get("content") if isinstance(entry, dict) else None
        if isinstance(content, str) and content.strip():
            out.append(content)
    return tuple(sorted(set(out)))


def load_template(ref: str | os.PathLike[str], *, template_name: str | None = None) -> TemplateSource:
    """Load a template from any supported reference (see module docstring)."""
    ref_str = str(ref)
    if not ref_str.strip():
        raise SourceError("no template given; " + _PASS_LOCAL.replace("instead", "(or a Hugging Face id)"))
    path = Path(ref_str).expanduser()
    if path.is_dir():
        return _from_folder(path, template_name)
    if path.is_file():
        suffix = path.suffix.lower()
        if suffix == ".gguf":
            return _from_gguf(path, template_name)
        if suffix == ".json":
            return _from_config(path, template_name)
        return _from_jinja(path, template_name)
    if path.exists():
        raise SourceError(f"{ref_str} is neither a file nor a folder; {_PASS_LOCAL}")
    if ref_str in BUILTIN_ALIASES:
        return load_template(BUILTIN_ALIASES[ref_str], template_name=template_name)
    if HUB_ID.match(ref_str) and not path.suffix and not ref_str.startswith((".", "/", "~")):
        return _from_hub(ref_str, template_name)
    raise SourceError(
        f"template not found: {ref_str} (pass a .jinja file, a tokenizer_config.json, a model folder, a "
        ".gguf file, a Hugging Face id, or one of the built-in names: " + ", ".join(BUILTIN_ALIASES) + ")"
    )


def _read_text(path: Path, limit: int = MAX_SOURCE_BYTES) -> str:
    """The file's text, refused unread when larger than ``limit`` bytes (a template file: 1 MiB)."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise SourceError(f"cannot read {path}: {exc.strerror}") from None
    if size > limit:
        raise SourceError(
            f"{path} is too large ({size:,} bytes; limit {limit:,}): chat templates are under 100 KB"
        )
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise SourceError(f"{path} is not UTF-8 text; pass a .jinja template file") from None
    except OSError as exc:
        raise SourceError(f"cannot read {path}: {exc.strerror}") from None


def _single(
    text: str, origin: Path | str, name: str, template_name: str | None, **extra: Any
) -> TemplateSource:
    if template_name not in (None, "default"):
        raise SourceError(
            f"{origin} holds a single chat template; there is no template named {template_name!r}"
        )
    if not text.strip():
        raise SourceError(f"{origin}: the chat template is empty")
    _check_size(text, origin)
    return TemplateSource(text=text, name=name, origin=str(origin), **extra)


def _check_size(text: str, origin: Path | str) -> None:
    """Refuse a template over the size limit when it is loaded, before anything compiles it."""
    try:
        check_source_size(text)
    except TemplateError as exc:
        raise SourceError(f"{origin}: {exc}") from None


def _from_jinja(path: Path, template_name: str | None) -> TemplateSource:
    text = _read_text(path)
    return _single(
        text, path, path.stem, template_name, **_with_tokens(*_tokens_and_added_beside(path.parent))
    )


def _token_text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("content"), str):  # AddedToken serialisation
        return value["content"]
    return None


def _config_tokens(data: dict[str, Any]) -> dict[str, str]:
    """The named special tokens a tokenizer_config.json sets (null or absent ones are left out)."""
    tokens: dict[str, str] = {}
    for key in SPECIAL_TOKEN_NAMES:
        text = _token_text(data.get(key))
        if text is not None:
            tokens[key] = text
    return tokens


def _read_config(path: Path) -> dict[str, Any]:
    """A tokenizer_config.json: any JSON failure (syntax, nesting past the recursion limit, a 100,000-digit
    integer, a string holding a lone surrogate) is one :class:`SourceError` line."""
    try:
        data = loads_bounded(_read_text(path, MAX_CONFIG_BYTES), str(path))
    except InputError as exc:
        raise SourceError(str(exc)) from None
    if not isinstance(data, dict):
        raise SourceError(f"{path}: expected a JSON object (a tokenizer_config.json)")
    return data


def _tokens_beside(folder: Path) -> dict[str, str] | None:
    """Special tokens from a ``tokenizer_config.json`` next to a template file, if there is a readable one."""
    return _tokens_and_added_beside(folder)[0]


def _tokens_and_added_beside(folder: Path) -> tuple[dict[str, str] | None, tuple[str, ...]]:
    """Special and added tokens from a ``tokenizer_config.json`` next to a template file, if readable."""
    cfg = folder / "tokenizer_config.json"
    if not cfg.is_file():
        return None, ()
    try:
        data = _read_config(cfg)
    except SourceError:
        return None, ()
    return _config_tokens(data), _added_tokens(data)


def _from_config(path: Path, template_name: str | None) -> TemplateSource:
    data = _read_config(path)
    if "reasoning" in data and "tools" in data and "version" in data:
        raise SourceError(f"{path} is a format spec, not a template: pass it with --spec")
    tokens = _with_tokens(_config_tokens(data), _added_tokens(data))
    name = path.parent.name or path.stem
    raw = data.get("chat_template")
    if raw is None:
        sibling = path.parent / "chat_template.jinja"
        if sibling.is_file():
            return _single(_read_text(sibling), sibling, name, template_name, **tokens)
        raise SourceError(f"{path} has no chat_template; pass the model's .jinja template file instead")
    if isinstance(raw, str):
        return _single(raw, path, name, template_name, **tokens)
    if isinstance(raw, list):
        named = {
            str(item["name"]): str(item["template"])
            for item in raw
            if isinstance(item, dict)
            and isinstance(item.get("name"), str)
            and isinstance(item.get("template"), str)
        }
        if not named:
            raise SourceError(f"{path}: the chat_template list holds no named templates")
        return _pick(named, path, name, template_name, tokens)
    raise SourceError(f"{path}: chat_template must be a string or a list of named templates")


def _pick(
    named: dict[str, str], origin: Path | str, name: str, template_name: str | None, tokens: dict[str, Any]
) -> TemplateSource:
    """Choose among named templates: the caller's pick, else ``default``, else the only one."""
    if template_name is not None:
        choice = template_name
    elif "default" in named:
        choice = "default"
    elif len(named) == 1:
        choice = next(iter(named))
    else:
        raise SourceError(
            f"{origin} has several chat templates and none is named 'default'; pick one with --template-name "
            f"(has: {', '.join(named)})"
        )
    if choice not in named:
        raise SourceError(f"{origin}: no template named {choice!r} (has: {', '.join(named)})")
    if not named[choice].strip():
        raise SourceError(f"{origin}: the chat template {choice!r} is empty")
    for text in named.values():
        _check_size(text, origin)
    return TemplateSource(
        text=named[choice],
        name=name,
        origin=str(origin),
        named=named,
        selected=choice,
        pinned=template_name is not None,
        **tokens,
    )


def _from_folder(folder: Path, template_name: str | None) -> TemplateSource:
    tokens = _with_tokens(*_tokens_and_added_beside(folder))
    jinja = folder / "chat_template.jinja"
    named_dir = folder / "chat_templates"
    named: dict[str, str] = {}
    if named_dir.is_dir():
        named = {p.stem: _read_text(p) for p in sorted(named_dir.glob("*.jinja"))}
    if jinja.is_file():
        named = {"default": _read_text(jinja), **named}
    if named:
        return _pick(named, folder, folder.name, template_name, tokens)
    cfg = folder / "tokenizer_config.json"
    if cfg.is_file():
        return _from_config(cfg, template_name)
    ggufs = sorted(folder.glob("*.gguf"))
    if ggufs:
        return _from_gguf(ggufs[0], template_name)
    raise SourceError(
        f"{folder} holds no chat template (looked for chat_template.jinja, chat_templates/, "
        "tokenizer_config.json, *.gguf)"
    )


def _from_gguf(path: Path, template_name: str | None) -> TemplateSource:
    """Read ``tokenizer.chat_template`` (and named ``tokenizer.chat_template.NAME``) from GGUF metadata.

    :func:`read_metadata` memory-maps the file and parses the header and metadata only, refusing any
    declared length larger than the file (``gguf.GGUFReader`` would allocate whatever a hostile header
    declares); tensor data is never touched, so a multi-gigabyte model costs nothing here.
    """
    try:
        fields = read_metadata(path, _wanted_gguf_key, max_string=MAX_SOURCE_BYTES)
    except (GGUFFormatError, OSError) as exc:
        raise SourceError(f"{path} is not a readable GGUF file ({type(exc).__name__}: {exc})") from None

    def value(key: str) -> Any:
        return fields.get(key)

    named: dict[str, str] = {}
    default = value("tokenizer.chat_template")
    if isinstance(default, str):
        named["default"] = default
    extra = value("tokenizer.chat_templates")
    for n in extra if isinstance(extra, list) else []:
        text = value(f"tokenizer.chat_template.{n}")
        if isinstance(n, str) and isinstance(text, str):
            named[n] = text
    if not named:
        raise SourceError(
            f"{path} has no tokenizer.chat_template in its metadata; pass a .jinja template instead"
        )

    vocab = value("tokenizer.ggml.tokens")
    tokens: dict[str, str] = {}
    for name, key in _GGUF_TOKEN_IDS.items():
        idx = value(key)
        if (
            isinstance(idx, int)
            and isinstance(vocab, list)
            and 0 <= idx < len(vocab)
            and isinstance(vocab[idx], str)
        ):
            tokens[name] = vocab[idx]
    kw = _with_tokens(tokens)
    if list(named) == ["default"]:
        return _single(named["default"], path, path.stem, template_name, **kw)
    return _pick(named, path, path.stem, template_name, kw)


def _wanted_gguf_key(key: str) -> bool:
    """The GGUF metadata keys a template source needs (templates, vocabulary, special-token ids)."""
    return key.startswith("tokenizer.chat_template") or key == "tokenizer.ggml.tokens" or key in _GGUF_ID_KEYS


def _hub_offline() -> bool:
    """Read at call time (not at import, as huggingface_hub does) so a test or a shell can flip it."""
    flag = os.environ.get("HF_HUB_OFFLINE") or os.environ.get("TRANSFORMERS_OFFLINE") or ""
    return flag.upper() in {"1", "ON", "YES", "TRUE"}


def _hub_endpoint() -> str:
    return (os.environ.get("HF_ENDPOINT") or "https://huggingface.co").rstrip("/")


def _reachable(url: str, timeout: float) -> bool:
    """Whether a TCP connection to the hub opens within ``timeout`` seconds (DNS included).

    huggingface_hub retries unreachable hosts with exponential back-off (about 25 s in total), far too
    long for a CLI that should just say "offline"; this check answers in at most ``timeout``.  With a
    proxy configured the direct connection says nothing, so the check is skipped.
    """
    if any(os.environ.get(v) for v in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy")):
        return True
    parsed = urlparse(url)
    host = parsed.hostname or ""
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    ok = threading.Event()

    def attempt() -> None:
        try:
            with socket.create_connection((host, port), timeout=timeout):
                ok.set()
        except OSError:
            pass

    worker = threading.Thread(target=attempt, daemon=True)  # getaddrinfo has no timeout of its own
    worker.start()
    worker.join(timeout)
    return ok.is_set()


def _from_hub(repo_id: str, template_name: str | None) -> TemplateSource:
    try:
        import huggingface_hub
        from huggingface_hub import errors as hub_errors
    except ImportError:  # pragma: no cover - huggingface_hub is a dependency
        raise SourceError(f"{repo_id}: fetching from the hub needs huggingface_hub; {_PASS_LOCAL}") from None

    cached = _from_hub_cache(repo_id, template_name, huggingface_hub)
    if cached is not None:
        return cached
    what = f"{repo_id} is not a local file or folder"
    if _hub_offline():
        raise SourceError(
            f"{what}, and the Hugging Face hub is disabled (HF_HUB_OFFLINE is set); {_PASS_LOCAL}"
        )
    if not _reachable(_hub_endpoint(), HUB_TIMEOUT):
        raise SourceError(f"{what}, and the Hugging Face hub is unreachable (offline?); {_PASS_LOCAL}")
    for filename in ("chat_template.jinja", "tokenizer_config.json"):
        try:
            local = huggingface_hub.hf_hub_download(repo_id, filename, etag_timeout=HUB_TIMEOUT)
        except hub_errors.GatedRepoError:
            raise SourceError(
                f"{repo_id} is gated on the hub: log in with `hf auth login`, or {_PASS_LOCAL}"
            ) from None
        except hub_errors.RepositoryNotFoundError:
            raise SourceError(
                f"{repo_id}: no such model on the Hugging Face hub (or it is private)"
            ) from None
        except hub_errors.EntryNotFoundError:
            continue
        except Exception as exc:
            raise SourceError(
                f"cannot fetch {repo_id} from the hub ({type(exc).__name__}); {_PASS_LOCAL}"
            ) from None
        return _hub_file(Path(local), filename, repo_id, template_name)
    raise SourceError(
        f"{repo_id} has no chat template on the hub (no chat_template.jinja, no tokenizer_config.json)"
    )


def _from_hub_cache(repo_id: str, template_name: str | None, hub: Any) -> TemplateSource | None:
    """The template from the local hub cache, so models fetched once keep working offline."""
    for filename in ("chat_template.jinja", "tokenizer_config.json"):
        try:
            hit = hub.try_to_load_from_cache(repo_id, filename)
        except Exception:
            return None
        if isinstance(hit, str):
            return _hub_file(Path(hit), filename, repo_id, template_name)
    return None


def _hub_file(local: Path, filename: str, repo_id: str, template_name: str | None) -> TemplateSource:
    src = (
        _from_jinja(local, template_name)
        if filename == "chat_template.jinja"
        else _from_config(local, template_name)
    )
    return replace(src, name=repo_id, origin=repo_id)


# Short names for the project's own templates (``workbench analyze chatml-think-tools``).
BUILTIN_ALIASES: dict[str, str] = (
    {p.stem: str(p) for p in sorted(PROJECT_TEMPLATES.glob("*.jinja"))} if PROJECT_TEMPLATES.is_dir() else {}
)
DEFAULT_TEMPLATE = "chatml-think-tools"
