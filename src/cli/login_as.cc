// `lockstep login-as`: run by lockstepd (as root) in a team's shared login pod (docs/login.md,
// "Shared pools"), never by users: it is how each session of the pod becomes its user. Not in
// `lockstep help`.
//
//   lockstep login-as --store-token UID GID GROUPS   the token on stdin's first line, stored as
//                                                   /run/lockstep-users/UID/token, the user's
//   lockstep login-as UID GID GROUPS HOME -- ARGV    ARGV as the user, in HOME
//
// GROUPS: the supplementary gids, comma-separated, or "-" for none. The user's directory is made
// by root through a descriptor of the pod's token directory (no link followed) and given to the
// user; the token is written after becoming the user, so no file of theirs is touched as root.
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cli/commands.h"

namespace lockstep::cli {
namespace {

constexpr char kTokenDir[] = "/run/lockstep-users";

int Fail(const std::string& what) {
  std::fprintf(stderr, "lockstep login-as: %s\n", what.c_str());
  return 255;
}

bool ParseId(const char* text, unsigned& id) {
  const std::string s = text;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), id);
  return ec == std::errc() && end == s.data() + s.size() && !s.empty() && id != 0xffffffffu;
}

bool ParseGroups(const std::string& text, std::vector<gid_t>& groups) {
  if (text == "-") return true;
  for (std::size_t at = 0; at <= text.size();) {
    const std::size_t comma = text.find(',', at);
    const std::string one = text.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    unsigned g = 0;
    if (!ParseId(one.c_str(), g)) return false;
    groups.push_back(g);
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return true;
}

// Becomes the user for good: groups, gid, uid; root cannot be taken back.
bool BecomeUser(uid_t uid, gid_t gid, const std::vector<gid_t>& groups) {
  if (::setgroups(groups.size(), groups.data()) != 0 || ::setgid(gid) != 0 || ::setuid(uid) != 0)
    return false;
  return ::getuid() == uid && ::geteuid() == uid && (uid == 0 || ::setuid(0) != 0);
}

int StoreToken(uid_t uid, gid_t gid, const std::vector<gid_t>& groups) {
  const int dir = ::open(kTokenDir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir < 0) return Fail(std::string(kTokenDir) + ": " + std::strerror(errno));
  const std::string name = std::to_string(uid);
  if (::mkdirat(dir, name.c_str(), 0700) != 0 && errno != EEXIST)
    return Fail("cannot make " + name + ": " + std::strerror(errno));
  const int mine = ::openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  struct stat st {};
  if (mine < 0 || ::fstat(mine, &st) != 0) return Fail("cannot open " + name);
  if (st.st_uid == 0 && ::fchown(mine, uid, gid) != 0) return Fail("cannot give " + name + " to its user");
  if (::fstat(mine, &st) != 0 || st.st_uid != uid) return Fail(name + " is not its user's");
  if (!BecomeUser(uid, gid, groups)) return Fail("cannot become uid " + name);
  // As its owner (root here has no CAP_FOWNER).
  if (::fchmod(mine, 0700) != 0) return Fail("cannot close " + name + " to others");
  char line[512] = {};
  if (std::fgets(line, sizeof line, stdin) == nullptr) return Fail("no token on stdin");
  std::string token = line;
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r')) token.pop_back();
  const int fd = ::openat(mine, "token.new", O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return Fail("cannot write the token: " + std::string(std::strerror(errno)));
  token += '\n';
  const bool written = ::write(fd, token.data(), token.size()) == static_cast<ssize_t>(token.size());
  ::close(fd);
  if (!written || ::renameat(mine, "token.new", mine, "token") != 0) return Fail("cannot write the token");
  return 0;
}

int RunAs(uid_t uid, gid_t gid, const std::vector<gid_t>& groups, const std::string& home,
          char** argv) {
  if (!BecomeUser(uid, gid, groups)) return Fail("cannot become uid " + std::to_string(uid));
  const passwd* pw = ::getpwuid(uid);
  const std::string user = pw ? pw->pw_name : std::to_string(uid);
  const std::string shell = pw && pw->pw_shell && *pw->pw_shell ? pw->pw_shell : "/bin/sh";
  ::setenv("USER", user.c_str(), 1);
  ::setenv("LOGNAME", user.c_str(), 1);
  ::setenv("SHELL", shell.c_str(), 1);
  const std::string token = std::string(kTokenDir) + "/" + std::to_string(uid) + "/token";
  ::setenv("LOCKSTEP_TOKEN_FILE", token.c_str(), 1);
  const std::string where = ::chdir(home.c_str()) == 0 ? home : "/tmp";
  if (where != home) (void)!::chdir("/tmp");
  ::setenv("HOME", where.c_str(), 1);
  ::execvp(argv[0], argv);
  return Fail(std::string("cannot run ") + argv[0] + ": " + std::strerror(errno));
}

}  // namespace

int RunLoginAs(int argc, char** argv) {
  if (::geteuid() != 0) return Fail("only lockstepd runs this, as root in a shared login pod");
  const bool store = argc > 1 && std::string(argv[1]) == "--store-token";
  const int first = store ? 2 : 1;
  unsigned uid = 0, gid = 0;
  std::vector<gid_t> groups;
  if (argc < first + 3 || !ParseId(argv[first], uid) || !ParseId(argv[first + 1], gid) ||
      !ParseGroups(argv[first + 2], groups) || uid == 0)
    return Fail("usage: lockstep login-as [--store-token] UID GID GROUPS [HOME -- ARGV...] (UID not 0)");
  if (store) return StoreToken(uid, gid, groups);
  if (argc < first + 6 || std::string(argv[first + 4]) != "--")
    return Fail("usage: lockstep login-as UID GID GROUPS HOME -- ARGV...");
  return RunAs(uid, gid, groups, argv[first + 3], argv + first + 5);
}

}  // namespace lockstep::cli
