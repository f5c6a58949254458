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
Custom motions (:meth:`World.register_custom_motion`) call Python from the world's worker
threads during :meth:`World.step`; ctypes takes the GIL for each call, so they run one at a time
and ``threads=1`` is the sensible choice for a world with Python custom motions.

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
    "PuppetryStats", "motion_id", "JointOverride", "ActiveOverride", "CustomFrame",
    "PROCEDURAL_BREATHE", "PROCEDURAL_BODY_NOISE", "PROCEDURAL_HEAD_ROT", "PROCEDURAL_EYE",
    "PROCEDURAL_ALL", "AnimKeys", "JointKeys", "read_anim_keys", "write_anim",
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
_skeleton_rest_pose = _proto("slanim_skeleton_rest_pose", _status, _vp, _fp, _size, _sizep)
_skeleton_joint_end = _proto("slanim_skeleton_joint_end", _status, _vp, _i32, _fp)
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

    def rest_pose(self) -> _np.ndarray:
        """The rest pose: an array (joints, 7) of local position x y z (metres, parent frame;
        mPelvis at the avatar root) and rotation x y z w, from avatar_skeleton.xml."""
        return _read_floats(_skeleton_rest_pose, self._h, shape_tail=(7,))

    def joint_end(self, index: int) -> _np.ndarray:
        """The bone tip of a joint (avatar_skeleton.xml `end`, metres in its frame): for drawing."""
        e = _np.zeros(3, _np.float32)
        _check(_skeleton_joint_end(self._h, int(index), e.ctypes.data_as(_fp)))
        return e


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
        self._custom_registrations = []  # callbacks of custom motions: alive until close()
        self._callback_errors = []  # exceptions raised by custom-motion callbacks
        h = _c.c_void_p()
        _check(_world_create(int(threads), _c.byref(h)))
        self._h = h

    def close(self) -> None:
        h = getattr(self, "_h", None)
        if h:
            _world_destroy(h)  # frees the custom-motion instances (their destroy callbacks)
            self._h = None
        self._custom_registrations = []

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
        if self._callback_errors:
            errors, self._callback_errors = self._callback_errors, []
            raise errors[0]

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
        av = Avatar(self, a.value)
        av.skeleton = sk
        return av


