// SPDX-License-Identifier: MIT
// The page's start: loads the engine (the WebAssembly C API), builds the scene, and wires the
// panels: files, edits and downloads, avatar, timeline, overlays, crowd. Errors a file causes are
// shown beside it; an error of the page itself goes to the status line, and the page keeps going.
import { loadEngine } from './engine.js';
import { Scene } from './scene.js';
import { AvatarView } from './avatar_view.js';
import { MotionList } from './motions.js';
import { Playback } from './playback.js';
import { droppedFiles } from './files.js';
import { editOptions, fillHandPoses, downloadEntry } from './edits.js';
import { Overlays } from './overlays.js';
import { installTestHook } from './testhook.js';
import { CharacterMesh } from './character_mesh.js';

const $ = (id) => document.getElementById(id);

function setStatus(text, isError = false) {
  const s = $('status');
  s.textContent = text;
  s.classList.toggle('error', isError);
}

let currentApp = null;  // set by start(): the reload after a crash of the module needs it

/**
 * True for a failure of the WebAssembly module itself (a trap, or an abort such as running out
 * of memory where no C++ handler catches it): the module cannot be trusted afterwards. Errors
 * the C API reports (SlanimError: bad files, out of memory it caught) are not crashes.
 */
function isEngineCrash(e) {
  return e instanceof WebAssembly.RuntimeError;
}

/** Runs a UI action; an exception becomes the status line's message, never a blank page. */
function guarded(what, fn) {
  return async (...args) => {
    try {
      return await fn(...args);
    } catch (e) {
      if (isEngineCrash(e) && currentApp) { reloadEngine(currentApp, e); return undefined; }
      setStatus(`${what}: ${e?.message ?? e}`, true);
      return undefined;
    }
  };
}

/**
 * After a crash of the module: a fresh module, the open files' motions in a new world with the
 * same crowd size and time, on the generated body (the character folder's files were in the old
 * module's memory: they must be opened again). The status line says what happened. Never throws.
 */
async function reloadEngine(app, crash) {
  if (app.reloading) return;
  app.reloading = true;
  const cause = crash?.message ?? String(crash);
  setStatus(`the engine stopped (${cause}); reloading it with the open files…`, true);
  try {
    const engine = await loadEngine();
    app.engine = engine;
    app.list.engine = engine;
    const old = app.view;
    app.view = new AvatarView(app.scene.slRoot, engine.skeleton);
    old.dispose();
    app.mesh?.dispose();
    app.mesh = null;
    $('character-state').textContent = 'generated body';
    app.playback.replaceEngine(engine, app.view);
    showBody(app);
    app.reloads += 1;
    setStatus(`the engine stopped (${cause}) and was reloaded: the open files play again`
      + ' (a character folder must be opened again)', true);
  } catch (e) {
    setStatus(`the engine stopped (${cause}) and could not be reloaded (${e?.message ?? e}): reload the page`, true);
  } finally {
    app.reloading = false;
  }
}

async function start() {
  setStatus('loading the engine…');
  const engine = await loadEngine();
  $('version').textContent = `engine ${engine.version}`;
  const scene = new Scene($('view'));
  const app = { engine, scene, frameMs: 0, reloading: false, reloads: 0 };
  currentApp = app;
  app.guarded = guarded;
  app.view = new AvatarView(scene.slRoot, engine.skeleton);
  app.playback = new Playback(engine, app.view, (t, d) => showTime(t, d));
  app.overlays = new Overlays(scene, app, $('overlay-labels'));
  app.list = new MotionList(engine, $('file-list'), (o) => onMotionsChanged(app, o));
  wirePanels(app);
  wireTimeline(app);
  wireViewTools(app);
  installTestHook(app);
  app.playback.seek(0);
  loop(app);
  setStatus('ready: open or drop motion files');
}

function onMotionsChanged(app, options = {}) {
  const sel = app.list.selected;
  $('edit-target').textContent = sel ? sel.name : '(open a motion)';
  for (const b of document.querySelectorAll('#download button, #edit-apply')) b.disabled = !sel?.anim;
  if (options.selectionOnly) return;
  try {
    app.playback.setMotions(app.list.playable());
    const refused = app.playback.world.refused ?? [];
    if (refused.length) setStatus(`not played: ${refused.map((r) => r.message).join('; ')}`, true);
  } catch (e) {
    setStatus(`playback: ${e?.message ?? e}`, true);
  }
}

