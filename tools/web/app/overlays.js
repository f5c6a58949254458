// SPDX-License-Identifier: MIT
// Labels over the 3-D view for the main avatar: each owned joint's motion and priority (the
// blend's winner, as `slanim view`'s owner overlay) and the constraint targets of the active
// motions. Both come from the engine's world after the last step.

const MAX_LABELS = 160;
const COLOURS = ['#4db3ff', '#ff8c33', '#73e666', '#f266bf', '#b38cff', '#ffe64d', '#4df2e6', '#f25959'];
const colourIndex = new Map();
// Constraint states whose points mean something (slanim_avatar_constraint_targets).
const TARGET_STATES = new Set(['applied', 'zero_weight', 'no_position']);

/** One colour per motion name, in the order they first own a joint. */
function colourOf(motion) {
  if (!colourIndex.has(motion)) colourIndex.set(motion, colourIndex.size);
  return COLOURS[colourIndex.get(motion) % COLOURS.length];
}

export class Overlays {
  constructor(scene, app, layer) {
    this.scene = scene;
    this.app = app;
    this.layer = layer;
    this.owners = false;
    this.targets = true;
    this.pool = [];
  }

  #label(i) {
    while (this.pool.length <= i) {
      const d = document.createElement('div');
      this.layer.appendChild(d);
      this.pool.push(d);
    }
    return this.pool[i];
  }

  #place(n, x, y, z, text, colour) {
    const s = this.scene.project(x, y, z);
    if (!s || n >= MAX_LABELS) return n;
    const d = this.#label(n);
    d.style.left = `${s.x}px`;
    d.style.top = `${s.y}px`;
    d.style.color = colour;
    d.textContent = text;
    d.hidden = false;
    return n + 1;
  }

  update() {
    const { world, avatars } = this.app.playback;
    const view = this.app.view;
    const names = view.joints.names;
    this.scene.slRoot.updateMatrixWorld();
    let n = 0;
    const owners = this.owners ? world.owners(avatars[0]) : null;
    if (owners) {
      for (const o of owners) {
        const p = view.jointPosition(0, o.joint);
        if (p) n = this.#place(n, p[0], p[1], p[2], `${names[o.joint]}: ${o.motion} p${o.priority}`, colourOf(o.motion));
      }
    }
    const targets = this.targets ? world.constraintTargets(avatars[0]) : null;
    if (targets) {
      const [ox, oy] = view.offsets[0];
      for (const t of targets) {
        if (!TARGET_STATES.has(t.state ?? 'applied')) continue;  // no point this step (out of window, masked)
        n = this.#place(n, t.position[0] + ox, t.position[1] + oy, t.position[2], `◎ ${t.label}`, '#ffd866');
      }
    }
    for (let i = n; i < this.pool.length; ++i) this.pool[i].hidden = true;
  }
}
