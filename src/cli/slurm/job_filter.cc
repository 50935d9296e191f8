#include "cli/slurm/job_filter.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <map>

#include "common/hostlist.h"

namespace lockstep::cli {
namespace {

std::optional<std::int64_t> Number(std::string_view s) {
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty() || v < 0) return std::nullopt;
  return v;
}

// "1-3,7" (a '%N' throttle allowed and ignored, as scancel does) into task ids.
std::optional<std::set<std::int64_t>> TaskSet(std::string_view text) {
  text = text.substr(0, text.find('%'));
  std::set<std::int64_t> out;
  while (!text.empty()) {
    std::string_view item = text.substr(0, text.find(','));
    text.remove_prefix(std::min(text.size(), item.size() + 1));
    std::size_t dash = item.find('-');
    auto lo = Number(item.substr(0, dash));
    auto hi = dash == std::string_view::npos ? lo : Number(item.substr(dash + 1));
    if (!lo || !hi || *hi < *lo || *hi - *lo > 4000000) return std::nullopt;
    for (std::int64_t t = *lo; t <= *hi; ++t) out.insert(t);
  }
  if (out.empty()) return std::nullopt;
  return out;
}

Result<JobIdPattern> ParseOne(const std::string& word) {
  Status bad = InvalidArgument("Invalid job id specified: " + word);
  JobIdPattern p{.text = word};
  if (const std::size_t plus = word.find('+'); plus != std::string::npos) {  // "43+1"
    auto id = Number(std::string_view(word).substr(0, plus));
    auto offset = Number(std::string_view(word).substr(plus + 1));
    if (!id || *id == 0 || !offset) return bad;
    p.id = static_cast<std::uint64_t>(*id);
    p.het_offset = *offset;
    return p;
  }
  std::size_t us = word.find('_');
  auto id = Number(std::string_view(word).substr(0, us));
  if (!id || *id == 0) return bad;
  p.id = static_cast<std::uint64_t>(*id);
  if (us == std::string::npos) return p;
  std::string_view tasks = std::string_view(word).substr(us + 1);
  if (tasks.size() >= 2 && tasks.front() == '[' && tasks.back() == ']')
    tasks = tasks.substr(1, tasks.size() - 2);
  else if (tasks.find_first_of(",-[]") != std::string_view::npos)
    return bad;  // a range needs brackets: 40_[1-2]
  p.tasks = TaskSet(tasks);
  if (!p.tasks) return bad;
  return p;
}

// `job[key]` is in `set` (an empty set takes everything). A value that is not text matches no
// name: sprio's objects carry "qos" as the QoS factor, a number, not the QoS's name.
bool InSet(const std::set<std::string>& set, const nlohmann::json& job, const char* key) {
  if (set.empty()) return true;
  auto it = job.find(key);
  return it != job.end() && it->is_string() && set.count(it->get<std::string>()) > 0;
}

}  // namespace

Result<std::vector<JobIdPattern>> ParseJobIdList(const std::string& text) {
  std::vector<JobIdPattern> out;
  std::string word;
  int depth = 0;
  auto flush = [&]() -> Status {
    if (word.empty()) return Status::Ok();
    Result<JobIdPattern> p = ParseOne(word);
    if (!p.ok()) return p.status();
    out.push_back(std::move(*p));
    word.clear();
    return Status::Ok();
  };
  for (char c : text) {
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if ((c == ',' || c == ' ') && depth == 0) {
      LOCKSTEP_RETURN_IF_ERROR(flush());
      continue;
    }
    word += c;
  }
  LOCKSTEP_RETURN_IF_ERROR(flush());
  return out;
}

// "[5-9%2]" -> "5-9": the task ranges of an "array_task_str".
static std::string_view BareTaskText(std::string_view text) {
  if (!text.empty() && text.front() == '[') text.remove_prefix(1);
  if (!text.empty() && text.back() == ']') text.remove_suffix(1);
  return text.substr(0, text.find('%'));
}

bool TaskTextHolds(std::string_view text, std::int64_t task) {
  text = BareTaskText(text);
  while (!text.empty()) {
    std::size_t comma = text.find(',');
    std::string_view piece = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    std::int64_t lo = 0, hi = 0, step = 1;
    const char* end = piece.data() + piece.size();
    auto r = std::from_chars(piece.data(), end, lo);
    hi = lo;
    if (r.ptr != end && *r.ptr == '-') r = std::from_chars(r.ptr + 1, end, hi);
    if (r.ptr != end && *r.ptr == ':') r = std::from_chars(r.ptr + 1, end, step);
    if (step > 0 && task >= lo && task <= hi && (task - lo) % step == 0) return true;
  }
  return false;
}

