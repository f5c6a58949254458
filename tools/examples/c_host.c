/* SPDX-License-Identifier: MIT */
/*
 * A minimal C host of libslanim.so (docs/embedding.md): loads DANCE1 from bytes into a world's
 * motion cache under its asset UUID, plays it on 100 avatars for one second at 30 Hz, and prints
 * the right hand's position every 10 frames. Each avatar's joint matrices are fetched every frame
 * as a renderer would (GPU skinning palette).
 *
 *     slanim_c_host [DANCE1.anim]      (default ../shared/anims/linden/DANCE1.anim)
 *
 * Exit status: 0 success, 1 a slanim call failed (the message is printed), 2 the file is missing.
 */
#include <slanim/slanim.h>

#include <stdio.h>
#include <stdlib.h>

#define NUM_AVATARS 100
#define FPS 30

/* Every call returns a status; on failure slanim_last_error() says what and where. */
#define TRY(call)                                                                              \
    do {                                                                                       \
        slanim_status status_ = (call);                                                        \
        if (status_ != SLANIM_OK) {                                                            \
            fprintf(stderr, "c_host: %s: %s\n", slanim_status_name(status_), slanim_last_error()); \
            goto done;                                                                         \
        }                                                                                      \
    } while (0)

/* ANIM_AGENT_DANCE1, the asset UUID of DANCE1 (b68a3d7c-de9e-fc87-eec8-543d787e5b0d). */
static const uint8_t kDance1[16] = {0xb6, 0x8a, 0x3d, 0x7c, 0xde, 0x9e, 0xfc, 0x87,
                                    0xee, 0xc8, 0x54, 0x3d, 0x78, 0x7e, 0x5b, 0x0d};

static uint8_t* read_file(const char* path, size_t* size) {
    FILE* f = fopen(path, "rb");
    uint8_t* data = NULL;
    long n;
    if (!f) return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (data = (uint8_t*)malloc((size_t)n)) != NULL) {
        if (fread(data, 1, (size_t)n, f) == (size_t)n) {
            *size = (size_t)n;
        } else {
            free(data);
            data = NULL;
        }
    }
    fclose(f);
    return data;
}

int main(int argc, char** argv) {
    const char* path = argc > 1 ? argv[1] : "../shared/anims/linden/DANCE1.anim";
    int rc = 1, frame, i;
    size_t size = 0, needed = 0;
    uint8_t* bytes = read_file(path, &size);
    slanim_world* world = NULL;
    slanim_skeleton* skeleton = NULL;
    slanim_avatar avatars[NUM_AVATARS];
    int32_t joints = 0, hand = -1;
    float* palette = NULL;
    float transforms[7 * 214];

    if (!bytes) {
        fprintf(stderr, "c_host: cannot read %s (give the path of DANCE1.anim)\n", path);
        return 2;
    }
    printf("slanim %s (header %s)\n", slanim_version(), SLANIM_VERSION_STRING);

    TRY(slanim_world_create(0, &world)); /* one worker thread per hardware thread */
    TRY(slanim_skeleton_default(&skeleton));
    TRY(slanim_skeleton_joint_count(skeleton, &joints));
    TRY(slanim_skeleton_find_joint(skeleton, "mWristRight", &hand));
    /* The motion cache: bytes in, validated and decoded once, shared by every avatar. */
    TRY(slanim_world_load_motion(world, kDance1, bytes, size));
    for (i = 0; i < NUM_AVATARS; ++i) {
        TRY(slanim_avatar_create(world, skeleton, &avatars[i]));
        TRY(slanim_avatar_start_motion(world, avatars[i], kDance1, 0.01f * (float)i)); /* out of step */
    }
    slanim_skeleton_release(skeleton); /* the avatars hold their own references */
    skeleton = NULL;

    /* The renderer's joint palette: 16 floats per joint, column-major, avatar-root frame. */
    palette = (float*)malloc(sizeof(float) * SLANIM_MATRIX_FLOATS * (size_t)joints);
    if (!palette) goto done;
    for (frame = 0; frame <= FPS; ++frame) { /* one second at 30 Hz, frame 0 at t = 0 */
        TRY(slanim_world_step(world, frame == 0 ? 0.f : 1.f / FPS));
        for (i = 0; i < NUM_AVATARS; ++i)
            TRY(slanim_avatar_joint_matrices(world, avatars[i], palette,
                                             SLANIM_MATRIX_FLOATS * (size_t)joints, &needed));
        if (frame % 10 == 0) {
            TRY(slanim_avatar_joint_transforms(world, avatars[0], transforms, sizeof transforms / sizeof *transforms,
                                               &needed));
            printf("t = %.3f s: avatar 0 right hand at (%.4f, %.4f, %.4f) m (avatar-root frame)\n",
                   (double)frame / FPS, (double)transforms[7 * hand], (double)transforms[7 * hand + 1],
                   (double)transforms[7 * hand + 2]);
        }
    }
    rc = 0;
done:
    free(palette);
    slanim_skeleton_release(skeleton);
    slanim_world_destroy(world); /* destroys the avatars too */
    free(bytes);
    return rc;
}
