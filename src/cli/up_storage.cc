#include "cli/up_storage.h"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

namespace lockstep::cli {
namespace {

// A storage name from a directory's last component: [A-Za-z0-9._-], else '_'.
std::string NameOf(const std::filesystem::path& dir) {
  std::string name = dir.filename().string();
  for (char& c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) c = '_';
  }
  return name.empty() || name == "." || name == ".." ? "root" : name;
}

}  // namespace

Result<std::string> UpStorageYaml(const std::vector<std::string>& dirs) {
  if (dirs.empty()) return std::string();
  std::string yaml = "storage:\n";
  std::set<std::string> names;
  for (const std::string& value : dirs) {
    std::string dir = value;
    bool read_only = false;
    if (dir.size() > 3 && dir.compare(dir.size() - 3, 3, ":ro") == 0) {
      read_only = true;
      dir.resize(dir.size() - 3);
    } else if (dir.size() > 3 && dir.compare(dir.size() - 3, 3, ":rw") == 0) {
      dir.resize(dir.size() - 3);
    }
    std::error_code ec;
    const std::filesystem::path path = std::filesystem::absolute(dir, ec).lexically_normal();
    std::string text = path.string();
    while (text.size() > 1 && text.back() == '/') text.pop_back();
    if (ec || !std::filesystem::is_directory(text, ec))
      return InvalidArgument("--storage " + value + ": not a directory");
    if (text == "/" || text.find_first_of(":,\n") != std::string::npos)
      return InvalidArgument("--storage " + value + ": the path must be a directory below / "
                             "without ':' or ','");
    std::string name = NameOf(text);
    for (int k = 2; !names.insert(name).second; ++k) name = NameOf(text) + "-" + std::to_string(k);
    yaml += "  - name: " + nlohmann::json(name).dump() + "\n";
    yaml += "    host_path: " + nlohmann::json(text).dump() + "\n";
    if (read_only) yaml += "    read_only: true\n";
  }
  return yaml;
}

}  // namespace lockstep::cli
