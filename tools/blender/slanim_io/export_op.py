# SPDX-License-Identifier: MIT
"""File › Export › SL Animation (.anim): the active action of an SL armature written by libslanim
(`slanim.write_anim(nearest=True)`: the viewer's code ranges, each value rounded to its nearest
code so an imported action exported unchanged gives the file's codes back), then checked with the upload rules
(`slanim.validate(upload=True)`); the report is shown in Blender (operator reports and the text
"slanim validation" in the Text Editor). A file with upload errors is not written unless
"Write invalid files" is on.

Keys: each SL bone's rotation channels (quaternion, or Euler converted) and location channels.
Sampling "Auto" writes the keyframes themselves when every key of the action is LINEAR or
CONSTANT (SL interpolates linearly between keys; an imported action stays key for key) and one
key per scene frame between a bone's first and last key otherwise (Bézier curves baked).
Constraints and drivers are not evaluated: bake them first (Pose › Animation › Bake Action).
Time t = (frame − action's frame start) / fps.
"""
import math
import re

import bpy
import numpy as np
from bpy.props import BoolProperty, EnumProperty, FloatProperty, IntProperty, StringProperty
from bpy_extras.io_utils import ExportHelper
from mathutils import Euler, Quaternion, Vector

from . import locate, rig

HAND_POSES = ["Spread", "Relaxed", "Point", "Fist", "Relaxed left", "Point left", "Fist left",
              "Relaxed right", "Point right", "Fist right", "Salute right", "Typing", "Peace right",
              "Palm right"]
_PATH = re.compile(r'pose\.bones\["(.+)"\]\.(rotation_quaternion|rotation_euler|location)$')


def channels(action):
    """{bone: {prop: {index: fcurve}}} for the pose channels the exporter reads."""
    out = {}
    for fc in action.fcurves:
        m = _PATH.match(fc.data_path)
        if m:
            out.setdefault(m.group(1), {}).setdefault(m.group(2), {})[fc.array_index] = fc
    return out


def _frames(curves, bake):
    keys = sorted({kp.co[0] for fc in curves.values() for kp in fc.keyframe_points})
    if bake and keys:
        keys = sorted(set(keys) | set(float(f) for f in range(math.ceil(keys[0]), math.floor(keys[-1]) + 1)))
    return keys


def _value(curves, index, frame, default):
    fc = curves.get(index)
    return fc.evaluate(frame) if fc is not None else default


def joint_keys(bone, chans, bf, start, fps, bake, rotation_order):
    """(rotation keys (n, 5), position keys (m, 4)) of one bone in SL terms."""
    rot, pos = [], []
    if "rotation_quaternion" in chans or "rotation_euler" in chans:
        quat = "rotation_quaternion" in chans
        curves = chans["rotation_quaternion" if quat else "rotation_euler"]
        for f in _frames(curves, bake):
            if quat:
                r = Quaternion([_value(curves, i, f, 1.0 if i == 0 else 0.0) for i in range(4)])
            else:
                r = Euler([_value(curves, i, f, 0.0) for i in range(3)], rotation_order).to_quaternion()
            q = bf.rotation_from_pose(r.normalized())
            rot.append(((f - start) / fps, q.x, q.y, q.z, q.w))
    if "location" in chans:
        curves = chans["location"]
        for f in _frames(curves, bake):
            p = bf.position_from_pose(Vector([_value(curves, i, f, 0.0) for i in range(3)]))
            pos.append(((f - start) / fps, p.x, p.y, p.z))
    return (np.array(rot, dtype=np.float64).reshape(-1, 5), np.array(pos, dtype=np.float64).reshape(-1, 4))


def parse_joint_priorities(text):
    """"mHead=5, mNeck=4" → {"mHead": 5, "mNeck": 4} (ValueError on bad syntax)."""
    out = {}
    for item in filter(None, (s.strip() for s in re.split(r"[,\s]+", text))):
        name, sep, value = item.partition("=")
        if not sep:
            raise ValueError(f"joint priorities: '{item}' is not NAME=PRIORITY")
        out[name] = int(value)
    return out


