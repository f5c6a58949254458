// SPDX-License-Identifier: MIT
// slanim-api.js — the page's JavaScript module over slanim.wasm (docs/web.md, "The JS module").
//
// It calls the C API of runtime/capi/include/slanim/slanim.h, the same `slanim_*` functions a C
// host calls, through the Emscripten exports (Module._slanim_…) and the heap views; it is not a
// second binding of the C++ classes. Every object that owns C memory (Motion, World, Skeleton)
// has a destroy() method; nothing is freed by the garbage collector.
//
// API (every method throws a SlanimError on a failed C call; its .status is the C status name,
// its .message is slanim_last_error(), which names the rule and the byte offset for .anim files,
// its .detail the same without the C function's name):
//
//   const slanim = await loadSlanim({ locateFile })   // locateFile(name): URL of slanim.wasm
//   slanim.version                                    // "0.1.0"
//   slanim.skeleton                                   // the embedded default Skeleton
//     .jointCount, .boneCount, .names[i], .parents[i], .find(name) → index or -1
//
//   // Files, as the CLI reads them
//   slanim.infoLine(bytes, name) → string: the line `slanim info NAME` prints (throws with
//       "NAME: error: [rule] … (at byte N)" for a file the viewer refuses)
//   slanim.validate(bytes, {upload=false, assetId=null(16 bytes)})
//       → { valid, errors, warnings, report: [lines "error: [rule] … at byte N"] }
//   slanim.validateText(bytes, name, {upload=false}) → string: what `slanim validate [--upload]
//       NAME` prints ("NAME: valid (0 error(s), 1 warning(s))" then "  warning: …" lines; the
//       asset id is NAME's stem when it is a UUID, as the command does)
//   slanim.edit(bytes, edits) → Uint8Array: the file `slanim edit FILE OPTIONS… -o OUT` writes;
//       edits: an array of option strings, ['--priority 4', '--ease-in 0.5', '--mirror']
//       (slanim_anim_edit in slanim.h lists them)
//   slanim.poserToAnim(xmlText, {skipUnknownJoints=false}) → Uint8Array (as `slanim convert
//       pose.xml out.anim`)
//   slanim.openMotion(bytes) → Motion (the playback rules of `slanim play`; throws on a file the
//       viewer would refuse, message with the byte offset)
//     motion.info → { duration, loop, loopIn, loopOut, easeIn, easeOut, priority, handPose,
//                     numJoints, numConstraints }
//     motion.sample(t) → Float32Array(7 × jointCount): local transforms (px,py,pz, qx,qy,qz,qw)
//     motion.destroy()
//   slanim.bvhToAnim(text, options) → Uint8Array (.anim bytes, as `slanim convert in.bvh out.anim`)
//       text: a string (encoded as UTF-8) or the file's bytes (Uint8Array, passed unchanged: a
//       BVH with Latin-1 bytes reaches the importer as the CLI reads it); the same for
//       poserToAnim and bvjToAnim
//       options: { priority, loop, loopIn, loopOut, easeIn, easeOut, handPose, emote,
//                  skipUnknownJoints, keepAllFrames, importer, pelvisOriginFirstFrame,
//                  hipTurnDegrees } (absent: the uploader's defaults)
//   slanim.animToBvh(bytes, fps = 30) → string (as `slanim convert in.anim out.bvh --fps F`)
//   slanim.bvjToAnim(text) → Uint8Array (as `slanim convert in.bvj out.anim`)
//   slanim.gltfToAnim(bytes) → Uint8Array (as `slanim convert in.glb out.anim`; .gltf with embedded
//       buffers too; slanim_gltf.h), importMotion(bytes, 'glb'|'gltf', name) the same
//   slanim.animToGlb(bytes, name = 'motion.anim') → Uint8Array: the .glb `slanim convert NAME
//       -o out.glb` writes for these .anim bytes in a file named NAME (the default skeleton, no
//       mesh, the animation named after NAME's stem, the .anim kept in its extras so that
//       gltfToAnim gives it back; slanim_anim_to_glb in slanim_gltf.h)
//
//   // A viewer character folder the user opens (never shipped): the files are written into the
//   // module's in-memory file system and read by slanim_skeleton_load, as a C host reads a folder
//   const skel = slanim.loadCharacter({ 'avatar_skeleton.xml': bytes, 'avatar_lad.xml': bytes,
//                                       'avatar_upper_body.llm': bytes, … })  → Skeleton
//
//   // Playback with the viewer's blend rules (a slanim World; one thread in the browser)
//   const world = slanim.createWorld()
//   world.loadMotion(id, bytes)      // id: any string (hashed to the 16-byte motion id) or 16 bytes
//   world.unloadMotion(id)
//   const avatar = world.createAvatar(skeleton?)  // an Avatar (default: the embedded skeleton)
//   avatar.start(id, offset = 0), avatar.stop(id, immediate = false), avatar.stopAll(immediate)
//   avatar.isActive(id), avatar.setTimeFactor(f), avatar.setPaused(bool)
//   world.step(dt)                                 // seconds (0 allowed)
//   world.setProfiling(on), world.profile(reset) → "NAME SECONDS CALLS" lines per system
//   avatar.transforms(out?) → Float32Array(7 × joints): model pose, avatar-root frame, metres
//   avatar.owners() → [{ joint, motion, priority }]: each animated joint's owner after the last
//       step (slanim_avatar_joint_owners, `slanim view`'s owner overlay)
//   avatar.constraintTargets() → [{ motion, index, state, weight, source, position, goal, label, … }]:
//       the constraints of the last step, avatar-root frame (slanim_avatar_constraint_targets)
//   avatar.matrices(out?)   → Float32Array(16 × joints): column-major T·R·S per joint
//   avatar.destroy(); world.destroy()
//   // With a character folder's skeleton: the SL body, CPU-skinned as `slanim view` skins it
//   avatar.enableAppearance(skin = true); avatar.meshes() → [{ type, vertexCount, triangleCount }]
//   avatar.meshTriangles(i) → Uint32Array(3 × triangles)
//   avatar.meshVertices(i) → { positions, normals } (Float32Array(3 × vertices) each, after the
//       last step, avatar-root frame, metres)
//   avatar.setVisualParam(id, weight), avatar.getVisualParam(id), avatar.applyWearable(text)
//
// Frames: SL's, X forward, Y left, Z up, metres, seconds; quaternions x, y, z, w.
// Memory: pointers and sizes are 32-bit (wasm32); every buffer this module allocates in the
// wasm heap is freed before the call returns, except those owned by the returned objects.

