// Fuzzes the Alibaba 2023 pod and node list readers on the same text.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_check.h"
#include "trace/trace.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  lockstep::Result<lockstep::trace::Trace> t = lockstep::trace::ParseAlibabaPods(text, "pods.csv");
  if (t.ok()) {
    for (std::size_t i = 0; i < t->jobs.size(); ++i) {
      const lockstep::trace::TraceJob& j = t->jobs[i];
      FUZZ_CHECK(j.procs >= 1 && j.nodes == 1 && j.gpus_per_node >= 0);
      FUZZ_CHECK(j.run_time >= 0 && j.submit >= 0);
      FUZZ_CHECK(i == 0 || t->jobs[i - 1].submit <= j.submit);
    }
  } else {
    FUZZ_CHECK(t.status().message().rfind("pods.csv", 0) == 0);
  }
  auto nodes = lockstep::trace::ParseAlibabaNodes(text, "nodes.csv");
  if (nodes.ok()) {
    for (const lockstep::trace::TraceNode& n : *nodes) FUZZ_CHECK(!n.name.empty() && n.cpus >= 0);
  } else {
    FUZZ_CHECK(nodes.status().message().rfind("nodes.csv", 0) == 0);
  }
  return 0;
}
