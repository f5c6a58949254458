/* SPDX-License-Identifier: MIT */
/*
 * A minimal C host of libslanim.so (docs/embedding.md): loads DANCE1 from bytes into a world's
 * motion cache under its asset UUID, plays it on 100 avatars for one second at 30 Hz with the
 * viewer's procedural motions (breathe, body noise, head and eye look-at) on every avatar and a
 * rigged mesh's joint override (the head 3 cm higher) on every other one, and prints the right
 * hand's position every 10 frames. Each avatar's joint matrices are fetched every frame as a
 * renderer would (GPU skinning palette).
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

/* A rigged mesh attachment's UUID (any non-null UUID: overrides are keyed by it). */
static const uint8_t kMesh[16] = {0x6d, 0x65, 0x73, 0x68, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0, 1};

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
    int32_t joints = 0, hand = -1, head = -1;
    float look_at[3] = {1.5f, 0.5f, 0.7f}; /* a point ahead, to the left, at head height (m) */
    float height = 0.f, pelvis_to_foot = 0.f;
    slanim_joint_override head_up;
    slanim_active_override active;
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
    TRY(slanim_skeleton_find_joint(skeleton, "mHead", &head));
    /* The motion cache: bytes in, validated and decoded once, shared by every avatar. */
    TRY(slanim_world_load_motion(world, kDance1, bytes, size));
    for (i = 0; i < NUM_AVATARS; ++i) {
        TRY(slanim_avatar_create(world, skeleton, &avatars[i]));
        TRY(slanim_avatar_start_motion(world, avatars[i], kDance1, 0.01f * (float)i)); /* out of step */
        TRY(slanim_avatar_set_procedural_motions(world, avatars[i], SLANIM_PROCEDURAL_ALL));
        TRY(slanim_avatar_set_look_at(world, avatars[i], look_at, SLANIM_LOOK_AT_AVATAR_ROOT));
    }
    /* A rigged mesh worn by every other avatar puts mHead 3 cm above its default position
     * (0, 0, 0.076) in mNeck's frame (avatar_skeleton.xml's pos): the translation of the mesh's
     * alt_inverse_bind_matrix, metres. lock_scale_if_joint_position = 1 locks its scale too. */
    head_up.joint = head;
    head_up.has_position = 1;
    head_up.position[0] = 0.f, head_up.position[1] = 0.f, head_up.position[2] = 0.076f + 0.03f;
    head_up.has_scale = 0;
    head_up.scale[0] = head_up.scale[1] = head_up.scale[2] = 1.f;
    for (i = 0; i < NUM_AVATARS; i += 2)
        TRY(slanim_avatar_add_attachment_overrides(world, avatars[i], kMesh, &head_up, 1, 1, 0.f));
    TRY(slanim_avatar_active_position_override(world, avatars[0], head, &active));
    TRY(slanim_avatar_body_size(world, avatars[0], &pelvis_to_foot, &height));
    printf("avatar 0: mHead position override %s (z %.4f m), body height %.4f m\n",
           active.found ? "active" : "none", (double)active.value[2], (double)height);
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
