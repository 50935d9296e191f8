// Old jobs read back from the store: those purged from memory after MinJobAge
// (controller_purge.cc). sacct merges the jobs in memory with the store's, page by page and in id
// order, the store's filtered as SQLite reads them; dependencies, `lockstep why`, `lockstep logs`
// and the web view read one job by its key. Every read is made without the controller's lock.
#include <algorithm>
#include <charconv>
#include <limits>

#include "common/log.h"
#include "controller/controller.h"
#include "controller/controller_internal.h"
#include "controller/job_convert.h"
#include "jobspec/validate.h"

namespace lockstep::controller {
namespace {

// An array task's spec is its array's, stored once (table "array_specs"): read once per array.
class ArraySpecs {
 public:
  explicit ArraySpecs(const store::Store& store) : store_(store) {}
  Result<std::shared_ptr<const jobspec::JobSpec>> Of(JobId array) {
    auto it = specs_.find(array);
    if (it != specs_.end()) return it->second;
    Result<std::optional<std::string>> text = store_.Get("array_specs", JobKey(array));
    if (!text.ok()) return text.status();
    if (!text->has_value())
      return Internal("store: the spec of array " + std::to_string(array) + " is missing");
    Result<jobspec::JobSpec> spec = jobspec::JobSpecFromJson(**text);
    if (!spec.ok()) return spec.status();
    if (spec->array) DropArrayIndices(*spec->array);  // as Recover
    return specs_[array] = std::make_shared<const jobspec::JobSpec>(std::move(*spec));
  }

 private:
  const store::Store& store_;
  std::unordered_map<JobId, std::shared_ptr<const jobspec::JobSpec>> specs_;
};

Result<JobEntry> ParseStored(const store::Record& r, ArraySpecs& arrays) {
  Result<JobEntry> e = EntryFromJson(r.value);
  if (!e.ok()) return Internal("store: job " + r.key + ": " + e.status().message());
  if (!e->spec) {
    Result<std::shared_ptr<const jobspec::JobSpec>> spec = arrays.Of(e->array_job_id);
    if (!spec.ok()) return spec.status();
    e->spec = *spec;
  }
  return e;
}

// A comma-separated filter of the API ("user=alice,bob"); empty: everything passes.
std::set<std::string> CommaList(const nlohmann::json& filter, const char* key) {
  std::set<std::string> out;
  if (!filter.contains(key) || !filter[key].is_string()) return out;
  const std::string text = filter[key].get<std::string>();
  for (std::size_t start = 0; start <= text.size();) {
    std::size_t comma = std::min(text.find(',', start), text.size());
    out.insert(text.substr(start, comma - start));
    start = comma + 1;
  }
  out.erase("");
  return out;
}

}  // namespace

struct Controller::AccountingQuery {
  std::set<std::string> users;  // empty: every user
  std::set<JobId> ids;          // empty: every job; else these and their arrays' tasks
  Time start = 0, end = kInfiniteTime;

