// bench/easy_reference.py's textbook EASY, step for step, in plain C++ on lockstep's own trace
// reader: the second yardstick of docs/benchmarks.md ("lockstep sim against a Python EASY").
// Against the Python it measures what the language alone buys for the same algorithm; against
// `lockstep sim` (which reads the log with the same reader) what lockstep's engine costs beyond
// the textbook's processor counts. Its schedule must equal the Python's: same mean wait and
// mean bounded slowdown, to the last digit.
//
//   build/bin/easy_reference LOG.swf[.gz]
//
// Processor counts only: the machine is the trace's processors, a job takes its processors for
// its run time, killed at its limit; FCFS by submit time then id; at every moment completions
// first, then submissions, then starts from the head, the head's reservation (shadow time and
// extra processors) and one backfill scan. A job larger than the machine never starts.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <queue>
#include <tuple>
#include <vector>

#include "trace/trace.h"

namespace {

using lockstep::trace::Trace;
using lockstep::trace::TraceJob;

struct Job {
  std::int64_t submit, id, procs, runs, limit;
};

// (end, job id, processors): a completion, or a running job by the end of its limit.
using Ending = std::tuple<std::int64_t, std::int64_t, std::int64_t>;

std::vector<Job> JobsOf(const Trace& trace) {
  std::vector<Job> jobs;
  jobs.reserve(trace.jobs.size());
  for (const TraceJob& t : trace.jobs) {
    const std::int64_t limit = t.time_limit > 0 ? t.time_limit : std::max<std::int64_t>(1, t.run_time);
    jobs.push_back({t.submit, t.id, t.procs, std::min<std::int64_t>(t.run_time, limit), limit});
  }
  std::sort(jobs.begin(), jobs.end(), [](const Job& a, const Job& b) {
    return std::tie(a.submit, a.id) < std::tie(b.submit, b.id);
  });
  return jobs;
}

struct Outcome {
  std::int64_t started = 0, never = 0;
  double wait_sum = 0, bsld_sum = 0;
};

class Easy {
 public:
  Easy(std::int64_t capacity, std::vector<Job> jobs)
      : capacity_(capacity), free_(capacity), jobs_(std::move(jobs)) {}

  Outcome Run() {
    std::size_t next = 0;
    while (next < jobs_.size() || !completions_.empty()) {
      std::int64_t now = next < jobs_.size() ? jobs_[next].submit : EndOf(completions_.top());
      if (!completions_.empty()) now = std::min(now, EndOf(completions_.top()));
      while (!completions_.empty() && EndOf(completions_.top()) == now) End();
      for (; next < jobs_.size() && jobs_[next].submit == now; ++next) {
        if (jobs_[next].procs > capacity_)
          ++out_.never;
        else
          queue_.push_back(next);
      }
      Schedule(now);
    }
    return out_;
  }

 private:
  static std::int64_t EndOf(const Ending& e) { return std::get<0>(e); }

  void End() {
    const auto [end, id, procs] = completions_.top();
    completions_.pop();
    free_ += procs;
    // The running entry with this id: it is sorted by its limit, so it is looked up by id.
    auto it = std::find_if(running_.begin(), running_.end(),
                           [id = id](const Ending& r) { return std::get<1>(r) == id; });
    if (it != running_.end()) running_.erase(it);
  }

  void Start(std::size_t i, std::int64_t now) {
    const Job& j = jobs_[i];
    free_ -= j.procs;
    completions_.push({now + j.runs, j.id, j.procs});
    const Ending limit_end{now + j.limit, j.id, j.procs};
    running_.insert(std::upper_bound(running_.begin(), running_.end(), limit_end), limit_end);
    const double wait = static_cast<double>(now - j.submit);
    out_.wait_sum += wait;
    out_.bsld_sum += std::max(1.0, (wait + static_cast<double>(j.runs)) /
                                       static_cast<double>(std::max<std::int64_t>(j.runs, 10)));
    ++out_.started;
  }

  void Schedule(std::int64_t now) {
    while (head_ < queue_.size() && jobs_[queue_[head_]].procs <= free_) Start(queue_[head_++], now);
    if (head_ > 4096 && head_ * 2 > queue_.size()) {
      queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
    if (head_ == queue_.size() || free_ == 0) return;
    // The head's reservation: when enough processors are free, and what is left over then.
    const std::int64_t need = jobs_[queue_[head_]].procs;
    std::int64_t avail = free_, shadow = -1;
    for (const auto& [end, id, procs] : running_) {
      avail += procs;
      if (avail >= need) {
        shadow = end;
        break;
      }
    }
    std::int64_t extra = avail - need;
    // One backfill scan of the rest of the queue.
    for (std::size_t k = head_ + 1; k < queue_.size() && free_ > 0;) {
      const Job& j = jobs_[queue_[k]];
      const bool fits = j.procs <= free_;
      const bool before_shadow = fits && now + j.limit <= shadow;
      const bool within_extra = fits && !before_shadow && j.procs <= extra;
      if (!before_shadow && !within_extra) {
        ++k;
        continue;
      }
      if (within_extra) extra -= j.procs;
      Start(queue_[k], now);
      queue_.erase(queue_.begin() + static_cast<std::ptrdiff_t>(k));
    }
  }

  const std::int64_t capacity_;
  std::int64_t free_;
  const std::vector<Job> jobs_;
  std::priority_queue<Ending, std::vector<Ending>, std::greater<>> completions_;
  std::vector<Ending> running_;      // sorted by the end of their limits
  std::vector<std::size_t> queue_;  // FCFS, indices into jobs_; queue_[head_..] is live
  std::size_t head_ = 0;
  Outcome out_;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: easy_reference LOG.swf[.gz]\n");
    return 2;
  }
  const auto t0 = std::chrono::steady_clock::now();
  lockstep::Result<Trace> trace = lockstep::trace::ReadSwf(argv[1]);
  if (!trace.ok()) {
    std::fprintf(stderr, "easy_reference: %s\n", trace.status().message().c_str());
    return 1;
  }
  std::int64_t capacity = 0;
  for (const auto& n : trace->nodes) capacity += n.cpus;
  const Outcome out = Easy(capacity, JobsOf(*trace)).Run();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double started = static_cast<double>(std::max<std::int64_t>(out.started, 1));
  std::printf(
      "{\"capacity\": %lld, \"jobs\": %lld, \"never_started\": %lld, \"skipped\": %lld, "
      "\"mean_wait_s\": %.6f, \"mean_bsld\": %.6f, \"seconds\": %.6f}\n",
      static_cast<long long>(capacity), static_cast<long long>(out.started),
      static_cast<long long>(out.never), static_cast<long long>(trace->skipped),
      out.wait_sum / started, out.bsld_sum / started, seconds);
  return 0;
}
