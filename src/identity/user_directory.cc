#include "identity/user_directory.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <set>
#include <string>

#include <fmt/format.h>

namespace lockstep::identity {
namespace {

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  for (std::size_t at = 0;;) {
    const std::size_t end = s.find(sep, at);
    out.push_back(s.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at));
    if (end == std::string_view::npos) return out;
    at = end + 1;
  }
}

// An id of /etc/passwd: 0 to 2^32-2 (2^32-1 is (uid_t)-1, "no id").
bool ParseId(std::string_view s, std::uint32_t& id) {
  std::uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty() || v >= 0xffffffffULL)
    return false;
  id = static_cast<std::uint32_t>(v);
  return true;
}

// Each line of a passwd or group file without comments and blank lines, with its number.
template <typename Fn>
Status ForEachLine(std::string_view text, Fn&& fn) {
  std::size_t number = 0;
  for (std::string_view line : Split(text, '\n')) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || line[0] == '#') continue;
    if (Status s = fn(line, number); !s.ok()) return s;
  }
  return Status::Ok();
}

Status LineError(std::string_view file, std::size_t line, std::string_view what) {
  return InvalidArgument(fmt::format("{}:{}: {}", file, line, what));
}

}  // namespace

bool IsPlainUserName(std::string_view name) {
  if (name.empty() || name.size() > 32) return false;
  if (!(std::islower(static_cast<unsigned char>(name[0])) || name[0] == '_')) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) ||
           c == '_' || c == '.' || c == '-';
  });
}

std::string PasswdLine(const UserRecord& u) {
  return fmt::format("{}:x:{}:{}:{}:{}:{}", u.name, u.uid, u.gid, u.gecos, u.home, u.shell);
}

std::string GroupLine(const GroupRecord& g) {
  std::string members;
  for (const std::string& m : g.members) members += (members.empty() ? "" : ",") + m;
  return fmt::format("{}:x:{}:{}", g.name, g.gid, members);
}

TableDirectory::TableDirectory(std::string source, std::vector<UserRecord> users,
                               std::vector<GroupRecord> groups)
    : source_(std::move(source)), users_(std::move(users)), groups_(std::move(groups)) {
  std::sort(users_.begin(), users_.end(),
            [](const UserRecord& a, const UserRecord& b) { return a.uid < b.uid; });
  std::sort(groups_.begin(), groups_.end(),
            [](const GroupRecord& a, const GroupRecord& b) { return a.gid < b.gid; });
}

std::optional<UserRecord> TableDirectory::UserByName(std::string_view name) const {
  for (const UserRecord& u : users_)
    if (u.name == name) return u;
  return std::nullopt;
}

std::optional<UserRecord> TableDirectory::UserByUid(std::uint32_t uid) const {
  auto it = std::lower_bound(users_.begin(), users_.end(), uid,
                             [](const UserRecord& u, std::uint32_t v) { return u.uid < v; });
  if (it == users_.end() || it->uid != uid) return std::nullopt;
  return *it;
}

std::optional<GroupRecord> TableDirectory::GroupByGid(std::uint32_t gid) const {
  auto it = std::lower_bound(groups_.begin(), groups_.end(), gid,
                             [](const GroupRecord& g, std::uint32_t v) { return g.gid < v; });
  if (it == groups_.end() || it->gid != gid) return std::nullopt;
  return *it;
}

Result<std::shared_ptr<const TableDirectory>> ParsePasswdAndGroup(std::string_view passwd_text,
                                                                   std::string_view passwd_name,
                                                                   std::string_view group_text,
                                                                   std::string_view group_name) {
  std::vector<UserRecord> users;
  std::set<std::string> names;
  std::set<std::uint32_t> uids;
  Status s = ForEachLine(passwd_text, [&](std::string_view line, std::size_t n) -> Status {
    std::vector<std::string_view> f = Split(line, ':');
    if (f.size() != 7) return LineError(passwd_name, n, "expected name:x:uid:gid:gecos:home:shell");
    UserRecord u;
    u.name = f[0];
    if (!IsPlainUserName(u.name))
      return LineError(passwd_name, n, "'" + u.name + "' is not a user name ([a-z_][a-z0-9_.-]*)");
    if (!ParseId(f[2], u.uid)) return LineError(passwd_name, n, "uid '" + std::string(f[2]) + "' is not an id");
    if (!ParseId(f[3], u.gid)) return LineError(passwd_name, n, "gid '" + std::string(f[3]) + "' is not an id");
    u.gecos = f[4];
    u.home = f[5];
    u.shell = f[6].empty() ? "/bin/sh" : std::string(f[6]);
    if (!names.insert(u.name).second) return LineError(passwd_name, n, "user " + u.name + " again");
    if (!uids.insert(u.uid).second)
      return LineError(passwd_name, n, fmt::format("uid {} again ({})", u.uid, u.name));
    users.push_back(std::move(u));
    return Status::Ok();
  });
  if (!s.ok()) return s;
  std::vector<GroupRecord> groups;
  std::set<std::uint32_t> gids;
  std::set<std::string> group_names;
  s = ForEachLine(group_text, [&](std::string_view line, std::size_t n) -> Status {
    std::vector<std::string_view> f = Split(line, ':');
    if (f.size() != 4) return LineError(group_name, n, "expected name:x:gid:member,member");
    GroupRecord g;
    g.name = f[0];
    if (!IsPlainUserName(g.name))
      return LineError(group_name, n, "'" + g.name + "' is not a group name ([a-z_][a-z0-9_.-]*)");
    if (!ParseId(f[2], g.gid)) return LineError(group_name, n, "gid '" + std::string(f[2]) + "' is not an id");
    if (!f[3].empty())
      for (std::string_view m : Split(f[3], ',')) {
        if (!names.count(std::string(m)))
          return LineError(group_name, n, "member '" + std::string(m) + "' is not a user of " +
                                              std::string(passwd_name));
        g.members.emplace_back(m);
      }
    if (!gids.insert(g.gid).second) return LineError(group_name, n, fmt::format("gid {} again", g.gid));
    if (!group_names.insert(g.name).second) return LineError(group_name, n, "group " + g.name + " again");
    groups.push_back(std::move(g));
    return Status::Ok();
  });
  if (!s.ok()) return s;
  for (UserRecord& u : users)
    for (const GroupRecord& g : groups)
      if (g.gid != u.gid && std::find(g.members.begin(), g.members.end(), u.name) != g.members.end())
        u.groups.push_back(g.gid);
  return std::make_shared<const TableDirectory>(
      std::string(passwd_name) + " and " + std::string(group_name), std::move(users),
      std::move(groups));
}

}  // namespace lockstep::identity
