# SPDX-License-Identifier: MIT
"""slanim for Python: the C API of libslanim.so (slanim/slanim.h) through ctypes, with NumPy
arrays for poses.

Import from a build tree with one line (docs/embedding.md):

    PYTHONPATH=build/python python3 -c "import slanim; print(slanim.version())"

Frames and units are the C API's (and the viewer's): SL avatar space, X forward, Y left, Z up;
metres, seconds, radians; quaternions x, y, z, w. A transform is 7 floats: position x, y, z, then
rotation x, y, z, w. Joint matrices are 4 x 4 (row-major NumPy arrays of the C API's
column-major float[16]: ``m[r, c]``, translation in ``m[:3, 3]``).

Errors: every failing C call raises :class:`SlanimError` carrying the status name and the
library's message (``slanim_last_error``), e.g. the .anim rule and byte offset.

Threads: a :class:`World` and its avatars are used by one thread at a time (the C API's rule);
functions without a world (validation, conversion, IK, sampling) may be called from any thread.

Where the library is found: ``SLANIM_LIBRARY`` (a path) if set, else the library of the build
tree this package was copied into (``_build_config.py``, written by CMake), else
``libslanim.so.0`` on the loader's search path.
"""
from __future__ import annotations

import ctypes as _c
import os as _os
import uuid as _uuid
from typing import Iterable, NamedTuple, Optional, Sequence, Union

import numpy as _np

__all__ = [
    "SlanimError", "version", "Skeleton", "Motion", "Validation", "validate", "BvhImportOptions",
    "bvh_to_anim", "anim_to_bvh", "IkReport", "ik_solve", "World", "Avatar", "MeshInfo",
    "PuppetryStats", "motion_id",
]

# ---------------------------------------------------------------------------------------------
# Loading the library
# ---------------------------------------------------------------------------------------------


def _library_path() -> str:
    env = _os.environ.get("SLANIM_LIBRARY")
    if env:
        return env
    try:
        from . import _build_config  # written by CMake into the build tree's copy

        if _os.path.exists(_build_config.LIBRARY):
            return _build_config.LIBRARY
    except ImportError:
        pass
    return "libslanim.so.0"


_lib = _c.CDLL(_library_path())

_status = _c.c_int
_f = _c.c_float
_i32 = _c.c_int32
_size = _c.c_size_t
_u8p = _c.POINTER(_c.c_uint8)
_fp = _c.POINTER(_c.c_float)
_avatar_t = _c.c_uint64


class _MotionInfo(_c.Structure):
    _fields_ = [("duration", _f), ("loop", _i32), ("loop_in", _f), ("loop_out", _f),
                ("ease_in", _f), ("ease_out", _f), ("base_priority", _i32), ("hand_pose", _i32),
                ("num_joints", _i32), ("num_constraints", _i32)]


class _Validation(_c.Structure):
    _fields_ = [("valid", _i32), ("errors", _i32), ("warnings", _i32)]


class _BvhOptions(_c.Structure):
    _fields_ = [("priority", _i32), ("loop", _i32), ("loop_in", _f), ("loop_out", _f),
                ("ease_in", _f), ("ease_out", _f), ("hand_pose", _i32), ("emote", _c.c_char_p),
                ("skip_unknown_joints", _i32), ("keep_all_frames", _i32), ("importer", _i32),
                ("pelvis_origin_first_frame", _i32), ("hip_turn_degrees", _f)]


class _IkSettings(_c.Structure):
    _fields_ = [("tolerance", _f), ("max_iterations", _i32)]


class _IkReport(_c.Structure):
    _fields_ = [("iterations", _i32), ("initial_error", _f), ("error", _f), ("converged", _i32),
                ("reachable", _i32)]


class _MeshInfo(_c.Structure):
    _fields_ = [("vertex_count", _c.c_uint32), ("triangle_count", _c.c_uint32),
                ("type", _c.c_char * 64)]


class _PuppetryStats(_c.Structure):
    _fields_ = [("blocks_received", _c.c_uint64), ("blocks_dropped", _c.c_uint64),
                ("blocks_malformed", _c.c_uint64), ("samples_queued", _c.c_uint64),
                ("samples_unknown", _c.c_uint64), ("active", _i32)]


