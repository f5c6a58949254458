#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Runs tests/tools/net/leap_plugin.py against `slanim play --puppetry leap:stdin` the way the
viewer runs a plug-in (its stdout to our stdin, our stdout to its stdin) and checks the
conversation and the poses. Standard library only.

    leap_driver.py SLANIM_BINARY [WORK_DIR]
    leap_driver.py --view SLANIM_BINARY [WORK_DIR]   the conversation with `slanim view`
                                                     (SDL offscreen; exit 77 without a window)

Checks: the handshake order (initial message first, then the listen reply with reqid -1 and
status true); reqid echo on the reply pump (ping, getAPIs, get camera) and the skeleton as
`set_skeleton` on puppetry.controller; every joint-data form moves its joint (the joint's
model pose just before the message against just before the next phase's, 0.8 s later); unknown keys and joints counted in the
exit line and the rest of their message applied; `stop` delivered to the plug-in, which exits
within 1 s of slanim. Exit status 0 when all hold, 1 otherwise (each failure printed).
"""
import csv
import json
import math
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import leap_plugin  # noqa: E402

FPS = 20
failures = []


def check(ok, what):
    print(('ok    ' if ok else 'FAIL  ') + what)
    if not ok:
        failures.append(what)


def run(slanim, work, view=False):
    poses = os.path.join(work, 'poses.csv')
    log_path = os.path.join(work, 'plugin.json')
    err_path = os.path.join(work, 'slanim.err')
    to_plugin_r, to_plugin_w = os.pipe()
    to_host_r, to_host_w = os.pipe()
    launch = time.monotonic()
    with open(err_path, 'wb') as err:
        cmd = ([slanim, 'view', '--quit-after', '90', '--puppetry', 'leap:stdin'] if view else
               [slanim, 'play', '--puppetry', 'leap:stdin', '--duration', str(leap_plugin.DURATION),
                '--fps', str(FPS), '-o', poses])
        host = subprocess.Popen(cmd, stdin=to_host_r, stdout=to_plugin_w, stderr=err,
                                env=dict(os.environ, SDL_VIDEODRIVER='offscreen') if view else None)
        plugin = subprocess.Popen([sys.executable, os.path.join(HERE, 'leap_plugin.py'), log_path],
                                  stdin=to_plugin_r, stdout=to_host_w)
    for fd in (to_plugin_r, to_plugin_w, to_host_r, to_host_w):
        os.close(fd)
    deadline = launch + leap_plugin.DURATION + 30
    while host.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    host_end = time.monotonic()
    if host.poll() is None:
        host.kill()
    plugin_end = None
    while time.monotonic() < host_end + 5:
        if plugin.poll() is not None:
            plugin_end = time.monotonic()
            break
        time.sleep(0.005)
    if plugin_end is None:
        plugin.kill()
        plugin.wait()
    with open(err_path) as f:
        err_text = f.read()
    if view and 'cannot open a window' in err_text:
        print('skipped: slanim view cannot open a window here: ' + err_text.strip())
        sys.exit(77)
    check(host.returncode == 0, 'slanim exits 0 (got %s): %s' % (host.returncode, err_text.strip()[-400:]))
    check(plugin_end is not None and plugin_end - host_end <= 1.0,
          'the plug-in exits within 1 s of slanim (%s)' %
          ('%.3f s after' % (plugin_end - host_end) if plugin_end else 'still running after 5 s'))
    check(plugin.returncode == 0, 'the plug-in exits 0 after stop (got %s)' % plugin.returncode)
    with open(log_path) as f:
        log = json.load(f)
    return launch, log, err_text, poses


def check_conversation(log):
    rec = [r['msg'] for r in log['received']]
    initial = rec[0] if rec else {}
    reply = initial.get('pump')
    check(isinstance(initial.get('data', {}).get('command'), str) and
          isinstance(initial.get('data', {}).get('features'), dict),
          'the first message is the initial one {pump, data:{command, features}}')
    sent = log['sent']
    check(sent and sent[0]['msg'].get('op') == 'listen' and sent[0]['pump'] == initial['data']['command'],
          'the plug-in listens on the command pump first')
    listen_reply = [m for m in rec[1:] if m.get('data', {}).get('reqid') == -1]
    check(len(listen_reply) == 1 and listen_reply[0]['pump'] == reply and listen_reply[0]['data'].get('status') is True,
          'the listen reply {reqid:-1, status:true} comes on the reply pump')
    by_reqid = {m['data'].get('reqid'): m for m in rec if m.get('pump') == reply and isinstance(m.get('data'), dict)}
    check(77 in by_reqid, 'ping answered with reqid 77')
    check(78 in by_reqid and 'puppetry' in by_reqid[78]['data'], 'getAPIs answered with reqid 78, listing puppetry')
    check(5 in by_reqid and by_reqid[5]['data'].get('camera_id') == 0, 'get camera answered {camera_id:0, reqid:5}')
    skel = [m for m in rec if m.get('pump') == 'puppetry.controller' and m['data'].get('command') == 'set_skeleton']
    check(len(skel) == 1 and 'tip_relative_end_position' in skel[0]['data']['args'].get('mElbowLeft', {}),
          'get skeleton: set_skeleton with args on puppetry.controller')
    stop = [m for m in rec if m.get('pump') == 'puppetry.controller' and m['data'].get('command') == 'stop']
    check(len(stop) == 1, 'stop delivered on puppetry.controller once')


def load_poses(path):
    frames = {}
    with open(path) as f:
        for row in csv.DictReader(f):
            frames.setdefault(int(row['frame']), {})[row['joint']] = (
                [float(row[k]) for k in ('px', 'py', 'pz')], [float(row[k]) for k in ('qx', 'qy', 'qz', 'qw')])
    return frames


def rotate(v, q):
    """v rotated by the unit quaternion q = [x, y, z, w]."""
    x, y, z, w = q
    cx, cy, cz = y * v[2] - z * v[1], z * v[0] - x * v[2], x * v[1] - y * v[0]
    return [v[0] + 2 * (w * cx + y * cz - z * cy),
            v[1] + 2 * (w * cy + z * cx - x * cz),
            v[2] + 2 * (w * cz + x * cy - y * cx)]


def check_forms(launch, log, poses):
    frames = load_poses(poses)
    last = max(frames)
    first = {}
    for s in log['sent']:
        if s['phase'] is not None:
            first.setdefault(s['phase'], s)
    check(len(first) == len(leap_plugin.PHASES), 'every phase sent (%d)' % len(first))
    for k, (at, msg, joint, what) in enumerate(leap_plugin.PHASES):
        if k not in first:
            continue
        t = first[k]['t'] - launch
        # Before: just before this phase's first message; after: just before the next phase's.
        t_next = (first[k + 1]['t'] - launch) if k + 1 in first else t + leap_plugin.SPACING
        before = frames[max(0, min(last, int(math.floor((t - 0.05) * FPS))))]
        after = frames[max(0, min(last, int(math.floor((t_next - 0.03) * FPS))))]
        if what == 'elbow-end':
            skel = [r['msg']['data']['args'] for r in log['received']
                    if r['msg'].get('data', {}).get('command') == 'set_skeleton'][0]
            half_span = 0.5 * skel['scale']
            target = first[k]['msg']['data']['inverse_kinematics'][joint]['position']
            pelvis = after['mPelvis']
            goal = [a + b for a, b in zip(pelvis[0], rotate([t * half_span for t in target], pelvis[1]))]
            end = [a + b for a, b in zip(after[joint][0], rotate(skel[joint]['tip_relative_end_position'], after[joint][1]))]
            miss = math.dist(end, goal)
            check(miss < 0.001, 'the elbow target %s is reached at the end of the bone within 1 mm (%.2f mm)' %
                  (json.dumps(target), 1000 * miss))
            continue
        if what.startswith('child:'):
            name = what[6:]
            moved = math.dist(before[name][0], after[name][0])
            ok = moved > 0.003
            desc = '%s moves its child %s by %.4f m' % (json.dumps(msg), name, moved)
        elif what == 'pos':
            moved = math.dist(before[joint][0], after[joint][0])
            ok = moved > 0.003
            desc = '%s moves %s by %.4f m' % (json.dumps(msg), joint, moved)
        else:
            d = abs(sum(a * b for a, b in zip(before[joint][1], after[joint][1])))
            moved = 2 * math.acos(min(1.0, d))
            ok = moved > 0.02
            desc = '%s turns %s by %.3f rad' % (json.dumps(msg), joint, moved)
        check(ok, desc)


def main():
    args = sys.argv[1:]
    view = bool(args) and args[0] == '--view'
    if view:
        args = args[1:]
    slanim = args[0]
    work = args[1] if len(args) > 1 else tempfile.mkdtemp(prefix='slanim_leap_')
    os.makedirs(work, exist_ok=True)
    launch, log, err_text, poses = run(slanim, work, view)
    # slanim writes the initial message at its first step (frame 0, time 0 of the poses): the
    # plug-in's time of reading it is the poses' time origin (startup time excluded).
    if log['received']:
        launch = log['received'][0]['t']
    check_conversation(log)
    if view:  # the window shows the poses; only the conversation is checked
        print('%d failures (work dir %s)' % (len(failures), work))
        return 1 if failures else 0
    check_forms(launch, log, poses)
    exit_line = [l for l in err_text.splitlines() if 'puppetry leap:stdin' in l]
    last = len(leap_plugin.PHASES) - 1
    n = len([s for s in log['sent'] if s['phase'] == last])
    expect = '%d LEAP messages read (0 rejected), %d keys skipped, %d unknown joints' % (len(log['sent']), 2 * n, n)
    check(bool(exit_line) and expect in exit_line[-1],
          'the exit line says "%s": %s' % (expect, exit_line[-1] if exit_line else err_text))
    check("bogus: unknown parameter" in err_text and "unknown joint 'mNoSuchJoint'" in err_text,
          'one warning for the unknown key and one for the unknown joint')
    print('%d failures (work dir %s)' % (len(failures), work))
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
