#include "cli/format/squeue.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <functional>
#include <limits>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "cli/format/field_format.h"
#include "cli/format/job_view.h"
#include "cli/format/squeue_fields.h"
#include "common/hostlist.h"

namespace lockstep::cli {
namespace {

constexpr std::size_t kMaxExpandedTasks = 1'000'000;

// Reads a non-negative decimal number at the front of `text`, advancing past it.
bool TakeNumber(std::string_view& text, std::int64_t* value) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *value);
  if (ec != std::errc() || end == text.data()) return false;
  text.remove_prefix(static_cast<std::size_t>(end - text.data()));
  return true;
}

// The task ids of a pending array's task string ("3-10%2", "1,4-6", "0-15:4"), as Slurm's
// bit_unfmt reads it after dropping the "%limit".
Result<std::vector<std::int64_t>> ExpandTasks(std::string_view tasks) {
  std::string_view rest = tasks.substr(0, tasks.find('%'));
  auto bad = [&] { return InvalidArgument(fmt::format("squeue: bad array task string '{}'", tasks)); };
  std::vector<std::int64_t> ids;
  while (true) {
    std::int64_t lo = 0, hi = 0, step = 1;
    if (!TakeNumber(rest, &lo)) return bad();
    hi = lo;
    if (!rest.empty() && rest.front() == '-') {
      rest.remove_prefix(1);
      if (!TakeNumber(rest, &hi)) return bad();
      if (!rest.empty() && rest.front() == ':') {
        rest.remove_prefix(1);
        if (!TakeNumber(rest, &step)) return bad();
      }
    }
    if (hi < lo || step < 1) return bad();
    for (std::int64_t id = lo; id <= hi; id += step) {
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

template <typename T>
int Cmp(const T& a, const T& b) {
  return a < b ? -1 : (b < a ? 1 : 0);
}

using RowCompare = std::function<int(const SqueueRow&, const SqueueRow&)>;

// Slurm's sort_job_list comparators (src/squeue/sort.c), keyed by sort letter.
Result<RowCompare> SortKey(char key, Time now) {
  auto str = [](const char* field) {
    return RowCompare([field](const SqueueRow& a, const SqueueRow& b) {
      return Cmp(JStr(*a.job, field), JStr(*b.job, field));
    });
  };
  auto num = [](const char* field) {
    return RowCompare([field](const SqueueRow& a, const SqueueRow& b) {
      return Cmp(JIntOr(*a.job, field, 0), JIntOr(*b.job, field, 0));
    });
  };
  auto limit_key = [now](const SqueueRow& r, bool left) {
    TimeLimit l = JobTimeLimit(*r.job);
    if (l.unlimited || l.unset) return std::numeric_limits<std::int64_t>::max() - (l.unset ? 1 : 0);
    return left ? l.seconds - JobTimeUsed(*r.job, now) : l.seconds;
  };
  switch (key) {
    case 'i':
      return RowCompare([](const SqueueRow& a, const SqueueRow& b) {
        auto id = [](const SqueueRow& r) {
          std::optional<std::int64_t> task = r.task ? r.task : ArrayTaskId(*r.job);
          std::int64_t base = task ? JIntOr(*r.job, "array_job_id", 0) : JIntOr(*r.job, "job_id", 0);
          return std::pair(base, task.value_or(std::numeric_limits<std::int64_t>::max()));
        };
        return Cmp(id(a), id(b));
      });
    case 'j': return str("name");
    case 'u': return str("user");
    case 'U': return num("uid");
    case 'P': return str("partition");
    case 'v': return str("reservation");
    case 't':
      return RowCompare([](const SqueueRow& a, const SqueueRow& b) {
        return Cmp(CompactJobState(JobState(*a.job)), CompactJobState(JobState(*b.job)));
      });
    case 'T':
      return RowCompare([](const SqueueRow& a, const SqueueRow& b) {
        return Cmp(JobState(*a.job), JobState(*b.job));
      });
    case 'p':
    case 'Q': return num("priority");
    case 'S':
      return RowCompare([now](const SqueueRow& a, const SqueueRow& b) {
        auto start = [now](const SqueueRow& r) {  // sort.c _get_start_time
          Time t = JobStartOrExpected(*r.job);
          if (t == 0) return now + 100;
          if (IsPendingState(JobState(*r.job)) && t < now) return now;
          return t;
        };
        return Cmp(start(a), start(b));
      });
    case 'V': return num("submit_time");
    case 'e': return num("end_time");
    case 'D': return num("node_count");
    case 'C': return num("cpus");
    case 'M':
      return RowCompare([now](const SqueueRow& a, const SqueueRow& b) {
        return Cmp(JobTimeUsed(*a.job, now), JobTimeUsed(*b.job, now));
      });
    case 'l':
    case 'L': {
      bool left = key == 'L';
      return RowCompare([limit_key, left](const SqueueRow& a, const SqueueRow& b) {
        return Cmp(limit_key(a, left), limit_key(b, left));
      });
    }
    case 'N':
      return RowCompare([](const SqueueRow& a, const SqueueRow& b) {
        return Cmp(FirstHost(*a.job), FirstHost(*b.job));
      });
    default:
      return InvalidArgument(fmt::format("squeue: invalid sort specification: {}", key));
  }
}

// Applies a Slurm sort list as sort_job_list does: keys from last to first, each a stable sort,
// so the first key is the primary one.
Status SortRows(std::vector<SqueueRow>& rows, std::string_view sort, Time now) {
  for (std::size_t i = sort.size(); i-- > 0;) {
    char c = sort[i];
    if (c == ',' || c == '+' || c == '-') continue;
    bool reverse = i > 0 && sort[i - 1] == '-';
    Result<RowCompare> cmp = SortKey(c, now);
    if (!cmp.ok()) return cmp.status();
    std::stable_sort(rows.begin(), rows.end(), [&](const SqueueRow& a, const SqueueRow& b) {
      int d = (*cmp)(a, b);
      return reverse ? d > 0 : d < 0;
    });
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
  for (const FieldSpec& field : spec->fields) {
    bool cut = true;
    if (field.auto_width || SqueueHeader(field.letter, &cut) == nullptr) {
      return InvalidArgument(fmt::format("squeue: invalid job format specification: %{}{}",
                                         field.auto_width ? "#" : "", field.letter));
    }
  }
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
  Result<RowCompare> by_id = SortKey('i', options.now);
  std::stable_sort(rows.begin(), rows.end(),
                   [&](const SqueueRow& a, const SqueueRow& b) { return (*by_id)(a, b) < 0; });
  LOCKSTEP_RETURN_IF_ERROR(SortRows(rows, sort, options.now));

  std::string out;
  if (!options.noheader) {
    if (options.long_format) out += DateLine(options.now) + "\n";
    AppendLine(out, *spec, [](char letter) {
      SqueueCell c;
      c.text = SqueueHeader(letter, &c.cut);
      return c;
    });
  }
  for (const SqueueRow& row : rows) {
    AppendLine(out, *spec, [&](char letter) { return SqueueValue(letter, row, options.now); });
  }
  return out;
}

}  // namespace lockstep::cli
