# SPDX-License-Identifier: MIT
"""The add-on (tools/blender/slanim_io), installed from its zip and run headless:

* round trip: every shared .anim imported (File › Import › SL Animation) then exported (File ›
  Export › SL Animation) plays like the original: the same header (priority, loop points, ease,
  hand pose, emote), the same joints and key counts, key times within one time step
  (duration / 65535) and every joint's sampled local pose (`slanim.Motion.sample`, the viewer's
  curve rules) at every original key time within one quantization step of the key it came from
  (rotation x, y, z: 2/65535; position: 10/65535 m): TOLERANCE_STEPS. The add-on encodes each
  value to its nearest code (`slanim.write_anim(nearest=True)`), so an unchanged key gets its
  own code back; the viewer's serialize floors, which would move some decoded values by up to
  two steps (`AnimRealData.ReencodingMovesSomeCodesTwoStepsLikeTheViewer`).
* a hand-keyed action (Bézier keys, an Euler-mode bone, a pelvis path) on the add-on's own
  armature exports to an .anim whose sampled local rotations and pelvis offset equal Blender's
  evaluated pose at every frame within 0.02° and 0.55 mm (two position codes per axis);
* bad input: a truncated .anim, a BVH with a syntax error, an export with a position beyond
  ±5 m and with joint priorities for joints the action lacks are reported in Blender's UI
  (the operator is cancelled with an error) and leave nothing behind (no object, armature,
  action or file).

    blender -b --factory-startup --python addon_round_trip.py -- ADDON_ZIP PYTHON_DIR SHARED WORK
        [--every N] [--bad-input-only]
"""
import glob
import os
import sys
import time
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import blender_support as bs  # noqa: E402

bs.fix_blender_34()
import addon_utils  # noqa: E402
import bpy  # noqa: E402
import numpy as np  # noqa: E402

ROT_STEP = 2.0 / 65535
POS_STEP = 10.0 / 65535
TOLERANCE_STEPS = 1


def install(zip_path, python_dir, work):
    target = os.path.join(work, "addons")
    with zipfile.ZipFile(zip_path) as z:
        z.extractall(target)
    sys.path.insert(0, target)
    os.environ["SLANIM_PYTHONPATH"] = python_dir  # how the add-on finds the module (locate.py)
    mod = addon_utils.enable("slanim_io", default_set=True)
    if mod is None:
        raise RuntimeError("the add-on did not enable")
    from slanim_io import locate
    return locate.load()


def clear():
    for coll in (bpy.data.objects, bpy.data.armatures, bpy.data.actions):
        for item in list(coll):
            coll.remove(item)


def counts():
    return len(bpy.data.objects), len(bpy.data.armatures), len(bpy.data.actions)


def compare(slanim, original, exported):
    a, b = slanim.read_anim_keys(original), slanim.read_anim_keys(exported)
    for k in ("priority", "loop", "loop_in", "loop_out", "ease_in", "ease_out", "hand_pose", "emote",
              "duration"):
        if getattr(a, k) != getattr(b, k):
            return f"header {k}: {getattr(a, k)!r} became {getattr(b, k)!r}"
    sk = slanim.Skeleton()
    known = {sk.joint_name(i) for i in range(sk.bone_count)}
    ja = {j.name: j for j in a.joints if j.name in known}
    jb = {j.name: j for j in b.joints}
    if set(ja) != set(jb):
        return f"joints differ: {sorted(set(ja) ^ set(jb))}"
    time_step = a.duration / 65535 if a.duration > 0 else 0.0
    worst = 0.0
    for name, j in ja.items():
        k = jb[name]
        if j.priority != k.priority or len(j.rot_keys) != len(k.rot_keys) or len(j.pos_keys) != len(k.pos_keys):
            return f"{name}: priority or key counts differ"
        for x, y, step in ((j.rot_keys, k.rot_keys, ROT_STEP), (j.pos_keys, k.pos_keys, POS_STEP)):
            if not len(x):
                continue
            dt = np.abs(x[:, 0] - y[:, 0]).max()
            if dt > time_step * 1.01 + 1e-7:
                return f"{name}: key times moved {dt:.6f} s (step {time_step:.6f} s)"
            dv = np.abs(x[:, 1:4] - y[:, 1:4]).max() / step
            worst = max(worst, dv)
            if dv > TOLERANCE_STEPS + 0.01:
                return f"{name}: a key moved {dv:.2f} steps"
    return worst


