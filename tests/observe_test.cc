// Observability end to end (docs/observability.md): the metrics of a running lockstepd with
// known jobs, parsed by the Prometheus client library's own parser; Slurm's split endpoints and
// the metrics-only listener; sdiag's counts; the event stream, listed, followed and filtered.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <future>
#include <regex>
#include <set>

#include "client/api_client.h"
#include "tests/cluster_harness.h"

namespace lockstep::testing {
namespace {

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// Runs `command` through the shell; its stdout (and whether it exited 0).
std::pair<std::string, bool> Shell(const std::string& command) {
  std::string out;
  FILE* p = ::popen(command.c_str(), "r");
  if (!p) return {"", false};
  char buf[65536];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  return {out, ::pclose(p) == 0};
}

// The exposition as Prometheus' own parser reads it (tests/metrics/parse_exposition.py):
// {family: {"type", "samples": [[name, labels, value]]}}; a parse error fails the test.
nlohmann::json Parsed(const Cluster& c, const std::string& text) {
  const std::string file = c.dir() + "/scrape.txt";
  std::ofstream(file) << text;
  auto [json, ok] = Shell("/usr/bin/python3 " LOCKSTEP_SOURCE_DIR_FOR_TEST
                          "/tests/metrics/parse_exposition.py < " +
                          file);
  EXPECT_TRUE(ok) << "the Prometheus parser rejected the exposition:\n" << text;
  nlohmann::json j = nlohmann::json::parse(json, nullptr, false);
  return j.is_discarded() ? nlohmann::json::object() : j;
}

// The value of the sample `name` with exactly `labels` in `family`, or NaN when absent.
double Sample(const nlohmann::json& families, const std::string& family, const std::string& name,
              const nlohmann::json& labels = nlohmann::json::object()) {
  if (!families.contains(family)) return NAN;
  for (const nlohmann::json& s : families[family]["samples"])
    if (s[0] == name && s[1] == labels) return s[2].get<double>();
  return NAN;
}
double Value(const nlohmann::json& f, const std::string& name, const nlohmann::json& labels = {}) {
  return Sample(f, name, name, labels.is_null() ? nlohmann::json::object() : labels);
}

std::string Type(const nlohmann::json& families, const std::string& family) {
  return families.contains(family) ? families[family].value("type", "") : "(absent)";
}

// Whether some family of the scrape has a sample named `name` (histograms: name_bucket, ...).
bool HasSample(const nlohmann::json& families, const std::string& name) {
  for (const auto& [family, f] : families.items())
    for (const nlohmann::json& s : f["samples"])
      if (s[0] == name) return true;
  return false;
}

// The metric names in the PromQL expressions of the Grafana dashboard (deploy/grafana).
std::set<std::string> DashboardMetrics() {
  std::ifstream in(LOCKSTEP_SOURCE_DIR_FOR_TEST "/deploy/grafana/lockstep-dashboard.json");
  const nlohmann::json dash = nlohmann::json::parse(in, nullptr, false);
  EXPECT_FALSE(dash.is_discarded()) << "the dashboard is not JSON";
  std::set<std::string> names;
  const std::regex metric(R"(\b(slurm|lockstep)_[a-z0-9_]+)");
  for (const nlohmann::json& panel : dash.value("panels", nlohmann::json::array()))
    for (const nlohmann::json& target : panel.value("targets", nlohmann::json::array())) {
      const std::string expr = target.value("expr", "");
      for (std::sregex_iterator it(expr.begin(), expr.end(), metric), end; it != end; ++it)
        names.insert(it->str());
    }
  EXPECT_GT(names.size(), 20u);
  return names;
}

std::string Metrics(Cluster& c, const std::string& part = "") {
  CommandResult r = c.Run(part.empty() ? std::vector<std::string>{"metrics"}
                                       : std::vector<std::string>{"metrics", part});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.out;
}

std::string State(Cluster& c, unsigned long long id) {
  return c.Job(id).value("state", "");
}

// A free TCP port on 127.0.0.1, for --metrics-listen (the kernel's pick, released at once).
int FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

// Four known jobs: one running with 2 GPUs, one held, one failed (exit 3), one completed; and
// a drained node. The ids, in that order.
struct Known {
  unsigned long long running, held, failed, completed;
  std::string running_node, drained_node;
};

Known SubmitKnownJobs(Cluster& c) {
  Known k{};
  k.running = Submit(c, {"--gpus=2", "-J", "train", "--wrap", "sleep 300"});
  k.held = Submit(c, {"--hold", "--wrap", "true"});
  k.failed = Submit(c, {"--wrap", "exit 3"});
  k.completed = Submit(c, {"--wrap", "true"});
  EXPECT_TRUE(WaitFor([&] { return State(c, k.running) == "RUNNING"; }, std::chrono::seconds(20)));
  EXPECT_TRUE(WaitFor([&] { return State(c, k.failed) == "FAILED"; }, std::chrono::seconds(20)));
  EXPECT_TRUE(
      WaitFor([&] { return State(c, k.completed) == "COMPLETED"; }, std::chrono::seconds(20)));
  k.running_node = c.Job(k.running).value("nodes", "");
  k.drained_node = k.running_node == "node1" ? "node2" : "node1";
  CommandResult r =
      c.Run({"scontrol", "update", "NodeName=" + k.drained_node, "State=DRAIN", "Reason=bad fan"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return k;
}

TEST(Observe, MetricsOfKnownJobsReadByPrometheusParser) {
  Cluster c;
  ASSERT_TRUE(c.Start());
  Known k = SubmitKnownJobs(c);
  const nlohmann::json f = Parsed(c, Metrics(c));
  const std::string user = c.Job(k.running).value("user", "");
  // Jobs, as slurmctld 25.11 names them: all gauges.
  for (const char* g :
       {"slurm_jobs", "slurm_jobs_pending", "slurm_jobs_running", "slurm_jobs_failed",
        "slurm_jobs_completed", "slurm_jobs_hold", "slurm_nodes_drain", "slurm_node_gpus_alloc",
        "slurm_partition_jobs", "slurm_user_jobs_running", "slurm_account_jobs_pending",
        "slurm_schedule_cycle_cnt", "slurm_bf_cycle_cnt", "slurm_backfilled_jobs"})
    EXPECT_EQ(Type(f, g), "gauge") << g;
  EXPECT_EQ(Value(f, "slurm_jobs"), 4);
  EXPECT_EQ(Value(f, "slurm_jobs_pending"), 1);
  EXPECT_EQ(Value(f, "slurm_jobs_hold"), 1);
  EXPECT_EQ(Value(f, "slurm_jobs_running"), 1);
  EXPECT_EQ(Value(f, "slurm_jobs_failed"), 1);
  EXPECT_EQ(Value(f, "slurm_jobs_completed"), 1);
  EXPECT_EQ(Value(f, "slurm_jobs_finished"), 2);
  EXPECT_EQ(Value(f, "slurm_jobs_gpus_alloc"), 2);
  EXPECT_EQ(Value(f, "slurm_jobs_nodes_alloc"), 1);
  // Nodes: per node, with Slurm's `node` label; the drained one counted as drained.
  EXPECT_EQ(Value(f, "slurm_nodes"), 2);
  EXPECT_EQ(Value(f, "slurm_nodes_drain"), 1);
  EXPECT_EQ(Value(f, "slurm_nodes_drained"), 1);
  EXPECT_EQ(Value(f, "slurm_nodes_mixed"), 1);
  EXPECT_EQ(Value(f, "slurm_node_gpus", {{"node", "node1"}}), 4);
  EXPECT_EQ(Value(f, "slurm_node_gpus_alloc", {{"node", k.running_node}}), 2);
  EXPECT_EQ(Value(f, "slurm_node_gpus_alloc", {{"node", k.drained_node}}), 0);
  EXPECT_EQ(Value(f, "slurm_node_cpus", {{"node", "node2"}}), 16);
  // Partitions, users, accounts.
  EXPECT_EQ(Value(f, "slurm_partitions"), 1);
  const std::string part = c.Job(k.running).value("partition", "");
  EXPECT_EQ(Value(f, "slurm_partition_jobs_running", {{"partition", part}}), 1);
  EXPECT_EQ(Value(f, "slurm_partition_nodes", {{"partition", part}}), 2);
  EXPECT_EQ(Value(f, "slurm_user_jobs", {{"username", user}}), 4);
  EXPECT_EQ(Value(f, "slurm_user_jobs_failed", {{"username", user}}), 1);
  // A job without -A charges its user's default account, here the open "default" (issue 37).
  EXPECT_EQ(Value(f, "slurm_account_jobs_running", {{"account", "default"}}), 1);
  // lockstep's own: GPUs by user, account and partition; histograms.
  EXPECT_EQ(Value(f, "lockstep_user_gpus_alloc", {{"username", user}}), 2);
  EXPECT_EQ(Value(f, "lockstep_account_gpus_alloc", {{"account", "default"}}), 2);
  EXPECT_EQ(Value(f, "lockstep_partition_gpus_alloc", {{"partition", part}}), 2);
  // Runs that did not complete, by cause: the `exit 3` job is the user's.
  EXPECT_EQ(Type(f, "lockstep_job_failures"), "gauge");
  EXPECT_EQ(Value(f, "lockstep_job_failures", {{"cause", "user"}}), 1);
  for (const char* h : {"lockstep_queue_wait_seconds", "lockstep_scheduling_pass_seconds",
                        "lockstep_api_request_seconds", "lockstep_store_commit_seconds"})
    EXPECT_EQ(Type(f, h), "histogram") << h;
  // Three jobs started: two without GPUs, one with 2.
  EXPECT_EQ(Sample(f, "lockstep_queue_wait_seconds", "lockstep_queue_wait_seconds_count",
                   {{"partition", part}, {"gpus", "0"}}),
            2);
  EXPECT_EQ(Sample(f, "lockstep_queue_wait_seconds", "lockstep_queue_wait_seconds_count",
                   {{"partition", part}, {"gpus", "2"}}),
            1);
  EXPECT_GE(Sample(f, "lockstep_store_commit_seconds", "lockstep_store_commit_seconds_count"), 4);
  EXPECT_GE(Sample(f, "lockstep_api_request_seconds", "lockstep_api_request_seconds_count",
                   {{"route", "GET /api/v1/jobs/{id}"}}),
            1);
  EXPECT_GE(Sample(f, "lockstep_scheduling_pass_seconds", "lockstep_scheduling_pass_seconds_count",
                   {{"pass", "quick"}}) +
                Sample(f, "lockstep_scheduling_pass_seconds",
                       "lockstep_scheduling_pass_seconds_count", {{"pass", "full"}}),
            1);
  EXPECT_EQ(Type(f, "lockstep_agent_heartbeat_age_seconds"), "gauge");
  EXPECT_FALSE(f["lockstep_agent_heartbeat_age_seconds"]["samples"].empty());
  // Every metric the Grafana dashboard (deploy/grafana) queries is in the scrape.
  for (const std::string& name : DashboardMetrics())
    EXPECT_TRUE(HasSample(f, name)) << "deploy/grafana/lockstep-dashboard.json uses " << name;
  // A job ends: the counts follow.
  ASSERT_EQ(c.Run({"scancel", std::to_string(k.running)}).exit_code, 0);
  ASSERT_TRUE(
      WaitFor([&] { return State(c, k.running) == "CANCELLED"; }, std::chrono::seconds(20)));
  const nlohmann::json after = Parsed(c, Metrics(c));
  EXPECT_EQ(Value(after, "slurm_jobs_running"), 0);
  EXPECT_EQ(Value(after, "slurm_jobs_cancelled"), 1);
  EXPECT_EQ(Value(after, "slurm_jobs_gpus_alloc"), 0);
  EXPECT_EQ(Value(after, "slurm_node_gpus_alloc", {{"node", k.running_node}}), 0);
}

TEST(Observe, SplitEndpointsAndMetricsOnlyListener) {
  const int port = FreePort();
  ClusterOptions o;
  o.daemon_args = {"--metrics-listen", "127.0.0.1:" + std::to_string(port)};
  Cluster c(o);
  ASSERT_TRUE(c.Start());
  // Each of Slurm's endpoints serves its own families only.
  const nlohmann::json nodes = Parsed(c, Metrics(c, "nodes"));
  EXPECT_TRUE(nodes.contains("slurm_node_cpus"));
  EXPECT_FALSE(nodes.contains("slurm_jobs"));
  const nlohmann::json jobs = Parsed(c, Metrics(c, "jobs"));
  EXPECT_TRUE(jobs.contains("slurm_jobs_pending"));
  EXPECT_FALSE(jobs.contains("slurm_nodes"));
  EXPECT_TRUE(Parsed(c, Metrics(c, "partitions")).contains("slurm_partition_cpus"));
  EXPECT_TRUE(Parsed(c, Metrics(c, "scheduler")).contains("slurm_bf_cycle_cnt"));
  EXPECT_TRUE(Parsed(c, Metrics(c, "jobs-users-accts")).contains("slurm_user_jobs_pending"));
  // The metrics-only listener: plain HTTP, no token, the metrics and nothing else.
  const std::string base = "curl -s -w '\\n%{http_code}' http://127.0.0.1:" + std::to_string(port);
  auto [text, ok] = Shell(base + "/metrics/nodes");
  ASSERT_TRUE(ok);
  EXPECT_TRUE(Contains(text, "slurm_node_cpus{node=\"node1\"} 16")) << text;
  EXPECT_TRUE(text.ends_with("\n200")) << text;
  auto [api, api_ok] = Shell(base + "/api/v1/jobs");
  EXPECT_TRUE(api.ends_with("\n404")) << api;
  auto [post, post_ok] = Shell(base + "/metrics -X POST");
  EXPECT_TRUE(post.ends_with("\n405")) << post;
  // A bad address is refused at start, naming the option, before anything is opened.
  auto [refused, refused_ok] =
      Shell(std::string(LOCKSTEP_BIN_DIR) + "/lockstepd --config " + c.dir() +
            "/cluster.yaml --state-dir " + c.dir() + "/other --metrics-listen nonsense 2>&1");
  EXPECT_FALSE(refused_ok);
  EXPECT_TRUE(Contains(refused, "--metrics-listen")) << refused;
}

TEST(Observe, SdiagCountsJobsCyclesAndRpcs) {
  Cluster c;
  ASSERT_TRUE(c.Start());
  SubmitKnownJobs(c);
  CommandResult r = c.Run({"sdiag"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* line :
       {"Jobs submitted: 4\n", "Jobs started:   3\n", "Jobs completed: 1\n", "Jobs canceled:  0\n",
        "Jobs failed:    1\n", "Jobs pending:   1\n", "Jobs running:   1\n",
        "Main schedule statistics (microseconds):\n", "Backfilling stats\n",
        "\tTotal backfilled jobs (since last slurm start): ",
        "Remote Procedure Call statistics by message type\n",
        "\tGET /api/v1/jobs/{id}                   (",
        "Remote Procedure Call statistics by user\n"})
    EXPECT_TRUE(Contains(r.out, line)) << line << "\n" << r.out;
  // The same counters as the metrics.
  const nlohmann::json f = Parsed(c, Metrics(c, "scheduler"));
  EXPECT_EQ(Value(f, "slurm_sdiag_jobs_submitted"), 4);
  EXPECT_EQ(Value(f, "slurm_sdiag_jobs_failed"), 1);
}

std::vector<nlohmann::json> EventLines(const std::string& out) {
  std::vector<nlohmann::json> events;
  std::size_t start = 0;
  for (std::size_t nl; (nl = out.find('\n', start)) != std::string::npos; start = nl + 1)
    events.push_back(nlohmann::json::parse(out.substr(start, nl - start)));
  return events;
}

const nlohmann::json* Find(const std::vector<nlohmann::json>& events, const std::string& kind,
                           unsigned long long job) {
  for (const nlohmann::json& e : events)
    if (e.value("kind", "") == kind && e.value("job_id", 0ull) == job) return &e;
  return nullptr;
}

TEST(Observe, EventsListedFollowedAndFilteredByOwner) {
  Cluster c;
  ASSERT_TRUE(c.Start());
  const unsigned long long array = Submit(c, {"--hold", "--array=0-2", "--wrap", "true"});
  ASSERT_GT(array, 0u);
  Known k = SubmitKnownJobs(c);
  CommandResult r = c.Run({"events", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<nlohmann::json> events = EventLines(r.out);
  for (unsigned long long id : {k.running, k.held, k.failed, k.completed})
    EXPECT_TRUE(Find(events, "submitted", id)) << id << r.out;
  // An array is one event, with its count of tasks.
  const nlohmann::json* submitted = Find(events, "submitted", array);
  ASSERT_TRUE(submitted) << r.out;
  EXPECT_EQ((*submitted)["array_tasks"], 3);
  EXPECT_FALSE(Find(events, "submitted", array + 1));
  const nlohmann::json* failed = Find(events, "ended", k.failed);
  ASSERT_TRUE(failed) << r.out;
  EXPECT_EQ((*failed)["state"], "FAILED");
  EXPECT_EQ((*failed)["exit_code"], 3);
  const nlohmann::json* started = Find(events, "started", k.running);
  ASSERT_TRUE(started) << r.out;
  EXPECT_EQ((*started)["nodes"], nlohmann::json::array({k.running_node}));
  EXPECT_FALSE(Find(events, "started", k.held));
  const nlohmann::json& last = events.back();
  EXPECT_EQ(last["kind"], "node_drained");
  EXPECT_EQ(last["node"], k.drained_node);
  EXPECT_EQ(last["reason"], "bad fan");
  // Sequence numbers follow each other: a reader resumes after the last it saw.
  for (std::size_t i = 1; i < events.size(); ++i)
    EXPECT_EQ(events[i]["seq"].get<std::uint64_t>(), events[i - 1]["seq"].get<std::uint64_t>() + 1);
  const std::string next = std::to_string(last["seq"].get<std::uint64_t>() + 1);
  // Text lines, for people.
  r = c.Run({"events", "--from", last["seq"].dump()});
  EXPECT_TRUE(Contains(r.out, " node " + k.drained_node + " drained reason=bad fan")) << r.out;
  // Following: a long poll from `next` answers when the job ends, with its event.
  // (Through the shell: Cluster::Run is not for commands that run at once.)
  auto followed = std::async(std::launch::async, [&] {
    return Shell("LOCKSTEP_STATE_DIR=" + c.dir() +
                 " " LOCKSTEP_BIN_DIR "/lockstep events --json --follow --from " + next + " > " +
                 c.dir() + "/follow.out 2>&1");
  });
  std::future<nlohmann::json> poll = std::async(std::launch::async, [&] {
    client::ApiClient api(c.dir() + "/lockstepd.sock");
    Result<nlohmann::json> got = api.Get("/api/v1/events?from=" + next + "&wait_ms=20000");
    return got.ok() ? *got : nlohmann::json{{"error", got.status().message()}};
  });
  ASSERT_EQ(c.Run({"scancel", std::to_string(k.running)}).exit_code, 0);
  nlohmann::json got = poll.get();
  ASSERT_FALSE(got["events"].empty()) << got.dump();
  EXPECT_EQ(got["events"][0]["kind"], "ended");
  EXPECT_EQ(got["events"][0]["job_id"], k.running);
  EXPECT_EQ(got["events"][0]["state"], "CANCELLED");
  // Another user sees that jobs changed, not their details.
  if (::getuid() == 0) {
    r = c.Run({"events", "--json"}, "", 65534);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::vector<nlohmann::json> theirs = EventLines(r.out);
    const nlohmann::json* seen = Find(theirs, "started", k.running);
    ASSERT_TRUE(seen) << r.out;
    EXPECT_FALSE(seen->contains("nodes"));
    EXPECT_FALSE(seen->contains("name"));
    EXPECT_FALSE(Find(theirs, "ended", k.failed)->contains("exit_code"));
  }
  // Bad positions are refused, naming the parameter.
  r = c.Run({"events", "--from", "-1"});
  EXPECT_NE(r.exit_code, 0);
  client::ApiClient api(c.dir() + "/lockstepd.sock");
  Result<nlohmann::json> bad = api.Get("/api/v1/events?wait_ms=99999999");
  EXPECT_FALSE(bad.ok());
  EXPECT_TRUE(Contains(bad.status().message(), "wait_ms")) << bad.status().message();
  // The follower printed the end as it came, and keeps reading until lockstepd goes.
  const std::string follow_out = c.dir() + "/follow.out";
  EXPECT_TRUE(WaitFor([&] { return Contains(c.ReadFile(follow_out), "\"kind\":\"ended\""); },
                      std::chrono::seconds(20)))
      << c.ReadFile(follow_out);
  c.KillDaemon();
  EXPECT_FALSE(followed.get().second);  // it ends with lockstepd, saying so
  EXPECT_TRUE(Contains(c.ReadFile(follow_out), "lockstep events: error:"))
      << c.ReadFile(follow_out);
}

}  // namespace
}  // namespace lockstep::testing