import createSlanimModule from './slanim.js';

const STATUS = ['SLANIM_OK', 'SLANIM_ERROR_NULL_ARGUMENT', 'SLANIM_ERROR_INVALID_HANDLE',
  'SLANIM_ERROR_BUFFER_TOO_SMALL', 'SLANIM_ERROR_OUT_OF_RANGE', 'SLANIM_ERROR_INVALID_DATA',
  'SLANIM_ERROR_NOT_FOUND', 'SLANIM_ERROR_IO', 'SLANIM_ERROR_UNSUPPORTED',
  'SLANIM_ERROR_OUT_OF_MEMORY', 'SLANIM_ERROR_INTERNAL', 'SLANIM_ERROR_ALREADY_EXISTS'];
const BUFFER_TOO_SMALL = 3;
const CONSTRAINT_STATES = ['applied', 'before_window', 'after_window', 'masked', 'zero_weight', 'no_position'];
const TRANSFORM_FLOATS = 7;
const MATRIX_FLOATS = 16;

/**
 * A failed C call: .status is the status name, .code its number, .message slanim_last_error()
 * ("slanim_anim_info_line: DANCE1.anim: error: [truncated] … (… at byte 493)"), .detail the
 * message without the C function's name (the text the command prints after "slanim info: ").
 */
export class SlanimError extends Error {
  constructor(fn, code, message) {
    super(message || `${fn}: ${STATUS[code] ?? code}`);
    this.name = 'SlanimError';
    this.fn = fn;
    this.code = code;
    this.status = STATUS[code] ?? `status ${code}`;
    this.detail = this.message.startsWith(fn + ': ') ? this.message.slice(fn.length + 2) : this.message;
  }
}

/** Loads slanim.wasm and returns the API object. `options` go to the Emscripten factory. */
export async function loadSlanim(options = {}) {
  const M = await createSlanimModule(options);
  return new Slanim(M);
}

