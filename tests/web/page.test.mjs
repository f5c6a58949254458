// SPDX-License-Identifier: MIT
// The page in a real browser (issue 26): Debian's chromium, headless, driven by playwright-core,
// against the built page (scripts/build-web.sh) served on loopback. Every result is compared
// with the `slanim` command's on the same files. Run by tests/web/run.sh (ctest label "web").
// Environment: SLANIM_BIN (the slanim command), SLANIM_WEB_DIR (the built page), SLANIM_SHARED
// (the reference data), SLANIM_CHROMIUM (the browser), SLANIM_WEB_OUT (scratch folder).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { serveStatic } from './static_server.mjs';

const env = (k) => { const v = process.env[k]; if (!v) throw new Error(`${k} is not set`); return v; };
const SLANIM = env('SLANIM_BIN');
const WEB = env('SLANIM_WEB_DIR');
const SHARED = env('SLANIM_SHARED');
const OUT = env('SLANIM_WEB_OUT');
const require = createRequire(path.join(env('SLANIM_NODE_MODULES'), 'x.js'));
const { chromium } = require('playwright-core');

const DANCE = path.join(SHARED, 'anims/linden/DANCE1.anim');
const BVH = path.join(SHARED, 'bvh/opencollar/kneel.bvh');

let browser, page, server;
const consoleErrors = [];

function slanim(...args) {
  return execFileSync(SLANIM, args, { encoding: 'utf8', maxBuffer: 256 << 20 });
}

/** Serves the page with `slanim serve` when the command has it, else a node static server. */
async function startServer() {
  let help = '';
  try { help = slanim('serve', '--help'); } catch { help = ''; }
  if (!help.includes('--dir')) return serveStatic(WEB);
  const proc = spawn(SLANIM, ['serve', '--dir', WEB, '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error(`slanim serve printed no URL: ${text}`)), 10000);
    proc.stdout.on('data', (d) => {
      text += d;
      const m = text.match(/http:\/\/[^\s]+/);
      if (m) { clearTimeout(timer); resolve(m[0].endsWith('/') ? m[0] : `${m[0]}/`); }
    });
    proc.on('exit', (c) => reject(new Error(`slanim serve exited (${c}): ${text}`)));
  });
  return { url, close: async () => { proc.kill('SIGTERM'); } };
}

before(async () => {
  fs.mkdirSync(OUT, { recursive: true });
  server = await startServer();
  browser = await chromium.launch({
    executablePath: env('SLANIM_CHROMIUM'),
    args: ['--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader', '--ignore-gpu-blocklist'],
  });
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, acceptDownloads: true });
  page = await context.newPage();
  page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
  page.on('pageerror', (e) => consoleErrors.push(`pageerror: ${e.message}`));
  await page.goto(server.url);
  await page.waitForFunction(() => window.slanimTest && (window.slanimTest.ready || window.slanimTest.failed),
    null, { timeout: 30000 });
  const failed = await page.evaluate(() => window.slanimTest.failed);
  assert.equal(failed, undefined, `the page did not start: ${failed}`);
});

after(async () => {
  await browser?.close();
  await server?.close();
});

/** Opens files through the page's file input; waits until the list has `count` more entries. */
async function openThroughInput(files) {
  const before_ = await page.evaluate(() => window.slanimTest.entries().length);
  await page.setInputFiles('#file-input', files);
  const n = Array.isArray(files) ? files.length : 1;
  await page.waitForFunction((k) => window.slanimTest.entries().length >= k, before_ + n);
  return page.evaluate((k) => window.slanimTest.entries().slice(k), before_);
}

/** `slanim play --format csv` as { time: Map(joint -> { p, q }) } per frame. */
function playCsv(file) {
  const frames = new Map();
  const lines = slanim('play', '--format', 'csv', file).trim().split('\n').slice(1);
  for (const l of lines) {
    const [frame, time, joint, ...v] = l.split(',');
    if (!frames.has(+frame)) frames.set(+frame, { time: +time, joints: new Map() });
    frames.get(+frame).joints.set(joint, { p: v.slice(0, 3).map(Number), q: v.slice(3, 7).map(Number) });
  }
  return frames;
}

