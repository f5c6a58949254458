// SPDX-License-Identifier: MIT
// Plays a glTF 2.0 animation with three.js (npm package three, installed by
// `npm ci --prefix tests/tools/gltf`): an independent glTF player for the tests of slanim's
// glTF export. No slanim code reads or writes anything here.
//
// Usage: node sample_poses.mjs FILE.glb|FILE.gltf --fps F --frames N [--animation I] [--root NAME]
//                              [--rotations slerp|nlerp]
//
// Loads FILE with three's GLTFLoader (GLTFLoader.parse on the file's bytes; no browser), plays
// animation I (default 0) with an AnimationMixer (LoopOnce, clamped at the end) and, for every
// frame f in [0, N) at time t = f / F seconds, sets the mixer to t, updates the world matrices
// and prints every node's transform relative to the node named NAME (default "mRoot", the avatar
// root of slanim's files; the scene root when there is none) as CSV:
//   frame,time,node,px,py,pz,qx,qy,qz,qw
// in glTF axes (+Y up), metres, the rotation a unit quaternion. Nodes are named by the file's
// own node names (three's sanitized names are not used).
//
// --rotations: how LINEAR rotation keys are interpolated. slerp (default) is three.js's own
// QuaternionLinearInterpolant, which the glTF specification asks for. nlerp replaces it, on the
// clip's quaternion tracks only, with the SL viewer's rule (LLKeyframeMotion::RotationCurve::
// interp calls nlerp: a normalized linear blend of the two keys, or a shortest-arc slerp when
// their dot product is negative); everything else — loading, the mixer, the scene graph — stays
// three.js's. The difference between the two is the only expected difference between a glTF
// player and the viewer on the same keys. Exit status: 0, 1 when the file cannot
// be parsed or has no such animation, 2 on bad usage or when three is not installed.
import fs from 'node:fs';
import path from 'node:path';

let THREE, GLTFLoader;
try {
  THREE = await import('three');
  ({ GLTFLoader } = await import('three/addons/loaders/GLTFLoader.js'));
} catch (e) {
  console.error(`sample_poses.mjs: the npm package three is not installed (npm ci --prefix ${path.dirname(new URL(import.meta.url).pathname)}): ${e.message}`);
  process.exit(2);
}

const args = process.argv.slice(2);
const usage = () => {
  console.error('usage: node sample_poses.mjs FILE --fps F --frames N [--animation I] [--root NAME]');
  process.exit(2);
};
let file = null, fps = NaN, frames = NaN, animation = 0, rootName = 'mRoot', rotations = 'slerp';
for (let i = 0; i < args.length; ++i) {
  const a = args[i];
  if (a === '--fps') fps = Number(args[++i]);
  else if (a === '--frames') frames = Number(args[++i]);
  else if (a === '--animation') animation = Number(args[++i]);
  else if (a === '--root') rootName = args[++i];
  else if (a === '--rotations') rotations = args[++i];
  else if (file === null && !a.startsWith('--')) file = a;
  else usage();
}
if (file === null || !(fps > 0) || !Number.isInteger(frames) || frames < 0 || !Number.isInteger(animation) ||
    (rotations !== 'slerp' && rotations !== 'nlerp')) usage();

let bytes;
try {
  bytes = fs.readFileSync(file);
} catch (e) {
  console.error(`sample_poses.mjs: ${file}: ${e.message}`);
  process.exit(1);
}
const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
const gltf = await new Promise((resolve) => {
  new GLTFLoader().parse(buffer, path.dirname(path.resolve(file)) + '/', resolve, (e) => {
    console.error(`sample_poses.mjs: ${file}: GLTFLoader: ${e.message ?? e}`);
    process.exit(1);
  });
});
const clip = gltf.animations[animation];
if (!clip) {
  console.error(`sample_poses.mjs: ${file}: no animation ${animation} (${gltf.animations.length} animations)`);
  process.exit(1);
}

// The nodes of the scene with their glTF indices.
const nodes = [];
gltf.scene.traverse((obj) => {
  const a = gltf.parser.associations.get(obj);
  if (a && a.nodes !== undefined) nodes.push({ obj, name: gltf.parser.json.nodes[a.nodes].name ?? `nodes[${a.nodes}]` });
});
const root = nodes.find((n) => n.name === rootName)?.obj ?? gltf.scene;

// The viewer's rotation interpolation (see --rotations).
class NlerpInterpolant extends THREE.Interpolant {
  interpolate_(i1, t0, t, t1) {
    const r = this.resultBuffer, v = this.sampleValues, a = (i1 - 1) * 4, b = i1 * 4;
    const u = (t - t0) / (t1 - t0);
    const d = v[a] * v[b] + v[a + 1] * v[b + 1] + v[a + 2] * v[b + 2] + v[a + 3] * v[b + 3];
    if (d < 0) {
      THREE.Quaternion.slerpFlat(r, 0, v, a, v, b, u);
      return r;
    }
    let len = 0;
    for (let k = 0; k < 4; ++k) {
      r[k] = (1 - u) * v[a + k] + u * v[b + k];
      len += r[k] * r[k];
    }
    len = Math.sqrt(len);
    for (let k = 0; k < 4; ++k) r[k] /= len;
    return r;
  }
}
if (rotations === 'nlerp') {
  for (const track of clip.tracks) {
    if (!(track instanceof THREE.QuaternionKeyframeTrack) || track.getInterpolation() !== THREE.InterpolateLinear) continue;
    track.createInterpolant = function (result) {
      return new NlerpInterpolant(this.times, this.values, this.getValueSize(), result);
    };
  }
}

const mixer = new THREE.AnimationMixer(gltf.scene);
const action = mixer.clipAction(clip);
action.setLoop(THREE.LoopOnce, 1);
action.clampWhenFinished = true;
action.play();

const rootInverse = new THREE.Matrix4();
const m = new THREE.Matrix4();
const p = new THREE.Vector3(), q = new THREE.Quaternion(), s = new THREE.Vector3();
const lines = ['frame,time,node,px,py,pz,qx,qy,qz,qw'];
for (let f = 0; f < frames; ++f) {
  const t = f / fps;
  mixer.setTime(t);
  gltf.scene.updateMatrixWorld(true);
  rootInverse.copy(root.matrixWorld).invert();
  for (const n of nodes) {
    m.multiplyMatrices(rootInverse, n.obj.matrixWorld).decompose(p, q, s);
    lines.push(`${f},${t},${n.name},${p.x},${p.y},${p.z},${q.x},${q.y},${q.z},${q.w}`);
  }
  if (lines.length > 10000) {
    process.stdout.write(lines.join('\n') + '\n');
    lines.length = 0;
  }
}
process.stdout.write(lines.join('\n') + (lines.length ? '\n' : ''));
