#include "cli/format/squeue.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <functional>
#include <limits>
#include <optional>
#include <string_view>
#include <tuple>
#include <vector>

#include "cli/format/field_format.h"
#include "cli/format/unknown_letters.h"
#include "cli/format/job_view.h"
#include "cli/format/squeue_fields.h"
#include "common/hostlist.h"

namespace lockstep::cli {
namespace {

constexpr std::size_t kMaxExpandedTasks = 4'000'001;  // MaxArraySize's ceiling

// Reads the decimal number at the front of `text` and advances `text` past it.
std::optional<std::int64_t> TakeNumber(std::string_view& text) {
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end == text.data()) return std::nullopt;
  text.remove_prefix(static_cast<std::size_t>(end - text.data()));
  return value;
}

// The task ids of a pending array's task string ("3-10%2", "1,4-6", "0-15:4"), as Slurm's
// bit_unfmt reads it after dropping the "%limit".
Result<std::vector<std::int64_t>> ExpandTasks(std::string_view tasks) {
  std::string_view rest = tasks.substr(0, tasks.find('%'));
  auto bad = [&] {
    return InvalidArgument(fmt::format("squeue: bad array task string '{}'", tasks));
  };
  std::vector<std::int64_t> ids;
  while (true) {
    std::optional<std::int64_t> lo = TakeNumber(rest), hi = lo, step = 1;
    if (!lo) return bad();
    if (!rest.empty() && rest.front() == '-') {
      rest.remove_prefix(1);
      hi = TakeNumber(rest);
      if (!hi) return bad();
      if (!rest.empty() && rest.front() == ':') {
        rest.remove_prefix(1);
        step = TakeNumber(rest);
        if (!step) return bad();
      }
    }
    if (*lo < 0 || *hi < *lo || *step < 1) return bad();
    for (std::int64_t id = *lo; id <= *hi; id += *step) {
      if (ids.size() >= kMaxExpandedTasks) {
        return InvalidArgument(fmt::format("squeue: array '{}' has too many tasks", tasks));
      }
      ids.push_back(id);
    }
    if (rest.empty()) break;
    if (rest.front() != ',') return bad();
    rest.remove_prefix(1);
  }
  return ids;
}

// The first host of a job's node list in hostlist_sort order, for the N sort key.
std::string FirstHost(const nlohmann::json& job) {
  auto hosts = ExpandHostlist(JStr(job, "nodes"));
  if (!hosts.ok() || hosts->empty()) return "";
  return *std::min_element(hosts->begin(), hosts->end(), HostNameLess);
}

// A row's value for one sort key, computed once per row: numbers compare first, then text.
struct SortValue {
  std::int64_t a = 0, b = 0;
  std::string text;
  bool operator<(const SortValue& o) const {
    return std::tie(a, b, text) < std::tie(o.a, o.b, o.text);
  }
};

using SortExtractor = std::function<SortValue(const SqueueRow&)>;

SortValue Num(std::int64_t v) {
  return {v, 0, {}};
}
SortValue Text(std::string s) {
  return {0, 0, std::move(s)};
}

// Slurm's sort_job_list keys (src/squeue/sort.c), by sort letter.
Result<SortExtractor> SortKey(char key, Time now) {
  auto str = [](const char* field) {
    return SortExtractor([field](const SqueueRow& r) { return Text(JStr(*r.job, field)); });
  };
  auto num = [](const char* field) {
    return SortExtractor([field](const SqueueRow& r) { return Num(JIntOr(*r.job, field, 0)); });
  };
  switch (key) {
    case 'i':  // array tasks by their array's id, then task id; the pending remainder last
      return SortExtractor([](const SqueueRow& r) {
        std::optional<std::int64_t> task = r.task ? r.task : ArrayTaskId(*r.job);
        std::int64_t base = task ? JIntOr(*r.job, "array_job_id", 0) : JIntOr(*r.job, "job_id", 0);
        return SortValue{base, task.value_or(std::numeric_limits<std::int64_t>::max()), {}};
      });
    case 'j':
      return str("name");
    case 'u':
      return str("user");
    case 'U':
      return num("uid");
    case 'P':
      return str("partition");
    case 'v':
      return str("reservation");
    case 't':
      return SortExtractor(
          [](const SqueueRow& r) { return Text(CompactJobState(JobState(*r.job))); });
    case 'T':
      return SortExtractor([](const SqueueRow& r) { return Text(JobState(*r.job)); });
    case 'p':
    case 'Q':
      return num("priority");
    case 'S':  // sort.c _get_start_time: unknown starts count as now + 100 s
      return SortExtractor([now](const SqueueRow& r) {
        Time t = JobStartOrExpected(*r.job);
        if (t == 0) return Num(now + 100);
        if (IsPendingState(JobState(*r.job)) && t < now) return Num(now);
        return Num(t);
      });
    case 'V':
      return num("submit_time");
    case 'e':
      return num("end_time");
    case 'D':
      return num("node_count");
    case 'C':
      return num("cpus");
    case 'M':
      return SortExtractor([now](const SqueueRow& r) { return Num(JobTimeUsed(*r.job, now)); });
    case 'l':
    case 'L': {
      bool left = key == 'L';
      return SortExtractor([now, left](const SqueueRow& r) {
        TimeLimit l = JobTimeLimit(*r.job);
        if (l.unlimited) return Num(std::numeric_limits<std::int64_t>::max());
        if (l.unset) return Num(std::numeric_limits<std::int64_t>::max() - 1);
        return Num(left ? l.seconds - JobTimeUsed(*r.job, now) : l.seconds);
      });
    }
    case 'N':
      return SortExtractor([](const SqueueRow& r) { return Text(FirstHost(*r.job)); });
    default:
      return InvalidArgument(fmt::format("squeue: invalid sort specification: {}", key));
  }
}

// Sorts rows by one key, stably, computing each row's key once.
void SortBy(std::vector<SqueueRow>& rows, const SortExtractor& key, bool reverse) {
  std::vector<SortValue> keys;
  keys.reserve(rows.size());
  for (const SqueueRow& row : rows) keys.push_back(key(row));
  std::vector<std::size_t> order(rows.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    return reverse ? keys[y] < keys[x] : keys[x] < keys[y];
  });
  std::vector<SqueueRow> sorted;
  sorted.reserve(rows.size());
  for (std::size_t i : order) sorted.push_back(rows[i]);
  rows = std::move(sorted);
}

