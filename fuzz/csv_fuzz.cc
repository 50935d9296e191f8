// Fuzzes the lockstep trace CSV reader.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_check.h"
#include "trace/trace.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  lockstep::Result<lockstep::trace::Trace> t = lockstep::trace::ParseLockstepCsv(text, "jobs.csv");
  if (!t.ok()) {
    FUZZ_CHECK(t.status().message().rfind("jobs.csv", 0) == 0);
    return 0;
  }
  FUZZ_CHECK(t->skipped == 0);
  for (std::size_t i = 0; i < t->jobs.size(); ++i) {
    const lockstep::trace::TraceJob& j = t->jobs[i];
    FUZZ_CHECK(j.nodes >= 1 && j.gpus_per_node >= 0 && !j.user.empty());
    FUZZ_CHECK(j.run_time >= 0 && j.run_time < lockstep::kUnlimited);
    FUZZ_CHECK(j.time_limit >= -1);
    FUZZ_CHECK(i == 0 || t->jobs[i - 1].submit <= j.submit);
  }
  return 0;
}