/** A text argument's bytes: a string encoded as UTF-8, or bytes (Uint8Array, ArrayBuffer) as they are. */
function utf8(text) {
  if (text instanceof Uint8Array) return text;
  if (text instanceof ArrayBuffer) return new Uint8Array(text);
  return new TextEncoder().encode(String(text));
}

/** FNV-1a of a string, twice, spread over 16 bytes: a stable motion id for a file name. */
function motionId(id) {
  if (id instanceof Uint8Array) {
    if (id.length !== 16) throw new RangeError('a motion id has 16 bytes');
    return id;
  }
  const out = new Uint8Array(16);
  const text = new TextEncoder().encode(String(id));
  for (let lane = 0; lane < 4; ++lane) {
    let h = (0x811c9dc5 ^ lane * 0x9e3779b9) >>> 0;
    for (const b of text) h = Math.imul(h ^ b, 0x01000193) >>> 0;
    out[lane * 4] = h & 255; out[lane * 4 + 1] = (h >>> 8) & 255;
    out[lane * 4 + 2] = (h >>> 16) & 255; out[lane * 4 + 3] = h >>> 24;
  }
  return out;
}

class Heap {
  constructor(M) { this.M = M; this.ptrs = []; }
  alloc(bytes) {
    const p = this.M._malloc(Math.max(bytes, 1));
    if (!p) throw new SlanimError('malloc', 9, `out of memory (${bytes} bytes)`);
    this.ptrs.push(p);
    return p;
  }
  bytes(u8) { const p = this.alloc(u8.length); this.M.HEAPU8.set(u8, p); return p; }
  string(s) {
    const n = this.M.lengthBytesUTF8(s) + 1;
    const p = this.alloc(n);
    this.M.stringToUTF8(s, p, n);
    return p;
  }
  free() { for (const p of this.ptrs) this.M._free(p); this.ptrs = []; }
}

class Slanim {
  constructor(M) {
    this.M = M;
    this.version = M.UTF8ToString(M._slanim_version());
    this.skeleton = this._defaultSkeleton();
    this._characters = 0;
  }

  /** Throws a SlanimError for a failed status of C function `fn`. */
  _check(fn, code) {
    if (code !== 0) throw new SlanimError(fn, code, this.M.UTF8ToString(this.M._slanim_last_error()));
  }

  /** Runs fn(heap), freeing whatever it allocated in the wasm heap. */
  _with(fn) {
    const heap = new Heap(this.M);
    try { return fn(heap); } finally { heap.free(); }
  }

  /**
   * The C pattern "caller buffer, capacity in, needed out": call(ptr, capacity, neededPtr)
   * twice when the first guess is short. `unit` bytes per element; returns a copy as
   * `Type` (Uint8Array, Float32Array) of `needed` elements.
   */
  _read(name, call, Type = Uint8Array, guess = 4096) {
    return this._with((h) => {
      const needed = h.alloc(4);
      let capacity = guess;
      let buf = h.alloc(capacity * Type.BYTES_PER_ELEMENT);
      let code = call(buf, capacity, needed);
      if (code === BUFFER_TOO_SMALL) {
        capacity = this.M.HEAPU32[needed >> 2];
        buf = h.alloc(capacity * Type.BYTES_PER_ELEMENT);
        code = call(buf, capacity, needed);
      }
      this._check(name, code);
      const n = this.M.HEAPU32[needed >> 2];
      return new Type(this.M.HEAPU8.buffer.slice(buf, buf + n * Type.BYTES_PER_ELEMENT));
    });
  }

  /** A NUL-terminated text read through _read (the NUL dropped). */
  _readText(name, call, guess = 4096) {
    const bytes = this._read(name, call, Uint8Array, guess);
    const end = bytes.indexOf(0);
    return new TextDecoder().decode(end < 0 ? bytes : bytes.subarray(0, end));
  }

  _defaultSkeleton() {
    return this._with((h) => {
      const out = h.alloc(4);
      this._check('slanim_skeleton_default', this.M._slanim_skeleton_default(out));
      return new Skeleton(this, this.M.HEAPU32[out >> 2]);
    });
  }

