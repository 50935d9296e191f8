// Reading a trace file piece by piece, gunzipping where the name says so, so that a reader can
// parse while the file is being decompressed instead of holding the whole text first. A gzip
// file is inflated on a thread of its own, a few pieces ahead of the reader: on two cores the
// parse of one piece overlaps the decompression of the next. Internal to the trace readers.
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"

namespace lockstep::trace::internal {

class ChunkReader {
 public:
  // "<path>: cannot open: <reason>", NotFound when the file does not exist.
  static Result<ChunkReader> Open(const std::string& path);

  ChunkReader(ChunkReader&&) noexcept;
  ChunkReader& operator=(ChunkReader&&) = delete;
  ~ChunkReader();

  // About how many bytes the whole text has, to size what is read into; 0 when unknown. The
  // file's size, or for gzip the size its trailer records when that is believable.
  std::size_t size_hint() const { return size_hint_; }

  // The next piece of the text, valid until the next call; empty at the end of the file.
  // "<path>: cannot read: ..." or "<path>: cannot decompress: ..." (a truncated gzip stream too).
  Result<std::string_view> Next();

 private:
  class GzipPipe;

  explicit ChunkReader(std::string path);

  std::string path_;
  std::unique_ptr<GzipPipe> gz_;  // a .gz file
  std::FILE* plain_ = nullptr;    // any other
  std::unique_ptr<char[]> buffer_;
  std::size_t size_hint_ = 0;
};

}  // namespace lockstep::trace::internal
