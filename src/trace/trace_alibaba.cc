// The Alibaba GPU cluster trace of 2023 (alibaba/clusterdata, cluster-trace-gpu-v2023): a pod
// list and a node list, both CSV with a header row. Mapping: docs/formats.md.
#include <fmt/format.h>

#include <array>
#include <limits>
#include <optional>

#include "trace/trace.h"
#include "trace/trace_text.h"

namespace lockstep::trace {
namespace {

using internal::CsvTable;

// Finds the named columns, or says which the header lacks.
template <std::size_t N>
Result<std::array<std::size_t, N>> FindColumns(const CsvTable& table,
                                               const std::array<std::string_view, N>& names,
                                               std::string_view source) {
  std::array<std::size_t, N> out{};
  for (std::size_t i = 0; i < N; ++i) {
    std::optional<std::size_t> c = table.Column(names[i]);
    if (!c) {
      return InvalidArgument(
          fmt::format("{}:{}: the header has no column '{}'", source, table.line(), names[i]));
    }
    out[i] = *c;
  }
  return out;
}

// A non-negative integer column that fits `Max`.
Result<std::int64_t> Count(const CsvTable& t, std::size_t column,
                           std::int64_t max = std::numeric_limits<std::int32_t>::max()) {
  Result<std::int64_t> v = t.Int(column);
  if (!v.ok()) return v;
  if (*v < 0 || *v > max) {
    return t.ColumnError(column, fmt::format("{} is out of range (0..{})", *v, max));
  }
  return v;
}

// A time column: nullopt when empty (the pod never reached that point), else a number >= 0.
Result<std::optional<std::int64_t>> OptionalTime(const CsvTable& t, std::size_t column) {
  if (t.Field(column).empty()) return std::optional<std::int64_t>();
  Result<std::int64_t> v = Count(t, column, std::numeric_limits<std::int64_t>::max() / 4);
  if (!v.ok()) return v.status();
  return std::optional<std::int64_t>(*v);
}

enum PodColumn : std::size_t {
  kCpuMilli,
  kMemory,
  kNumGpu,
  kGpuMilli,
  kCreation,
  kDeletion,
  kScheduled
};
constexpr std::array<std::string_view, 7> kPodColumns = {
    "cpu_milli",     "memory_mib",    "num_gpu",       "gpu_milli",
    "creation_time", "deletion_time", "scheduled_time"};

// One pod row into a job; nullopt when its times say it never ran.
Result<std::optional<TraceJob>> Pod(const CsvTable& t, const std::array<std::size_t, 7>& col,
                                    std::optional<std::size_t> gpu_spec,
                                    std::optional<std::size_t> qos) {
  Result<std::int64_t> cpu_milli = Count(t, col[kCpuMilli]);
  if (!cpu_milli.ok()) return cpu_milli.status();
  Result<std::int64_t> memory = Count(t, col[kMemory], std::numeric_limits<std::int64_t>::max());
  if (!memory.ok()) return memory.status();
  Result<std::int64_t> gpus = Count(t, col[kNumGpu]);
  if (!gpus.ok()) return gpus.status();
  Result<std::int64_t> gpu_milli = Count(t, col[kGpuMilli]);
  if (!gpu_milli.ok()) return gpu_milli.status();
  std::array<std::optional<std::int64_t>, 3> times;  // creation, deletion, scheduled
  for (std::size_t i = 0; i < times.size(); ++i) {
    Result<std::optional<std::int64_t>> v = OptionalTime(t, col[kCreation + i]);
    if (!v.ok()) return v.status();
    times[i] = *v;
  }
  const auto& [creation, deletion, scheduled] = times;
  // Pods that were never scheduled (mostly Pending) or whose deletion precedes their start
  // have no run time to replay. Pods of any phase are kept when their times are valid.
  if (!creation || !deletion || !scheduled || *deletion < *scheduled) {
    return std::optional<TraceJob>();
  }

  TraceJob job;
  job.id = t.row();
  job.submit = *creation;
  job.run_time = *deletion - *scheduled;
  job.recorded_wait = *scheduled >= *creation ? *scheduled - *creation : -1;
  job.nodes = 1;
  job.procs = static_cast<std::int32_t>(std::max<std::int64_t>(1, (*cpu_milli + 999) / 1000));
  // lockstep does not share GPUs: a pod asking for a fraction of one (gpu_milli < 1000 with
  // num_gpu 1) takes the whole GPU here, so replays overstate GPU demand of such pods.
  job.gpus_per_node = static_cast<std::int32_t>(*gpus);
  if (gpu_spec) {
    std::string_view spec = t.Field(*gpu_spec);
    // "A|B" allows any of several models; lockstep asks for one model or any, so any.
    if (spec.find('|') == std::string_view::npos) job.gpu_type = std::string(spec);
  }
  job.mem_mb_per_node = *memory;
  std::string_view q = qos ? t.Field(*qos) : std::string_view();
  job.user = q.empty() ? "alibaba" : std::string(q);
  job.account = std::string(q);
  job.time_limit = -1;
  return std::optional<TraceJob>(std::move(job));
}

}  // namespace

Result<Trace> ParseAlibabaPods(std::string_view text, std::string_view source_name) {
  CsvTable t(text, source_name);
  LOCKSTEP_RETURN_IF_ERROR(t.ReadHeader());
  if (!t.Column("creation_time") || !t.Column("deletion_time") || !t.Column("scheduled_time")) {
    return InvalidArgument(fmt::format(
        "{}: the pod list has no creation_time, deletion_time and scheduled_time columns, so "
        "its pods cannot be replayed (the multigpu50 variant of the trace lacks them; use "
        "openb_pod_list_default.csv)",
        source_name));
  }
  Result<std::array<std::size_t, 7>> cols = FindColumns(t, kPodColumns, source_name);
  if (!cols.ok()) return cols.status();
  const std::optional<std::size_t> gpu_spec = t.Column("gpu_spec");
  const std::optional<std::size_t> qos = t.Column("qos");

  Trace trace;
  while (true) {
    Result<bool> more = t.NextRow();
    if (!more.ok()) return more.status();
    if (!*more) break;
    Result<std::optional<TraceJob>> job = Pod(t, *cols, gpu_spec, qos);
    if (!job.ok()) return job.status();
    if (job->has_value()) {
      trace.jobs.push_back(std::move(**job));
    } else {
      ++trace.skipped;
    }
  }
  internal::SortBySubmit(trace.jobs);
  return trace;
}

Result<std::vector<TraceNode>> ParseAlibabaNodes(std::string_view text,
                                                 std::string_view source_name) {
  CsvTable t(text, source_name);
  LOCKSTEP_RETURN_IF_ERROR(t.ReadHeader());
  constexpr std::array<std::string_view, 5> kNames = {"sn", "cpu_milli", "memory_mib", "gpu",
                                                      "model"};
  Result<std::array<std::size_t, 5>> c = FindColumns(t, kNames, source_name);
  if (!c.ok()) return c.status();
  const auto [sn, cpu_milli, memory, gpu, model] = *c;

  std::vector<TraceNode> nodes;
  while (true) {
    Result<bool> more = t.NextRow();
    if (!more.ok()) return more.status();
    if (!*more) break;
    TraceNode& node = nodes.emplace_back();
    node.name = std::string(t.Field(sn));
    if (node.name.empty()) return t.ColumnError(sn, "empty node name");
    Result<std::int64_t> cpus = Count(t, cpu_milli, std::int64_t{1000} * 0x7fffffff);
    if (!cpus.ok()) return cpus.status();
    node.cpus = static_cast<std::int32_t>(*cpus / 1000);
    Result<std::int64_t> mem = Count(t, memory, std::numeric_limits<std::int64_t>::max());
    if (!mem.ok()) return mem.status();
    node.mem_mb = *mem;
    Result<std::int64_t> gpus = Count(t, gpu);
    if (!gpus.ok()) return gpus.status();
    node.gpus = static_cast<std::int32_t>(*gpus);
    node.gpu_type = std::string(t.Field(model));
  }
  return nodes;
}

Result<Trace> ReadAlibaba(const std::string& pod_list_path, const std::string& node_list_path) {
  Result<std::string> pods_text = ReadFileMaybeGzip(pod_list_path);
  if (!pods_text.ok()) return pods_text.status();
  Result<Trace> trace = ParseAlibabaPods(*pods_text, pod_list_path);
  if (!trace.ok() || node_list_path.empty()) return trace;
  Result<std::string> nodes_text = ReadFileMaybeGzip(node_list_path);
  if (!nodes_text.ok()) return nodes_text.status();
  Result<std::vector<TraceNode>> nodes = ParseAlibabaNodes(*nodes_text, node_list_path);
  if (!nodes.ok()) return nodes.status();
  trace->nodes = std::move(*nodes);
  return trace;
}

}  // namespace lockstep::trace
