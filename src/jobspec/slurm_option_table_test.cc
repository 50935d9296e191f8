// Every option spelling of Slurm 22.05's sbatch, srun and salloc (bench/peers/options/*.txt, the
// table bench/peers/options_side_by_side.sh runs against the Slurm peer) through lockstep's
// parser: each is accepted, with the value lockstep honours where it honours one, and the one
// that names what lockstep defines none of (--licenses) refused in Slurm's words; a reservation's
// name is checked by lockstepd at submission.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "jobspec/sbatch.h"

namespace lockstep::jobspec {
namespace {

constexpr Time kNow = 1764403200;  // 2025-11-29T08:00:00Z

struct OptionLine {
  std::string text;                // as in the file
  std::string spelling;            // "--time", "-t"
  std::vector<std::string> words;  // with the placeholders filled
  bool no_command = false;         // {nocmd}: nothing after the options
};

// The placeholders of bench/peers/options/README.md, as this test fills them.
std::string Fill(std::string word) {
  static const std::map<std::string, std::string> kValues = {
      {"{partition}", "gpu"},      {"{node}", "node1"},
      {"{node2}", "node4"},        {"{user}", "alice"},
      {"{account}", "physics"},    {"{gid}", "100"},
      {"{qos}", "normal"},         {"{cluster}", "lockstep"},
      {"{dir}", "/work/scratch"},  {"{file}", "/work/f"},
      {"{envfile}", "/work/env"},  {"{nodefile}", "/work/nodes"},
      {"{multiprog}", "/work/mp"}, {"{feature}", "optcheck"},
      {"{license}", "optcheck"},   {"{reservation}", "optcheck"},
      {"{wckey}", "none"},         {"{mcs}", "none"},
      {"{running_job}", "42"},     {"{job}", "41"},
  };
  for (const auto& [key, value] : kValues) {
    for (std::size_t at = word.find(key); at != std::string::npos; at = word.find(key))
      word.replace(at, key.size(), value);
  }
  return word;
}

std::vector<OptionLine> ReadTable(const std::string& command) {
  std::ifstream in(std::string(LOCKSTEP_OPTIONS_DIR) + "/" + command + ".txt");
  EXPECT_TRUE(in) << "no table for " << command;
  std::vector<OptionLine> lines;
  std::string text;
  while (std::getline(in, text)) {
    if (text.empty() || text[0] == '#') continue;
    OptionLine line{text, "", {}, false};
    std::istringstream words(text);
    for (std::string w; words >> w;) {
      if (w == "{nocmd}") {
        line.no_command = true;
        continue;
      }
      line.words.push_back(Fill(w));
    }
    line.spelling = line.words.front().substr(0, line.words.front().find('='));
    lines.push_back(std::move(line));
  }
  return lines;
}

// What lockstep does with the value of the options it honours, by spelling.
using Check = std::function<bool(const JobSpec&)>;
const std::map<std::string, Check>& Honoured() {
  static const std::map<std::string, Check> kChecks = [] {
    std::map<std::string, Check> m;
    auto both = [&m](const char* a, const char* b, Check c) { m[a] = c, m[b] = c; };
    both("--job-name", "-J", [](const JobSpec& s) { return s.name == "optcheck"; });
    both("--partition", "-p", [](const JobSpec& s) { return s.partition == "gpu"; });
    both("--account", "-A", [](const JobSpec& s) { return s.account == "physics"; });
    both("--qos", "-q", [](const JobSpec& s) { return s.qos == "normal"; });
    both("--nodes", "-N", [](const JobSpec& s) { return s.min_nodes == 1; });
    both("--ntasks", "-n", [](const JobSpec& s) { return s.ntasks == 1; });
    both("--cpus-per-task", "-c", [](const JobSpec& s) { return s.cpus_per_task == 2; });
    both("--gpus", "-G", [](const JobSpec& s) { return s.gpus == 1; });
    both("--time", "-t", [](const JobSpec& s) { return s.time_limit == 600; });
    both("--output", "-o", [](const JobSpec& s) { return s.output == "/dev/null"; });
    both("--error", "-e", [](const JobSpec& s) { return s.error == "/dev/null"; });
    both("--array", "-a", [](const JobSpec& s) { return s.array && s.array->text == "1-2"; });
    both("--dependency", "-d", [](const JobSpec& s) { return s.dependencies.size() == 1; });
    both("--hold", "-H", [](const JobSpec& s) { return s.hold; });
    both("--chdir", "-D", [](const JobSpec& s) { return s.work_dir == "/work/scratch"; });
    both("--constraint", "-C", [](const JobSpec& s) { return s.constraint == "optcheck"; });
    both("--nodelist", "-w", [](const JobSpec& s) { return s.nodelist == "node1"; });
    both("--exclude", "-x", [](const JobSpec& s) { return s.exclude == "node4"; });
    both("--nodefile", "-F", [](const JobSpec& s) { return s.nodelist == "node1"; });
    m["--cpus-per-gpu"] = [](const JobSpec& s) { return s.cpus_per_gpu == 2; };
    m["--export-file"] = [](const JobSpec& s) { return s.environment.count("OPTCHECK") == 1; };
    m["--ntasks-per-node"] = [](const JobSpec& s) { return s.ntasks_per_node == 1; };
    m["--mem"] = [](const JobSpec& s) { return s.mem_mb == 1024; };
    m["--mem-per-cpu"] = [](const JobSpec& s) { return s.mem_per_cpu_mb == 1024; };
    m["--mem-per-gpu"] = [](const JobSpec& s) { return s.mem_per_gpu_mb == 1024; };
    m["--gpus-per-node"] = [](const JobSpec& s) { return s.gpus_per_node == 1; };
    m["--gpus-per-task"] = [](const JobSpec& s) { return s.gpus_per_task == 1; };
    m["--gres"] = [](const JobSpec& s) { return s.gpus_per_node == 1; };
    m["--requeue"] = [](const JobSpec& s) { return s.requeue == true; };
    m["--no-requeue"] = [](const JobSpec& s) { return s.requeue == false; };
    m["--exclusive"] = [](const JobSpec& s) { return s.exclusive; };
    m["--export"] = [](const JobSpec& s) { return s.export_mode == "ALL"; };
    m["--switches"] = [](const JobSpec& s) { return s.max_switches == 1; };
    m["--nice"] = [](const JobSpec& s) { return s.nice == 10; };
    m["--signal"] = [](const JobSpec& s) { return s.signal_number == 10 && s.signal_time == 60; };
    m["--parsable"] = [](const JobSpec& s) { return s.parsable; };
    m["--test-only"] = [](const JobSpec& s) { return s.test_only; };
    m["--reservation"] = [](const JobSpec& s) { return s.reservation == "optcheck"; };
    m["--wrap"] = [](const JobSpec& s) { return s.script.find("true") != std::string::npos; };
    return m;
  }();
  return kChecks;
}

// Slurm refuses these values too (no such license): the words of its refusal.
std::string SlurmRefusal(const std::string& spelling, const std::string& failed) {
  if (spelling == "--licenses" || spelling == "-L")
    return failed + ": Invalid license specification";
  return "";
}

// The files the placeholders {nodefile} and {envfile} name.
Result<std::string> ReadTableFile(const std::string& path) {
  if (path == "/work/nodes") return std::string("node1\n");
  if (path == "/work/env") return std::string("OPTCHECK=1\n");
  return NotFound(path + ": No such file or directory");
}

SbatchInput Input(std::vector<std::string> args) {
  SbatchInput in;
  in.args = std::move(args);
  in.cwd = "/work";
  in.now = kNow;
  in.read_file = ReadTableFile;
  return in;
}

TEST(SlurmOptionTable, SbatchAcceptsEverySpellingOfSlurm) {
  std::vector<OptionLine> lines = ReadTable("sbatch");
  ASSERT_GT(lines.size(), 120u);
  for (const OptionLine& line : lines) {
    if (line.spelling == "-V" || line.spelling == "--version") continue;  // the CLI's (golden)
    std::vector<std::string> args = line.words;
    args.push_back("--wrap");
    args.push_back("true");
    Result<JobSpec> spec = ParseSbatch(Input(args));
    const std::string refusal = SlurmRefusal(line.spelling, "Batch job submission failed");
    if (!refusal.empty()) {
      ASSERT_FALSE(spec.ok()) << line.text;
      EXPECT_EQ(spec.status().message(), "sbatch: " + refusal) << line.text;
      continue;
    }
    ASSERT_TRUE(spec.ok()) << line.text << ": " << spec.status().message();
    auto check = Honoured().find(line.spelling);
    if (check != Honoured().end()) {
      EXPECT_TRUE(check->second(*spec)) << line.text;
    }
  }
  // sbatch's -W is a flag (srun's takes seconds).
  Result<JobSpec> wait = ParseSbatch(Input({"-W", "--wrap", "true"}));
  ASSERT_TRUE(wait.ok()) << wait.status().message();
  EXPECT_TRUE(wait->wait);
}

// srun's own options are carried out by srun, which reads them from SrunParse::srun_options.
void CheckSrunTable(const std::string& command) {
  std::vector<OptionLine> lines = ReadTable(command);
  ASSERT_GT(lines.size(), 80u);
  for (const OptionLine& line : lines) {
    if (line.spelling == "-V" || line.spelling == "--version") continue;  // the CLI's (golden)
    std::vector<std::string> args = line.words;
    if (!line.no_command) args.push_back("true");
    Result<SrunParse> p = ParseSrunArgs(args, {}, "/work", kNow, ReadTableFile);
    const std::string refusal = SlurmRefusal(line.spelling, "Unable to allocate resources");
    if (!refusal.empty()) {
      ASSERT_FALSE(p.ok()) << command << " " << line.text;
      EXPECT_EQ(p.status().message(), "srun: " + refusal) << line.text;
      continue;
    }
    ASSERT_TRUE(p.ok()) << command << " " << line.text << ": " << p.status().message();
    auto check = Honoured().find(line.spelling);
    if (check != Honoured().end()) {
      EXPECT_TRUE(check->second(p->spec)) << command << " " << line.text;
    }
  }
}

TEST(SlurmOptionTable, SrunAcceptsEverySpellingOfSlurm) {
  CheckSrunTable("srun");
  Result<SrunParse> p =
      ParseSrunArgs({"--jobid=42", "--overlap", "-l", "--mpi=pmix", "true"}, {}, "/work", kNow);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->srun_options.at("jobid"), "42");
  EXPECT_EQ(p->srun_options.count("overlap"), 1u);
  EXPECT_EQ(p->srun_options.count("label"), 1u);
  // --bcast is srun's to carry out (cmd_srun.cc copies the program), without a warning.
  Result<SrunParse> bcast = ParseSrunArgs({"--bcast=/tmp/prog", "true"}, {}, "/work", kNow);
  ASSERT_TRUE(bcast.ok()) << bcast.status().message();
  EXPECT_EQ(bcast->srun_options.at("bcast"), "/tmp/prog");
  EXPECT_TRUE(bcast->spec.warnings.empty());
  bcast = ParseSrunArgs({"--bcast", "true"}, {}, "/work", kNow);
  ASSERT_TRUE(bcast.ok()) << bcast.status().message();
  EXPECT_EQ(bcast->srun_options.at("bcast"), "");
  EXPECT_EQ(bcast->command, std::vector<std::string>{"true"});
}

TEST(SlurmOptionTable, SallocAcceptsEverySpellingOfSlurm) {
  CheckSrunTable("salloc");
  Result<SrunParse> p = ParseSrunArgs({"--no-shell", "-N", "2"}, {}, "/work", kNow);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->srun_options.count("no-shell"), 1u);  // salloc leaves the allocation and exits
  EXPECT_EQ(p->spec.min_nodes, 2);
}

}  // namespace
}  // namespace lockstep::jobspec
