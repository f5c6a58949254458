// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include "slanim/core/skeleton.hpp"
#include "slanim/ik/chain.hpp"

using namespace slanim;

TEST(IkChain, WalksUpFromTheEndJoint) {
    const auto& s = *Skeleton::default_skeleton();
    auto c = ik::make_chain(s, s.find("mAnkleLeft"), 2);
    ASSERT_TRUE(c.ok()) << c.error().message;
    ASSERT_EQ(c->joints.size(), 3u);
    EXPECT_EQ(s.name(c->joints[1]), "mKneeLeft");
    EXPECT_EQ(s.name(c->joints[2]), "mHipLeft");
    EXPECT_EQ(c->length(), 2);
    EXPECT_TRUE(ik::validate_chain(s, *c).ok());
}

TEST(IkChain, ErrorsPastTheRootAndOnBrokenChains) {
    const auto& s = *Skeleton::default_skeleton();
    auto c = ik::make_chain(s, s.find("mSpine1"), 3);
    ASSERT_FALSE(c.ok());
    EXPECT_NE(c.error().message.find("runs past the root"), std::string::npos);
    EXPECT_FALSE(ik::make_chain(s, -1, 1).ok());
    ik::Chain bad{{s.find("mAnkleLeft"), s.find("mHipLeft")}};
    EXPECT_FALSE(ik::validate_chain(s, bad).ok());
}