def round_trip(slanim, shared, work, every):
    anims = sorted(glob.glob(os.path.join(shared, "anims", "**", "*.anim"), recursive=True))[::every]
    failures, worst_all, done, same = [], 0.0, 0, 0
    for anim in anims:
        clear()
        with open(anim, "rb") as f:
            original = f.read()
        out = os.path.join(work, "round_trip.anim")
        try:
            bpy.ops.import_anim.slanim(filepath=anim)
            valid = slanim.validate(original, upload=True).valid
            bpy.ops.export_anim.slanim(filepath=out, write_invalid=not valid)
            with open(out, "rb") as f:
                exported = f.read()
            r = compare(slanim, original, exported)
            same_as_library = exported == reencoded(slanim, original)
            same += int(same_as_library)
        except Exception as e:  # noqa: BLE001 — reported per file
            r = str(e).strip()
        if isinstance(r, str):
            failures.append(f"{anim}: {r}")
        else:
            worst_all, done = max(worst_all, r), done + 1
    print(f"  {same} of {len(anims)} exports are byte-identical to the library's own re-encoding "
          f"(slanim.write_anim(slanim.read_anim_keys(original), nearest=True))")
    return failures, worst_all, done, len(anims)


def reencoded(slanim, original):
    keys = slanim.read_anim_keys(original)
    sk = slanim.Skeleton()
    known = {sk.joint_name(i) for i in range(sk.bone_count)}
    seen, joints = set(), []
    for j in keys.joints:
        if j.name in known and j.name not in seen:
            joints.append(j)
            seen.add(j.name)
    return slanim.write_anim(keys._replace(joints=sorted(joints, key=lambda j: j.name)), nearest=True)


def expect_cancelled(label, call, problems, before, file_path=None):
    """Runs an operator that must fail: an error report, CANCELLED, nothing left behind."""
    try:
        result = call()
        problems.append(f"{label}: not refused ({result})")
    except RuntimeError as e:  # Blender raises the operator's ERROR report in background mode
        print(f"  {label}: refused with: {str(e).strip().splitlines()[0]}")
    if counts() != before:
        problems.append(f"{label}: left data behind: {before} → {counts()} (objects, armatures, actions)")
    if file_path and os.path.exists(file_path):
        problems.append(f"{label}: wrote {file_path}")


