#include "cli/format/sshare.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <iterator>
#include <vector>

namespace lockstep::cli {
namespace {

// One of sshare's columns: its width (negative: left-aligned), as Slurm's fields[] table.
struct Column {
  int width;
  const char* name;
};
constexpr Column kAccount{-20, "Account"}, kUser{10, "User"}, kRawShares{10, "RawShares"},
    kNormShares{11, "NormShares"}, kRawUsage{11, "RawUsage"}, kNormUsage{11, "NormUsage"},
    kEffectvUsage{13, "EffectvUsage"}, kFairShare{10, "FairShare"}, kLevelFs{10, "LevelFS"},
    kGrpTresMins{30, "GrpTRESMins"}, kTresRunMins{30, "TRESRunMins"};

class Printer {
 public:
  Printer(std::string& out, int parsable) : out_(out), parsable_(parsable) {}

  // A field of a line; `last` ends it (for -P's missing trailing '|').
  void Field(const Column& c, const std::string& text, bool last) {
    if (parsable_) {
      out_ += text;
      if (parsable_ == 1 || !last) out_ += '|';
      return;
    }
    const std::size_t width = static_cast<std::size_t>(std::abs(c.width));
    std::string t = text;
    if (t.size() > width) {  // Slurm truncates and marks the cut with '+'
      t.resize(width);
      t.back() = '+';
    }
    if (c.width < 0)
      fmt::format_to(std::back_inserter(out_), "{:<{}} ", t, width);
    else
      fmt::format_to(std::back_inserter(out_), "{:>{}} ", t, width);
  }

  void Header(const std::vector<Column>& columns) {
    for (std::size_t i = 0; i < columns.size(); ++i)
      Field(columns[i], columns[i].name, i + 1 == columns.size());
    out_ += '\n';
    if (parsable_) return;
    for (const Column& c : columns) out_ += std::string(std::abs(c.width), '-') + ' ';
    out_ += '\n';
  }

 private:
  std::string& out_;
  int parsable_;
};

// print_fields_double: "%f" (so infinity is "inf"); a missing value is blank.
std::string Double(const nlohmann::json& v) {
  if (v.is_null()) return "inf";  // the API's null level_fs: no usage, Level FS is infinite
  return fmt::format("{:f}", v.get<double>());
}

bool Shown(const nlohmann::json& row, const SshareOptions& o) {
  const std::string user = row.value("user", "");
  const std::string account = row.value("account", "");
  if (!o.accounts.empty() && !o.accounts.count(account)) return false;
  if (user.empty()) return !o.users_only;
  return o.users.empty() || o.users.count(user) > 0;
}

}  // namespace

Result<std::string> FormatSshare(const nlohmann::json& shares, const SshareOptions& o) {
  if (!shares.is_object() || !shares.contains("shares") || !shares["shares"].is_array())
    return InvalidArgument("sshare: the answer has no \"shares\" list");
  std::vector<Column> columns = {kAccount, kUser, kRawShares, kNormShares, kRawUsage};
  if (o.long_format) columns.push_back(kNormUsage);
  columns.insert(columns.end(), {kEffectvUsage, kFairShare});
  if (o.long_format) columns.insert(columns.end(), {kLevelFs, kGrpTresMins, kTresRunMins});
  std::string out;
  Printer p(out, o.parsable);
  if (!o.noheader) p.Header(columns);
  for (const nlohmann::json& row : shares["shares"]) {
    if (!row.is_object() || !row.contains("account") || !row["account"].is_string())
      return InvalidArgument("sshare: a line of the answer has no account");
    if (!Shown(row, o)) continue;
    const std::string user = row.value("user", "");
    const bool root = row.value("parent", "").empty() && user.empty();
    try {
      for (std::size_t i = 0; i < columns.size(); ++i) {
        const Column& c = columns[i];
        const std::string name = c.name;
        std::string text;
        if (name == "Account")
          text = std::string(row.value("depth", 0u), ' ') + row["account"].get<std::string>();
        else if (name == "User")
          text = user;
        else if (name == "RawShares")
          text = root ? "" : std::to_string(row.at("raw_shares").get<std::uint32_t>());
        else if (name == "NormShares")
          text = Double(row.at("norm_shares"));
        else if (name == "RawUsage")
          text = std::to_string(static_cast<std::uint64_t>(row.at("raw_usage").get<double>()));
        else if (name == "NormUsage")
          text = Double(row.at("norm_usage"));
        else if (name == "EffectvUsage")
          text = Double(row.at("effective_usage"));
        else if (name == "FairShare")  // Fair Tree: users only
          text = row.at("fairshare").is_null() ? "" : Double(row["fairshare"]);
        else if (name == "LevelFS")
          text = root ? "" : Double(row.at("level_fs"));
        p.Field(c, text, i + 1 == columns.size());
      }
    } catch (const nlohmann::json::exception& e) {
      return InvalidArgument(std::string("sshare: a line of the answer is malformed: ") + e.what());
    }
    out += '\n';
  }
  return out;
}

}  // namespace lockstep::cli