def _proto(name, restype, *argtypes):
    fn = getattr(_lib, name)
    fn.restype = restype
    fn.argtypes = list(argtypes)
    return fn


_vp = _c.c_void_p
_pp = _c.POINTER(_c.c_void_p)
_sizep = _c.POINTER(_size)
_i32p = _c.POINTER(_i32)
_intp = _c.POINTER(_c.c_int)

_version = _proto("slanim_version", _c.c_char_p)
_last_error = _proto("slanim_last_error", _c.c_char_p)
_status_name = _proto("slanim_status_name", _c.c_char_p, _status)
_skeleton_default = _proto("slanim_skeleton_default", _status, _pp)
_skeleton_load = _proto("slanim_skeleton_load", _status, _c.c_char_p, _pp)
_skeleton_release = _proto("slanim_skeleton_release", None, _vp)
_skeleton_joint_count = _proto("slanim_skeleton_joint_count", _status, _vp, _i32p)
_skeleton_bone_count = _proto("slanim_skeleton_bone_count", _status, _vp, _i32p)
_skeleton_find_joint = _proto("slanim_skeleton_find_joint", _status, _vp, _c.c_char_p, _i32p)
_skeleton_joint_name = _proto("slanim_skeleton_joint_name", _status, _vp, _i32, _c.c_char_p, _size,
                              _sizep)
_skeleton_joint_parent = _proto("slanim_skeleton_joint_parent", _status, _vp, _i32, _i32p)
_motion_load = _proto("slanim_motion_load", _status, _u8p, _size, _vp, _pp)
_motion_destroy = _proto("slanim_motion_destroy", None, _vp)
_motion_get_info = _proto("slanim_motion_get_info", _status, _vp, _c.POINTER(_MotionInfo))
_motion_sample = _proto("slanim_motion_sample", _status, _vp, _f, _fp, _size, _sizep)
_anim_validate = _proto("slanim_anim_validate", _status, _u8p, _size, _c.c_int, _u8p, _vp,
                        _c.POINTER(_Validation), _c.c_char_p, _size, _sizep)
_bvh_options_init = _proto("slanim_bvh_import_options_init", _status, _c.POINTER(_BvhOptions))
_bvh_to_anim = _proto("slanim_bvh_to_anim", _status, _c.c_char_p, _size, _c.POINTER(_BvhOptions),
                      _u8p, _size, _sizep)
_anim_to_bvh = _proto("slanim_anim_to_bvh", _status, _u8p, _size, _f, _c.c_char_p, _size, _sizep)
_ik_solve = _proto("slanim_ik_solve", _status, _c.c_int, _fp, _size, _fp, _fp,
                   _c.POINTER(_IkSettings), _fp, _fp, _c.POINTER(_IkReport))
_world_create = _proto("slanim_world_create", _status, _i32, _pp)
_world_destroy = _proto("slanim_world_destroy", None, _vp)
_world_step = _proto("slanim_world_step", _status, _vp, _f)
_world_load_motion = _proto("slanim_world_load_motion", _status, _vp, _u8p, _u8p, _size)
_world_unload_motion = _proto("slanim_world_unload_motion", _status, _vp, _u8p)
_world_has_motion = _proto("slanim_world_has_motion", _status, _vp, _u8p, _intp)
_avatar_create = _proto("slanim_avatar_create", _status, _vp, _vp, _c.POINTER(_avatar_t))
_avatar_destroy = _proto("slanim_avatar_destroy", _status, _vp, _avatar_t)
_avatar_valid = _proto("slanim_avatar_valid", _c.c_int, _vp, _avatar_t)
_avatar_start = _proto("slanim_avatar_start_motion", _status, _vp, _avatar_t, _u8p, _f)
_avatar_stop = _proto("slanim_avatar_stop_motion", _status, _vp, _avatar_t, _u8p, _c.c_int)
_avatar_is_active = _proto("slanim_avatar_is_motion_active", _status, _vp, _avatar_t, _u8p, _intp)
_avatar_stop_all = _proto("slanim_avatar_stop_all_motions", _status, _vp, _avatar_t, _c.c_int)
_avatar_time_factor = _proto("slanim_avatar_set_time_factor", _status, _vp, _avatar_t, _f)
_avatar_paused = _proto("slanim_avatar_set_paused", _status, _vp, _avatar_t, _c.c_int)
_avatar_pixel_area = _proto("slanim_avatar_set_pixel_area", _status, _vp, _avatar_t, _f)
_avatar_visible = _proto("slanim_avatar_set_visible", _status, _vp, _avatar_t, _c.c_int)
_avatar_joint_count = _proto("slanim_avatar_joint_count", _status, _vp, _avatar_t, _i32p)
_avatar_transforms = _proto("slanim_avatar_joint_transforms", _status, _vp, _avatar_t, _fp, _size,
                            _sizep)
