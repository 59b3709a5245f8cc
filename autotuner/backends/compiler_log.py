"""A copy of what bishengir-compile writes, kept for the trial that compiled.

triton-ascend runs the compiler with its output captured and, on success, reads only stdout
(ascend/backend/compiler.py at v3.2.0): the note saying the compiler turned multibuffer off to
make a config fit ("[NOTE] ... set enable-auto-multi-buffer to false ...") is lost. triton-ascend
finds the compiler as `bishengir-compile` on PATH (`_get_npucompiler_path`, ascend/backend/utils.py),
so a process puts a same-named script first on its PATH: it runs the real compiler with the same
arguments, streams and exit status, and appends its stderr and stdout to a log this process reads.
Where `AUTOTUNE_SAVE_TEMPS` names a folder, it also asks the compiler to keep its intermediate IR
there (`--save-temps`, whose `module.hivm.opt.mlir` holds the planned buffers). The real compiler
may have another name (ascendnpu-ir's `bishengir-compile-a5` for the 950): triton-ascend only runs
one named `bishengir-compile`.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from functools import cache
from pathlib import Path

COMPILER = "bishengir-compile"
_SCRIPT = """#!/usr/bin/env bash
# autotune: runs the real bishengir-compile, appending a copy of its output to a log.
set -o pipefail
log="$AUTOTUNE_COMPILER_LOG"
case " $* " in *" --help "*|*" --version "*) exec "$AUTOTUNE_REAL_COMPILER" "$@" ;; esac
extra=()
[ -n "${AUTOTUNE_SAVE_TEMPS:-}" ] && extra=("--save-temps=$AUTOTUNE_SAVE_TEMPS")
{ "$AUTOTUNE_REAL_COMPILER" "$@" "${extra[@]}" 2>&1 1>&3 3>&- | tee -a "$log" 1>&2 3>&-; } 3>&1 | tee -a "$log"
"""


class CompilerLog:
    """The output of every bishengir-compile this process runs from now on."""

    def __init__(self, real: str) -> None:
        folder = Path(tempfile.mkdtemp(prefix="autotune-compiler-"))
        script = folder / COMPILER
        script.write_text(_SCRIPT, encoding="utf-8")
        script.chmod(0o755)
        self.real = real
        self.path = folder / "stderr.log"
        self.path.touch()
        os.environ["AUTOTUNE_REAL_COMPILER"] = real
        os.environ["AUTOTUNE_COMPILER_LOG"] = str(self.path)
        os.environ["PATH"] = f"{folder}{os.pathsep}{os.environ.get('PATH', '')}"
        self.offset = 0

    def since_last(self) -> str:
        """What the compiler wrote since the last call."""
        with self.path.open(encoding="utf-8", errors="replace") as log:
            log.seek(self.offset)
            text = log.read()
            self.offset = log.tell()
        return text


@cache
def compiler_log() -> CompilerLog | None:
    """This process's log of the compiler found on PATH, made once; None where there is none."""
    real = shutil.which(COMPILER)
    return CompilerLog(real) if real else None
