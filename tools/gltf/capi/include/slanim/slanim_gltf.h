/* SPDX-License-Identifier: MIT */
/*
 * slanim_gltf.h: glTF through the C API, in an optional library of its own (slanim::gltf_capi,
 * tools/gltf/capi) so that libslanim.so does not depend on TinyGLTF. The WebAssembly build
 * links it into slanim.wasm (the page's .glb/.gltf import and .glb download). Same conventions
 * as slanim.h (status codes, slanim_last_error(), caller buffers with `capacity`/`needed`).
 */
#ifndef SLANIM_GLTF_H
#define SLANIM_GLTF_H

#include "slanim/slanim.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * A glTF 2.0 animation (.glb bytes, or .gltf JSON with its buffers embedded as data URIs) →
 * .anim bytes, as `slanim convert in.glb -o out.anim` writes them with the default options:
 * animation 0, mPelvis's position relative to its rest, key times moved to start at 0 s, on the
 * embedded default skeleton; a file slanim exported from an .anim gives that .anim back
 * unchanged. Errors: NULL_ARGUMENT; INVALID_DATA (not glTF, no animation, a buffer in an
 * external file, a result that would not pass an upload: the message says which, with the JSON
 * path); BUFFER_TOO_SMALL. Thread-safe.
 */
SLANIM_API slanim_status slanim_gltf_to_anim(const uint8_t* bytes, size_t size, uint8_t* anim, size_t capacity,
                                             size_t* needed);

/**
 * .anim bytes → a binary glTF 2.0 file (.glb), byte for byte what `slanim convert NAME -o
 * out.glb` writes (no --character) for a file named `name` holding these bytes: the embedded
 * default skeleton as nodes + one skin at its rest pose (glTF axes: +Y up, +Z forward; metres),
 * no mesh, the motion as one animation named after `name` without its extension (LINEAR keys at
 * the motion's key times plus keys sampling the viewer's slerp), its header in the animation's
 * extras and the .anim bytes themselves as base64 in extras.source_anim (slanim_gltf_to_anim of
 * the result gives `anim` back unchanged). The .anim is read with the viewer's playback rules
 * (joints unknown to the skeleton are kept and left out of the file). `name`: the .anim file's
 * name without its folder, UTF-8, e.g. "DANCE1.anim" (also in asset.extras.comment); the
 * command embeds the bytes only when the name ends in ".anim": give such a name for equal bytes.
 * `glb`/`capacity`/`needed` count bytes (call with capacity 0 for the size).
 * Errors: NULL_ARGUMENT (`anim` with a size > 0, `name`, `needed`, or `glb` when it must hold
 * bytes); INVALID_DATA (size 0, a truncated or malformed .anim: the message names the rule and
 * the byte offset, as `slanim info` does; a motion glTF cannot hold, e.g. key times that do not
 * increase); BUFFER_TOO_SMALL (`needed` set, nothing written). On an error `glb` is untouched.
 * Thread-safe.
 */
SLANIM_API slanim_status slanim_anim_to_glb(const uint8_t* anim, size_t size, const char* name, uint8_t* glb,
                                            size_t capacity, size_t* needed);

#ifdef __cplusplus
}
#endif

#endif /* SLANIM_GLTF_H */
