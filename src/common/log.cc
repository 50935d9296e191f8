#include "common/log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <vector>

namespace lockstep::log {
namespace {

struct LevelEntry {
  Level level;
  std::string_view name;
  spdlog::level::level_enum spd;
};
constexpr std::array<LevelEntry, 6> kLevels = {{
    {Level::kTrace, "trace", spdlog::level::trace},
    {Level::kDebug, "debug", spdlog::level::debug},
    {Level::kInfo, "info", spdlog::level::info},
    {Level::kWarning, "warning", spdlog::level::warn},
    {Level::kError, "error", spdlog::level::err},
    {Level::kOff, "off", spdlog::level::off},
}};

spdlog::level::level_enum ToSpdlog(Level level) {
  for (const LevelEntry& e : kLevels)
    if (e.level == level) return e.spd;
  return spdlog::level::info;
}

// The file, created with `mode` when missing (spdlog would create it 0666 less the umask); an
// existing one loses the permission bits beyond `mode`. Its identity, to compare with stderr's.
Result<struct stat> CreateLogFile(const std::string& path, unsigned mode) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, mode);
  if (fd < 0) {
    return IoError("--log-file: cannot open '" + path + "': " + std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd, &st) == 0 && (st.st_mode & 07777 & ~mode) != 0 && st.st_uid == ::geteuid())
    ::fchmod(fd, st.st_mode & 07777 & mode);
  ::close(fd);
  return st;
}

// Whether stderr is the file `st` describes.
bool StderrIs(const struct stat& st) {
  struct stat err {};
  return ::fstat(STDERR_FILENO, &err) == 0 && err.st_dev == st.st_dev && err.st_ino == st.st_ino;
}

}  // namespace

Result<Level> ParseLevel(std::string_view text) {
  if (text == "warn") return Level::kWarning;
  for (const LevelEntry& e : kLevels)
    if (e.name == text) return e.level;
  return InvalidArgument(fmt::format(
      "--log-level: '{}' is not a level (trace, debug, info, warning, error, off)", text));
}

std::string_view LevelName(Level level) {
  for (const LevelEntry& e : kLevels)
    if (e.level == level) return e.name;
  return "info";
}

Status Init(const Options& options) {
  std::shared_ptr<spdlog::logger> logger;
  try {
    if (options.file.empty()) {
      logger = std::make_shared<spdlog::logger>(options.program,
                                                std::make_shared<spdlog::sinks::stderr_sink_mt>());
    } else {
      Result<struct stat> st = CreateLogFile(options.file, options.mode);
      if (!st.ok()) return st.status();
      std::vector<spdlog::sink_ptr> sinks = {
          std::make_shared<spdlog::sinks::basic_file_sink_mt>(options.file)};
      if (options.also_stderr && !StderrIs(*st))
        sinks.push_back(std::make_shared<spdlog::sinks::stderr_sink_mt>());
      logger = std::make_shared<spdlog::logger>(options.program, sinks.begin(), sinks.end());
    }
  } catch (const spdlog::spdlog_ex& e) {
    return IoError(std::string("--log-file: ") + e.what());
  }
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %l %n: %v");
  logger->set_level(ToSpdlog(options.level));
  logger->flush_on(spdlog::level::trace);
  spdlog::set_default_logger(std::move(logger));
  return Status::Ok();
}

bool Enabled(Level level) {
  return level != Level::kOff && spdlog::default_logger_raw()->should_log(ToSpdlog(level));
}

void Write(Level level, std::string_view message) {
  if (level == Level::kOff) return;
  spdlog::default_logger_raw()->log(ToSpdlog(level), "{}", message);
}

}  // namespace lockstep::log
