# SPDX-License-Identifier: MIT
"""Tests of the Python module `slanim` (tools/python) over libslanim.so.

Run by ctest (tests/tools/python/CMakeLists.txt) as
    PYTHONPATH=<build>/python SLANIM_SHARED_DIR=<../shared> SLANIM_CLI=<slanim> python3 -m unittest
Tests that need the real files of ../shared skip with a message when they are absent.
"""
import csv
import io
import math
import os
import subprocess
import unittest
import uuid

import numpy as np

import slanim

SHARED = os.environ.get("SLANIM_SHARED_DIR", os.path.join(os.path.dirname(__file__), "../../../../shared"))
CLI = os.environ.get("SLANIM_CLI", "")
DANCE1 = os.path.join(SHARED, "anims/linden/DANCE1.anim")
CHARACTER = os.path.join(SHARED, "sl-character")
BVH = os.path.join(SHARED, "bvh/vreng/cmu_walk.bvh")
SHAPE = os.path.join(SHARED, "wearables/base_shape.dat")

DANCE_ID = uuid.UUID("b68a3d7c-de9e-fc87-eec8-543d787e5b0d")


def needs(path):
    return unittest.skipUnless(os.path.exists(path), f"{path} is absent (../shared not beside the project)")


def read(path, mode="rb"):
    with open(path, mode) as f:
        return f.read()


def quat_mul(a, b):
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return np.array([aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx,
                     aw * bz + ax * by - ay * bx + az * bw,
                     aw * bw - ax * bx - ay * by - az * bz])


def quat_rotate(q, v):
    qv = np.array([v[0], v[1], v[2], 0.0])
    conj = np.array([-q[0], -q[1], -q[2], q[3]])
    return quat_mul(quat_mul(q, qv), conj)[:3]


class VersionAndErrors(unittest.TestCase):
    def test_version_is_the_librarys(self):
        self.assertRegex(slanim.version(), r"^\d+\.\d+\.\d+$")

    def test_a_failed_call_raises_with_status_and_message(self):
        sk = slanim.Skeleton()
        with self.assertRaises(slanim.SlanimError) as ctx:
            sk.find_joint("mNoSuchJoint")
        self.assertEqual(ctx.exception.status, "SLANIM_ERROR_NOT_FOUND")
        self.assertIn("mNoSuchJoint", str(ctx.exception))

    def test_motion_ids_take_uuids_text_and_bytes(self):
        self.assertEqual(slanim.motion_id(DANCE_ID), DANCE_ID.bytes)
        self.assertEqual(slanim.motion_id(str(DANCE_ID)), DANCE_ID.bytes)
        self.assertEqual(slanim.motion_id(DANCE_ID.bytes), DANCE_ID.bytes)
        with self.assertRaises(ValueError):
            slanim.motion_id(b"short")


class SkeletonTest(unittest.TestCase):
    def test_default_skeleton(self):
        sk = slanim.Skeleton()
        self.assertEqual(sk.bone_count, 133)
        self.assertGreater(sk.joint_count, sk.bone_count)
        self.assertEqual(sk.find_joint("mPelvis"), 0)
        self.assertEqual(sk.parent(0), -1)
        hand = sk.find_joint("mWristRight")
        self.assertEqual(sk.joint_name(hand), "mWristRight")
        self.assertEqual(sk.find_joint("rHand"), hand)  # a BVH alias
        self.assertEqual(sk.joint_name(sk.parent(hand)), "mElbowRight")
        self.assertEqual(len(sk.joint_names), sk.joint_count)
        with self.assertRaises(slanim.SlanimError) as ctx:
            sk.joint_name(sk.joint_count)
        self.assertEqual(ctx.exception.status, "SLANIM_ERROR_OUT_OF_RANGE")

    @needs(CHARACTER)
    def test_character_folder_skeleton(self):
        self.assertEqual(slanim.Skeleton(CHARACTER).bone_count, 133)
        with self.assertRaises(slanim.SlanimError) as ctx:
            slanim.Skeleton("/nonexistent/character")
        self.assertEqual(ctx.exception.status, "SLANIM_ERROR_IO")


