// `lockstep policy`: the admission policy's audit log (operators) and what it would decide of a
// submission or a pod without making it (docs/policy.md).
//   lockstep policy log [-n LINES] [--json]
//   lockstep policy test [--as USER] -- sbatch [OPTIONS] SCRIPT
//   lockstep policy test [--as USER] --pod FILE   (a Pod as YAML or JSON)
#include <yaml-cpp/yaml.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <iterator>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/format/field_format.h"
#include "client/api_client.h"
#include "jobspec/sbatch.h"

namespace lockstep::cli {
namespace {

constexpr const char* kCommand = "lockstep policy";

int FailUsage(const char* command, const char* message) {
  std::fprintf(stderr, "%s: error: %s\n", command, message);
  return 2;
}

// YAML (a superset of JSON) to JSON, as kubectl reads a manifest.
nlohmann::json YamlToJson(const YAML::Node& n) {
  if (n.IsMap()) {
    nlohmann::json o = nlohmann::json::object();
    for (const auto& kv : n) o[kv.first.as<std::string>()] = YamlToJson(kv.second);
    return o;
  }
  if (n.IsSequence()) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& item : n) a.push_back(YamlToJson(item));
    return a;
  }
  if (!n.IsScalar()) return nullptr;
  const std::string& s = n.Scalar();
  if (n.Tag() == "!") return s;  // quoted: a string
  if (s == "true" || s == "false") return s == "true";
  nlohmann::json number = nlohmann::json::parse(s, nullptr, false);
  if (!number.is_discarded() && number.is_number()) return number;
  return s;
}

Result<nlohmann::json> ReadPod(const std::string& path) {
  Result<std::string> text = ReadTextFile(path);
  if (!text.ok()) return text.status();
  try {
    YAML::Node doc = YAML::Load(*text);
    nlohmann::json pod = YamlToJson(doc);
    if (!pod.is_object() || pod.value("kind", "") != "Pod")
      return InvalidArgument(path + ": not a Pod (kind: Pod)");
    return pod;
  } catch (const YAML::Exception& e) {
    return InvalidArgument(path + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
}

int PrintDecision(const nlohmann::json& d) {
  const bool allowed = JStr(d, "verdict") == "allow";
  std::printf("%s: %s%s\n", allowed ? "allowed" : "denied", JStr(d, "kind").c_str(),
              JStr(d, "user").empty() ? "" : (" of " + JStr(d, "user")).c_str());
  if (!JStr(d, "message").empty()) std::printf("  %s\n", JStr(d, "message").c_str());
  else if (!JStr(d, "rule").empty()) std::printf("  exempted by rule '%s'\n", JStr(d, "rule").c_str());
  for (const nlohmann::json& a : d.value("audited", nlohmann::json::array()))
    std::printf("  audit: %s\n", JStr(a, "message").c_str());
  return allowed ? 0 : 1;
}

int Log(std::size_t lines, bool json) {
  client::ApiClient api;
  Result<nlohmann::json> r = api.Get("/api/v1/policy/log?lines=" + std::to_string(lines));
  if (!r.ok()) return Fail(kCommand, r.status());
  for (const nlohmann::json& l : (*r)["lines"]) {
    if (json || !l.is_object()) {
      std::printf("%s\n", l.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
      continue;
    }
    std::printf("%s %-5s %-22s %-8s %-6s %s%s\n", JStr(l, "time").c_str(), JStr(l, "verdict").c_str(),
                JStr(l, "who").c_str(), JStr(l, "kind").c_str(), JStr(l, "operation").c_str(),
                JStr(l, "rule").empty() ? "-" : JStr(l, "rule").c_str(),
                JStr(l, "message").empty() ? "" : ("  " + JStr(l, "message")).c_str());
  }
  return 0;
}

int Test(const std::string& as, const std::string& pod_file, std::vector<std::string> command) {
  nlohmann::json body = nlohmann::json::object();
  if (!as.empty()) body["user"] = as;
  if (!pod_file.empty()) {
    if (!command.empty()) return FailUsage(kCommand, "name either --pod FILE or -- sbatch ...");
    Result<nlohmann::json> pod = ReadPod(pod_file);
    if (!pod.ok()) return FailOptions(kCommand, pod.status());
    body["pod"] = std::move(*pod);
  } else {
    if (command.empty() || (command[0] != "sbatch" && command[0] != "srun" && command[0] != "salloc"))
      return FailUsage(kCommand, "name --pod FILE, or a submission: -- sbatch|srun|salloc OPTIONS...");
    jobspec::SbatchInput in;
    in.args.assign(command.begin() + 1, command.end());
    in.env = Environment();
    in.cwd = CurrentDir();
    in.now = std::time(nullptr);
    in.read_file = ReadTextFile;
    // srun and salloc take a command, not a script: judged as the same options would be.
    if (command[0] != "sbatch") {
      in.args.insert(in.args.begin(), "--wrap=true");
      for (std::size_t i = 1; i < in.args.size(); ++i)
        if (!in.args[i].empty() && in.args[i][0] != '-') {
          in.args.resize(i);
          break;
        }
    }
    in.read_stdin = []() -> Result<std::string> {
      return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    };
    Result<jobspec::JobSpec> job = jobspec::ParseSbatch(in);
    if (!job.ok()) return FailOptions(kCommand, job.status());
    body["job"] = nlohmann::json::parse(jobspec::JobSpecToJson(*job));
  }
  client::ApiClient api;
  Result<nlohmann::json> r = api.Post("/api/v1/policy/test", body);
  if (!r.ok()) return Fail(kCommand, r.status());
  return PrintDecision(*r);
}

}  // namespace

int RunPolicy(int argc, char** argv) {
  CLI::App app{"The admission policy: its audit log, and what it would decide", kCommand};
  app.require_subcommand(1);
  CLI::App* log = app.add_subcommand("log", "the audit log's last lines (operators)");
  std::size_t lines = 100;
  bool json = false;
  log->add_option("-n,--lines", lines, "how many")->check(CLI::Range(1, 100000));
  log->add_flag("--json", json, "one JSON object a line, as logged");
  CLI::App* test = app.add_subcommand("test", "what the policy would decide, nothing submitted");
  std::string as, pod;
  std::vector<std::string> command;
  test->add_option("--as", as, "judge it as this user's (operators; default: you)");
  test->add_option("--pod", pod, "a Pod manifest (YAML or JSON) instead of a submission");
  test->footer("  -- sbatch|srun|salloc OPTIONS [SCRIPT]   the submission to judge");
  // Everything after "--" is the submission, kept from CLI11 (its options are sbatch's).
  int own = argc;
  for (int i = 1; i < argc; ++i)
    if (std::string_view(argv[i]) == "--") {
      own = i;
      command.assign(argv + i + 1, argv + argc);
      break;
    }
  CLI11_PARSE(app, own, argv);
  if (log->parsed()) return Log(lines, json);
  return Test(as, pod, std::move(command));
}

}  // namespace lockstep::cli
