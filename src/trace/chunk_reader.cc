#include "trace/chunk_reader.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

namespace lockstep::trace::internal {
namespace {

// Small enough that a chunk is still in the cache when the parser reads it.
constexpr unsigned kChunkBytes = 1 << 17;

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

Status OpenError(const std::string& path, int err) {
  std::string m = fmt::format("{}: cannot open: {}", path, std::strerror(err));
  return err == ENOENT ? NotFound(std::move(m)) : IoError(std::move(m));
}

}  // namespace

ChunkReader::ChunkReader(std::string path)
    : path_(std::move(path)), buffer_(std::make_unique<char[]>(kChunkBytes)) {}

ChunkReader::ChunkReader(ChunkReader&& o) noexcept
    : path_(std::move(o.path_)), gz_(o.gz_), plain_(o.plain_), buffer_(std::move(o.buffer_)) {
  o.gz_ = nullptr;
  o.plain_ = nullptr;
}

ChunkReader::~ChunkReader() {
  if (gz_ != nullptr) gzclose(gz_);
  if (plain_ != nullptr) std::fclose(plain_);
}

Result<ChunkReader> ChunkReader::Open(const std::string& path) {
  ChunkReader reader(path);
  if (EndsWith(path, ".gz")) {
    errno = 0;
    reader.gz_ = gzopen(path.c_str(), "rb");
    if (reader.gz_ == nullptr) return OpenError(path, errno != 0 ? errno : ENOMEM);
    gzbuffer(reader.gz_, kChunkBytes);
  } else {
    reader.plain_ = std::fopen(path.c_str(), "rb");
    if (reader.plain_ == nullptr) return OpenError(path, errno);
  }
  return reader;
}

Result<std::string_view> ChunkReader::Next() {
  if (plain_ != nullptr) {
    const std::size_t n = std::fread(buffer_.get(), 1, kChunkBytes, plain_);
    if (n == 0 && std::ferror(plain_))
      return IoError(fmt::format("{}: cannot read: {}", path_, std::strerror(errno)));
    return std::string_view(buffer_.get(), n);
  }
  const int n = gzread(gz_, buffer_.get(), kChunkBytes);
  int code = 0;
  const char* why = gzerror(gz_, &code);
  if (n < 0) {
    if (code == Z_ERRNO) why = std::strerror(errno);
    return IoError(fmt::format("{}: cannot decompress: {}", path_, why));
  }
  // A truncated stream reads as a short file; zlib reports it only through gzerror.
  if (n == 0 && code != Z_OK && code != Z_STREAM_END)
    return IoError(fmt::format("{}: cannot decompress: {}", path_, why));
  return std::string_view(buffer_.get(), static_cast<std::size_t>(n));
}

}  // namespace lockstep::trace::internal
