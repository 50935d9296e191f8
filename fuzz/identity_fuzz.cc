// Fuzzes the identity files lockstepd reads (identity/user_directory.h): a users YAML, and a
// passwd and group pair (the input split at its first NUL byte). Properties: nothing crashes or
// throws; every error names its file; a directory that parses holds only plain names, unique
// uids, each user's groups are groups of the directory, and every line written for a login
// pod's /etc/passwd and /etc/group has the fields those files have (no ':' or newline smuggled
// in through a name, home, shell or gecos).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "identity/user_directory.h"

namespace {

using lockstep::identity::TableDirectory;

void CheckDirectory(const TableDirectory& dir) {
  std::set<std::uint32_t> uids;
  for (const lockstep::identity::UserRecord& u : dir.Users()) {
    FUZZ_CHECK(lockstep::identity::IsPlainUserName(u.name));
    FUZZ_CHECK(uids.insert(u.uid).second);
    for (std::uint32_t g : u.groups) FUZZ_CHECK(dir.GroupByGid(g).has_value());
    const std::string line = lockstep::identity::PasswdLine(u);
    FUZZ_CHECK(std::count(line.begin(), line.end(), ':') == 6);
    FUZZ_CHECK(line.find('\n') == std::string::npos);
  }
  for (const lockstep::identity::GroupRecord& g : dir.Groups()) {
    const std::string line = lockstep::identity::GroupLine(g);
    FUZZ_CHECK(std::count(line.begin(), line.end(), ':') == 3);
    FUZZ_CHECK(line.find('\n') == std::string::npos);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto yaml = lockstep::identity::ParseUsersYaml(text, "users.yaml");
  if (yaml.ok())
    CheckDirectory(**yaml);
  else
    FUZZ_CHECK(yaml.status().message().rfind("users.yaml", 0) == 0);
  const std::size_t nul = text.find('\0');
  const std::string_view passwd = text.substr(0, nul);
  const std::string_view group = nul == std::string_view::npos ? "" : text.substr(nul + 1);
  auto files = lockstep::identity::ParsePasswdAndGroup(passwd, "passwd", group, "group");
  if (files.ok())
    CheckDirectory(**files);
  else
    FUZZ_CHECK(files.status().message().rfind("passwd:", 0) == 0 ||
               files.status().message().rfind("group:", 0) == 0);
  return 0;
}
