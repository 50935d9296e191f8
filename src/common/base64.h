// Base64 (RFC 4648, with padding) for carrying arbitrary bytes in JSON strings: task output on
// its way from the agents through lockstepd to srun.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace lockstep {

std::string Base64Encode(std::string_view bytes);
// InvalidArgument for characters outside the alphabet or a length that is not a multiple of 4.
Result<std::string> Base64Decode(std::string_view text);

}  // namespace lockstep