async function download(format) {
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click(`#download button[data-format="${format}"]`)]);
  const file = path.join(OUT, `download.${format}`);
  await dl.saveAs(file);
  return { name: dl.suggestedFilename(), bytes: fs.readFileSync(file) };
}

async function selectEntry(name) {
  await page.click(`#file-list li:has(.name:text-is("${name}")) button:text("edit / download")`);
}

test('DANCE1.anim opened through the file input: info line as slanim info, poses equal slanim play at 10 times', async () => {
  const [entry] = await openThroughInput(DANCE);
  assert.equal(entry.error, null);
  const cliInfo = slanim('info', DANCE).trim().replace(DANCE, 'DANCE1.anim');
  assert.equal(entry.info, cliInfo);
  assertValidation(entry, DANCE);
  const frames = playCsv(DANCE);
  const count = frames.size;
  let compared = 0;
  for (let k = 0; k < 10; ++k) {
    const f = Math.round((k * (count - 1)) / 9);
    const { time, joints } = frames.get(f);
    const pose = await page.evaluate((t) => window.slanimTest.pose(t), time);
    const byName = new Map(pose.map((j) => [j.joint, j]));
    for (const [joint, want] of joints) {
      const got = byName.get(joint);
      assert.ok(got, `the page has no joint ${joint}`);
      for (let i = 0; i < 3; ++i) {
        assert.ok(Math.abs(got.p[i] - want.p[i]) <= 1e-5,
          `t=${time} ${joint} position ${got.p} vs slanim play ${want.p}`);
      }
      const dot = Math.abs(got.q.reduce((s, x, i) => s + x * want.q[i], 0));
      assert.ok(dot >= 1 - 1e-5, `t=${time} ${joint} rotation ${got.q} vs slanim play ${want.q}`);
      compared += 1;
    }
  }
  assert.ok(compared >= 10 * 20, `only ${compared} joint poses compared`);
});

test('a truncated .anim shows the error with its byte offset; the page keeps working', async () => {
  const bytes = fs.readFileSync(DANCE).subarray(0, 400);
  const cut = path.join(OUT, 'DANCE1_cut.anim');
  fs.writeFileSync(cut, bytes);
  const [entry] = await openThroughInput(cut);
  assert.equal(entry.playable, false);
  const text = await page.textContent(`#file-list li:last-child`);
  assert.match(text, /DANCE1_cut\.anim/);
  assert.match(text, /at byte 393/);
  assertValidation(entry, cut);
  // The card's error is the line `slanim info` prints for the file (on stderr, after "slanim info: ").
  const info = spawnSync(SLANIM, ['info', cut], { encoding: 'utf8' });
  assert.equal(entry.error, info.stderr.trim().replace(/^slanim info: /, '').replace(cut, 'DANCE1_cut.anim'));
  // Still working: DANCE1 plays, time advances, a pose is read.
  const t0 = await page.evaluate(() => { window.slanimTest.setPlaying(true); return window.slanimTest.time(); });
  await page.waitForFunction((t) => window.slanimTest.time() !== t, t0);
  const pose = await page.evaluate(() => window.slanimTest.pose(1.0));
  assert.ok(pose.length > 100);
  const entries = await page.evaluate(() => window.slanimTest.entries());
  assert.ok(entries.some((e) => e.name === 'DANCE1.anim' && e.playable));
});

/** What `slanim validate --upload FILE` prints, FILE shown as `name`: { verdict, lines (trimmed) }. */
function validateCli(file, name) {
  let text;
  try {
    text = execFileSync(SLANIM, ['validate', '--upload', file], { encoding: 'utf8' });
  } catch (e) {
    text = e.stdout;
  }
  const [verdict, ...rest] = text.split('\n');
  return { verdict: verdict.replace(file, name), lines: rest.filter((l) => l.startsWith('  ')).map((l) => l.trim()) };
}

/** Checks a card's validation against the command's. */
function assertValidation(entry, file) {
  const cli = validateCli(file, entry.name);
  assert.equal(entry.verdict, cli.verdict);
  assert.deepEqual(entry.diagnostics, cli.lines);
}

