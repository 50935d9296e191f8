// Workload traces: the Standard Workload Format, the Alibaba 2023 GPU pod list and lockstep's own
// CSV for GPU jobs. Readers turn a file into TraceJobs; the simulator turns those into engine Jobs.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "common/types.h"

namespace lockstep::trace {

// One job of a trace, in the trace's own terms. Unknown fields are -1 (SWF's convention) or empty.
struct TraceJob {
  std::int64_t id = 0;
  Time submit = 0;          // seconds from the trace's start
  Seconds run_time = 0;     // what it really ran
  Seconds time_limit = -1;  // the user's request; -1: unknown (use run_time)
  std::int32_t nodes = 0;   // 0: not given, derive from procs
  std::int32_t procs = 0;   // CPUs in total (SWF's processors)
  std::int32_t gpus_per_node = 0;
  std::string gpu_type;  // "" any
  std::int64_t mem_mb_per_node = 0;
  std::string user;
  std::string account;
  std::string partition;
  Seconds recorded_wait = -1;  // the wait the production scheduler gave it; -1 unknown
};

// The cluster a trace ran on, where the trace says (SWF header; Alibaba node list).
struct TraceNode {
  std::string name;
  std::int32_t cpus = 0;
  std::int64_t mem_mb = 0;
  std::int32_t gpus = 0;
  std::string gpu_type;
};

struct Trace {
  std::vector<TraceJob> jobs;    // in submit order
  std::int64_t skipped = 0;      // valid records that cannot run (no processors, no run time)
  std::vector<TraceNode> nodes;  // empty: the trace does not say
};

// Each reader names the file and the 1-based line in its error:
// "trace.swf:12: field 5 (allocated processors): 'x' is not a number".
// Files ending in .gz are decompressed.
Result<Trace> ReadSwf(const std::string& path);
Result<Trace> ParseSwf(std::string_view text, std::string_view source_name);

// The Alibaba pod list; `node_list_path` may be empty (no nodes in the result).
Result<Trace> ReadAlibaba(const std::string& pod_list_path, const std::string& node_list_path);
Result<Trace> ParseAlibabaPods(std::string_view text, std::string_view source_name);
Result<std::vector<TraceNode>> ParseAlibabaNodes(std::string_view text,
                                                 std::string_view source_name);

// lockstep's CSV (docs/formats.md): header
// submit,user,account,partition,nodes,gpus_per_node,run_time,time_limit
Result<Trace> ReadLockstepCsv(const std::string& path);
Result<Trace> ParseLockstepCsv(std::string_view text, std::string_view source_name);

// Reads a whole file, gunzipping when the name ends in .gz.
Result<std::string> ReadFileMaybeGzip(const std::string& path);

}  // namespace lockstep::trace