class Avatar:
    """One avatar of a :class:`World` (a checked handle: calls on a destroyed avatar raise
    SlanimError INVALID_HANDLE)."""

    def __init__(self, world: World, handle: int):
        self.world = world
        self.handle = handle
        self.skeleton: Optional[Skeleton] = None  # set by World.create_avatar

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

    # Joint attachment overrides --------------------------------------------------------------
    def _joint(self, joint: Union[int, str]) -> int:
        if isinstance(joint, str):
            sk = self.skeleton if self.skeleton is not None else Skeleton()
            return sk.find_joint(joint)
        return int(joint)

    def add_attachment_overrides(self, mesh_id: MotionId, *overrides, lock_scale_if_joint_position:
                                 bool = False, pelvis_offset: float = 0.0) -> None:
        """LLVOAvatar::addAttachmentOverridesForObject for the rigged mesh ``mesh_id`` (a UUID):
        each override is a :class:`JointOverride` (or a (joint, position, scale) tuple; joint an
        index or a name; position metres in the parent's frame, applied only 0.1 mm or more away
        from the default; scale factors; either may be None). ``overrides`` may also be passed
        as one list. The active override of a joint is the largest mesh UUID. Raises
        SlanimError: ALREADY_EXISTS (the mesh is applied: remove it first), OUT_OF_RANGE (null
        UUID, joint index, non-finite value), NOT_FOUND (unknown joint name)."""
        if len(overrides) == 1 and isinstance(overrides[0], (list, tuple)) and \
                not isinstance(overrides[0], JointOverride) and \
                (not overrides[0] or isinstance(overrides[0][0], (JointOverride, tuple, list))):
            overrides = tuple(overrides[0])  # one list (or tuple) of overrides
        arr = (_JointOverride * max(len(overrides), 1))()
        for k, o in enumerate(overrides):
            o = o if isinstance(o, JointOverride) else JointOverride(*o)
            arr[k].joint = self._joint(o.joint)
            if o.position is not None:
                arr[k].has_position = 1
                arr[k].position[:] = [float(v) for v in _vec(o.position, 3, "position")]
            if o.scale is not None:
                arr[k].has_scale = 1
                arr[k].scale[:] = [float(v) for v in _vec(o.scale, 3, "scale")]
        _check(_avatar_add_overrides(self._w(), self.handle, _id_arg(mesh_id), arr, len(overrides),
                                     int(lock_scale_if_joint_position), _f(pelvis_offset)))

    def add_attachment_overrides_from_skin(self, mesh_id: MotionId, skin: Union[str, bytes],
                                           format: str = "xml"):
        """The overrides of a mesh's skin info (LLMeshSkinInfo: ``joint_names``,
        ``alt_inverse_bind_matrix``, ``pelvis_offset``, ``lock_scale_if_joint_position``) given
        as LLSD text, ``format`` "xml" or "notation". Returns (joint entries used, unknown joint
        names skipped). Raises SlanimError INVALID_DATA naming the LLSD path."""
        text = skin.encode() if isinstance(skin, str) else bytes(skin)
        formats = {"xml": 0, "notation": 1}
        if format not in formats:
            raise ValueError("format: 'xml' or 'notation'")
        used, unknown = _i32(), _i32()
        _check(_avatar_add_overrides_skin(self._w(), self.handle, _id_arg(mesh_id), text, len(text),
                                          formats[format], _c.byref(used), _c.byref(unknown)))
        return used.value, unknown.value

    def remove_attachment_overrides(self, mesh_id: MotionId) -> None:
        """removeAttachmentOverridesForObject (SlanimError NOT_FOUND when not applied)."""
        _check(_avatar_remove_overrides(self._w(), self.handle, _id_arg(mesh_id)))

    def clear_attachment_overrides(self) -> None:
        _check(_avatar_clear_overrides(self._w(), self.handle))

    def reset_skeleton(self) -> None:
        """resetSkeleton: rest pose (and skeletal visual params), then the overrides again."""
        _check(_avatar_reset_skeleton(self._w(), self.handle))

    def active_position_override(self, joint: Union[int, str]) -> "ActiveOverride":
        a = _ActiveOverride()
        _check(_avatar_active_pos(self._w(), self.handle, self._joint(joint), _c.byref(a)))
        return ActiveOverride._from(a)

    def active_scale_override(self, joint: Union[int, str]) -> "ActiveOverride":
        a = _ActiveOverride()
        _check(_avatar_active_scale(self._w(), self.handle, self._joint(joint), _c.byref(a)))
        return ActiveOverride._from(a)

    def pelvis_fixup(self) -> "ActiveOverride":
        """The active pelvis fix-up: value (0, 0, metres) the host adds to the render position."""
        a = _ActiveOverride()
        _check(_avatar_pelvis_fixup(self._w(), self.handle, _c.byref(a)))
        return ActiveOverride._from(a)

    def attachment_override_meshes(self) -> list:
        """The applied meshes (uuid.UUID), in the order added."""
        raw = _read_bytes(_avatar_override_meshes, self._w(), self.handle, text=False)
        return [_uuid.UUID(bytes=raw[i:i + 16]) for i in range(0, len(raw), 16)]

    def body_size(self):
        """(pelvis_to_foot, height), metres (LLAvatarAppearance::computeBodySize)."""
        p, h = _f(), _f()
        _check(_avatar_body_size(self._w(), self.handle, _c.byref(p), _c.byref(h)))
        return p.value, h.value

    # Procedural motions ----------------------------------------------------------------------
    def set_procedural_motions(self, breathe: bool = False, body_noise: bool = False,
                               head_rot: bool = False, eye: bool = False, *,
                               flags: Optional[int] = None) -> None:
        """Turns the viewer's procedural motions on or off (off ones ease out): breathe, body
        noise, head rot (toward the look-at target), eye (saccades, blinks, look-at). ``flags``
        (PROCEDURAL_* ORed) replaces the keywords when given."""
        if flags is None:
            flags = ((PROCEDURAL_BREATHE if breathe else 0) | (PROCEDURAL_BODY_NOISE if body_noise else 0)
                     | (PROCEDURAL_HEAD_ROT if head_rot else 0) | (PROCEDURAL_EYE if eye else 0))
        _check(_avatar_procedural(self._w(), self.handle, int(flags)))

    def set_look_at(self, target, frame: str = "root") -> None:
        """The look-at target (3 numbers, metres): ``frame`` "root" for a point in the
        avatar-root frame, "head" for the vector from the head joint to the target."""
        frames = {"root": 0, "head": 1}
        if frame not in frames:
            raise ValueError("frame: 'root' or 'head'")
        t = _vec(target, 3, "target")
        _check(_avatar_set_look_at(self._w(), self.handle, t.ctypes.data_as(_fp), frames[frame]))

    def clear_look_at(self) -> None:
        _check(_avatar_clear_look_at(self._w(), self.handle))


