/* SPDX-License-Identifier: MIT */
/*
 * The C API from C: this translation unit is compiled as C11 with -Wall -Wextra -Werror
 * -pedantic and linked against libslanim.so only. It calls every function of slanim.h with bad
 * input (null pointers, stale and foreign handles, short buffers, out-of-range values, malformed
 * bytes) and checks the status and that a message is set, then plays a real motion.
 *
 * Usage: slanim_capi_c_test [SHARED_DIR]   (default: the build's SLANIM_SHARED_DIR). The parts
 * that need ../shared print "SKIPPED: ..." when it is absent; the rest always runs.
 */
#include <slanim/slanim.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_failures = 0;
static int g_checks = 0;

#define CHECK(cond)                                                                                  \
    do {                                                                                             \
        ++g_checks;                                                                                  \
        if (!(cond)) {                                                                               \
            fprintf(stderr, "%s:%d: CHECK failed: %s (last error: %s)\n", __FILE__, __LINE__, #cond, \
                    slanim_last_error());                                                            \
            ++g_failures;                                                                            \
        }                                                                                            \
    } while (0)

/* The call returns `expected`; an error status must come with a message naming the function. */
#define EXPECT_STATUS(expected, call)                                                                  \
    do {                                                                                               \
        slanim_status st_ = (call);                                                                    \
        ++g_checks;                                                                                    \
        if (st_ != (expected)) {                                                                       \
            fprintf(stderr, "%s:%d: %s returned %s, expected %s (last error: %s)\n", __FILE__, __LINE__, \
                    #call, slanim_status_name(st_), slanim_status_name(expected), slanim_last_error());  \
            ++g_failures;                                                                              \
        } else if (st_ != SLANIM_OK && strncmp(slanim_last_error(), "slanim_", 7) != 0) {              \
            fprintf(stderr, "%s:%d: %s: no message naming the function: '%s'\n", __FILE__, __LINE__,    \
                    #call, slanim_last_error());                                                       \
            ++g_failures;                                                                              \
        }                                                                                              \
    } while (0)

#define EXPECT_OK(call) EXPECT_STATUS(SLANIM_OK, call)

static const uint8_t kDanceId[16] = {0xb6, 0x8a, 0x30, 0x88, 0x7d, 0x3e, 0x43, 0x0a,
                                     0x93, 0x59, 0x69, 0xf9, 0x58, 0x75, 0x08, 0x5a};
static const uint8_t kOtherId[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

static uint8_t* read_file(const char* path, size_t* size) {
    FILE* f = fopen(path, "rb");
    uint8_t* data = NULL;
    long n;
    if (!f) return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0) {
        data = (uint8_t*)malloc((size_t)n);
        if (data && fread(data, 1, (size_t)n, f) != (size_t)n) {
            free(data);
            data = NULL;
        }
        *size = (size_t)n;
    }
    fclose(f);
    return data;
}

static void test_version_and_status(void) {
    CHECK(strcmp(slanim_version(), SLANIM_VERSION_STRING) == 0);
    CHECK(slanim_version_number() == SLANIM_VERSION);
    CHECK(strcmp(slanim_status_name(SLANIM_ERROR_BUFFER_TOO_SMALL), "SLANIM_ERROR_BUFFER_TOO_SMALL") == 0);
    CHECK(strcmp(slanim_status_name(999), "unknown status") == 0);
    CHECK(slanim_last_error() != NULL);
}

static void test_skeleton(void) {
    slanim_skeleton* s = NULL;
    int32_t n = 0, idx = 0, parent = 0;
    char name[64];
    size_t needed = 0;
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_skeleton_default(NULL));
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_skeleton_load(NULL, &s));
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_skeleton_load("/nonexistent", NULL));
    EXPECT_STATUS(SLANIM_ERROR_IO, slanim_skeleton_load("/nonexistent-slanim-folder", &s));
    CHECK(s == NULL);
    EXPECT_OK(slanim_skeleton_default(&s));
    EXPECT_OK(slanim_skeleton_joint_count(s, &n));
    CHECK(n == 133 + 26 + 55);
    EXPECT_OK(slanim_skeleton_bone_count(s, &n));
    CHECK(n == 133);
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_skeleton_joint_count(NULL, &n));
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_skeleton_joint_count(s, NULL));
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_skeleton_bone_count(NULL, &n));
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_skeleton_bone_count(s, NULL));
    EXPECT_OK(slanim_skeleton_find_joint(s, "rHand", &idx)); /* a BVH alias */
    EXPECT_OK(slanim_skeleton_joint_name(s, idx, name, sizeof name, &needed));
    CHECK(strcmp(name, "mWristRight") == 0);
    CHECK(needed == strlen("mWristRight") + 1);
    EXPECT_STATUS(SLANIM_ERROR_NOT_FOUND, slanim_skeleton_find_joint(s, "no such joint", &idx));
    CHECK(idx == -1);
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_skeleton_find_joint(s, NULL, &idx));
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_skeleton_find_joint(NULL, "mPelvis", &idx));
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_skeleton_find_joint(s, "mPelvis", NULL));
    /* Short buffers: nothing written, needed set. */
    needed = 0;
    strcpy(name, "untouched");
    EXPECT_STATUS(SLANIM_ERROR_BUFFER_TOO_SMALL, slanim_skeleton_joint_name(s, 0, name, 7, &needed));
    CHECK(needed == strlen("mPelvis") + 1);
    CHECK(strcmp(name, "untouched") == 0);
    EXPECT_STATUS(SLANIM_ERROR_BUFFER_TOO_SMALL, slanim_skeleton_joint_name(s, 0, NULL, 0, &needed));
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_skeleton_joint_name(s, 0, name, sizeof name, NULL));
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_skeleton_joint_name(s, 0, NULL, sizeof name, &needed));
    EXPECT_STATUS(SLANIM_ERROR_OUT_OF_RANGE, slanim_skeleton_joint_name(s, -1, name, sizeof name, &needed));
    EXPECT_STATUS(SLANIM_ERROR_OUT_OF_RANGE, slanim_skeleton_joint_name(s, 214, name, sizeof name, &needed));
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_skeleton_joint_name(NULL, 0, name, sizeof name, &needed));
    EXPECT_OK(slanim_skeleton_joint_parent(s, 0, &parent));
    CHECK(parent == -1);
    EXPECT_OK(slanim_skeleton_find_joint(s, "mWristRight", &idx));
    EXPECT_OK(slanim_skeleton_joint_parent(s, idx, &parent));
    CHECK(parent >= 0);
    EXPECT_STATUS(SLANIM_ERROR_OUT_OF_RANGE, slanim_skeleton_joint_parent(s, 100000, &parent));
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_skeleton_joint_parent(s, 0, NULL));
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_skeleton_joint_parent(NULL, 0, &parent));
    slanim_skeleton_release(s);
    slanim_skeleton_release(NULL);
}

