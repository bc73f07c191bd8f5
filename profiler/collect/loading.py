"""Import a study from its reference, in the worker process only (it runs the study's imports:
kernels, frameworks).

A reference is `path/to/file.py[:NAME]` (absolute by the time a worker sees it) or
`package.module:NAME`. Without `:NAME`, a file must hold exactly one Study.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from profiler.errors import UsageError
from profiler.study import Study


def split_ref(ref: str) -> tuple[str, str | None, bool]:
    """(module or path, attribute or None, is_path) of a study reference."""
    head, sep, attr = ref.rpartition(":")
    if not sep or "/" in attr or attr.endswith(".py"):
        head, attr = ref, ""
    is_path = head.endswith(".py") or "/" in head or "\\" in head
    return head, attr or None, is_path


def load_study(ref: str) -> Study:
    """The Study named by `ref`.

    Raises: UsageError when the file or module is missing, holds no Study (or several, without
    `:NAME`), or the attribute is not a Study. Exceptions raised by the study's own imports
    propagate (the worker reports them with their traceback).
    """
    head, attr, is_path = split_ref(ref)
    module = _import_file(Path(head)) if is_path else _import_module(head)
    if attr is not None:
        study = getattr(module, attr, None)
        if not isinstance(study, Study):
            raise UsageError(f"{ref}: {attr} is not a profiler.study.Study")
        return study
    found = [v for v in vars(module).values() if isinstance(v, Study)]
    if len(found) != 1:
        names = ", ".join(sorted(k for k, v in vars(module).items() if isinstance(v, Study)))
        raise UsageError(
            f"{ref}: expected one Study in the module, found {len(found)}"
            + (f" ({names}); name one as {head}:NAME" if names else "")
        )
    return found[0]


def _import_module(name: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name and name.startswith(exc.name):
            raise UsageError(f"no module {name!r} (is its package installed?)") from None
        raise


def _import_file(path: Path) -> ModuleType:
    path = path.resolve()
    if not path.is_file():
        raise UsageError(f"{path}: no such study file")
    digest = hashlib.sha256(str(path).encode()).hexdigest()[:12]
    name = f"profgen_study_{path.stem}_{digest}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise UsageError(f"{path}: not an importable Python file")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.parent))  # the study may import modules beside it
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module