async function openFiles(app, files) {
  if (!files.length) return [];
  setStatus(`opening ${files.length} file(s)…`);
  const added = await app.list.open(files);
  const bad = added.filter((e) => e.error || e.diagnostics.some((d) => d.startsWith('error')));
  setStatus(bad.length ? `${bad.length} of ${added.length} file(s) with errors (see the list)`
                       : `opened ${added.length} file(s)`, bad.length > 0);
  return added;
}

function wirePanels(app) {
  app.openFiles = (files) => openFiles(app, Array.from(files));
  $('file-input').addEventListener('change', guarded('open', async (ev) => {
    const files = Array.from(ev.target.files);
    ev.target.value = '';
    await app.openFiles(files);
  }));
  const veil = $('drop-veil');
  window.addEventListener('dragover', (ev) => { ev.preventDefault(); veil.hidden = false; });
  window.addEventListener('dragleave', (ev) => { if (!ev.relatedTarget) veil.hidden = true; });
  window.addEventListener('drop', guarded('drop', async (ev) => {
    ev.preventDefault();
    veil.hidden = true;
    await app.openFiles(droppedFiles(ev.dataTransfer));
  }));
  fillHandPoses($('hand-pose'));
  $('edit-form').addEventListener('submit', guarded('edit', (ev) => {
    ev.preventDefault();
    const entry = app.list.selected;
    if (!entry?.anim) return;
    const ops = editOptions(ev.target);
    if (!ops.length) { setStatus('no edit chosen'); return; }
    const r = app.engine.edit(entry.anim, ops);
    if (r.error) { setStatus(`${entry.name}: ${r.error}`, true); return; }
    app.list.replaceAnim(entry, r.anim);
    setStatus(`${entry.name}: ${ops.map((o) => o.join(' ')).join(' ')}`);
  }));
  for (const b of document.querySelectorAll('#download button')) {
    b.addEventListener('click', guarded('download', () => {
      const entry = app.list.selected;
      if (entry?.anim) setStatus(`downloaded ${downloadEntry(app.engine, entry, b.dataset.format)}`);
    }));
  }
  $('character-input').addEventListener('change', guarded('character', async (ev) => {
    const files = Array.from(ev.target.files);
    ev.target.value = '';
    await loadCharacter(app, files);
  }));
  onMotionsChanged(app, { selectionOnly: true });
}

async function loadCharacter(app, files) {
  setStatus(`reading ${files.length} character file(s)…`);
  const state = $('character-state');
  const r = await app.engine.loadCharacter(files);
  if (r.error) { state.textContent = `generated body (${r.error})`; setStatus(r.error, true); return; }
  const old = app.view;
  app.view = new AvatarView(app.scene.slRoot, r.joints);
  old.dispose();
  app.playback.useWorld(r.world, app.view);
  app.mesh?.dispose();
  app.mesh = new CharacterMesh(r.world, app.playback.avatars[0], app.scene.slRoot);
  showBody(app);
  state.textContent = r.description;
  setStatus('avatar mesh loaded');
}

function showTime(t, d) {
  $('time-label').textContent = `${t.toFixed(3)} s`;
  const scrub = $('scrub');
  scrub.max = String(Math.max(d, 0.001));
  if (document.activeElement !== scrub) scrub.value = String(t);
}

function wireTimeline(app) {
  const pb = app.playback;
  const button = $('play-pause');
  const sync = () => { button.textContent = pb.playing ? '❚❚' : '▶'; button.ariaLabel = pb.playing ? 'pause' : 'play'; };
  app.syncPlayButton = sync;
  button.addEventListener('click', () => {
    if (!pb.playing && pb.time >= pb.duration) pb.seek(0);
    pb.playing = !pb.playing;
    sync();
  });
  $('scrub').addEventListener('input', guarded('scrub', (ev) => {
    pb.playing = false;
    sync();
    pb.seek(Number(ev.target.value));
  }));
  $('speed').addEventListener('change', (ev) => { pb.speed = Number(ev.target.value); });
  $('loop').addEventListener('change', (ev) => { pb.loop = ev.target.checked; });
}