static void test_world_and_avatars(void) {
    slanim_world* w = NULL;
    slanim_world* other = NULL;
    slanim_skeleton* s = NULL;
    slanim_avatar a = SLANIM_NULL_AVATAR, b = SLANIM_NULL_AVATAR, c = SLANIM_NULL_AVATAR, foreign = SLANIM_NULL_AVATAR;
    int flag = -1;
    int32_t n = 0;
    float buf[16 * 214];
    size_t needed = 0;
    uint8_t garbage[64];
    slanim_puppetry_stats ps;
    memset(garbage, 0x5a, sizeof garbage);

    EXPECT_STATUS(SLANIM_ERROR_OUT_OF_RANGE, slanim_world_create(-1, &w));
    EXPECT_STATUS(SLANIM_ERROR_OUT_OF_RANGE, slanim_world_create(257, &w));
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_world_create(1, NULL));
    CHECK(w == NULL);
    EXPECT_OK(slanim_world_create(2, &w));
    EXPECT_OK(slanim_world_create(1, &other));
    EXPECT_OK(slanim_skeleton_default(&s));

    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_world_step(NULL, 0.f));
    EXPECT_STATUS(SLANIM_ERROR_OUT_OF_RANGE, slanim_world_step(w, -0.1f));
    EXPECT_STATUS(SLANIM_ERROR_OUT_OF_RANGE, slanim_world_step(w, NAN));
    EXPECT_STATUS(SLANIM_ERROR_OUT_OF_RANGE, slanim_world_step(w, INFINITY));
    EXPECT_OK(slanim_world_step(w, 0.f));

    /* The motion cache. */
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_world_load_motion(NULL, kOtherId, garbage, sizeof garbage));
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_world_load_motion(w, NULL, garbage, sizeof garbage));
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_world_load_motion(w, kOtherId, NULL, 10));
    EXPECT_STATUS(SLANIM_ERROR_INVALID_DATA, slanim_world_load_motion(w, kOtherId, garbage, 0));
    EXPECT_STATUS(SLANIM_ERROR_INVALID_DATA, slanim_world_load_motion(w, kOtherId, garbage, sizeof garbage));
    CHECK(strstr(slanim_last_error(), "at byte") != NULL); /* the .anim reader's byte offset */
    EXPECT_OK(slanim_world_has_motion(w, kOtherId, &flag));
    CHECK(flag == 0);
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_world_has_motion(w, kOtherId, NULL));
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_world_has_motion(w, NULL, &flag));
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_world_has_motion(NULL, kOtherId, &flag));
    EXPECT_STATUS(SLANIM_ERROR_NOT_FOUND, slanim_world_unload_motion(w, kOtherId));
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_world_unload_motion(w, NULL));
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_world_unload_motion(NULL, kOtherId));

    /* Avatars and stale handles. */
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_avatar_create(w, NULL, &a));
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_avatar_create(NULL, s, &a));
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_avatar_create(w, s, NULL));
    EXPECT_OK(slanim_avatar_create(w, s, &a));
    EXPECT_OK(slanim_avatar_create(other, s, &foreign));
    CHECK(a != SLANIM_NULL_AVATAR);
    CHECK(slanim_avatar_valid(w, a) == 1);
    CHECK(slanim_avatar_valid(NULL, a) == 0);
    CHECK(slanim_avatar_valid(w, foreign) == 0);
    CHECK(slanim_avatar_valid(w, SLANIM_NULL_AVATAR) == 0);
    EXPECT_OK(slanim_avatar_joint_count(w, a, &n));
    CHECK(n == 214);
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_avatar_joint_count(w, a, NULL));
    EXPECT_STATUS(SLANIM_ERROR_INVALID_HANDLE, slanim_avatar_joint_count(w, foreign, &n));
    EXPECT_STATUS(SLANIM_ERROR_INVALID_HANDLE, slanim_avatar_joint_count(w, SLANIM_NULL_AVATAR, &n));
    EXPECT_STATUS(SLANIM_ERROR_INVALID_HANDLE, slanim_avatar_joint_count(w, a + 12345, &n));

    /* Outputs: short buffers. */
    needed = 0;
    EXPECT_STATUS(SLANIM_ERROR_BUFFER_TOO_SMALL, slanim_avatar_joint_transforms(w, a, buf, 10, &needed));
    CHECK(needed == 7u * 214u);
    EXPECT_STATUS(SLANIM_ERROR_BUFFER_TOO_SMALL, slanim_avatar_joint_transforms(w, a, NULL, 0, &needed));
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_avatar_joint_transforms(w, a, NULL, 7u * 214u, &needed));
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_avatar_joint_transforms(w, a, buf, sizeof buf / sizeof *buf, NULL));
    EXPECT_OK(slanim_avatar_joint_transforms(w, a, buf, sizeof buf / sizeof *buf, &needed));
    CHECK(buf[0] == 0.f && buf[1] == 0.f && buf[2] == 0.f && buf[6] == 1.f); /* pelvis at the root, rest */
    EXPECT_STATUS(SLANIM_ERROR_BUFFER_TOO_SMALL, slanim_avatar_joint_matrices(w, a, buf, 16u * 214u - 1u, &needed));
    CHECK(needed == 16u * 214u);
    EXPECT_OK(slanim_avatar_joint_matrices(w, a, buf, sizeof buf / sizeof *buf, &needed));
    CHECK(buf[0] == 1.f && buf[5] == 1.f && buf[10] == 1.f && buf[15] == 1.f && buf[12] == 0.f);

    /* Motion control with bad input. */
    EXPECT_STATUS(SLANIM_ERROR_NOT_FOUND, slanim_avatar_start_motion(w, a, kOtherId, 0.f));
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_avatar_start_motion(w, a, NULL, 0.f));
    EXPECT_STATUS(SLANIM_ERROR_NOT_FOUND, slanim_avatar_stop_motion(w, a, kOtherId, 0));
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_avatar_stop_motion(w, a, NULL, 0));
    EXPECT_STATUS(SLANIM_ERROR_NOT_FOUND, slanim_avatar_is_motion_active(w, a, kOtherId, &flag));
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_avatar_is_motion_active(w, a, kOtherId, NULL));
    EXPECT_OK(slanim_avatar_stop_all_motions(w, a, 1));
    EXPECT_STATUS(SLANIM_ERROR_OUT_OF_RANGE, slanim_avatar_set_time_factor(w, a, -1.f));
    EXPECT_STATUS(SLANIM_ERROR_OUT_OF_RANGE, slanim_avatar_set_time_factor(w, a, NAN));
    EXPECT_STATUS(SLANIM_ERROR_OUT_OF_RANGE, slanim_avatar_set_time_factor(w, a, 1000.f));
    EXPECT_OK(slanim_avatar_set_time_factor(w, a, 1.f));
    EXPECT_STATUS(SLANIM_ERROR_OUT_OF_RANGE, slanim_avatar_set_pixel_area(w, a, -1.f));
    EXPECT_STATUS(SLANIM_ERROR_OUT_OF_RANGE, slanim_avatar_set_pixel_area(w, a, INFINITY));
    EXPECT_OK(slanim_avatar_set_pixel_area(w, a, 5000.f));
    EXPECT_OK(slanim_avatar_set_paused(w, a, 0));
    EXPECT_OK(slanim_avatar_set_visible(w, a, 1));

    /* Appearance on the embedded skeleton: unsupported, never a crash. */
    EXPECT_STATUS(SLANIM_ERROR_UNSUPPORTED, slanim_avatar_enable_appearance(w, a, 1));
    EXPECT_STATUS(SLANIM_ERROR_UNSUPPORTED, slanim_avatar_get_visual_param(w, a, 33, buf));
    EXPECT_STATUS(SLANIM_ERROR_UNSUPPORTED, slanim_avatar_set_visual_param(w, a, 33, 0.5f));
    EXPECT_STATUS(SLANIM_ERROR_UNSUPPORTED, slanim_avatar_visual_param_range(w, a, 33, NULL, NULL, NULL));
    EXPECT_STATUS(SLANIM_ERROR_UNSUPPORTED, slanim_avatar_apply_wearable(w, a, "x", 1, NULL));
    EXPECT_STATUS(SLANIM_ERROR_UNSUPPORTED, slanim_avatar_mesh_count(w, a, &n));
    {
        slanim_mesh_info mi;
        uint32_t idx[3];
        EXPECT_STATUS(SLANIM_ERROR_UNSUPPORTED, slanim_avatar_mesh_info(w, a, 0, &mi));
        EXPECT_STATUS(SLANIM_ERROR_UNSUPPORTED, slanim_avatar_mesh_vertices(w, a, 0, buf, NULL, 3, &needed));
        EXPECT_STATUS(SLANIM_ERROR_UNSUPPORTED, slanim_avatar_mesh_triangles(w, a, 0, idx, 3, &needed));
    }

    /* Puppetry blocks: sizes checked, malformed blocks counted (as the viewer drops them). */
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_avatar_puppetry_block(w, a, NULL, 4));
    EXPECT_STATUS(SLANIM_ERROR_OUT_OF_RANGE, slanim_avatar_puppetry_block(w, a, garbage, 0));
    EXPECT_STATUS(SLANIM_ERROR_OUT_OF_RANGE, slanim_avatar_puppetry_block(w, a, garbage, 256));
    EXPECT_OK(slanim_avatar_puppetry_stats(w, a, &ps));
    CHECK(ps.blocks_received == 0);
    EXPECT_OK(slanim_avatar_puppetry_block(w, a, garbage, sizeof garbage));
    EXPECT_OK(slanim_world_step(w, 1.f / 30.f));
    EXPECT_OK(slanim_avatar_puppetry_stats(w, a, &ps));
    CHECK(ps.blocks_received == 1 && ps.blocks_malformed == 1 && ps.active == 0);
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_avatar_puppetry_stats(w, a, NULL));

    /* A null world, and an object of the wrong kind where a world is expected. */
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_avatar_destroy(NULL, a));
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_avatar_start_motion(NULL, a, kOtherId, 0.f));
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_avatar_stop_motion(NULL, a, kOtherId, 0));
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_avatar_is_motion_active(NULL, a, kOtherId, &flag));
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_avatar_stop_all_motions(NULL, a, 0));
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_avatar_set_time_factor(NULL, a, 1.f));
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_avatar_set_paused(NULL, a, 1));
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_avatar_set_pixel_area(NULL, a, 1.f));
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_avatar_set_visible(NULL, a, 1));
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_avatar_joint_count(NULL, a, &n));
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_avatar_joint_transforms(NULL, a, buf, 7u * 214u, &needed));
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_avatar_joint_matrices(NULL, a, buf, 16u * 214u, &needed));
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_avatar_enable_appearance(NULL, a, 1));
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_avatar_get_visual_param(NULL, a, 33, buf));
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_avatar_set_visual_param(NULL, a, 33, 0.f));
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_avatar_visual_param_range(NULL, a, 33, NULL, NULL, NULL));
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_avatar_apply_wearable(NULL, a, "x", 1, NULL));
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_avatar_mesh_count(NULL, a, &n));
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_avatar_mesh_info(NULL, a, 0, NULL));
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_avatar_mesh_vertices(NULL, a, 0, buf, NULL, 3, &needed));
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_avatar_mesh_triangles(NULL, a, 0, NULL, 0, &needed));
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_avatar_puppetry_block(NULL, a, garbage, 8));
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_avatar_puppetry_stats(NULL, a, &ps));
    EXPECT_STATUS(SLANIM_ERROR_INVALID_HANDLE, slanim_world_step((slanim_world*)(void*)s, 0.f));
    EXPECT_STATUS(SLANIM_ERROR_INVALID_HANDLE, slanim_avatar_joint_count((slanim_world*)(void*)s, a, &n));
    EXPECT_STATUS(SLANIM_ERROR_INVALID_HANDLE, slanim_skeleton_joint_count((slanim_skeleton*)(void*)w, &n));
    EXPECT_STATUS(SLANIM_ERROR_INVALID_HANDLE, slanim_avatar_create(w, (slanim_skeleton*)(void*)w, &c));

    /* Destroy: the handle goes stale everywhere, also once its slot is reused. */
    EXPECT_OK(slanim_avatar_destroy(w, a));
    EXPECT_STATUS(SLANIM_ERROR_INVALID_HANDLE, slanim_avatar_destroy(w, a));
    EXPECT_OK(slanim_avatar_create(w, s, &b));
    CHECK(b != a);
    CHECK(slanim_avatar_valid(w, a) == 0);
    CHECK(slanim_avatar_valid(w, b) == 1);
    EXPECT_STATUS(SLANIM_ERROR_INVALID_HANDLE, slanim_avatar_joint_count(w, a, &n));
    EXPECT_STATUS(SLANIM_ERROR_INVALID_HANDLE, slanim_avatar_start_motion(w, a, kOtherId, 0.f));
    EXPECT_STATUS(SLANIM_ERROR_INVALID_HANDLE, slanim_avatar_stop_motion(w, a, kOtherId, 0));
    EXPECT_STATUS(SLANIM_ERROR_INVALID_HANDLE, slanim_avatar_is_motion_active(w, a, kOtherId, &flag));
    EXPECT_STATUS(SLANIM_ERROR_INVALID_HANDLE, slanim_avatar_stop_all_motions(w, a, 0));
    EXPECT_STATUS(SLANIM_ERROR_INVALID_HANDLE, slanim_avatar_set_time_factor(w, a, 1.f));
    EXPECT_STATUS(SLANIM_ERROR_INVALID_HANDLE, slanim_avatar_set_paused(w, a, 1));
    EXPECT_STATUS(SLANIM_ERROR_INVALID_HANDLE, slanim_avatar_set_pixel_area(w, a, 1.f));
    EXPECT_STATUS(SLANIM_ERROR_INVALID_HANDLE, slanim_avatar_set_visible(w, a, 1));
    EXPECT_STATUS(SLANIM_ERROR_INVALID_HANDLE, slanim_avatar_joint_transforms(w, a, buf, sizeof buf / sizeof *buf, &needed));
    EXPECT_STATUS(SLANIM_ERROR_INVALID_HANDLE, slanim_avatar_joint_matrices(w, a, buf, sizeof buf / sizeof *buf, &needed));
    EXPECT_STATUS(SLANIM_ERROR_INVALID_HANDLE, slanim_avatar_enable_appearance(w, a, 1));
    EXPECT_STATUS(SLANIM_ERROR_INVALID_HANDLE, slanim_avatar_get_visual_param(w, a, 33, buf));
    EXPECT_STATUS(SLANIM_ERROR_INVALID_HANDLE, slanim_avatar_set_visual_param(w, a, 33, 0.f));
    EXPECT_STATUS(SLANIM_ERROR_INVALID_HANDLE, slanim_avatar_visual_param_range(w, a, 33, NULL, NULL, NULL));
    EXPECT_STATUS(SLANIM_ERROR_INVALID_HANDLE, slanim_avatar_apply_wearable(w, a, "x", 1, NULL));
    EXPECT_STATUS(SLANIM_ERROR_INVALID_HANDLE, slanim_avatar_mesh_count(w, a, &n));
    {
        slanim_mesh_info mi;
        uint32_t idx[3];
        EXPECT_STATUS(SLANIM_ERROR_INVALID_HANDLE, slanim_avatar_mesh_info(w, a, 0, &mi));
        EXPECT_STATUS(SLANIM_ERROR_INVALID_HANDLE, slanim_avatar_mesh_vertices(w, a, 0, buf, NULL, 3, &needed));
        EXPECT_STATUS(SLANIM_ERROR_INVALID_HANDLE, slanim_avatar_mesh_triangles(w, a, 0, idx, 3, &needed));
    }
    EXPECT_STATUS(SLANIM_ERROR_INVALID_HANDLE, slanim_avatar_puppetry_block(w, a, garbage, 8));
    EXPECT_STATUS(SLANIM_ERROR_INVALID_HANDLE, slanim_avatar_puppetry_stats(w, a, &ps));
    CHECK(strstr(slanim_last_error(), "stale") != NULL);

    /* Destroying the world: the other world and its avatar are untouched. */
    EXPECT_OK(slanim_avatar_create(w, s, &c));
    slanim_skeleton_release(s); /* avatars keep their own reference */
    EXPECT_OK(slanim_world_step(w, 0.1f));
    EXPECT_OK(slanim_avatar_joint_transforms(w, c, buf, sizeof buf / sizeof *buf, &needed));
    slanim_world_destroy(w);
    slanim_world_destroy(NULL);
    CHECK(slanim_avatar_valid(other, foreign) == 1);
    slanim_world_destroy(other);
}

