// Fuzzes the SWF reader: any text gives a trace or an error naming the source, never a crash.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_check.h"
#include "trace/trace.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  lockstep::Result<lockstep::trace::Trace> t = lockstep::trace::ParseSwf(text, "fuzz.swf");
  if (!t.ok()) {
    FUZZ_CHECK(t.status().message().rfind("fuzz.swf:", 0) == 0);
    return 0;
  }
  for (std::size_t i = 0; i < t->jobs.size(); ++i) {
    const lockstep::trace::TraceJob& j = t->jobs[i];
    FUZZ_CHECK(j.procs > 0);
    FUZZ_CHECK(j.run_time >= 0);
    FUZZ_CHECK(j.time_limit >= -1);
    FUZZ_CHECK(i == 0 || t->jobs[i - 1].submit <= j.submit);
  }
  for (const lockstep::trace::TraceNode& n : t->nodes) FUZZ_CHECK(n.cpus >= 1);
  return 0;
}