test('bad input: empty, junk, 100 MiB, unknown kind each get a message naming the file; loaded motions stay', async () => {
  const msgs = await page.evaluate(async () => {
    const big = new File([new Uint8Array(100 * 1024 * 1024)], 'huge.anim');
    const junk = new Uint8Array(5000);
    for (let i = 0; i < junk.length; ++i) junk[i] = (i * 7919 + 13) & 255;
    const files = [new File([], 'empty.anim'), new File([junk], 'junk.anim'), big,
                   new File([junk], 'junk.bvh'), new File([junk], 'junk.glb'), new File([junk], 'junk.bvj'),
                   new File([junk], 'junk.xml'), new File(['x'], 'notes.txt')];
    await window.slanimTest.openFiles(files);
    return window.slanimTest.entries().slice(-files.length).map((e) => [e.name, e.error, e.playable]);
  });
  for (const [name, error, playable] of msgs) {
    assert.equal(playable, false, name);
    assert.ok(error && error.startsWith(`${name}: `), `${name}: ${error}`);
  }
  assert.match(msgs[2][1], /64 MiB/);
  const entries = await page.evaluate(() => window.slanimTest.entries());
  assert.ok(entries.some((e) => e.name === 'DANCE1.anim' && e.playable));
  const pose = await page.evaluate(() => window.slanimTest.pose(0.5));
  assert.ok(pose.length > 100);
});

test('a file dropped on the page opens like one from the input', async () => {
  const n = await page.evaluate(() => window.slanimTest.entries().length);
  await page.evaluate(() => {
    const dt = new DataTransfer();
    dt.items.add(new File([new Uint8Array([1, 0, 0, 0])], 'dropped.anim'));
    window.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
  });
  await page.waitForFunction((k) => window.slanimTest.entries().length > k, n);
  const e = await page.evaluate(() => window.slanimTest.entries().at(-1));
  assert.equal(e.name, 'dropped.anim');
  assert.ok(e.error?.startsWith('dropped.anim: ') || e.diagnostics.some((d) => d.startsWith('error')), JSON.stringify(e));
});

test('the crowd button: 100 avatars step and draw, frame time shown; back to one avatar', async () => {
  await page.fill('#crowd-size', '100');
  await page.click('#crowd-toggle');
  assert.equal(await page.evaluate(() => window.slanimTest.crowd()), 100);
  await page.evaluate(() => window.slanimTest.setPlaying(true));
  await page.waitForFunction(() => /^100 avatar\(s\): \d+\.\d ms\/frame/.test(document.getElementById('frame-time').textContent));
  await page.click('#crowd-toggle');
  assert.equal(await page.evaluate(() => window.slanimTest.crowd()), 1);
});

test('the .glb download equals slanim convert DANCE1.anim -o x.glb', async () => {
  await selectEntry('DANCE1.anim');
  const { name, bytes } = await download('glb');
  assert.equal(name, 'DANCE1.glb');
  const want = path.join(OUT, 'DANCE1_cli.glb');
  slanim('convert', DANCE, '-o', want);
  assert.ok(bytes.equals(fs.readFileSync(want)), 'the page\'s .glb differs from slanim convert');
});

test('an edit + .anim download equals slanim edit byte for byte', async () => {
  await selectEntry('DANCE1.anim');
  await page.fill('#edit-form [name=priority]', '4');
  await page.fill('#edit-form [name=joint-priority]', 'mHand*=5');
  await page.fill('#edit-form [name=ease-in]', '0.5');
  await page.fill('#edit-form [name=ease-out]', '0.25');
  await page.selectOption('#edit-form [name=loop]', 'on');
  await page.fill('#edit-form [name=loop-in]', '10%');
  await page.fill('#edit-form [name=loop-out]', '2.5');
  await page.selectOption('#edit-form [name=hand-pose]', 'fist');
  await page.fill('#edit-form [name=emote]', 'express_smile');
  await page.check('#edit-form [name=mirror]');
  await page.click('#edit-apply');
  await page.waitForFunction(() => window.slanimTest.entries().some((e) => e.name === 'DANCE1.anim' && /prio 4/.test(e.info ?? '')));
  const { name, bytes } = await download('anim');
  assert.equal(name, 'DANCE1.anim');
  const want = path.join(OUT, 'DANCE1_cli.anim');
  slanim('edit', DANCE, '-o', want, '--priority', '4', '--joint-priority', 'mHand*=5', '--ease-in', '0.5',
    '--ease-out', '0.25', '--loop', '--loop-in', '10%', '--loop-out', '2.5', '--hand-pose', 'fist',
    '--emote', 'express_smile', '--mirror');
  assert.ok(bytes.equals(fs.readFileSync(want)), 'the page\'s edit differs from slanim edit');
});

