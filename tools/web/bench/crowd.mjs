// SPDX-License-Identifier: MIT
// The page's crowd, measured (docs/web.md, "Size and speed"; scripts/web-bench.sh runs it): opens
// URL (the built page) in headless Chromium with software WebGL (SwiftShader, as the browser
// tests run it), opens DANCE1.anim through the file input, presses the crowd button with N
// avatars and plays for SECONDS after a warm-up second, at each viewport size given. Per size:
// frames drawn per second (requestAnimationFrame callbacks, no profiler attached), then over
// another SECONDS a CPU profile of the main thread: the ms a frame it was busy, split into the
// engine (slanim.wasm, its loader and slanim-api.js), the page's modules (app/: instance
// matrices, overlays), three.js, garbage collection and the rest (WebGL calls, the browser);
// the page's own frame-time average (`slanimTest.frameMs()`, an exponential average that lags
// a slow crowd by many frames); and the draw calls and triangles (lines) WebGL was given per frame (counted by wrapping
// the context's draw functions before the page loads: the page is not changed). What the main
// thread does not account for of a frame is spent outside it (SwiftShader rasterising in the
// GPU process) or waiting for it. Prints one JSON object.
// Usage: node crowd.mjs URL ANIM_PATH [AVATARS=100] [SECONDS=5] [WxH,WxH...=1280x800,640x400]
import { chromium } from 'playwright-core';

const [url, animPath, avatarsArg, secondsArg, sizesArg] = process.argv.slice(2);
const avatars = Number(avatarsArg || 100);
const seconds = Number(secondsArg || 5);
const sizes = (sizesArg || '1280x800,640x400').split(',').map((s) => s.split('x').map(Number));

/** Self time of a CPU profile's samples by part: engine, page, three.js, GC, idle, other. */
function splitProfile(profile) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parts = {};
  let total = 0;
  profile.samples.forEach((id, i) => {
    const n = byId.get(id);
    const u = n.callFrame.url || '';
    const f = n.callFrame.functionName || '';
    const part = /slanim\.wasm|slanim\.js|slanim-api\.js/.test(u) || /^js-to-wasm|^wasm-to-js/.test(f) ? 'engine'
      : /\/app\//.test(u) ? 'page'
      : /three/.test(u) ? 'three.js'
      : f === '(garbage collector)' ? 'gc'
      : f === '(idle)' ? 'idle'
      : 'other';
    const dt = profile.timeDeltas[i] || 0;
    parts[part] = (parts[part] || 0) + dt;
    total += dt;
  });
  for (const k of Object.keys(parts)) parts[k] = +(100 * parts[k] / total).toFixed(1);
  return parts;
}

// Installed before the page's scripts: counts the draw calls and primitives given to WebGL 2.
function countDraws() {
  const c = { draws: 0, triangles: 0, lines: 0 };
  window.__drawCounts = c;
  const P = WebGL2RenderingContext.prototype;
  const add = (mode, count, instances) => {
    c.draws += 1;
    if (mode === 4) c.triangles += Math.floor(count / 3) * instances;  // TRIANGLES
    else if (mode === 1) c.lines += Math.floor(count / 2) * instances;  // LINES
  };
  for (const [name, inst] of [['drawArrays', false], ['drawElements', false],
                              ['drawArraysInstanced', true], ['drawElementsInstanced', true]]) {
    const f = P[name];
    P[name] = function (mode, a, b, c2, d) {
      // drawArrays(mode, first, count[, instances]); drawElements(mode, count, type, offset[, instances])
      const elements = name.startsWith('drawElements');
      add(mode, elements ? a : b, inst ? (elements ? d : c2) : 1);
      return f.apply(this, arguments);
    };
  }
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader', '--ignore-gpu-blocklist'],
});
const out = { avatars, seconds, runs: [] };
try {
  for (const [width, height] of sizes) {
    const page = await browser.newPage({ viewport: { width, height } });
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.addInitScript(countDraws);
    await page.goto(url);
    await page.waitForFunction(() => window.slanimTest?.ready || window.slanimTest?.failed, null, { timeout: 60000 });
    await page.setInputFiles('#file-input', [animPath]);
    await page.waitForFunction(() => window.slanimTest.entries().length > 0);
    await page.fill('#crowd-size', String(avatars));
    await page.click('#crowd-toggle');
    await page.evaluate(() => window.slanimTest.setPlaying(true));
    await page.waitForTimeout(1000);  // warm-up: the JIT tiers up, the crowd's buffers grow
    const countFrames = (ms) => page.evaluate((ms) => new Promise((resolve) => {
      let frames = 0;
      const t0 = performance.now();
      const tick = (now) => {
        if (now - t0 >= ms) return resolve({ frames, ms: now - t0 });
        frames += 1;
        requestAnimationFrame(tick);
      };
      requestAnimationFrame(tick);
    }), ms);
    const before = await page.evaluate(() => ({ ...window.__drawCounts }));
    const counted = await countFrames(seconds * 1000);  // the rate, with no profiler attached
    const after = await page.evaluate(() => ({ ...window.__drawCounts }));
    const perFrame = (k) => Math.round((after[k] - before[k]) / Math.max(1, counted.frames));
    const frameMs = await page.evaluate(() => window.slanimTest.frameMs());
    const cdp = await page.context().newCDPSession(page);  // then where the main thread's time goes
    await cdp.send('Profiler.enable');
    await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
    await cdp.send('Profiler.start');
    const profiled = await countFrames(seconds * 1000);
    const { profile } = await cdp.send('Profiler.stop');
    const split = splitProfile(profile);
    // ms a frame the main thread was busy (not idle) in the profiled window, per part.
    const busyMs = {};
    for (const [k, pct] of Object.entries(split))
      if (k !== 'idle') busyMs[k] = +(pct / 100 * profiled.ms / Math.max(1, profiled.frames)).toFixed(2);
    const mainBusyMs = +Object.values(busyMs).reduce((a, b) => a + b, 0).toFixed(2);
    const r = await page.evaluate(() => ({
      crowd: window.slanimTest.crowd(),
      label: document.getElementById('frame-time').textContent,
    }));
    out.runs.push({
      viewport: `${width}x${height}`, crowd: r.crowd, fps: counted.frames * 1000 / counted.ms,
      frameIntervalMs: counted.ms / Math.max(1, counted.frames), pageFrameMsAverage: frameMs,
      mainThreadBusyMsPerFrame: mainBusyMs, mainThreadBusyMsPerFrameByPart: busyMs,
      drawCallsPerFrame: perFrame('draws'), trianglesPerFrame: perFrame('triangles'), linesPerFrame: perFrame('lines'),
      label: r.label, mainThreadProfilePercent: split, errors,
    });
    await page.close();
  }
} finally {
  await browser.close();
}
out.userAgent = 'HeadlessChrome (SwiftShader WebGL)';
console.log(JSON.stringify(out));
