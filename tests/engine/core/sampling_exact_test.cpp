// SPDX-License-Identifier: MIT
// Every real motion, every sampling path (constant, key-sharing groups, single curves): the
// output is bit-identical to the viewer's std::map + lower_bound getValue (spec §2.1).
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <random>

#include "slanim/core/clip.hpp"
#include "slanim/core/motion.hpp"
#include "slanim/core/sampling.hpp"
#include "slanim/core/skeleton.hpp"
#include "slanim/formats/anim_codec.hpp"
#include "test_util.hpp"

using namespace slanim;
namespace fs = std::filesystem;

namespace {

template <class T>
bool same_bits(const T& a, const T& b) { return std::memcmp(&a, &b, sizeof(T)) == 0; }

}  // namespace

TEST(SamplingExact, RealMotionsMatchTheViewersLookupBitForBit) {
    const fs::path dir = fs::path(SLANIM_SHARED_DIR) / "anims";
    if (!fs::is_directory(dir)) GTEST_SKIP() << "../shared/anims is absent (" << dir << ")";
    const auto skel = Skeleton::default_skeleton();
    std::mt19937 rng(7);
    std::size_t compared = 0;
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
        if (e.path().extension() != ".anim") continue;
        auto m = load_motion(e.path().string(), *skel);
        ASSERT_TRUE(m.ok()) << m.error().message;
        const auto clip = MotionClip::build(*m, *skel);
        const auto tracks = clip->tracks();
        // Reference curves from the clip's own (normalized) key arrays.
        std::vector<std::map<float, Quat>> rmaps(tracks.size());
        std::vector<std::map<float, Vec3>> pmaps(tracks.size());
        for (std::size_t k = 0; k < tracks.size(); ++k) {
            for (std::uint32_t i = 0; i < tracks[k].rot_count; ++i)
                rmaps[k][clip->rot_times()[tracks[k].rot_first + i]] = clip->rot_values()[tracks[k].rot_first + i];
            for (std::uint32_t i = 0; i < tracks[k].pos_count; ++i)
                pmaps[k][clip->pos_times()[tracks[k].pos_first + i]] = clip->pos_values()[tracks[k].pos_first + i];
        }
        SamplingCursor cur;
        cur.reset(*clip);
        std::vector<Quat> rot(tracks.size());
        std::vector<Vec3> pos(tracks.size());
        std::vector<float> times;
        const float d = m->duration;
        for (float t = -0.1f; t < d + 0.2f; t += 1.f / 30.f) times.push_back(t);      // forward
        for (float t = d + 0.1f; t > -0.1f; t -= 0.13f) times.push_back(t);           // backward
        std::uniform_real_distribution<float> any(-0.2f, d + 0.2f);
        for (int i = 0; i < 50; ++i) times.push_back(any(rng));                       // random
        for (const float t : times) {
            SamplingJob job{clip.get(), t, &cur, rot, pos};
            ASSERT_TRUE(job.run());
            for (std::size_t k = 0; k < tracks.size(); ++k) {
                if (!rmaps[k].empty()) {
                    const Quat want = test::viewer_rot(rmaps[k], t);
                    ASSERT_TRUE(same_bits(rot[k], want)) << e.path() << " track " << k << " t=" << t;
                    ++compared;
                }
                if (!pmaps[k].empty()) {
                    const Vec3 want = test::viewer_pos(pmaps[k], t);
                    ASSERT_TRUE(same_bits(pos[k], want)) << e.path() << " track " << k << " t=" << t;
                    ++compared;
                }
            }
        }
    }
    EXPECT_GT(compared, 100000u);
}
