// Users and groups as lockstepd knows them (docs/login.md, "Identity"): from the host's user
// database (NSS), or from files lockstepd reads and reads again when they change (identity_source.h).
// They name the callers of the API, give job pods and login pods their supplementary groups and
// login pods their /etc/passwd and /etc/group, and say who is gone.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace lockstep::identity {

struct UserRecord {
  std::string name;
  std::uint32_t uid = 0;
  std::uint32_t gid = 0;              // the primary group
  std::vector<std::uint32_t> groups;  // supplementary groups, without the primary one
  std::string gecos;
  std::string home;
  std::string shell = "/bin/sh";
  std::vector<std::string> ssh_keys;  // authorized_keys lines
  std::string default_account;        // "" : the accounts' own default
  bool operator==(const UserRecord&) const = default;
};

struct GroupRecord {
  std::string name;
  std::uint32_t gid = 0;
  std::vector<std::string> members;  // users who have it as a supplementary group
  bool operator==(const GroupRecord&) const = default;
};

// Thread-safety: every method may be called from any number of threads at once.
class UserDirectory {
 public:
  virtual ~UserDirectory() = default;
  virtual std::optional<UserRecord> UserByName(std::string_view name) const = 0;
  virtual std::optional<UserRecord> UserByUid(std::uint32_t uid) const = 0;
  virtual std::optional<GroupRecord> GroupByGid(std::uint32_t gid) const = 0;
  // Every user and group (a login pod's /etc/passwd and /etc/group), ordered by id.
  virtual std::vector<UserRecord> Users() const = 0;
  virtual std::vector<GroupRecord> Groups() const = 0;
  // The name of the source, for messages ("the host's users", "/etc/lockstep/users.yaml").
  virtual std::string Describe() const = 0;
};

// The host's user database: getpwnam_r, getpwuid_r, getgrouplist, getgrgid_r; the listings
// enumerate it (getpwent), which for a network directory may be partial.
std::shared_ptr<const UserDirectory> HostDirectory();

// A directory read from files: an immutable table.
class TableDirectory : public UserDirectory {
 public:
  TableDirectory(std::string source, std::vector<UserRecord> users,
                 std::vector<GroupRecord> groups);
  std::optional<UserRecord> UserByName(std::string_view name) const override;
  std::optional<UserRecord> UserByUid(std::uint32_t uid) const override;
  std::optional<GroupRecord> GroupByGid(std::uint32_t gid) const override;
  std::vector<UserRecord> Users() const override { return users_; }
  std::vector<GroupRecord> Groups() const override { return groups_; }
  std::string Describe() const override { return source_; }

 private:
  std::string source_;
  std::vector<UserRecord> users_;    // by uid
  std::vector<GroupRecord> groups_;  // by gid
};

// /etc/passwd and /etc/group's format ("name:x:uid:gid:gecos:home:shell", "name:x:gid:a,b").
// Errors name the file and the line. Supplementary groups come from the group file's members.
Result<std::shared_ptr<const TableDirectory>> ParsePasswdAndGroup(std::string_view passwd_text,
                                                                   std::string_view passwd_name,
                                                                   std::string_view group_text,
                                                                   std::string_view group_name);

// A YAML document {users: [{name, uid, gid, groups, home, shell, ssh_keys, default_account}],
// groups: [{name, gid}]} (docs/login.md). A user's groups are named by group name or gid; a
// primary gid with no group gets one named after the user. Errors name the file, line and key.
Result<std::shared_ptr<const TableDirectory>> ParseUsersYaml(std::string_view text,
                                                             std::string_view source_name);

// A user name as login pods' files and Kubernetes names take it: 1-32 of [a-z0-9_.-], starting
// with a letter or '_'.
bool IsPlainUserName(std::string_view name);

// The user's line of /etc/passwd, and a group's of /etc/group.
std::string PasswdLine(const UserRecord& user);
std::string GroupLine(const GroupRecord& group);

}  // namespace lockstep::identity