def collect(arm_obj, action, slanim, start, fps, bake):
    """JointKeys of every SL bone the action animates, and the last key time."""
    frames = rig.bone_frames(arm_obj)
    joints, last = [], 0.0
    for bone, chans in sorted(channels(action).items()):
        if bone not in frames:
            continue
        order = arm_obj.pose.bones[bone].rotation_mode if bone in arm_obj.pose.bones else "XYZ"
        order = order if order in ("XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX") else "XYZ"
        rot, pos = joint_keys(bone, chans, frames[bone], start, fps, bake, order)
        for k in (rot, pos):
            if len(k):
                if k[0, 0] < -1e-4:
                    raise ValueError(f"{bone}: a key at {k[0, 0]:.4f} s is before the action's start "
                                     f"(frame {start:g})")
                k[:, 0] = np.maximum(k[:, 0], 0.0)
                last = max(last, float(k[-1, 0]))
        if len(rot) or len(pos):
            joints.append(slanim.JointKeys(bone, -1, rot, pos))
    return joints, last


class ExportSLAnimation(bpy.types.Operator, ExportHelper):
    """Export the active action of an SL armature as an SL animation (.anim)"""
    bl_idname = "export_anim.slanim"
    bl_label = "Export SL Animation"
    filename_ext = ".anim"

    filter_glob: StringProperty(default="*.anim", options={"HIDDEN"})
    priority: IntProperty(name="Priority", min=0, max=6, default=3)
    joint_priorities: StringProperty(name="Joint priorities", default="",
                                     description="Per-joint priorities, e.g. 'mHead=5, mNeck=4'")
    loop: BoolProperty(name="Loop", default=False)
    # No min/max on the times: a value is written as given (never clamped) and the upload
    # validation reports what the viewer would refuse.
    loop_in: FloatProperty(name="Loop in (s)", default=0.0)
    loop_out: FloatProperty(name="Loop out (s)", default=0.0,
                            description="Unset on an action without stored settings: the duration")
    ease_in: FloatProperty(name="Ease in (s)", default=0.3)
    ease_out: FloatProperty(name="Ease out (s)", default=0.3)
    hand_pose: EnumProperty(name="Hand pose", default="1",
                            items=[(str(i), n, "") for i, n in enumerate(HAND_POSES)])
    emote: StringProperty(name="Emote", default="", description="Emote animation name, empty: none")
    sampling: EnumProperty(name="Sampling", default="AUTO",
                           items=[("AUTO", "Auto", "Keys when all are linear or constant, else every frame"),
                                  ("KEYS", "Keys", "The keyframes only"),
                                  ("FRAMES", "Every frame", "One key per scene frame between the keys")])
    write_invalid: BoolProperty(name="Write invalid files", default=False,
                                description="Write the file even when the upload rules reject it")

    def invoke(self, context, event):
        self._fill_from_action(context, only_unset=False)
        return super().invoke(context, event)

    def _fill_from_action(self, context, only_unset):
        arm = rig.find_sl_armature(context)
        action = arm.animation_data.action if arm and arm.animation_data else None
        if action is None:
            return
        for k in ("priority", "loop", "loop_in", "loop_out", "ease_in", "ease_out", "emote"):
            if ("slanim_" + k) in action and not (only_unset and self.properties.is_property_set(k)):
                setattr(self, k, action["slanim_" + k])
        if "slanim_hand_pose" in action and not (only_unset and self.properties.is_property_set("hand_pose")):
            self.hand_pose = str(min(max(int(action["slanim_hand_pose"]), 0), len(HAND_POSES) - 1))
        jp = action.get("slanim_joint_priorities")
        if jp and not (only_unset and self.properties.is_property_set("joint_priorities")):
            self.joint_priorities = ", ".join(f"{k}={int(v)}" for k, v in jp.items())

    def execute(self, context):
        prefs = context.preferences.addons[__package__].preferences if __package__ in \
            context.preferences.addons else None
        arm = rig.find_sl_armature(context)
        action = arm.animation_data.action if arm and arm.animation_data else None
        if action is None:
            self.report({"ERROR"}, "select an SL armature (bones named mPelvis, mTorso, …) with an action")
            return {"CANCELLED"}
        self._fill_from_action(context, only_unset=True)
        try:
            slanim = locate.load(getattr(prefs, "module_dir", ""))
            data = self._encode(context, arm, action, slanim)
        except Exception as e:  # bad keys or settings: SlanimError/ValueError name the joint
            self.report({"ERROR"}, f"{action.name}: {e}")
            return {"CANCELLED"}
        return self._validate_and_write(slanim, data, action.name)

    def _encode(self, context, arm, action, slanim):
        scene = context.scene
        fps = float(action.get("slanim_fps", scene.render.fps / scene.render.fps_base))
        start = float(action.get("slanim_frame_start", scene.frame_start))
        linear = all(kp.interpolation in ("LINEAR", "CONSTANT") for fc in action.fcurves
                     for kp in fc.keyframe_points)
        bake = self.sampling == "FRAMES" or (self.sampling == "AUTO" and not linear)
        joints, last = collect(arm, action, slanim, start, fps, bake)
        if not joints:
            raise ValueError("the action animates no SL bone")
        stored = float(action.get("slanim_duration", 0.0))
        duration = stored if last <= stored + 1e-4 else last  # keys on the duration: float rounding
        for j in joints:  # key times within float rounding of the duration are the duration
            for k in (j.rot_keys, j.pos_keys):
                if len(k):
                    k[:, 0] = np.where(k[:, 0] > duration, np.where(k[:, 0] <= duration + 1e-4, duration,
                                                                     k[:, 0]), k[:, 0])
        priorities = parse_joint_priorities(self.joint_priorities)
        unknown = sorted(set(priorities) - {j.name for j in joints})
        if unknown:
            raise ValueError(f"joint priorities name joints the action does not animate: {', '.join(unknown)}")
        joints = [j._replace(priority=priorities.get(j.name, -1)) for j in joints]
        loop_out = self.loop_out if (self.properties.is_property_set("loop_out")
                                     or "slanim_loop_out" in action) else duration
        keys = slanim.AnimKeys(duration=duration, priority=self.priority, loop=self.loop,
                               loop_in=self.loop_in, loop_out=loop_out,
                               ease_in=self.ease_in, ease_out=self.ease_out,
                               hand_pose=int(self.hand_pose), emote=self.emote, joints=joints)
        # Each value's nearest code: unchanged imported keys get their file's codes back (the
        # viewer's own serialize floors, moving such a key up to two codes; docs/creator-formats.md).
        return slanim.write_anim(keys, nearest=True)

    def _validate_and_write(self, slanim, data, name):
        v = slanim.validate(data, upload=True)
        text = bpy.data.texts.get("slanim validation") or bpy.data.texts.new("slanim validation")
        text.from_string(f"{self.filepath}: {'valid' if v.valid else 'INVALID'} for upload, "
                         f"{v.errors} error(s), {v.warnings} warning(s)\n" + "\n".join(v.diagnostics) + "\n")
        for line in v.diagnostics:
            self.report({"ERROR"} if line.startswith("error") else {"WARNING"}, f"{name}: {line}")
        if not v.valid and not self.write_invalid:
            self.report({"ERROR"}, f"{name}: the upload rules reject the file: not written "
                        f"(the text 'slanim validation' lists why)")
            return {"CANCELLED"}
        with open(self.filepath, "wb") as f:
            f.write(data)
        self.report({"INFO"}, f"{name}: wrote {self.filepath} ({len(data)} bytes, "
                    f"{'valid' if v.valid else 'INVALID'} for upload)")
        return {"FINISHED"}
