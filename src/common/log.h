// Logging for lockstep's daemons: a thin layer over spdlog with Slurm-like levels, their names
// for --log-level, and an optional log file. One logger per process (spdlog's default logger),
// set up once by the program's main with Init; the library parts that log do so through the
// functions below, never through spdlog directly, so the sink and format stay in one place.
//
// Thread-safety: Init must be called before other threads log; the logging functions may then
// be called from any thread. A line is "2026-12-02T07:20:01.123 warning lockstep-agent: text".
#pragma once

#include <fmt/format.h>

#include <string>
#include <string_view>
#include <utility>

#include "common/status.h"

namespace lockstep::log {

enum class Level { kTrace, kDebug, kInfo, kWarning, kError, kOff };

// "trace", "debug", "info", "warning" (or "warn"), "error", "off"; InvalidArgument naming the
// option otherwise: "--log-level: 'loud' is not a level (trace, debug, info, warning, error,
// off)".
Result<Level> ParseLevel(std::string_view text);
std::string_view LevelName(Level level);

struct Options {
  std::string program = "lockstep";  // the name each line carries
  Level level = Level::kInfo;        // lines below it are dropped
  // Appended to (created with `mode` when missing); empty: stderr. Every line is flushed as
  // written, so that nothing is lost when the process is killed.
  std::string file;
  unsigned mode = 0640;  // of a file created; an existing file loses the bits beyond it
  // With a file: lines go to stderr too, unless stderr is that very file (lockstep up and the
  // tests send lockstepd's stderr there), so a daemon in a terminal still shows them.
  bool also_stderr = false;
};

// Sets up the process's logger. IoError naming the file when it cannot be opened; the logger is
// then left as it was (stderr at info before any Init).
Status Init(const Options& options);

// One line at `level` (dropped below the level Init set).
void Write(Level level, std::string_view message);
bool Enabled(Level level);

template <typename... Args>
void Debug(fmt::format_string<Args...> format, Args&&... args) {
  if (Enabled(Level::kDebug))
    Write(Level::kDebug, fmt::format(format, std::forward<Args>(args)...));
}
template <typename... Args>
void Info(fmt::format_string<Args...> format, Args&&... args) {
  if (Enabled(Level::kInfo)) Write(Level::kInfo, fmt::format(format, std::forward<Args>(args)...));
}
template <typename... Args>
void Warning(fmt::format_string<Args...> format, Args&&... args) {
  if (Enabled(Level::kWarning))
    Write(Level::kWarning, fmt::format(format, std::forward<Args>(args)...));
}
template <typename... Args>
void Error(fmt::format_string<Args...> format, Args&&... args) {
  if (Enabled(Level::kError))
    Write(Level::kError, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace lockstep::log
