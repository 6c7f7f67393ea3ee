"""Stand-in ``torchvision.transforms`` (see ../../README.md): the interpolation modes SGLang names."""

from __future__ import annotations

import enum
from typing import Any

from torchvision import Unavailable


class InterpolationMode(enum.Enum):
    NEAREST = "nearest"
    NEAREST_EXACT = "nearest-exact"
    BILINEAR = "bilinear"
    BICUBIC = "bicubic"
    BOX = "box"
    HAMMING = "hamming"
    LANCZOS = "lanczos"


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    return Unavailable
