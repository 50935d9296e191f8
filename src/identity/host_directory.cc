// The host's user database through NSS (user_directory.h: HostDirectory).
#include <grp.h>
#include <pwd.h>

#include <algorithm>
#include <mutex>
#include <vector>

#include "identity/user_directory.h"

namespace lockstep::identity {
namespace {

constexpr std::size_t kBufferSize = 1 << 16;

UserRecord FromPasswd(const passwd& pw) {
  UserRecord u;
  u.name = pw.pw_name;
  u.uid = pw.pw_uid;
  u.gid = pw.pw_gid;
  u.gecos = pw.pw_gecos ? pw.pw_gecos : "";
  u.home = pw.pw_dir ? pw.pw_dir : "";
  u.shell = pw.pw_shell && *pw.pw_shell ? pw.pw_shell : "/bin/sh";
  int n = 64;
  std::vector<gid_t> gids(static_cast<std::size_t>(n));
  if (::getgrouplist(pw.pw_name, pw.pw_gid, gids.data(), &n) < 0) {
    gids.resize(static_cast<std::size_t>(n));
    if (::getgrouplist(pw.pw_name, pw.pw_gid, gids.data(), &n) < 0) n = 0;
  }
  for (int i = 0; i < n; ++i)
    if (gids[static_cast<std::size_t>(i)] != pw.pw_gid &&
        std::find(u.groups.begin(), u.groups.end(), gids[static_cast<std::size_t>(i)]) == u.groups.end())
      u.groups.push_back(gids[static_cast<std::size_t>(i)]);
  return u;
}

GroupRecord FromGroup(const group& gr) {
  GroupRecord g;
  g.name = gr.gr_name;
  g.gid = gr.gr_gid;
  for (char** m = gr.gr_mem; m && *m; ++m) g.members.emplace_back(*m);
  return g;
}

class NssDirectory : public UserDirectory {
 public:
  std::optional<UserRecord> UserByName(std::string_view name) const override {
    const std::string n(name);
    passwd pw{}, *found = nullptr;
    std::vector<char> buf(kBufferSize);
    if (::getpwnam_r(n.c_str(), &pw, buf.data(), buf.size(), &found) != 0 || !found)
      return std::nullopt;
    return FromPasswd(pw);
  }
  std::optional<UserRecord> UserByUid(std::uint32_t uid) const override {
    passwd pw{}, *found = nullptr;
    std::vector<char> buf(kBufferSize);
    if (::getpwuid_r(uid, &pw, buf.data(), buf.size(), &found) != 0 || !found) return std::nullopt;
    return FromPasswd(pw);
  }
  std::optional<GroupRecord> GroupByGid(std::uint32_t gid) const override {
    group gr{}, *found = nullptr;
    std::vector<char> buf(kBufferSize);
    if (::getgrgid_r(gid, &gr, buf.data(), buf.size(), &found) != 0 || !found) return std::nullopt;
    return FromGroup(gr);
  }
  // getpwent and getgrent keep one cursor per process: one listing at a time.
  std::vector<UserRecord> Users() const override {
    std::lock_guard<std::mutex> lock(enumerate_mu_);
    std::vector<UserRecord> out;
    ::setpwent();
    while (passwd* pw = ::getpwent()) out.push_back(FromPasswd(*pw));
    ::endpwent();
    std::sort(out.begin(), out.end(), [](const UserRecord& a, const UserRecord& b) { return a.uid < b.uid; });
    return out;
  }
  std::vector<GroupRecord> Groups() const override {
    std::lock_guard<std::mutex> lock(enumerate_mu_);
    std::vector<GroupRecord> out;
    ::setgrent();
    while (group* gr = ::getgrent()) out.push_back(FromGroup(*gr));
    ::endgrent();
    std::sort(out.begin(), out.end(), [](const GroupRecord& a, const GroupRecord& b) { return a.gid < b.gid; });
    return out;
  }
  std::string Describe() const override { return "the host's users (NSS)"; }

 private:
  mutable std::mutex enumerate_mu_;
};

}  // namespace

std::shared_ptr<const UserDirectory> HostDirectory() {
  static const auto* directory = new std::shared_ptr<const UserDirectory>(std::make_shared<NssDirectory>());
  return *directory;
}

}  // namespace lockstep::identity
