#include "cli/slurm/long_format.h"

#include <cctype>
#include <string_view>
#include <utility>

namespace lockstep::cli {
namespace {

using Names = std::pair<std::string_view, char>;

// squeue(1) -O types and the -o letter that prints the same thing.
constexpr Names kSqueueTypes[] = {
    {"account", 'a'},        {"arrayjobid", 'F'},     {"arraytaskid", 'K'},
    {"command", 'o'},        {"comment", 'k'},        {"cpus-per-task", 'c'},
    {"dependency", 'E'},     {"endtime", 'e'},        
    {"feature", 'f'},        {"groupid", 'G'},        {"groupname", 'g'},
    {"jobarrayid", 'i'},     {"jobid", 'A'},          {"licenses", 'W'},
    {"minmemory", 'm'},      {"mincpus", 'c'},        {"name", 'j'},
    {"nice", 'y'},           {"nodelist", 'N'},       {"numcpus", 'C'},
    {"numnodes", 'D'},       {"numtasks", 'C'},       {"oversubscribe", 'h'},
    {"partition", 'P'},      {"priority", 'p'},       {"prioritylong", 'Q'},
    {"qos", 'q'},            {"reason", 'r'},         {"reasonlist", 'R'},
    {"reqnodes", 'n'},       {"excnodes", 'x'},       {"reservation", 'v'},
    {"schednodes", 'Y'},     {"starttime", 'S'},      {"state", 'T'},
    {"statecompact", 't'},   {"submittime", 'V'},     {"timeleft", 'L'},
    {"timelimit", 'l'},      {"timeused", 'M'},       {"tres-per-node", 'b'},
    {"userid", 'U'},         {"username", 'u'},       {"wckey", 'w'},
    {"workdir", 'Z'},        {"batchhost", 'B'},
};

// sinfo(1) -O types.
constexpr Names kSinfoTypes[] = {
    {"all", 'A'},           {"allocmem", 'e'},       {"available", 'a'},
    {"cpus", 'c'},          {"cpusload", 'O'},       {"cpusstate", 'C'},
    {"disk", 'd'},          {"features", 'f'},       {"features_act", 'b'},
    {"freemem", 'e'},       {"gres", 'G'},           {"groups", 'g'},
    {"limitsenforced", 'k'},
    {"maxcpuspernode", 'B'}, {"memory", 'm'},        
    {"nodeai", 'A'},        {"nodeaiot", 'F'},       
    {"nodelist", 'N'},      {"nodes", 'D'},          {"oversubscribe", 'h'},
    {"partition", 'R'},     {"partitionname", 'R'},  
       {"priorityjobfactor", 'I'}, {"prioritytier", 'p'},
    {"reason", 'E'},        {"root", 'r'},           {"size", 's'},
    {"statecompact", 't'},  {"statelong", 'T'},      {"time", 'l'},
    {"timestamp", 'H'},     {"user", 'u'},           {"userlong", 'U'},
           {"weight", 'w'},         {"defaulttime", 'L'},
    {"reservation", 'i'},           
           {"socketcorethread", 'z'},
};

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

template <std::size_t N>
Result<std::string> Convert(const std::string& spec, const Names (&types)[N],
                            std::string_view what) {
  std::string out;
  std::size_t start = 0;
  while (start < spec.size()) {
    std::size_t comma = spec.find(',', start);
    std::string_view item = std::string_view(spec).substr(
        start, comma == std::string::npos ? std::string::npos : comma - start);
    start = comma == std::string::npos ? spec.size() : comma + 1;
    if (item.empty()) continue;
    std::size_t colon = item.find(':');
    std::string type = Lower(item.substr(0, colon));
    std::string size = "20";
    bool right = false;
    if (colon != std::string_view::npos) {
      std::string_view s = item.substr(colon + 1);
      if (!s.empty() && s.front() == '.') {
        right = true;
        s.remove_prefix(1);
      }
      std::size_t digits = 0;
      while (digits < s.size() && std::isdigit(static_cast<unsigned char>(s[digits]))) ++digits;
      if (digits > 0) size = std::string(s.substr(0, digits));
    }
    char letter = 0;
    for (const auto& [name, l] : types)
      if (name == type) letter = l;
    if (letter == 0)
      return InvalidArgument("Invalid " + std::string(what) +
                             " format specification: " + std::string(item.substr(0, colon)));
    out += "%" + std::string(right ? "." : "") + size + letter;
  }
  if (out.empty()) return InvalidArgument("Invalid " + std::string(what) + " format specification: ");
  return out;
}

}  // namespace

Result<std::string> SqueueLongFormat(const std::string& spec) {
  return Convert(spec, kSqueueTypes, "job");
}

Result<std::string> SinfoLongFormat(const std::string& spec) {
  return Convert(spec, kSinfoTypes, "node");
}

}  // namespace lockstep::cli