_avatar_matrices = _proto("slanim_avatar_joint_matrices", _status, _vp, _avatar_t, _fp, _size, _sizep)
_avatar_enable_appearance = _proto("slanim_avatar_enable_appearance", _status, _vp, _avatar_t,
                                   _c.c_int)
_avatar_get_param = _proto("slanim_avatar_get_visual_param", _status, _vp, _avatar_t, _i32, _fp)
_avatar_set_param = _proto("slanim_avatar_set_visual_param", _status, _vp, _avatar_t, _i32, _f)
_avatar_param_range = _proto("slanim_avatar_visual_param_range", _status, _vp, _avatar_t, _i32, _fp,
                             _fp, _fp)
_avatar_apply_wearable = _proto("slanim_avatar_apply_wearable", _status, _vp, _avatar_t, _c.c_char_p,
                                _size, _i32p)
_avatar_mesh_count = _proto("slanim_avatar_mesh_count", _status, _vp, _avatar_t, _i32p)
_avatar_mesh_info = _proto("slanim_avatar_mesh_info", _status, _vp, _avatar_t, _i32,
                           _c.POINTER(_MeshInfo))
_avatar_mesh_vertices = _proto("slanim_avatar_mesh_vertices", _status, _vp, _avatar_t, _i32, _fp, _fp,
                               _size, _sizep)
_avatar_mesh_triangles = _proto("slanim_avatar_mesh_triangles", _status, _vp, _avatar_t, _i32,
                                _c.POINTER(_c.c_uint32), _size, _sizep)
_avatar_puppetry_block = _proto("slanim_avatar_puppetry_block", _status, _vp, _avatar_t, _u8p, _size)
_avatar_puppetry_stats = _proto("slanim_avatar_puppetry_stats", _status, _vp, _avatar_t,
                                _c.POINTER(_PuppetryStats))

# ---------------------------------------------------------------------------------------------
# Errors and helpers
# ---------------------------------------------------------------------------------------------

_BUFFER_TOO_SMALL = 3


class SlanimError(Exception):
    """A failed C API call: ``status`` is the slanim_status name ("SLANIM_ERROR_INVALID_DATA",
    ...), ``code`` its number and the message the library's ``slanim_last_error()``."""

    def __init__(self, code: int, message: str):
        self.code = code
        self.status = _status_name(code).decode()
        super().__init__(f"{self.status}: {message}")


def _check(code: int) -> None:
    if code != 0:
        raise SlanimError(code, _last_error().decode("utf-8", "replace"))


def version() -> str:
    """The library's version text, e.g. "0.1.0"."""
    return _version().decode()


MotionId = Union[_uuid.UUID, str, bytes, bytearray]


def motion_id(value: MotionId) -> bytes:
    """A 16-byte asset UUID from a :class:`uuid.UUID`, its text, or 16 bytes."""
    if isinstance(value, _uuid.UUID):
        return value.bytes
    if isinstance(value, str):
        return _uuid.UUID(value).bytes
    if isinstance(value, (bytes, bytearray)) and len(value) == 16:
        return bytes(value)
    raise ValueError("a motion id is a uuid.UUID, a UUID string or 16 bytes")


