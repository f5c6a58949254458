#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Example host in Python: plays an .anim on one avatar through libslanim.so and plots one
joint's trajectory (its position in the avatar-root frame over time) to a PNG.

    PYTHONPATH=build/python python3 tools/examples/plot_joint_trajectory.py \
        ../shared/anims/linden/DANCE1.anim --joint mWristRight -o hand.png

Axes are SL's: X forward, Y left, Z up, metres. Needs NumPy and Matplotlib (Debian's
python3-numpy, python3-matplotlib); prints the sampled range so it is useful without a display.
"""
import argparse
import sys
import uuid

import numpy as np

import slanim


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("anim", help=".anim file")
    ap.add_argument("--joint", default="mWristRight", help="joint name or alias (default mWristRight, the right hand)")
    ap.add_argument("--fps", type=float, default=30.0, help="frames per second (default 30)")
    ap.add_argument("--duration", type=float, default=None, help="seconds (default: the motion's)")
    ap.add_argument("-o", "--output", default="trajectory.png", help="PNG to write")
    args = ap.parse_args(argv)

    with open(args.anim, "rb") as f:
        data = f.read()
    motion_id = uuid.uuid5(uuid.NAMESPACE_URL, args.anim)
    try:
        duration = args.duration if args.duration is not None else slanim.Motion(data).info["duration"]
        with slanim.World(threads=1) as world:
            world.load_motion(motion_id, data)
            avatar = world.create_avatar()
            joint = slanim.Skeleton().find_joint(args.joint)
            avatar.start(motion_id)
            frames = max(1, int(round(duration * args.fps)))
            times = np.arange(frames + 1) / args.fps
            positions = np.empty((frames + 1, 3))
            world.step(0)
            for i in range(frames + 1):
                if i:
                    world.step(1 / args.fps)
                positions[i] = avatar.joint_transforms()[joint, :3]
    except slanim.SlanimError as e:
        print(f"plot_joint_trajectory: {args.anim}: {e}", file=sys.stderr)
        return 1

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax_t, ax_top) = plt.subplots(1, 2, figsize=(11, 4.5))
    for k, name in enumerate("xyz"):
        ax_t.plot(times, positions[:, k], label=f"{name} ({'forward left up'.split()[k]})")
    ax_t.set_xlabel("time (s)")
    ax_t.set_ylabel("position (m, avatar root)")
    ax_t.legend()
    ax_t.set_title(f"{args.joint} in {args.anim.rsplit('/', 1)[-1]}")
    ax_top.plot(positions[:, 1], positions[:, 0])
    ax_top.set_xlabel("y (m, left)")
    ax_top.set_ylabel("x (m, forward)")
    ax_top.invert_xaxis()  # seen from above with the avatar facing up the page
    ax_top.set_aspect("equal", adjustable="datalim")
    ax_top.set_title("seen from above")
    fig.tight_layout()
    fig.savefig(args.output, dpi=80)
    lo, hi = positions.min(axis=0), positions.max(axis=0)
    print(f"{args.joint}: {frames + 1} frames over {duration:.3f} s; "
          f"x {lo[0]:.3f}..{hi[0]:.3f}, y {lo[1]:.3f}..{hi[1]:.3f}, z {lo[2]:.3f}..{hi[2]:.3f} m; "
          f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