bool JobMatches(const nlohmann::json& job, const JobIdPattern& pattern) {
  const std::uint64_t id = job.value("job_id", std::uint64_t{0});
  const std::uint64_t array = job.value("array_job_id", std::uint64_t{0});
  const std::uint64_t het = job.value("het_job_id", std::uint64_t{0});
  if (pattern.het_offset)
    return het == pattern.id && job.value("het_job_offset", std::int64_t{-1}) == *pattern.het_offset;
  if (!pattern.tasks)
    return id == pattern.id || (array != 0 && array == pattern.id) || (het != 0 && het == pattern.id);
  if (array != pattern.id) return false;
  if (job.contains("array_task_id"))
    return pattern.tasks->count(job["array_task_id"].get<std::int64_t>()) > 0;
  // The tasks lockstepd keeps in one record: "array_task_str" says which.
  if (job.value("array_rest", false)) {
    const std::string text = job.value("array_task_str", "");
    return std::any_of(pattern.tasks->begin(), pattern.tasks->end(),
                       [&](std::int64_t t) { return TaskTextHolds(text, t); });
  }
  return false;
}

std::function<Status(const std::string&)> AddCommaItems(std::set<std::string>& to) {
  return [&to](const std::string& value) {
    std::set<std::string> items = CommaSet(value);
    to.insert(items.begin(), items.end());
    return Status::Ok();
  };
}