def _id_arg(value: MotionId):
    return (_c.c_uint8 * 16).from_buffer_copy(motion_id(value))


def _bytes_arg(data: Union[bytes, bytearray, memoryview]):
    data = bytes(data)
    buf = (_c.c_uint8 * max(len(data), 1)).from_buffer_copy(data or b"\0")
    return buf, len(data)


def _read_floats(fn, *args, shape_tail) -> _np.ndarray:
    """Calls a (…, float* out, size_t capacity, size_t* needed) function twice: size, then data."""
    needed = _size(0)
    code = fn(*args, None, 0, _c.byref(needed))
    if code not in (0, _BUFFER_TOO_SMALL):
        _check(code)
    out = _np.empty(needed.value, dtype=_np.float32)
    _check(fn(*args, out.ctypes.data_as(_fp), out.size, _c.byref(needed)))
    return out.reshape((-1,) + shape_tail)


def _read_bytes(fn, *args, text: bool) -> Union[bytes, str]:
    needed = _size(0)
    code = fn(*args, None, 0, _c.byref(needed))
    if code not in (0, _BUFFER_TOO_SMALL):
        _check(code)
    buf = _c.create_string_buffer(max(needed.value, 1))
    target = buf if text else _c.cast(buf, _u8p)
    _check(fn(*args, target, needed.value, _c.byref(needed)))
    if text:
        return buf.value.decode("utf-8", "replace")
    return buf.raw[: needed.value]


def _vec(values, n: int, name: str) -> _np.ndarray:
    a = _np.ascontiguousarray(values, dtype=_np.float32).reshape(-1)
    if a.size != n:
        raise ValueError(f"{name}: expected {n} numbers, got {a.size}")
    return a


# ---------------------------------------------------------------------------------------------
# Skeletons and motions
# ---------------------------------------------------------------------------------------------


class Skeleton:
    """An immutable SL skeleton: bones, then collision volumes, then attachment points.

    ``Skeleton()`` is the embedded default; ``Skeleton(character_dir)`` reads a viewer character
    folder (avatar_skeleton.xml, avatar_lad.xml; its meshes for appearances)."""

    def __init__(self, character_dir: Optional[Union[str, _os.PathLike]] = None):
        h = _c.c_void_p()
        if character_dir is None:
            _check(_skeleton_default(_c.byref(h)))
        else:
            _check(_skeleton_load(_os.fsencode(character_dir), _c.byref(h)))
        self._h = h

    def __del__(self):
        h = getattr(self, "_h", None)
        if h:
            _skeleton_release(h)
            self._h = None

    @property
    def joint_count(self) -> int:
        n = _i32()
        _check(_skeleton_joint_count(self._h, _c.byref(n)))
        return n.value

    @property
    def bone_count(self) -> int:
        n = _i32()
        _check(_skeleton_bone_count(self._h, _c.byref(n)))
        return n.value

    def find_joint(self, name: str) -> int:
        """Joint index of a canonical name or alias (raises SlanimError NOT_FOUND)."""
        i = _i32()
        _check(_skeleton_find_joint(self._h, name.encode(), _c.byref(i)))
        return i.value

    def joint_name(self, index: int) -> str:
        return _read_bytes(_skeleton_joint_name, self._h, int(index), text=True)

    def parent(self, index: int) -> int:
        p = _i32()
        _check(_skeleton_joint_parent(self._h, int(index), _c.byref(p)))
        return p.value

    @property
    def joint_names(self) -> list:
        return [self.joint_name(i) for i in range(self.joint_count)]


