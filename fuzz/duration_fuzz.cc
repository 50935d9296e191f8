// Fuzzes Slurm time and memory parsing; a parsed time formats back to the same seconds.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "common/duration.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  lockstep::Result<lockstep::Seconds> d = lockstep::ParseSlurmDuration(text);
  if (d.ok()) {
    FUZZ_CHECK(*d >= 0 && *d <= lockstep::kUnlimited);
    lockstep::Result<lockstep::Seconds> back =
        lockstep::ParseSlurmDuration(lockstep::FormatSlurmDuration(*d));
    FUZZ_CHECK(back.ok() && *back == *d);
  }
  lockstep::Result<std::int64_t> mb = lockstep::ParseMemoryMb(text);
  if (mb.ok()) FUZZ_CHECK(*mb >= 0);
  // Formatting any number must not crash either.
  std::int64_t n = 0;
  std::memcpy(&n, data, size < sizeof n ? size : sizeof n);
  FUZZ_CHECK(!lockstep::FormatSlurmDuration(n).empty());
  return 0;
}
