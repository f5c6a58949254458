// SPDX-License-Identifier: MIT
// The edit form as `slanim edit` options, in the order the form lists them (edits apply in
// order, as on the command line), and the downloads of the selected motion.
import { download } from './files.js';

/** The hand pose names `slanim edit --hand-pose` accepts, by number (0..13). */
export const HAND_POSES = ['spread', 'relaxed', 'point', 'fist', 'relaxed_l', 'point_l', 'fist_l',
  'relaxed_r', 'point_r', 'fist_r', 'salute_r', 'typing', 'peace_r', 'palm_r'];

/** The form's fields as `slanim edit` arguments: [['--priority', '4'], ['--mirror'], ...]. */
export function editOptions(form) {
  const v = (n) => form.elements[n].value.trim();
  const ops = [];
  if (v('priority') !== '') ops.push(['--priority', v('priority')]);
  if (v('joint-priority') !== '') ops.push(['--joint-priority', v('joint-priority')]);
  if (v('ease-in') !== '') ops.push(['--ease-in', v('ease-in')]);
  if (v('ease-out') !== '') ops.push(['--ease-out', v('ease-out')]);
  if (v('loop') === 'on') ops.push(['--loop']);
  if (v('loop') === 'off') ops.push(['--no-loop']);
  if (v('loop-in') !== '') ops.push(['--loop-in', v('loop-in')]);
  if (v('loop-out') !== '') ops.push(['--loop-out', v('loop-out')]);
  if (v('hand-pose') !== '') ops.push(['--hand-pose', v('hand-pose')]);
  if (form.elements.emote.value !== '') ops.push(['--emote', v('emote')]);
  if (form.elements.mirror.checked) ops.push(['--mirror']);
  return ops;
}

export function fillHandPoses(select) {
  HAND_POSES.forEach((name, i) => {
    const o = document.createElement('option');
    o.value = name;
    o.textContent = `${name} (${i})`;
    select.appendChild(o);
  });
}

function stem(name) {
  const dot = name.lastIndexOf('.');
  return dot > 0 ? name.slice(0, dot) : name;
}

/**
 * The selected entry (its .anim, edits applied) in `format` (anim, bvh, glb) as bytes and a file
 * name; the export is the command's on the downloaded .anim (`slanim convert STEM.anim -o
 * STEM.glb`); throws with the cause.
 */
export function exportEntry(engine, entry, format) {
  const bytes = engine.exportAnim(entry.anim, format, `${stem(entry.name)}.anim`);
  return { name: `${stem(entry.name)}.${format}`, bytes };
}

/** Offers the export as a download. */
export function downloadEntry(engine, entry, format) {
  const { name, bytes } = exportEntry(engine, entry, format);
  download(name, bytes, format === 'bvh' ? 'text/plain' : 'application/octet-stream');
  return name;
}
