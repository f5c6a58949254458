// SPDX-License-Identifier: MIT
// `slanim convert` between creator formats: .anim, BVH (+ its JSON sidecar), BVJ, and Firestorm
// poser poses (docs/creator-formats.md).
#pragma once

#include <iosfwd>
#include <optional>
#include <string>

#include "slanim/formats/bvh_import.hpp"

namespace slanim::cli {

struct ConvertFormatOptions {
    float fps = 30.f;                    ///< .anim/.bvj KEYFRAMES → BVH sampling rate
    std::string bvj_form = "keyframes";  ///< .anim → .bvj: keyframes or motion
};

/// Converts IN to OUT by their extensions (.anim, .bvh, .bvj, .xml poses). Returns nullopt for
/// .anim → .anim (the caller's byte-exact rewrite), else the exit status (0 ok, 1 failure,
/// 2 usage). BVH inputs read IN.bvh.json when present (its values are defaults that `import`'s
/// explicit options beat); BVH outputs get OUT.bvh.json. Outputs are written atomically; an
/// .anim output only when the viewer would load it.
std::optional<int> convert_formats(std::ostream& out, std::ostream& err, const std::string& in,
                                   const std::string& output, const BvhImportOptions& import,
                                   const ConvertFormatOptions& options);

}  // namespace slanim::cli
