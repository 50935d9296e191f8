#include "engine/queue_blocks.h"

#include <algorithm>
#include <iterator>

namespace lockstep::engine {

QueueBlocks::QueueBlocks(std::size_t capacity) : capacity_(std::max<std::size_t>(capacity, 1)) {}

void QueueBlocks::Assign(const std::vector<QueueEntry>& sorted) {
  blocks_.clear();
  blocks_.reserve((sorted.size() + capacity_ - 1) / capacity_);
  for (std::size_t at = 0; at < sorted.size(); at += capacity_) {
    const std::size_t end = std::min(sorted.size(), at + capacity_);
    Block b;
    b.entries.assign(sorted.begin() + static_cast<std::ptrdiff_t>(at),
                     sorted.begin() + static_cast<std::ptrdiff_t>(end));
    blocks_.push_back(std::move(b));
  }
  size_ = sorted.size();
}

std::vector<QueueBlocks::Block>::iterator QueueBlocks::BlockFor(const QueueEntry& key) {
  return std::lower_bound(
      blocks_.begin(), blocks_.end(), key,
      [](const Block& b, const QueueEntry& k) { return QueueBefore(b.entries.back(), k); });
}

void QueueBlocks::Insert(const QueueEntry& e) {
  // The first block with an entry that goes after e; past the last, the last block.
  auto b = std::upper_bound(
      blocks_.begin(), blocks_.end(), e,
      [](const QueueEntry& k, const Block& blk) { return QueueBefore(k, blk.entries.back()); });
  if (b == blocks_.end()) {
    if (blocks_.empty() || blocks_.back().entries.size() >= capacity_) {
      blocks_.emplace_back();
      blocks_.back().entries.reserve(capacity_);
    }
    b = std::prev(blocks_.end());
  }
  auto& entries = b->entries;
  entries.insert(std::upper_bound(entries.begin(), entries.end(), e, QueueBefore), e);
  b->summary.valid = false;
  ++size_;
  SplitIfFull(b);
}

void QueueBlocks::SplitIfFull(std::vector<Block>::iterator b) {
  if (b->entries.size() <= capacity_) return;
  Block second;
  second.entries.reserve(capacity_);
  const auto half = b->entries.begin() + static_cast<std::ptrdiff_t>(b->entries.size() / 2);
  second.entries.assign(half, b->entries.end());
  b->entries.erase(half, b->entries.end());
  b->summary.valid = false;
  blocks_.insert(std::next(b), std::move(second));
}

void QueueBlocks::Merge(const std::vector<QueueEntry>& sorted) {
  // One insertion is O(log blocks + capacity); a merge is O(size). Insert while that is less.
  if (sorted.size() * capacity_ <= size_ + capacity_) {
    for (const QueueEntry& e : sorted) Insert(e);
    return;
  }
  std::vector<QueueEntry> all = Flatten();
  std::vector<QueueEntry> merged;
  merged.reserve(all.size() + sorted.size());
  // Stable: an arrival goes after the entries already queued that compare equal to it.
  std::merge(all.begin(), all.end(), sorted.begin(), sorted.end(), std::back_inserter(merged),
             QueueBefore);
  Assign(merged);
}

QueueEntry* QueueBlocks::Find(const QueueEntry& key) {
  for (auto b = BlockFor(key); b != blocks_.end(); ++b) {
    auto& entries = b->entries;
    auto it = std::lower_bound(entries.begin(), entries.end(), key, QueueBefore);
    for (; it != entries.end(); ++it) {
      if (QueueBefore(key, *it)) return nullptr;
      if (it->index == key.index && it->id == key.id) return &*it;
    }
  }
  return nullptr;
}

bool QueueBlocks::Erase(const QueueEntry& key) {
  for (auto b = BlockFor(key); b != blocks_.end(); ++b) {
    auto& entries = b->entries;
    auto it = std::lower_bound(entries.begin(), entries.end(), key, QueueBefore);
    for (; it != entries.end(); ++it) {
      if (QueueBefore(key, *it)) return false;
      if (it->index != key.index || it->id != key.id) continue;
      entries.erase(it);  // the summary stays true of what is left
      --size_;
      if (entries.empty()) blocks_.erase(b);
      return true;
    }
  }
  return false;
}

void QueueBlocks::Clear() {
  blocks_.clear();
  size_ = 0;
}

void QueueBlocks::ForgetSummaries() {
  for (Block& b : blocks_) b.summary.valid = false;
}

std::vector<QueueEntry> QueueBlocks::Flatten() const {
  std::vector<QueueEntry> all;
  all.reserve(size_);
  for (const Block& b : blocks_) all.insert(all.end(), b.entries.begin(), b.entries.end());
  return all;
}

}  // namespace lockstep::engine
