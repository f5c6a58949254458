// SPDX-License-Identifier: MIT
// The joint data of the viewer's `puppetry` LEAP pump, read leniently, the way the viewer's
// LLPuppetModule reads it (spec §9.4; llpuppetmodule.cpp `processLeapData` of the 2022-08 viewer
// and `processJointData` of the later branches): a key or value the reader does not take is
// skipped and reported, and the rest of the message is still read.
//
// Three forms, each with its own parameter names and reference frames:
//
//  * LeapJointForm::Move — the flat map of the `move` command (leap repository, python/puppetry
//    of 2022-08): `{'mJoint': {param: value, ...}, ...}` beside `command`, `reply`, `reqid` and
//    `time`, which are bookkeeping and ignored. Parameters:
//      `local_rot` [x,y,z]  rotation in the parent joint's frame (LOCAL_ROT);
//      `rot` [x,y,z]        rotation target in the root (pelvis) frame (TARGET_ROT);
//      `pos`, `eff` [x,y,z] position target in the root frame, arm-span normalised (TARGET_POS);
//      `scale` [x,y,z]      local scale (LOCAL_SCALE);
//      `no_constraint`      true: the joint's constraint is disabled (DISABLE_CONSTRAINT).
//    (`no_ik`, which the viewer takes to leave a joint out of IK, is not supported: skipped.)
//  * LeapJointForm::InverseKinematics — the `inverse_kinematics` / `i` map of `set`: every
//    rotation and position is a root-frame target (positions arm-span normalised).
//  * LeapJointForm::JointState — the `joint_state` / `j` map of `set`: every rotation and
//    position is the joint's local transform in its parent's frame (metres).
//    In both: `rotation`|`r`, `position`|`p`, `scale`|`s` (local scale whatever the map) and
//    `disable_constraint`|`d` (present with a non-vector value: the constraint is disabled, as
//    the viewer does whatever the value).
//
// Values: a vector is an array of at least 3 numbers (integers or reals), the first 3 used. A
// rotation is the imaginary part of a unit quaternion: w = sqrt(1 − |xyz|²) ≥ 0; when
// |xyz|² > 1 the vector is normalised and w = 0, as the viewer does (reported as a skip-free
// warning when |xyz|² > 1.0001, i.e. beyond rounding). A vector with a NaN or infinite
// component, or that is no array of ≥ 3 numbers, is skipped.
#pragma once

#include <string>
#include <vector>

#include "slanim/formats/llsd.hpp"
#include "slanim/puppetry/capture.hpp"

namespace slanim {

enum class LeapJointForm : std::uint8_t {
    Move,               ///< the flat map of `move` (local_rot, rot, pos, eff, scale, no_constraint)
    InverseKinematics,  ///< `inverse_kinematics` / `i`: root-frame targets
    JointState,         ///< `joint_state` / `j`: parent-frame local values
};

/// Something the reader did not take (or took with a correction), named by its key path, e.g.
/// `{"i.mWristLeft.rotation", "|xyz|² = 1.5 > 1: normalised, w = 0", false}`.
struct LeapJointIssue {
    std::string path;    ///< dotted key path from the map given to the reader, with `prefix`
    std::string reason;  ///< what is wrong
    bool skipped = true;  ///< false: the value was used (corrected), only reported
    /// The kind of key for counting and one-warning-per-key: the parameter or joint name
    /// ("local_rotx", "mNoSuchJoint") or a short reason ("non-finite").
    std::string key;
};

/// Reads one joint map of `form` (for Move: the whole `move` message) and appends its targets
/// to `out` — one entry per joint and reference frame that says something — and what it
/// skipped to `issues`. Joint keys are kept as written (name, alias or decimal joint number):
/// resolving them is the caller's job. `prefix` starts every issue path (e.g. "data.i").
/// A non-map `joints` is one issue. Never fails; never throws.
void read_leap_joint_map(const Llsd& joints, LeapJointForm form, const std::string& prefix,
                         std::vector<PuppetryJointTarget>& out, std::vector<LeapJointIssue>& issues);

}  // namespace slanim
