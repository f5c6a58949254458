#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A LEAP puppetry plug-in for slanim's tests, standard library only.

It talks to its host as a plug-in talks to the Second Life viewer: the host's messages on
stdin, ours on stdout, each `N:` + N bytes of LLSD notation. It does what Linden Lab's
published puppetry framework does before anything else — read the initial message
{pump: REPLY, data: {command: COMMAND, features: {...}}}, ask the command pump to `listen`
on `puppetry.controller` with reqid -1 under the reply pump's name, and wait for the reply
with reqid -1 and status true, skipping anything else — then sends the scenario's messages
at their times (PHASES, seconds after the handshake) and waits for `stop` on
puppetry.controller.

    leap_plugin.py LOG.json     writes what it received and sent, with times, to LOG.json

Exit status: 0 after `stop`; 3 when stdin ends without `stop`; 4 on a protocol error.
"""
import json
import sys
import threading
import time

CONTROLLER = 'puppetry.controller'

# ---- LLSD notation (the subset LEAP uses) ---------------------------------------------------


def format_notation(v):
    if v is None:
        return '!'
    if v is True:
        return 'true'
    if v is False:
        return 'false'
    if isinstance(v, int):
        return 'i%d' % v
    if isinstance(v, float):
        return 'r' + repr(v)
    if isinstance(v, str):
        return "'" + v.replace('\\', '\\\\').replace("'", "\\'") + "'"
    if isinstance(v, (list, tuple)):
        return '[' + ','.join(format_notation(e) for e in v) + ']'
    if isinstance(v, dict):
        return '{' + ','.join(format_notation(str(k)) + ':' + format_notation(e) for k, e in v.items()) + '}'
    raise TypeError('cannot format %r' % (v,))


class _Parser:
    ESC = {'a': '\a', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t', 'v': '\v'}

    def __init__(self, text):
        self.s, self.p = text, 0

    def ws(self):
        while self.p < len(self.s) and self.s[self.p] in ' \t\r\n':
            self.p += 1

    def value(self):
        self.ws()
        c = self.s[self.p]
        if c == '{':
            self.p += 1
            out = {}
            self.ws()
            if self.s[self.p] == '}':
                self.p += 1
                return out
            while True:
                self.ws()
                k = self.string()
                self.ws()
                assert self.s[self.p] == ':', 'expected : at %d' % self.p
                self.p += 1
                out[k] = self.value()
                self.ws()
                c = self.s[self.p]
                self.p += 1
                if c == '}':
                    return out
                assert c == ',', 'expected , or } at %d' % (self.p - 1)
        if c == '[':
            self.p += 1
            out = []
            self.ws()
            if self.s[self.p] == ']':
                self.p += 1
                return out
            while True:
                out.append(self.value())
                self.ws()
                c = self.s[self.p]
                self.p += 1
                if c == ']':
                    return out
                assert c == ',', 'expected , or ] at %d' % (self.p - 1)
        if c in '\'"':
            return self.string()
        if c == '!':
            self.p += 1
            return None
        for word, val in (('true', True), ('false', False)):
            if self.s.startswith(word, self.p):
                self.p += len(word)
                return val
        if c in '10tf':
            self.p += 1
            return c in '1t'
        if c in 'iru':
            self.p += 1
            start = self.p
            while self.p < len(self.s) and self.s[self.p] not in ',]}':
                self.p += 1
            tok = self.s[start:self.p]
            return int(tok) if c == 'i' else float(tok) if c == 'r' else tok
        raise ValueError('unexpected %r at %d' % (c, self.p))

    def string(self):
        q = self.s[self.p]
        assert q in '\'"', 'expected a string at %d' % self.p
        self.p += 1
        out = []
        while self.s[self.p] != q:
            c = self.s[self.p]
            if c == '\\':
                self.p += 1
                e = self.s[self.p]
                if e == 'x':
                    out.append(chr(int(self.s[self.p + 1:self.p + 3], 16)))
                    self.p += 2
                else:
                    out.append(self.ESC.get(e, e))
            else:
                out.append(c)
            self.p += 1
        self.p += 1
        return ''.join(out)


def parse_notation(text):
    p = _Parser(text)
    v = p.value()
    p.ws()
    assert p.p == len(p.s), 'trailing bytes at %d' % p.p
    return v

# ---- LEAP framing ---------------------------------------------------------------------------


class ViewerShutdown(Exception):
    pass


def get(f):
    """One message from the host (blocking); ViewerShutdown at end of input."""
    hdr = b''
    while True:
        b = f.read(1)
        if not b:
            raise ViewerShutdown()
        if b == b':':
            break
        hdr += b
        if len(hdr) > 20:
            raise ValueError('expected len:data, got %r' % hdr)
    n = int(hdr)
    data = b''
    while len(data) < n:
        chunk = f.read(n - len(data))
        if not chunk:
            raise ViewerShutdown()
        data += chunk
    return parse_notation(data.decode('utf-8'))


_out_lock = threading.Lock()


def put(pump, data):
    body = format_notation({'pump': pump, 'data': data}).encode('utf-8')
    with _out_lock:
        sys.stdout.buffer.write(b'%d:%s' % (len(body), body))
        sys.stdout.buffer.flush()

# ---- the scenario ---------------------------------------------------------------------------

# (seconds after the handshake, the puppetry pump's message, the joint it moves or None, what
# the driver checks: 'rot' the joint's rotation, 'pos' its position, 'child:NAME' NAME's
# position (a scale moves the children), None nothing).
PHASES = [
    (0.3, {'command': 'move', 'mChest': {'scale': [1.3, 1.3, 1.3]}}, 'mChest', 'child:mNeck'),
    (0.8, {'command': 'move', 'mHead': {'local_rot': [0.0, 0.0, 0.2]}}, 'mHead', 'rot'),
    (1.3, {'command': 'set', 'data': {'i': {'mHead': {'p': [0.25, 0.0, 0.9], 'disable_constraint': True}}}}, 'mHead', 'pos'),
    (1.8, {'command': 'move', 'mWristLeft': {'pos': [0.6, 0.5, 0.4], 'no_constraint': True}}, 'mWristLeft', 'pos'),
    (2.3, {'command': 'move', 'mWristLeft': {'rot': [0.0, 0.5, 0.0]}}, 'mWristLeft', 'rot'),
    (2.8, {'command': 'set', 'data': {'inverse_kinematics': {'mWristLeft': {'rotation': [0.0, 0.0, 0.5]}}}}, 'mWristLeft', 'rot'),
    (3.3, {'command': 'move', 'mWristRight': {'eff': [0.6, -0.5, 0.4]}}, 'mWristRight', 'pos'),
    (3.8, {'command': 'set', 'data': {'inverse_kinematics': {'mWristRight': {'position': [0.3, -0.6, 0.8]}}}}, 'mWristRight', 'pos'),
    (4.3, {'command': 'set', 'data': {'i': {'mWristRight': {'r': [0.5, 0.0, 0.0]}}}}, 'mWristRight', 'rot'),
    (4.8, {'command': 'set', 'data': {'joint_state': {'mHipLeft': {'rotation': [0.2, 0.0, 0.0]}}}}, 'mHipLeft', 'rot'),
    (5.3, {'command': 'set', 'data': {'j': {'mHipLeft': {'scale': [1.5, 1.5, 1.5]}}}}, 'mHipLeft', 'child:mKneeLeft'),
    (5.8, {'command': 'set', 'd': {'j': {'mKneeLeft': {'r': [0.0, 0.25, 0.0]}}}}, 'mKneeLeft', 'rot'),
    (6.3, {'command': 'set', 'data': {'j': {'mKneeRight': {'p': [0.0, 0.0, -0.3]}}}}, 'mKneeRight', 'pos'),
    (6.8, {'command': 'set', 'data': {'j': {'mAnkleRight': {'s': [1.5, 1.5, 1.5], 'd': True}}}}, 'mAnkleRight', 'child:mFootRight'),
    (7.3, {'command': 'set', 'data': {'j': {'mHipRight': {'position': [0.05, -0.2, -0.1]}}}}, 'mHipRight', 'pos'),
    # An elbow position target (arm_wave.py's form): the plug-in computes it from the skeleton
    # the host sent (set_skeleton), 12 cm forward, 5 cm in and 10 cm up from the rest end of
    # the elbow's bone; the driver checks that bone end reaches it within 1 mm.
    (7.8, None, 'mElbowLeft', 'elbow-end'),
    # Unknown keys and joints: skipped and counted, the rest applied (the last phase).
    (8.3, {'command': 'set', 'data': {'j': {'mHipRight': {'r': [0.0, 0.0, -0.2], 'bogus': [1.0, 2.0, 3.0]},
                                            'mNoSuchJoint': {'r': [0.0, 0.0, 0.0]}},
                                      'q': {}}}, 'mHipRight', 'rot'),
]
# The phases start SPACING seconds apart (the times above give their order): room for the
# viewer's jitter buffer, which delays a joint's new kind of data by its period + jitter
# estimates (more when the machine is loaded and the stream irregular).
SPACING = 0.8
PHASES = [(0.3 + SPACING * k, msg, joint, what) for k, (_, msg, joint, what) in enumerate(PHASES)]
# Each phase's message is sent every RESEND seconds until the next phase, as a plug-in streams
# (the viewer's jitter buffer paces playback by the stream's own period).
RESEND = 0.1
# Requests with replies (sent right after the handshake).
REQUESTS = [
    ('cmd', {'op': 'ping', 'reqid': 77}),
    ('cmd', {'op': 'getAPIs', 'reqid': 78}),
    ('puppetry', {'command': 'get', 'data': ['camera'], 'reqid': 5}),
    ('puppetry', {'command': 'get', 'data': ['skeleton'], 'reqid': 6}),
]
ELBOW_OFFSET = (0.12, -0.05, 0.10)


def elbow_target(skeleton):
    """The elbow phase's message: a target for the end of mElbowLeft's bone, in the root
    (pelvis) frame normalised by half the arm span (`scale`), from the rest skeleton (every
    rest rotation is the identity, so positions add up)."""
    by_id = {v['id']: (k, v) for k, v in skeleton.items() if isinstance(v, dict)}
    name, end = 'mElbowLeft', list(skeleton['mElbowLeft']['tip_relative_end_position'])
    while name != 'mPelvis':
        joint = skeleton[name]
        end = [a + b for a, b in zip(end, joint['parent_relative_position'])]
        name = by_id[joint['parent_id']][0]
    goal = [a + b for a, b in zip(end, ELBOW_OFFSET)]
    half_span = 0.5 * skeleton['scale']
    return {'command': 'set', 'data': {'inverse_kinematics': {'mElbowLeft': {'position': [g / half_span for g in goal]}}}}


DURATION = PHASES[-1][0] + 1.0  # the last phase, its settling, and every message read


def main():
    log_path = sys.argv[1]
    t0 = time.monotonic()
    log = {'received': [], 'sent': [], 'start': t0}
    stdin = sys.stdin.buffer

    def record(msg):
        log['received'].append({'t': time.monotonic(), 'msg': msg})

    def send(pump, data, phase=None):
        data = dict(data)
        data.setdefault('reply', reply)
        put(pump, data)
        log['sent'].append({'t': time.monotonic(), 'pump': pump, 'msg': data, 'phase': phase})

    def save(status):
        log['exit'] = status
        log['end'] = time.monotonic()
        with open(log_path, 'w') as f:
            json.dump(log, f)
        return status

    try:
        initial = get(stdin)
        record(initial)
        reply, command = initial['pump'], initial['data']['command']
        assert isinstance(initial['data']['features'], dict)
        send(command, {'op': 'listen', 'reqid': -1, 'source': CONTROLLER, 'listener': reply})
        while True:
            m = get(stdin)
            record(m)
            if m.get('data', {}).get('reqid') == -1:
                assert m['data']['status'] is True
                break
    except ViewerShutdown:
        return save(3)
    except Exception as e:  # noqa: BLE001 - report any protocol error
        sys.stderr.write('leap_plugin: protocol error: %r\n' % (e,))
        return save(4)
    log['handshake'] = time.monotonic()

    stopped = threading.Event()
    ended = threading.Event()

    def reader():
        try:
            while True:
                m = get(stdin)
                record(m)
                if m.get('pump') == CONTROLLER and m.get('data', {}).get('command') == 'stop':
                    stopped.set()
                    return
        except ViewerShutdown:
            pass
        except Exception as e:  # noqa: BLE001
            sys.stderr.write('leap_plugin: protocol error: %r\n' % (e,))
        ended.set()

    threading.Thread(target=reader, daemon=True).start()
    for pump, data in REQUESTS:
        send(command if pump == 'cmd' else pump, data)
    start = log['handshake']
    for k, (at, msg, _, _) in enumerate(PHASES):
        if msg is None:
            skel = [r['msg'] for r in log['received'] if r['msg'].get('pump') == CONTROLLER and
                    r['msg'].get('data', {}).get('command') == 'set_skeleton']
            if not skel:
                sys.stderr.write('leap_plugin: no set_skeleton before the elbow phase\n')
                return save(4)
            msg = elbow_target(skel[0]['data']['args'])
        until = start + (PHASES[k + 1][0] if k + 1 < len(PHASES) else at + SPACING)
        due = start + at
        while not (stopped.is_set() or ended.is_set()) and due < until:
            left = due - time.monotonic()
            if left > 0:
                time.sleep(min(left, 0.05))
                continue
            send('puppetry', msg, k)
            due += RESEND
    while not (stopped.is_set() or ended.is_set()):
        time.sleep(0.01)
    return save(0 if stopped.is_set() else 3)


if __name__ == '__main__':
    sys.exit(main())
