/* SPDX-License-Identifier: MIT */
/*
 * slanim.h: the C API of slanim (libslanim.so), for hosts written in C, C#, Rust, Python, ...
 *
 * C99. No C++ type and no exception crosses this boundary: every function catches everything,
 * returns a slanim_status and, on failure, leaves a message for slanim_last_error().
 *
 * ------------------------------------------------------------------------------------------
 * Objects and handles
 * ------------------------------------------------------------------------------------------
 *   slanim_world*     a World: avatars, the motion cache shared by its avatars (the viewer's
 *                     LLKeyframeDataCache), its worker threads. Created by
 *                     slanim_world_create, owned by the caller, freed by slanim_world_destroy.
 *   slanim_skeleton*  an immutable skeleton (the embedded default one, or a viewer character
 *                     folder's avatar_skeleton.xml + avatar_lad.xml). Reference counted: every
 *                     slanim_skeleton_* constructor returns a reference the caller releases with
 *                     slanim_skeleton_release. Avatars keep their own reference, so a skeleton
 *                     may be released right after slanim_avatar_create.
 *   slanim_motion*    a decoded .anim outside any world (sampling, inspection). Owned by the
 *                     caller, freed by slanim_motion_destroy.
 *   slanim_avatar     a 64-bit value naming one avatar of one world: slot index and a
 *                     generation counter. Once the avatar is destroyed (or its world), the value
 *                     is stale: every function given it returns SLANIM_ERROR_INVALID_HANDLE,
 *                     also after the slot is reused by a new avatar. 0 (SLANIM_NULL_AVATAR) is
 *                     never a valid avatar.
 *   motion ids        16-byte asset UUIDs (the bytes of the UUID in its text order).
 *
 * Pointers to destroyed worlds, skeletons or motions cannot be detected in general (do not use
 * them); a pointer that is not a live object of the right kind is detected on a best-effort
 * basis (a tag check) and returns SLANIM_ERROR_INVALID_HANDLE.
 *
 * ------------------------------------------------------------------------------------------
 * Threads
 * ------------------------------------------------------------------------------------------
 *  - A world, and its avatars, is used by one thread at a time: the slanim_world_* and
 *    slanim_avatar_* calls on one world must not overlap. slanim_world_step runs the per-avatar
 *    work on the world's own worker threads and returns when it is done. Different worlds may be
 *    used on different threads at once.
 *  - Skeletons are immutable and may be shared by threads and worlds (the reference count is
 *    atomic). A slanim_motion is read-only after creation: several threads may sample it.
 *  - Functions that take no world (validation, conversion, IK, sampling) are safe from any
 *    thread.
 *  - slanim_last_error() is per thread.
 *
 * ------------------------------------------------------------------------------------------
 * Errors and buffers
 * ------------------------------------------------------------------------------------------
 *  - Every function returning slanim_status checks its input: a null pointer, a stale handle,
 *    an out-of-range value or malformed data returns an error code and sets the message; it
 *    never crashes and leaves outputs unchanged unless the function says otherwise.
 *  - Output arrays: the caller passes the array and its capacity in elements (floats, bytes,
 *    indices, ...); `needed` (never null) receives the number of elements the full result has.
 *    When the capacity is too small nothing is written to the array and the function returns
 *    SLANIM_ERROR_BUFFER_TOO_SMALL (call again with `needed` elements; a null array with
 *    capacity 0 is the way to ask for the size). Text outputs are NUL-terminated and `needed`
 *    counts the terminating NUL.
 *
 * Frames and units (as the viewer): SL avatar space, X forward, Y left, Z up; metres, seconds,
 * radians; quaternions are x, y, z, w. A "transform" is 7 floats: position x, y, z then rotation
 * x, y, z, w. Matrices are float[16], column-major (OpenGL order: element [c * 4 + r] is row r of
 * column c; the translation is elements 12, 13, 14).
 *
 * See docs/embedding.md for the host loop, and runtime/capi/README.md.
 */
#ifndef SLANIM_SLANIM_H
#define SLANIM_SLANIM_H

#include <stddef.h>
#include <stdint.h>

#if defined(SLANIM_CAPI_BUILD) && (defined(__GNUC__) || defined(__clang__))
#define SLANIM_API __attribute__((visibility("default")))
#else
#define SLANIM_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ========================================================================================== */
/* Version                                                                                    */
/* ========================================================================================== */

#define SLANIM_VERSION_MAJOR 0
#define SLANIM_VERSION_MINOR 1
#define SLANIM_VERSION_PATCH 0
#define SLANIM_VERSION_STRING "0.1.0"
/** (major << 16) | (minor << 8) | patch, comparable with slanim_version_number(). */
#define SLANIM_VERSION ((SLANIM_VERSION_MAJOR << 16) | (SLANIM_VERSION_MINOR << 8) | SLANIM_VERSION_PATCH)

/** The library's version text ("0.1.0"), a static string. Any thread. */
SLANIM_API const char* slanim_version(void);
/** The library's SLANIM_VERSION number (compare with the header's to detect a mismatch). */
SLANIM_API uint32_t slanim_version_number(void);

/* ========================================================================================== */
/* Status and errors                                                                          */
/* ========================================================================================== */

typedef enum slanim_status {
    SLANIM_OK = 0,
    SLANIM_ERROR_NULL_ARGUMENT = 1,     /**< a required pointer is null */
    SLANIM_ERROR_INVALID_HANDLE = 2,    /**< stale or foreign avatar, not a live object */
    SLANIM_ERROR_BUFFER_TOO_SMALL = 3,  /**< capacity < needed (needed is set) */
    SLANIM_ERROR_OUT_OF_RANGE = 4,      /**< a number outside its documented range, NaN */
    SLANIM_ERROR_INVALID_DATA = 5,      /**< malformed input bytes (.anim, BVH, wearable, ...) */
    SLANIM_ERROR_NOT_FOUND = 6,         /**< unknown motion id, joint name, visual param id */
    SLANIM_ERROR_IO = 7,                /**< a file could not be read (character folders) */
    SLANIM_ERROR_UNSUPPORTED = 8,       /**< the object lacks what the call needs */
    SLANIM_ERROR_OUT_OF_MEMORY = 9,
    SLANIM_ERROR_INTERNAL = 10,         /**< an unexpected failure (a bug: please report) */
    SLANIM_ERROR_ALREADY_EXISTS = 11    /**< the id or mesh is already registered or applied */
} slanim_status;

/**
 * The message of the last failed call on the calling thread ("" when none failed yet), e.g.
 * "slanim_world_load_motion: error: [duration] duration 1000 s is not finite or exceeds the
 * 60 s limit (at byte 8)".
 * Valid until the next slanim call on this thread; owned by the library. Thread-local.
 */
SLANIM_API const char* slanim_last_error(void);
/** "SLANIM_OK", "SLANIM_ERROR_NULL_ARGUMENT", ...; "unknown status" for any other value (the
 *  parameter is an int so that any value is safe to pass). Static. */
SLANIM_API const char* slanim_status_name(int status);

/* ========================================================================================== */
/* Types                                                                                      */
/* ========================================================================================== */

typedef struct slanim_world slanim_world;
typedef struct slanim_skeleton slanim_skeleton;
typedef struct slanim_motion slanim_motion;
typedef uint64_t slanim_avatar;
#define SLANIM_NULL_AVATAR UINT64_C(0)

/** Floats per transform: position x, y, z, rotation x, y, z, w. */
#define SLANIM_TRANSFORM_FLOATS 7
/** Floats per matrix (4 × 4, column-major). */
#define SLANIM_MATRIX_FLOATS 16

/* ========================================================================================== */
/* Skeletons                                                                                  */
/* ========================================================================================== */
/* Thread: any (skeletons are immutable; the reference count is atomic).                     */

/**
 * The embedded default SL skeleton (133 bones, 26 collision volumes, 55 attachment points).
 * Ownership: *out receives a new reference (slanim_skeleton_release). Any thread.
 * Errors: NULL_ARGUMENT.
 */
SLANIM_API slanim_status slanim_skeleton_default(slanim_skeleton** out);

/**
 * A viewer character folder's skeleton: `character_dir`/avatar_skeleton.xml and the attachment
 * points of avatar_lad.xml (LLAvatarSkeletonInfo::parseXml). The folder is remembered: avatars
 * of this skeleton may get an appearance (slanim_avatar_enable_appearance), whose avatar_lad.xml
 * and .llm meshes are read from it on first use. `character_dir` is a NUL-terminated UTF-8 path
 * of the folder or of its avatar_skeleton.xml.
 * Ownership: *out receives a new reference. Any thread.
 * Errors: NULL_ARGUMENT; IO (missing or unreadable file); INVALID_DATA (malformed XML: the
 * message names the file, the element and the line).
 */