def bad_input(slanim, shared, work):
    problems = []
    clear()
    walk = os.path.join(shared, "anims", "linden", "WALK.anim")
    with open(walk, "rb") as f:
        data = f.read()
    truncated = os.path.join(work, "truncated.anim")
    with open(truncated, "wb") as f:
        f.write(data[: len(data) // 2])
    bad_bvh = os.path.join(work, "bad.bvh")
    with open(bad_bvh, "w") as f:
        f.write("HIERARCHY\nROOT hip\n{\n OFFSET 0 0\n")
    for label, path in (("truncated .anim", truncated), ("BVH syntax error", bad_bvh)):
        expect_cancelled(label, lambda: bpy.ops.import_anim.slanim(filepath=path), problems, counts())
    bpy.ops.import_anim.slanim(filepath=walk)
    arm = [o for o in bpy.data.objects if o.type == "ARMATURE"][0]
    out = os.path.join(work, "refused.anim")
    expect_cancelled("joint priority for a joint not animated",
                     lambda: bpy.ops.export_anim.slanim(filepath=out, joint_priorities="mFaceJaw=4"),
                     problems, counts(), out)
    fc = arm.animation_data.action.fcurves.find('pose.bones["mPelvis"].location', index=2)
    fc.keyframe_points[0].co[1] = 7.5  # 7.5 m: beyond the format's ±5 m
    expect_cancelled("pelvis 7.5 m up", lambda: bpy.ops.export_anim.slanim(filepath=out), problems,
                     counts(), out)
    return problems


def hand_keyed(slanim, work):
    """An action keyed by hand on the add-on's own armature (Bézier keys, an Euler bone, a
    pelvis path): the exported .anim's local rotations and the pelvis offset equal Blender's
    evaluated pose at every frame (sampling Auto → every frame)."""
    clear()
    from slanim_io import rig
    from mathutils import Euler, Vector
    arm = rig.create_armature(bpy.context, slanim.Skeleton())
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base, scene.frame_start = 24, 1.0, 1
    head, pelvis = arm.pose.bones["mHead"], arm.pose.bones["mPelvis"]
    head.rotation_mode = "XYZ"
    for frame, s in ((1, 0.0), (13, 1.0), (25, -0.5)):
        head.rotation_euler = (0.4 * s, -0.3 * s, 0.8 * s)
        head.keyframe_insert("rotation_euler", frame=frame)
        pelvis.rotation_quaternion = Euler((0.0, 0.3 * s, 0.5 * s)).to_quaternion()
        pelvis.keyframe_insert("rotation_quaternion", frame=frame)
        pelvis.location = (0.1 * s, -0.05 * s, 0.2 * s)
        pelvis.keyframe_insert("location", frame=frame)
    out = os.path.join(work, "hand_keyed.anim")
    bpy.ops.export_anim.slanim(filepath=out, ease_in=0.0, ease_out=0.0)
    with open(out, "rb") as f:
        motion = slanim.Motion(f.read())
    sk = slanim.Skeleton()
    worst_rot, worst_pos = 0.0, 0.0
    for frame in range(1, 26):
        scene.frame_set(frame)
        pose = motion.sample((frame - 1) / 24.0)
        for name in ("mHead", "mPelvis"):
            pb = arm.pose.bones[name]
            b_rest = pb.bone.matrix_local.to_quaternion()
            sl_world = pb.matrix.to_quaternion() @ b_rest.inverted()
            if pb.parent is not None:
                p_world = pb.parent.matrix.to_quaternion() @ pb.parent.bone.matrix_local.to_quaternion().inverted()
                sl_world = p_world.inverted() @ sl_world
            q = np.array(pose[sk.find_joint(name)][3:], dtype=np.float64)
            b = np.array((sl_world.x, sl_world.y, sl_world.z, sl_world.w))
            d = min(np.linalg.norm(q - b), np.linalg.norm(q + b))  # chord: angle ≈ 2·d when small
            worst_rot = max(worst_rot, 2 * d)
        offset = Vector(pelvis.head) - Vector(pelvis.bone.head_local)
        worst_pos = max(worst_pos, (offset - Vector(pose[sk.find_joint("mPelvis")][:3])).length)
    print(f"  hand-keyed action: worst {np.degrees(worst_rot):.4f} deg, pelvis {worst_pos * 1000:.3f} mm")
    problems = []
    if worst_rot > np.radians(0.02) or worst_pos > 5.5e-4:  # two codes per axis: 0.53 mm
        problems.append(f"hand-keyed action: {np.degrees(worst_rot):.4f} deg / {worst_pos * 1000:.3f} mm "
                        "from Blender's pose (tolerance 0.02 deg, 0.55 mm)")
    return problems


def main():
    args = bs.script_args()
    zip_path, python_dir, shared, work = args[:4]
    every = int(args[args.index("--every") + 1]) if "--every" in args else 1
    os.makedirs(work, exist_ok=True)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bs.fix_blender_34()
    slanim = install(zip_path, python_dir, work)
    start = time.time()
    problems = bad_input(slanim, shared, work) + hand_keyed(slanim, work)
    if "--bad-input-only" in args:
        for p in problems:
            print("  " + p)
        bs.finish(not problems, f"bad input: {len(problems)} problem(s), {time.time() - start:.1f} s")
    failures, worst, done, total = round_trip(slanim, shared, work, every)
    for p in problems + failures:
        print("  " + p)
    bs.finish(not problems and not failures and done > 0,
              f"bad input: {len(problems)} problem(s); round trip: {done} of {total} .anim files "
              f"within {TOLERANCE_STEPS} steps (worst {worst:.2f} steps), {time.time() - start:.1f} s")


try:
    main()
except Exception as e:  # noqa: BLE001
    import traceback
    traceback.print_exc()
    bs.finish(False, str(e))
