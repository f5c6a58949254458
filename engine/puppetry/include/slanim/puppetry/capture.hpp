// SPDX-License-Identifier: MIT
// Puppetry input that is not a network stream: recorded webcam captures and LEAP `set`
// messages, read into one neutral frame model (spec §9.4).
//
// A PuppetryFrame is what one input message asks of an avatar at one time: for some joints, a
// position and/or a rotation (and rarely a scale), each in a stated reference frame:
//  * PuppetryRefFrame::Parent — the joint's local transform, in its parent's frame, metres
//    (LEAP `joint_state` / `j`; applied directly, like an `.anim` key);
//  * PuppetryRefFrame::Root — an IK target in the avatar's root (mPelvis) frame, SL axes
//    (X forward, Y left, Z up), with positions **normalised so that the arm span is 2.0**
//    (LEAP `inverse_kinematics` / `i`; the viewer multiplies by 0.5 × arm span, where the arm
//    span is 2 × the largest |y| reach chest → wrist, before solving).
// Joints are named as the input names them (a joint name, an alias, or a decimal joint id);
// resolving them against a skeleton is the consumer's job.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "slanim/formats/llsd.hpp"
#include "slanim/core/math.hpp"
#include "slanim/core/result.hpp"

namespace slanim {

enum class PuppetryRefFrame : std::uint8_t {
    Parent,  ///< local transform in the parent joint's frame, metres
    Root,    ///< IK target in the root (pelvis) frame, positions arm-span normalised (span 2)
};

/// What one input says about one joint in one reference frame. A joint named in both LEAP maps
/// (or with both `pos` and `rot` in a capture) gives two entries, one per frame.
struct PuppetryJointTarget {
    std::string joint;  ///< as written: name, alias or decimal id ("8")
    PuppetryRefFrame frame = PuppetryRefFrame::Parent;
    std::optional<Vec3> position;  ///< metres (Parent) or arm-span-normalised units (Root)
    std::optional<Quat> rotation;  ///< unit quaternion, w ≥ 0 (built from the imaginary part)
    std::optional<Vec3> scale;     ///< Parent frame only
    bool disable_constraint = false;

    friend bool operator==(const PuppetryJointTarget&, const PuppetryJointTarget&) = default;
};

/// One input message: a time and joint targets, sorted by (joint, frame).
struct PuppetryFrame {
    /// Seconds: from the capture's first frame (captures), or as given by the caller (LEAP).
    double time = 0.0;
    std::vector<PuppetryJointTarget> joints;

    /// The entry for `joint` in `frame`, or nullptr.
    [[nodiscard]] const PuppetryJointTarget* find(std::string_view joint,
                                                  PuppetryRefFrame frame) const;
};

/// A recorded capture.
struct PuppetryCapture {
    /// The first frame's wall-clock time, seconds since 1970-01-01T00:00:00Z.
    double start_epoch_seconds = 0.0;
    std::vector<PuppetryFrame> frames;
};

/// Reads a webcam capture as recorded by the LEAP puppetry plugins of 2022
/// (`captured_webcam_sample_2022-05-06.txt`): one Python dict literal per line, e.g.
///   {'mHead': {'rot': [x, y, z]}, 'mWristLeft': {'pos': [x, y, z]}, 'command': 'move',
///    'time': '2022-05-06 17:23:57.413465+00:00'}
///
/// Framing (the capture predates the viewer's `i`/`j` split, see docs/puppetry.md): `pos` is
/// an inverse-kinematics target (Root frame, arm-span normalised); `rot` is the imaginary part
/// of a parent-frame rotation (Parent frame); `scale` is Parent. The long and short LEAP names
/// (`position`/`p`, `rotation`/`r`, `scale`/`s`, `disable_constraint`/`d`) are accepted too.
///
/// Each non-blank line must be a dict with `time` (a string `YYYY-MM-DD HH:MM:SS[.f]`, `T`
/// also accepted as the separator, then `Z`, `+HH:MM`, `-HH:MM` or nothing for UTC), an
/// optional `command` that must be `'move'`, and joint entries whose values are dicts. Times
/// must not go backwards; frame times are relative to the first frame. The Python literal
/// syntax accepted: dicts with string keys, lists and tuples, '…' and "…" strings with
/// backslash escapes, ints, floats (also inf, nan), True, False, None; trailing commas.
///
/// Errors: Error::line set, message "line L, column C: …" (C is the 1-based byte column of the
/// problem, or of the joint's key for a problem inside a joint's value), e.g. "line 3,
/// column 118: joint 'mWristLeft': 'pos': expected an array of 3 finite numbers".
Result<PuppetryCapture> parse_puppetry_capture(std::string_view text);

/// Reads and parses a capture file. Errors start with the path.
Result<PuppetryCapture> load_puppetry_capture(const std::string& path);

/// Converts a LEAP puppetry message (the `puppetry` event pump's payload,
/// llpuppetmodule.cpp) into a frame at `time` seconds. Accepted: a map with `command` 'set' and
/// `data` (or `d`) — or directly the data map — holding `inverse_kinematics` (or `i`) and/or
/// `joint_state` (or `j`) maps from joint key to a map of `rotation`|`r` [x,y,z] (imaginary
/// part of a unit quaternion; w = sqrt(1 − |xyz|²) ≥ 0), `position`|`p` [x,y,z],
/// `scale`|`s` [x,y,z] (joint_state only) and `disable_constraint`|`d` (present and not
/// false). Numbers are LLSD integers or reals.
///
/// Errors name the path of the offending value, e.g. "data.i.mWristLeft: 'position': expected
/// an array of 3 finite numbers": another command, a missing or non-map data, an unknown key, a
/// wrong type, a vector that is not 3 finite numbers, an |xyz|² above 1.0001 (between 1 and
/// 1.0001 the vector is normalised and w = 0), an empty joint key, a joint given under both the
/// long and the short name of one map kind. Keys `reqid` and `reply` (LEAP bookkeeping) are
/// ignored beside `command` and `data`.
Result<PuppetryFrame> puppetry_frame_from_leap(const Llsd& message, double time);

}  // namespace slanim
