#include "backend/agent/core_dump.h"

#include <fcntl.h>
#include <glob.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "backend/agent/cgroup.h"
#include "backend/agent/run_as_user.h"

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

std::string PipedCoreEvidence(const CorePattern& pattern) {
  if (pattern.pattern.empty() || pattern.pattern[0] != '|') return "";
  const std::string handler = pattern.pattern.substr(1, pattern.pattern.find(' ') - 1);
  return "core dumped, piped to " + handler +
         " by kernel.core_pattern (not kept by lockstep; ask that handler, e.g. coredumpctl)";
}

std::string KeepCoreDumpAsCaller(const CorePattern& pattern, const CoreDumpContext& c) {
  if (std::string piped = PipedCoreEvidence(pattern); !piped.empty()) return piped;
  const std::string where = CoreGlob(pattern, c);
  struct stat st {};
  const std::string found = NewestMatch(where, st);
  if (found.empty())
    return "core dumped, but no file matches kernel.core_pattern '" + pattern.pattern +
           "' (" + where + ")";
  const std::string as_found = "core dumped: " + found + " (" + std::to_string(st.st_size) +
                               " bytes)";
  // Only the user's own core moves; someone else's file of the same name stays where it is.
  if (st.st_uid != ::getuid()) return as_found;
  const std::string dir_name = "cores-" + std::to_string(c.job);
  const std::string core_name = "core." + c.node + "." + std::to_string(c.pid);
  UniqueFd cwd(::open(c.cwd.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (cwd.get() < 0) return as_found;
  (void)::mkdirat(cwd.get(), dir_name.c_str(), 0700);
  // Whatever is there now (made above, or planted) is used only if it is a directory of ours,
  // never through a symbolic link.
  UniqueFd dir(::openat(cwd.get(), dir_name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  struct stat dst {};
  if (dir.get() < 0 || ::fstat(dir.get(), &dst) != 0 || dst.st_uid != ::getuid()) return as_found;
  const std::size_t slash = found.rfind('/');
  const std::string from_dir = slash == 0 ? "/" : found.substr(0, slash);
  UniqueFd from(::open(from_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (from.get() < 0) return as_found;
  // The file moved is the one looked at: renameat moves a name, so check the name still is it.
  struct stat now {};
  const std::string base = found.substr(slash + 1);
  if (::fstatat(from.get(), base.c_str(), &now, AT_SYMLINK_NOFOLLOW) != 0 ||
      now.st_ino != st.st_ino || now.st_dev != st.st_dev)
    return as_found;
  if (::renameat(from.get(), base.c_str(), dir.get(), core_name.c_str()) != 0)
    return as_found;  // another file system, say: left where the kernel wrote it
  return "core dumped: " + c.cwd + "/" + dir_name + "/" + core_name + " (" +
         std::to_string(st.st_size) + " bytes)";
}

std::string KeepCoreDump(const CorePattern& pattern, const CoreDumpContext& c,
                         const std::string& keeper, std::chrono::milliseconds timeout) {
  if (std::string piped = PipedCoreEvidence(pattern); !piped.empty()) return piped;
  UserCommand command;
  command.argv = {keeper,
                  "keep-core",
                  pattern.pattern,
                  pattern.uses_pid ? "1" : "0",
                  std::to_string(c.job),
                  c.node,
                  std::to_string(c.pid),
                  std::to_string(c.signal),
                  c.hostname,
                  c.cwd};
  command.uid = c.uid;
  command.gid = c.gid;
  command.cwd = c.cwd;
  command.timeout = timeout;
  Result<std::string> out = RunAsUser(command);
  if (!out.ok()) return "core dumped, not kept: " + out.status().message();
  std::string evidence = *out;
  while (!evidence.empty() && evidence.back() == '\n') evidence.pop_back();
  return evidence;
}

int KeepCoreMain(const std::vector<std::string>& args) {
  if (args.size() != 8) {
    std::fprintf(stderr,
                 "usage: lockstep-agent keep-core PATTERN USES_PID JOB NODE PID SIGNAL HOSTNAME "
                 "CWD\n");
    return 2;
  }
  CorePattern pattern{args[0], args[1] == "1"};
  CoreDumpContext c;
  char* end = nullptr;
  c.job = std::strtoull(args[2].c_str(), &end, 10);
  c.node = args[3];
  c.pid = static_cast<pid_t>(std::strtol(args[4].c_str(), &end, 10));
  c.signal = static_cast<int>(std::strtol(args[5].c_str(), &end, 10));
  c.uid = ::getuid();
  c.gid = ::getgid();
  c.hostname = args[6];
  c.cwd = args[7];
  std::printf("%s\n", KeepCoreDumpAsCaller(pattern, c).c_str());
  return 0;
}

}  // namespace lockstep::agent
