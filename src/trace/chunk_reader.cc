#include "trace/chunk_reader.h"

#include <fmt/format.h>

#include <sys/stat.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace lockstep::trace::internal {
namespace {

// Small enough that a chunk is still in the cache when the parser reads it.
constexpr unsigned kChunkBytes = 1 << 17;

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Text compresses less than this much; a gzip trailer that says more is not believed.
constexpr std::size_t kMaxBelievableRatio = 64;

std::size_t FileSize(std::FILE* f) {
  struct stat st{};
  return fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) ? static_cast<std::size_t>(st.st_size)
                                                            : 0;
}

// The uncompressed size gzip's trailer records (modulo 2^32, of the last member only): a hint.
std::size_t GzipSizeHint(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return 0;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> closer(f, std::fclose);
  const std::size_t compressed = FileSize(f);
  unsigned char trailer[4];
  if (compressed < 18 || std::fseek(f, -4, SEEK_END) != 0 || std::fread(trailer, 1, 4, f) != 4)
    return 0;
  const std::size_t size = trailer[0] | trailer[1] << 8 | trailer[2] << 16 |
                           static_cast<std::size_t>(trailer[3]) << 24;
  return size <= compressed * kMaxBelievableRatio ? size : 0;
}

Status OpenError(const std::string& path, int err) {
  std::string m = fmt::format("{}: cannot open: {}", path, std::strerror(err));
  return err == ENOENT ? NotFound(std::move(m)) : IoError(std::move(m));
}

}  // namespace

ChunkReader::ChunkReader(std::string path)
    : path_(std::move(path)), buffer_(std::make_unique<char[]>(kChunkBytes)) {}

ChunkReader::ChunkReader(ChunkReader&& o) noexcept
    : path_(std::move(o.path_)),
      gz_(o.gz_),
      plain_(o.plain_),
      buffer_(std::move(o.buffer_)),
      size_hint_(o.size_hint_) {
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
    reader.size_hint_ = GzipSizeHint(path);
  } else {
    reader.plain_ = std::fopen(path.c_str(), "rb");
    if (reader.plain_ == nullptr) return OpenError(path, errno);
    reader.size_hint_ = FileSize(reader.plain_);
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