  validate(bytes, { upload = false, assetId = null } = {}) {
    return this._with((h) => {
      const data = h.bytes(bytes);
      const id = assetId ? h.bytes(assetId) : 0;
      const result = h.alloc(12);
      const report = this._readText('slanim_anim_validate', (p, cap, needed) =>
        this.M._slanim_anim_validate(data, bytes.length, upload ? 1 : 0, id, 0, result, p, cap, needed));
      const i = result >> 2;
      return {
        valid: this.M.HEAP32[i] !== 0,
        errors: this.M.HEAP32[i + 1],
        warnings: this.M.HEAP32[i + 2],
        report: report.split('\n').filter((l) => l.length > 0),
      };
    });
  }

  infoLine(bytes, name) {
    return this._with((h) => {
      const data = h.bytes(bytes);
      const file = h.string(name);
      return this._readText('slanim_anim_info_line', (p, cap, needed) =>
        this.M._slanim_anim_info_line(data, bytes.length, file, 0, p, cap, needed), 1024);
    });
  }

  validateText(bytes, name, { upload = false } = {}) {
    const stem = name.replace(/^.*[\\/]/, '').replace(/\.[^.]*$/, '');
    const m = /^([0-9a-f]{8})-([0-9a-f]{4})-([0-9a-f]{4})-([0-9a-f]{4})-([0-9a-f]{12})$/i.exec(stem);
    const assetId = m ? Uint8Array.from(m.slice(1).join('').match(/../g).map((x) => parseInt(x, 16))) : null;
    const v = this.validate(bytes, { upload, assetId });
    const head = `${name}: ${v.valid ? 'valid' : 'invalid'} (${v.errors} error(s), ${v.warnings} warning(s))`;
    return [head, ...v.report.map((l) => '  ' + l)].join('\n') + '\n';
  }

  edit(bytes, edits) {
    return this._with((h) => {
      const data = h.bytes(bytes);
      const text = h.string(edits.join('\n'));
      return this._read('slanim_anim_edit', (p, cap, needed) =>
        this.M._slanim_anim_edit(data, bytes.length, text, 0, p, cap, needed), Uint8Array, bytes.length + 4096);
    });
  }

  poserToAnim(xml, { skipUnknownJoints = false } = {}) {
    return this._with((h) => {
      const text = utf8(xml);
      const data = h.bytes(text);
      return this._read('slanim_poser_to_anim', (p, cap, needed) =>
        this.M._slanim_poser_to_anim(data, text.length, skipUnknownJoints ? 1 : 0, p, cap, needed), Uint8Array, 65536);
    });
  }

  bvjToAnim(text) {
    return this._with((h) => {
      const bvj = utf8(text);
      const data = h.bytes(bvj);
      return this._read('slanim_bvj_to_anim', (p, cap, needed) =>
        this.M._slanim_bvj_to_anim(data, bvj.length, p, cap, needed), Uint8Array, 65536);
    });
  }

  /**
   * A glTF animation (.glb bytes, or .gltf JSON with embedded buffers) → .anim bytes, as
   * `slanim convert in.glb -o out.anim` writes them (slanim_gltf_to_anim, slanim_gltf.h).
   */
  gltfToAnim(bytes) {
    return this._with((h) => {
      const data = h.bytes(bytes);
      return this._read('slanim_gltf_to_anim', (p, cap, needed) =>
        this.M._slanim_gltf_to_anim(data, bytes.length, p, cap, needed), Uint8Array, 65536);
    });
  }

  animToGlb(bytes, name = 'motion.anim') {
    return this._with((h) => {
      const data = h.bytes(bytes);
      const file = h.string(name);
      return this._read('slanim_anim_to_glb', (p, cap, needed) =>
        this.M._slanim_anim_to_glb(data, bytes.length, file, p, cap, needed), Uint8Array, 1 << 17);
    });
  }

  /** The .anim of a file of `kind` the other calls do not cover: 'glb' and 'gltf' (gltfToAnim). */
  importMotion(bytes, kind, name = '') {
    if (kind === 'glb' || kind === 'gltf') return this.gltfToAnim(bytes);
    throw new Error(`${name}: no importer for .${kind} files`);
  }