SLANIM_API slanim_status slanim_skeleton_load(const char* character_dir, slanim_skeleton** out);

/** Drops one reference (null is ignored). Any thread. */
SLANIM_API void slanim_skeleton_release(slanim_skeleton* skeleton);

/** Joint count: bones, then collision volumes, then attachment points. Any thread. */
SLANIM_API slanim_status slanim_skeleton_joint_count(const slanim_skeleton* skeleton, int32_t* count);
/** Bone count (joints [0, bones) are bones; mPelvis is 0). Any thread. */
SLANIM_API slanim_status slanim_skeleton_bone_count(const slanim_skeleton* skeleton, int32_t* count);

/**
 * Joint index of a name, resolved as the viewer's LLVOAvatar::getJoint: canonical names
 * ("mHandRight"), aliases (BVH names such as "rHand", "avatar_mHandRight"), collision volumes,
 * attachment points. Errors: NULL_ARGUMENT; NOT_FOUND (unknown name, *index = -1).
 */
SLANIM_API slanim_status slanim_skeleton_find_joint(const slanim_skeleton* skeleton, const char* name,
                                                    int32_t* index);

/**
 * The canonical name of joint `index` into `name` (NUL-terminated; `needed` counts the NUL).
 * Errors: NULL_ARGUMENT (skeleton, needed; name may be null when capacity is 0); OUT_OF_RANGE
 * (index not in [0, joint count)); BUFFER_TOO_SMALL.
 */
SLANIM_API slanim_status slanim_skeleton_joint_name(const slanim_skeleton* skeleton, int32_t index, char* name,
                                                    size_t capacity, size_t* needed);

/** Parent joint index of `index`, -1 for the root (mPelvis) and HUD attachment points. */
SLANIM_API slanim_status slanim_skeleton_joint_parent(const slanim_skeleton* skeleton, int32_t index,
                                                      int32_t* parent);

/**
 * The skeleton's rest pose: one transform (SLANIM_TRANSFORM_FLOATS: position x, y, z in metres,
 * rotation x, y, z, w) per joint, in its parent's frame (avatar_skeleton.xml's `pos` and `rot`;
 * mPelvis relative to the avatar root, SL frame X forward, Y left, Z up). `capacity` and
 * `needed` count floats (7 × joint count). Errors: NULL_ARGUMENT, INVALID_HANDLE,
 * BUFFER_TOO_SMALL. Any thread.
 */
SLANIM_API slanim_status slanim_skeleton_rest_pose(const slanim_skeleton* skeleton, float* transforms,
                                                   size_t capacity, size_t* needed);
/**
 * The bone tip of joint `index` (avatar_skeleton.xml's `end`: an offset from the joint in its
 * frame, metres; for tools that draw bones; zero for volumes and attachment points).
 * Errors: NULL_ARGUMENT, INVALID_HANDLE, OUT_OF_RANGE (index). Any thread.
 */
SLANIM_API slanim_status slanim_skeleton_joint_end(const slanim_skeleton* skeleton, int32_t index, float* end);

/* ========================================================================================== */
/* Motions outside a world                                                                    */
/* ========================================================================================== */
/* Thread: any; one motion may be sampled by several threads at once, but not destroyed while */
/* another thread uses it.                                                                     */

/** Header values of a motion (LLKeyframeMotion's), seconds. */
typedef struct slanim_motion_info {
    float duration;
    int32_t loop; /**< 0 or 1 */
    float loop_in, loop_out;
    float ease_in, ease_out;
    int32_t base_priority;
    int32_t hand_pose;
    int32_t num_joints;      /**< animated joints the skeleton knows (tracks) */
    int32_t num_constraints;
} slanim_motion_info;

/**
 * Parses, validates (playback rules: LLKeyframeMotion::deserialize with allow_invalid_joints,
 * unknown joints are ignored) and decodes .anim bytes for `skeleton` (null: the embedded
 * default). The bytes are not kept. Ownership: *out is the caller's (slanim_motion_destroy); it
 * holds its own skeleton reference. Any thread.
 * Errors: NULL_ARGUMENT (bytes may be null only when size is 0, which is INVALID_DATA);
 * INVALID_DATA with the first rule broken and its byte offset in the message.
 */
SLANIM_API slanim_status slanim_motion_load(const uint8_t* bytes, size_t size, const slanim_skeleton* skeleton,
                                            slanim_motion** out);
/** Frees a motion (null is ignored). Not while another thread samples it. */
SLANIM_API void slanim_motion_destroy(slanim_motion* motion);
/** The motion's header values. Errors: NULL_ARGUMENT, INVALID_HANDLE. */
SLANIM_API slanim_status slanim_motion_get_info(const slanim_motion* motion, slanim_motion_info* info);

/**
 * The motion's local pose at curve time `time` (seconds, clamped to [0, duration]; no looping,
 * easing or blending): the skeleton's rest pose with every animated joint's keys sampled by the
 * viewer's curve rules (hold outside the keys, nlerp rotations, linear positions; spec §2.1).
 * Output: one transform (SLANIM_TRANSFORM_FLOATS) per skeleton joint, in the joint's parent
 * frame. `capacity` and `needed` count floats (7 × joint count). Any thread.
 * Errors: NULL_ARGUMENT, INVALID_HANDLE, OUT_OF_RANGE (time not finite), BUFFER_TOO_SMALL.
 */
SLANIM_API slanim_status slanim_motion_sample(const slanim_motion* motion, float time, float* transforms,
                                              size_t capacity, size_t* needed);

/* ========================================================================================== */
/* .anim validation and conversion                                                            */
/* ========================================================================================== */
/* Thread: any (no shared state). Ownership: inputs are read during the call only.            */

/** Counts of slanim_anim_validate. */
typedef struct slanim_validation {
    int32_t valid;    /**< 1 when the viewer would accept the file under the chosen rules */
    int32_t errors;   /**< error diagnostics */
    int32_t warnings; /**< warning diagnostics (accepted but changed or ignored by the viewer) */
} slanim_validation;

/**
 * Validates .anim bytes with every rule of the viewer's deserialize, as `slanim validate`
 * does. `upload` non-zero applies the upload rules (unknown joints are errors, as
 * `slanim validate --upload`). `asset_id` (optional, 16 bytes) enables the rules that depend
 * on the asset's UUID. `skeleton` null: the embedded default.
 * `report` receives one diagnostic per line,
 * "error: [rule] message (joint 3 'mHead', key 7, at byte 1234)\n" (docs/anim-validation.md);
 * null: no report wanted (`needed` is still set). Returns OK whether the file is valid or not
 * (see result->valid); BUFFER_TOO_SMALL when a report is given and does not fit (result is
 * filled all the same). Any thread.
 * Errors: NULL_ARGUMENT (result, needed; bytes when size > 0).
 */
SLANIM_API slanim_status slanim_anim_validate(const uint8_t* bytes, size_t size, int upload,
                                              const uint8_t* asset_id, const slanim_skeleton* skeleton,
                                              slanim_validation* result, char* report, size_t capacity,
                                              size_t* needed);

/** BVH import options (the viewer's uploader, LLBVHLoader; `slanim convert` flags). */
typedef struct slanim_bvh_import_options {
    int32_t priority;      /**< 0..6; -1: the viewer's default (2) */
    int32_t loop;          /**< -1 default (no loop), 0, 1 */
    float loop_in;         /**< seconds; negative: default */
    float loop_out;        /**< seconds; negative: default */
    float ease_in;         /**< seconds; negative: default (0.3) */
    float ease_out;        /**< seconds; negative: default (0.3) */
    int32_t hand_pose;     /**< 0..13; -1: default (1, relaxed) */
    const char* emote;     /**< NUL-terminated emote name, or null */
    int32_t skip_unknown_joints; /**< non-zero: drop non-SL joints with a warning (else error) */
    int32_t keep_all_frames;     /**< non-zero: no key reduction */
    int32_t importer;            /**< 0: today's viewer; 1: linden-legacy */
    int32_t pelvis_origin_first_frame; /**< linden-legacy: pelvis positions from frame 0 */
    float hip_turn_degrees;      /**< linden-legacy: hip offset rotation about Z, degrees */
} slanim_bvh_import_options;

/** Fills the defaults (all "default", importer 0, hip turn 0). */
SLANIM_API slanim_status slanim_bvh_import_options_init(slanim_bvh_import_options* options);

