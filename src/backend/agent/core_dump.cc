#include "backend/agent/core_dump.h"

#include <glob.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace lockstep::agent {
namespace {

std::string ReadFirstLine(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// Glob's special characters in a known value stand for themselves.
std::string GlobEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '*' || c == '?' || c == '[' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

// The newest regular file matching `pattern`, or "".
std::string NewestMatch(const std::string& pattern, struct stat& found) {
  glob_t g{};
  std::string best;
  if (::glob(pattern.c_str(), GLOB_NOSORT, nullptr, &g) == 0) {
    for (std::size_t i = 0; i < g.gl_pathc; ++i) {
      struct stat st {};
      if (::lstat(g.gl_pathv[i], &st) != 0 || !S_ISREG(st.st_mode)) continue;
      if (best.empty() || st.st_mtim.tv_sec > found.st_mtim.tv_sec) {
        best = g.gl_pathv[i];
        found = st;
      }
    }
  }
  ::globfree(&g);
  return best;
}

}  // namespace

CorePattern CorePattern::OfHost() {
  CorePattern p;
  p.pattern = ReadFirstLine("/proc/sys/kernel/core_pattern");
  p.uses_pid = ReadFirstLine("/proc/sys/kernel/core_uses_pid") == "1";
  return p;
}

std::string CoreGlob(const CorePattern& pattern, const CoreDumpContext& c) {
  const std::string& p = pattern.pattern;
  if (!p.empty() && p[0] == '|') return "";
  std::string out;
  bool has_pid = false;
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (p[i] != '%' || i + 1 == p.size()) {
      out += GlobEscape(std::string(1, p[i]));
      continue;
    }
    const char spec = p[++i];
    switch (spec) {
      case '%': out += '%'; break;
      case 'p': case 'P': case 'i': case 'I':
        // The task's own pid: in the agent's namespace, as in the host's when it runs there.
        out += std::to_string(c.pid), has_pid = true;
        break;
      case 'u': out += std::to_string(c.uid); break;
      case 'g': out += std::to_string(c.gid); break;
      case 's': out += std::to_string(c.signal); break;
      case 'h': out += GlobEscape(c.hostname); break;
      default: out += '*'; break;  // %e, %E, %t, %c, %d, %f: not known here
    }
  }
  if (out.empty()) out = "core";
  // The kernel appends the pid when core_uses_pid is set and the pattern names none.
  if (pattern.uses_pid && !has_pid) out += "." + std::to_string(c.pid);
  if (out[0] != '/') out = GlobEscape(c.cwd) + "/" + out;
  return out;
}

std::string KeepCoreDump(const CorePattern& pattern, const CoreDumpContext& c) {
  if (!pattern.pattern.empty() && pattern.pattern[0] == '|') {
    const std::string handler = pattern.pattern.substr(1, pattern.pattern.find(' ') - 1);
    return "core dumped, piped to " + handler +
           " by kernel.core_pattern (not kept by lockstep; ask that handler, e.g. coredumpctl)";
  }
  const std::string where = CoreGlob(pattern, c);
  struct stat st {};
  const std::string found = NewestMatch(where, st);
  if (found.empty())
    return "core dumped, but no file matches kernel.core_pattern '" + pattern.pattern +
           "' (" + where + ")";
  // The job's own directory in its working directory, for the job's user alone.
  const std::string dir = c.cwd + "/cores-" + std::to_string(c.job);
  const std::string kept = dir + "/core." + c.node + "." + std::to_string(c.pid);
  if (::mkdir(dir.c_str(), 0700) == 0 && ::geteuid() == 0) (void)!::chown(dir.c_str(), c.uid, c.gid);
  std::string path = found;
  if (::rename(found.c_str(), kept.c_str()) == 0) path = kept;  // else (another filesystem) left
  return "core dumped: " + path + " (" + std::to_string(st.st_size) + " bytes)";
}

}  // namespace lockstep::agent