  openMotion(bytes) {
    return this._with((h) => {
      const data = h.bytes(bytes);
      const out = h.alloc(4);
      this._check('slanim_motion_load', this.M._slanim_motion_load(data, bytes.length, 0, out));
      return new Motion(this, this.M.HEAPU32[out >> 2]);
    });
  }

  bvhToAnim(text, options = {}) {
    return this._with((h) => {
      const bvh = utf8(text);
      const data = h.bytes(bvh);
      const opt = h.alloc(52);
      this._check('slanim_bvh_import_options_init', this.M._slanim_bvh_import_options_init(opt));
      const I = this.M.HEAP32, F = this.M.HEAPF32, o = opt >> 2;
      const set = (k, v, isFloat) => { if (v !== undefined && v !== null) (isFloat ? F : I)[o + k] = Number(v); };
      set(0, options.priority); set(1, options.loop === undefined ? undefined : (options.loop ? 1 : 0));
      set(2, options.loopIn, true); set(3, options.loopOut, true);
      set(4, options.easeIn, true); set(5, options.easeOut, true); set(6, options.handPose);
      if (options.emote) this.M.HEAPU32[o + 7] = h.string(options.emote);
      set(8, options.skipUnknownJoints ? 1 : undefined); set(9, options.keepAllFrames ? 1 : undefined);
      set(10, options.importer); set(11, options.pelvisOriginFirstFrame ? 1 : undefined);
      set(12, options.hipTurnDegrees, true);
      return this._read('slanim_bvh_to_anim', (p, cap, needed) =>
        this.M._slanim_bvh_to_anim(data, bvh.length, opt, p, cap, needed), Uint8Array, 65536);
    });
  }

  animToBvh(bytes, fps = 30) {
    return this._with((h) => {
      const data = h.bytes(bytes);
      return this._readText('slanim_anim_to_bvh', (p, cap, needed) =>
        this.M._slanim_anim_to_bvh(data, bytes.length, fps, p, cap, needed), 1 << 16);
    });
  }

  loadCharacter(files) {
    const FS = this.M.FS;
    const dir = `/character-${++this._characters}`;
    FS.mkdir(dir);
    for (const [name, bytes] of Object.entries(files)) {
      const base = name.replace(/^.*[\\/]/, '');
      if (!/^[A-Za-z0-9_.-]+$/.test(base)) throw new RangeError(`unexpected file name ${name}`);
      FS.writeFile(`${dir}/${base}`, bytes);
    }
    return this._with((h) => {
      const out = h.alloc(4);
      this._check('slanim_skeleton_load', this.M._slanim_skeleton_load(h.string(dir), out));
      return new Skeleton(this, this.M.HEAPU32[out >> 2]);
    });
  }

  createWorld() {
    return this._with((h) => {
      const out = h.alloc(4);
      this._check('slanim_world_create', this.M._slanim_world_create(1, out));
      return new World(this, this.M.HEAPU32[out >> 2]);
    });
  }
}

class Skeleton {
  constructor(api, ptr) {
    this.api = api;
    this.ptr = ptr;
    const M = api.M;
    api._with((h) => {
      const n = h.alloc(4);
      api._check('slanim_skeleton_joint_count', M._slanim_skeleton_joint_count(ptr, n));
      this.jointCount = M.HEAP32[n >> 2];
      api._check('slanim_skeleton_bone_count', M._slanim_skeleton_bone_count(ptr, n));
      this.boneCount = M.HEAP32[n >> 2];
      this.names = [];
      this.parents = new Int32Array(this.jointCount);
      for (let i = 0; i < this.jointCount; ++i) {
        this.names.push(api._readText('slanim_skeleton_joint_name', (p, cap, needed) =>
          M._slanim_skeleton_joint_name(ptr, i, p, cap, needed), 64));
        api._check('slanim_skeleton_joint_parent', M._slanim_skeleton_joint_parent(ptr, i, n));
        this.parents[i] = M.HEAP32[n >> 2];
      }
    });
  }
  find(name) { const i = this.names.indexOf(name); return i; }
  destroy() { if (this.ptr) this.api.M._slanim_skeleton_release(this.ptr); this.ptr = 0; }
}

