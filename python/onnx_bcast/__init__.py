"""onnx-bcast: check, rewrite, run and verify the broadcasts of ONNX models.

Every function takes a model as an onnx.ModelProto, serialized bytes or a path. Reports are
the CLI's JSON documents as dicts (`check --json`, `opt --report`), plus the CLI's text under
'text'. Signatures and docstrings: __init__.pyi beside this file, or help(onnx_bcast.check).
"""
from onnx_bcast._core import (EngineCheckError, TargetNotMetError, __version__, check,
                              list_passes, list_targets, optimize, run, verify)

__all__ = ["EngineCheckError", "TargetNotMetError", "__version__", "check", "list_passes",
           "list_targets", "optimize", "run", "verify"]