@needs(DANCE1)
class MotionTest(unittest.TestCase):
    def test_info_and_sample(self):
        m = slanim.Motion.from_file(DANCE1)
        info = m.info
        self.assertGreater(info["duration"], 1.0)
        self.assertGreater(info["num_joints"], 10)
        pose = m.sample(1.0)
        self.assertEqual(pose.shape, (slanim.Skeleton().joint_count, 7))
        self.assertEqual(pose.dtype, np.float32)
        norms = np.linalg.norm(pose[:, 3:], axis=1)
        np.testing.assert_allclose(norms, 1.0, atol=1e-5)
        # Curve time is clamped to [0, duration].
        np.testing.assert_array_equal(m.sample(1e6), m.sample(info["duration"]))

    def test_truncated_bytes_raise_with_the_byte_offset(self):
        data = read(DANCE1)
        with self.assertRaises(slanim.SlanimError) as ctx:
            slanim.Motion(data[:40])
        self.assertEqual(ctx.exception.status, "SLANIM_ERROR_INVALID_DATA")
        self.assertIn("byte", str(ctx.exception))

    def test_validate(self):
        data = read(DANCE1)
        ok = slanim.validate(data, upload=True)
        self.assertTrue(ok.valid, ok.diagnostics)
        self.assertEqual(ok.errors, 0)
        bad = slanim.validate(data[:40])
        self.assertFalse(bad.valid)
        self.assertGreaterEqual(bad.errors, 1)
        self.assertTrue(any("byte" in d for d in bad.diagnostics), bad.diagnostics)

    def test_anim_to_bvh(self):
        text = slanim.anim_to_bvh(read(DANCE1), fps=30)
        self.assertTrue(text.startswith("HIERARCHY"))
        self.assertIn("MOTION", text)
        with self.assertRaises(slanim.SlanimError):
            slanim.anim_to_bvh(read(DANCE1), fps=0)