class Motion {
  constructor(api, ptr) {
    this.api = api;
    this.ptr = ptr;
    this.info = api._with((h) => {
      const p = h.alloc(40);
      api._check('slanim_motion_get_info', api.M._slanim_motion_get_info(ptr, p));
      const I = api.M.HEAP32, F = api.M.HEAPF32, o = p >> 2;
      return {
        duration: F[o], loop: I[o + 1] !== 0, loopIn: F[o + 2], loopOut: F[o + 3],
        easeIn: F[o + 4], easeOut: F[o + 5], priority: I[o + 6], handPose: I[o + 7],
        numJoints: I[o + 8], numConstraints: I[o + 9],
      };
    });
  }
  /** Local pose at curve time t (seconds): Float32Array of 7 floats per skeleton joint. */
  sample(t) {
    return this.api._read('slanim_motion_sample', (p, cap, needed) =>
      this.api.M._slanim_motion_sample(this.ptr, t, p, cap, needed), Float32Array,
    this.api.skeleton.jointCount * TRANSFORM_FLOATS);
  }
  destroy() { if (this.ptr) this.api.M._slanim_motion_destroy(this.ptr); this.ptr = 0; }
}

class World {
  constructor(api, ptr) {
    this.api = api;
    this.ptr = ptr;
    this.avatars = new Set();
    this.loadedIds = new Map();  // motion id (hex) → the id loadMotion was given
  }
  _id(h, id) { return h.bytes(motionId(id)); }
  /** The id a motion was loaded under (its string, or the hex of its 16 bytes). */
  motionName(bytes16) {
    const hex = Array.from(bytes16, (b) => b.toString(16).padStart(2, '0')).join('');
    return this.loadedIds.get(hex) ?? hex;
  }
  loadMotion(id, bytes) {
    const api = this.api;
    const hex = Array.from(motionId(id), (b) => b.toString(16).padStart(2, '0')).join('');
    this.loadedIds.set(hex, typeof id === 'string' ? id : hex);
    api._with((h) => {
      const key = this._id(h, id);
      const data = h.bytes(bytes);
      api._check('slanim_world_load_motion', api.M._slanim_world_load_motion(this.ptr, key, data, bytes.length));
    });
  }
  unloadMotion(id) {
    const api = this.api;
    api._with((h) => api._check('slanim_world_unload_motion', api.M._slanim_world_unload_motion(this.ptr, this._id(h, id))));
  }
  hasMotion(id) {
    const api = this.api;
    return api._with((h) => {
      const out = h.alloc(4);
      api._check('slanim_world_has_motion', api.M._slanim_world_has_motion(this.ptr, this._id(h, id), out));
      return api.M.HEAP32[out >> 2] !== 0;
    });
  }
  createAvatar(skeleton = this.api.skeleton) {
    const api = this.api;
    return api._with((h) => {
      const out = h.alloc(8);
      api._check('slanim_avatar_create', api.M._slanim_avatar_create(this.ptr, skeleton.ptr, out));
      const a = new Avatar(this, api.M.HEAPU32[out >> 2], api.M.HEAPU32[(out >> 2) + 1], skeleton);
      this.avatars.add(a);
      return a;
    });
  }
  /** Per-system timing on or off (slanim_world_set_profiling). */
  setProfiling(on) { this.api._check('slanim_world_set_profiling', this.api.M._slanim_world_set_profiling(this.ptr, on ? 1 : 0)); }
  /** "NAME SECONDS CALLS" lines since profiling started or was reset; `reset` zeroes them. */
  profile(reset = false) {
    return this.api._readText('slanim_world_profile', (p, cap, needed) =>
      this.api.M._slanim_world_profile(this.ptr, reset ? 1 : 0, p, cap, needed), 4096);
  }
  /** Advances every avatar by dt seconds (the viewer's frame). */
  step(dt) { this.api._check('slanim_world_step', this.api.M._slanim_world_step(this.ptr, dt)); }
  destroy() {
    if (this.ptr) this.api.M._slanim_world_destroy(this.ptr);
    this.ptr = 0;
    this.avatars.clear();
  }
}

