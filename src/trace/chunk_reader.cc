#include "trace/chunk_reader.h"

#include <fmt/format.h>

#include <sys/stat.h>
#include <zlib.h>

#include <array>
#include <cerrno>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

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

// The inflating thread fills free buffers and queues them; the reader takes them in order and
// gives each back when it asks for the next. Errors come after the pieces read before them.
class ChunkReader::GzipPipe {
 public:
  GzipPipe(gzFile gz, std::string path) : gz_(gz), path_(std::move(path)) {
    for (int slot = 0; slot < kSlots; ++slot) {
      buffers_[slot] = std::make_unique<char[]>(kChunkBytes);
      free_.push_back(slot);
    }
    thread_ = std::thread([this] { Inflate(); });
  }

  ~GzipPipe() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    changed_.notify_all();
    thread_.join();
    gzclose(gz_);
  }

  Result<std::string_view> Next() {
    std::unique_lock lock(mu_);
    if (held_ >= 0) {
      free_.push_back(held_);
      held_ = -1;
      changed_.notify_all();
    }
    changed_.wait(lock, [&] { return !filled_.empty() || error_ || ended_; });
    if (!filled_.empty()) {
      const Piece piece = filled_.front();
      filled_.pop_front();
      held_ = piece.slot;
      return std::string_view(buffers_[piece.slot].get(), piece.size);
    }
    if (error_) return *error_;
    return std::string_view();
  }

 private:
  static constexpr int kSlots = 4;

  struct Piece {
    int slot;
    std::size_t size;
  };

  void Inflate() {
    while (true) {
      int slot = 0;
      {
        std::unique_lock lock(mu_);
        changed_.wait(lock, [&] { return stop_ || !free_.empty(); });
        if (stop_) return;
        slot = free_.back();
        free_.pop_back();
      }
      const int n = gzread(gz_, buffers_[slot].get(), kChunkBytes);
      std::optional<Status> error = ErrorAfterRead(n);
      {
        std::lock_guard lock(mu_);
        if (error) {
          error_ = std::move(error);
        } else if (n == 0) {
          ended_ = true;
        } else {
          filled_.push_back({slot, static_cast<std::size_t>(n)});
        }
      }
      changed_.notify_all();
      if (error || n == 0) return;
    }
  }

  // On the inflating thread, right after gzread (errno is the thread's own).
  std::optional<Status> ErrorAfterRead(int n) const {
    int code = 0;
    const char* why = gzerror(gz_, &code);
    if (n < 0) {
      if (code == Z_ERRNO) why = std::strerror(errno);
      return IoError(fmt::format("{}: cannot decompress: {}", path_, why));
    }
    // A truncated stream reads as a short file; zlib reports it only through gzerror.
    if (n == 0 && code != Z_OK && code != Z_STREAM_END)
      return IoError(fmt::format("{}: cannot decompress: {}", path_, why));
    return std::nullopt;
  }

  gzFile gz_;  // the inflating thread's alone until it has stopped
  const std::string path_;
  std::array<std::unique_ptr<char[]>, kSlots> buffers_;
  std::thread thread_;

  std::mutex mu_;
  std::condition_variable changed_;  // a buffer was filled or freed, or the thread must stop
  std::vector<int> free_;
  std::deque<Piece> filled_;  // in file order
  int held_ = -1;              // the buffer the reader's last piece is in
  std::optional<Status> error_;
  bool ended_ = false;
  bool stop_ = false;
};

ChunkReader::ChunkReader(std::string path) : path_(std::move(path)) {}

ChunkReader::ChunkReader(ChunkReader&& o) noexcept
    : path_(std::move(o.path_)),
      gz_(std::move(o.gz_)),
      plain_(o.plain_),
      buffer_(std::move(o.buffer_)),
      size_hint_(o.size_hint_) {
  o.plain_ = nullptr;
}

ChunkReader::~ChunkReader() {
  if (plain_ != nullptr) std::fclose(plain_);
}

Result<ChunkReader> ChunkReader::Open(const std::string& path) {
  ChunkReader reader(path);
  if (EndsWith(path, ".gz")) {
    errno = 0;
    gzFile gz = gzopen(path.c_str(), "rb");
    if (gz == nullptr) return OpenError(path, errno != 0 ? errno : ENOMEM);
    gzbuffer(gz, kChunkBytes);
    reader.size_hint_ = GzipSizeHint(path);
    reader.gz_ = std::make_unique<GzipPipe>(gz, path);
  } else {
    reader.plain_ = std::fopen(path.c_str(), "rb");
    if (reader.plain_ == nullptr) return OpenError(path, errno);
    reader.size_hint_ = FileSize(reader.plain_);
    reader.buffer_ = std::make_unique<char[]>(kChunkBytes);
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
  return gz_->Next();
}

}  // namespace lockstep::trace::internal