class Motion:
    """A decoded .anim outside any world (playback rules; unknown joints ignored), for sampling
    and inspection. ``Motion(data)`` with the file's bytes, or ``Motion.from_file(path)``."""

    def __init__(self, data: bytes, skeleton: Optional[Skeleton] = None):
        buf, n = _bytes_arg(data)
        h = _c.c_void_p()
        _check(_motion_load(buf, n, skeleton._h if skeleton else None, _c.byref(h)))
        self._h = h
        self._skeleton = skeleton

    @classmethod
    def from_file(cls, path, skeleton: Optional[Skeleton] = None) -> "Motion":
        with open(path, "rb") as f:
            return cls(f.read(), skeleton)

    def __del__(self):
        h = getattr(self, "_h", None)
        if h:
            _motion_destroy(h)
            self._h = None

    @property
    def info(self) -> dict:
        """Header values: duration, loop, loop_in, loop_out, ease_in, ease_out (seconds),
        base_priority, hand_pose, num_joints, num_constraints."""
        i = _MotionInfo()
        _check(_motion_get_info(self._h, _c.byref(i)))
        d = {name: getattr(i, name) for name, _ in _MotionInfo._fields_}
        d["loop"] = bool(d["loop"])
        return d

    def sample(self, time: float) -> _np.ndarray:
        """Local pose at curve time ``time`` (seconds, clamped to [0, duration]): an array
        (joints, 7) of position x y z and rotation x y z w in each joint's parent frame."""
        return _read_floats(_motion_sample, self._h, _f(time), shape_tail=(7,))


class Validation(NamedTuple):
    """Result of :func:`validate`: ``valid`` as the viewer would decide, counts, and one
    diagnostic per line ("error: [rule] message (..., at byte N)")."""
    valid: bool
    errors: int
    warnings: int
    diagnostics: list


def validate(data: bytes, upload: bool = False, asset_id: Optional[MotionId] = None,
             skeleton: Optional[Skeleton] = None) -> Validation:
    """Every rule of the viewer's LLKeyframeMotion::deserialize on .anim bytes, as
    ``slanim validate [--upload]``. Never raises for an invalid file (see ``valid``)."""
    buf, n = _bytes_arg(data)
    aid = _id_arg(asset_id) if asset_id is not None else None
    result = _Validation()
    needed = _size(0)
    code = _anim_validate(buf, n, int(upload), aid, skeleton._h if skeleton else None,
                          _c.byref(result), None, 0, _c.byref(needed))
    if code not in (0, _BUFFER_TOO_SMALL):
        _check(code)
    report = _c.create_string_buffer(max(needed.value, 1))
    _check(_anim_validate(buf, n, int(upload), aid, skeleton._h if skeleton else None,
                          _c.byref(result), report, needed.value, _c.byref(needed)))
    lines = [ln for ln in report.value.decode("utf-8", "replace").splitlines() if ln]
    return Validation(bool(result.valid), result.errors, result.warnings, lines)


class BvhImportOptions(NamedTuple):
    """The uploader's BVH import settings (None: the viewer's default)."""
    priority: Optional[int] = None
    loop: Optional[bool] = None
    loop_in: Optional[float] = None
    loop_out: Optional[float] = None
    ease_in: Optional[float] = None
    ease_out: Optional[float] = None
    hand_pose: Optional[int] = None
    emote: Optional[str] = None
    skip_unknown_joints: bool = False
    keep_all_frames: bool = False
    importer: str = "viewer"  # or "linden-legacy"
    pelvis_origin_first_frame: bool = False
    hip_turn_degrees: float = 0.0


def _bvh_options(o: BvhImportOptions) -> _BvhOptions:
    c = _BvhOptions()
    _check(_bvh_options_init(_c.byref(c)))
    if o.priority is not None:
        c.priority = int(o.priority)
    if o.loop is not None:
        c.loop = int(bool(o.loop))
    for name in ("loop_in", "loop_out", "ease_in", "ease_out"):
        v = getattr(o, name)
        if v is not None:
            setattr(c, name, float(v))
    if o.hand_pose is not None:
        c.hand_pose = int(o.hand_pose)
    if o.emote is not None:
        c.emote = o.emote.encode()
    c.skip_unknown_joints = int(o.skip_unknown_joints)
    c.keep_all_frames = int(o.keep_all_frames)
    if o.importer not in ("viewer", "linden-legacy"):
        raise ValueError("importer: 'viewer' or 'linden-legacy'")
    c.importer = 0 if o.importer == "viewer" else 1
    c.pelvis_origin_first_frame = int(o.pelvis_origin_first_frame)
    c.hip_turn_degrees = float(o.hip_turn_degrees)
    return c