// An avatar handle is a 64-bit value; wasm32 without BigInt integration passes it as two 32-bit
// halves (low, high) to every exported function.
class Avatar {
  constructor(world, lo, hi, skeleton) {
    this.world = world;
    this.api = world.api;
    this.lo = lo;
    this.hi = hi;
    this.skeleton = skeleton;
    this.jointCount = skeleton.jointCount;
  }
  _call(name, ...args) {
    const M = this.api.M;
    this.api._check(name, M['_' + name](this.world.ptr, this.lo, this.hi, ...args));
  }
  _withId(id, fn) { return this.api._with((h) => fn(h.bytes(motionId(id)), h)); }
  start(id, offset = 0) { this._withId(id, (k) => this._call('slanim_avatar_start_motion', k, offset)); }
  stop(id, immediate = false) { this._withId(id, (k) => this._call('slanim_avatar_stop_motion', k, immediate ? 1 : 0)); }
  stopAll(immediate = false) { this._call('slanim_avatar_stop_all_motions', immediate ? 1 : 0); }
  isActive(id) {
    return this._withId(id, (k, h) => {
      const out = h.alloc(4);
      this._call('slanim_avatar_is_motion_active', k, out);
      return this.api.M.HEAP32[out >> 2] !== 0;
    });
  }
  setTimeFactor(f) { this._call('slanim_avatar_set_time_factor', f); }
  setPaused(paused) { this._call('slanim_avatar_set_paused', paused ? 1 : 0); }
  _pose(name, per, out) {
    const n = this.jointCount * per;
    const api = this.api;
    return api._with((h) => {
      const buf = h.alloc(n * 4);
      const needed = h.alloc(4);
      this._call(name, buf, n, needed);
      const view = new Float32Array(api.M.HEAPU8.buffer, buf, n);
      const dst = out && out.length >= n ? out : new Float32Array(n);
      dst.set(view);
      return dst;
    });
  }
  /** Fixed-size C records (`size` bytes each) of an avatar output call, as a DataView. */
  _records(name, size, guess) {
    const api = this.api, M = api.M;
    return api._with((h) => {
      const needed = h.alloc(4);
      let capacity = Math.max(1, guess);
      let buf = h.alloc(capacity * size);
      let code = M['_' + name](this.world.ptr, this.lo, this.hi, buf, capacity, needed);
      if (code === BUFFER_TOO_SMALL) {
        capacity = M.HEAPU32[needed >> 2];
        buf = h.alloc(capacity * size);
        code = M['_' + name](this.world.ptr, this.lo, this.hi, buf, capacity, needed);
      }
      api._check(name, code);
      return new DataView(M.HEAPU8.buffer.slice(buf, buf + M.HEAPU32[needed >> 2] * size));
    });
  }
  /**
   * The owner of each animated joint after the last step (slanim_avatar_joint_owners: the
   * blend's winner, as `slanim view`'s owner overlay): [{ joint, motion, priority }], motion
   * being the id the motion was loaded under.
   */
  owners() {
    const dv = this._records('slanim_avatar_joint_owners', 24, this.jointCount);
    const out = [];
    for (let o = 0; o < dv.byteLength; o += 24) {
      out.push({ joint: dv.getInt32(o, true), priority: dv.getInt32(o + 4, true),
                 motion: this.world.motionName(new Uint8Array(dv.buffer, o + 8, 16)) });
    }
    return out;
  }
  /**
   * The constraints of the motions evaluated in the last step (slanim_avatar_constraint_targets),
   * oldest motion first: [{ motion, index, sourceJoint, targetJoint (−1: ground), ground, plane,
   * state ('applied', 'before_window', 'after_window', 'masked', 'zero_weight', 'no_position'),
   * reachable, weight, source, position (the target), goal: [x, y, z] avatar-root frame, metres,
   * label: "MOTION #k SOURCE -> TARGET: state" }].
   */
  constraintTargets() {
    const SIZE = 84;  // sizeof(slanim_constraint_target)
    const dv = this._records('slanim_avatar_constraint_targets', SIZE, 8);
    const names = this.skeleton.names;
    const vec = (o) => [dv.getFloat32(o, true), dv.getFloat32(o + 4, true), dv.getFloat32(o + 8, true)];
    const out = [];
    for (let o = 0; o < dv.byteLength; o += SIZE) {
      const t = {
        motion: this.world.motionName(new Uint8Array(dv.buffer, o, 16)),
        index: dv.getInt32(o + 16, true), sourceJoint: dv.getInt32(o + 20, true),
        targetJoint: dv.getInt32(o + 24, true), ground: dv.getInt32(o + 28, true) !== 0,
        plane: dv.getInt32(o + 32, true) !== 0, state: CONSTRAINT_STATES[dv.getInt32(o + 36, true)] ?? '?',
        reachable: dv.getInt32(o + 40, true) !== 0, weight: dv.getFloat32(o + 44, true),
        source: vec(o + 48), position: vec(o + 60), goal: vec(o + 72),
      };
      const src = t.sourceJoint >= 0 ? names[t.sourceJoint] : '?';
      const dst = t.ground ? 'GROUND' : (t.targetJoint >= 0 ? names[t.targetJoint] : '?');
      t.label = `${t.motion} #${t.index} ${src} -> ${dst}${t.plane ? ' (plane)' : ''}: ${t.state}`;
      out.push(t);
    }
    return out;
  }
  /** Model pose after the last step: 7 floats per joint (position, quaternion x y z w). */
  transforms(out) { return this._pose('slanim_avatar_joint_transforms', TRANSFORM_FLOATS, out); }
  /** Column-major 4×4 per joint (T·R·S), avatar-root frame. */
  matrices(out) { return this._pose('slanim_avatar_joint_matrices', MATRIX_FLOATS, out); }