test('after the edit, the .glb download equals slanim edit then slanim convert', async () => {
  // The page's DANCE1.anim is the edited one (its card says so): the file `slanim edit` wrote in
  // the edit test, here under the page's name (the .glb names its animation after the file).
  await selectEntry('DANCE1.anim (edited)');
  const { name, bytes } = await download('glb');
  assert.equal(name, 'DANCE1.glb');
  const dir = path.join(OUT, 'edited');
  fs.mkdirSync(dir, { recursive: true });
  const edited = path.join(dir, 'DANCE1.anim');
  fs.copyFileSync(path.join(OUT, 'DANCE1_cli.anim'), edited);
  const want = path.join(dir, 'DANCE1.glb');
  slanim('convert', edited, '-o', want);
  assert.ok(bytes.equals(fs.readFileSync(want)), 'the page\'s .glb of the edit differs from slanim edit + convert');
  assert.ok(!bytes.equals(fs.readFileSync(path.join(OUT, 'DANCE1_cli.glb'))), 'the edit is in the .glb');
});

test('BVH → .anim download equals slanim convert, and its .bvh download too', async () => {
  const [entry] = await openThroughInput(BVH);
  assert.equal(entry.error, null);
  await selectEntry('kneel.bvh');
  const { name, bytes } = await download('anim');
  assert.equal(name, 'kneel.anim');
  const want = path.join(OUT, 'kneel_cli.anim');
  slanim('convert', BVH, '-o', want);
  assert.ok(bytes.equals(fs.readFileSync(want)), 'the page\'s import differs from slanim convert');
  // And back to .bvh as `slanim convert x.anim -o x.bvh` writes it (30 frames per second).
  const bvh = await download('bvh');
  assert.equal(bvh.name, 'kneel.bvh');
  const wantBvh = path.join(OUT, 'kneel_cli.bvh');
  slanim('convert', want, '-o', wantBvh);
  assert.ok(bvh.bytes.equals(fs.readFileSync(wantBvh)), 'the page\'s .bvh differs from slanim convert');
});

/** A .glb without the source .anim slanim's exporter keeps in animations[0].extras.source_anim. */
function stripSourceAnim(glb) {
  const jsonLength = glb.readUInt32LE(12);
  const json = JSON.parse(glb.subarray(20, 20 + jsonLength).toString('utf8'));
  delete json.animations[0].extras.source_anim;
  let text = Buffer.from(JSON.stringify(json), 'utf8');
  text = Buffer.concat([text, Buffer.alloc((4 - (text.length % 4)) % 4, 0x20)]);
  const rest = glb.subarray(20 + jsonLength);  // the BIN chunk, as it was
  const header = Buffer.alloc(20);
  header.write('glTF', 0, 'latin1');
  header.writeUInt32LE(2, 4);
  header.writeUInt32LE(20 + text.length + rest.length, 8);
  header.writeUInt32LE(text.length, 12);
  header.write('JSON', 16, 'latin1');
  return Buffer.concat([header, text, rest]);
}

test('glTF → .anim download equals slanim convert (a .glb it exported, and the same without its source .anim)', async () => {
  const glb = path.join(OUT, 'dance_export.glb');
  slanim('convert', DANCE, '-o', glb);
  const stripped = path.join(OUT, 'dance_keys.glb');
  fs.writeFileSync(stripped, stripSourceAnim(fs.readFileSync(glb)));
  const entries = await openThroughInput([glb, stripped]);
  for (const e of entries) assert.equal(e.error, null, e.error);
  const results = [];
  for (const file of [glb, stripped]) {
    const base = path.basename(file, '.glb');
    await selectEntry(path.basename(file));
    const { name, bytes } = await download('anim');
    assert.equal(name, `${base}.anim`);
    const want = path.join(OUT, `${base}_cli.anim`);
    slanim('convert', file, '-o', want);
    assert.ok(bytes.equals(fs.readFileSync(want)), `the page's import of ${base}.glb differs from slanim convert`);
    results.push(bytes);
  }
  assert.ok(results[0].equals(fs.readFileSync(DANCE)), 'an exported .glb gives its source .anim back');
  assert.ok(!results[1].equals(results[0]), 'without the source .anim the keys are imported');
});

