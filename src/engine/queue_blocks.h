// The queue's order kept in blocks: a sorted sequence of QueueEntry cut into runs of at most
// `capacity` entries, each with a summary that lets a pass skip the whole run (pass_skip.cc).
//
// A pass of the Scheduler walks 100,000 pending jobs in priority order after every event,
// although once the cluster is full and the queue's head holds its reservation almost none of
// them can start. The summary says, per family of jobs whose needs compare (JobFamilyFloor),
// the smallest need, node count and limit among the block's jobs: when a smaller job of that
// family has already failed to start in this pass, none of the block's jobs can, and the pass
// moves to the next block without reading them.
//
// An insertion or a split forgets the summaries it touches (the next pass walks those blocks
// and writes them again); an erasure keeps them: a summary of a superset of the block's jobs
// only skips less. Inserting and erasing cost O(log blocks + capacity), so a pass that starts
// many jobs or a burst of submissions does not move the whole queue.
//
// Not thread-safe; one owner at a time.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/queue_entry.h"

namespace lockstep::engine {

// The least of what the block's jobs of one family (EngineState::families) need: per node
// CPUs, memory and GPUs, node count and time limit.
struct JobFamilyFloor {
  std::uint32_t family = 0;
  std::int32_t cpus = 0, gpus = 0, nodes = 0;
  std::int64_t mem_mb = 0;
  Seconds duration = 0;
};

// What a pass knows of a block's jobs without reading them, as of the last pass that walked
// the whole block.
struct BlockSummary {
  static constexpr int kMaxFamilies = 2;
  bool valid = false;       // false: never walked since its jobs changed; walk it
  // A job with a static pending reason, bound by a usage limit or filed as special, or more
  // families than kMaxFamilies: the block is walked whatever the pass knows.
  bool must_visit = false;
  std::uint8_t families = 0;
  std::array<JobFamilyFloor, kMaxFamilies> floors;
};

class QueueBlocks {
 public:
  struct Block {
    std::vector<QueueEntry> entries;  // in QueueBefore order, never empty
    BlockSummary summary;
  };

  static constexpr std::size_t kDefaultCapacity = 256;
  explicit QueueBlocks(std::size_t capacity = kDefaultCapacity);

  // Replaces the contents with `sorted` (in QueueBefore order), cut into full blocks.
  void Assign(const std::vector<QueueEntry>& sorted);
  // Puts `e` after every entry that does not go after it.
  void Insert(const QueueEntry& e);
  // Puts `sorted` (in QueueBefore order) in: one insertion each when they are few, else one
  // merge of the whole queue.
  void Merge(const std::vector<QueueEntry>& sorted);
  // The entry with `key`'s place in the order and `key.index`, or nullptr.
  QueueEntry* Find(const QueueEntry& key);
  // Removes the entry Find(key) gives; false when there is none.
  bool Erase(const QueueEntry& key);
  void Clear();
  // Every summary is forgotten (what they summarise changed: nodes, static reasons).
  void ForgetSummaries();

  std::size_t size() const { return size_; }
  std::vector<Block>& blocks() { return blocks_; }
  const std::vector<Block>& blocks() const { return blocks_; }
  // Every entry in order (tests, and a merge of many arrivals).
  std::vector<QueueEntry> Flatten() const;

 private:
  // The first block whose last entry does not go before `key`, or blocks_.end().
  std::vector<Block>::iterator BlockFor(const QueueEntry& key);
  void SplitIfFull(std::vector<Block>::iterator b);

  std::size_t capacity_;
  std::size_t size_ = 0;
  std::vector<Block> blocks_;
};

}  // namespace lockstep::engine
