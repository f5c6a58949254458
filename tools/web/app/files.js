// SPDX-License-Identifier: MIT
// Reading the files a user opens or drops: the size limit (checked before any byte is read),
// the kind from the file name, and a message that names the file and the cause on failure.

/** Files larger than this (bytes) are refused before reading: 64 MiB. */
export const MAX_FILE_BYTES = 64 * 1024 * 1024;

const KINDS = { anim: 'anim', bvh: 'bvh', bvj: 'bvj', glb: 'glb', gltf: 'gltf', xml: 'poser' };

/** The motion kind of a file name: anim, bvh, bvj, glb, gltf, poser (.xml) or null. */
export function motionKind(name) {
  const dot = name.lastIndexOf('.');
  if (dot < 0) return null;
  return KINDS[name.slice(dot + 1).toLowerCase()] ?? null;
}

/** A problem with one file, its message naming the file. */
export class FileProblem extends Error {
  constructor(name, cause) {
    super(`${name}: ${cause}`);
    this.fileName = name;
    this.cause_ = cause;
  }
}

function mib(bytes) {
  return (bytes / (1024 * 1024)).toFixed(1);
}

/**
 * The bytes of a File (Uint8Array). Throws FileProblem when it is over MAX_FILE_BYTES (without
 * reading it), empty, or cannot be read.
 */
export async function readBytes(file) {
  if (file.size > MAX_FILE_BYTES) {
    throw new FileProblem(file.name,
      `refused: ${mib(file.size)} MiB is over the 64 MiB limit (not read)`);
  }
  if (file.size === 0) throw new FileProblem(file.name, 'the file is empty (0 bytes)');
  let buffer;
  try {
    buffer = await file.arrayBuffer();
  } catch (e) {
    throw new FileProblem(file.name, `cannot be read: ${e && e.message ? e.message : e}`);
  }
  return new Uint8Array(buffer);
}

/** The files of a drop event (DataTransfer), folders skipped. */
export function droppedFiles(dataTransfer) {
  return Array.from(dataTransfer?.files ?? []);
}

/** Offers bytes to the user as a download named `name`. */
export function download(name, bytes, type = 'application/octet-stream') {
  const url = URL.createObjectURL(new Blob([bytes], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
