// The output of job steps on its way from the agents to srun (docs/api.md, "Step output"): per
// step, a window over the bytes its tasks wrote, in the order they reached lockstepd, numbered
// by offset from the step's first byte. Not durable: it lives in lockstepd's memory only, from
// the step's start until srun read its end (or a timeout after the step ended).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lockstep::controller {

// One step's output. Holds at most `capacity` bytes: when srun falls behind, the oldest bytes
// go, and the next read says how many it missed. Not thread-safe (the controller's lock).
class StepOutputBuffer {
 public:
  struct Chunk {
    std::uint64_t offset = 0;  // of its first byte
    int rank = 0;              // the task's rank in the step
    bool is_stderr = false;
    std::string data;
  };
  struct Read {
    std::vector<Chunk> chunks;  // from the offset asked (or the oldest kept), in order
    std::uint64_t next = 0;     // the offset to ask next
    std::uint64_t dropped = 0;  // bytes before the oldest kept that the reader never got
  };

  explicit StepOutputBuffer(std::size_t capacity) : capacity_(capacity) {}

  void Append(int rank, bool is_stderr, std::string_view data);
  // scontrol notify: a message for the srun that follows this step, numbered from 0 in order;
  // the last kMaxNotices are kept.
  static constexpr std::size_t kMaxNotices = 64;
  void AddNotice(std::string message);
  // The notices numbered `from` and after that are kept; notice_end() is the next number.
  std::vector<std::string> NoticesFrom(std::uint64_t from) const;
  std::uint64_t notice_end() const { return notices_end_; }
  // Up to about `max_bytes` from `offset` (a chunk may be cut).
  Read ReadFrom(std::uint64_t offset, std::size_t max_bytes) const;
  std::uint64_t end() const { return end_; }

 private:
  std::size_t capacity_;
  std::deque<Chunk> chunks_;
  std::size_t size_ = 0;   // bytes held
  std::uint64_t end_ = 0;  // the offset after the last byte
  std::deque<std::string> notices_;  // numbered notices_end_ - size() ... notices_end_ - 1
  std::uint64_t notices_end_ = 0;
};

// The buffers of every step whose output srun follows, by (job, step).
class StepOutputs {
 public:
  using Key = std::pair<std::uint64_t, std::int32_t>;
  static constexpr std::size_t kCapacity = 4 << 20;  // per step

  void Open(Key key) { buffers_.try_emplace(key, kCapacity); }
  // Null when the step has no buffer (it does not stream, or srun read its end).
  StepOutputBuffer* Find(Key key);
  void Free(Key key) { buffers_.erase(key); }
  std::vector<Key> Keys() const;

 private:
  std::map<Key, StepOutputBuffer> buffers_;
};

}  // namespace lockstep::controller
