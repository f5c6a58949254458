// SPDX-License-Identifier: MIT
// The engine as the page uses it, over slanim-api.js (the JS module over the C API compiled to
// WebAssembly, beside this folder in the built page; docs/web.md, "The JS module"). Every call
// here is one or a few `slanim_*` C functions through that module; nothing is computed twice.
// Files: inspect() gives the card of a file (the `slanim info` line, the `slanim validate
// --upload` lines, the .anim bytes an import makes); edit() and exportAnim() are `slanim edit`
// and `slanim convert`; createWorld() is the playback world of app/playback.js.
import { loadSlanim } from '../slanim-api.js';

/** Loads slanim.wasm (beside slanim-api.js) and returns the Engine. */
export async function loadEngine() {
  const api = await loadSlanim({ locateFile: (name) => new URL(`../${name}`, import.meta.url).href });
  return new Engine(api);
}

/** An error's message, cut to 400 characters (a reader may quote a long run of junk bytes). */
function messageOf(e) {
  const m = e?.detail ?? e?.message ?? String(e);
  return m.length > 400 ? `${m.slice(0, 400)}…` : m;
}

/** A message without the C function's name and the file name in front (the list adds the name). */
function withoutPrefix(message, name) {
  let m = message.replace(/^slanim_[a-z0-9_]+: /, '');
  if (m.startsWith(`${name}: `)) m = m.slice(name.length + 2);
  return m;
}

/** A missing call of the module: the feature says so instead of failing obscurely. */
function lacking(what) {
  return new Error(`this build of slanim-api.js has no ${what}`);
}

class Engine {
  constructor(api) {
    this.api = api;
    this.version = api.version;
    const s = api.skeleton;
    this.skeleton = { names: s.names, parents: s.parents, boneCount: s.boneCount };
  }

  /** .anim bytes of a file of `kind` (anim, bvh, bvj, glb, gltf, poser), as `slanim convert` imports it. */
  #toAnim(name, kind, bytes) {
    const api = this.api;
    if (kind === 'anim') return bytes;
    if (kind === 'bvh') return api.bvhToAnim(bytes);  // the file's bytes, unchanged
    if (kind === 'poser') return api.poserToAnim(new TextDecoder().decode(bytes));
    if (kind === 'bvj') return api.bvjToAnim(new TextDecoder().decode(bytes));
    if (!api.importMotion) throw lacking(`import of .${kind} files`);
    return api.importMotion(bytes, kind, name);
  }

  /**
   * A file's card: { anim: Uint8Array|null (playable .anim), info: the `slanim info` line with
   * `name` or null, verdict: the first line of `slanim validate --upload` ("NAME: valid (0
   * error(s), 0 warning(s))"), diagnostics: its other lines, error: the message (without the
   * name) or null }. Never throws.
   */
  inspect(name, kind, bytes) {
    const out = { anim: null, info: null, verdict: null, diagnostics: [], error: null };
    let anim;
    try {
      anim = this.#toAnim(name, kind, bytes);
    } catch (e) {
      out.error = withoutPrefix(messageOf(e), name);
      return out;
    }
    try {
      // What `slanim validate --upload NAME` prints: the verdict line, then one line per finding.
      const [verdict, ...lines] = this.api.validateText(anim, name, { upload: true }).split('\n');
      out.verdict = verdict;
      out.diagnostics = lines.filter((l) => l.trim() !== '').map((l) => l.trim());
    } catch (e) {
      out.error = withoutPrefix(messageOf(e), name);
      return out;
    }
    try {
      // The `slanim info` line; for a file the viewer refuses, the error line `info` prints.
      out.info = this.api.infoLine(anim, name);
    } catch (e) {
      out.error = withoutPrefix(messageOf(e), name);
      return out;
    }
    try {
      const motion = this.api.openMotion(anim);
      motion.destroy();
      out.anim = anim;
    } catch (e) {
      out.error = withoutPrefix(messageOf(e), name);
    }
    return out;
  }

  /** `slanim edit` with options [['--priority', '4'], ...] on .anim bytes: { anim } or { error }. */
  edit(anim, options) {
    try {
      return { anim: this.api.edit(anim, options.map((o) => o.join(' '))) };
    } catch (e) {
      return { error: messageOf(e) };
    }
  }

  /**
   * .anim bytes as `format` (anim, bvh, glb) as `slanim convert NAME -o OUT` writes them for a
   * file named `name` (the .anim's name: the .glb's animation is named after its stem); throws
   * with the cause.
   */
  exportAnim(anim, format, name) {
    if (format === 'anim') return anim;
    if (format === 'bvh') return new TextEncoder().encode(this.api.animToBvh(anim, 30));
    if (format === 'glb') return this.api.animToGlb(anim, name);
    throw new Error(`unknown format ${format}`);
  }

  /**
   * A character folder's files (File objects: avatar_lad.xml, avatar_skeleton.xml, *.llm):
   * { world (a PageWorld of that skeleton, its first avatar skinned), joints, description } or
   * { error }.
   */
  async loadCharacter(files) {
    let world = null;
    try {
      const named = {};
      for (const f of files) named[f.name] = new Uint8Array(await f.arrayBuffer());
      const skeleton = this.api.loadCharacter(named);
      world = new PageWorld(this.api, skeleton);
      // The appearance is read on first use: try it on a throwaway avatar so that a missing or
      // malformed avatar_lad.xml / .llm is reported here, and the current world stays.
      world.probeAppearance();
      const llm = files.filter((f) => f.name.endsWith('.llm')).length;
      return {
        world,
        joints: { names: skeleton.names, parents: skeleton.parents, boneCount: skeleton.boneCount },
        description: `character folder: ${files.length} file(s) (${llm} .llm), ${skeleton.boneCount} bones, skinned mesh`,
      };
    } catch (e) {
      world?.dispose();
      return { error: messageOf(e) };
    }
  }

  /** The playback world (default skeleton, generated body). */
  createWorld() {
    return new PageWorld(this.api, null);
  }
}