def bvh_to_anim(bvh: Union[str, bytes], options: Optional[BvhImportOptions] = None,
                **kwargs) -> bytes:
    """BVH text → .anim bytes, as ``slanim convert in.bvh out.anim`` (options as
    :class:`BvhImportOptions` or keyword arguments of the same names)."""
    if options is None:
        options = BvhImportOptions(**kwargs)
    elif kwargs:
        options = options._replace(**kwargs)
    text = bvh.encode() if isinstance(bvh, str) else bytes(bvh)
    opts = _bvh_options(options)
    return _read_bytes(_bvh_to_anim, text, len(text), _c.byref(opts), text=False)


def anim_to_bvh(anim: bytes, fps: float = 30.0) -> str:
    """.anim bytes → BVH text sampled at ``fps``, as ``slanim convert in.anim out.bvh``."""
    buf, n = _bytes_arg(anim)
    return _read_bytes(_anim_to_bvh, buf, n, _f(fps), text=True)


# ---------------------------------------------------------------------------------------------
# IK
# ---------------------------------------------------------------------------------------------


class IkReport(NamedTuple):
    iterations: int
    initial_error: float  # metres
    error: float          # metres
    converged: bool
    reachable: bool


def ik_solve(positions, target, solver: str = "ccd", plane_normal=None,
             tolerance: Optional[float] = None, max_iterations: Optional[int] = None):
    """Solves a chain of joint positions (array (n, 3), metres, root first and pinned, end
    effector last; 2 ≤ n ≤ 32) toward ``target`` (3 numbers), or onto the plane through it with
    ``plane_normal``. ``solver``: "ccd" or "fabrik". Returns (positions (n, 3), rotations (n, 4)
    x y z w per joint, :class:`IkReport`)."""
    pos = _np.ascontiguousarray(positions, dtype=_np.float32)
    if pos.ndim != 2 or pos.shape[1] != 3:
        raise ValueError("positions: expected an array of shape (n, 3)")
    n = pos.shape[0]
    tgt = _vec(target, 3, "target")
    normal = _vec(plane_normal, 3, "plane_normal") if plane_normal is not None else None
    solvers = {"ccd": 0, "fabrik": 1}
    if solver not in solvers:
        raise ValueError("solver: 'ccd' or 'fabrik'")
    settings = _IkSettings(0.0005, 20)
    if tolerance is not None:
        settings.tolerance = float(tolerance)
    if max_iterations is not None:
        settings.max_iterations = int(max_iterations)
    out_pos = _np.empty((n, 3), dtype=_np.float32)
    out_rot = _np.empty((n, 4), dtype=_np.float32)
    rep = _IkReport()
    _check(_ik_solve(solvers[solver], pos.ctypes.data_as(_fp), n, tgt.ctypes.data_as(_fp),
                     normal.ctypes.data_as(_fp) if normal is not None else None,
                     _c.byref(settings), out_pos.ctypes.data_as(_fp), out_rot.ctypes.data_as(_fp),
                     _c.byref(rep)))
    return out_pos, out_rot, IkReport(rep.iterations, rep.initial_error, rep.error,
                                      bool(rep.converged), bool(rep.reachable))


# ---------------------------------------------------------------------------------------------
# Worlds and avatars
# ---------------------------------------------------------------------------------------------


class MeshInfo(NamedTuple):
    vertex_count: int
    triangle_count: int
    type: str


class PuppetryStats(NamedTuple):
    blocks_received: int
    blocks_dropped: int
    blocks_malformed: int
    samples_queued: int
    samples_unknown: int
    active: bool


