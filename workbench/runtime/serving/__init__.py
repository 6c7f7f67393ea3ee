"""What a serving plug-in runs around the parser: the engine-neutral two-stage split (:mod:`.core`: the
reasoning stage, then content and calls) and each request's structural tag (:mod:`.tags`, the one assembler
over the request's tools).  The vLLM and SGLang adapters (``workbench/engines/<name>/adapter.py``) call these
inside the engine, on the runtime the plug-in vendors."""
