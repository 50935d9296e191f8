// `lockstep health`: the fleet's GPUs and nodes by infrastructure failures in a window, with
// their history (bad actors first), and `--clear SERIAL|UUID|NODE` for operators
// (docs/health.md, "Bad actors").
#include <CLI/CLI.hpp>
#include <cstdio>
#include <ctime>
#include <iostream>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/format/field_format.h"
#include "client/api_client.h"
#include "common/duration.h"

namespace lockstep::cli {
namespace {

std::string Stamp(long long t) {
  if (t <= 0) return "-";
  std::time_t tt = static_cast<std::time_t>(t);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", std::localtime(&tt));
  return buf;
}

void PrintFailures(const nlohmann::json& failures, std::size_t last) {
  const std::size_t from = failures.size() > last ? failures.size() - last : 0;
  for (std::size_t i = from; i < failures.size(); ++i) {
    const nlohmann::json& f = failures[i];
    std::string where = JStr(f, "host");
    if (f.contains("gpu")) where += " GPU " + std::to_string(f.value("gpu", -1));
    std::printf("    %s  %-16s %s%s\n", Stamp(f.value("time", 0ll)).c_str(), where.c_str(),
                JStr(f, "what").c_str(),
                f.contains("job_id") ? (" (job " + std::to_string(f.value("job_id", 0ull)) + ")").c_str()
                                     : "");
  }
}

void PrintReport(const nlohmann::json& r, bool history) {
  std::printf("%-20s %-14s %-10s %8s  %s\n", "GPU (serial)", "HOST", "STATE", "FAILURES",
              "LAST");
  for (const nlohmann::json& g : r["gpus"]) {
    const std::string serial = JStr(g, "serial").empty() ? JStr(g, "uuid") : JStr(g, "serial");
    const nlohmann::json& failures = g["failures"];
    std::string last = failures.empty() ? "-" : JStr(failures.back(), "what");
    std::printf("%-20s %-14s %-10s %8zu  %s\n", serial.c_str(),
                (JStr(g, "host") + ":" + std::to_string(g.value("index", -1))).c_str(),
                g.value("excluded", false) ? "EXCLUDED" : "ok",
                g.value("failures_in_window", std::size_t{0}), last.c_str());
    if (history && g["hosts"].size() > 1) {
      std::string hosts;
      for (const auto& h : g["hosts"]) hosts += (hosts.empty() ? "" : ",") + h.get<std::string>();
      std::printf("    seen in %s\n", hosts.c_str());
    }
    if (history) PrintFailures(failures, 10);
  }
  std::printf("\n%-20s %-10s %8s  %s\n", "NODE", "DRAINED", "FAILURES", "REASON");
  for (const nlohmann::json& n : r["nodes"]) {
    std::printf("%-20s %-10s %8zu  %s\n", JStr(n, "name").c_str(),
                n.value("drained_by_health", false) ? "health" : "-",
                n.value("failures_in_window", std::size_t{0}), JStr(n, "reason").c_str());
    if (history) PrintFailures(n["failures"], 10);
  }
}

}  // namespace

int RunHealth(int argc, char** argv) {
  CLI::App app{"GPUs and nodes by infrastructure failures, with their history", "lockstep health"};
  bool json = false, history = false;
  std::string window = "7-00:00:00", clear;
  app.add_flag("--json", json, "the API's JSON");
  app.add_flag("--history", history, "each GPU's and node's last failures");
  app.add_option("--window", window,
                 "count failures within this long, a Slurm time (default 7-00:00:00; 0: all)");
  app.add_option("--clear", clear,
                 "operators: clear a bad-actor GPU (serial or UUID) or a node's health drain");
  CLI11_PARSE(app, argc, argv);
  client::ApiClient api;
  if (!clear.empty()) {
    Result<nlohmann::json> r = api.Post("/api/v1/health/clear", {{"what", clear}});
    if (!r.ok()) return Fail("lockstep health", r.status());
    std::printf("%s: cleared\n", clear.c_str());
    return 0;
  }
  Seconds seconds = 0;
  if (window != "0") {
    Result<Seconds> w = ParseSlurmDuration(window);
    if (!w.ok()) return Fail("lockstep health", "--window: " + w.status().message());
    seconds = *w;
  }
  Result<nlohmann::json> r = api.Get("/api/v1/health?window=" + std::to_string(seconds));
  if (!r.ok()) return Fail("lockstep health", r.status());
  if (json) {
    std::cout << r->dump(2) << "\n";
    return 0;
  }
  PrintReport(*r, history);
  return 0;
}

}  // namespace lockstep::cli
