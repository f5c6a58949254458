# SPDX-License-Identifier: MIT
"""Finds the project's Python module `slanim` (tools/python: ctypes over libslanim.so) for the
add-on, in this order:

1. the folder set in the add-on's preferences ("slanim Python module folder"), e.g. a build tree's
   `build/python` (the build writes `_build_config.py` there, naming the built libslanim.so);
2. the environment variable SLANIM_PYTHONPATH (same meaning; used by the headless tests);
3. a `slanim` package already importable: installed (`cmake --install` puts it in
   <prefix>/lib/python3/dist-packages, which Debian's Blender, running the system Python 3.11,
   has on its path) or bundled beside the add-on in the zip (`slanim_blender_addon` target with
   SLANIM_BLENDER_BUNDLE_MODULE=ON).

The library itself is then found by the module: the build tree's path, SLANIM_LIBRARY, or
libslanim.so.0 on the loader's path.
"""
import importlib
import os
import sys

_ADDON_DIR = os.path.dirname(os.path.abspath(__file__))


class ModuleNotFound(RuntimeError):
    pass


def _candidates(preference_dir):
    for d in (preference_dir, os.environ.get("SLANIM_PYTHONPATH", "")):
        if d:
            yield os.path.abspath(os.path.expanduser(d))
    yield os.path.join(_ADDON_DIR, "vendor")  # bundled in the zip


def load(preference_dir=""):
    """Imports and returns the `slanim` module; raises ModuleNotFound with what was tried."""
    mod = sys.modules.get("slanim")
    if mod is not None and hasattr(mod, "read_anim_keys"):
        return mod
    tried = []
    for d in _candidates(preference_dir):
        if os.path.isdir(os.path.join(d, "slanim")) and d not in sys.path:
            sys.path.insert(0, d)
        tried.append(d)
    try:
        mod = importlib.import_module("slanim")
    except (ImportError, OSError) as e:
        raise ModuleNotFound(
            f"the slanim Python module could not be loaded ({e}); set its folder (a build tree's "
            f"build/python) in the add-on's preferences or SLANIM_PYTHONPATH; tried: "
            f"{', '.join(tried) or 'nothing'} and the installed packages") from e
    if not hasattr(mod, "read_anim_keys"):
        raise ModuleNotFound(f"the slanim module at {mod.__file__} is too old (no read_anim_keys)")
    return mod
