// Basic vocabulary shared by every part: ids and time.
#pragma once

#include <cstdint>
#include <limits>

namespace lockstep {

using JobId = std::uint64_t;
// Seconds. In the controller this is the Unix epoch; in the simulator it is virtual time.
// The engine never reads a clock: time always arrives in a Snapshot.
using Time = std::int64_t;
using Seconds = std::int64_t;

// "Never" / "unlimited" for times and durations; far enough from overflow that adding a
// duration to it is still safe.
inline constexpr Time kInfiniteTime = std::numeric_limits<std::int64_t>::max() / 4;
inline constexpr Seconds kUnlimited = kInfiniteTime;

}  // namespace lockstep
