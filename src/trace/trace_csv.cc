// lockstep's own trace CSV for GPU jobs (docs/formats.md, "lockstep trace CSV"):
//   submit,user,account,partition,nodes,gpus_per_node,run_time,time_limit
#include <fmt/format.h>

#include <limits>

#include "common/duration.h"
#include "trace/trace.h"
#include "trace/trace_text.h"

namespace lockstep::trace {
namespace {

using internal::CsvTable;

constexpr std::string_view kHeader =
    "submit,user,account,partition,nodes,gpus_per_node,run_time,time_limit";
enum Column : std::size_t {
  kSubmit,
  kUser,
  kAccount,
  kPartition,
  kNodes,
  kGpusPerNode,
  kRunTime,
  kTimeLimit
};

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// Plain seconds ("3600") or a Slurm duration ("1:00:00", "2-00:00:00", "UNLIMITED").
// Note that a bare number is seconds here, not Slurm's minutes.
Result<Seconds> Duration(const CsvTable& t, std::size_t column) {
  std::string_view text = t.Field(column);
  if (text.empty()) return t.ColumnError(column, "empty, expected seconds or a Slurm time");
  const bool negative = text.front() == '-';
  if (AllDigits(negative ? text.substr(1) : text)) {
    std::optional<std::int64_t> v = internal::ToInt64(text);
    if (!v || *v >= kUnlimited)
      return t.ColumnError(column, fmt::format("'{}' is too large", text));
    if (negative) return t.ColumnError(column, fmt::format("'{}' is negative", text));
    return *v;
  }
  Result<Seconds> d = ParseSlurmDuration(text);
  if (!d.ok()) return t.ColumnError(column, d.status().message());
  return d;
}

Result<std::int32_t> Int32AtLeast(const CsvTable& t, std::size_t column, std::int32_t min) {
  Result<std::int64_t> v = t.Int(column);
  if (!v.ok()) return v.status();
  if (*v < min || *v > std::numeric_limits<std::int32_t>::max()) {
    return t.ColumnError(column, fmt::format("{} is out of range ({}..{})", *v, min,
                                             std::numeric_limits<std::int32_t>::max()));
  }
  return static_cast<std::int32_t>(*v);
}

Result<TraceJob> Row(const CsvTable& t) {
  TraceJob job;
  job.id = t.row();
  Result<std::int64_t> submit = t.Int(kSubmit);
  if (!submit.ok()) return submit.status();
  if (*submit < 0) return t.ColumnError(kSubmit, fmt::format("{} is negative", *submit));
  job.submit = *submit;
  job.user = std::string(t.Field(kUser));
  if (job.user.empty()) return t.ColumnError(kUser, "empty, every job needs a user");
  job.account = std::string(t.Field(kAccount));
  job.partition = std::string(t.Field(kPartition));
  Result<std::int32_t> nodes = Int32AtLeast(t, kNodes, 1);
  if (!nodes.ok()) return nodes.status();
  job.nodes = *nodes;
  Result<std::int32_t> gpus = Int32AtLeast(t, kGpusPerNode, 0);
  if (!gpus.ok()) return gpus.status();
  job.gpus_per_node = *gpus;
  // A run time must be known: "-1" is an error here, not a skipped record.
  Result<Seconds> run = Duration(t, kRunTime);
  if (!run.ok()) return run.status();
  if (*run >= kUnlimited) return t.ColumnError(kRunTime, "a run time cannot be unlimited");
  job.run_time = *run;
  // time_limit: empty or -1 is unknown (-1); UNLIMITED is kUnlimited.
  std::string_view limit = t.Field(kTimeLimit);
  if (limit.empty() || limit == "-1") {
    job.time_limit = -1;
  } else {
    Result<Seconds> l = Duration(t, kTimeLimit);
    if (!l.ok()) return l.status();
    job.time_limit = *l;
  }
  return job;
}

}  // namespace

Result<Trace> ParseLockstepCsv(std::string_view text, std::string_view source_name) {
  CsvTable t(text, source_name);
  LOCKSTEP_RETURN_IF_ERROR(t.ReadHeader());
  std::string header;
  for (std::string_view h : t.header()) header += fmt::format("{}{}", header.empty() ? "" : ",", h);
  if (header != kHeader) {
    return t.Error(fmt::format("expected the header '{}', found '{}'", kHeader, header));
  }
  Trace trace;
  while (true) {
    Result<bool> more = t.NextRow();
    if (!more.ok()) return more.status();
    if (!*more) break;
    Result<TraceJob> job = Row(t);
    if (!job.ok()) return job.status();
    trace.jobs.push_back(std::move(*job));
  }
  internal::SortBySubmit(trace.jobs);
  return trace;
}

Result<Trace> ReadLockstepCsv(const std::string& path) {
  Result<std::string> text = ReadFileMaybeGzip(path);
  if (!text.ok()) return text.status();
  return ParseLockstepCsv(*text, path);
}

}  // namespace lockstep::trace
