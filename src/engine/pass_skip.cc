// Skipping blocks of the queue: how a pass of the Scheduler passes over the jobs that cannot
// start now without reading them one by one (queue_blocks.h).
//
// Once the queue's first `reservation_depth` blocked jobs hold their reservations (and with
// preemption off and a plan of decisions only), what the pass does with a job of the ordinary
// queue that no usage limit binds depends only on its family, its needs, node count and limit: it
// starts if it can, else it waits without a word (Priority and Resources are not written in a
// plan of decisions). The pass only takes resources away, so a job that failed to start rules
// out, for the rest of the pass, every job of its family that needs as much or more of
// everything, on as many nodes or more, for as long or longer: a larger job has fewer feasible
// nodes, a longer window fewer still, and with a fixed node count and no switch count placement
// succeeds exactly when enough nodes are feasible (the rule Pass::DominanceApplies already uses
// within a need class). A block whose floor, per family, is ruled out that way, or cannot fit
// in its partition's free CPUs and GPUs at all, holds no job that could start, and the pass
// skips it. The plan is the same as with a visit of every job: the differential tests compare
// the Scheduler's plans of decisions against plan()'s after every event.
#include <algorithm>

#include "engine/pass.h"

namespace lockstep::engine {
namespace {

// Failures kept per family: enough for the few shapes that fail first in a pass; a failure
// that does not fit is not remembered, which only skips less.
constexpr std::size_t kMaxFailuresPerFamily = 32;

// Walks `blocks` entry by entry in order.
class EntryCursor {
 public:
  explicit EntryCursor(const std::vector<QueueBlocks::Block>& blocks) : blocks_(blocks) {}
  bool done() const { return block_ >= blocks_.size(); }
  const QueueEntry& entry() const { return blocks_[block_].entries[at_]; }
  void Next() {
    if (++at_ < blocks_[block_].entries.size()) return;
    at_ = 0;
    ++block_;
  }