# ---------------------------------------------------------------------------------------------
# Joint attachment overrides, procedural motions, custom motions
# ---------------------------------------------------------------------------------------------

PROCEDURAL_BREATHE = 0x1
PROCEDURAL_BODY_NOISE = 0x2
PROCEDURAL_HEAD_ROT = 0x4
PROCEDURAL_EYE = 0x8
PROCEDURAL_ALL = 0xF


class _JointOverride(_c.Structure):
    _fields_ = [("joint", _i32), ("has_position", _i32), ("position", _f * 3), ("has_scale", _i32),
                ("scale", _f * 3)]


class _ActiveOverride(_c.Structure):
    _fields_ = [("found", _i32), ("count", _c.c_uint32), ("value", _f * 3),
                ("mesh_id", _c.c_uint8 * 16)]


class _CustomJoint(_c.Structure):
    _fields_ = [("joint", _i32), ("usage", _c.c_uint32), ("priority", _i32)]


class _CustomFrame(_c.Structure):
    _fields_ = [("time", _f), ("dt", _f), ("weight", _f), ("has_look_at", _i32),
                ("look_at", _f * 3), ("skeleton_joint_count", _i32), ("local_rotations", _fp),
                ("local_positions", _fp), ("model_rotations", _fp), ("model_positions", _fp),
                ("joint_count", _i32), ("avatar", _c.c_uint64)]


_create_fn = _c.CFUNCTYPE(_c.c_void_p, _c.c_void_p, _c.c_uint64)
_destroy_fn = _c.CFUNCTYPE(None, _c.c_void_p, _c.c_void_p)
_update_fn = _c.CFUNCTYPE(_c.c_int, _c.c_void_p, _c.c_void_p, _c.POINTER(_CustomFrame), _fp, _fp, _fp)


class _CustomDesc(_c.Structure):
    _fields_ = [("joints", _c.POINTER(_CustomJoint)), ("joint_count", _size), ("priority", _i32),
                ("blend_type", _i32), ("ease_in", _f), ("ease_out", _f), ("loop", _i32),
                ("duration", _f), ("min_pixel_area", _f), ("can_deprecate", _i32),
                ("create", _create_fn), ("destroy", _destroy_fn), ("update", _update_fn),
                ("user", _c.c_void_p)]


_avatar_add_overrides = _proto("slanim_avatar_add_attachment_overrides", _status, _vp, _avatar_t, _u8p,
                               _c.POINTER(_JointOverride), _size, _c.c_int, _f)
_avatar_add_overrides_skin = _proto("slanim_avatar_add_attachment_overrides_from_skin", _status, _vp,
                                    _avatar_t, _u8p, _c.c_char_p, _size, _i32, _i32p, _i32p)
_avatar_remove_overrides = _proto("slanim_avatar_remove_attachment_overrides", _status, _vp, _avatar_t,
                                  _u8p)
_avatar_clear_overrides = _proto("slanim_avatar_clear_attachment_overrides", _status, _vp, _avatar_t)
_avatar_reset_skeleton = _proto("slanim_avatar_reset_skeleton", _status, _vp, _avatar_t)
_avatar_active_pos = _proto("slanim_avatar_active_position_override", _status, _vp, _avatar_t, _i32,
                            _c.POINTER(_ActiveOverride))
_avatar_active_scale = _proto("slanim_avatar_active_scale_override", _status, _vp, _avatar_t, _i32,
                              _c.POINTER(_ActiveOverride))
_avatar_pelvis_fixup = _proto("slanim_avatar_pelvis_fixup", _status, _vp, _avatar_t,
                              _c.POINTER(_ActiveOverride))
_avatar_override_meshes = _proto("slanim_avatar_attachment_override_meshes", _status, _vp, _avatar_t,
                                 _u8p, _size, _sizep)
_avatar_body_size = _proto("slanim_avatar_body_size", _status, _vp, _avatar_t, _fp, _fp)
_avatar_procedural = _proto("slanim_avatar_set_procedural_motions", _status, _vp, _avatar_t,
                            _c.c_uint32)
