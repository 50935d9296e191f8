#include "backend/kubernetes/gangs/pod_group_status_writer.h"

#include <algorithm>
#include <vector>

#include "backend/kubernetes/client/api_error.h"
#include "common/log.h"

namespace lockstep::kube {

PodGroupStatusWriter::PodGroupStatusWriter(KubeClient* client, Compute compute,
                                           PodGroupStatusWriterOptions options)
    : client_(client), compute_(std::move(compute)), options_(options) {}

PodGroupStatusWriter::~PodGroupStatusWriter() {
  Stop();
}

void PodGroupStatusWriter::Start() {
  thread_ = std::thread([this] { Run(); });
}

void PodGroupStatusWriter::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::int64_t PodGroupStatusWriter::writes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return writes_;
}

bool PodGroupStatusWriter::SettleForTest(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return settled_.wait_for(lock, timeout, [&] { return due_.empty() && !writing_; });
}

void PodGroupStatusWriter::MarkDirty(const std::string& key) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_ || due_.count(key)) return;  // already due: it will see the latest state
    Clock::time_point at = options_.clock->MonotonicNow() + options_.delay;
    if (auto last = last_write_.find(key); last != last_write_.end())
      at = std::max(at, last->second + options_.interval);
    due_[key] = at;
  }
  wake_.notify_all();
}

void PodGroupStatusWriter::Forget(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  written_.erase(key);
  last_write_.erase(key);
}

void PodGroupStatusWriter::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    if (due_.empty()) {
      wake_.wait(lock, [&] { return stop_ || !due_.empty(); });
      continue;
    }
    auto next = std::min_element(due_.begin(), due_.end(),
                                 [](const auto& a, const auto& b) { return a.second < b.second; });
    if (const auto now = options_.clock->MonotonicNow(); now < next->second) {
      // or a new key, or Stop(); `next` is on the injected clock, the wait in real time
      wake_.wait_until(lock, Clock::now() + (next->second - now));
      continue;
    }
    std::vector<std::string> keys;
    const auto now = options_.clock->MonotonicNow();
    for (auto it = due_.begin(); it != due_.end();) {
      if (it->second <= now) {
        keys.push_back(it->first);
        it = due_.erase(it);
      } else {
        ++it;
      }
    }
    writing_ = true;
    lock.unlock();
    for (const std::string& key : keys) Write(key);
    lock.lock();
    writing_ = false;
    settled_.notify_all();
  }
}

void PodGroupStatusWriter::Write(const std::string& key) {
  std::optional<PodGroupStatusPatch> patch = compute_(key);
  if (!patch) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto w = written_.find(key);
        w != written_.end() && w->second.uid == patch->uid && w->second.status == patch->status)
      return;  // the informer has not caught up with our last write yet
  }
  if (before_write_for_test_) before_write_for_test_(key);
  Result<Json> r =
      client_->Patch(patch->path + "/status", PatchType::kMerge, {{"status", patch->status}});
  std::lock_guard<std::mutex> lock(mu_);
  last_write_[key] = options_.clock->MonotonicNow();
  if (r.ok()) {
    ++writes_;
    written_[key] = std::move(*patch);
    return;
  }
  written_.erase(key);
  if (IsNotFound(r.status())) return;  // deleted meanwhile
  log::Warning("pod groups: status of {}: {} (again in {} ms)", key, r.status().ToString(),
               options_.interval.count());
  if (!stop_) due_.emplace(key, options_.clock->MonotonicNow() + options_.interval);  // again later
}

}  // namespace lockstep::kube
