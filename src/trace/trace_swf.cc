// The Standard Workload Format of the Parallel Workloads Archive
// (https://www.cs.huji.ac.il/labs/parallel/workload/swf.html): one job a line, 18
// whitespace-separated numbers; header lines start with ';'. Mapping: docs/formats.md.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <limits>

#include "trace/chunk_reader.h"
#include "trace/trace.h"
#include "trace/trace_text.h"

namespace lockstep::trace {
namespace {

using internal::LineError;

constexpr std::size_t kFields = 18;

// clang-format off
constexpr std::array<std::string_view, kFields> kFieldNames = {
    "job id", "submit time", "wait time", "run time", "allocated processors",
    "average CPU time", "used memory", "requested processors", "requested time",
    "requested memory", "status", "user id", "group id", "executable", "queue", "partition",
    "preceding job", "think time"};
// clang-format on

// Fields the format allows to be fractional (1-based): average CPU time, used and requested
// memory. Every other field is an integer.
constexpr bool IsFractional(std::size_t field) {
  return field == 6 || field == 7 || field == 10;
}

// Clusters larger than this in a header are a typo, not a machine.
constexpr std::int64_t kMaxHeaderNodes = 1'000'000;

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

// The 18 fields of a job line; `count` is how many the line really has.
struct Fields {
  std::array<std::string_view, kFields> f;
  std::size_t count = 0;
};

Fields SplitFields(std::string_view line) {
  Fields out;
  std::size_t i = 0;
  while (true) {
    while (i < line.size() && IsSpace(line[i])) ++i;
    if (i == line.size()) return out;
    const std::size_t start = i;
    while (i < line.size() && !IsSpace(line[i])) ++i;
    if (out.count < kFields) out.f[out.count] = line.substr(start, i - start);
    ++out.count;
  }
}

using FieldValues = std::array<std::int64_t, kFields + 1>;  // 1-based, as the format counts

// The common line, read in one pass without from_chars: 18 fields, each a plain decimal integer
// of at most 18 digits (so it cannot overflow) with an optional '-', or for a fractional field
// digits '.' digits. False for anything else, which then takes the checked parse: that one
// accepts all this accepts, with the same values, and gives the errors.
bool ReadPlainFields(std::string_view line, FieldValues& v) {
  const char* p = line.data();
  const char* const end = p + line.size();
  for (std::size_t i = 1; i <= kFields; ++i) {
    while (p != end && IsSpace(*p)) ++p;
    const bool negative = p != end && *p == '-';
    if (negative) ++p;
    const char* const digits = p;
    std::uint64_t n = 0;  // wraps harmlessly past 18 digits, which are then refused
    while (p != end && static_cast<unsigned>(*p - '0') <= 9) n = n * 10 + (*p++ - '0');
    if (p == digits || p - digits > 18) return false;
    if (p != end && *p == '.' && IsFractional(i)) {
      const char* const decimals = ++p;
      while (p != end && static_cast<unsigned>(*p - '0') <= 9) ++p;
      if (p == decimals) return false;
      n = 0;  // a fractional field: checked, never used
    }
    if (p != end && !IsSpace(*p)) return false;
    v[i] = negative ? -static_cast<std::int64_t>(n) : static_cast<std::int64_t>(n);
  }
  while (p != end && IsSpace(*p)) ++p;
  return p == end;  // more fields: the checked parse counts them
}

// "u42": the user and group names of a job, made without a formatting library.
std::string Named(char prefix, std::int64_t number) {
  char text[24];
  text[0] = prefix;
  const auto [end, ec] = std::to_chars(text + 1, text + sizeof text, number);
  return std::string(text, end);
}

// Parses a text given in pieces (as a file is decompressed): lines are numbered across pieces,
// and a line cut between two pieces is put together before it is parsed.
class SwfParser {
 public:
  // `size_hint`: about how many bytes the whole text has (0: unknown), to make room for its jobs.
  SwfParser(std::string_view source, std::size_t size_hint)
      : source_(source), size_hint_(size_hint) {}

