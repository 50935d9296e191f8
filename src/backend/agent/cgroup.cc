#include "backend/agent/cgroup.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <system_error>

namespace lockstep::agent {
namespace {

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  while (true) {
    const std::size_t at = s.find(sep);
    out.push_back(s.substr(0, at));
    if (at == std::string_view::npos) return out;
    s.remove_prefix(at + 1);
  }
}

// Mount fields escape space, tab, newline and backslash as \ooo.
std::string UnescapeMountField(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const bool octal = s[i] == '\\' && i + 3 < s.size() &&
                       std::all_of(s.begin() + i + 1, s.begin() + i + 4,
                                   [](char c) { return c >= '0' && c <= '7'; });
    if (octal) {
      out.push_back(
          static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0')));
      i += 3;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

std::string JoinPath(const std::string& dir, std::string_view rel) {
  if (rel.empty() || rel == "/") return dir;
  if (rel.front() == '/') rel.remove_prefix(1);
  return dir + "/" + std::string(rel);
}

}  // namespace

std::optional<std::string> ParseUnifiedCgroupPath(std::string_view text) {
  for (std::string_view line : Split(text, '\n')) {
    if (line.substr(0, 3) == "0::") {
      std::string_view path = line.substr(3);
      if (path.empty() || path.front() != '/') return std::nullopt;
      return std::string(path);
    }
  }
  return std::nullopt;
}

std::vector<MountInfoEntry> ParseMountInfo(std::string_view mountinfo) {
  std::vector<MountInfoEntry> mounts;
  for (std::string_view line : Split(mountinfo, '\n')) {
    const std::size_t dash = line.find(" - ");
    if (dash == std::string_view::npos) continue;
    std::vector<std::string_view> after = Split(line.substr(dash + 3), ' ');
    std::vector<std::string_view> before = Split(line.substr(0, dash), ' ');
    if (after.empty() || before.size() < 5) continue;
    mounts.push_back({UnescapeMountField(before[3]), UnescapeMountField(before[4]),
                      std::string(after[0]), after.size() >= 3 ? std::string(after[2]) : ""});
  }
  return mounts;
}

std::vector<Cgroup2Mount> ParseCgroup2Mounts(std::string_view mountinfo) {
  std::vector<Cgroup2Mount> mounts;
  for (MountInfoEntry& m : ParseMountInfo(mountinfo))
    if (m.fs_type == "cgroup2") mounts.push_back({std::move(m.mount_point), std::move(m.root)});
  return mounts;
}

std::optional<CgroupDir> FindCgroupDir(const std::vector<Cgroup2Mount>& mounts,
                                       std::string_view path) {
  if (path.empty() || path.front() != '/' || path.find("/..") != std::string_view::npos) {
    return std::nullopt;  // outside our cgroup namespace
  }
  for (const Cgroup2Mount& m : mounts) {
    if (m.root == "/") return CgroupDir{JoinPath(m.mount_point, path), m.mount_point};
    if (path == m.root) return CgroupDir{m.mount_point, m.mount_point};
    if (path.size() > m.root.size() && path.substr(0, m.root.size()) == m.root &&
        path[m.root.size()] == '/') {
      return CgroupDir{JoinPath(m.mount_point, path.substr(m.root.size())), m.mount_point};
    }
  }
  return std::nullopt;
}

std::optional<std::int64_t> ParseKeyedValue(std::string_view text, std::string_view key) {
  for (std::string_view line : Split(text, '\n')) {
    if (line.size() > key.size() && line.substr(0, key.size()) == key && line[key.size()] == ' ') {
      std::string_view v = line.substr(key.size() + 1);
      std::int64_t n = 0;
      if (v.empty()) return std::nullopt;
      for (char c : v) {
        if (c < '0' || c > '9') return std::nullopt;
        n = n * 10 + (c - '0');
      }
      return n;
    }
  }
  return std::nullopt;
}

std::set<std::string> ParseControllers(std::string_view text) {
  std::set<std::string> out;
  for (std::string_view line : Split(text, '\n')) {
    for (std::string_view word : Split(line, ' ')) {
      if (!word.empty()) out.emplace(word);
    }
  }
  return out;
}

std::string FormatCpuList(std::vector<int> cpus) {
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  std::string out;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += std::to_string(cpus[i]);
    if (j > i) out += "-" + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}

Status ValidateCgroupName(std::string_view name) {
  static constexpr std::string_view kReserved[] = {"cgroup.", "cpu.",  "cpuset.",  "memory.", "io.",
                                                   "pids.",   "rdma.", "hugetlb.", "misc."};
  auto bad = [&](const std::string& why) {
    return InvalidArgument("bad cgroup name '" + std::string(name) + "': " + why);
  };
  if (name.empty()) return bad("empty");
  if (name.size() > 1024) return bad("too long");
  for (std::string_view part : Split(name, '/')) {
    if (part.empty() || part == "." || part == "..") return bad("empty, '.' or '..' component");
    if (part.size() > 255) return bad("component too long");
    for (char c : part) {
      const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '_' || c == '-' || c == '.';
      if (!ok) return bad("only letters, digits, '_', '-' and '.' are allowed");
    }
    for (std::string_view prefix : kReserved) {
      if (part.substr(0, prefix.size()) == prefix)
        return bad("names like cgroupfs files are reserved");
    }
  }
  return Status::Ok();
}

namespace internal {

std::string ErrnoText(int err) {
  return std::error_code(err, std::generic_category()).message();
}

Result<std::string> ReadSmallFile(const std::string& path) {
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return IoError("cannot read " + path + ": " + ErrnoText(errno));
  std::string out;
  char buf[4096];
  while (true) {
    const ssize_t n = read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return IoError("cannot read " + path + ": " + ErrnoText(errno));
    if (n == 0) return out;
    out.append(buf, static_cast<std::size_t>(n));
  }
}

int WriteSmallFile(const std::string& path, std::string_view data) {
  UniqueFd fd(open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (fd.get() < 0) return errno;
  ssize_t n;
  do {
    n = write(fd.get(), data.data(), data.size());
  } while (n < 0 && errno == EINTR);
  if (n < 0) return errno;
  return static_cast<std::size_t>(n) == data.size() ? 0 : EIO;
}

int MakeDir(const std::string& path) {
  if (mkdir(path.c_str(), 0755) == 0 || errno == EEXIST) return 0;
  return errno;
}

std::vector<pid_t> ParsePids(std::string_view text) {
  std::vector<pid_t> pids;
  for (std::string_view line : Split(text, '\n')) {
    if (line.empty()) continue;
    pid_t p = 0;
    bool ok = true;
    for (char c : line) {
      if (c < '0' || c > '9') {
        ok = false;
        break;
      }
      p = p * 10 + (c - '0');
    }
    if (ok && p > 0) pids.push_back(p);
  }
  return pids;
}

}  // namespace internal
}  // namespace lockstep::agent