/**
 * A world with its motions by page id, as app/playback.js drives it. With a character, avatar 0
 * is skinned (its mesh drawn); the crowd's others are not (their bodies are generated).
 */
class PageWorld {
  constructor(api, character) {
    this.api = api;
    this.character = character;
    this.world = api.createWorld();
    this.loaded = [];
    this.names = new Map();  // String(id) → the file name, for the overlays
  }

  #nameOf(id) { return this.names.get(id) ?? id; }

  /**
   * Loads motions [{ id, anim }] in place of the previous ones; returns the longest duration.
   * A motion the world refuses is left out (this.refused: [{ id, message }]); the others load.
   */
  setMotions(motions) {
    for (const a of this.world.avatars) a.stopAll(true);
    for (const id of this.loaded) this.world.unloadMotion(String(id));
    this.loaded = [];
    this.refused = [];
    let duration = 0;
    for (const m of motions) {
      try {
        this.world.loadMotion(String(m.id), m.anim);
        this.names.set(String(m.id), m.name ?? String(m.id));
        const motion = this.api.openMotion(m.anim);
        duration = Math.max(duration, motion.info.duration);
        motion.destroy();
        this.loaded.push(m.id);
      } catch (e) {
        this.refused.push({ id: m.id, message: messageOf(e) });
      }
    }
    return duration;
  }

  addAvatar() {
    if (!this.character) return this.world.createAvatar();
    const first = this.world.avatars.size === 0;
    const a = this.world.createAvatar(this.character);
    if (first) a.enableAppearance(true);
    return a;
  }

  /** Throws when the character's appearance (avatar_lad.xml and its meshes) cannot be loaded. */
  probeAppearance() {
    const a = this.world.createAvatar(this.character);
    try {
      a.enableAppearance(true);
    } finally {
      a.destroy();
    }
  }

  removeAvatar(avatar) { avatar.destroy(); }
  setTimeFactor(avatar, f) { avatar.setTimeFactor(f); }

  /** Stops everything at once and starts `ids` at t = 0, in order. */
  startAll(avatar, ids) {
    avatar.stopAll(true);
    for (const id of ids) if (this.loaded.includes(id)) avatar.start(String(id));
  }

  step(dt) { this.world.step(dt); }
  transforms(avatar) { return avatar.transforms(); }

  /**
   * Joint owners after the last step: [{ joint, motion, priority }] (the blend's winner per
   * joint, as `slanim view`'s overlay), or null when the module has no such call.
   */
  owners(avatar) {
    if (!avatar.owners) return null;
    return avatar.owners().map((o) => ({ ...o, motion: this.#nameOf(o.motion) }));
  }

  /**
   * Constraint targets of the motions of the last step: [{ position: [x, y, z] (the target,
   * avatar-root frame), label: "FILE #k SOURCE -> TARGET: state", state, weight, … }], or null.
   */
  constraintTargets(avatar) {
    if (!avatar.constraintTargets) return null;
    return avatar.constraintTargets().map((t) => {
      const motion = this.#nameOf(t.motion);
      return { ...t, motion, label: motion + t.label.slice(t.motion.length) };
    });
  }

  /** The skinned meshes: [{ index, type, vertexCount, triangles: Uint32Array }]. */
  meshes(avatar) {
    return avatar.meshes().map((m, index) => ({ index, type: m.type, vertexCount: m.vertexCount,
                                                triangles: avatar.meshTriangles(index) }));
  }

  /** Mesh k's skinned vertices after the last step, copied into `positions` and `normals`. */
  meshVertices(avatar, k, positions, normals) {
    const v = avatar.meshVertices(k);
    positions.set(v.positions.subarray(0, positions.length));
    normals.set(v.normals.subarray(0, normals.length));
  }

  dispose() {
    this.world.destroy();
  }
}