  bool Passes(const std::string& user, JobId id, JobId array, Time submit, Time ended) const {
    if (!users.empty() && !users.count(user)) return false;
    if (!ids.empty() && !ids.count(id) && !(array != 0 && ids.count(array))) return false;
    const Time last = ended > 0 ? ended : kInfiniteTime;
    return last >= start && submit <= end;
  }
  // A heterogeneous job's components pass as their leader's id, as array tasks as their array's.
  bool Passes(const JobEntry& e) const {
    return Passes(e.user, e.id, e.is_het_component() ? e.het_job_id : e.array_job_id,
                  e.submit_time, e.end_time);
  }
};

Result<std::optional<JobEntry>> Controller::StoredJob(JobId id) const {
  Result<std::optional<std::string>> text = store_->Get("jobs", JobKey(id));
  if (!text.ok()) return text.status();
  if (!text->has_value()) return std::optional<JobEntry>();
  ArraySpecs arrays(*store_);
  Result<JobEntry> e = ParseStored({"jobs", JobKey(id), **text}, arrays);
  if (!e.ok()) return e.status();
  return std::optional<JobEntry>(std::move(*e));
}

Result<nlohmann::json> Controller::JobRecord(JobId id) const {
  Result<nlohmann::json> live = ShowJob(id);
  if (live.ok() || live.status().code() != StatusCode::kNotFound) return live;
  Result<std::optional<JobEntry>> stored = StoredJob(id);
  if (!stored.ok()) return stored.status();
  if (!stored->has_value()) return live.status();
  HeldLock lock(*this);
  return JobJsonLocked(**stored);
}

Result<Controller::StoredTargets> Controller::ReadStoredTargets(
    const jobspec::JobSpec& spec) const {
  StoredTargets out;
  for (const jobspec::DependencySpec& d : spec.dependencies) {
    if (d.type == jobspec::DependencyType::kSingleton) continue;
    if (!d.has_task) {
      Result<std::optional<JobEntry>> e = StoredJob(d.job);
      if (!e.ok()) return e.status();
      if (e->has_value() && IsFinished((*e)->state)) out.ended[d.job] = (*e)->state;
      if (e->has_value() && !IsFinished((*e)->state)) out.unfinished.insert(d.job);
      continue;
    }
    // "after:40_7": the task's record among the array's ids, found by its task id.
    const std::string needle = "\"array_task_id\":" + std::to_string(d.array_task) + ",";
    Result<std::vector<store::Record>> page =
        store_->ScanPage("jobs", {.from = JobKey(d.job),
                                  .to = JobKey(d.job + jobspec::kMaxArrayTasks),
                                  .limit = 64,
                                  .value_contains = needle});
    if (!page.ok()) return page.status();
    for (const store::Record& r : *page) {
      Result<JobRecordHead> h = HeadFromJson(r.value);
      if (h.ok() && h->array_job_id == d.job && h->array_task_id == d.array_task &&
          IsFinished(h->state))
        out.tasks[{d.job, d.array_task}] = {h->id, h->state};
    }
  }
  return out;
}

std::optional<JobState> Controller::StoredTargetStateLocked(JobId id,
                                                            const StoredTargets& stored) const {
  auto it = stored.ended.find(id);
  if (it != stored.ended.end()) return it->second;
  if (!stored.unfinished.count(id)) return std::nullopt;
  // Not finished when read, gone from memory now: it ended and was purged in between, so its
  // final record is durable. Read again (under the lock, but this takes MinJobAge to happen).
  Result<std::optional<JobEntry>> again = StoredJob(id);
  if (again.ok() && again->has_value() && IsFinished((*again)->state)) return (*again)->state;
  return std::nullopt;
}

// --- sacct ---

Controller::AccountingQuery Controller::AccountingQueryOf(const nlohmann::json& filter) {
  AccountingQuery q;
  if (!filter.is_object()) return q;  // no filter: every job
  q.users = CommaList(filter, "user");
  for (const std::string& id : CommaList(filter, "job")) {
    JobId n = 0;
    auto [end, ec] = std::from_chars(id.data(), id.data() + id.size(), n);
    if (ec == std::errc() && end == id.data() + id.size()) q.ids.insert(n);
  }
  q.start = filter.value("start", Time{0});
  q.end = filter.value("end", kInfiniteTime);
  return q;
}

void Controller::AccountingTo(const nlohmann::json& filter, const JobSink& emit) const {
  const AccountingQuery q = AccountingQueryOf(filter);
  if (q.ids.empty())
    AccountingJobsTo(q, emit);
  else
    AccountingByIdsTo(q, emit);
  HeldLock lock(*this);
  // Arrays' tasks never split off (pending, or cancelled before they started): one record each.
  for (const auto* arrays : {&pending_arrays_, &cancelled_arrays_}) {
    for (const auto& [array, a] : *arrays) {
      const JobEntry& t = a.tmpl();
      if (q.Passes(t.user, array, 0, t.submit_time, t.end_time)) emit(PendingArrayJsonLocked(a));
    }
  }
}

namespace {

// The stored records in [id, upper) of job `id` and of the tasks of the array `id` that pass
// `q`, in id order: one key, or the array's range read where a record names the array.
Result<std::vector<JobEntry>> StoredJobsNamed(const store::Store& store, JobId id, JobId upper,
                                              const Controller::AccountingQuery& q,
                                              ArraySpecs& arrays) {
  std::vector<JobEntry> out;
  const std::string needle = "\"array_job_id\":" + std::to_string(id) + ",";
  store::KeyRange range{.from = JobKey(id), .to = JobKey(upper), .limit = Controller::kJobsPerHold};
  if (upper > id + 1) range.value_contains = needle;
  for (;;) {
    Result<std::vector<store::Record>> page = store.ScanPage("jobs", range);
    if (!page.ok()) return page.status();
    for (const store::Record& r : *page) {
      Result<JobEntry> e = ParseStored(r, arrays);
      if (!e.ok()) return e.status();
      if (q.Passes(*e)) out.push_back(std::move(*e));
    }
    if (page->size() < range.limit) return out;
    range.from = JobKey(std::stoull(page->back().key) + 1);
  }
}

}  // namespace

void Controller::AccountingJobsTo(const AccountingQuery& q, const JobSink& emit) const {
  // One user: only records naming them are copied out of SQLite at all.
  std::string needle;
  if (q.users.size() == 1) needle = "\"user\":" + nlohmann::json(*q.users.begin()).dump();
  ArraySpecs arrays(*store_);
  JobId from = 0;  // the jobs in memory below it were visited
  for (bool last = false; !last;) {
    Result<std::vector<store::Record>> page = store_->ScanPage(
        "jobs", {.from = JobKey(from), .limit = kJobsPerHold, .value_contains = needle});
    if (!page.ok()) {
      log::Error("sacct: {}", page.status().ToString());
      return;
    }
    last = page->size() < kJobsPerHold;
    const JobId upper =
        last ? std::numeric_limits<JobId>::max() : std::stoull(page->back().key) + 1;
    std::vector<JobEntry> stored;
    for (const store::Record& r : *page) {
      Result<JobRecordHead> h = HeadFromJson(r.value);
      if (!h.ok() || !q.Passes(h->user, h->id, h->het_job_id ? h->het_job_id : h->array_job_id,
                               h->submit_time, h->end_time))
        continue;
      Result<JobEntry> e = ParseStored(r, arrays);
      if (e.ok()) stored.push_back(std::move(*e));
    }
    if (!EmitAccountingPage(q, from, upper, stored, emit)) {
      last = false;  // a job was purged between the page's read and the lock: read it again
      continue;
    }
    from = upper;
  }
}

bool Controller::EmitAccountingPage(const AccountingQuery& q, JobId from, JobId upper,
                                    const std::vector<JobEntry>& stored,
                                    const JobSink& emit) const {
  HeldLock lock(*this);
  // Memory has the newer word on a job it holds. A stored job that is neither in memory nor
  // finished was in memory when the page was read and has been purged since.
  for (const JobEntry& s : stored)
    if (!jobs_.count(s.id) && !IsFinished(s.state)) return false;
  auto mem = jobs_.lower_bound(from);
  auto disk = stored.begin();
  while (true) {
    const bool mem_left = mem != jobs_.end() && mem->first < upper;
    if (!mem_left && disk == stored.end()) break;
    if (mem_left && (disk == stored.end() || mem->first <= disk->id)) {
      if (disk != stored.end() && disk->id == mem->first) ++disk;
      if (q.Passes(mem->second)) emit(JobJsonLocked(mem->second));
      ++mem;
    } else {
      emit(JobJsonLocked(*disk));
      ++disk;
    }
  }
  return true;
}

void Controller::AccountingByIdsTo(const AccountingQuery& q, const JobSink& emit) const {
  ArraySpecs arrays(*store_);
  for (JobId id : q.ids) {
    JobId upper = id + 1;
    {
      // An array's tasks have the ids after its own, as many as it has indices.
      HeldLock lock(*this);
      auto a = array_specs_.find(id);
      if (a != array_specs_.end() && a->second->array) {
        const jobspec::ArraySpec& array = *a->second->array;  // count: once indices are dropped
        upper = id + std::max<JobId>(1, array.count > 0 ? array.count : array.indices.size());
      }
    }
    for (bool shown = false; !shown;) {
      Result<std::vector<JobEntry>> stored = StoredJobsNamed(*store_, id, upper, q, arrays);
      if (!stored.ok()) {
        log::Error("sacct: {}", stored.status().ToString());
        return;
      }
      shown = EmitAccountingPage(q, id, upper, *stored, emit);  // else a job was purged: again
    }
  }
}

}  // namespace lockstep::controller