  // Parses every whole line of `text` and keeps its unfinished last line for the next piece.
  Status Feed(std::string_view text) {
    if (size_hint_ > 0) ReserveJobs(text);
    if (!partial_.empty()) {
      const std::size_t nl = text.find('\n');
      if (nl == std::string_view::npos) {
        partial_.append(text);
        return Status::Ok();
      }
      partial_.append(text.substr(0, nl));
      text.remove_prefix(nl + 1);
      const std::string line = std::move(partial_);
      partial_.clear();
      LOCKSTEP_RETURN_IF_ERROR(Line(line));
    }
    while (true) {
      const std::size_t nl = text.find('\n');
      if (nl == std::string_view::npos) break;
      LOCKSTEP_RETURN_IF_ERROR(Line(text.substr(0, nl)));
      text.remove_prefix(nl + 1);
    }
    partial_.assign(text);
    return Status::Ok();
  }

  // Parses the last line, which needs no '\n', and gives the trace.
  Result<Trace> Finish() {
    if (!partial_.empty()) LOCKSTEP_RETURN_IF_ERROR(Line(partial_));
    MakeNodes();
    internal::SortBySubmit(trace_.jobs);
    return std::move(trace_);
  }

 private:
  // Room for as many jobs as the whole text has lines, judging by the lines of its first piece
  // (and a little more), so that the jobs are not copied as they grow. Growing still works.
  void ReserveJobs(std::string_view first_piece) {
    if (first_piece.empty()) return;
    const double lines = static_cast<double>(
        std::count(first_piece.begin(), first_piece.end(), '\n') + 1);
    const double estimate =
        1.05 * lines * static_cast<double>(size_hint_) / static_cast<double>(first_piece.size());
    // A job line has at least 18 fields of a digit and a space.
    const std::size_t most = size_hint_ / (2 * kFields) + 1;
    trace_.jobs.reserve(std::min(most, static_cast<std::size_t>(estimate)));
    size_hint_ = 0;
  }

  // One line without its '\n' (a '\r' before it is dropped); blank lines count but say nothing.
  Status Line(std::string_view text) {
    ++number_;
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    std::string_view line = internal::Trim(text);
    if (line.empty()) return Status::Ok();
    line_ = number_;
    if (line.front() == ';') return Header(line.substr(1));
    return Job(line);
  }

  Status Error(std::string_view message) const { return LineError(source_, line_, message); }

  // "; MaxNodes: 240". Other header lines are kept by nobody.
  Status Header(std::string_view body) {
    body = internal::Trim(body);
    std::int64_t* target = nullptr;
    std::string_view key;
    for (std::string_view k : {std::string_view("MaxNodes:"), std::string_view("MaxProcs:")}) {
      if (body.substr(0, k.size()) == k) {
        key = k.substr(0, k.size() - 1);
        target = k == "MaxNodes:" ? &max_nodes_ : &max_procs_;
      }
    }
    if (target == nullptr) return Status::Ok();
    std::string_view value = internal::Trim(body.substr(key.size() + 1));
    // The number may be followed by a remark ("MaxProcs: 128 (2 per node)").
    std::size_t end = 0;
    while (end < value.size() && (value[end] == '-' || (value[end] >= '0' && value[end] <= '9'))) {
      ++end;
    }
    std::optional<std::int64_t> v = internal::ToInt64(value.substr(0, end));
    if (!v) return Error(fmt::format("header {}: '{}' is not a number", key, value));
    if (*v > kMaxHeaderNodes) {
      return Error(fmt::format("header {}: {} is more than {}", key, *v, kMaxHeaderNodes));
    }
    *target = *v;  // -1 (unknown) and 0 count as not given
    return Status::Ok();
  }

  // The fields of a line that is not the common kind, or an error naming the field.
  Status CheckedFields(std::string_view line, FieldValues& v) const {
    const Fields f = SplitFields(line);
    if (f.count != kFields) {
      return Error(fmt::format("expected {} fields, found {}", kFields, f.count));
    }
    for (std::size_t i = 1; i <= kFields; ++i) {
      Result<std::int64_t> n = Number(f, i);
      if (!n.ok()) return n.status();
      v[i] = *n;
    }
    return Status::Ok();
  }

