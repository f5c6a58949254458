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
    SLANIM_ERROR_INTERNAL = 10          /**< an unexpected failure (a bug: please report) */
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
 * LLMotionController::startMotion(id, start_offset): starts the cached motion `motion_id`,
 * `start_offset` seconds in (finite, >= 0). A motion already fully playing keeps playing; one
 * easing out restarts. While the avatar's instance of `motion_id` is active it is the motion
 * started, even if the cache entry was replaced or unloaded meanwhile.
 * Errors: INVALID_HANDLE, NOT_FOUND (not in the cache), OUT_OF_RANGE.
 */
SLANIM_API slanim_status slanim_avatar_start_motion(slanim_world* world, slanim_avatar avatar,
                                                    const uint8_t* motion_id, float start_offset);
/**
 * stopMotionLocally(id, immediate): the motion eases out (a looping one finishes its loop as
 * the viewer's setStopTime says); `immediate` non-zero deactivates it at once. Stopping a
 * motion that does not play is not an error. The id finds the motion this avatar last started
 * under it, even after the cache entry was replaced or unloaded. Errors: INVALID_HANDLE,
 * NOT_FOUND (neither in the cache nor ever started on this avatar).
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
/* RESERVED for the coordinator (issue 12, other points): joint attachment overrides,         */
/* procedural motions (breathe, body noise, head/eye look-at) and the custom-motion interface */
/* are added here, after this line, with the same conventions (slanim_status, checked         */
/* handles, caller-owned buffers with capacity and needed).                                   */
/* ========================================================================================== */

/* ========================================================================================== */
/* END of the reserved section                                                                */
/* ========================================================================================== */

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SLANIM_SLANIM_H */
