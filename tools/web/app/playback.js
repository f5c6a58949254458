// SPDX-License-Identifier: MIT
// Playback on the engine's world: every playable motion started together at t = 0 on each
// avatar, the world stepped (the viewer's blend rules), the poses handed to the drawing. The
// timeline time t is the world time since the motions started; seeking replays from 0 in
// steps of 1/30 s, as `slanim play` steps (so pose(t) at a frame time equals its output).

/** Seconds per replay step: `slanim play`'s default 30 frames per second. */
export const REPLAY_STEP = 1 / 30;

export class Playback {
  /** engine: app/engine.js; view: AvatarView; onTime(t, duration) after every change of t. */
  constructor(engine, view, onTime) {
    this.engine = engine;
    this.view = view;
    this.onTime = onTime;
    this.world = engine.createWorld();
    this.avatars = [];
    this.#addAvatar();
    this.motions = []; // [{ id, anim }]
    this.duration = 0;
    this.time = 0;
    this.playing = true;
    this.speed = 1;
    this.loop = true;
  }

  /**
   * Moves playback to another world (a character folder's skeleton and mesh) drawn by `view`:
   * the same motions, crowd size and time. The old world is released.
   */
  useWorld(world, view) {
    const n = this.avatars.length;
    this.world.dispose();
    this.world = world;
    this.view = view;
    this.avatars = [];
    this.#addAvatar();
    this.duration = world.setMotions(this.motions);
    this.setCrowd(n);
  }

  /**
   * After the engine was reloaded (a crash of the module, app/main.js): a new world of `engine`
   * drawn by `view`, with the same motions, crowd size and time. The old world is dropped
   * without calling into the crashed module.
   */
  replaceEngine(engine, view) {
    const n = this.avatars.length;
    this.engine = engine;
    this.world = engine.createWorld();
    this.view = view;
    this.avatars = [];
    this.#addAvatar();
    this.duration = this.world.setMotions(this.motions);
    this.setCrowd(n);
  }

  /** Plays these entries ({ id, name, anim }) from the current time (replayed from 0). */
  setMotions(entries) {
    this.motions = entries.map((e) => ({ id: e.id, name: e.name, anim: e.anim }));
    this.duration = this.world.setMotions(this.motions);
    this.seek(Math.min(this.time, this.duration));
  }

  /** Sets the crowd size (1: one avatar); crowd avatars play at slightly different speeds. */
  setCrowd(n) {
    while (this.avatars.length > n) this.world.removeAvatar(this.avatars.pop());
    while (this.avatars.length < n) this.#addAvatar();
    this.view.setCount(n);
    this.seek(this.time);
  }

  // Fresh avatars (a used one keeps the last pose of joints no motion drives, so a replay on it
  // would differ from `slanim play`), every motion started, then the first step (dt 0).
  #restart() {
    const n = this.avatars.length;
    while (this.avatars.length) this.world.removeAvatar(this.avatars.pop());
    while (this.avatars.length < n) this.#addAvatar();
    for (const a of this.avatars) this.world.startAll(a, this.motions.map((m) => m.id));
    this.world.step(0);
    this.time = 0;
  }

  // Crowd avatars play at slightly different speeds (a stable factor per index).
  #addAvatar() {
    const i = this.avatars.length;
    const a = this.world.addAvatar();
    if (i > 0) this.world.setTimeFactor(a, 0.85 + 0.3 * ((i * 0.618034) % 1));
    this.avatars.push(a);
  }

  /** Replays from 0 to t (seconds) in REPLAY_STEP steps and draws the pose. */
  seek(t) {
    t = Math.max(0, Number(t) || 0);
    this.#restart();
    const frames = t / REPLAY_STEP;
    const whole = Math.abs(frames - Math.round(frames)) < 1e-6 ? Math.round(frames) : Math.floor(frames);
    for (let f = 0; f < whole; ++f) this.world.step(REPLAY_STEP);
    const rest = t - whole * REPLAY_STEP;
    if (rest > 1e-9) this.world.step(rest);
    this.time = t;
    this.#draw();
  }

  /** Advances by a wall-clock interval (seconds) when playing; loops or stops at the end. */
  tick(wallDt) {
    if (!this.playing || !(wallDt > 0)) { this.#draw(); return; }
    const dt = Math.min(wallDt, 0.1) * this.speed;
    const end = Math.max(this.duration, 0.001);
    if (this.time + dt > end && this.duration > 0) {
      if (this.loop) { this.#restart(); this.#draw(); return; }
      this.playing = false;
    }
    this.world.step(dt);
    this.time += dt;
    this.#draw();
  }

  #draw() {
    for (let i = 0; i < this.avatars.length; ++i) this.view.update(i, this.world.transforms(this.avatars[i]));
    this.view.commit();
    this.onTime(this.time, this.duration);
  }

  /** The main avatar's model pose now: Float32Array, 7 floats per joint. */
  transforms() {
    return this.world.transforms(this.avatars[0]);
  }
}