static void test_standalone(void) {
    uint8_t garbage[40];
    slanim_motion* m = NULL;
    slanim_motion_info info;
    slanim_validation v;
    char text[256];
    size_t needed = 0;
    float out[7];
    slanim_bvh_import_options opt;
    memset(garbage, 0x11, sizeof garbage);

    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_motion_load(garbage, sizeof garbage, NULL, NULL));
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_motion_load(NULL, 8, NULL, &m));
    EXPECT_STATUS(SLANIM_ERROR_INVALID_DATA, slanim_motion_load(garbage, sizeof garbage, NULL, &m));
    CHECK(m == NULL);
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_motion_get_info(NULL, &info));
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_motion_sample(NULL, 0.f, NULL, 0, NULL));
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_motion_sample(NULL, 0.f, out, 7, &needed));
    slanim_motion_destroy(NULL);

    /* Validation: runs on anything; the result says valid or not. */
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_anim_validate(garbage, sizeof garbage, 0, NULL, NULL, NULL, text, sizeof text, &needed));
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_anim_validate(garbage, sizeof garbage, 0, NULL, NULL, &v, text, sizeof text, NULL));
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_anim_validate(NULL, 5, 0, NULL, NULL, &v, text, sizeof text, &needed));
    EXPECT_OK(slanim_anim_validate(garbage, sizeof garbage, 1, NULL, NULL, &v, text, sizeof text, &needed));
    CHECK(v.valid == 0 && v.errors >= 1);
    CHECK(strncmp(text, "error: [", 8) == 0);
    CHECK(strstr(text, "at byte") != NULL);
    CHECK(needed == strlen(text) + 1);
    memset(&v, 0, sizeof v);
    EXPECT_STATUS(SLANIM_ERROR_BUFFER_TOO_SMALL, slanim_anim_validate(garbage, sizeof garbage, 0, NULL, NULL, &v, text, 4, &needed));
    CHECK(v.errors >= 1 && needed > 4);
    EXPECT_OK(slanim_anim_validate(garbage, sizeof garbage, 0, NULL, NULL, &v, NULL, 0, &needed)); /* no report */
    CHECK(v.valid == 0 && needed > 4);

    /* BVH import. */
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_bvh_import_options_init(NULL));
    EXPECT_OK(slanim_bvh_import_options_init(&opt));
    CHECK(opt.priority == -1 && opt.importer == 0 && opt.emote == NULL);
    EXPECT_STATUS(SLANIM_ERROR_INVALID_DATA, slanim_bvh_to_anim("HIERARCHY\nROOT hip\n", 19, NULL, garbage, sizeof garbage, &needed));
    CHECK(strstr(slanim_last_error(), "line") != NULL);
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_bvh_to_anim("x", 1, NULL, garbage, sizeof garbage, NULL));
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_bvh_to_anim(NULL, 3, NULL, garbage, sizeof garbage, &needed));
    opt.priority = 9;
    EXPECT_STATUS(SLANIM_ERROR_OUT_OF_RANGE, slanim_bvh_to_anim("x", 1, &opt, garbage, sizeof garbage, &needed));
    EXPECT_OK(slanim_bvh_import_options_init(&opt));
    opt.ease_in = NAN;
    EXPECT_STATUS(SLANIM_ERROR_OUT_OF_RANGE, slanim_bvh_to_anim("x", 1, &opt, garbage, sizeof garbage, &needed));
    EXPECT_OK(slanim_bvh_import_options_init(&opt));
    opt.importer = 2;
    EXPECT_STATUS(SLANIM_ERROR_OUT_OF_RANGE, slanim_bvh_to_anim("x", 1, &opt, garbage, sizeof garbage, &needed));

    /* .anim → BVH. */
    EXPECT_STATUS(SLANIM_ERROR_OUT_OF_RANGE, slanim_anim_to_bvh(garbage, sizeof garbage, 0.f, text, sizeof text, &needed));
    EXPECT_STATUS(SLANIM_ERROR_OUT_OF_RANGE, slanim_anim_to_bvh(garbage, sizeof garbage, NAN, text, sizeof text, &needed));
    EXPECT_STATUS(SLANIM_ERROR_INVALID_DATA, slanim_anim_to_bvh(garbage, sizeof garbage, 30.f, text, sizeof text, &needed));
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_anim_to_bvh(garbage, sizeof garbage, 30.f, text, sizeof text, NULL));
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_anim_to_bvh(NULL, 4, 30.f, text, sizeof text, &needed));
}