class World:
    """A world of avatars sharing one motion cache (the viewer's LLKeyframeDataCache).

    ``threads``: worker threads for the per-avatar work, 0 = one per hardware thread, 1 = the
    calling thread only; results are identical for every value. Use as a context manager or
    call :meth:`close`; avatars of a closed world are stale."""

    def __init__(self, threads: int = 0):
        h = _c.c_void_p()
        _check(_world_create(int(threads), _c.byref(h)))
        self._h = h

    def close(self) -> None:
        h = getattr(self, "_h", None)
        if h:
            _world_destroy(h)
            self._h = None

    __del__ = close

    def __enter__(self) -> "World":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _handle(self):
        if not self._h:
            raise SlanimError(2, "the world is closed")
        return self._h

    def step(self, dt: float) -> None:
        """Advances every avatar by ``dt`` seconds (0 ≤ dt ≤ 3600) through every phase."""
        _check(_world_step(self._handle(), _f(dt)))

    def load_motion(self, motion: MotionId, data: bytes) -> None:
        """Validates (playback rules) and caches .anim bytes under the asset UUID ``motion``;
        raises SlanimError INVALID_DATA with the rule and byte offset."""
        buf, n = _bytes_arg(data)
        _check(_world_load_motion(self._handle(), _id_arg(motion), buf, n))

    def unload_motion(self, motion: MotionId) -> None:
        _check(_world_unload_motion(self._handle(), _id_arg(motion)))

    def has_motion(self, motion: MotionId) -> bool:
        v = _c.c_int()
        _check(_world_has_motion(self._handle(), _id_arg(motion), _c.byref(v)))
        return bool(v.value)

    def create_avatar(self, skeleton: Optional[Skeleton] = None) -> "Avatar":
        """A new avatar in its rest pose (``skeleton`` None: the embedded default)."""
        sk = skeleton if skeleton is not None else Skeleton()
        a = _avatar_t()
        _check(_avatar_create(self._handle(), sk._h, _c.byref(a)))
        return Avatar(self, a.value)


