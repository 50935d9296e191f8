#include "reservation/reservation_words.h"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "common/duration.h"
#include "jobspec/sbatch.h"
#include "reservation/reservation.h"

namespace lockstep::reservation {
namespace {

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Slurm's scontrol takes any abbreviation of a key down to a least length (its
// xstrncasecmp(tag, "Nodes", MAX(taglen, 5))).
struct Key {
  const char* name;
  std::size_t least;
};
constexpr Key kKeys[] = {
    {"reservationname", 1}, {"starttime", 1}, {"endtime", 1}, {"duration", 1},
    {"nodes", 5},           {"nodecnt", 5},   {"partitionname", 1}, {"users", 1},
    {"accounts", 1},        {"flags", 2},
};

// The key `tag` abbreviates, or "" when none.
std::string KeyOf(const std::string& tag) {
  const std::string t = Lower(tag);
  for (const Key& k : kKeys) {
    const std::string full = k.name;
    if (t.size() >= k.least && t.size() <= full.size() && full.compare(0, t.size(), t) == 0)
      return full;
  }
  return "";
}

std::vector<std::string> Names(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream in(list);
  for (std::string n; std::getline(in, n, ',');)
    if (!n.empty()) out.push_back(n);
  return out;
}

// Flags=MAINT,IGNORE_JOBS,PURGE_COMP=10: the bits, and PURGE_COMP's time (minutes or Slurm's
// duration; 5 minutes when absent).
Status ReadFlags(const std::string& text, ReservationWords& w) {
  static const std::pair<const char*, Flag> kNames[] = {
      {"maint", kMaint},     {"ignore_jobs", kIgnoreJobs}, {"daily", kDaily},
      {"weekly", kWeekly},   {"flex", kFlex},              {"overlap", kOverlap},
      {"purge_comp", kPurgeComp}, {"spec_nodes", kSpecNodes}, {"all_nodes", kAllNodes},
  };
  for (const std::string& item : Names(text)) {
    std::string name = Lower(item), value;
    if (std::size_t eq = name.find('='); eq != std::string::npos) {
      value = item.substr(eq + 1);
      name.resize(eq);
    }
    auto it = std::find_if(std::begin(kNames), std::end(kNames),
                           [&](const auto& p) { return name == p.first; });
    if (it == std::end(kNames)) return InvalidArgument("Error parsing flags " + text + ".");
    w.flags |= it->second;
    if (it->second == kPurgeComp && !value.empty()) {
      Result<Seconds> t = ParseSlurmDuration(value);
      if (!t.ok() || *t <= 0) return InvalidArgument("Error parsing flags " + text + ".");
      w.purge_comp = *t;
    } else if (!value.empty()) {
      return InvalidArgument("Error parsing flags " + text + ".");
    }
  }
  return Status::Ok();
}

Status ReadOne(const std::string& key, char op, const std::string& value, const std::string& word,
               Time now, ReservationWords& w) {
  const ListOp list_op = op == '+' ? ListOp::kAdd : op == '-' ? ListOp::kRemove : ListOp::kSet;
  if (op != 0 && key != "users" && key != "accounts" && key != "flags")
    return InvalidArgument("Unknown parameter " + word + ".");
  if (key == "reservationname") {
    if (value.empty() || value.find_first_of(" ,=/") != std::string::npos)
      return InvalidArgument("Invalid reservation name " + word + ".");
    w.name = value;
  } else if (key == "starttime" || key == "endtime") {
    Result<Time> t = jobspec::ParseSlurmTime(value, now);
    if (!t.ok())
      return InvalidArgument(std::string("Invalid ") + (key == "starttime" ? "start" : "end") +
                             " time " + word + ".");
    (key == "starttime" ? w.start : w.end) = *t;
  } else if (key == "duration") {
    Result<Seconds> d = ParseSlurmDuration(value);
    if (!d.ok() || *d <= 0) return InvalidArgument("Invalid duration " + word + ".");
    w.duration = *d;
  } else if (key == "nodes") {
    w.nodes = value;
  } else if (key == "nodecnt") {
    char* end = nullptr;
    const long long n = std::strtoll(value.c_str(), &end, 10);
    if (value.empty() || *end || n <= 0 || n > 1'000'000)
      return InvalidArgument("Invalid node count " + word + ".");
    w.node_count = static_cast<std::uint32_t>(n);
  } else if (key == "partitionname") {
    w.partition = value;
  } else if (key == "users" || key == "accounts") {
    (key == "users" ? w.users : w.accounts) = ListChange{list_op, Names(value)};
  } else if (key == "flags") {
    w.flags_op = list_op;
    return ReadFlags(value, w);
  }
  return Status::Ok();
}

}  // namespace

Result<ReservationWords> ReadReservationWords(const std::vector<std::string>& words, Time now,
                                              const std::string& verb) {
  ReservationWords w;
  const std::string tail = "  No reservation " + verb + ".";
  for (const std::string& word : words) {
    const std::size_t eq = word.find('=');
    if (eq == std::string::npos || eq == 0)
      return InvalidArgument("Misformatted parameter '" + word +
                             "', most options have a parameter after '='." + tail);
    std::string tag = word.substr(0, eq);
    char op = 0;
    if (tag.back() == '+' || tag.back() == '-') {
      op = tag.back();
      tag.pop_back();
    }
    const std::string key = KeyOf(tag);
    if (key.empty()) return InvalidArgument("Unknown parameter " + word + "." + tail);
    Status s = ReadOne(key, op, word.substr(eq + 1), word, now, w);
    if (!s.ok()) return InvalidArgument(s.message() + tail);
  }
  return w;
}

}  // namespace lockstep::reservation
