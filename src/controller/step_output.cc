#include "controller/step_output.h"

#include <algorithm>

namespace lockstep::controller {
namespace {

// Appends to the last chunk while it stays below this, so many small writes cost one chunk.
constexpr std::size_t kMergeBelow = 64 * 1024;

}  // namespace

void StepOutputBuffer::Append(int rank, bool is_stderr, std::string_view data) {
  if (data.empty()) return;
  if (!chunks_.empty() && chunks_.back().rank == rank && chunks_.back().is_stderr == is_stderr &&
      chunks_.back().data.size() < kMergeBelow) {
    chunks_.back().data.append(data);
  } else {
    chunks_.push_back({end_, rank, is_stderr, std::string(data)});
  }
  end_ += data.size();
  size_ += data.size();
  while (size_ > capacity_) {
    Chunk& front = chunks_.front();
    const std::size_t excess = size_ - capacity_;
    if (front.data.size() <= excess) {
      size_ -= front.data.size();
      chunks_.pop_front();
    } else {
      front.data.erase(0, excess);
      front.offset += excess;
      size_ -= excess;
    }
  }
}

StepOutputBuffer::Read StepOutputBuffer::ReadFrom(std::uint64_t offset,
                                                  std::size_t max_bytes) const {
  Read r;
  const std::uint64_t begin = chunks_.empty() ? end_ : chunks_.front().offset;
  offset = std::min(offset, end_);
  if (offset < begin) {
    r.dropped = begin - offset;
    offset = begin;
  }
  // The first chunk that ends after offset.
  auto it = std::upper_bound(chunks_.begin(), chunks_.end(), offset,
                             [](std::uint64_t o, const Chunk& c) { return o < c.offset; });
  if (it != chunks_.begin()) --it;
  std::size_t taken = 0;
  for (; it != chunks_.end() && taken < max_bytes; ++it) {
    if (it->offset + it->data.size() <= offset) continue;
    const std::size_t skip = static_cast<std::size_t>(offset - it->offset);
    const std::size_t n = std::min(it->data.size() - skip, max_bytes - taken);
    r.chunks.push_back({offset, it->rank, it->is_stderr, it->data.substr(skip, n)});
    offset += n;
    taken += n;
  }
  r.next = offset;
  return r;
}

void StepOutputBuffer::AddNotice(std::string message) {
  notices_.push_back(std::move(message));
  ++notices_end_;
  if (notices_.size() > kMaxNotices) notices_.pop_front();
}

std::vector<std::string> StepOutputBuffer::NoticesFrom(std::uint64_t from) const {
  const std::uint64_t first = notices_end_ - notices_.size();
  std::vector<std::string> out;
  for (std::uint64_t i = std::max(from, first); i < notices_end_; ++i)
    out.push_back(notices_[static_cast<std::size_t>(i - first)]);
  return out;
}

StepOutputBuffer* StepOutputs::Find(Key key) {
  auto it = buffers_.find(key);
  return it == buffers_.end() ? nullptr : &it->second;
}

std::vector<StepOutputs::Key> StepOutputs::Keys() const {
  std::vector<Key> keys;
  for (const auto& [key, buffer] : buffers_) keys.push_back(key);
  return keys;
}

}  // namespace lockstep::controller
