#include "jobspec/container_mounts.h"

#include <fmt/format.h>

namespace lockstep::jobspec {

namespace {

Status Refused(std::string_view entry, std::string_view why) {
  return InvalidArgument(fmt::format("\"{}\": {}", entry, why));
}

// `path` without repeated or trailing slashes; empty when it is not absolute or has a "." or
// ".." component (a path that would leave its file system once resolved) or a control byte.
std::string Normalized(std::string_view path) {
  if (path.empty() || path[0] != '/') return "";
  std::string out;
  std::size_t i = 0;
  while (i < path.size()) {
    while (i < path.size() && path[i] == '/') ++i;
    const std::size_t end = std::min(path.find('/', i), path.size());
    const std::string_view part = path.substr(i, end - i);
    if (part.empty()) break;
    if (part == "." || part == "..") return "";
    for (unsigned char ch : part)
      if (ch < 0x20 || ch == 0x7f) return "";
    out += '/';
    out += part;
    i = end;
  }
  return out.empty() ? "/" : out;
}

}  // namespace

bool PathWithin(std::string_view path, std::string_view dir) {
  if (dir == "/") return !path.empty() && path[0] == '/';
  return path == dir || (path.size() > dir.size() && path.substr(0, dir.size()) == dir &&
                         path[dir.size()] == '/');
}

Result<std::vector<ContainerMount>> ParseContainerMounts(std::string_view text) {
  std::vector<ContainerMount> mounts;
  std::size_t start = 0;
  while (start <= text.size() && !text.empty()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view entry = text.substr(start, comma - start);
    start = comma + 1;
    if (entry.empty()) return Refused(text, "an empty entry");
    std::vector<std::string_view> fields;
    for (std::size_t f = 0; f <= entry.size();) {
      const std::size_t colon = std::min(entry.find(':', f), entry.size());
      fields.push_back(entry.substr(f, colon - f));
      f = colon + 1;
    }
    if (fields.size() > 3) return Refused(entry, "expected SRC[:DST[:ro|rw]]");
    ContainerMount m;
    m.source = Normalized(fields[0]);
    if (m.source.empty())
      return Refused(entry, "the source must be an absolute path without . or .. components");
    m.target = fields.size() > 1 ? Normalized(fields[1]) : m.source;
    if (m.target.empty())
      return Refused(entry, "the target must be an absolute path without . or .. components");
    if (m.target == "/") return Refused(entry, "the target cannot be /");
    if (fields.size() == 3) {
      if (fields[2] == "ro")
        m.read_only = true;
      else if (fields[2] != "rw")
        return Refused(entry, fmt::format("unknown flag \"{}\" (ro or rw)", fields[2]));
    }
    for (const ContainerMount& other : mounts)
      if (other.target == m.target)
        return Refused(entry, fmt::format("{} is the target of another mount", m.target));
    mounts.push_back(std::move(m));
    if (mounts.size() > kMaxContainerMounts)
      return Refused(entry, fmt::format("more than {} mounts", kMaxContainerMounts));
    if (comma == text.size()) break;
  }
  return mounts;
}

}  // namespace lockstep::jobspec