class Avatar:
    """One avatar of a :class:`World` (a checked handle: calls on a destroyed avatar raise
    SlanimError INVALID_HANDLE)."""

    def __init__(self, world: World, handle: int):
        self.world = world
        self.handle = handle

    def _w(self):
        return self.world._handle()

    @property
    def valid(self) -> bool:
        return bool(self.world._h) and bool(_avatar_valid(self.world._h, self.handle))

    def destroy(self) -> None:
        _check(_avatar_destroy(self._w(), self.handle))

    # Motions ---------------------------------------------------------------------------------
    def start(self, motion: MotionId, start_offset: float = 0.0) -> None:
        """startMotion: the cached motion ``motion`` starts ``start_offset`` seconds in."""
        _check(_avatar_start(self._w(), self.handle, _id_arg(motion), _f(start_offset)))

    def stop(self, motion: MotionId, immediate: bool = False) -> None:
        _check(_avatar_stop(self._w(), self.handle, _id_arg(motion), int(immediate)))

    def is_active(self, motion: MotionId) -> bool:
        v = _c.c_int()
        _check(_avatar_is_active(self._w(), self.handle, _id_arg(motion), _c.byref(v)))
        return bool(v.value)

    def stop_all(self, immediate: bool = False) -> None:
        _check(_avatar_stop_all(self._w(), self.handle, int(immediate)))

    def set_time_factor(self, factor: float) -> None:
        _check(_avatar_time_factor(self._w(), self.handle, _f(factor)))

    def set_paused(self, paused: bool) -> None:
        _check(_avatar_paused(self._w(), self.handle, int(paused)))

    def set_pixel_area(self, area: float) -> None:
        _check(_avatar_pixel_area(self._w(), self.handle, _f(area)))

    def set_visible(self, visible: bool) -> None:
        _check(_avatar_visible(self._w(), self.handle, int(visible)))

    # Outputs ---------------------------------------------------------------------------------
    @property
    def joint_count(self) -> int:
        n = _i32()
        _check(_avatar_joint_count(self._w(), self.handle, _c.byref(n)))
        return n.value

    def joint_transforms(self) -> _np.ndarray:
        """Model pose after the last step: (joints, 7) position x y z, rotation x y z w in the
        avatar-root frame."""
        return _read_floats(_avatar_transforms, self._w(), self.handle, shape_tail=(7,))

    def joint_matrices(self) -> _np.ndarray:
        """Joint world matrices for GPU skinning: (joints, 4, 4), ``m[j, r, c]``."""
        m = _read_floats(_avatar_matrices, self._w(), self.handle, shape_tail=(4, 4))
        return _np.ascontiguousarray(m.transpose(0, 2, 1))  # column-major floats → rows

    # Appearance ------------------------------------------------------------------------------
    def enable_appearance(self, skin: bool = True) -> None:
        _check(_avatar_enable_appearance(self._w(), self.handle, int(skin)))

    def visual_param(self, param_id: int) -> float:
        v = _f()
        _check(_avatar_get_param(self._w(), self.handle, int(param_id), _c.byref(v)))
        return v.value

    def set_visual_param(self, param_id: int, weight: float) -> None:
        _check(_avatar_set_param(self._w(), self.handle, int(param_id), _f(weight)))

    def visual_param_range(self, param_id: int):
        """(min, max, default) of a visual param."""
        lo, hi, d = _f(), _f(), _f()
        _check(_avatar_param_range(self._w(), self.handle, int(param_id), _c.byref(lo),
                                   _c.byref(hi), _c.byref(d)))
        return lo.value, hi.value, d.value

    def apply_wearable(self, data: Union[str, bytes]) -> int:
        """Applies a body-part wearable (LLWearable text); returns the number of params set."""
        text = data.encode() if isinstance(data, str) else bytes(data)
        n = _i32()
        _check(_avatar_apply_wearable(self._w(), self.handle, text, len(text), _c.byref(n)))
        return n.value

    @property
    def mesh_count(self) -> int:
        n = _i32()
        _check(_avatar_mesh_count(self._w(), self.handle, _c.byref(n)))
        return n.value

    def mesh_info(self, mesh: int) -> MeshInfo:
        i = _MeshInfo()
        _check(_avatar_mesh_info(self._w(), self.handle, int(mesh), _c.byref(i)))
        return MeshInfo(i.vertex_count, i.triangle_count, i.type.decode())

    def mesh_vertices(self, mesh: int):
        """Skinned positions and normals of base mesh ``mesh``: two (vertices, 3) arrays."""
        needed = _size(0)
        code = _avatar_mesh_vertices(self._w(), self.handle, int(mesh), None, None, 0,
                                     _c.byref(needed))
        if code not in (0, _BUFFER_TOO_SMALL):
            _check(code)
        pos = _np.empty(needed.value, dtype=_np.float32)
        nrm = _np.empty(needed.value, dtype=_np.float32)
        _check(_avatar_mesh_vertices(self._w(), self.handle, int(mesh), pos.ctypes.data_as(_fp),
                                     nrm.ctypes.data_as(_fp), pos.size, _c.byref(needed)))
        return pos.reshape(-1, 3), nrm.reshape(-1, 3)

    def mesh_triangles(self, mesh: int) -> _np.ndarray:
        """Triangles of base mesh ``mesh``: a (triangles, 3) array of vertex indices."""
        needed = _size(0)
        code = _avatar_mesh_triangles(self._w(), self.handle, int(mesh), None, 0, _c.byref(needed))
        if code not in (0, _BUFFER_TOO_SMALL):
            _check(code)
        out = _np.empty(needed.value, dtype=_np.uint32)
        _check(_avatar_mesh_triangles(self._w(), self.handle, int(mesh),
                                      out.ctypes.data_as(_c.POINTER(_c.c_uint32)), out.size,
                                      _c.byref(needed)))
        return out.reshape(-1, 3)

    # Puppetry --------------------------------------------------------------------------------
    def puppetry_block(self, block: bytes) -> None:
        """One puppetry event block (LLSD binary, 1..255 bytes), played from the next step."""
        buf, n = _bytes_arg(block)
        _check(_avatar_puppetry_block(self._w(), self.handle, buf, n))

    def puppetry_stats(self) -> PuppetryStats:
        s = _PuppetryStats()
        _check(_avatar_puppetry_stats(self._w(), self.handle, _c.byref(s)))
        return PuppetryStats(s.blocks_received, s.blocks_dropped, s.blocks_malformed,
                             s.samples_queued, s.samples_unknown, bool(s.active))
