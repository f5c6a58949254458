// SPDX-License-Identifier: MIT
#include "slanim/core/result.hpp"

namespace slanim {

std::string Error::describe() const {
    if (offset >= 0) return message + " (at byte " + std::to_string(offset) + ")";
    if (line >= 0) return message + " (line " + std::to_string(line) + ")";
    return message;
}

}  // namespace slanim