_avatar_set_look_at = _proto("slanim_avatar_set_look_at", _status, _vp, _avatar_t, _fp, _i32)
_avatar_clear_look_at = _proto("slanim_avatar_clear_look_at", _status, _vp, _avatar_t)
_custom_desc_init = _proto("slanim_custom_motion_desc_init", _status, _c.POINTER(_CustomDesc))
_world_register_custom = _proto("slanim_world_register_custom_motion", _status, _vp, _u8p, _vp,
                                _c.POINTER(_CustomDesc))
_world_unregister_custom = _proto("slanim_world_unregister_custom_motion", _status, _vp, _u8p)
_world_has_custom = _proto("slanim_world_has_custom_motion", _status, _vp, _u8p, _intp)


class JointOverride(NamedTuple):
    """One joint's override from one mesh: ``joint`` (index or name), ``position`` (3 numbers,
    metres, the joint's parent frame, or None), ``scale`` (3 factors, or None)."""
    joint: Union[int, str]
    position: Optional[Sequence[float]] = None
    scale: Optional[Sequence[float]] = None


class ActiveOverride(NamedTuple):
    """The active override of a joint (or the pelvis fix-up): ``found``, ``value`` (3 floats:
    position metres, scale, or (0, 0, fix-up)), ``mesh_id`` (the winning mesh, the largest
    UUID; None when not found) and ``count`` (meshes overriding it)."""
    found: bool
    value: tuple
    mesh_id: Optional[_uuid.UUID]
    count: int

    @classmethod
    def _from(cls, a: "_ActiveOverride") -> "ActiveOverride":
        if not a.found:
            return cls(False, (0.0, 0.0, 0.0), None, 0)
        return cls(True, tuple(a.value), _uuid.UUID(bytes=bytes(a.mesh_id)), a.count)


class CustomFrame(NamedTuple):
    """What a custom motion's update gets (valid during the call only; the arrays are views of
    the library's memory: copy what you keep). ``time`` seconds since activation, ``dt`` this
    frame's step, ``weight`` the pose weight [0, 1], ``look_at`` (3, head → target vector,
    metres, avatar-root axes) or None, ``avatar`` the avatar's handle (an identifier: do not
    call the world from the callback), ``instance`` what ``create`` returned (None without
    create); the avatar's pose before this frame's blend: ``local_rotations`` /
    ``model_rotations`` (joints, 4) and ``local_positions`` / ``model_positions`` (joints, 3),
    or None."""
    time: float
    dt: float
    weight: float
    look_at: Optional[_np.ndarray]
    avatar: int
    instance: object
    local_rotations: Optional[_np.ndarray]
    local_positions: Optional[_np.ndarray]
    model_rotations: Optional[_np.ndarray]
    model_positions: Optional[_np.ndarray]


def _view(ptr, rows: int, cols: int) -> Optional[_np.ndarray]:
    if not ptr or rows <= 0:
        return None
    return _np.ctypeslib.as_array(ptr, shape=(rows, cols))


class _CustomRegistration:
    """The ctypes callbacks of one custom motion and its live Python instances (kept by the
    world until it is closed: instances may outlive unregister_custom_motion)."""

    def __init__(self, world: "World", update, create):
        self.world = world
        self.update = update
        self.create = create
        self.instances = {}
        self.next_key = 1
        self.c_create = _create_fn(self._create)
        self.c_destroy = _destroy_fn(self._destroy)
        self.c_update = _update_fn(self._update)

    def _create(self, _user, seed):
        try:
            obj = self.create(seed) if self.create is not None else None
        except BaseException as e:  # noqa: BLE001 - reported by World.step
            self.world._callback_errors.append(e)
            obj = None
        key = self.next_key
        self.next_key += 1
        self.instances[key] = obj
        return key

    def _destroy(self, _user, instance):
        self.instances.pop(instance or 0, None)

    def _update(self, _user, instance, frame_p, rot, pos, scale):
        try:
            f = frame_p.contents
            n = f.joint_count
            sn = f.skeleton_joint_count
            frame = CustomFrame(f.time, f.dt, f.weight,
                                _np.array(f.look_at, dtype=_np.float32) if f.has_look_at else None,
                                f.avatar, self.instances.get(instance or 0),
                                _view(f.local_rotations, sn, 4), _view(f.local_positions, sn, 3),
                                _view(f.model_rotations, sn, 4), _view(f.model_positions, sn, 3))
            keep = self.update(frame, _view(rot, n, 4), _view(pos, n, 3), _view(scale, n, 3))
            return 0 if keep is False else 1
        except BaseException as e:  # noqa: BLE001 - reported by World.step; the motion stops
            self.world._callback_errors.append(e)
            return 0


