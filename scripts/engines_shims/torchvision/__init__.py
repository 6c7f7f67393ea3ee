"""A stand-in for torchvision so that SGLang's server imports on a CPU-only torch (see ../README.md).

Every attribute is a placeholder: building one (as modules do at import) works, calling one raises.
Text-only serving never calls them.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.0.0+workbench.stub"


class Unavailable:
    """Any torchvision object or function."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("torchvision is a stand-in here (scripts/engines_shims): no image inputs")

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return Unavailable()

    def __class_getitem__(cls, item: Any) -> type[Unavailable]:
        return cls


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    return Unavailable