static void test_ik(void) {
    /* A straight chain of two 0.2 m bones along +Y from the origin (root first). */
    const float chain[9] = {0.f, 0.f, 0.f, 0.f, 0.2f, 0.f, 0.f, 0.4f, 0.f};
    const float target[3] = {0.2f, 0.2f, 0.f};
    const float bad[9] = {0.f, 0.f, 0.f, 0.f, NAN, 0.f, 0.f, 0.4f, 0.f};
    const float normal[3] = {0.f, 0.f, 0.f};
    float pos[9], rot[12];
    slanim_ik_report rep;
    slanim_ik_settings st;
    int solver;
    st.tolerance = 0.0001f;
    st.max_iterations = 200;
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_ik_solve(SLANIM_IK_CCD, NULL, 3, target, NULL, NULL, pos, rot, &rep));
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_ik_solve(SLANIM_IK_CCD, chain, 3, NULL, NULL, NULL, pos, rot, &rep));
    EXPECT_STATUS(SLANIM_ERROR_OUT_OF_RANGE, slanim_ik_solve(7, chain, 3, target, NULL, NULL, pos, rot, &rep));
    EXPECT_STATUS(SLANIM_ERROR_OUT_OF_RANGE, slanim_ik_solve(SLANIM_IK_CCD, chain, 1, target, NULL, NULL, pos, rot, &rep));
    EXPECT_STATUS(SLANIM_ERROR_OUT_OF_RANGE, slanim_ik_solve(SLANIM_IK_CCD, chain, 33, target, NULL, NULL, pos, rot, &rep));
    EXPECT_STATUS(SLANIM_ERROR_OUT_OF_RANGE, slanim_ik_solve(SLANIM_IK_CCD, bad, 3, target, NULL, NULL, pos, rot, &rep));
    EXPECT_STATUS(SLANIM_ERROR_OUT_OF_RANGE, slanim_ik_solve(SLANIM_IK_CCD, chain, 3, target, normal, NULL, pos, rot, &rep));
    st.max_iterations = 0;
    EXPECT_STATUS(SLANIM_ERROR_OUT_OF_RANGE, slanim_ik_solve(SLANIM_IK_CCD, chain, 3, target, NULL, &st, pos, rot, &rep));
    st.max_iterations = 200;
    for (solver = SLANIM_IK_CCD; solver <= SLANIM_IK_FABRIK; ++solver) {
        float d1, d2, err;
        EXPECT_OK(slanim_ik_solve(solver, chain, 3, target, NULL, &st, pos, rot, &rep));
        CHECK(pos[0] == 0.f && pos[1] == 0.f && pos[2] == 0.f); /* the root is pinned */
        d1 = sqrtf(pos[3] * pos[3] + pos[4] * pos[4] + pos[5] * pos[5]);
        d2 = sqrtf((pos[6] - pos[3]) * (pos[6] - pos[3]) + (pos[7] - pos[4]) * (pos[7] - pos[4]) +
                   (pos[8] - pos[5]) * (pos[8] - pos[5]));
        err = sqrtf((pos[6] - target[0]) * (pos[6] - target[0]) + (pos[7] - target[1]) * (pos[7] - target[1]) +
                    (pos[8] - target[2]) * (pos[8] - target[2]));
        CHECK(fabsf(d1 - 0.2f) < 1e-5f && fabsf(d2 - 0.2f) < 1e-5f); /* bone lengths kept */
        CHECK(rep.converged == 1 && rep.reachable == 1 && err <= 0.0002f);
        CHECK(fabsf(rep.error - err) < 1e-5f);
        CHECK(rep.initial_error > 0.2f);
        /* The end joint's rotation follows its parent's. */
        CHECK(rot[8] == rot[4] && rot[9] == rot[5] && rot[10] == rot[6] && rot[11] == rot[7]);
    }
}

