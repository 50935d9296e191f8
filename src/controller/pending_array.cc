#include "controller/pending_array.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace lockstep::controller {

PendingArray::PendingArray(JobEntry tmpl, const std::vector<std::uint32_t>& indices)
    : tmpl_(std::move(tmpl)) {
  // Runs of one step: "0-3999999" is one segment, "1,5,100-200:3" three.
  for (std::size_t i = 0; i < indices.size();) {
    Segment s;
    s.first_index = indices[i];
    s.first_pos = i;
    s.count = 1;
    if (i + 1 < indices.size()) {
      s.step = indices[i + 1] - indices[i];
      while (i + s.count < indices.size() &&
             indices[i + s.count] - indices[i + s.count - 1] == s.step)
        ++s.count;
    }
    segments_.push_back(s);
    i += s.count;
  }
  if (!indices.empty()) pending_.push_back({0, indices.size() - 1});
}

std::uint64_t PendingArray::task_count() const {
  return segments_.empty() ? 0 : segments_.back().first_pos + segments_.back().count;
}

std::uint64_t PendingArray::pending_count() const {
  std::uint64_t n = 0;
  for (const auto& [lo, hi] : pending_) n += hi - lo + 1;
  return n;
}

bool PendingArray::Holds(JobId id) const {
  if (id < array_id() || id > last_id()) return false;
  const std::uint64_t pos = id - array_id();
  auto it = std::upper_bound(pending_.begin(), pending_.end(), pos,
                             [](std::uint64_t p, const auto& r) { return p < r.first; });
  return it != pending_.begin() && std::prev(it)->second >= pos;
}

std::optional<JobId> PendingArray::IdOfTask(std::uint32_t task) const {
  for (const Segment& s : segments_) {
    if (task < s.first_index) continue;
    const std::uint64_t off = task - s.first_index;
    if (off % s.step == 0 && off / s.step < s.count) return array_id() + s.first_pos + off / s.step;
  }
  return std::nullopt;
}

std::uint32_t PendingArray::IndexAt(std::uint64_t pos) const {
  auto it = std::upper_bound(segments_.begin(), segments_.end(), pos,
                             [](std::uint64_t p, const Segment& s) { return p < s.first_pos; });
  const Segment& s = *std::prev(it);
  return static_cast<std::uint32_t>(s.first_index + (pos - s.first_pos) * s.step);
}

std::uint32_t PendingArray::TaskOfId(JobId id) const {
  return IndexAt(id - array_id());
}

JobEntry PendingArray::EntryOf(JobId id) const {
  JobEntry e = tmpl_;
  e.id = id;
  e.array_job_id = array_id();
  e.array_task_id = TaskOfId(id);
  return e;
}

JobEntry PendingArray::Take(JobId id) {
  const std::uint64_t pos = id - array_id();
  auto it = std::upper_bound(pending_.begin(), pending_.end(), pos,
                             [](std::uint64_t p, const auto& r) { return p < r.first; });
  --it;  // Holds(id): the range that holds pos
  auto [lo, hi] = *it;
  if (lo == hi) {
    pending_.erase(it);
  } else if (pos == lo) {
    it->first = pos + 1;
  } else if (pos == hi) {
    it->second = pos - 1;
  } else {
    it->second = pos - 1;
    pending_.insert(std::next(it), {pos + 1, hi});
  }
  return EntryOf(id);
}

void PendingArray::AppendText(std::uint64_t lo, std::uint64_t hi, std::string& out) const {
  for (const Segment& s : segments_) {
    const std::uint64_t a = std::max(lo, s.first_pos), b = std::min(hi, s.first_pos + s.count - 1);
    if (a > b) continue;
    const std::uint64_t first = s.first_index + (a - s.first_pos) * s.step;
    const std::uint64_t last = s.first_index + (b - s.first_pos) * s.step;
    if (!out.empty()) out += ',';
    out += std::to_string(first);
    if (a == b) continue;
    if (b == a + 1 && s.step != 1) {
      out += ',' + std::to_string(last);
      continue;
    }
    out += '-' + std::to_string(last);
    if (s.step != 1) out += ':' + std::to_string(s.step);
  }
}

std::string PendingArray::TaskText() const {
  std::string out;
  for (const auto& [lo, hi] : pending_) AppendText(lo, hi, out);
  return out;
}

std::string PendingArray::ToJson(std::string_view spec_json) const {
  nlohmann::json segments = nlohmann::json::array(), pending = nlohmann::json::array();
  for (const Segment& s : segments_) segments.push_back({s.first_index, s.step, s.count});
  for (const auto& [lo, hi] : pending_) pending.push_back({lo, hi});
  nlohmann::json j = {{"entry", nlohmann::json::parse(EntryToJson(tmpl_, spec_json))},
                      {"segments", std::move(segments)},
                      {"pending", std::move(pending)}};
  return j.dump();
}

Result<PendingArray> PendingArray::FromJson(std::string_view json) {
  nlohmann::json j = nlohmann::json::parse(json, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return InvalidArgument("pending array: not JSON");
  try {
    PendingArray a;
    Result<JobEntry> e = EntryFromJson(j.at("entry").dump());
    if (!e.ok()) return e.status();
    a.tmpl_ = std::move(*e);
    std::uint64_t pos = 0;
    for (const auto& s : j.at("segments")) {
      Segment seg{s.at(0).get<std::uint32_t>(), s.at(1).get<std::uint32_t>(),
                  s.at(2).get<std::uint64_t>(), pos};
      if (seg.count == 0 || seg.step == 0) return InvalidArgument("pending array: bad segment");
      pos += seg.count;
      a.segments_.push_back(seg);
    }
    std::uint64_t next = 0;
    for (const auto& r : j.at("pending")) {
      const std::uint64_t lo = r.at(0).get<std::uint64_t>(), hi = r.at(1).get<std::uint64_t>();
      if (lo < next || hi < lo || hi >= pos)
        return InvalidArgument("pending array: positions out of order or range");
      a.pending_.push_back({lo, hi});
      next = hi + 1;
    }
    return a;
  } catch (const nlohmann::json::exception& ex) {
    return InvalidArgument(std::string("pending array: ") + ex.what());
  }
}

void DropArrayIndices(jobspec::ArraySpec& array) {
  if (array.text.empty() || array.indices.empty()) return;
  array.count = static_cast<std::uint32_t>(array.indices.size());
  array.min = array.indices.front();
  array.max = array.indices.back();
  array.indices = {};
}

}  // namespace lockstep::controller
