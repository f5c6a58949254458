// SPDX-License-Identifier: MIT
// slanim.wasm's one translation unit of its own. The module exports the C API of slanim/slanim.h
// (tools/web/CMakeLists.txt lists every SLANIM_API function) from the libraries it links; the
// page reaches them through slanim-api.js. There is no entry point (--no-entry).
#include <slanim/slanim.h>

static_assert(sizeof(void*) == 4, "the JS module (slanim-api.js) reads 32-bit pointers and sizes");
static_assert(sizeof(size_t) == 4, "the JS module (slanim-api.js) reads 32-bit pointers and sizes");