/**
 * BVH text → .anim bytes, like `slanim convert in.bvh out.anim` (import_bvh with the default
 * skeleton, encoded with the viewer's quantization; the result is checked to load in the
 * viewer). `options` null: defaults. `anim`/`capacity`/`needed` count bytes. Any thread.
 * Errors: NULL_ARGUMENT; OUT_OF_RANGE (an option value); INVALID_DATA (BVH syntax with line and
 * column, a non-SL joint, a duration above 60 s, ...); BUFFER_TOO_SMALL.
 */
SLANIM_API slanim_status slanim_bvh_to_anim(const char* bvh, size_t size, const slanim_bvh_import_options* options,
                                            uint8_t* anim, size_t capacity, size_t* needed);

/**
 * .anim bytes → BVH text (NUL-terminated; `needed` counts the NUL), like
 * `slanim convert in.anim out.bvh --fps F` (export_bvh: frame 0 the rest reference frame, then
 * the motion sampled at `fps`, in (0, 1000]). The header values a BVH cannot hold are lost.
 * Errors: NULL_ARGUMENT; OUT_OF_RANGE (fps); INVALID_DATA (the .anim, with its byte offset, or
 * a motion BVH cannot express); BUFFER_TOO_SMALL. Any thread.
 */
SLANIM_API slanim_status slanim_anim_to_bvh(const uint8_t* anim, size_t size, float fps, char* bvh,
                                            size_t capacity, size_t* needed);

/* ========================================================================================== */
/* Motion files as the slanim command handles them                                            */
/* ========================================================================================== */
/* Thread: any (no shared state). Ownership: inputs are read during the call only. The page    */
/* of docs/web.md calls these (through tools/web/slanim-api.js) to show and change files.      */

/**
 * The line `slanim info FILE` prints for .anim bytes (without the newline; `needed` counts the
 * NUL): "FILE: v1.0 prio 3 | 12 joints (…) | pos […] m | 0 constraint(s) | ease …/… s |
 * 4.000 s | loop … | hand relaxed(1) | emote none" (slanim/formats/motion_info.hpp).
 * `file` is the name to print (UTF-8, NUL-terminated); `skeleton` null: the embedded default.
 * Errors: NULL_ARGUMENT; INVALID_DATA (a rule of the viewer's loader broken: "FILE: error:
 * [rule] message (… at byte N)", as `slanim info` prints it); BUFFER_TOO_SMALL.
 */
SLANIM_API slanim_status slanim_anim_info_line(const uint8_t* bytes, size_t size, const char* file,
                                               const slanim_skeleton* skeleton, char* line, size_t capacity,
                                               size_t* needed);

/**
 * .anim bytes edited as `slanim edit FILE OPTIONS… -o OUT` writes OUT: `edits` holds the
 * options of `slanim edit`, one per line, "--option" or "--option VALUE" (the value is the
 * rest of the line, verbatim: "--joint-priority mHip*=5", "--emote " clears the emote), applied
 * in order (adjacent --loop-in / --loop-out lines are one change, as on the command line):
 * --priority N, --joint-priority GLOB=N, --drop-joint GLOB, --drop-pos [GLOB], --drop-rot GLOB,
 * --drop-empty, --ease-in S, --ease-out S, --loop, --no-loop, --loop-in T, --loop-out T (seconds
 * or N%), --speed F, --hand-pose NAME|N, --emote NAME, --mirror. The result is encoded like the
 * viewer and checked to load in it, byte for byte the file `slanim edit` writes.
 * `skeleton` null: the embedded default. `anim`/`capacity`/`needed` count bytes.
 * Errors: NULL_ARGUMENT; OUT_OF_RANGE (no edit, an unknown option, a malformed or out-of-range
 * value: "LINE: why"); INVALID_DATA (the input breaks a loader rule, with its byte offset; an
 * edit the motion refuses, "LINE: why"; a result the viewer would not load); BUFFER_TOO_SMALL.
 */
SLANIM_API slanim_status slanim_anim_edit(const uint8_t* bytes, size_t size, const char* edits,
                                          const slanim_skeleton* skeleton, uint8_t* anim, size_t capacity,
                                          size_t* needed);

/**
 * A Firestorm poser pose (LLSD XML) → .anim bytes, as `slanim convert pose.xml out.anim` with
 * its defaults (priority 4, a 1 s loop, ease 0.5 s, hand relaxed; docs/creator-formats.md) on
 * the embedded default skeleton. `skip_unknown_joints` non-zero drops entries that are not
 * joints (else they are errors). Errors: NULL_ARGUMENT; INVALID_DATA (malformed XML, no joint to
 * write, an unknown joint); BUFFER_TOO_SMALL.
 */
SLANIM_API slanim_status slanim_poser_to_anim(const char* xml, size_t size, int skip_unknown_joints, uint8_t* anim,
                                              size_t capacity, size_t* needed);

/**
 * A BVJ motion (JSON) → .anim bytes, as `slanim convert in.bvj out.anim` with the default
 * import options (import_bvj, the BVH uploader's rules; docs/creator-formats.md), on the embedded
 * default skeleton. Errors: NULL_ARGUMENT; INVALID_DATA (malformed JSON with its position, a
 * non-SL joint, …); BUFFER_TOO_SMALL.
 */
SLANIM_API slanim_status slanim_bvj_to_anim(const char* bvj, size_t size, uint8_t* anim, size_t capacity,
                                            size_t* needed);

/* ========================================================================================== */
/* .anim keys: read a motion's keys, write an .anim from keys (editors such as the Blender     */
/* add-on, tools/blender)                                                                      */
/* ========================================================================================== */
/* Thread: any (no shared state). Ownership: inputs are read during the call only.            */

/** One animated joint entry of a loaded motion (slanim_motion_joint). */
typedef struct slanim_motion_joint_info {
    int32_t joint;        /**< skeleton joint index, -1 when the skeleton does not know the name */
    int32_t priority;     /**< the file's joint priority; -1: the motion's base priority */
    int32_t num_rot_keys; /**< rotation keys (sorted by time, unique times) */
    int32_t num_pos_keys; /**< position keys */
} slanim_motion_joint_info;

/**
 * The joint entries of a motion as decoded (decode_motion: keys sorted with unique times,
 * aliases resolved, unknown joints kept with joint = -1), in file order. `count` receives the
 * number of entries. Errors: NULL_ARGUMENT, INVALID_HANDLE. Any thread.
 */
SLANIM_API slanim_status slanim_motion_joint_entries(const slanim_motion* motion, int32_t* count);
/**
 * Entry `index` of a motion: its info and its canonical name (NUL-terminated; `capacity` and
 * `needed` count chars with the NUL). Errors: NULL_ARGUMENT, INVALID_HANDLE, OUT_OF_RANGE
 * (index), BUFFER_TOO_SMALL. Any thread.
 */
SLANIM_API slanim_status slanim_motion_joint(const slanim_motion* motion, int32_t index,
                                             slanim_motion_joint_info* info, char* name, size_t capacity,
                                             size_t* needed);
/**
 * The keys of entry `index`: `rot_keys` receives 5 floats per rotation key (time in seconds,
 * then x, y, z, w as decoded: w ≥ 0), `pos_keys` 4 per position key (time, x, y, z metres in the
 * parent frame; mPelvis: offset from the avatar root). Capacities count floats and must hold
 * 5 × num_rot_keys and 4 × num_pos_keys (either pointer may be null when its count is 0).
 * Errors: NULL_ARGUMENT, INVALID_HANDLE, OUT_OF_RANGE (index), BUFFER_TOO_SMALL. Any thread.
 */
SLANIM_API slanim_status slanim_motion_joint_keys(const slanim_motion* motion, int32_t index, float* rot_keys,
                                                  size_t rot_capacity, float* pos_keys, size_t pos_capacity);
/** The motion's emote name (empty: none). NUL-terminated; `needed` counts the NUL. */
SLANIM_API slanim_status slanim_motion_emote(const slanim_motion* motion, char* name, size_t capacity,
                                             size_t* needed);

/** Header of slanim_anim_encode (the .anim header fields, seconds). */
typedef struct slanim_anim_header {
    int32_t priority;  /**< base priority 0..6 */
    float duration;    /**< seconds ≥ 0 (0: a pose; the uploader's 60-s limit is validation's) */
    int32_t loop;      /**< 0 or 1 */
    float loop_in, loop_out;   /**< seconds (written as given; validation checks them) */
    float ease_in, ease_out;   /**< seconds */
    int32_t hand_pose; /**< 0..14 (the viewer's hand poses) */
    const char* emote; /**< emote animation name, or null/empty for none */
} slanim_anim_header;

