// SPDX-License-Identifier: MIT
// Draws avatars from their model poses (SL avatar-root frame, metres; 7 floats per joint:
// position x y z, rotation quaternion x y z w, as slanim_avatar_joint_transforms): a generated
// body (capsules between the body joints, a head) and the skeleton (a line per bone). One
// instanced draw per part for all avatars, so a crowd costs a handful of draw calls.
import * as THREE from 'three';

/** Floats per joint transform (SLANIM_TRANSFORM_FLOATS). */
export const TRANSFORM_FLOATS = 7;

// The joints the generated body is made of, and each one's limb radius in metres (the limb
// drawn from its nearest drawn ancestor to it). Face, wing, tail and hind-limb bones are not drawn.
const BODY_RADII = [
  [/^mPelvis$/, 0.11], [/^mTorso$/, 0.12], [/^mChest$/, 0.13], [/^mNeck$/, 0.055], [/^mHead$/, 0.055],
  [/^mCollar/, 0.055], [/^mShoulder/, 0.05], [/^mElbow/, 0.045], [/^mWrist/, 0.038],
  [/^mHip/, 0.08], [/^mKnee/, 0.07], [/^mAnkle/, 0.055], [/^mFoot/, 0.045], [/^mToe/, 0.035],
  [/^mHand(Thumb|Index|Middle|Ring|Pinky)[123](Left|Right)$/, 0.011],
];
const HEAD_RADIUS = 0.105;
// Bento's extended bones (face, wings, tail, hind limbs, groin, the spine's zero-length helpers):
// their lines would be a tangle at rest, so the skeleton overlay leaves them out.
const EXTENDED = /^m(Face|Wing|Tail|HindLimb|Groin|Spine[1-4]$)/;

function bodyRadius(name) {
  for (const [re, r] of BODY_RADII) if (re.test(name)) return r;
  return 0;
}

/** The avatars' drawing, under `parent` (a group in SL coordinates). */
export class AvatarView {
  /** joints: { names: string[], parents: Int32Array|number[], boneCount } */
  constructor(parent, joints) {
    this.parent = parent;
    this.joints = joints;
    this.count = 0;
    this.offsets = [];
    this.poses = [];
    this.#planSegments();
    this.bodyMaterial = new THREE.MeshStandardMaterial({ color: 0xc9a88a, roughness: 0.75 });
    this.headMaterial = this.bodyMaterial;
    this.lineMaterial = new THREE.LineBasicMaterial({ color: 0x6cf0ff, depthTest: false, transparent: true });
    this.group = new THREE.Group();
    parent.add(this.group);
    this.setCount(1);
  }

