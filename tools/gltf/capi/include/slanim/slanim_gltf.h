/* SPDX-License-Identifier: MIT */
/*
 * slanim_gltf.h: glTF through the C API, in an optional library of its own (slanim::gltf_capi,
 * tools/gltf/capi) so that libslanim.so does not depend on TinyGLTF. The WebAssembly build
 * links it into slanim.wasm (the page's .glb/.gltf import). Same conventions as slanim.h
 * (status codes, slanim_last_error(), caller buffers with `capacity`/`needed`).
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

#ifdef __cplusplus
}
#endif

#endif /* SLANIM_GLTF_H */