test('BVJ → .anim download equals slanim convert', async () => {
  const bvj = path.join(OUT, 'dance1.bvj');
  slanim('convert', DANCE, '-o', bvj);
  const [entry] = await openThroughInput(bvj);
  assert.equal(entry.error, null);
  await selectEntry('dance1.bvj');
  const { name, bytes } = await download('anim');
  assert.equal(name, 'dance1.anim');
  const want = path.join(OUT, 'dance1_cli.anim');
  slanim('convert', bvj, '-o', want);
  assert.ok(bytes.equals(fs.readFileSync(want)), 'the page\'s .bvj import differs from slanim convert');
});

test('the character folder: the SL body skinned, poses equal slanim play --character --mesh-out', async () => {
  const dir = path.join(SHARED, 'sl-character');
  const files = fs.readdirSync(dir).filter((f) => /^avatar_(lad|skeleton)\.xml$|\.llm$/.test(f)).map((f) => path.join(dir, f));
  await page.setInputFiles('#character-input', files);
  await page.waitForFunction(() => !/^reading/.test(window.slanimTest.status()), null, { timeout: 60000 });
  assert.equal(await page.evaluate(() => window.slanimTest.status()), 'avatar mesh loaded');
  const mesh = await page.evaluate(() => window.slanimTest.character());
  assert.ok(mesh.meshes >= 5 && mesh.vertices > 1000 && mesh.triangles > 1000, JSON.stringify(mesh));
  // Only DANCE1 plays: the page's DANCE1.anim is the edited one, which equals DANCE1_cli.anim
  // (the edit test), so the command plays that file.
  await page.evaluate(() => window.slanimTest.playOnly('DANCE1.anim'));
  const frames = new Map();
  // --mesh-out gives the played avatar its appearance (the visual params' joint offsets), as the
  // page's skinned avatar has; one mesh file (frame 0) is written.
  const lines = slanim('play', '--character', dir, '--format', 'csv', '--mesh-out', path.join(OUT, 'mesh_%f.obj'),
    '--mesh-frames', '0', path.join(OUT, 'DANCE1_cli.anim')).trim().split('\n').slice(1);
  for (const l of lines) {
    const [frame, time, joint, ...v] = l.split(',');
    if (!frames.has(+frame)) frames.set(+frame, { time: +time, joints: new Map() });
    frames.get(+frame).joints.set(joint, v.slice(0, 3).map(Number));
  }
  for (const f of [0, 30, 60]) {
    const { time, joints } = frames.get(f);
    const pose = new Map((await page.evaluate((t) => window.slanimTest.pose(t), time)).map((j) => [j.joint, j.p]));
    for (const [joint, want] of joints) {
      const got = pose.get(joint);
      assert.ok(got && got.every((x, i) => Math.abs(x - want[i]) <= 1e-5), `t=${time} ${joint} ${got} vs ${want}`);
    }
  }
});