  #planSegments() {
    const { names, parents, boneCount } = this.joints;
    const drawn = names.map((n, j) => j < boneCount && bodyRadius(n) > 0);
    this.segments = []; // [ancestor, joint, radius]
    for (let j = 0; j < boneCount; ++j) {
      if (!drawn[j]) continue;
      let a = parents[j];
      while (a >= 0 && !drawn[a]) a = parents[a];
      if (a >= 0) this.segments.push([a, j, Math.min(bodyRadius(names[a]), bodyRadius(names[j]))]);
    }
    this.bodyJoints = [];
    for (let j = 0; j < boneCount; ++j) if (drawn[j]) this.bodyJoints.push([j, bodyRadius(names[j])]);
    this.headIndex = names.indexOf('mHead');
    this.bones = [];
    for (let j = 0; j < boneCount; ++j) {
      if (parents[j] < 0 || EXTENDED.test(names[j])) continue;
      let a = parents[j];
      while (a >= 0 && EXTENDED.test(names[a])) a = parents[a];
      if (a >= 0) this.bones.push([a, j]);
    }
  }

  /** Sets how many avatars are drawn; avatar i stands at offsets[i] (SL x, y). */
  setCount(n, spacing = 1.2) {
    this.count = n;
    const side = Math.ceil(Math.sqrt(n));
    this.offsets = [];
    for (let i = 0; i < n; ++i) {
      const row = Math.floor(i / side), col = i % side;
      this.offsets.push([-row * spacing, (col - (side - 1) / 2) * spacing]);
    }
    this.poses = new Array(n).fill(null);
    this.#rebuild();
  }

  #rebuild() {
    for (const o of [...this.group.children]) {
      this.group.remove(o);
      o.geometry?.dispose();
    }
    const n = this.count;
    // A crowd's bodies in fewer triangles (the joint spheres are ~90 % of an avatar's): with
    // software WebGL the frame rate of a crowd is bound by rasterising them (docs/web.md).
    const crowd = n > 1;
    this.limbs = new THREE.InstancedMesh(new THREE.CylinderGeometry(1, 1, 1, crowd ? 6 : 10, 1, true),
      this.bodyMaterial, Math.max(1, n * this.segments.length));
    this.knuckles = new THREE.InstancedMesh(new THREE.SphereGeometry(1, crowd ? 6 : 12, crowd ? 4 : 8),
      this.bodyMaterial, Math.max(1, n * (this.bodyJoints.length + 1)));
    for (const m of [this.limbs, this.knuckles]) {
      m.instanceMatrix.setUsage(THREE.DynamicDrawUsage);
      m.frustumCulled = false;
      this.group.add(m);
    }
    const lineGeometry = new THREE.BufferGeometry();
    this.linePositions = new Float32Array(Math.max(1, n * this.bones.length) * 6);
    lineGeometry.setAttribute('position', new THREE.BufferAttribute(this.linePositions, 3).setUsage(THREE.DynamicDrawUsage));
    this.lines = new THREE.LineSegments(lineGeometry, this.lineMaterial);
    this.lines.frustumCulled = false;
    this.lines.renderOrder = 2;
    this.group.add(this.lines);
  }

  setBodyVisible(on) { this.limbs.visible = on; this.knuckles.visible = on; }
  setSkeletonVisible(on) { this.lines.visible = on; }

  /** Avatar i's joint j in SL coordinates (its crowd offset added), or null before a pose. */
  jointPosition(i, j) {
    const t = this.poses[i];
    if (!t) return null;
    const [ox, oy] = this.offsets[i];
    const k = j * TRANSFORM_FLOATS;
    return [t[k] + ox, t[k + 1] + oy, t[k + 2]];
  }

  /** Avatar i's joint j rotation quaternion [x, y, z, w], or null. */
  jointRotation(i, j) {
    const t = this.poses[i];
    if (!t) return null;
    const k = j * TRANSFORM_FLOATS;
    return [t[k + 3], t[k + 4], t[k + 5], t[k + 6]];
  }

  /** Poses avatar i: `transforms` is its model pose (kept by reference until the next call). */
  update(i, transforms) {
    this.poses[i] = transforms;
    const [ox, oy] = this.offsets[i];
    const a = new THREE.Vector3(), b = new THREE.Vector3(), d = new THREE.Vector3();
    const q = new THREE.Quaternion(), s = new THREE.Vector3(), m = new THREE.Matrix4();
    const up = new THREE.Vector3(0, 1, 0);
    const at = (j, v) => v.set(transforms[j * 7] + ox, transforms[j * 7 + 1] + oy, transforms[j * 7 + 2]);
    let k = i * this.segments.length;
    for (const [pa, j, r] of this.segments) {
      at(pa, a); at(j, b);
      d.subVectors(b, a);
      const len = d.length();
      if (len < 1e-4) { m.makeScale(0, 0, 0); } else {
        q.setFromUnitVectors(up, d.divideScalar(len));
        m.compose(a.add(b).multiplyScalar(0.5), q, s.set(r, len, r));
      }
      this.limbs.setMatrixAt(k++, m);
    }
    k = i * (this.bodyJoints.length + 1);
    q.identity();
    for (const [j, r] of this.bodyJoints) this.knuckles.setMatrixAt(k++, m.compose(at(j, a), q, s.setScalar(r)));
    this.knuckles.setMatrixAt(k, this.#headMatrix(transforms, at, m));
    let p = i * this.bones.length * 6;
    const lp = this.linePositions;
    for (const [pa, j] of this.bones) {
      at(pa, a); at(j, b);
      lp[p++] = a.x; lp[p++] = a.y; lp[p++] = a.z; lp[p++] = b.x; lp[p++] = b.y; lp[p++] = b.z;
    }
  }

  // The head: a sphere 8 cm above mHead along the head's own up axis.
  #headMatrix(t, at, m) {
    const h = this.headIndex;
    if (h < 0) return m.makeScale(0, 0, 0);
    const q = new THREE.Quaternion(t[h * 7 + 3], t[h * 7 + 4], t[h * 7 + 5], t[h * 7 + 6]);
    const c = at(h, new THREE.Vector3()).add(new THREE.Vector3(0.01, 0, 0.08).applyQuaternion(q));
    return m.compose(c, q, new THREE.Vector3(HEAD_RADIUS * 0.9, HEAD_RADIUS * 0.85, HEAD_RADIUS));
  }

  /** Uploads the poses of this frame. */
  commit() {
    this.limbs.instanceMatrix.needsUpdate = true;
    this.knuckles.instanceMatrix.needsUpdate = true;
    this.lines.geometry.attributes.position.needsUpdate = true;
  }

  dispose() {
    this.parent.remove(this.group);
    for (const o of this.group.children) o.geometry?.dispose();
  }
}
