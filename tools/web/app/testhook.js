// SPDX-License-Identifier: MIT
// window.slanimTest: what the browser tests (tests/web) read and drive. Nothing here changes
// what the page does for a person; it exposes the same calls the panels use.

/** Statistics of the drawn view: fraction of pixels unlike the background, distinct colours. */
function canvasStats(scene) {
  scene.render();
  const c = scene.canvas;
  const probe = document.createElement('canvas');
  probe.width = c.width;
  probe.height = c.height;
  const g = probe.getContext('2d');
  g.drawImage(c, 0, 0);
  const px = g.getImageData(0, 0, c.width, c.height).data;
  const bg = [px[0], px[1], px[2]];
  let differing = 0;
  const colours = new Set();
  for (let i = 0; i < px.length; i += 4) {
    const d = Math.abs(px[i] - bg[0]) + Math.abs(px[i + 1] - bg[1]) + Math.abs(px[i + 2] - bg[2]);
    if (d > 24) differing += 1;
    if (colours.size < 4096) colours.add((px[i] << 16) | (px[i + 1] << 8) | px[i + 2]);
  }
  return { width: c.width, height: c.height, differing: differing / (px.length / 4), colours: colours.size };
}

export function installTestHook(app) {
  const pb = app.playback;
  window.slanimTest = {
    ready: true,
    version: app.engine.version,
    /** Opens File objects through the same path as the file input and a drop. */
    openFiles: async (files) => (await app.openFiles(files)).map((e) => e.name),
    /** The file list: name, info line, report lines, error. */
    entries: () => app.list.entries.map((e) => ({ name: e.name, info: e.info, verdict: e.verdict, diagnostics: e.diagnostics,
                                                  error: e.error, playable: !!e.anim })),
    /**
     * The main avatar's model pose at timeline time t (seconds; playback pauses): per joint its
     * name, position [x, y, z] (metres, avatar-root frame) and rotation [x, y, z, w].
     */
    pose: (t) => {
      pb.playing = false;
      app.syncPlayButton();
      pb.seek(t);
      const tr = pb.transforms();
      return app.view.joints.names.map((name, j) => ({
        joint: name,
        p: Array.from(tr.subarray(j * 7, j * 7 + 3)),
        q: Array.from(tr.subarray(j * 7 + 3, j * 7 + 7)),
      }));
    },
    /** Plays only the files named `name` or in the array `name` (the others' "plays" boxes cleared, as a person would). */
    playOnly: (name) => {
      const names = Array.isArray(name) ? name : [name];  // several: started in the list's order
      for (const e of app.list.entries) e.enabled = names.includes(e.name);
      app.list.render();
      app.list.onChange();
    },
    setPlaying: (on) => { pb.playing = on; app.syncPlayButton(); },
    time: () => pb.time,
    duration: () => pb.duration,
    crowd: () => pb.avatars.length,
    frameMs: () => app.frameMs,
    canvasStats: () => canvasStats(app.scene),
    status: () => document.getElementById('status').textContent,
    /**
     * Crashes the module as a failed allocation or a wild pointer would: a C call that reads
     * outside the wasm memory traps (a WebAssembly.RuntimeError), through the path a UI action
     * takes. Resolves when the page has reloaded the engine; returns the number of reloads.
     */
    crashEngine: async () => {
      await app.guarded('test', () => app.engine.api.M._slanim_world_step(0x7ffffff0, 0))();
      while (app.reloading) await new Promise((r) => setTimeout(r, 20));
      return app.reloads;
    },
    /** The overlays' data for the main avatar after the last step (what the labels show). */
    owners: () => pb.world.owners(pb.avatars[0]),
    constraintTargets: () => pb.world.constraintTargets(pb.avatars[0]),
    /** Ticks or clears the overlay boxes as a person would; returns the labels then shown. */
    overlayLabels: (owners, targets) => {
      for (const [id, on] of [['show-owners', owners], ['show-targets', targets]]) {
        const box = document.getElementById(id);
        if (box.disabled) throw new Error(`${id} is disabled: ${box.parentElement.title}`);
        if (box.checked !== on) box.click();
      }
      app.overlays.update();
      return Array.from(document.querySelectorAll('#overlay-labels div')).filter((d) => !d.hidden).map((d) => d.textContent);
    },
    /** The character mesh drawn: { meshes, vertices, triangles } (zeros: the generated body). */
    character: () => {
      const parts = app.mesh?.parts ?? [];
      return { meshes: parts.length, vertices: parts.reduce((n, p) => n + p.positions.length / 3, 0),
               triangles: parts.reduce((n, p) => n + p.geometry.index.count / 3, 0) };
    },
  };
}
