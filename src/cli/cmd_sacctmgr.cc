// sacctmgr: lockstep's accounts, users, associations and QoS (docs/commands.md, "sacctmgr").
// list/show read GET /api/v1/accounts and print it (src/cli/format/sacctmgr.h); add, modify
// and delete send one change to POST /api/v1/accounts, which lockstepd checks, stores and
// applies to scheduling. As Slurm's, a change is shown first and committed after "y" to the
// prompt, or at once with -i.
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <sys/select.h>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/format/sacctmgr.h"
#include "cli/slurm/slurm_options.h"

namespace lockstep::cli {
namespace {

constexpr const char* kCommand = "sacctmgr";

struct SacctmgrOptions {
  bool immediate = false, quiet = false;
  SacctmgrList list;
};

std::vector<SlurmOption> SacctmgrOptionTable(SacctmgrOptions& o) {
  auto flag = [](bool& b) {
    return [&b](const std::string&) {
      b = true;
      return Status::Ok();
    };
  };
  auto parsable = [&o](SacctmgrList::Parsable p) {
    return [&o, p](const std::string&) {
      o.list.parsable = p;
      return Status::Ok();
    };
  };
  auto ignore = [](const std::string&) { return Status::Ok(); };
  return {
      {"immediate", 'i', OptArg::kNone, flag(o.immediate), "commit changes immediately without asking"},
      {"noheader", 'n', OptArg::kNone, flag(o.list.noheader), "don't print header lines"},
      {"parsable", 'p', OptArg::kNone, parsable(SacctmgrList::Parsable::kWithTrailing),
       "output is '|' delimited with a '|' at the end"},
      {"parsable2", 'P', OptArg::kNone, parsable(SacctmgrList::Parsable::kNoTrailing),
       "output is '|' delimited without a '|' at the end"},
      {"quiet", 'Q', OptArg::kNone, flag(o.quiet), "print no messages other than error messages"},
      {"readonly", 'r', OptArg::kNone, ignore, "cannot modify accounting data (lockstepd checks who may)"},
      {"associations", 's', OptArg::kNone, flag(o.list.with_assoc), "show associations with the entity"},
      {"verbose", 'v', OptArg::kNone, ignore, "enable detailed logging (no effect)"},
      {"version", 'V', OptArg::kNone, ignore, "display the version"},
  };
}

// The words after the command and entity: names, WithAssoc, Where/Set and KEY=VALUE.
struct Words {
  std::vector<std::string> names;
  std::map<std::string, std::string> where, set;
  std::vector<std::string> format;
  bool with_assoc = false;
};

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::vector<std::string> Split(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    if (comma > start) out.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

Result<Words> ReadWords(const std::vector<std::string>& words, bool conditions_first) {
  Words w;
  bool in_set = !conditions_first;
  for (const std::string& word : words) {
    const std::string lw = Lower(word);
    if (lw == "where") {
      in_set = false;
    } else if (lw == "set") {
      in_set = true;
    } else if (lw == "withassoc" || lw == "withassocs" || lw == "withassociations") {
      w.with_assoc = true;
    } else if (std::size_t eq = word.find('='); eq != std::string::npos && eq > 0) {
      std::string key = Lower(word.substr(0, eq));
      const std::string value = word.substr(eq + 1);
      if (key.back() == '+' || key.back() == '-')
        return InvalidArgument("Unknown option: " + word + " (+= and -= are not supported; give the whole list)");
      if (key == "format") {
        for (const std::string& f : Split(value)) w.format.push_back(f);
      } else {
        (in_set ? w.set : w.where)[key] = value;
      }
    } else {
      w.names.push_back(word);
    }
  }
  return w;
}

// Slurm's commit_check: the question, 30 seconds for an answer, "y" commits.
bool Confirm() {
  std::printf("Would you like to commit changes? (You have 30 seconds to decide)\n(N/y): ");
  std::fflush(stdout);
  fd_set in;
  FD_ZERO(&in);
  FD_SET(STDIN_FILENO, &in);
  timeval wait{30, 0};
  if (::select(STDIN_FILENO + 1, &in, nullptr, nullptr, &wait) <= 0) {
    std::printf("\n");
    return false;
  }
  std::string answer;
  if (!std::getline(std::cin, answer)) answer.clear();
  return !answer.empty() && (answer[0] == 'y' || answer[0] == 'Y');
}

void PrintLines(const nlohmann::json& reply) {
  for (const nlohmann::json& l : reply.value("lines", nlohmann::json::array()))
    std::printf("%s\n", l.get<std::string>().c_str());
}

int Change(const std::string& action, const std::string& entity, const Words& w,
           const SacctmgrOptions& o) {
  nlohmann::json request = {{"action", action}, {"entity", entity}, {"names", w.names},
                            {"where", w.where}, {"set", w.set}};
  client::ApiClient api;
  // First what it would do, then the commit: Slurm shows the change before asking.
  request["commit"] = false;
  Result<nlohmann::json> preview = api.Post("/api/v1/accounts", request);
  if (!preview.ok()) {
    std::fprintf(stderr, " %s: %s\n", action == "add" ? "Problem adding" : "Error with request",
                 preview.status().message().c_str());
    return 1;
  }
  if (!o.quiet) PrintLines(*preview);
  if (!preview->value("changed", false)) return 1;
  if (!o.immediate && !Confirm()) {
    std::printf(" Changes Discarded\n");
    return 0;
  }
  request["commit"] = true;
  Result<nlohmann::json> done = api.Post("/api/v1/accounts", request);
  if (!done.ok()) {
    std::fprintf(stderr, " Error with request: %s\n", done.status().message().c_str());
    return 1;
  }
  return 0;
}

int List(const std::string& entity_word, const Words& w, SacctmgrOptions& o) {
  if (!ParseSacctmgrEntity(entity_word, &o.list.entity))
    return Fail(kCommand, "Unknown list entity '" + entity_word + "' (account, user, association, qos, cluster)");
  o.list.with_assoc = o.list.with_assoc || w.with_assoc;
  o.list.format = w.format;
  o.list.names = w.names;
  for (const auto& [key, value] : w.where) {
    std::string k = key;
    if (k == "accounts" || k == "users" || k == "names" || k == "clusters") k.pop_back();
    for (const std::string& v : Split(value)) o.list.where[k].push_back(v);
  }
  if (!w.set.empty()) return Fail(kCommand, "list takes no 'set' options");
  client::ApiClient api;
  Result<nlohmann::json> tables = api.Get("/api/v1/accounts");
  if (!tables.ok()) return Fail(kCommand, tables.status());
  Result<std::string> text = FormatSacctmgrList(*tables, o.list);
  if (!text.ok()) return Fail(kCommand, text.status());
  std::fwrite(text->data(), 1, text->size(), stdout);
  return 0;
}

}  // namespace

int RunSacctmgr(int argc, char** argv) {
  SacctmgrOptions o;
  ParsedCommandLine cl = ParseSlurmCommandLine(kCommand, argc, argv, SacctmgrOptionTable(o),
                                               "[OPTIONS] COMMAND ENTITY [SPECS...]");
  if (cl.exit_code) return *cl.exit_code;
  const std::vector<std::string>& words = cl.operands;
  if (words.empty()) return Fail(kCommand, "no command given (list, show, add, modify, delete)");
  const std::string command = Lower(words[0]);
  if (command == "help") return RunSacctmgr(2, std::vector<char*>{argv[0], const_cast<char*>("--help")}.data());
  if (command == "version") {
    std::printf("slurm 22.05 (lockstep)\n");
    return 0;
  }
  if (words.size() < 2) return Fail(kCommand, "no entity given after '" + words[0] + "'");
  const std::string entity = Lower(words[1]);
  const std::vector<std::string> rest(words.begin() + 2, words.end());
  const bool list = command == "list" || command == "show";
  Result<Words> w = ReadWords(rest, command != "add" && command != "create");
  if (!w.ok()) return Fail(kCommand, w.status());
  if (list) return List(entity, *w, o);
  std::string action;
  if (command == "add" || command == "create") action = "add";
  else if (command == "modify" || command == "update") action = "modify";
  else if (command == "delete" || command == "remove") action = "delete";
  else return Fail(kCommand, "Invalid keyword: " + words[0]);
  SacctmgrList::Entity e;
  if (!ParseSacctmgrEntity(entity, &e) || e == SacctmgrList::Entity::kAssociation ||
      e == SacctmgrList::Entity::kCluster)
    return Fail(kCommand, "Unknown entity '" + words[1] + "' for " + command + " (account, user or qos)");
  const std::string canonical = e == SacctmgrList::Entity::kAccount ? "account"
                                : e == SacctmgrList::Entity::kUser  ? "user"
                                                                    : "qos";
  if (!w->format.empty()) return Fail(kCommand, "format= is for list and show");
  return Change(action, canonical, *w, o);
}

}  // namespace lockstep::cli