@needs(BVH)
class AnimKeysTest(unittest.TestCase):
    """read_anim_keys / write_anim (slanim/anim_keys.py) and the skeleton's rest data."""

    @needs(DANCE1)
    def test_keys_sample_like_the_motion_and_write_back(self):
        data = read(DANCE1)
        keys = slanim.read_anim_keys(data)
        m = slanim.Motion(data)
        info = m.info
        self.assertAlmostEqual(keys.duration, info["duration"])
        self.assertEqual((keys.priority, keys.hand_pose, keys.loop), (info["base_priority"], info["hand_pose"],
                                                                      info["loop"]))
        sk = slanim.Skeleton()
        for j in keys.joints:  # at a key time the sampled local rotation is the key
            k = j.rot_keys[len(j.rot_keys) // 2]
            pose = m.sample(float(k[0]))
            np.testing.assert_allclose(pose[sk.find_joint(j.name)][3:], k[1:], atol=1e-6)
        # Writing the keys gives the library's own encoding, which reads back within two codes
        # (the viewer's serialize: quantize16, then floor).
        out = slanim.write_anim(keys)
        self.assertTrue(slanim.validate(out, upload=True).valid)
        again = slanim.read_anim_keys(out)
        self.assertEqual([j.name for j in again.joints], [j.name for j in keys.joints])
        for a, b in zip(keys.joints, again.joints):
            self.assertLessEqual(np.abs(a.rot_keys[:, 1:4] - b.rot_keys[:, 1:4]).max(), 2 * 2 / 65535 + 1e-7)

    def test_write_refuses_out_of_range_and_unknown_joints(self):
        rot = np.array([[0, 0, 0, 0, 1], [1, 0, 0, 0, 1]], np.float32)
        ok = slanim.AnimKeys(duration=1.0, joints=[slanim.JointKeys("mHead", 4, rot)])
        keys = slanim.read_anim_keys(slanim.write_anim(ok))
        self.assertEqual((keys.joints[0].name, keys.joints[0].priority), ("mHead", 4))
        self.assertAlmostEqual(keys.ease_in, 0.3, places=6)
        far = ok._replace(joints=[slanim.JointKeys("mPelvis", -1, pos_keys=np.array([[0.5, 0, 0, 5.5]]))])
        with self.assertRaisesRegex(slanim.SlanimError, "OUT_OF_RANGE.*'mPelvis'.*0.5 s"):
            slanim.write_anim(far)
        with self.assertRaisesRegex(slanim.SlanimError, "INVALID_DATA.*NOT_A_JOINT"):
            slanim.write_anim(ok._replace(joints=[slanim.JointKeys("NOT_A_JOINT", -1, rot)]))

    def test_rest_pose_and_bone_ends(self):
        sk = slanim.Skeleton()
        rest = sk.rest_pose()
        self.assertEqual(rest.shape, (sk.joint_count, 7))
        np.testing.assert_allclose(rest[sk.find_joint("mSpine1")], [0, 0, 0.084, 0, 0, 0, 1], atol=1e-6)
        np.testing.assert_allclose(sk.joint_end(sk.find_joint("mPelvis")), [0, 0, 0.084], atol=1e-6)


class BvhImportTest(unittest.TestCase):
    def test_bvh_to_anim_loads_and_passes_upload_validation(self):
        anim = slanim.bvh_to_anim(read(BVH, "r"), priority=3, loop=True, skip_unknown_joints=True)
        self.assertTrue(slanim.validate(anim, upload=True).valid)
        info = slanim.Motion(anim).info
        self.assertEqual(info["base_priority"], 3)
        self.assertTrue(info["loop"])

    def test_bad_bvh_names_the_line(self):
        with self.assertRaises(slanim.SlanimError) as ctx:
            slanim.bvh_to_anim("HIERARCHY\nROOT hip\n{\n OFFSET 0 0 zz\n")
        self.assertEqual(ctx.exception.status, "SLANIM_ERROR_INVALID_DATA")
        self.assertIn("line", str(ctx.exception))


class IkTest(unittest.TestCase):
    CHAIN = np.array([[0, 0, 0], [0, 0, 0.3], [0, 0, 0.6], [0, 0, 0.8]], dtype=np.float32)

    def check_solved(self, solver):
        target = [0.3, 0.2, 0.5]
        pos, rot, rep = slanim.ik_solve(self.CHAIN, target, solver=solver, tolerance=1e-4,
                                        max_iterations=200)
        self.assertTrue(rep.reachable)
        self.assertTrue(rep.converged, rep)
        self.assertLessEqual(np.linalg.norm(pos[-1] - target), 1e-4 + 1e-6)
        np.testing.assert_array_equal(pos[0], self.CHAIN[0])  # the root is pinned
        for i in range(3):  # bone lengths are kept
            self.assertAlmostEqual(float(np.linalg.norm(pos[i + 1] - pos[i])),
                                   float(np.linalg.norm(self.CHAIN[i + 1] - self.CHAIN[i])), places=4)
        # Each joint's rotation turns its input segment onto its solved segment.
        for i in range(3):
            seg = quat_rotate(rot[i], self.CHAIN[i + 1] - self.CHAIN[i])
            np.testing.assert_allclose(seg, pos[i + 1] - pos[i], atol=1e-4)
        self.assertLess(rep.error, rep.initial_error)

    def test_ccd(self):
        self.check_solved("ccd")

    def test_fabrik(self):
        self.check_solved("fabrik")

    def test_bad_chains(self):
        with self.assertRaises(ValueError):
            slanim.ik_solve(np.zeros((3, 2)), [0, 0, 1])
        with self.assertRaises(slanim.SlanimError) as ctx:
            slanim.ik_solve(self.CHAIN[:1], [0, 0, 1])
        self.assertEqual(ctx.exception.status, "SLANIM_ERROR_OUT_OF_RANGE")
        with self.assertRaises(slanim.SlanimError):
            slanim.ik_solve(self.CHAIN, [math.nan, 0, 1])
        with self.assertRaises(ValueError):
            slanim.ik_solve(self.CHAIN, [0, 0, 1], solver="jacobian")


@needs(DANCE1)
class WorldTest(unittest.TestCase):
    def play(self, threads, avatars=3, frames=30):
        with slanim.World(threads=threads) as world:
            world.load_motion(DANCE_ID, read(DANCE1))
            crowd = [world.create_avatar() for _ in range(avatars)]
            for i, a in enumerate(crowd):
                a.start(DANCE_ID, start_offset=0.1 * i)
            for _ in range(frames):
                world.step(1 / 30)
            return [a.joint_transforms() for a in crowd]

    def test_play_and_thread_count_identity(self):
        one = self.play(1)
        two = self.play(2)
        for a, b in zip(one, two):
            np.testing.assert_array_equal(a, b)
        self.assertFalse(np.array_equal(one[0], one[1]))  # different start offsets

    def test_matrices_match_transforms(self):
        with slanim.World(threads=1) as world:
            world.load_motion(DANCE_ID, read(DANCE1))
            a = world.create_avatar()
            a.start(DANCE_ID)
            world.step(0.5)
            t = a.joint_transforms()
            m = a.joint_matrices()
            self.assertEqual(m.shape, (a.joint_count, 4, 4))
            np.testing.assert_allclose(m[:, :3, 3], t[:, :3], atol=1e-6)
            np.testing.assert_allclose(m[:, 3], np.tile([0, 0, 0, 1], (a.joint_count, 1)), atol=0)

    def test_cache_start_stop_and_stale_handles(self):
        with slanim.World(threads=1) as world:
            self.assertFalse(world.has_motion(DANCE_ID))
            with self.assertRaises(slanim.SlanimError) as ctx:
                world.load_motion(DANCE_ID, b"\x01\x00\x00\x00garbage")
            self.assertEqual(ctx.exception.status, "SLANIM_ERROR_INVALID_DATA")
            world.load_motion(DANCE_ID, read(DANCE1))
            self.assertTrue(world.has_motion(DANCE_ID))
            a = world.create_avatar()
            a.start(DANCE_ID)
            world.step(1 / 30)
            self.assertTrue(a.is_active(DANCE_ID))
            a.stop(DANCE_ID, immediate=True)
            world.step(1 / 30)
            self.assertFalse(a.is_active(DANCE_ID))
            with self.assertRaises(slanim.SlanimError) as ctx:
                a.start(uuid.uuid4())
            self.assertEqual(ctx.exception.status, "SLANIM_ERROR_NOT_FOUND")
            a.destroy()
            self.assertFalse(a.valid)
            with self.assertRaises(slanim.SlanimError) as ctx:
                a.start(DANCE_ID)
            self.assertEqual(ctx.exception.status, "SLANIM_ERROR_INVALID_HANDLE")
        with self.assertRaises(slanim.SlanimError):
            world.step(0.1)  # closed

    @unittest.skipUnless(CLI and os.path.exists(CLI), "the slanim CLI is not built")
    def test_poses_equal_slanim_play(self):
        """Every joint of frame 15 of `slanim play` (avatar-root frame, printed to float
        precision) equals the world's model pose after the same steps."""
        out = subprocess.run([CLI, "play", DANCE1, "--fps", "30", "--duration", "1"],
                             check=True, capture_output=True, text=True).stdout
        rows = [r for r in csv.DictReader(io.StringIO(out)) if r["frame"] == "15"]
        sk = slanim.Skeleton()
        with slanim.World(threads=1) as world:
            world.load_motion(DANCE_ID, read(DANCE1))
            a = world.create_avatar()
            a.start(DANCE_ID)
            world.step(0)
            for _ in range(15):
                world.step(1 / 30)
            model = a.joint_transforms()
        self.assertEqual(len(rows), sk.bone_count)  # play prints the bones
        for r in rows:
            j = sk.find_joint(r["joint"])
            want = np.array([float(r[k]) for k in ("px", "py", "pz", "qx", "qy", "qz", "qw")],
                            dtype=np.float32)
            # play prints shortest round-trip text of each float: parsed back it is the float.
            np.testing.assert_array_equal(model[j], want, err_msg=r["joint"])


@needs(os.path.join(CHARACTER, "avatar_lad.xml"))
class AppearanceTest(unittest.TestCase):
    def test_meshes_params_and_wearables(self):
        with slanim.World(threads=1) as world:
            a = world.create_avatar(slanim.Skeleton(CHARACTER))
            a.enable_appearance(skin=True)
            world.step(0)
            self.assertGreater(a.mesh_count, 3)
            info = a.mesh_info(0)
            pos, nrm = a.mesh_vertices(0)
            self.assertEqual(pos.shape, (info.vertex_count, 3))
            np.testing.assert_allclose(np.linalg.norm(nrm, axis=1), 1.0, atol=1e-3)
            tris = a.mesh_triangles(0)
            self.assertEqual(tris.shape, (info.triangle_count, 3))
            self.assertLess(int(tris.max()), info.vertex_count)
            lo, hi, _ = a.visual_param_range(33)  # height
            a.set_visual_param(33, hi + 10)       # clamped
            self.assertEqual(a.visual_param(33), hi)
            with self.assertRaises(slanim.SlanimError) as ctx:
                a.visual_param(999999)
            self.assertEqual(ctx.exception.status, "SLANIM_ERROR_NOT_FOUND")
            if os.path.exists(SHAPE):
                self.assertGreater(a.apply_wearable(read(SHAPE)), 10)
            with self.assertRaises(slanim.SlanimError) as ctx:
                a.apply_wearable(b"not a wearable")
            self.assertEqual(ctx.exception.status, "SLANIM_ERROR_INVALID_DATA")

    def test_default_skeleton_has_no_mesh(self):
        with slanim.World(threads=1) as world:
            a = world.create_avatar()
            with self.assertRaises(slanim.SlanimError) as ctx:
                a.enable_appearance()
            self.assertEqual(ctx.exception.status, "SLANIM_ERROR_UNSUPPORTED")


class PuppetryTest(unittest.TestCase):
    def test_malformed_blocks_are_counted_not_raised(self):
        with slanim.World(threads=1) as world:
            a = world.create_avatar()
            self.assertEqual(a.puppetry_stats().blocks_received, 0)
            a.puppetry_block(b"\xff\x00garbage")
            world.step(1 / 30)
            s = a.puppetry_stats()
            self.assertEqual(s.blocks_received, 1)
            self.assertEqual(s.blocks_malformed, 1)
            with self.assertRaises(slanim.SlanimError) as ctx:
                a.puppetry_block(b"")
            self.assertEqual(ctx.exception.status, "SLANIM_ERROR_OUT_OF_RANGE")


MESH_LO = uuid.UUID("0fffffff-ffff-ffff-ffff-ffffffffffff")
MESH_MID = uuid.UUID("10000000-0000-0000-0000-000000000000")
MESH_HI = uuid.UUID("80000000-0000-0000-0000-000000000001")


def local_z(t, child, parent):
    """A joint's local Z from the model pose (rest rotations are the identity on the spine)."""
    return float(t[child, 2] - t[parent, 2])


class AttachmentOverridesTest(unittest.TestCase):
    # docs/attachment-overrides.md's hand-computed case: the largest mesh UUID wins whatever
    # the order it came in (0x80 > 0x10: unsigned bytes), removal steps back 0.23 → 0.22 → 0.21
    # → the rest value.
    def test_largest_uuid_wins_and_removal_restores(self):
        with slanim.World(1) as w:
            sk = slanim.Skeleton()
            chest, torso = sk.find_joint("mChest"), sk.find_joint("mTorso")
            a = w.create_avatar(sk)
            rest = local_z(a.joint_transforms(), chest, torso)
            a.add_attachment_overrides(MESH_MID, slanim.JointOverride("mChest", position=(0, 0, 0.22)))
            a.add_attachment_overrides(MESH_LO, [("mChest", (0, 0, 0.21), None)])
            o = a.active_position_override("mChest")
            self.assertEqual((o.found, o.mesh_id, o.count), (True, MESH_MID, 2))
            self.assertAlmostEqual(o.value[2], 0.22, places=6)
            a.add_attachment_overrides(MESH_HI, (chest, (0, 0, 0.23), None))
            self.assertEqual(a.active_position_override(chest).mesh_id, MESH_HI)
            self.assertEqual(a.attachment_override_meshes(), [MESH_MID, MESH_LO, MESH_HI])
            self.assertAlmostEqual(local_z(a.joint_transforms(), chest, torso), 0.23, places=5)
            for mesh, z in ((MESH_HI, 0.22), (MESH_MID, 0.21), (MESH_LO, rest)):
                a.remove_attachment_overrides(mesh)
                self.assertAlmostEqual(local_z(a.joint_transforms(), chest, torso), z, places=5)
            self.assertFalse(a.active_position_override(chest).found)
            self.assertEqual(a.attachment_override_meshes(), [])

    def test_skin_info_scale_lock_pelvis_fixup_and_errors(self):
        skin = ("<llsd><map><key>joint_names</key><array><string>mHead</string>"
                "<string>mNoSuchJoint</string></array>"
                "<key>alt_inverse_bind_matrix</key><array>"
                "<array>" + "".join(f"<real>{v}</real>" for v in
                                    [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0.02, 0, 0.1, 1]) + "</array>"
                "<array>" + "".join(f"<real>{v}</real>" for v in
                                    [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]) + "</array>"
                "</array><key>pelvis_offset</key><real>0.04</real>"
                "<key>lock_scale_if_joint_position</key><boolean>1</boolean></map></llsd>")
        with slanim.World(1) as w:
            a = w.create_avatar()
            p2f_before, height_before = a.body_size()
            self.assertEqual(a.add_attachment_overrides_from_skin(MESH_LO, skin, "xml"), (1, 1))
            pos = a.active_position_override("mHead")
            self.assertAlmostEqual(pos.value[0], 0.02, places=6)
            self.assertAlmostEqual(pos.value[2], 0.1, places=6)
            self.assertEqual(a.active_scale_override("mHead").value, (1.0, 1.0, 1.0))  # locked
            fix = a.pelvis_fixup()
            self.assertTrue(fix.found)
            self.assertAlmostEqual(fix.value[2], 0.04, places=6)
            self.assertNotEqual(a.body_size()[1], height_before)  # the head moved
            with self.assertRaises(slanim.SlanimError) as ctx:
                a.add_attachment_overrides_from_skin(MESH_LO, skin, "xml")
            self.assertEqual(ctx.exception.status, "SLANIM_ERROR_ALREADY_EXISTS")
            with self.assertRaises(slanim.SlanimError) as ctx:
                a.add_attachment_overrides_from_skin(MESH_MID, "<llsd><map>", "xml")
            self.assertEqual(ctx.exception.status, "SLANIM_ERROR_INVALID_DATA")
            with self.assertRaises(slanim.SlanimError) as ctx:
                a.remove_attachment_overrides(MESH_HI)
            self.assertEqual(ctx.exception.status, "SLANIM_ERROR_NOT_FOUND")
            with self.assertRaises(slanim.SlanimError) as ctx:
                a.add_attachment_overrides(uuid.UUID(int=0), ("mHead", (0, 0, 0.2), None))
            self.assertEqual(ctx.exception.status, "SLANIM_ERROR_OUT_OF_RANGE")
            with self.assertRaises(slanim.SlanimError) as ctx:
                a.add_attachment_overrides(MESH_HI, ("mHead", (0, float("nan"), 0.2), None))
            self.assertEqual(ctx.exception.status, "SLANIM_ERROR_OUT_OF_RANGE")
            a.reset_skeleton()  # keeps the overrides
            self.assertTrue(a.active_position_override("mHead").found)
            a.clear_attachment_overrides()
            self.assertFalse(a.active_position_override("mHead").found)
            self.assertFalse(a.pelvis_fixup().found)
            self.assertEqual(a.body_size(), (p2f_before, height_before))
            a.add_attachment_overrides(MESH_MID, [])  # no joints: the mesh still counts as applied
            self.assertEqual(a.attachment_override_meshes(), [MESH_MID])


class ProceduralTest(unittest.TestCase):
    def run_world(self, threads):
        with slanim.World(threads) as w:
            avatars = [w.create_avatar() for _ in range(3)]
            avatars[0].set_procedural_motions(breathe=True, body_noise=True, head_rot=True, eye=True)
            avatars[0].set_look_at((1.0, 0.8, 0.9))
            avatars[1].set_procedural_motions(flags=slanim.PROCEDURAL_HEAD_ROT | slanim.PROCEDURAL_EYE)
            avatars[1].set_look_at((0.5, -0.6, 0.1), frame="head")
            avatars[2].set_procedural_motions(body_noise=True)
            poses = []
            for f in range(60):
                w.step(0.0 if f == 0 else 1 / 30)
                if f == 30:
                    avatars[0].clear_look_at()
                poses.append(np.stack([a.joint_transforms() for a in avatars]))
            return np.stack(poses)

    def test_deterministic_for_every_thread_count_and_the_head_turns(self):
        one, two = self.run_world(1), self.run_world(2)
        self.assertTrue(np.array_equal(one.view(np.uint32), two.view(np.uint32)))
        head = slanim.Skeleton().find_joint("mHead")
        self.assertGreater(one[25, 0, head, 5], 0.1)  # turned left toward +Y: about +Z
        self.assertLess(one[25, 1, head, 5], -0.1)    # turned right toward -Y
        self.assertFalse(np.array_equal(one[10, 2], one[50, 2]))  # body noise moves the torso

    def test_bad_input(self):
        with slanim.World(1) as w:
            a = w.create_avatar()
            with self.assertRaises(slanim.SlanimError) as ctx:
                a.set_procedural_motions(flags=0x10)
            self.assertEqual(ctx.exception.status, "SLANIM_ERROR_OUT_OF_RANGE")
            with self.assertRaises(slanim.SlanimError) as ctx:
                a.set_look_at((0, float("inf"), 0))
            self.assertEqual(ctx.exception.status, "SLANIM_ERROR_OUT_OF_RANGE")
            with self.assertRaises(ValueError):
                a.set_look_at((0, 0, 0), frame="region")
            a.destroy()
            with self.assertRaises(slanim.SlanimError) as ctx:
                a.set_procedural_motions(breathe=True)
            self.assertEqual(ctx.exception.status, "SLANIM_ERROR_INVALID_HANDLE")


CUSTOM_ID = uuid.UUID("c0570000-0000-4000-8000-000000000001")


class CustomMotionTest(unittest.TestCase):
    @staticmethod
    def head_turn(frame, rotations, positions, scales):
        # Joint 0 (mHead) turns about Z by 0.5 sin(t) rad; joint 1 (mNeck) by the look-at Y.
        angle = 0.5 * math.sin(frame.time)
        rotations[0] = (0.0, 0.0, math.sin(angle / 2), math.cos(angle / 2))
        y = frame.look_at[1] if frame.look_at is not None else 0.0
        rotations[1] = (0.0, 0.0, math.sin(0.1 * y), math.cos(0.1 * y))
        assert scales is None and frame.model_rotations.shape[1] == 4
        return True

    def play(self, threads, with_dance):
        with slanim.World(threads) as w:
            sk = slanim.Skeleton()
            made = []
            w.register_custom_motion(CUSTOM_ID, sk, [("mHead", "r"), ("mNeck", "r", 6)], self.head_turn,
                                     create=lambda seed: made.append(seed) or {"seed": seed},
                                     priority=6, ease_in=0.2)
            avatars = [w.create_avatar(sk) for _ in range(2)]
            if with_dance:
                w.load_motion(DANCE_ID, read(DANCE1))
            for a in avatars:
                if with_dance:
                    a.start(DANCE_ID)
                a.start(CUSTOM_ID)
                self.assertTrue(a.is_active(CUSTOM_ID))
            avatars[1].set_look_at((0.0, 2.0, 0.0), frame="head")
            poses = []
            for f in range(45):
                w.step(0.0 if f == 0 else 1 / 30)
                poses.append(np.stack([a.joint_transforms() for a in avatars]))
            avatars[0].stop(CUSTOM_ID, immediate=True)
            self.assertFalse(avatars[0].is_active(CUSTOM_ID))
            self.assertEqual(len(made), 2)
            return np.stack(poses)

    def test_python_callbacks_drive_joints_identically_on_worker_threads(self):
        one = self.play(1, False)
        two = self.play(2, False)
        self.assertTrue(np.array_equal(one.view(np.uint32), two.view(np.uint32)))
        sk = slanim.Skeleton()
        head, neck = sk.find_joint("mHead"), sk.find_joint("mNeck")
        # Frame 30: t = 1 s, fully eased in; avatar 0 has no target: the neck stays, the head
        # turns by 0.5 sin(1) rad relative to it.
        angle = 0.5 * math.sin(1.0)
        self.assertAlmostEqual(float(one[30, 0, head, 5]), math.sin(angle / 2), places=5)
        self.assertAlmostEqual(float(one[30, 0, neck, 5]), 0.0, places=6)
        self.assertAlmostEqual(float(one[30, 1, neck, 5]), math.sin(0.2), places=5)  # look-at Y = 2

    @needs(DANCE1)
    def test_overrides_the_dance_on_its_joints(self):
        poses = self.play(1, True)
        with slanim.World(1) as w:
            w.load_motion(DANCE_ID, read(DANCE1))
            a = w.create_avatar()
            a.start(DANCE_ID)
            dance = []
            for f in range(45):
                w.step(0.0 if f == 0 else 1 / 30)
                dance.append(a.joint_transforms())
        sk = slanim.Skeleton()
        ankle, head = sk.find_joint("mAnkleRight"), sk.find_joint("mHead")
        self.assertTrue(np.array_equal(poses[30, 0, ankle], dance[30][ankle]))  # the dance plays on
        self.assertFalse(np.allclose(poses[30, 0, head], dance[30][head], atol=1e-3))  # overridden

    def test_errors_ids_and_callback_exceptions(self):
        with slanim.World(1) as w:
            sk = slanim.Skeleton()
            w.register_custom_motion(CUSTOM_ID, sk, [("mHead", "r")], self.head_turn)
            self.assertTrue(w.has_custom_motion(CUSTOM_ID))
            with self.assertRaises(slanim.SlanimError) as ctx:
                w.register_custom_motion(CUSTOM_ID, sk, [("mHead", "r")], self.head_turn)
            self.assertEqual(ctx.exception.status, "SLANIM_ERROR_ALREADY_EXISTS")
            if os.path.exists(DANCE1):  # a custom id and a cached .anim id must not collide
                with self.assertRaises(slanim.SlanimError) as ctx:
                    w.load_motion(CUSTOM_ID, read(DANCE1))
                self.assertEqual(ctx.exception.status, "SLANIM_ERROR_ALREADY_EXISTS")
            with self.assertRaises(slanim.SlanimError) as ctx:
                w.register_custom_motion(uuid.uuid4(), sk, [("mHead", "r"), ("mHead", "p")], self.head_turn)
            self.assertEqual(ctx.exception.status, "SLANIM_ERROR_OUT_OF_RANGE")
            self.assertIn("twice", str(ctx.exception))
            with self.assertRaises(ValueError):
                w.register_custom_motion(uuid.uuid4(), sk, [("mHead", "x")], self.head_turn)

            def broken(frame, rotations, positions, scales):
                raise RuntimeError("broken update")

            broken_id = uuid.uuid4()
            w.register_custom_motion(broken_id, sk, [("mHead", "r")], broken)
            a = w.create_avatar(sk)
            a.start(broken_id)
            raised = 0
            for _ in range(5):  # each failing update is reported by its step; the motion stops
                try:
                    w.step(1 / 30)
                except RuntimeError as e:
                    self.assertEqual(str(e), "broken update")
                    raised += 1
            self.assertGreaterEqual(raised, 1)
            self.assertFalse(a.is_active(broken_id))
            w.step(1 / 30)  # no more calls: nothing raised
            w.unregister_custom_motion(CUSTOM_ID)
            with self.assertRaises(slanim.SlanimError) as ctx:
                a.start(CUSTOM_ID)
            self.assertEqual(ctx.exception.status, "SLANIM_ERROR_NOT_FOUND")


if __name__ == "__main__":
    unittest.main()