/** One joint of slanim_anim_encode. */
typedef struct slanim_anim_joint {
    const char* name;         /**< SL joint name or alias (the skeleton must know it) */
    int32_t priority;         /**< -1: the base priority; else 0..6 */
    const float* rot_keys;    /**< num_rot_keys × 5 floats: time, x, y, z, w (normalised here) */
    size_t num_rot_keys;
    const float* pos_keys;    /**< num_pos_keys × 4 floats: time, x, y, z metres */
    size_t num_pos_keys;
} slanim_anim_joint;

/**
 * Writes .anim bytes from keys with the viewer's quantization (encode_motion, write_anim: the
 * bytes LLKeyframeMotion::serialize writes). Keys of one joint must have increasing times in
 * [0, duration]. Nothing is clamped: a position beyond ±5 m (the format's range) is an error
 * naming the joint and the key time. `skeleton` null: the embedded default. The result loads
 * in the viewer's playback rules; the upload rules are slanim_anim_validate's. Any thread.
 * Errors: NULL_ARGUMENT; OUT_OF_RANGE (a non-finite header time, a negative duration, a priority
 * or hand pose out of range, a non-finite or out-of-range key, with the joint and time); INVALID_DATA (an unknown joint name, a joint given twice, a
 * zero rotation); BUFFER_TOO_SMALL (`needed` counts bytes).
 */
SLANIM_API slanim_status slanim_anim_encode(const slanim_anim_header* header, const slanim_anim_joint* joints,
                                            size_t num_joints, const slanim_skeleton* skeleton, uint8_t* anim,
                                            size_t capacity, size_t* needed);
/**
 * slanim_anim_encode for editors: the same arguments, checks and errors, but every key time,
 * rotation component and position component takes the code whose decoded value is nearest, so
 * keys read with slanim_motion_joint_keys and left unchanged re-encode to the file's own codes
 * (the viewer's serialize floors, after a quantize16 pass that floors too: such a value can come
 * back up to two codes lower, and repeated cycles drift). A deliberate deviation from the
 * viewer's bytes, for an editor's import → export (the Blender add-on); `slanim convert` and
 * uploads keep slanim_anim_encode. Any thread.
 */
SLANIM_API slanim_status slanim_anim_encode_nearest(const slanim_anim_header* header,
                                                    const slanim_anim_joint* joints, size_t num_joints,
                                                    const slanim_skeleton* skeleton, uint8_t* anim,
                                                    size_t capacity, size_t* needed);

/* ========================================================================================== */
/* IK on a chain                                                                              */
/* ========================================================================================== */
/* Thread: any (no shared state).                                                              */

typedef enum slanim_ik_solver {
    SLANIM_IK_CCD = 0,    /**< cyclic coordinate descent (ik::CcdJob), the runtime's default */
    SLANIM_IK_FABRIK = 1  /**< FABRIK (ik::FabrikJob) */
} slanim_ik_solver;

typedef struct slanim_ik_settings {
    float tolerance;        /**< metres, >= 0 (default 0.0005) */
    int32_t max_iterations; /**< 1..10000 (default 20) */
} slanim_ik_settings;

typedef struct slanim_ik_report {
    int32_t iterations;
    float initial_error; /**< metres, effector to target before solving */
    float error;         /**< metres, after */
    int32_t converged;   /**< error <= tolerance */
    int32_t reachable;   /**< the target lies within the chain's reach */
} slanim_ik_report;

/**
 * Solves a chain with `solver` (a slanim_ik_solver value) given by joint positions: `positions` holds `num_joints` points (3 floats
 * each, metres, any frame), index 0 the chain root (pinned) and num_joints - 1 the end
 * effector; 2 <= num_joints <= 32. The chain moves its end toward `target` (3 floats), or to
 * the plane through `target` with normal `plane_normal` (3 floats, optional). Bone lengths are
 * kept.
 * Outputs (each optional): `out_positions` (3 × num_joints) the solved positions;
 * `out_rotations` (4 × num_joints, x y z w) per joint the rotation its outgoing segment turned
 * by, in the frame of the input positions (the end joint has no segment: its entry equals its
 * parent's); `report`.
 * `settings` null: defaults. Any thread.
 * Errors: NULL_ARGUMENT (positions, target); OUT_OF_RANGE (num_joints, solver, a setting, a
 * non-finite coordinate, a zero plane normal).
 */
SLANIM_API slanim_status slanim_ik_solve(int32_t solver, const float* positions, size_t num_joints,
                                         const float* target, const float* plane_normal,
                                         const slanim_ik_settings* settings, float* out_positions,
                                         float* out_rotations, slanim_ik_report* report);

/* ========================================================================================== */
/* Worlds and the motion cache                                                                */
/* ========================================================================================== */
/* Thread: calls on one world never overlap (any thread may drive a world, one at a time; see   */
/* Threads above); slanim_world_create: any thread. Ownership: inputs are read during the call */
/* only (the cache keeps decoded copies, never the caller's bytes).                            */

/**
 * Creates a world. `threads`: worker threads for the per-avatar work, 0 = one per hardware
 * thread, 1 = all on the calling thread, at most 256. Results are identical for every value.
 * Ownership: *out is the caller's (slanim_world_destroy). Any thread.
 * Errors: NULL_ARGUMENT; OUT_OF_RANGE (threads).
 */
SLANIM_API slanim_status slanim_world_create(int32_t threads, slanim_world** out);
/** Destroys a world and all its avatars (their handles become stale). Null is ignored. */
SLANIM_API void slanim_world_destroy(slanim_world* world);

/**
 * Advances every avatar by `dt` seconds (0 evaluates the current time again; finite, in
 * [0, 3600]) and runs every phase (motion control, sampling, blending, IK, morphs, skinning,
 * puppetry). Afterwards the avatars' outputs describe the new frame.
 * Errors: NULL_ARGUMENT, INVALID_HANDLE, OUT_OF_RANGE.
 */
SLANIM_API slanim_status slanim_world_step(slanim_world* world, float dt);

/**
 * Turns the world's per-system timing on (non-zero) or off (World::set_profiling; off by
 * default, and then free). Errors: NULL_ARGUMENT (world), INVALID_HANDLE.
 */
SLANIM_API slanim_status slanim_world_set_profiling(slanim_world* world, int on);
/**
 * The time each system took since profiling was turned on or last reset (World::profile), one
 * line per system in run order: "NAME SECONDS CALLS\n" (seconds summed over worker threads, as
 * CPU time; calls = avatar runs of per-avatar systems, steps of the others), NUL-terminated
 * (`needed` counts the NUL). `reset` non-zero zeroes the times once they are written (not
 * when the call fails, e.g. on a short buffer). Errors: INVALID_HANDLE, NULL_ARGUMENT, BUFFER_TOO_SMALL.
 */
SLANIM_API slanim_status slanim_world_profile(slanim_world* world, int reset, char* text, size_t capacity,
                                              size_t* needed);

/**
 * Loads a motion into the world's cache under `motion_id` (16 bytes), shared by every avatar
 * of the world (LLKeyframeDataCache): the bytes are validated with the viewer's playback rules
 * (the UUID-dependent rules use `motion_id`) and decoded; the bytes are not kept. A motion
 * already loaded under that id is replaced for later starts; an avatar on which the old one is
 * active keeps playing (and restarting) it until it ends.
 * Errors: NULL_ARGUMENT; INVALID_DATA: "error: [rule] message (... at byte N)" of the first
 * error (docs/anim-validation.md lists the rules).
 */
SLANIM_API slanim_status slanim_world_load_motion(slanim_world* world, const uint8_t* motion_id,
                                                  const uint8_t* bytes, size_t size);
/** Removes a motion from the cache (playing instances keep playing). Errors: NOT_FOUND. */
SLANIM_API slanim_status slanim_world_unload_motion(slanim_world* world, const uint8_t* motion_id);
/** *loaded = 1 when the cache holds `motion_id`, else 0. */
SLANIM_API slanim_status slanim_world_has_motion(const slanim_world* world, const uint8_t* motion_id,
                                                 int* loaded);

/* ========================================================================================== */
/* Avatars                                                                                    */
/* ========================================================================================== */
/* Thread: as the world's functions above. Ownership: avatars belong to their world; outputs  */
/* go to the caller's arrays; nothing is returned that the caller frees.                       */

/**
 * Creates an avatar of `skeleton` in its rest pose (pelvis at the avatar-root origin). The
 * avatar keeps its own skeleton reference. Errors: NULL_ARGUMENT, INVALID_HANDLE,
 * OUT_OF_RANGE (the world is full: 2^20 avatars).
 */
SLANIM_API slanim_status slanim_avatar_create(slanim_world* world, const slanim_skeleton* skeleton,
                                              slanim_avatar* out);
