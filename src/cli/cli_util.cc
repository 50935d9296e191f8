#include "cli/cli_util.h"

#include <grp.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include "cli/format/field_format.h"
#include "cli/slurm/slurm_options.h"
#include "jobspec/sbatch.h"

extern char** environ;

namespace lockstep::cli {

std::map<std::string, std::string> Environment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string kv = *e;
    std::size_t eq = kv.find('=');
    // A bearer token stays with its user: never in a job's environment or lockstepd's store.
    if (eq != std::string::npos && kv.compare(0, eq, "LOCKSTEP_TOKEN") != 0)
      env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return env;
}

std::string CurrentDir() {
  char buf[4096];
  return ::getcwd(buf, sizeof buf) ? std::string(buf) : std::string("/");
}

std::vector<std::string> Args(int argc, char** argv) {
  return std::vector<std::string>(argv + 1, argv + argc);
}

std::string SubmitLine(int argc, char** argv) {
  std::string line;
  for (int i = 0; i < argc; ++i) line += (i == 0 ? "" : " ") + std::string(argv[i]);
  return line;
}

int Fail(const std::string& command, const std::string& message) {
  // Parsers name the command themselves ("sbatch: train.sbatch line 4: ..."): say it once.
  std::string text =
      message.rfind(command + ": ", 0) == 0 ? message.substr(command.size() + 2) : message;
  // Messages may quote what a user wrote (a partition, a job name): escaped, one line.
  std::fprintf(stderr, "%s: error: %s\n", command.c_str(), EscapeControl(text).c_str());
  return 1;
}

int Fail(const std::string& command, const Status& status) {
  return Fail(command, status.message());
}

void PrintOptionWarnings(const std::vector<std::string>& warnings) {
  for (const std::string& w : warnings) std::fprintf(stderr, "%s\n", w.c_str());
}

int FailOptions(const std::string& command, const Status& status) {
  std::string text = status.message();
  if (text.rfind(command + ": ", 0) == 0) text = text.substr(command.size() + 2);
  // salloc reads srun's options (ParseSrunArgs), whose messages name srun.
  if (command == "salloc" && text.rfind("srun: ", 0) == 0) text = text.substr(6);
  const bool getopt_words = text.rfind("unrecognized option", 0) == 0 ||
                            text.rfind("invalid option", 0) == 0 || text.rfind("option '", 0) == 0;
  if (!getopt_words) {
    // Slurm exits 255 for a bad option value and 1 for a script it cannot use.
    // A name the cluster does not define (--reservation) is a refused submission: 1, as Slurm's,
    // which salloc words its own way.
    constexpr std::string_view kUnable = "Unable to allocate resources: ";
    const bool refused = text.find("batch script") != std::string::npos ||
                         text.find("submission failed: ") != std::string::npos ||
                         text.find(kUnable) != std::string::npos;
    if (command == "salloc" && text.rfind(kUnable, 0) == 0)
      text = "Job submit/allocate failed: " + text.substr(kUnable.size());
    Fail(command, text);
    return refused ? 1 : 255;
  }
  std::fprintf(stderr, "%s: %s\nTry \"%s --help\" for more information\n", command.c_str(),
               EscapeControl(text).c_str(), command.c_str());
  return 255;
}

std::optional<int> SbatchHelpRequested(const std::vector<std::string>& args,
                                       std::string_view prog) {
  for (const std::string& a : args) {
    if (a.empty() || a[0] != '-' || a == "--") break;  // the script or command begins
    if (a == "--help" || a == "-h") {
      std::fputs(jobspec::SbatchHelpText(prog).c_str(), stdout);
      return 0;
    }
    if (a == "--usage") {
      std::fputs(jobspec::SbatchUsageText(prog).c_str(), stdout);
      return 0;
    }
    if (a == "-V" || a == "--version") {
      std::fputs(SlurmVersionText().c_str(), stdout);
      return 0;
    }
  }
  return std::nullopt;
}

Result<std::string> ReadTextFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("unable to open file " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string GroupName(unsigned gid) {
  static std::unordered_map<unsigned, std::string> names;  // main thread only
  auto [it, inserted] = names.try_emplace(gid);
  if (inserted)
    if (const group* g = ::getgrgid(static_cast<gid_t>(gid))) it->second = g->gr_name;
  return it->second;
}

}  // namespace lockstep::cli