 private:
  const std::vector<QueueBlocks::Block>& blocks_;
  std::size_t block_ = 0, at_ = 0;
};

}  // namespace

void Pass::WalkQueue() {
  EntryCursor special(queue_.special.blocks());
  // The special jobs that go before `bound` (all of them without one), in order.
  auto visit_special_before = [&](const QueueEntry* bound) {
    for (; !special.done() && (bound == nullptr || QueueBefore(special.entry(), *bound));
         special.Next())
      Visit(special.entry().index);
  };
  for (QueueBlocks::Block& block : queue_.order.blocks()) {
    visit_special_before(&block.entries.front());
    if (CanSkip(block.summary)) {
      const auto n = static_cast<std::int64_t>(block.entries.size());
      skipped_jobs_ += block.entries.size();
      // Each would have been examined, up to the bound of jobs examined.
      tested_ = o_.max_jobs_tested > 0 ? std::min<std::int64_t>(o_.max_jobs_tested, tested_ + n)
                                       : tested_ + n;
      continue;
    }
    // A valid summary stays true as jobs leave, only looser: a plan of decisions, which walks
    // few blocks, tightens it; a full plan, which walks them all, writes only missing ones.
    const bool write =
        queue_.keep_summaries && (detail_ != PlanDetail::kFull || !block.summary.valid);
    BlockSummary summary;
    summary.valid = true;
    for (const QueueEntry& e : block.entries) {
      visit_special_before(&e);
      Visit(e.index);
      if (write) AddToSummary(summary, e.index);
    }
    if (write) block.summary = summary;
  }
  visit_special_before(nullptr);
}

bool Pass::CanSkip(const BlockSummary& summary) const {
  if (user_exclusive_) return false;  // a block's floor is by shape, not by user
  if (!queue_.keep_summaries || !summary.valid || summary.must_visit ||
      detail_ == PlanDetail::kFull)
    return false;
  // Past the bound of jobs examined every job waits its turn without a word.
  if (o_.max_jobs_tested > 0 && tested_ >= o_.max_jobs_tested) return true;
  if (o_.preempt != PreemptType::kOff || !any_blocked_ || reservations_ < o_.reservation_depth)
    return false;
  if (o_.reservation_depth == 0) return true;  // FIFO: nothing passes the blocked job
  for (int f = 0; f < summary.families; ++f)
    if (!FamilyDead(summary.floors[f])) return false;
  return true;
}

bool Pass::FamilyDead(const JobFamilyFloor& floor) const {
  const EngineState::FamilyInfo& family = st_.family_info[floor.family];
  if (!family.exclusive && family.partition < partition_free_.size()) {  // as MayFitNow
    const FreeSum& free = partition_free_[family.partition];
    if (free.cpus < std::int64_t{floor.cpus} * floor.nodes ||
        free.gpus < std::int64_t{floor.gpus} * floor.nodes)
      return true;
  }
  if (floor.family >= family_failed_.size()) return false;
  for (const FailedNeed& f : family_failed_[floor.family])
    if (f.cpus <= floor.cpus && f.gpus <= floor.gpus && f.mem_mb <= floor.mem_mb &&
        f.nodes <= floor.nodes && f.duration <= floor.duration)
      return true;
  return false;
}

void Pass::AddToSummary(BlockSummary& summary, std::uint32_t j) {
  if (summary.must_visit) return;
  const EngineState::HotJob& h = st_.hot[j];
  // A static reason is written in every plan, and so is a usage limit's; a special job's fate
  // is not its shape's alone.
  if (h.static_reason != static_cast<std::uint8_t>(PendingReason::kNone) || h.special ||
      !h.fixed_nodes || limits_.Binds(s_.pending[j])) {
    summary.must_visit = true;
    return;
  }
  const EngineState::NeedClassInfo& c = st_.need_class_info[st_.NeedClassOf(j)];
  if (c.need.whole_memory) {  // its memory is each node's own: no floor stands for it
    summary.must_visit = true;
    return;
  }
  auto* end = summary.floors.begin() + summary.families;
  auto* floor = std::find_if(summary.floors.begin(), end,
                             [&](const JobFamilyFloor& f) { return f.family == c.family; });
  if (floor == end) {
    if (summary.families == BlockSummary::kMaxFamilies) {
      summary.must_visit = true;
      return;
    }
    ++summary.families;
    *floor = {c.family, c.need.cpus, c.need.gpus, h.nodes, c.need.mem_mb, h.duration};
    return;
  }
  floor->cpus = std::min(floor->cpus, c.need.cpus);
  floor->gpus = std::min(floor->gpus, c.need.gpus);
  floor->nodes = std::min(floor->nodes, h.nodes);
  floor->mem_mb = std::min(floor->mem_mb, c.need.mem_mb);
  floor->duration = std::min(floor->duration, h.duration);
}

void Pass::NoteFamilyFailure(std::uint32_t j) {
  if (!queue_.keep_summaries) return;  // nothing to skip with it
  const std::uint32_t family = st_.need_class_info[st_.NeedClassOf(j)].family;
  if (family >= family_failed_.size()) family_failed_.resize(st_.families.size());
  const JobShape& sh = shapes_[j];
  if (sh.per_node.whole_memory) return;  // a failure of all-memory says nothing of sizes
  const FailedNeed failed{sh.per_node.cpus, sh.per_node.gpus, sh.nodes, sh.per_node.mem_mb,
                          sh.duration};
  auto covers = [](const FailedNeed& a, const FailedNeed& b) {  // a failing implies b fails
    return a.cpus <= b.cpus && a.gpus <= b.gpus && a.nodes <= b.nodes && a.mem_mb <= b.mem_mb &&
           a.duration <= b.duration;
  };
  auto& front = family_failed_[family];
  if (std::any_of(front.begin(), front.end(),
                  [&](const FailedNeed& f) { return covers(f, failed); }))
    return;
  std::erase_if(front, [&](const FailedNeed& f) { return covers(failed, f); });
  if (front.size() < kMaxFailuresPerFamily) front.push_back(failed);
}

}  // namespace lockstep::engine