  /** The avatar_lad.xml params and (skin) the CPU-skinned base meshes of its character folder. */
  enableAppearance(skin = true) { this._call('slanim_avatar_enable_appearance', skin ? 1 : 0); }
  getVisualParam(id) {
    return this.api._with((h) => {
      const out = h.alloc(4);
      this._call('slanim_avatar_get_visual_param', id, out);
      return this.api.M.HEAPF32[out >> 2];
    });
  }
  setVisualParam(id, weight) { this._call('slanim_avatar_set_visual_param', id, weight); }
  /** A body-part wearable (LLWearable text); returns the count of params it set. */
  applyWearable(text) {
    return this.api._with((h) => {
      const bytes = new TextEncoder().encode(text);
      const out = h.alloc(4);
      this._call('slanim_avatar_apply_wearable', h.bytes(bytes), bytes.length, out);
      return this.api.M.HEAP32[out >> 2];
    });
  }
  meshes() {
    const api = this.api;
    return api._with((h) => {
      const n = h.alloc(4);
      this._call('slanim_avatar_mesh_count', n);
      const list = [];
      const info = h.alloc(72);
      for (let i = 0; i < api.M.HEAP32[n >> 2]; ++i) {
        this._call('slanim_avatar_mesh_info', i, info);
        list.push({ vertexCount: api.M.HEAPU32[info >> 2], triangleCount: api.M.HEAPU32[(info >> 2) + 1],
          type: api.M.UTF8ToString(info + 8, 64) });
      }
      return list;
    });
  }
  meshTriangles(mesh) {
    return this.api._read('slanim_avatar_mesh_triangles', (p, cap, needed) =>
      this.api.M._slanim_avatar_mesh_triangles(this.world.ptr, this.lo, this.hi, mesh, p, cap, needed), Uint32Array, 1);
  }
  meshVertices(mesh) {
    const api = this.api;
    return api._with((h) => {
      const needed = h.alloc(4);
      let code = api.M._slanim_avatar_mesh_vertices(this.world.ptr, this.lo, this.hi, mesh, 0, 0, 0, needed);
      if (code !== BUFFER_TOO_SMALL) api._check('slanim_avatar_mesh_vertices', code);
      const n = api.M.HEAPU32[needed >> 2];
      const pos = h.alloc(n * 4), nrm = h.alloc(n * 4);
      code = api.M._slanim_avatar_mesh_vertices(this.world.ptr, this.lo, this.hi, mesh, pos, nrm, n, needed);
      api._check('slanim_avatar_mesh_vertices', code);
      return {
        positions: new Float32Array(api.M.HEAPU8.buffer.slice(pos, pos + n * 4)),
        normals: new Float32Array(api.M.HEAPU8.buffer.slice(nrm, nrm + n * 4)),
      };
    });
  }
  destroy() {
    if (this.world.ptr) this._call('slanim_avatar_destroy');
    this.world.avatars.delete(this);
  }
}

export { motionId };