/** Destroys an avatar; its handle becomes stale. Errors: INVALID_HANDLE. */
SLANIM_API slanim_status slanim_avatar_destroy(slanim_world* world, slanim_avatar avatar);
/** 1 when `avatar` is a live avatar of `world`, else 0 (also for a null world). */
SLANIM_API int slanim_avatar_valid(const slanim_world* world, slanim_avatar avatar);

/**
 * LLMotionController::startMotion(id, start_offset): starts the motion `motion_id` (a cached
 * .anim, or a custom motion registered with slanim_world_register_custom_motion),
 * `start_offset` seconds in (finite, >= 0). A motion already fully playing keeps playing; one
 * easing out restarts. While the avatar's instance of `motion_id` is active it is the motion
 * started, even if the cache entry was replaced or unloaded meanwhile.
 * Errors: INVALID_HANDLE, NOT_FOUND (neither cached nor registered), OUT_OF_RANGE, UNSUPPORTED
 * (a custom motion registered for a skeleton whose joints differ from the avatar's).
 */
SLANIM_API slanim_status slanim_avatar_start_motion(slanim_world* world, slanim_avatar avatar,
                                                    const uint8_t* motion_id, float start_offset);
/**
 * stopMotionLocally(id, immediate): the motion eases out (a looping one finishes its loop as
 * the viewer's setStopTime says); `immediate` non-zero deactivates it at once. Stopping a
 * motion that does not play is not an error. The id finds the motion this avatar last started
 * under it, even after the cache entry was replaced or unloaded. Errors: INVALID_HANDLE,
 * NOT_FOUND (neither cached, registered as a custom motion, nor ever started on this avatar).
 */
SLANIM_API slanim_status slanim_avatar_stop_motion(slanim_world* world, slanim_avatar avatar,
                                                   const uint8_t* motion_id, int immediate);
/** *active = 1 when the motion is active on the avatar (playing or easing out), else 0.
 *  Errors: INVALID_HANDLE, NOT_FOUND (as slanim_avatar_stop_motion), NULL_ARGUMENT. */
SLANIM_API slanim_status slanim_avatar_is_motion_active(const slanim_world* world, slanim_avatar avatar,
                                                        const uint8_t* motion_id, int* active);
/** Stops every motion of the avatar (deactivateAllMotions when `immediate`). */
SLANIM_API slanim_status slanim_avatar_stop_all_motions(slanim_world* world, slanim_avatar avatar, int immediate);
/** setTimeFactor: playback speed, finite and in [0, 100] (1 = normal). */
SLANIM_API slanim_status slanim_avatar_set_time_factor(slanim_world* world, slanim_avatar avatar, float factor);
/** pauseAllMotions (non-zero) / unpauseAllMotions (0). */
SLANIM_API slanim_status slanim_avatar_set_paused(slanim_world* world, slanim_avatar avatar, int paused);
/**
 * The avatar's pixel area on screen (getPixelArea), finite, >= 0: motions whose minimum pixel
 * area is above it fade out (keyframe motions: 40). Default: never faded.
 */
SLANIM_API slanim_status slanim_avatar_set_pixel_area(slanim_world* world, slanim_avatar avatar, float area);
/** A hidden avatar gets the viewer's updateMotionsMinimal (its pose stays). Default visible. */
SLANIM_API slanim_status slanim_avatar_set_visible(slanim_world* world, slanim_avatar avatar, int visible);

/* ------------------------------------------------------------------------------------------ */
/* Outputs                                                                                    */
/* ------------------------------------------------------------------------------------------ */

/** The avatar's joint count (its skeleton's). */
SLANIM_API slanim_status slanim_avatar_joint_count(const slanim_world* world, slanim_avatar avatar,
                                                   int32_t* count);

/**
 * Every joint's transform in the avatar-root frame after the last step (the model pose:
 * position and rotation, LocalToModelJob), SLANIM_TRANSFORM_FLOATS per joint in joint-index
 * order. `capacity`/`needed` count floats. Errors: NULL_ARGUMENT, INVALID_HANDLE,
 * BUFFER_TOO_SMALL.
 */
SLANIM_API slanim_status slanim_avatar_joint_transforms(const slanim_world* world, slanim_avatar avatar,
                                                        float* transforms, size_t capacity, size_t* needed);

/**
 * Every joint's world matrix for GPU skinning: avatar-root frame, metres, column-major float[16]
 * per joint in joint-index order, M = T(position) · R(rotation) · S(the joint's own local scale;
 * scales are not inherited, as the viewer's joint world matrices). A skinning palette is
 * M · inverse(bind matrix) of the host's mesh. `capacity`/`needed` count floats (16 × joints).
 * Errors: NULL_ARGUMENT, INVALID_HANDLE, BUFFER_TOO_SMALL.
 */
SLANIM_API slanim_status slanim_avatar_joint_matrices(const slanim_world* world, slanim_avatar avatar,
                                                      float* matrices, size_t capacity, size_t* needed);

/** One joint's owner after the last step (slanim_avatar_joint_owners). */
typedef struct slanim_joint_owner {
    int32_t joint;          /**< joint index in the avatar's skeleton */
    int32_t priority;       /**< the owning track's priority: its joint priority, or the motion's base priority */
    uint8_t motion_id[16];  /**< the owning motion (the id it was started with) */
} slanim_joint_owner;

/**
 * Which playing motion owns each joint after the last step: the owner overlay of `slanim view`
 * (slanim::compute_joint_owners): among the motions evaluated in that step with a pose weight
 * > 0, the one whose track on the joint (rotation or position keys) has the highest priority;
 * ties go to the larger pose weight, then to the newest motion. One entry per owned joint, in
 * joint-index order (joints no motion animates are left out). `capacity`/`needed` count
 * entries. Errors: NULL_ARGUMENT, INVALID_HANDLE, BUFFER_TOO_SMALL.
 */
SLANIM_API slanim_status slanim_avatar_joint_owners(const slanim_world* world, slanim_avatar avatar,
                                                    slanim_joint_owner* owners, size_t capacity, size_t* needed);

/** What a constraint did in the last step (slanim_constraint_target::state). */
typedef enum slanim_constraint_state {
    SLANIM_CONSTRAINT_APPLIED = 0,       /**< solved (see reachable) */
    SLANIM_CONSTRAINT_BEFORE_WINDOW = 1, /**< the motion's time is before its ease-in start */
    SLANIM_CONSTRAINT_AFTER_WINDOW = 2,  /**< after its ease-out stop (deactivated) */
    SLANIM_CONSTRAINT_MASKED = 3,        /**< a motion updated before it claims a chain joint at >= its priority */
    SLANIM_CONSTRAINT_ZERO_WEIGHT = 4,   /**< in its window with weight 0: pose untouched */
    SLANIM_CONSTRAINT_NO_POSITION = 5    /**< chain length 0 and its joint has no position curve */
} slanim_constraint_state;

/** One constraint of a playing motion in the last step (slanim_avatar_constraint_targets). */
typedef struct slanim_constraint_target {
    uint8_t motion_id[16]; /**< the motion the constraint belongs to */
    int32_t index;         /**< the constraint's position in the motion's file */
    int32_t source_joint;  /**< joint index of the source collision volume, -1 when unknown */
    int32_t target_joint;  /**< joint index of the target volume; -1 for GROUND */
    int32_t ground;        /**< 1: the target is the ground */
    int32_t plane;         /**< 1: a PLANE constraint, 0: a POINT constraint */
    int32_t state;         /**< slanim_constraint_state */
    int32_t reachable;     /**< the solver's verdict (APPLIED) */
    float weight;          /**< the final weight: reachability x the ease ramps */
    float source[3];       /**< the source point before solving; avatar-root frame, metres */
    float target[3];       /**< the target point; avatar-root frame, metres */
    float goal[3];         /**< lerp(source, target, weight) */
} slanim_constraint_target;

/**
 * The constraints of the motions evaluated in the last step (the IK feature's reports, as
 * `slanim view`'s constraint overlay shows them), oldest motion first (the order the
 * constraints were applied in), each motion's in file order. The points are meaningful for
 * the APPLIED, ZERO_WEIGHT and NO_POSITION states. `capacity`/`needed` count entries.
 * Errors: NULL_ARGUMENT, INVALID_HANDLE, BUFFER_TOO_SMALL.
 */
SLANIM_API slanim_status slanim_avatar_constraint_targets(const slanim_world* world, slanim_avatar avatar,
                                                          slanim_constraint_target* targets, size_t capacity,
                                                          size_t* needed);

/* ------------------------------------------------------------------------------------------ */
/* Appearance: visual params, wearables, skinned base meshes                                  */
/* ------------------------------------------------------------------------------------------ */

