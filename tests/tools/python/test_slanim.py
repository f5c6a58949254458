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


if __name__ == "__main__":
    unittest.main()
