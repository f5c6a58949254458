// SPDX-License-Identifier: MIT
// The opened files: each one's `slanim info` line and validation report, its .anim bytes (an
// import from .bvh/.bvj/.glb/.gltf/poser .xml as `slanim convert` makes it), and the list in
// the side panel. A file that fails adds an entry with its message; entries already loaded stay.
import { FileProblem, motionKind, readBytes } from './files.js';

let nextId = 1;

/** The list of opened files and its panel. onChange() runs after every change. */
export class MotionList {
  constructor(engine, listElement, onChange) {
    this.engine = engine;
    this.element = listElement;
    this.onChange = onChange;
    this.entries = []; // { id, name, kind, anim, info, diagnostics, error, enabled, edited }
    this.selected = null;
  }

  /** Entries whose .anim plays (valid for playback), in the order they were opened. */
  playable() {
    return this.entries.filter((e) => e.anim && e.enabled);
  }

  /** Opens files (File objects), one after another; never throws. Returns the new entries. */
  async open(files) {
    const added = [];
    for (const file of files) {
      const entry = await this.#openOne(file);
      this.entries.push(entry);
      added.push(entry);
      if (entry.anim && !this.selected) this.selected = entry;
      this.render();
    }
    this.onChange();
    return added;
  }

  async #openOne(file) {
    const entry = { id: nextId++, name: file.name, kind: motionKind(file.name), anim: null,
                    info: null, verdict: null, diagnostics: [], error: null, enabled: true, edited: false };
    try {
      if (!entry.kind) {
        throw new FileProblem(file.name,
          'not a motion file: open .anim, .bvh, .bvj, .glb, .gltf or poser .xml');
      }
      const bytes = await readBytes(file);
      const r = this.engine.inspect(file.name, entry.kind, bytes);
      Object.assign(entry, { anim: r.anim, info: r.info, verdict: r.verdict, diagnostics: r.diagnostics,
                             error: r.error ? `${file.name}: ${r.error}` : null });
    } catch (e) {
      entry.error = e instanceof FileProblem ? e.message : `${file.name}: ${e?.message ?? e}`;
    }
    return entry;
  }

  /** Replaces an entry's .anim (after an edit) and re-reads its info and report. */
  replaceAnim(entry, anim) {
    const r = this.engine.inspect(entry.name, 'anim', anim);
    Object.assign(entry, { anim: r.anim, info: r.info, verdict: r.verdict, diagnostics: r.diagnostics,
                           error: r.error ? `${entry.name}: ${r.error}` : null, edited: true });
    this.render();
    this.onChange();
  }

  remove(entry) {
    this.entries = this.entries.filter((e) => e !== entry);
    if (this.selected === entry) this.selected = this.entries.find((e) => e.anim) ?? null;
    this.render();
    this.onChange();
  }

  select(entry) {
    this.selected = entry;
    this.render();
    this.onChange({ selectionOnly: true });
  }

  render() {
    const ul = this.element;
    ul.replaceChildren();
    for (const e of this.entries) ul.appendChild(this.#item(e));
  }

  #item(e) {
    const li = document.createElement('li');
    li.dataset.id = e.id;
    const invalid = !!e.error || e.diagnostics.some((d) => d.startsWith('error'));
    li.classList.toggle('invalid', invalid);
    li.classList.toggle('selected', e === this.selected);
    const name = document.createElement('div');
    name.className = 'name';
    name.textContent = e.name + (e.edited ? ' (edited)' : '');
    li.appendChild(name);
    if (e.info) li.appendChild(line('info', e.info));
    if (e.error) li.appendChild(line('diag error', e.error));
    if (e.verdict) li.appendChild(line(`verdict ${e.verdict.includes(': valid') ? 'ok' : 'error'}`, e.verdict));
    for (const d of e.diagnostics) {
      li.appendChild(line(`diag ${d.startsWith('error') ? 'error' : 'warning'}`, d));
    }
    const row = document.createElement('div');
    row.className = 'row';
    if (e.anim) {
      const play = document.createElement('label');
      const box = document.createElement('input');
      box.type = 'checkbox';
      box.checked = e.enabled;
      box.addEventListener('change', () => { e.enabled = box.checked; this.onChange(); });
      play.append(box, ' plays');
      const sel = document.createElement('button');
      sel.type = 'button';
      sel.textContent = 'edit / download';
      sel.addEventListener('click', () => this.select(e));
      row.append(play, sel);
    }
    const rm = document.createElement('button');
    rm.type = 'button';
    rm.textContent = 'remove';
    rm.addEventListener('click', () => this.remove(e));
    row.appendChild(rm);
    li.appendChild(row);
    return li;
  }
}

function line(cls, text) {
  const p = document.createElement('p');
  p.className = cls;
  p.textContent = text;
  return p;
}
