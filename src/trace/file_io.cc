// Reading whole files for the spec readers, gunzipping where the name says so.
#include <fmt/format.h>
#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "trace/trace.h"

namespace lockstep::trace {
namespace {

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

Status OpenError(const std::string& path, int err) {
  std::string m = fmt::format("{}: cannot open: {}", path, std::strerror(err));
  return err == ENOENT ? NotFound(std::move(m)) : IoError(std::move(m));
}

Result<std::string> ReadGzip(const std::string& path) {
  errno = 0;
  gzFile gz = gzopen(path.c_str(), "rb");
  if (gz == nullptr) return OpenError(path, errno != 0 ? errno : ENOMEM);
  std::unique_ptr<gzFile_s, int (*)(gzFile)> closer(gz, gzclose);
  gzbuffer(gz, 1 << 17);
  std::string out;
  constexpr unsigned kChunk = 1 << 20;
  while (true) {
    const std::size_t old = out.size();
    out.resize(old + kChunk);
    const int n = gzread(gz, out.data() + old, kChunk);
    if (n < 0) {
      int code = 0;
      const char* why = gzerror(gz, &code);
      if (code == Z_ERRNO) why = std::strerror(errno);
      return IoError(fmt::format("{}: cannot decompress: {}", path, why));
    }
    out.resize(old + static_cast<std::size_t>(n));
    if (n == 0) break;
  }
  // A truncated stream reads as a short file; zlib reports it only through gzerror.
  int code = 0;
  const char* why = gzerror(gz, &code);
  if (code != Z_OK && code != Z_STREAM_END) {
    return IoError(fmt::format("{}: cannot decompress: {}", path, why));
  }
  return out;
}

Result<std::string> ReadPlain(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return OpenError(path, errno);
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> closer(f, std::fclose);
  std::string out;
  char buf[1 << 16];
  while (true) {
    const std::size_t n = std::fread(buf, 1, sizeof buf, f);
    out.append(buf, n);
    if (n < sizeof buf) break;
  }
  if (std::ferror(f))
    return IoError(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
  return out;
}

}  // namespace

Result<std::string> ReadFileMaybeGzip(const std::string& path) {
  return EndsWith(path, ".gz") ? ReadGzip(path) : ReadPlain(path);
}

}  // namespace lockstep::trace