  // Field `i` (1-based) as an integer, or as a number when the format allows fractions.
  Result<std::int64_t> Number(const Fields& f, std::size_t i) const {
    std::string_view text = f.f[i - 1];
    if (std::optional<std::int64_t> v = internal::ToInt64(text)) return *v;
    std::optional<double> d = internal::ToDouble(text);
    if (!d) {
      return Error(fmt::format("field {} ({}): '{}' is not a number", i, kFieldNames[i - 1], text));
    }
    if (!IsFractional(i)) {
      return Error(
          fmt::format("field {} ({}): '{}' is not an integer", i, kFieldNames[i - 1], text));
    }
    return static_cast<std::int64_t>(0);  // a fractional field: checked, never used
  }

  Status Job(std::string_view line) {
    FieldValues v{};
    if (!ReadPlainFields(line, v)) LOCKSTEP_RETURN_IF_ERROR(CheckedFields(line, v));
    const std::int64_t procs = v[8] > 0 ? v[8] : v[5];
    if (procs <= 0 || v[4] < 0) {  // no processors or no run time: nothing to replay
      ++trace_.skipped;
      return Status::Ok();
    }
    if (procs > std::numeric_limits<std::int32_t>::max()) {
      const std::size_t i = v[8] > 0 ? 8 : 5;
      return Error(fmt::format("field {} ({}): {} is too large", i, kFieldNames[i - 1], procs));
    }
    TraceJob& job = trace_.jobs.emplace_back();
    job.id = v[1];
    job.submit = v[2];
    job.recorded_wait = v[3] < 0 ? -1 : v[3];
    job.run_time = v[4];
    job.procs = static_cast<std::int32_t>(procs);
    job.time_limit = v[9] < 0 ? -1 : v[9];
    job.user = Named('u', v[12]);
    job.account = Named('g', v[13]);
    return Status::Ok();
  }

  // The machine the log ran on, with exactly MaxProcs processors when the header gives them:
  // MaxNodes nodes sharing MaxProcs as evenly as whole CPUs allow (thin nodes of
  // floor(MaxProcs / MaxNodes) first, then the fat ones with one more), or MaxProcs nodes of one
  // CPU when there are fewer processors than nodes. Either count alone gives nodes of one CPU.
  void MakeNodes() {
    if (max_nodes_ <= 0 && max_procs_ <= 0) return;
    std::int64_t n = max_nodes_ > 0 ? max_nodes_ : max_procs_;
    if (max_procs_ > 0) n = std::min(n, max_procs_);
    const std::int64_t procs = max_procs_ > 0 ? max_procs_ : n;
    const std::int64_t thin = procs / n, fat = procs % n;  // the last `fat` nodes get one more
    const std::size_t width = std::to_string(n - 1).size();
    trace_.nodes.reserve(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) {
      TraceNode& node = trace_.nodes.emplace_back();
      node.name = fmt::format("n{:0{}}", i, width);
      node.cpus = static_cast<std::int32_t>(thin + (i >= n - fat ? 1 : 0));
    }
  }

  std::string_view source_;
  std::size_t size_hint_;     // until the first piece makes room for the jobs
  std::string partial_;       // the start of a line whose end is in the next piece
  std::int64_t number_ = 0;   // of the last line read
  std::int64_t line_ = 0;     // of the last line that was not blank, which errors name
  std::int64_t max_nodes_ = -1;
  std::int64_t max_procs_ = -1;
  Trace trace_;
};

}  // namespace

Result<Trace> ParseSwf(std::string_view text, std::string_view source_name) {
  SwfParser parser(source_name, text.size());
  LOCKSTEP_RETURN_IF_ERROR(parser.Feed(text));
  return parser.Finish();
}

// Parses as it decompresses: the whole text is never held at once.
Result<Trace> ReadSwf(const std::string& path) {
  Result<internal::ChunkReader> reader = internal::ChunkReader::Open(path);
  if (!reader.ok()) return reader.status();
  SwfParser parser(path, reader->size_hint());
  while (true) {
    Result<std::string_view> chunk = reader->Next();
    if (!chunk.ok()) return chunk.status();
    if (chunk->empty()) return parser.Finish();
    LOCKSTEP_RETURN_IF_ERROR(parser.Feed(*chunk));
  }
}

}  // namespace lockstep::trace
