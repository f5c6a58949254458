# SPDX-License-Identifier: MIT
"""The SL armature in Blender and the mapping between .anim keys and pose-bone channels.

Frames. An .anim key is SL-local: a joint's rotation q and position p in its parent's frame
(SL axes: X forward, Y left, Z up; the skeleton's rest rotations are identity, so a parent's
rest frame has SL's axes). A Blender pose bone's channels are in the bone's rest frame: with
A the rotation from SL axes to the armature's space and B the bone's rest rotation
(`bone.matrix_local`), C = A⁻¹·B is the bone's rest rotation relative to SL axes and

    rotation_quaternion = C⁻¹ · q · C        location = C⁻¹ · (p − o)

where o is the joint's rest offset in SL axes (its head minus its parent's head; 0 for the root
bone, whose key is the offset from the avatar root, the pelvis's rest). Export inverts both.
A is the identity for armatures this add-on creates (armature data in SL axes, marked
`slanim_axes = "SL"`; the object is turned −90° about Z so that the avatar faces Blender's −Y
"front") and a −90° turn about Z for other armatures (the glTF importer's and the usual Blender
rigs' convention: SL forward is Blender −Y).
"""
import math

import bpy
from mathutils import Quaternion, Vector

ROOT_BONE = "mPelvis"


def axes_rotation(arm_obj) -> Quaternion:
    """A: SL axes → the armature's space."""
    if arm_obj.data.get("slanim_axes") == "SL":
        return Quaternion()
    return Quaternion((0.0, 0.0, 1.0), -math.pi / 2)


def is_sl_armature(obj) -> bool:
    return obj is not None and obj.type == "ARMATURE" and ROOT_BONE in obj.data.bones


def find_sl_armature(context):
    """The active object when it is an armature with SL bones, else a selected one, else None."""
    if is_sl_armature(context.active_object):
        return context.active_object
    for obj in context.selected_objects:
        if is_sl_armature(obj):
            return obj
    return None


def _model_rest(skeleton):
    """Rest heads and rotations of the skeleton's bones in the avatar-root frame (SL axes)."""
    rest = skeleton.rest_pose()
    heads, rots = [], []
    for j in range(skeleton.bone_count):
        p, q = Vector(rest[j][:3]), Quaternion((rest[j][6], rest[j][3], rest[j][4], rest[j][5]))
        parent = skeleton.parent(j)
        if 0 <= parent < len(heads):
            heads.append(heads[parent] + rots[parent] @ p)
            rots.append(rots[parent] @ q)
        else:
            heads.append(p)
            rots.append(q)
    return heads, rots


def create_armature(context, skeleton, name="SL Avatar"):
    """A new armature object with the skeleton's bones (names, hierarchy, rest heads; tails along
    each bone's `end`), linked to the active collection and made active."""
    heads, rots = _model_rest(skeleton)
    data = bpy.data.armatures.new(name)
    data["slanim_axes"] = "SL"
    obj = bpy.data.objects.new(name, data)
    context.collection.objects.link(obj)
    # The avatar root is the resting pelvis; lift the object so that the lowest bone head (the
    # toes) stands on Blender's ground, and turn SL forward to Blender's −Y.
    obj.location.z = -min(h.z for h in heads)
    obj.rotation_euler.z = -math.pi / 2
    for o in context.view_layer.objects:
        o.select_set(False)
    context.view_layer.objects.active = obj
    obj.select_set(True)
    bpy.ops.object.mode_set(mode="EDIT")
    try:
        edit = data.edit_bones
        for j in range(skeleton.bone_count):
            eb = edit.new(skeleton.joint_name(j))
            end = Vector(skeleton.joint_end(j))
            if end.length < 1e-3:
                end = Vector((0.0, 0.0, 0.02))
            eb.head = heads[j]
            eb.tail = heads[j] + rots[j] @ end
            eb.roll = 0.0
            parent = skeleton.parent(j)
            if 0 <= parent < j:
                eb.parent = edit[skeleton.joint_name(parent)]
    finally:
        bpy.ops.object.mode_set(mode="OBJECT")
    return obj


class BoneFrame:
    """C (the bone's rest rotation relative to SL axes) and o (its rest offset in SL axes)."""

    def __init__(self, arm_obj, bone):
        a_inv = axes_rotation(arm_obj).inverted()
        self.c = a_inv @ bone.matrix_local.to_quaternion()
        self.c_inv = self.c.inverted()
        if bone.parent is None:
            self.o = Vector((0.0, 0.0, 0.0))
        else:
            self.o = a_inv @ (bone.head_local - bone.parent.head_local)

    def rotation_to_pose(self, q: Quaternion) -> Quaternion:
        return self.c_inv @ q @ self.c

    def rotation_from_pose(self, r: Quaternion) -> Quaternion:
        return self.c @ r @ self.c_inv

    def position_to_pose(self, p: Vector) -> Vector:
        return self.c_inv @ (p - self.o)

    def position_from_pose(self, loc: Vector) -> Vector:
        return self.c @ loc + self.o


def bone_frames(arm_obj):
    return {b.name: BoneFrame(arm_obj, b) for b in arm_obj.data.bones}


