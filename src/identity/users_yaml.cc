// A users file in YAML (user_directory.h: ParseUsersYaml, docs/login.md).
#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "config/yaml_reader.h"
#include "identity/user_directory.h"

namespace lockstep::identity {
namespace {

using config::MapView;
using config::YamlReader;

constexpr std::int64_t kMaxId = 0xfffffffeLL;

bool PlainText(const std::string& s) {
  return std::none_of(s.begin(), s.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x20 || c == 0x7f || c == ':';
  });
}

struct Parsed {
  std::vector<UserRecord> users;
  std::vector<GroupRecord> groups;
  // Per user, its groups as written (names or gids), resolved once every group is read.
  std::vector<std::vector<std::string>> group_refs;
  std::vector<YAML::Mark> group_marks;
};

void ReadGroups(YamlReader& r, const YAML::Node& list, Parsed& p) {
  std::set<std::string> names;
  std::set<std::uint32_t> gids;
  r.ForEach(list, "groups", [&](const YAML::Node& item, const std::string& path) {
    MapView m(r, item, path);
    GroupRecord g;
    g.name = m.RequiredString("name");
    g.gid = static_cast<std::uint32_t>(m.Int("gid", -1, 0, kMaxId));
    if (!m.Has("gid")) m.Fail("gid", "is required");
    if (!r.failed() && !IsPlainUserName(g.name))
      m.Fail("name", "'" + g.name + "' is not a group name ([a-z_][a-z0-9_.-]*, at most 32)");
    if (!r.failed() && !names.insert(g.name).second) m.Fail("name", "group " + g.name + " again");
    if (!r.failed() && !gids.insert(g.gid).second)
      m.Fail("gid", "gid " + std::to_string(g.gid) + " again");
    m.Finish();
    p.groups.push_back(std::move(g));
  });
}

void ReadUsers(YamlReader& r, const YAML::Node& list, Parsed& p) {
  std::set<std::string> names;
  std::set<std::uint32_t> uids;
  r.ForEach(list, "users", [&](const YAML::Node& item, const std::string& path) {
    MapView m(r, item, path);
    UserRecord u;
    u.name = m.RequiredString("name");
    if (!r.failed() && !IsPlainUserName(u.name))
      m.Fail("name", "'" + u.name + "' is not a user name ([a-z_][a-z0-9_.-]*, at most 32)");
    if (!m.Has("uid")) m.Fail("uid", "is required");
    u.uid = static_cast<std::uint32_t>(m.Int("uid", 0, 0, kMaxId));
    u.gid = static_cast<std::uint32_t>(m.Int("gid", u.uid, 0, kMaxId));
    p.group_refs.push_back(m.StringList("groups"));
    p.group_marks.push_back(m.MarkOf("groups"));
    u.gecos = m.String("gecos", "");
    u.home = m.String("home", "/home/" + u.name);
    u.shell = m.String("shell", "/bin/sh");
    for (const char* key : {"home", "shell"}) {
      const std::string& v = std::string(key) == "home" ? u.home : u.shell;
      if (!r.failed() && (v.empty() || v[0] != '/' || !PlainText(v)))
        m.Fail(key, "must be an absolute path without ':' or control characters");
    }
    if (!r.failed() && !PlainText(u.gecos)) m.Fail("gecos", "must not hold ':' or control characters");
    u.ssh_keys = m.StringList("ssh_keys");
    for (const std::string& k : u.ssh_keys)
      if (!r.failed() && (k.find('\n') != std::string::npos || k.rfind("ssh-", 0) != 0) &&
          k.rfind("ecdsa-", 0) != 0 && k.rfind("sk-", 0) != 0) {
        m.Fail("ssh_keys", "'" + k.substr(0, 20) + "...' is not an OpenSSH public key line");
      }
    u.default_account = m.String("default_account", "");
    if (!r.failed() && !names.insert(u.name).second) m.Fail("name", "user " + u.name + " again");
    if (!r.failed() && !uids.insert(u.uid).second)
      m.Fail("uid", "uid " + std::to_string(u.uid) + " again");
    m.Finish();
    p.users.push_back(std::move(u));
  });
}

// Groups by name or gid; the primary group of a user without one is the user's own.
void ResolveGroups(YamlReader& r, Parsed& p) {
  std::map<std::string, std::size_t> by_name;
  std::map<std::uint32_t, std::size_t> by_gid;
  for (std::size_t i = 0; i < p.groups.size(); ++i) {
    by_name[p.groups[i].name] = i;
    by_gid[p.groups[i].gid] = i;
  }
  for (std::size_t i = 0; i < p.users.size() && !r.failed(); ++i) {
    UserRecord& u = p.users[i];
    const std::string path = "users[" + std::to_string(i) + "].groups";
    for (const std::string& ref : p.group_refs[i]) {
      std::size_t g = 0;
      if (auto it = by_name.find(ref); it != by_name.end()) {
        g = it->second;
      } else if (!ref.empty() && std::all_of(ref.begin(), ref.end(), ::isdigit) && ref.size() < 11 &&
                 by_gid.count(static_cast<std::uint32_t>(std::stoull(ref)))) {
        g = by_gid[static_cast<std::uint32_t>(std::stoull(ref))];
      } else {
        r.Fail(p.group_marks[i], path, "'" + ref + "' is not a group of the file (groups:)");
        return;
      }
      if (p.groups[g].gid == u.gid || std::count(u.groups.begin(), u.groups.end(), p.groups[g].gid))
        continue;
      u.groups.push_back(p.groups[g].gid);
      p.groups[g].members.push_back(u.name);
    }
  }
  for (const UserRecord& u : p.users) {
    if (by_gid.count(u.gid)) continue;
    if (by_name.count(u.name)) {
      r.Fail(YAML::Mark::null_mark(), "groups",
             "group " + u.name + " does not have gid " + std::to_string(u.gid) + ", " + u.name +
                 "'s primary group");
      return;
    }
    by_gid[u.gid] = p.groups.size();
    by_name[u.name] = p.groups.size();
    p.groups.push_back(GroupRecord{u.name, u.gid, {}});
  }
}

}  // namespace

Result<std::shared_ptr<const TableDirectory>> ParseUsersYaml(std::string_view text,
                                                             std::string_view source_name) {
  YamlReader r(source_name);
  YAML::Node doc = r.Load(text);
  Parsed p;
  if (!r.failed()) {
    MapView top(r, doc, "");
    if (!top.Has("users")) top.Fail("users", "is required (a list of users)");
    ReadGroups(r, top.Value("groups"), p);
    ReadUsers(r, top.Value("users"), p);
    if (!r.failed()) top.Finish();
    if (!r.failed()) ResolveGroups(r, p);
  }
  if (r.failed()) return r.status();
  return std::make_shared<const TableDirectory>(std::string(source_name), std::move(p.users),
                                                std::move(p.groups));
}

}  // namespace lockstep::identity
