#include "controller/spec_interner.h"

#include <functional>
#include <string_view>

namespace lockstep::controller {
namespace {

// Cheap and good enough: equal specs hash alike, and a collision only costs a comparison.
std::size_t HashOf(const jobspec::JobSpec& s) {
  std::size_t h = 0;
  auto mix = [&h](std::size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  std::hash<std::string_view> str;
  for (std::string_view f :
       {std::string_view(s.name), std::string_view(s.partition), std::string_view(s.account),
        std::string_view(s.work_dir), std::string_view(s.output), std::string_view(s.error)})
    mix(str(f));
  for (std::int64_t v :
       {std::int64_t{s.min_nodes}, std::int64_t{s.ntasks}, std::int64_t{s.cpus_per_task}, s.mem_mb,
        std::int64_t{s.gpus}, std::int64_t{s.gpus_per_node}, s.time_limit, s.begin_time,
        std::int64_t{s.nice}, std::int64_t{s.hold}})
    mix(std::hash<std::int64_t>()(v));
  mix(s.dependencies.size());
  return h;
}

}  // namespace

std::shared_ptr<const jobspec::JobSpec> SpecInterner::Intern(jobspec::JobSpec spec) {
  std::size_t h = HashOf(spec);
  std::lock_guard<std::mutex> lock(mu_);
  auto [first, last] = specs_.equal_range(h);
  for (auto it = first; it != last; ++it)
    if (std::shared_ptr<const jobspec::JobSpec> shared = it->second.spec.lock();
        shared && *shared == spec)
      return shared;
  auto made = std::make_shared<const jobspec::JobSpec>(std::move(spec));
  specs_.emplace(h, Entry{made, nullptr});
  if (specs_.size() >= sweep_at_) SweepLocked();
  return made;
}

std::shared_ptr<const std::string> SpecInterner::JsonOf(
    const std::shared_ptr<const jobspec::JobSpec>& spec) {
  const std::size_t h = HashOf(*spec);
  auto find = [&]() -> Entry* {
    auto [first, last] = specs_.equal_range(h);
    for (auto it = first; it != last; ++it)
      if (it->second.spec.lock() == spec) return &it->second;
    return nullptr;
  };
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (Entry* e = find(); e && e->json) return e->json;
  }
  // Serialized unlocked; a concurrent caller may do the same, and either result is the same.
  auto json = std::make_shared<const std::string>(jobspec::JobSpecToJson(*spec));
  std::lock_guard<std::mutex> lock(mu_);
  if (Entry* e = find(); e && !e->json && json_bytes_ + json->size() <= max_json_bytes_) {
    e->json = json;
    json_bytes_ += json->size();
  }
  return json;
}

std::size_t SpecInterner::size() {
  std::lock_guard<std::mutex> lock(mu_);
  SweepLocked();
  return specs_.size();
}

std::size_t SpecInterner::json_bytes() {
  std::lock_guard<std::mutex> lock(mu_);
  return json_bytes_;
}

void SpecInterner::SweepLocked() {
  for (auto it = specs_.begin(); it != specs_.end();) {
    if (!it->second.spec.expired()) {
      ++it;
      continue;
    }
    if (it->second.json) json_bytes_ -= it->second.json->size();
    it = specs_.erase(it);
  }
  sweep_at_ = std::max<std::size_t>(1024, specs_.size() * 2);
}

}  // namespace lockstep::controller