/**
 * Gives the avatar an appearance: the visual params of avatar_lad.xml, the hand poses and
 * emotes of its motions, and (when `skin` is non-zero) the CPU-skinned base meshes (.llm) of
 * its skeleton's character folder. The folder's model is loaded once per skeleton object and
 * shared. Errors: INVALID_HANDLE; UNSUPPORTED (the avatar's skeleton is the embedded default:
 * there is no mesh without a character folder); INVALID_DATA (avatar_lad.xml or an .llm it
 * lists is missing or malformed: the message names the file and the byte offset or line).
 * Calling it again replaces the appearance (weights back to their defaults).
 */
SLANIM_API slanim_status slanim_avatar_enable_appearance(slanim_world* world, slanim_avatar avatar, int skin);

/** A visual param's weight by id (avatar_lad.xml `id`). Errors: UNSUPPORTED (no appearance),
 *  NOT_FOUND (unknown id). */
SLANIM_API slanim_status slanim_avatar_get_visual_param(const slanim_world* world, slanim_avatar avatar,
                                                        int32_t id, float* weight);
/** Sets a visual param's weight (clamped to its [min, max]; a driver sets its driven params),
 *  applied in the next step. Errors: UNSUPPORTED, NOT_FOUND, OUT_OF_RANGE (NaN). */
SLANIM_API slanim_status slanim_avatar_set_visual_param(slanim_world* world, slanim_avatar avatar, int32_t id,
                                                        float weight);
/** A visual param's range and default weight (each output optional). */
SLANIM_API slanim_status slanim_avatar_visual_param_range(const slanim_world* world, slanim_avatar avatar,
                                                          int32_t id, float* min, float* max,
                                                          float* default_weight);

/**
 * Applies a wearable asset (LLWearable text, version 22) from bytes: a shape, skin, hair or
 * eyes wearable sets its params (LLWearable::writeToAvatar; a shape also sets the sex).
 * *applied (optional) receives the count of params set. Errors: UNSUPPORTED (no appearance, or
 * a clothing wearable: only body parts change the body), INVALID_DATA (with the line number).
 */
SLANIM_API slanim_status slanim_avatar_apply_wearable(slanim_world* world, slanim_avatar avatar, const char* text,
                                                      size_t size, int32_t* applied);

/** One skinned base mesh. */
typedef struct slanim_mesh_info {
    uint32_t vertex_count;
    uint32_t triangle_count;
    char type[64]; /**< avatar_lad.xml mesh type, e.g. "headMesh" (NUL-terminated) */
} slanim_mesh_info;

/** The number of skinned base meshes (0 when the appearance does not skin). */
SLANIM_API slanim_status slanim_avatar_mesh_count(const slanim_world* world, slanim_avatar avatar, int32_t* count);
/** Mesh `mesh`'s counts and type. Errors: UNSUPPORTED, OUT_OF_RANGE (mesh index). */
SLANIM_API slanim_status slanim_avatar_mesh_info(const slanim_world* world, slanim_avatar avatar, int32_t mesh,
                                                 slanim_mesh_info* info);
/**
 * The skinned vertices of mesh `mesh` after the last step: positions (3 floats each, metres,
 * avatar-root frame) and, when `normals` is not null, unit normals (3 floats each) into arrays
 * of `capacity` floats each; `needed` = 3 × vertex count.
 * Errors: NULL_ARGUMENT, INVALID_HANDLE, UNSUPPORTED, OUT_OF_RANGE, BUFFER_TOO_SMALL.
 */
SLANIM_API slanim_status slanim_avatar_mesh_vertices(const slanim_world* world, slanim_avatar avatar, int32_t mesh,
                                                     float* positions, float* normals, size_t capacity,
                                                     size_t* needed);
/** The triangles of mesh `mesh`: 3 vertex indices each; `needed` = 3 × triangle count. */
SLANIM_API slanim_status slanim_avatar_mesh_triangles(const slanim_world* world, slanim_avatar avatar,
                                                      int32_t mesh, uint32_t* indices, size_t capacity,
                                                      size_t* needed);

/* ------------------------------------------------------------------------------------------ */
/* Puppetry                                                                                   */
/* ------------------------------------------------------------------------------------------ */

/**
 * Hands one puppetry event block (the bytes of the LLSD binary event block a viewer receives
 * in a puppetry datagram, slanim/puppetry/event_block.hpp) to the avatar: buffered now,
 * decoded and played in the next step (LLPuppetMotion, priority 7, jitter buffer on the
 * world's clock). The block is copied. Malformed blocks are counted in the stats, not
 * reported here (as the viewer drops them). Errors: NULL_ARGUMENT, INVALID_HANDLE,
 * OUT_OF_RANGE (size 0 or above 255 bytes, the datagram format's block limit).
 */
SLANIM_API slanim_status slanim_avatar_puppetry_block(slanim_world* world, slanim_avatar avatar,
                                                      const uint8_t* block, size_t size);

typedef struct slanim_puppetry_stats {
    uint64_t blocks_received;
    uint64_t blocks_dropped;   /**< beyond the newest 5 per frame */
    uint64_t blocks_malformed;
    uint64_t samples_queued;
    uint64_t samples_unknown;  /**< joint ids that name no bone */
    int32_t active;            /**< the puppetry motion plays */
} slanim_puppetry_stats;

/** Counters of the avatar's puppetry stream (all 0 before its first block). */
SLANIM_API slanim_status slanim_avatar_puppetry_stats(const slanim_world* world, slanim_avatar avatar,
                                                      slanim_puppetry_stats* stats);

/* ========================================================================================== */
/* Joint attachment overrides                                                                 */
/* ========================================================================================== */
/*
 * The joint positions (and locked scales) a rigged mesh attachment imposes on the skeleton it
 * is worn on, with the viewer's rules (LLJoint::addAttachmentPosOverride and friends,
 * LLVOAvatar::addAttachmentOverridesForObject / removeAttachmentOverridesForObject /
 * clearAttachmentOverrides / resetSkeleton; docs/attachment-overrides.md). Per avatar, per
 * joint, overrides are keyed by the mesh's 16-byte UUID; the active one is the largest UUID
 * (bytes compared in order as unsigned values, LLUUID::operator<). They are written into the
 * avatar's local pose at once (its joint outputs reflect them before the next step); a motion
 * that animates a joint's position still wins, as in the viewer. Same thread rules as every
 * slanim_avatar_* call (not during slanim_world_step). Frames and units: local joint frames
 * (the joint's parent frame), metres; scales are unitless factors.
 */

/** One joint's override from one mesh (the translation of its alt_inverse_bind_matrix). */
typedef struct slanim_joint_override {
    int32_t joint;        /**< skeleton joint index, [0, joint count): bones, collision volumes,
                               attachment points (the viewer's getJoint finds all three) */
    int32_t has_position; /**< non-zero: `position` is given */
    float position[3];    /**< local position in the parent's frame, metres; applied only when it
                               differs from the joint's default position by more than 0.1 mm
                               (LLJoint::aboveJointPosThreshold) */
    int32_t has_scale;    /**< non-zero: `scale` is given */
    float scale[3];       /**< local scale factors, applied as given */
} slanim_joint_override;

/** An active override (LLVector3OverrideMap::findActiveOverride). */
typedef struct slanim_active_override {
    int32_t found;       /**< 1 when some mesh overrides it, else 0 (the other fields are 0) */
    uint32_t count;      /**< how many meshes override it */
    float value[3];      /**< position (metres), scale, or (0, 0, fix-up metres) for the pelvis */
    uint8_t mesh_id[16]; /**< the winning mesh (the largest UUID) */
} slanim_active_override;

/**
 * LLVOAvatar::addAttachmentOverridesForObject for one mesh `mesh_id` (16 bytes, not the null
 * UUID): for each of the `count` entries in order, a position above the threshold becomes the
 * joint's position override of the mesh (its first override saves the joint's current local
 * position, restored when the last one goes), then, when `lock_scale_if_joint_position` is
 * non-zero, a scale override of the joint's default scale; a given scale becomes a scale
 * override. A non-zero `pelvis_offset` (metres along Z, the skin's `pelvis_offset`) adds a
 * pelvis fix-up keyed by the mesh (slanim_avatar_pelvis_fixup). The mesh then counts as
 * applied even when no entry passed the threshold. `overrides` may be null when count is 0.
 * Nothing changes on error.
 * Errors: NULL_ARGUMENT (mesh_id; overrides with count > 0), INVALID_HANDLE; OUT_OF_RANGE (the
 * null UUID, a joint index out of range, a non-finite position, scale or pelvis offset, the
 * avatar already has 65535 meshes applied); ALREADY_EXISTS (this mesh's overrides are already
 * applied: the viewer skips such a mesh; remove it first to change them).
 */
