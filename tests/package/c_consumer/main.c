/* SPDX-License-Identifier: MIT */
/* A C host outside the tree: only <slanim/slanim.h> and libslanim.so (CMake's slanim::shared or
   `pkg-config slanim`). Plays nothing but the rest pose: a default skeleton, one avatar, a step. */
#include <slanim/slanim.h>

#include <stdio.h>
#include <string.h>

int main(void) {
    slanim_world* world = NULL;
    slanim_skeleton* skeleton = NULL;
    slanim_avatar avatar = SLANIM_NULL_AVATAR;
    float pose[7 * 214];
    size_t needed = 0;
    int32_t hand = -1;
    if (slanim_version_number() != SLANIM_VERSION || strcmp(slanim_version(), SLANIM_VERSION_STRING) != 0) {
        fprintf(stderr, "header %s, library %s\n", SLANIM_VERSION_STRING, slanim_version());
        return 1;
    }
    if (slanim_world_create(1, &world) != SLANIM_OK || slanim_skeleton_default(&skeleton) != SLANIM_OK ||
        slanim_avatar_create(world, skeleton, &avatar) != SLANIM_OK || slanim_world_step(world, 0.f) != SLANIM_OK ||
        slanim_skeleton_find_joint(skeleton, "mWristRight", &hand) != SLANIM_OK ||
        slanim_avatar_joint_transforms(world, avatar, pose, sizeof pose / sizeof *pose, &needed) != SLANIM_OK) {
        fprintf(stderr, "slanim: %s\n", slanim_last_error());
        return 1;
    }
    if (slanim_world_step(world, -1.f) != SLANIM_ERROR_OUT_OF_RANGE) return 1;
    printf("slanim %s: right wrist at rest (%.3f, %.3f, %.3f) m\n", slanim_version(), (double)pose[7 * hand],
           (double)pose[7 * hand + 1], (double)pose[7 * hand + 2]);
    slanim_skeleton_release(skeleton);
    slanim_world_destroy(world);
    return 0;
}