static void test_real_motion(const char* shared_dir) {
    char path[1024];
    size_t size = 0, needed = 0;
    uint8_t* bytes;
    slanim_world* w = NULL;
    slanim_skeleton* s = NULL;
    slanim_avatar a;
    slanim_motion* m = NULL;
    slanim_motion_info info;
    slanim_validation v;
    int active = 0, f;
    float* pose;
    float sample[7 * 214];
    int32_t hand = -1;
    char* bvh;
    uint8_t* anim;
    size_t bvh_size = 0, anim_size = 0;

    snprintf(path, sizeof path, "%s/anims/linden/DANCE1.anim", shared_dir);
    bytes = read_file(path, &size);
    if (!bytes) {
        printf("SKIPPED: the real-motion part: %s is absent (the shared data folder)\n", path);
        return;
    }
    EXPECT_OK(slanim_world_create(1, &w));
    EXPECT_OK(slanim_skeleton_default(&s));
    EXPECT_OK(slanim_world_load_motion(w, kDanceId, bytes, size));
    EXPECT_OK(slanim_avatar_create(w, s, &a));
    EXPECT_OK(slanim_avatar_start_motion(w, a, kDanceId, 0.f));
    EXPECT_STATUS(SLANIM_ERROR_OUT_OF_RANGE, slanim_avatar_start_motion(w, a, kDanceId, -1.f));
    EXPECT_STATUS(SLANIM_ERROR_OUT_OF_RANGE, slanim_avatar_start_motion(w, a, kDanceId, NAN));
    pose = (float*)malloc(sizeof(float) * 7 * 214);
    for (f = 0; f < 31; ++f) EXPECT_OK(slanim_world_step(w, f == 0 ? 0.f : 1.f / 30.f));
    EXPECT_OK(slanim_avatar_is_motion_active(w, a, kDanceId, &active));
    CHECK(active == 1);
    EXPECT_OK(slanim_avatar_joint_transforms(w, a, pose, 7 * 214, &needed));
    EXPECT_OK(slanim_skeleton_find_joint(s, "mWristRight", &hand));
    CHECK(isfinite(pose[7 * hand]) && fabsf(pose[7 * hand + 2]) < 2.f);
    /* The cache entry can go: the playing avatar keeps its clip and still finds it by id. */
    EXPECT_OK(slanim_world_unload_motion(w, kDanceId));
    EXPECT_OK(slanim_avatar_is_motion_active(w, a, kDanceId, &active));
    CHECK(active == 1);
    EXPECT_OK(slanim_avatar_start_motion(w, a, kDanceId, 0.f)); /* still active: restartable by id */
    EXPECT_OK(slanim_avatar_stop_motion(w, a, kDanceId, 1));
    EXPECT_OK(slanim_avatar_is_motion_active(w, a, kDanceId, &active));
    CHECK(active == 0);
    EXPECT_STATUS(SLANIM_ERROR_NOT_FOUND, slanim_avatar_start_motion(w, a, kDanceId, 0.f)); /* ended, unloaded */

    /* Outside the world. */
    EXPECT_OK(slanim_motion_load(bytes, size, s, &m));
    EXPECT_OK(slanim_motion_get_info(m, &info));
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_motion_get_info(m, NULL));
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_motion_sample(m, 0.f, sample, 7 * 214, NULL));
    EXPECT_STATUS(SLANIM_ERROR_NULL_ARGUMENT, slanim_motion_sample(m, 0.f, NULL, 7 * 214, &needed));
    CHECK(info.duration > 1.f && info.num_joints > 10);
    EXPECT_STATUS(SLANIM_ERROR_OUT_OF_RANGE, slanim_motion_sample(m, NAN, sample, 7 * 214, &needed));
    EXPECT_STATUS(SLANIM_ERROR_BUFFER_TOO_SMALL, slanim_motion_sample(m, 0.f, sample, 7, &needed));
    CHECK(needed == 7u * 214u);
    EXPECT_OK(slanim_motion_sample(m, 0.5f, sample, 7 * 214, &needed));
    EXPECT_OK(slanim_anim_validate(bytes, size, 0, kDanceId, NULL, &v, NULL, 0, &needed));
    CHECK(v.valid == 1 && v.errors == 0);

    /* .anim → BVH → .anim: the size query, then the conversion; the result validates. */
    EXPECT_STATUS(SLANIM_ERROR_BUFFER_TOO_SMALL, slanim_anim_to_bvh(bytes, size, 30.f, NULL, 0, &bvh_size));
    bvh = (char*)malloc(bvh_size);
    EXPECT_OK(slanim_anim_to_bvh(bytes, size, 30.f, bvh, bvh_size, &needed));
    CHECK(strncmp(bvh, "HIERARCHY", 9) == 0 && strlen(bvh) + 1 == bvh_size);
    EXPECT_STATUS(SLANIM_ERROR_BUFFER_TOO_SMALL, slanim_bvh_to_anim(bvh, bvh_size - 1, NULL, NULL, 0, &anim_size));
    anim = (uint8_t*)malloc(anim_size);
    EXPECT_OK(slanim_bvh_to_anim(bvh, bvh_size - 1, NULL, anim, anim_size, &needed));
    EXPECT_OK(slanim_anim_validate(anim, anim_size, 1, NULL, NULL, &v, NULL, 0, &needed));
    CHECK(v.valid == 1);
    free(anim);
    free(bvh);
    slanim_motion_destroy(m);
    slanim_skeleton_release(s);
    slanim_world_destroy(w);
    free(pose);
    free(bytes);
}

int main(int argc, char** argv) {
    const char* shared_dir = argc > 1 ? argv[1] : SLANIM_SHARED_DIR;
    test_version_and_status();
    test_skeleton();
    test_world_and_avatars();
    test_standalone();
    test_ik();
    test_real_motion(shared_dir);
    printf("%d checks, %d failed\n", g_checks, g_failures);
    return g_failures == 0 ? 0 : 1;
}