SLANIM_API slanim_status slanim_avatar_add_attachment_overrides(slanim_world* world, slanim_avatar avatar,
                                                                const uint8_t* mesh_id,
                                                                const slanim_joint_override* overrides,
                                                                size_t count, int lock_scale_if_joint_position,
                                                                float pelvis_offset);

/** LLSD text encodings accepted by slanim_avatar_add_attachment_overrides_from_skin. */
typedef enum slanim_llsd_format {
    SLANIM_LLSD_XML = 0,     /**< LLSD XML (<llsd><map>...</map></llsd>, LLSDXMLParser) */
    SLANIM_LLSD_NOTATION = 1 /**< LLSD notation ({'joint_names':[...], ...}, LLSDNotationParser) */
} slanim_llsd_format;

/**
 * The same from a mesh's skin info (LLMeshSkinInfo::fromLLSD, then the loop of
 * addAttachmentOverridesForObject): `skin` is the skin block's LLSD map as text (`size` bytes,
 * in `format`) with `joint_names` (array of strings) and optionally `alt_inverse_bind_matrix`
 * (one array of 16 reals per joint, row-major: the translation, elements 12, 13, 14, is the
 * joint's local position), `pelvis_offset` (real) and `lock_scale_if_joint_position`
 * (boolean). Joint names resolve as the viewer's getJoint; unknown names are skipped and
 * counted in *unknown_joints (optional). No alternate matrices: no joint overrides (the mesh
 * still counts as applied). *joints (optional) receives the number of joint entries used.
 * The mesh asset's own encoding (zlib-compressed binary LLSD) is not read here: the host
 * decodes it and passes the skin map as XML or notation.
 * Errors: as slanim_avatar_add_attachment_overrides, plus NULL_ARGUMENT (skin with size > 0),
 * OUT_OF_RANGE (format), INVALID_DATA (malformed LLSD, a missing or mistyped field, a matrix
 * count different from the joint-name count: the message names the LLSD path).
 */
SLANIM_API slanim_status slanim_avatar_add_attachment_overrides_from_skin(slanim_world* world, slanim_avatar avatar,
                                                                          const uint8_t* mesh_id, const char* skin,
                                                                          size_t size, int32_t format,
                                                                          int32_t* joints, int32_t* unknown_joints);

/**
 * LLVOAvatar::removeAttachmentOverridesForObject: drops the mesh's position and scale
 * overrides of every joint (each joint gets the new active value, or the value saved before
 * its first override) and its pelvis fix-up, then sets the pelvis's local position to 0 (the
 * viewer's SL-315 step). Errors: NULL_ARGUMENT, INVALID_HANDLE, OUT_OF_RANGE (null UUID),
 * NOT_FOUND (the mesh's overrides are not applied; nothing changed).
 */
SLANIM_API slanim_status slanim_avatar_remove_attachment_overrides(slanim_world* world, slanim_avatar avatar,
                                                                   const uint8_t* mesh_id);
/** LLVOAvatar::clearAttachmentOverrides: every joint gets its value from before its overrides;
 *  pelvis fix-ups are dropped. OK also when there was nothing to clear. Errors: INVALID_HANDLE. */
SLANIM_API slanim_status slanim_avatar_clear_attachment_overrides(slanim_world* world, slanim_avatar avatar);
/**
 * LLVOAvatar::resetSkeleton(false) for the joints: every joint's local position, rotation and
 * scale back to the rest pose (plus the avatar's skeletal visual params when it has an
 * appearance), then every applied override again on top. Undoes positions an animation left
 * behind. Motions keep playing. Errors: INVALID_HANDLE.
 */
SLANIM_API slanim_status slanim_avatar_reset_skeleton(slanim_world* world, slanim_avatar avatar);

/** The active position override of `joint` (hasAttachmentPosOverride): out->found = 0 when
 *  none. Errors: NULL_ARGUMENT, INVALID_HANDLE, OUT_OF_RANGE (joint). */
SLANIM_API slanim_status slanim_avatar_active_position_override(const slanim_world* world, slanim_avatar avatar,
                                                                int32_t joint, slanim_active_override* out);
/** The active scale override of `joint` (hasAttachmentScaleOverride). As above. */
SLANIM_API slanim_status slanim_avatar_active_scale_override(const slanim_world* world, slanim_avatar avatar,
                                                             int32_t joint, slanim_active_override* out);
/**
 * The active pelvis fix-up (hasPelvisFixup): value = (0, 0, fix-up metres). The viewer adds it
 * to the avatar's render position along Z (LLVOAvatar::getRenderPosition); slanim does not
 * place avatars in the world, so the host adds it. Errors: NULL_ARGUMENT, INVALID_HANDLE.
 */
SLANIM_API slanim_status slanim_avatar_pelvis_fixup(const slanim_world* world, slanim_avatar avatar,
                                                    slanim_active_override* out);
/**
 * The meshes whose overrides are applied (mActiveOverrideMeshes), in the order added: 16 bytes
 * each into `mesh_ids`; `capacity` and `needed` count bytes (16 × meshes).
 * Errors: NULL_ARGUMENT, INVALID_HANDLE, BUFFER_TOO_SMALL.
 */
SLANIM_API slanim_status slanim_avatar_attachment_override_meshes(const slanim_world* world, slanim_avatar avatar,
                                                                  uint8_t* mesh_ids, size_t capacity, size_t* needed);
/**
 * LLAvatarAppearance::computeBodySize on the avatar's current local pose: pelvis-to-foot height
 * (mPelvisToFoot) and body height (mBodySize.mV[VZ]), metres; each output optional. 0 for a
 * skeleton missing one of the bones it reads. The viewer places the avatar root at render
 * position + hover − (0.5 · height − pelvis_to_foot). Errors: INVALID_HANDLE.
 */
SLANIM_API slanim_status slanim_avatar_body_size(const slanim_world* world, slanim_avatar avatar,
                                                 float* pelvis_to_foot, float* height);

/* ========================================================================================== */
/* Procedural motions: breathe, body noise, head and eye look-at                              */
/* ========================================================================================== */
/*
 * The viewer's always-on procedural motions (LLVOAvatar::startDefaultMotions;
 * docs/procedural-motions.md): breathe (LLBreatheMotionRot: mChest), body noise
 * (LLBodyNoiseMotion: mTorso, additive), head rot (LLHeadRotMotion: mTorso, mNeck, mHead toward
 * the look-at target) and eye (LLEyeMotion: saccades, look-aways, blinks — the Blink_Left /
 * Blink_Right visual params when the avatar has an appearance — and the eyes toward the target).
 * All off for a new avatar. Their random numbers come from a per-avatar seed: results are
 * deterministic and identical for every thread count.
 */

#define SLANIM_PROCEDURAL_BREATHE    0x1u
#define SLANIM_PROCEDURAL_BODY_NOISE 0x2u
#define SLANIM_PROCEDURAL_HEAD_ROT   0x4u
#define SLANIM_PROCEDURAL_EYE        0x8u
#define SLANIM_PROCEDURAL_ALL        0xFu

/**
 * Starts the procedural motions in `flags` (SLANIM_PROCEDURAL_* ORed) that are not running and
 * stops the others (they ease out), in the viewer's start order. 0 stops all.
 * Errors: INVALID_HANDLE; OUT_OF_RANGE (a bit outside SLANIM_PROCEDURAL_ALL; nothing changed);
 * UNSUPPORTED (the avatar's skeleton lacks a requested motion's joints: the message names it;
 * the rest of `flags` is applied).
 */
SLANIM_API slanim_status slanim_avatar_set_procedural_motions(slanim_world* world, slanim_avatar avatar,
                                                              uint32_t flags);

/** How slanim_avatar_set_look_at's target is given. */
typedef enum slanim_look_at_frame {
    /** A point in the avatar-root frame (metres, X forward, Y left, Z up; the pelvis rests at
     *  the origin): each frame the head's position is subtracted, as
     *  LLHUDEffectLookAt::calcTargetPosition does. A host with region coordinates converts
     *  first: p_root = (p_region − root position) rotated by the inverse root rotation. */
    SLANIM_LOOK_AT_AVATAR_ROOT = 0,
    /** The viewer's "LookAtPoint" itself: the vector from the head joint to the target,
     *  avatar-root axes, metres. */
    SLANIM_LOOK_AT_HEAD_OFFSET = 1
} slanim_look_at_frame;

/**
 * The avatar's look-at target (LLCharacter::setAnimationData("LookAtPoint")), read by the head
 * and eye motions and by custom motions (slanim_custom_frame.look_at). `target`: 3 floats.
 * Errors: NULL_ARGUMENT, INVALID_HANDLE, OUT_OF_RANGE (frame, a non-finite coordinate).
 */
