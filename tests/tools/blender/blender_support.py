# SPDX-License-Identifier: MIT
"""Shared helpers of the Blender tests (tests/tools/blender), imported inside Blender.

- `fix_blender_34()`: the two work-arounds Debian 12's Blender 3.4.1 needs on its Python 3.11 and
  NumPy 1.24 (its glTF add-on uses `numpy.bool`, removed in NumPy 1.24; its BVH importer opens
  files with mode "rU", removed in Python 3.11). Applied inside the running Blender only.
- `run_slanim(...)`: runs the slanim command line, raising with its standard error on failure.
- `read_play_csv(path)`: `slanim play --format csv` → {frame: {joint: (position, quaternion)}}.
- Frames: SL is X forward, Y left, Z up; Blender's glTF importer and exporter (+Y up on) use
  Blender (x, y, z) = SL (y, −x, z): SL forward is Blender −Y, the "front" of a Blender scene.
"""
import builtins
import csv
import json
import os
import struct
import subprocess
import sys


def fix_blender_34():
    """Makes Debian's Blender 3.4.1 add-ons run on Python 3.11 and NumPy ≥ 1.24 (idempotent)."""
    import numpy
    if "bool" not in vars(numpy):
        numpy.bool = bool  # the glTF add-on of 3.4 uses the alias NumPy 1.24 removed
    if not getattr(builtins.open, "_slanim_ru", False):
        real_open = builtins.open

        def open_without_ru(file, mode="r", *args, **kwargs):
            if isinstance(mode, str) and "U" in mode:  # io_anim_bvh opens with "rU"
                mode = mode.replace("U", "") or "r"
            return real_open(file, mode, *args, **kwargs)

        open_without_ru._slanim_ru = True
        builtins.open = open_without_ru


def script_args():
    """The arguments after `--` on Blender's command line."""
    return sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else []


def finish(ok: bool, message: str):
    """Prints the verdict and leaves Blender with exit code 0 (pass) or 1 (fail)."""
    print(("PASS: " if ok else "FAIL: ") + message, flush=True)
    sys.stderr.flush()
    os._exit(0 if ok else 1)


def run_slanim(cli, *args):
    r = subprocess.run([cli, *map(str, args)], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"slanim {' '.join(map(str, args))}: exit {r.returncode}: {r.stderr.strip()}")
    return r.stderr


def read_play_csv(path):
    frames = {}
    times = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            k = int(row["frame"])
            times[k] = float(row["time"])
            frames.setdefault(k, {})[row["joint"]] = (
                (float(row["px"]), float(row["py"]), float(row["pz"])),
                (float(row["qx"]), float(row["qy"]), float(row["qz"]), float(row["qw"])))
    return frames, times


def glb_json(path):
    """The JSON chunk of a .glb file."""
    with open(path, "rb") as f:
        data = f.read()
    length, kind = struct.unpack_from("<II", data, 12)
    if kind != 0x4E4F534A:
        raise ValueError(f"{path}: first chunk is not JSON")
    return json.loads(data[20:20 + length])


def slanim_extras(path):
    """The slanim extras of a .glb slanim wrote (docs/creator-formats.md), or {}."""
    doc = glb_json(path)
    for a in doc.get("animations", []):
        if a.get("extras", {}).get("format") == "slanim-anim":
            return a["extras"]
    return doc.get("scenes", [{}])[0].get("extras", {})


def _glb(path):
    with open(path, "rb") as f:
        data = f.read()
    length, = struct.unpack_from("<I", data, 12)
    doc = json.loads(data[20:20 + length])
    binary = 20 + length + 8

    def floats(index, width):
        acc = doc["accessors"][index]
        view = doc["bufferViews"][acc["bufferView"]]
        start = binary + view.get("byteOffset", 0) + acc.get("byteOffset", 0)
        values = struct.unpack_from(f"<{acc['count'] * width}f", data, start)
        return [values[i:i + width] for i in range(0, len(values), width)]

    return doc, floats


def key_times(path):
    """Every key time (seconds) of a .glb's animations."""
    doc, floats = _glb(path)
    return sorted({t[0] for a in doc.get("animations", []) for s in a["samplers"] for t in floats(s["input"], 1)})


def blender_to_sl(v):
    return (-v[1], v[0], v[2])


def sl_to_blender(v):
    return (v[1], -v[0], v[2])
