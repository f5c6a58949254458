# SPDX-License-Identifier: MIT
"""File › Import › SL Animation (.anim, .bvh): the keys of an .anim (or of a BVH converted by
slanim's uploader rules, `slanim.bvh_to_anim`) onto an SL armature as a new action.

Everything is read and checked before anything is created: a file slanim rejects is reported
in Blender's UI (self.report) and leaves the scene unchanged. The action gets one LINEAR key per
.anim key (time t on frame `frame_start + t × fps`, fractional frames kept), and the header
(priority, joint priorities, loop, ease, hand pose, emote, duration) as custom properties that
the exporter reads back.
"""
import os

import bpy
import numpy as np
from bpy.props import BoolProperty, EnumProperty, StringProperty
from bpy_extras.io_utils import ImportHelper
from mathutils import Quaternion, Vector

from . import locate, rig

HEADER_KEYS = ("priority", "loop", "loop_in", "loop_out", "ease_in", "ease_out", "hand_pose",
               "emote", "duration")


def read_keys(slanim, path, bvh_importer, skip_unknown):
    """The file's AnimKeys (SlanimError/OSError on bad input)."""
    if path.lower().endswith(".bvh"):
        with open(path, "rb") as f:
            text = f.read()
        data = slanim.bvh_to_anim(text, importer="viewer" if bvh_importer == "CURRENT" else "linden-legacy",
                                  skip_unknown_joints=skip_unknown)
    else:
        with open(path, "rb") as f:
            data = f.read()
    return slanim.read_anim_keys(data)


def _curve(action, bone, prop, index, frames, values):
    fc = action.fcurves.new(f'pose.bones["{bone}"].{prop}', index=index, action_group=bone)
    n = len(frames)
    fc.keyframe_points.add(n)
    co = np.empty(2 * n, dtype=np.float32)
    co[0::2], co[1::2] = frames, values
    fc.keyframe_points.foreach_set("co", co)
    fc.keyframe_points.foreach_set("interpolation", [1] * n)  # 1: 'LINEAR'
    fc.update()


def build_action(arm_obj, keys, name, frame_start, fps):
    """A new action with the keys, converted to the armature's pose channels (rig.BoneFrame)."""
    frames = rig.bone_frames(arm_obj)
    action = bpy.data.actions.new(name)
    for j in keys.joints:
        bf = frames[j.name]
        pb = arm_obj.pose.bones[j.name]
        pb.rotation_mode = "QUATERNION"
        if len(j.rot_keys):
            rot = np.array([tuple(bf.rotation_to_pose(Quaternion((k[4], k[1], k[2], k[3]))))
                            for k in j.rot_keys])
            f = frame_start + j.rot_keys[:, 0].astype(np.float64) * fps
            for i in range(4):
                _curve(action, j.name, "rotation_quaternion", i, f, rot[:, i])
        if len(j.pos_keys):
            loc = np.array([tuple(bf.position_to_pose(Vector(k[1:4]))) for k in j.pos_keys])
            f = frame_start + j.pos_keys[:, 0].astype(np.float64) * fps
            for i in range(3):
                _curve(action, j.name, "location", i, f, loc[:, i])
    for k in HEADER_KEYS:
        action["slanim_" + k] = getattr(keys, k)
    action["slanim_joint_priorities"] = {j.name: j.priority for j in keys.joints if j.priority >= 0}
    action["slanim_frame_start"] = frame_start
    action["slanim_fps"] = fps
    return action


class ImportSLAnimation(bpy.types.Operator, ImportHelper):
    """Import an SL animation (.anim, or .bvh with the uploader's rules) onto an SL armature"""
    bl_idname = "import_anim.slanim"
    bl_label = "Import SL Animation"
    bl_options = {"REGISTER", "UNDO"}

    filter_glob: StringProperty(default="*.anim;*.bvh", options={"HIDDEN"})
    bvh_importer: EnumProperty(
        name="BVH importer", default="CURRENT",
        items=[("CURRENT", "Current viewer", "Today's uploader (LLBVHLoader)"),
               ("LINDEN_LEGACY", "Linden legacy", "The loader of Linden's own animations")])
    skip_unknown: BoolProperty(name="Skip unknown BVH joints", default=False,
                               description="Drop BVH joints that are not SL joints instead of failing")
    set_frame_range: BoolProperty(name="Set scene frame range", default=True)

    def execute(self, context):
        prefs = context.preferences.addons[__package__].preferences if __package__ in \
            context.preferences.addons else None
        try:
            slanim = locate.load(getattr(prefs, "module_dir", ""))
            keys = read_keys(slanim, self.filepath, self.bvh_importer, self.skip_unknown)
        except (locate.ModuleNotFound, OSError) as e:
            self.report({"ERROR"}, f"{self.filepath}: {e}")
            return {"CANCELLED"}
        except Exception as e:  # SlanimError: the library's message names the rule
            self.report({"ERROR"}, f"{self.filepath}: {e}")
            return {"CANCELLED"}
        arm = rig.find_sl_armature(context)
        names = set(arm.data.bones.keys()) if arm else None
        if names is None:
            names = {slanim.Skeleton().joint_name(i) for i in range(slanim.Skeleton().bone_count)}
        missing = [j.name for j in keys.joints if j.name not in names]
        seen, joints, repeated = set(), [], []
        for j in keys.joints:  # the first entry of a joint given twice
            if j.name in names:
                (repeated if j.name in seen else joints).append(j)
                seen.add(j.name)
        keys = keys._replace(joints=joints)
        scene = context.scene
        fps = scene.render.fps / scene.render.fps_base
        name = os.path.splitext(os.path.basename(self.filepath))[0]
        created, action = arm is None, None
        try:
            if created:
                arm = rig.create_armature(context, slanim.Skeleton())
            action = build_action(arm, keys, name, scene.frame_start, fps)
        except Exception as e:  # nothing partial stays: remove what this call made
            if action is not None:
                bpy.data.actions.remove(action)
            if created and arm is not None:
                data = arm.data
                bpy.data.objects.remove(arm)
                bpy.data.armatures.remove(data)
            self.report({"ERROR"}, f"{self.filepath}: {e}")
            return {"CANCELLED"}
        if arm.animation_data is None:
            arm.animation_data_create()
        arm.animation_data.action = action
        if repeated:
            self.report({"WARNING"}, f"{name}: joints given twice, first entry kept: "
                        f"{', '.join(j.name for j in repeated)}")
        if self.set_frame_range:
            scene.frame_end = max(scene.frame_start + 1, int(round(scene.frame_start + keys.duration * fps)))
        if missing:
            self.report({"WARNING"}, f"{name}: joints not in the armature, not imported: {', '.join(missing)}")
        if keys.num_constraints:
            self.report({"WARNING"}, f"{name}: {keys.num_constraints} constraint(s) are not imported")
        self.report({"INFO"}, f"{name}: {len(keys.joints)} joints, {keys.duration:.3f} s onto {arm.name}")
        return {"FINISHED"}
