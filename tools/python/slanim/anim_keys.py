# SPDX-License-Identifier: MIT
"""The keys of an .anim, for editors (the Blender add-on, tools/blender): read a file's header and
every joint's keys as decoded by the viewer's rules, and write an .anim from keys with the
viewer's quantization. Both call libslanim (slanim_motion_joint*, slanim_anim_encode): the
decoding and encoding are the library's, not a second implementation.

Units and frames: seconds; metres; SL frame (X forward, Y left, Z up); a rotation key is the
joint's local rotation in its parent's frame (x, y, z, w); a position key is the joint's local
position in its parent's frame (mPelvis: its offset from the avatar root). Thread safety: any
thread; the objects are plain data.
"""
import ctypes as _c
from typing import List, NamedTuple, Optional

import numpy as _np

from . import (Motion, Skeleton, _check, _f, _fp, _i32, _i32p, _lib, _proto, _read_bytes, _size,
               _sizep, _status, _u8p, _vp)


class _JointInfo(_c.Structure):
    _fields_ = [("joint", _i32), ("priority", _i32), ("num_rot_keys", _i32), ("num_pos_keys", _i32)]


class _AnimHeader(_c.Structure):
    _fields_ = [("priority", _i32), ("duration", _f), ("loop", _i32), ("loop_in", _f), ("loop_out", _f),
                ("ease_in", _f), ("ease_out", _f), ("hand_pose", _i32), ("emote", _c.c_char_p)]


class _AnimJoint(_c.Structure):
    _fields_ = [("name", _c.c_char_p), ("priority", _i32), ("rot_keys", _fp), ("num_rot_keys", _size),
                ("pos_keys", _fp), ("num_pos_keys", _size)]


_entries = _proto("slanim_motion_joint_entries", _status, _vp, _i32p)
_joint = _proto("slanim_motion_joint", _status, _vp, _i32, _c.POINTER(_JointInfo), _c.c_char_p, _size,
                _sizep)
_joint_keys = _proto("slanim_motion_joint_keys", _status, _vp, _i32, _fp, _size, _fp, _size)
_emote = _proto("slanim_motion_emote", _status, _vp, _c.c_char_p, _size, _sizep)
_encode = _proto("slanim_anim_encode", _status, _c.POINTER(_AnimHeader), _c.POINTER(_AnimJoint), _size,
                 _vp, _u8p, _size, _sizep)
_encode_nearest = _proto("slanim_anim_encode_nearest", _status, _c.POINTER(_AnimHeader), _c.POINTER(_AnimJoint),
                         _size, _vp, _u8p, _size, _sizep)
del _lib


class JointKeys(NamedTuple):
    """One animated joint: ``rot_keys`` an array (n, 5) of time, x, y, z, w; ``pos_keys`` (m, 4) of
    time, x, y, z; ``priority`` −1 means the motion's base priority."""
    name: str
    priority: int = -1
    rot_keys: _np.ndarray = _np.zeros((0, 5), _np.float32)
    pos_keys: _np.ndarray = _np.zeros((0, 4), _np.float32)


class AnimKeys(NamedTuple):
    """A whole .anim as keys: the header (seconds; priority 0..6; hand pose 0..13; emote name or
    "") and its joints. Constraints are not part of it (editing them is not supported)."""
    duration: float
    priority: int = 2
    loop: bool = False
    loop_in: float = 0.0
    loop_out: float = 0.0
    ease_in: float = 0.3
    ease_out: float = 0.3
    hand_pose: int = 1
    emote: str = ""
    joints: List[JointKeys] = []
    num_constraints: int = 0  # how many the file had (read only; write_anim writes none)


def read_anim_keys(data: bytes, skeleton: Optional[Skeleton] = None) -> AnimKeys:
    """Decodes .anim bytes (the viewer's playback rules; raises SlanimError INVALID_DATA with the
    first broken rule) into its header and keys. Joints the skeleton does not know are kept with
    their file name (they animate nothing in the viewer)."""
    m = Motion(data, skeleton)
    info = m.info
    count = _i32()
    _check(_entries(m._h, _c.byref(count)))
    joints = []
    for i in range(count.value):
        ji = _JointInfo()
        name = _read_bytes(lambda *a: _joint(m._h, i, _c.byref(ji), *a), text=True)
        rot = _np.zeros((ji.num_rot_keys, 5), _np.float32)
        pos = _np.zeros((ji.num_pos_keys, 4), _np.float32)
        _check(_joint_keys(m._h, i, rot.ctypes.data_as(_fp), rot.size, pos.ctypes.data_as(_fp), pos.size))
        joints.append(JointKeys(name, ji.priority, rot, pos))
    emote = _read_bytes(lambda *a: _emote(m._h, *a), text=True)
    return AnimKeys(duration=info["duration"], priority=info["base_priority"], loop=info["loop"],
                    loop_in=info["loop_in"], loop_out=info["loop_out"], ease_in=info["ease_in"],
                    ease_out=info["ease_out"], hand_pose=info["hand_pose"], emote=emote,
                    joints=joints, num_constraints=info["num_constraints"])


def write_anim(keys: AnimKeys, skeleton: Optional[Skeleton] = None, nearest: bool = False) -> bytes:
    """.anim bytes from keys with the viewer's quantization (LLKeyframeMotion::serialize), or with
    ``nearest=True`` each value's nearest code (slanim_anim_encode_nearest: keys read with
    read_anim_keys and left unchanged get their file's codes back; for editors — the viewer floors).
    Raises SlanimError: OUT_OF_RANGE for a header value, a priority or a key outside its range
    (times in [0, duration] increasing per joint; positions within ±5 m — never clamped; the
    message names the joint and the time), INVALID_DATA for an unknown joint name, a joint
    given twice or a zero rotation. Check the upload rules with ``validate(..., upload=True)``."""
    header = _AnimHeader(int(keys.priority), float(keys.duration), int(bool(keys.loop)),
                         float(keys.loop_in), float(keys.loop_out), float(keys.ease_in),
                         float(keys.ease_out), int(keys.hand_pose), (keys.emote or "").encode())
    arrays, joints = [], (_AnimJoint * max(len(keys.joints), 1))()
    for i, j in enumerate(keys.joints):
        rot = _np.ascontiguousarray(j.rot_keys, dtype=_np.float32).reshape(-1, 5)
        pos = _np.ascontiguousarray(j.pos_keys, dtype=_np.float32).reshape(-1, 4)
        arrays += [rot, pos]
        joints[i] = _AnimJoint(j.name.encode(), int(j.priority), rot.ctypes.data_as(_fp), len(rot),
                               pos.ctypes.data_as(_fp), len(pos))
    sk = skeleton._h if skeleton else None
    encode = _encode_nearest if nearest else _encode
    return _read_bytes(lambda *a: encode(_c.byref(header), joints, len(keys.joints), sk, *a), text=False)