function wireViewTools(app) {
  $('show-body').addEventListener('change', () => showBody(app));
  $('show-skeleton').addEventListener('change', (ev) => app.view.setSkeletonVisible(ev.target.checked));
  $('show-owners').addEventListener('change', (ev) => { app.overlays.owners = ev.target.checked; });
  $('show-targets').addEventListener('change', (ev) => { app.overlays.targets = ev.target.checked; });
  // An overlay whose call the module lacks is shown disabled, with the reason (tools/web/NEEDS.md).
  const { world, avatars } = app.playback;
  for (const [id, has] of [['show-owners', world.owners(avatars[0]) !== null],
                           ['show-targets', world.constraintTargets(avatars[0]) !== null]]) {
    if (has) continue;
    const box = $(id);
    box.checked = false;
    box.disabled = true;
    box.parentElement.title = 'this build of slanim-api.js cannot report it yet';
    if (id === 'show-targets') app.overlays.targets = false;
  }
  $('frame-joint').addEventListener('change', (ev) => frameJoint(app, ev.target.value));
  $('crowd-toggle').addEventListener('click', guarded('crowd', () => {
    const n = app.playback.avatars.length > 1 ? 1 : Math.max(1, Math.min(400, Number($('crowd-size').value) || 1));
    app.playback.setCrowd(n);
    $('crowd-toggle').textContent = n > 1 ? 'One avatar' : 'Crowd';
    frameJoint(app, n > 1 ? 'crowd' : $('frame-joint').value);
  }));
}

/** The body: the character's mesh when one is loaded (the main avatar), else the generated one. */
function showBody(app) {
  const on = $('show-body').checked;
  if (app.mesh) app.mesh.visible = on;
  app.view.setBodyVisible(on && !app.mesh);
  app.view.setSkeletonVisible($('show-skeleton').checked);
}

/**
 * Points the camera at a joint of the main avatar (face, hands...), the avatar, or the crowd;
 * a chosen joint is then followed (the camera moves with it, orbiting stays free).
 */
export function frameJoint(app, name) {
  const { scene, view } = app;
  app.follow = null;
  if (name === 'crowd') {
    const side = Math.ceil(Math.sqrt(view.count)) * 1.2;
    scene.frame(-side / 2, 0, 0, side * 1.6 + 2);
    return;
  }
  const j = name ? view.joints.names.indexOf(name) : -1;
  const p = j >= 0 ? view.jointPosition(0, j) : null;
  if (p) {
    scene.frame(p[0], p[1], p[2], name === 'mHead' ? 0.9 : 0.6);
    app.follow = { joint: j, at: p };
  }
  else {
    const o = view.offsets[0];
    scene.frame(o[0], o[1], 0, 3.3);
  }
}

// Keeps the followed joint where the camera framed it.
function follow(app) {
  const f = app.follow;
  const p = f ? app.view.jointPosition(0, f.joint) : null;
  if (!p) return;
  app.scene.slRoot.updateMatrixWorld();
  const d = app.scene.toWorld(...p).sub(app.scene.toWorld(...f.at));
  app.scene.camera.position.add(d);
  app.scene.controls.target.add(d);
  f.at = p;
}

function loop(app) {
  let last = performance.now();
  let avg = 0;
  let avgDt = 0;
  const label = $('frame-time');
  const frame = (now) => {
    const dt = (now - last) / 1000;
    last = now;
    if (app.reloading) { requestAnimationFrame(frame); return; }
    try {
      const t0 = performance.now();
      app.playback.tick(dt);
      app.mesh?.update(app.playback.avatars[0]);
      follow(app);
      app.overlays.update();
      app.scene.render();
      const ms = performance.now() - t0;
      avg = avg ? avg * 0.95 + ms * 0.05 : ms;
      avgDt = avgDt ? avgDt * 0.95 + dt * 0.05 : dt;
      app.frameMs = avg;
      label.textContent = `${app.playback.avatars.length} avatar(s): ${avg.toFixed(1)} ms/frame`
        + ` (step + draw calls), ${avgDt > 0 ? (1 / avgDt).toFixed(0) : '–'} fps`;
    } catch (e) {
      if (isEngineCrash(e)) reloadEngine(app, e);
      else setStatus(`frame: ${e?.message ?? e}`, true);
    }
    requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
}

start().catch((e) => {
  setStatus(`the page could not start: ${e?.message ?? e}`, true);
  window.slanimTest = { failed: String(e?.message ?? e) };
});
