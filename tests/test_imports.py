"""Every module imports on its own, first in a fresh interpreter: an import cycle shows only
when its modules are imported in one order (a summary helper imported into recall from the
checks, which the tools import, passed every test that imported the investigator first)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parent.parent


def test_every_module_imports_first_in_a_fresh_interpreter() -> None:
    modules = sorted(
        ".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        for package in ("adapters", "agents")
        for p in (ROOT / package).rglob("*.py")
    )  # the gateway imports these; its own modules are imported by every gateway test
    # one interpreter per module, run side by side: each must import with nothing before it
    script = "import importlib, sys; importlib.import_module(sys.argv[1])"
    runs = {m: subprocess.Popen([sys.executable, "-c", script, m], cwd=ROOT,
                                stderr=subprocess.PIPE, text=True) for m in modules}  # fmt: skip
    failed = {m: p.communicate()[1].strip().splitlines()[-1:] for m, p in runs.items()}
    assert {m: err for m, err in failed.items() if runs[m].returncode} == {}