std::set<std::string> CommaSet(const std::string& text) {
  std::set<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? std::string::npos
                                                                     : comma - start);
    if (!item.empty()) out.insert(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

Status AddNodes(JobFilter& filter, const std::string& hostlist) {
  Result<std::vector<std::string>> hosts = ExpandHostlist(hostlist);
  if (!hosts.ok()) return InvalidArgument("Invalid node name specified: " + hostlist);
  filter.nodes.insert(hosts->begin(), hosts->end());
  return Status::Ok();
}

bool Passes(const nlohmann::json& job, const JobFilter& filter) {
  if (!filter.ids.empty() &&
      std::none_of(filter.ids.begin(), filter.ids.end(),
                   [&](const JobIdPattern& p) { return JobMatches(job, p); }))
    return false;
  if (!InSet(filter.names, job, "name") || !InSet(filter.accounts, job, "account") ||
      !InSet(filter.qos, job, "qos") || !InSet(filter.partitions, job, "partition") ||
      !InSet(filter.users, job, "user") || !InSet(filter.states, job, "state") ||
      !InSet(filter.reservations, job, "reservation"))
    return false;
  if (filter.nodes.empty()) return true;
  Result<std::vector<std::string>> hosts = ExpandHostlist(job.value("nodes", ""));
  if (!hosts.ok()) return false;
  return std::any_of(hosts->begin(), hosts->end(),
                     [&](const std::string& h) { return filter.nodes.count(h) > 0; });
}

std::string JobStateName(std::string word) {
  static const std::pair<const char*, const char*> kNames[] = {
      {"PD", "PENDING"},   {"R", "RUNNING"},   {"CG", "COMPLETING"}, {"CD", "COMPLETED"},
      {"CA", "CANCELLED"}, {"F", "FAILED"},    {"TO", "TIMEOUT"},    {"NF", "NODE_FAIL"},
      {"PR", "PREEMPTED"}, {"OOM", "OUT_OF_MEMORY"}, {"S", "SUSPENDED"}, {"BF", "BOOT_FAIL"},
      {"DL", "DEADLINE"},  {"CF", "CONFIGURING"}, {"RQ", "REQUEUED"}, {"RH", "REQUEUE_HOLD"},
      {"RD", "RESV_DEL_HOLD"}, {"RF", "REQUEUE_FED"}, {"RS", "RESIZING"}, {"RV", "REVOKED"},
      {"SI", "SIGNALING"}, {"SE", "SPECIAL_EXIT"}, {"SO", "STAGE_OUT"}, {"ST", "STOPPED"}};
  for (char& ch : word) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  for (auto& [compact, name] : kNames)
    if (word == compact || word == name) return name;
  return "";
}

std::string TaskRanges(const std::vector<std::int64_t>& ids) {
  std::string out;
  for (std::size_t i = 0; i < ids.size();) {
    std::size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(ids[i]);
    if (j > i) out += '-' + std::to_string(ids[j]);
    i = j + 1;
  }
  return out;
}

// Joins task texts ("0-2", "3-3999999") into one ("0-3999999"): pieces in order of their first
// task, consecutive runs of one step joined.
std::string JoinTaskTexts(const std::vector<std::string>& texts) {
  struct Piece {
    std::int64_t lo = 0, hi = 0, step = 1;
  };
  std::vector<Piece> pieces;
  for (const std::string& text : texts) {
    std::string_view rest = text;
    while (!rest.empty()) {
      std::size_t comma = rest.find(',');
      std::string_view word = rest.substr(0, comma);
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
      Piece p;
      const char* end = word.data() + word.size();
      auto r = std::from_chars(word.data(), end, p.lo);
      p.hi = p.lo;
      if (r.ptr != end && *r.ptr == '-') r = std::from_chars(r.ptr + 1, end, p.hi);
      if (r.ptr != end && *r.ptr == ':') r = std::from_chars(r.ptr + 1, end, p.step);
      pieces.push_back(p);
    }
  }
  std::sort(pieces.begin(), pieces.end(),
            [](const Piece& a, const Piece& b) { return a.lo < b.lo; });
  std::vector<Piece> joined;
  for (const Piece& p : pieces) {
    if (!joined.empty() && joined.back().step == 1 && p.step == 1 &&
        joined.back().hi + 1 >= p.lo) {
      joined.back().hi = std::max(joined.back().hi, p.hi);
      continue;
    }
    joined.push_back(p.lo == p.hi ? Piece{p.lo, p.hi, 1} : p);
  }
  std::string out;
  for (const Piece& p : joined) {
    if (!out.empty()) out += ',';
    out += std::to_string(p.lo);
    if (p.hi != p.lo) out += '-' + std::to_string(p.hi);
    if (p.step != 1) out += ':' + std::to_string(p.step);
  }
  return out;
}

nlohmann::json NarrowArrayRests(nlohmann::json jobs, const JobFilter& filter) {
  nlohmann::json out = nlohmann::json::array();
  for (nlohmann::json& job : jobs) {
    const bool whole =
        !job.value("array_rest", false) || filter.ids.empty() ||
        std::any_of(filter.ids.begin(), filter.ids.end(),
                    [&](const JobIdPattern& p) { return !p.tasks && JobMatches(job, p); });
    if (whole) {
      out.push_back(std::move(job));
      continue;
    }
    const std::uint64_t array = job.value("array_job_id", std::uint64_t{0});
    const std::string text = job.value("array_task_str", "");
    std::set<std::int64_t> tasks;
    for (const JobIdPattern& p : filter.ids)
      if (p.id == array && p.tasks)
        for (std::int64_t t : *p.tasks)
          if (TaskTextHolds(text, t)) tasks.insert(t);
    for (std::int64_t t : tasks) {
      nlohmann::json one = job;
      for (const char* key : {"array_task_str", "array_rest", "array_tasks_pending"})
        one.erase(key);
      one["array_task_id"] = t;
      out.push_back(std::move(one));
    }
  }
  return out;
}

nlohmann::json CollapsePendingArrays(nlohmann::json jobs) {
  nlohmann::json out = nlohmann::json::array();
  // array job id -> index in `out` of its pending remainder, its task ids split off, and the
  // text of its tasks lockstepd keeps in one record ("array_rest")
  struct Pending {
    std::size_t index = 0;
    std::vector<std::int64_t> ids;
    std::string rest;
  };
  std::map<std::uint64_t, Pending> pending;
  for (nlohmann::json& job : jobs) {
    const std::uint64_t array = job.value("array_job_id", std::uint64_t{0});
    const bool rest = job.value("array_rest", false);
    if (array == 0 || job.value("state", "") != "PENDING" ||
        (!rest && !job.contains("array_task_id"))) {
      out.push_back(std::move(job));
      continue;
    }
    auto [it, fresh] = pending.try_emplace(array, Pending{out.size(), {}, {}});
    if (rest)
      it->second.rest = std::string(BareTaskText(job.value("array_task_str", "")));
    else
      it->second.ids.push_back(job["array_task_id"].get<std::int64_t>());
    if (fresh)
      out.push_back(std::move(job));
    else if (rest)
      out[it->second.index] = std::move(job);  // the array's own record stands for the whole
  }
  for (auto& [array, entry] : pending) {
    if (entry.ids.size() == 1 && entry.rest.empty()) continue;  // one task prints as 40_7
    std::sort(entry.ids.begin(), entry.ids.end());
    nlohmann::json& rec = out[entry.index];
    std::string text = JoinTaskTexts({TaskRanges(entry.ids), entry.rest});
    if (rec.value("array_max_running", 0) > 0)
      text += "%" + std::to_string(rec["array_max_running"].get<int>());
    rec["array_task_str"] = "[" + text + "]";
    rec.erase("array_task_id");
    rec["job_id"] = array;
  }
  return out;
}

}  // namespace lockstep::cli