SLANIM_API slanim_status slanim_avatar_set_look_at(slanim_world* world, slanim_avatar avatar, const float* target,
                                                   int32_t frame);
/** No target (removeAnimationData("LookAtPoint")): the head follows the root, the eyes look
 *  ahead. Errors: INVALID_HANDLE. */
SLANIM_API slanim_status slanim_avatar_clear_look_at(slanim_world* world, slanim_avatar avatar);

/* ========================================================================================== */
/* Custom motions (C callbacks)                                                               */
/* ========================================================================================== */
/*
 * A custom motion is a motion whose joint states the host computes each frame (the viewer's
 * LLMotion subclasses): registered in a world under a 16-byte motion id for one skeleton, then
 * started, stopped and queried by id with slanim_avatar_start_motion / slanim_avatar_stop_motion
 * / slanim_avatar_is_motion_active, like a cached .anim. The controller applies every rule of
 * a motion to it: ease in/out, stop and deprecation (restarting an easing instance makes a
 * fresh one), LOD fade below min_pixel_area, joint signatures (a fully weighted instance whose
 * joints are all covered by newer motions of higher or equal priority is not updated), then the
 * per-joint priority blend, NORMAL or ADDITIVE, as for keyframe motions.
 *
 * Callbacks and threads (read this):
 *  - update() runs during slanim_world_step on one of the world's worker threads (the calling
 *    thread when the world has threads = 1): for one instance, one call at a time; instances of
 *    different avatars run concurrently on different threads. It must not call any slanim
 *    function on that world, and must lock whatever it shares between instances.
 *  - create() runs on the thread calling slanim_avatar_start_motion. destroy() runs when the
 *    instance is freed: on a worker thread during slanim_world_step, or on the thread calling
 *    slanim_avatar_stop_motion / _stop_all_motions / _destroy, slanim_world_destroy.
 *  - `user` (and whatever it points to) must stay valid until the world is destroyed: instances
 *    may outlive slanim_world_unregister_custom_motion (playing ones keep playing).
 *  - A callback must not let an exception or a longjmp cross it.
 */

/** Joint channels (the .anim usage bits). */
#define SLANIM_USAGE_POSITION 0x1u
#define SLANIM_USAGE_ROTATION 0x2u
#define SLANIM_USAGE_SCALE    0x4u

/** One joint a custom motion drives (LLMotion::addJointState). */
typedef struct slanim_custom_joint {
    int32_t joint;    /**< skeleton joint index; each joint at most once per motion */
    uint32_t usage;   /**< SLANIM_USAGE_* ORed, at least one. Note (viewer rule): joint
                           signatures ignore scale */
    int32_t priority; /**< this joint's priority 0 (LOW) … 6, or -1: the motion's priority */
} slanim_custom_joint;

#define SLANIM_BLEND_NORMAL 0
#define SLANIM_BLEND_ADDITIVE 1

/**
 * What update() gets besides its joint states. Valid during the call only.
 * The avatar's pose is the one the last step left (before this frame's blend), indexed by
 * skeleton joint: local (parent frame) and model (avatar-root frame) rotations (4 floats x y z w
 * each) and positions (3 floats each); null when not available.
 */
typedef struct slanim_custom_frame {
    float time;       /**< seconds since activation (onUpdate's time), >= 0 */
    float dt;         /**< this frame's step for the avatar, seconds (after the time factor) */
    float weight;     /**< the instance's pose weight this frame, [0, 1], for information */
    int32_t has_look_at; /**< 1 when the avatar has a look-at target */
    float look_at[3]; /**< the vector from the head joint to the target, metres, avatar-root
                           axes (the viewer's "LookAtPoint"); zeros when has_look_at is 0 */
    int32_t skeleton_joint_count;  /**< joints of the skeleton (length of the pose arrays) */
    const float* local_rotations;  /**< 4 × skeleton_joint_count */
    const float* local_positions;  /**< 3 × skeleton_joint_count */
    const float* model_rotations;  /**< 4 × skeleton_joint_count */
    const float* model_positions;  /**< 3 × skeleton_joint_count */
    int32_t joint_count; /**< the motion's joints (length of the state arrays) */
    uint64_t avatar;     /**< the avatar's slanim_avatar handle (an identifier only: see the
                              thread rules) */
} slanim_custom_frame;

/** Creates one instance (the viewer's registry makes one LLMotion per avatar and per restart).
 *  `seed`: per-avatar, per-start value for deterministic random numbers. May return null (a
 *  stateless motion): the pointer is only handed back to update and destroy. */
typedef void* (*slanim_custom_create_fn)(void* user, uint64_t seed);
/** Frees an instance made by create (optional; called also for a null instance). */
typedef void (*slanim_custom_destroy_fn)(void* user, void* instance);
/**
 * Writes this frame's joint states (onUpdate): `rotations` (4 floats per motion joint, local,
 * x y z w), `positions` (3 floats, metres, parent frame), `scales` (3 floats, null when no
 * joint uses SLANIM_USAGE_SCALE), indexed like the description's joints. They hold what the
 * instance wrote last frame (first: identity, zero, one). Only the channels in each joint's
 * usage are blended. Return non-zero to keep running, 0 to stop (the motion eases out; the
 * states written are still blended this frame).
 */
typedef int (*slanim_custom_update_fn)(void* user, void* instance, const slanim_custom_frame* frame,
                                       float* rotations, float* positions, float* scales);

/** A custom motion's fixed properties (LLMotion's virtual getters) and callbacks. */
typedef struct slanim_custom_motion_desc {
    const slanim_custom_joint* joints; /**< copied at registration */
    size_t joint_count;                /**< >= 1 */
    int32_t priority;    /**< getPriority(): 0 (LOW) … 6. Default 1 */
    int32_t blend_type;  /**< SLANIM_BLEND_NORMAL (default) or SLANIM_BLEND_ADDITIVE */
    float ease_in;       /**< seconds, finite, >= 0. Default 0 */
    float ease_out;      /**< seconds, finite, >= 0. Default 0 */
    int32_t loop;        /**< getLoop(), 0 or 1. Default 1 */
    float duration;      /**< seconds, finite, >= 0; 0 = runs until stopped or update returns 0;
                              a non-looping motion with a duration eases out at
                              duration − ease_out. Default 0 */
    float min_pixel_area; /**< LOD fade threshold, pixels² (slanim_avatar_set_pixel_area), finite,
                               >= 0. Default 40 */
    int32_t can_deprecate; /**< canDeprecate(), 0 or 1. Default 1 */
    slanim_custom_create_fn create;   /**< optional (null: every instance is null) */
    slanim_custom_destroy_fn destroy; /**< optional */
    slanim_custom_update_fn update;   /**< required */
    void* user;                       /**< passed to every callback; see the lifetime rule */
} slanim_custom_motion_desc;

/** Fills `desc` with the defaults above (no joints, no callbacks). Errors: NULL_ARGUMENT. */
SLANIM_API slanim_status slanim_custom_motion_desc_init(slanim_custom_motion_desc* desc);

/**
 * Registers a custom motion in `world` under `motion_id` (16 bytes) for avatars of `skeleton`
 * (an avatar of another skeleton object is accepted when its skeleton has the same joints, by
 * count and name). The description and its joints are copied.
 * Errors: NULL_ARGUMENT (world, motion_id, skeleton, desc, desc->update, desc->joints),
 * INVALID_HANDLE; OUT_OF_RANGE (a field outside its range; a joint index out of range or
 * repeated, empty or unknown usage bits, a joint priority outside -1..6: the message names the
 * entry); ALREADY_EXISTS (the id is a registered custom motion or a motion in the cache:
 * custom and .anim ids share one space).
 */
SLANIM_API slanim_status slanim_world_register_custom_motion(slanim_world* world, const uint8_t* motion_id,
                                                             const slanim_skeleton* skeleton,
                                                             const slanim_custom_motion_desc* desc);
/**
 * Forgets a custom motion id: later starts fail with NOT_FOUND; playing instances keep
 * playing (stop them first to end them) and still answer stop / is_active by id until the
 * avatar starts another motion under that id. Errors: NULL_ARGUMENT, INVALID_HANDLE, NOT_FOUND.
 */
SLANIM_API slanim_status slanim_world_unregister_custom_motion(slanim_world* world, const uint8_t* motion_id);
/** *registered = 1 when `motion_id` is a registered custom motion of the world, else 0. */
SLANIM_API slanim_status slanim_world_has_custom_motion(const slanim_world* world, const uint8_t* motion_id,
                                                        int* registered);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SLANIM_SLANIM_H */