// Applies a Slurm sort list as sort_job_list does: keys from last to first, each a stable sort,
// so the first key is the primary one.
Status SortRows(std::vector<SqueueRow>& rows, std::string_view sort, Time now) {
  for (std::size_t i = sort.size(); i-- > 0;) {
    char c = sort[i];
    if (c == ',' || c == '+' || c == '-') continue;
    Result<SortExtractor> key = SortKey(c, now);
    if (!key.ok()) return key.status();
    SortBy(rows, *key, i > 0 && sort[i - 1] == '-');
  }
  return Status::Ok();
}

void AppendLine(std::string& out, const FormatSpec& spec,
                const std::function<SqueueCell(char)>& cell) {
  out += spec.prefix;
  for (const FieldSpec& field : spec.fields) {
    SqueueCell c = cell(field.letter);
    out += FitField(c.text, field.width, field.right, c.cut);
    out += field.suffix;
  }
  out += '\n';
}

}  // namespace

Result<std::string> FormatSqueue(const nlohmann::json& jobs, const SqueueOptions& options) {
  std::string format = options.format;
  if (format.empty()) {
    format = options.long_format ? kSqueueLongFormat
             : options.start     ? kSqueueStartFormat
                                 : kSqueueDefaultFormat;
  }
  Result<FormatSpec> spec = ParseFormat(format, "squeue");
  if (!spec.ok()) return spec.status();
  SettleUnknownLetters(*spec, [](char c) { return SqueueHeader(c).has_value(); },
                       UnknownLetter::kAsText, /*allow_auto_width=*/false);
  Result<std::vector<const nlohmann::json*>> records = Records(jobs, "jobs");
  if (!records.ok()) return records.status();

  std::vector<SqueueRow> rows;
  for (const nlohmann::json* job : *records) {
    std::string tasks = ArrayTaskString(*job);
    if (options.array_expanded && !tasks.empty()) {
      Result<std::vector<std::int64_t>> ids = ExpandTasks(tasks);
      if (!ids.ok()) return ids.status();
      for (std::int64_t id : *ids) rows.push_back({job, id});
    } else {
      rows.push_back({job, std::nullopt});
    }
  }
  std::string sort = options.sort.empty() ? (options.start ? "S" : "P,t,-p") : options.sort;
  // A deterministic base order (Slurm's qsort leaves ties unspecified): by job id.
  SortBy(rows, *SortKey('i', options.now), false);
  LOCKSTEP_RETURN_IF_ERROR(SortRows(rows, sort, options.now));

  std::string out;
  if (!options.noheader) {
    if (options.long_format) out += DateLine(options.now) + "\n";
    AppendLine(out, *spec, [](char letter) { return *SqueueHeader(letter); });
  }
  for (const SqueueRow& row : rows) {
    AppendLine(out, *spec, [&](char letter) { return SqueueValue(letter, row, options.now); });
  }
  return out;
}

}  // namespace lockstep::cli