def _world_register_custom_motion(self, motion: MotionId, skeleton: Optional[Skeleton], joints,
                                  update, *, create=None, priority: int = 1, blend: str = "normal",
                                  ease_in: float = 0.0, ease_out: float = 0.0, loop: bool = True,
                                  duration: float = 0.0, min_pixel_area: float = 40.0,
                                  can_deprecate: bool = True) -> None:
    """Registers a custom motion under ``motion`` (a UUID not used by a cached .anim) for
    avatars of ``skeleton`` (None: the embedded default), started, stopped and queried with
    :meth:`Avatar.start` / :meth:`Avatar.stop` / :meth:`Avatar.is_active`.

    ``joints``: a list of (joint, usage[, priority]) — joint an index or name; usage a string
    of "r" (rotation), "p" (position), "s" (scale) or the SLANIM_USAGE bits 2, 1, 4; priority
    0..6 or -1 (the motion's). ``update(frame, rotations, positions, scales)`` is called for
    each evaluated frame with a :class:`CustomFrame` and the instance's joint states as
    writable (n, 4) / (n, 3) / (n, 3) arrays (scales None when no joint uses scale), holding
    what it wrote last frame; it returns False to stop the motion (anything else keeps it).
    ``create(seed)`` (optional) makes the per-instance object passed as ``frame.instance``.
    Other keywords: the motion's priority (0..6), blend "normal" or "additive", ease_in,
    ease_out, duration (seconds), loop, min_pixel_area, can_deprecate.

    Threads: ``update`` and ``create`` run on the world's worker threads during
    :meth:`step` (ctypes takes the GIL around each call, so Python code runs one call at a
    time: ``World(threads=1)`` is the sensible choice) and must not call this world. An
    exception raised by a callback stops that motion and is raised again by the next
    :meth:`step` (after the step completed). The callbacks stay referenced until the world is
    closed."""
    sk = skeleton if skeleton is not None else Skeleton()
    rows = list(joints)
    arr = (_CustomJoint * max(len(rows), 1))()
    for k, row in enumerate(rows):
        j, usage = row[0], row[1]
        prio = row[2] if len(row) > 2 else -1
        arr[k].joint = sk.find_joint(j) if isinstance(j, str) else int(j)
        if isinstance(usage, str):
            bits = {"p": 1, "r": 2, "s": 4}
            if not usage or any(ch not in bits for ch in usage):
                raise ValueError(f"joints[{k}]: usage is a string of 'r', 'p', 's'")
            usage = sum(bits[ch] for ch in set(usage))
        arr[k].usage = int(usage)
        arr[k].priority = int(prio)
    blends = {"normal": 0, "additive": 1}
    if blend not in blends:
        raise ValueError("blend: 'normal' or 'additive'")
    reg = _CustomRegistration(self, update, create)
    d = _CustomDesc()
    _check(_custom_desc_init(_c.byref(d)))
    d.joints = arr
    d.joint_count = len(rows)
    d.priority = int(priority)
    d.blend_type = blends[blend]
    d.ease_in, d.ease_out, d.duration = float(ease_in), float(ease_out), float(duration)
    d.loop = int(bool(loop))
    d.min_pixel_area = float(min_pixel_area)
    d.can_deprecate = int(bool(can_deprecate))
    d.create, d.destroy, d.update = reg.c_create, reg.c_destroy, reg.c_update
    _check(_world_register_custom(self._handle(), _id_arg(motion), sk._h, _c.byref(d)))
    self._custom_registrations.append(reg)


def _world_unregister_custom_motion(self, motion: MotionId) -> None:
    """Forgets a custom motion id (later starts raise NOT_FOUND; playing instances go on)."""
    _check(_world_unregister_custom(self._handle(), _id_arg(motion)))


def _world_has_custom_motion(self, motion: MotionId) -> bool:
    v = _c.c_int()
    _check(_world_has_custom(self._handle(), _id_arg(motion), _c.byref(v)))
    return bool(v.value)


World.register_custom_motion = _world_register_custom_motion
World.unregister_custom_motion = _world_unregister_custom_motion
World.has_custom_motion = _world_has_custom_motion


# .anim keys for editors (slanim/anim_keys.py): read a file's keys, write an .anim from keys.
from .anim_keys import AnimKeys, JointKeys, read_anim_keys, write_anim  # noqa: E402,F401