test('overlays: joint owners with their priorities as the blend rule gives them, constraint targets', async () => {
  // DANCE1 and BLOWKISS raised to priority 4 by `slanim edit`: BLOWKISS (opened last, the
  // newest) owns its joints, DANCE1 the rest; BLOWKISS's R_HAND -> HEAD constraint is applied
  // at 0.6 s (its window: in 0.3-0.5 s, out 0.7-1.0 s).
  const dance = path.join(OUT, 'overlay_dance.anim');
  const kiss = path.join(OUT, 'overlay_kiss.anim');
  fs.copyFileSync(DANCE, dance);
  slanim('edit', path.join(SHARED, 'anims/linden/BLOWKISS.anim'), '--priority', '4', '-o', kiss);
  await openThroughInput([dance, kiss]);
  await page.evaluate(() => window.slanimTest.playOnly(['overlay_dance.anim', 'overlay_kiss.anim']));
  await page.evaluate(() => window.slanimTest.pose(0.6));
  const want = new Map();  // joint name → "FILE pP"
  for (const [file, name] of [[dance, 'overlay_dance.anim'], [kiss, 'overlay_kiss.anim']]) {
    const [info] = JSON.parse(slanim('info', '-v', '--format', 'json', file));
    for (const j of info.joints) {
      const p = j.priority < 0 ? info.base_priority : j.priority;
      const had = want.get(j.name);
      if (!had || p >= had.p) want.set(j.name, { motion: name, p });  // a tie: the newer wins
    }
  }
  const owners = await page.evaluate(() => window.slanimTest.owners());
  const jointNames = (await page.evaluate(() => window.slanimTest.pose(0.6))).map((j) => j.joint);
  const got = new Map(owners.map((o) => [jointNames[o.joint], { motion: o.motion, p: o.priority }]));
  assert.deepEqual([...got.entries()].sort(), [...want.entries()].sort());
  assert.ok([...got.values()].some((o) => o.motion === 'overlay_kiss.anim' && o.p === 4));
  assert.ok([...got.values()].some((o) => o.motion === 'overlay_dance.anim' && o.p === 2));

  const labels = await page.evaluate(() => window.slanimTest.overlayLabels(true, true));
  assert.ok(labels.includes('mHead: overlay_kiss.anim p4'), labels.join(' | '));
  assert.ok(labels.includes('mHipLeft: overlay_dance.anim p2'), labels.join(' | '));
  const targets = await page.evaluate(() => window.slanimTest.constraintTargets());
  const kissTarget = targets.find((t) => t.motion === 'overlay_kiss.anim');
  assert.ok(kissTarget, JSON.stringify(targets));
  assert.equal(kissTarget.label, 'overlay_kiss.anim #0 R_HAND -> HEAD: applied');
  assert.ok(kissTarget.weight > 0.99, `weight ${kissTarget.weight}`);
  assert.ok(labels.includes(`◎ ${kissTarget.label}`), labels.join(' | '));
  // Boxes cleared: no labels.
  assert.deepEqual(await page.evaluate(() => window.slanimTest.overlayLabels(false, false)), []);
});

test('a screenshot of the avatar is not blank; the console has no errors', async () => {
  await page.evaluate(() => window.slanimTest.pose(1.0));
  const stats = await page.evaluate(() => window.slanimTest.canvasStats());
  await page.screenshot({ path: path.join(OUT, 'page.png') });
  assert.ok(stats.differing > 0.01, `only ${(stats.differing * 100).toFixed(2)}% of the view is not background`);
  assert.ok(stats.colours > 50, `only ${stats.colours} colours in the view`);
  assert.deepEqual(consoleErrors, []);
});

test('a crash of the module (a trap, as an abort on running out of memory): reloaded with the open files, a message, poses as slanim play', async () => {
  const copy = path.join(OUT, 'crash_dance.anim');
  fs.copyFileSync(DANCE, copy);
  await openThroughInput(copy);
  const names = await page.evaluate(() => window.slanimTest.entries().map((e) => e.name));
  assert.equal(await page.evaluate(() => window.slanimTest.crashEngine()), 1);
  assert.match(await page.evaluate(() => window.slanimTest.status()),
    /^the engine stopped \(.+\) and was reloaded: the open files play again/);
  assert.deepEqual(await page.evaluate(() => window.slanimTest.entries().map((e) => e.name)), names);
  // The open file plays on the reloaded module (the generated body, default skeleton) as
  // `slanim play` plays it.
  await page.evaluate(() => window.slanimTest.playOnly('crash_dance.anim'));
  const frames = playCsv(DANCE);
  for (const f of [0, Math.floor(frames.size / 2), frames.size - 1]) {
    const { time, joints } = frames.get(f);
    const byName = new Map((await page.evaluate((t) => window.slanimTest.pose(t), time)).map((j) => [j.joint, j]));
    for (const [joint, want] of joints) {
      for (let i = 0; i < 3; ++i) {
        assert.ok(Math.abs(byName.get(joint).p[i] - want.p[i]) <= 1e-5, `t=${time} ${joint} after the reload`);
      }
    }
  }
  // The new module takes new files too.
  const [entry] = await openThroughInput(DANCE);
  assert.equal(entry.error, null);
  assert.ok(entry.playable);
});
