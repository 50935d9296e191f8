// Rolling node maintenance: the batches, one step at a time (rolling_drain.h).
#include "cli/rolling_drain.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "cli/cli_util.h"
#include "common/duration.h"
#include "common/hostlist.h"

namespace lockstep::cli {

using nlohmann::json;

Result<std::vector<std::string>> ExpandNodes(const std::vector<std::string>& words) {
  std::string list;
  for (const std::string& w : words) list += (list.empty() ? "" : ",") + w;
  if (list.empty()) return InvalidArgument("name the nodes (a hostlist such as node[1-4])");
  Result<std::vector<std::string>> hosts = ExpandHostlist(list);
  if (!hosts.ok()) return hosts.status();
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const std::string& h : *hosts)
    if (seen.insert(h).second) out.push_back(h);
  return out;
}

Result<std::vector<NodeBefore>> ReadNodes(client::ApiClient& api,
                                          const std::vector<std::string>& names) {
  Result<json> r = api.Get("/api/v1/nodes");
  if (!r.ok()) return r.status();
  std::map<std::string, json> known;
  for (const json& n : r->value("nodes", json::array())) known[n.value("name", "")] = n;
  std::vector<std::string> unknown;
  std::vector<NodeBefore> out;
  for (const std::string& name : names) {
    auto it = known.find(name);
    if (it == known.end()) {
      unknown.push_back(name);
      continue;
    }
    NodeBefore b{name, it->second.value("state", ""), it->second.value("reason", ""), false};
    if (!b.state.empty() && b.state.back() == '*') b.state.pop_back();
    bool unavailable = b.state == "draining" || b.state == "drained" || b.state == "down";
    // An operator's DRAIN or DOWN always has a reason; a node that just does not respond has
    // none (it shows down*), and is maintained like any other.
    b.held = unavailable && !b.reason.empty() && b.reason.rfind(kRollingReasonPrefix, 0) != 0;
    out.push_back(std::move(b));
  }
  if (!unknown.empty())
    return NotFound("unknown node" + std::string(unknown.size() > 1 ? "s " : " ") +
                    CompressHostlist(unknown) + ": nothing was changed");
  return out;
}

Status SetNodeState(client::ApiClient& api, const std::string& node, const std::string& state,
                    const std::string& reason) {
  Result<json> r = api.Post("/api/v1/nodes/" + client::UrlEncode(node) + "/state",
                            {{"state", state}, {"reason", reason}});
  return r.ok() ? Status::Ok() : r.status();
}

namespace {

using Clock = std::chrono::steady_clock;

// Signals received (SIGINT, SIGTERM). A signal handler cannot reach any object, hence these
// file-level variables. 1: stop after the current step; 2 or more: also end a running --exec.
volatile sig_atomic_t g_signals = 0;
volatile sig_atomic_t g_last_signal = 0;

void OnSignal(int signo) {
  g_last_signal = signo;
  g_signals = g_signals + 1;
}

void InstallSignalHandlers() {
  struct sigaction sa = {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: waitpid() and sleeps return early
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
}

// "1 job", "2 jobs"; "1 batch", "2 batches".
std::string Plural(std::size_t n, const std::string& word) {
  const char* suffix = word.back() == 'h' ? "es" : "s";
  return std::to_string(n) + " " + word + (n == 1 ? "" : suffix);
}

bool Interrupted() {
  return g_signals > 0;
}

// Sleeps `seconds`, waking early on a signal.
void Nap(double seconds) {
  auto until = Clock::now() + std::chrono::duration<double>(seconds);
  while (!Interrupted() && Clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
}

// One rolling maintenance: the batches, and what happened to each (the --json report).
class RollingDrain {
 public:
  RollingDrain(client::ApiClient& api, RollingDrainOptions options, std::vector<NodeBefore> nodes)
      : api_(api), o_(std::move(options)), nodes_(std::move(nodes)) {
    out_ = o_.json ? stderr : stdout;
    reason_ = o_.reason.empty() ? kRollingReasonPrefix
                                : std::string(kRollingReasonPrefix) + ": " + o_.reason;
    for (std::size_t i = 0; i < nodes_.size(); i += static_cast<std::size_t>(o_.batch))
      batches_.emplace_back(
          nodes_.begin() + static_cast<std::ptrdiff_t>(i),
          nodes_.begin() + static_cast<std::ptrdiff_t>(std::min(nodes_.size(), i + o_.batch)));
    report_ = {{"nodes", CompressHostlist(o_.nodes)},
               {"batch_size", o_.batch},
               {"reason", reason_},
               {"dry_run", o_.dry_run},
               {"batches", json::array()}};
    for (const auto& b : batches_)
      report_["batches"].push_back({{"nodes", Names(b, false)},
                                    {"state", o_.dry_run ? "planned" : "pending"},
                                    {"requeued", json::array()},
                                    {"cancelled", json::array()}});
  }

  // Runs every batch; the process exit code.
  int Run() {
    Say("lockstep drain: " + Plural(nodes_.size(), "node") + " in " +
        Plural(batches_.size(), "batch") + " of at most " + std::to_string(o_.batch) + " (" +
        reason_ + ")" + (o_.dry_run ? ": dry run, nothing is changed" : ""));
    for (const NodeBefore& n : nodes_)
      if (n.held)
        Say(n.name + ": already " + n.state + " by an operator (" + n.reason +
            "): maintained with its batch but not drained again and not resumed");
    if (o_.dry_run) {
      for (std::size_t i = 0; i < batches_.size(); ++i)
        Say("batch " + std::to_string(i + 1) + ": " + Names(batches_[i], false) +
            ": drain, wait for its jobs" +
            (o_.deadline ? " (at most " + FormatSlurmDuration(*o_.deadline) + ")" : "") +
            (o_.exec.empty() ? "" : ", exec") + (o_.resume ? ", resume" : ", leave drained"));
      return Finish("planned", 0);
    }
    InstallSignalHandlers();
    if (!o_.reservation.empty()) {
      if (int rc = WaitForWindow(); rc != 0) return Finish(Interrupted() ? "interrupted" : "failed", rc);
    }
    for (std::size_t i = 0; i < batches_.size(); ++i) {
      if (Interrupted()) return Finish("interrupted", InterruptCode());
      batch_ = i;
      int rc = RunBatch(batches_[i]);
      if (rc != 0) return Finish(Interrupted() ? "interrupted" : "failed", rc);
    }
    if (!o_.resume) Say("lockstep drain: --no-resume: left drained as asked");
    return Finish("done", 0);
  }

 private:
  using Batch = std::vector<NodeBefore>;

  int RunBatch(const Batch& b) {
    const std::string names = Names(b, false);
    SetBatchState("draining");
    for (const NodeBefore& n : b) {
      if (n.held) continue;
      Status s = SetNodeState(api_, n.name, "DRAIN", reason_);
      if (!s.ok()) return Error("drain of " + n.name + " failed: " + s.message());
      drained_.insert(n.name);
    }
    Say(names + ": drain");
    if (int rc = WaitForJobs(b); rc != 0) return rc;
    Say(names + ": drained, no job running");
    if (Interrupted()) return InterruptCode();
    if (!o_.exec.empty()) {
      SetBatchState("exec");
      if (int rc = Exec(b); rc != 0) return rc;
      if (Interrupted()) return InterruptCode();
    }
    if (!o_.resume) {
      SetBatchState("drained");
      return 0;
    }
    for (const NodeBefore& n : b) {
      if (n.held) continue;
      Status s = SetNodeState(api_, n.name, "RESUME", "");
      if (!s.ok()) return Error("resume of " + n.name + " failed: " + s.message());
      drained_.erase(n.name);
    }
    SetBatchState("resumed");
    Say(names + ": resumed" +
        (Names(b, true).empty() ? "" : " (not " + Names(b, true) + ": held by an operator)"));
    return 0;
  }

  // Polls until no job runs (or completes) on the batch; past the deadline, requeues the jobs
  // left (or cancels those that may not be requeued), once each.
  int WaitForJobs(const Batch& b) {
    std::set<std::string> names;
    for (const NodeBefore& n : b) names.insert(n.name);
    const std::string list = Names(b, false);
    Clock::time_point start = Clock::now(), last_line = start, failing_since{};
    std::string last_progress;
    std::set<unsigned long long> acted;
    while (true) {
      Result<json> jobs = api_.Get("/api/v1/jobs?state=RUNNING,COMPLETING");
      Result<json> nodes = jobs.ok() ? api_.Get("/api/v1/nodes") : jobs;
      if (!jobs.ok() || !nodes.ok()) {
        // lockstepd restarting, say: keep waiting a while, the drain is durable.
        if (failing_since == Clock::time_point{}) {
          failing_since = Clock::now();
          Say(list + ": cannot ask lockstepd (" + jobs.status().message() + "), retrying");
        } else if (Clock::now() - failing_since > std::chrono::minutes(5)) {
          return Error("lockstepd did not answer for 5 minutes: " + nodes.status().message());
        }
        Nap(o_.interval_s);
        if (Interrupted()) return InterruptCode();
        continue;
      }
      failing_since = {};
      std::vector<json> on_batch = JobsOn(*jobs, names);
      bool busy_node = false;
      for (const json& n : (*nodes)["nodes"])
        if (names.count(n.value("name", ""))) {
          std::string s = n.value("state", "");
          busy_node |= s.rfind("draining", 0) == 0 || s.rfind("completing", 0) == 0;
        }
      if (on_batch.empty() && !busy_node) return 0;
      std::string progress = list + ": draining, " + Plural(on_batch.size(), "job") + " running";
      if (progress != last_progress || Clock::now() - last_line > std::chrono::seconds(60)) {
        Say(progress);
        last_progress = progress;
        last_line = Clock::now();
      }
      if (o_.deadline && Clock::now() - start >= std::chrono::seconds(*o_.deadline))
        EndJobs(on_batch, list, acted);
      Nap(o_.interval_s);
      if (Interrupted()) return InterruptCode();
    }
  }

  static std::vector<json> JobsOn(const json& jobs, const std::set<std::string>& names) {
    std::vector<json> out;
    for (const json& j : jobs.value("jobs", json::array())) {
      Result<std::vector<std::string>> hosts = ExpandHostlist(j.value("nodes", ""));
      if (!hosts.ok()) continue;
      for (const std::string& h : *hosts)
        if (names.count(h)) {
          out.push_back(j);
          break;
        }
    }
    return out;
  }

  void EndJobs(const std::vector<json>& jobs, const std::string& list,
               std::set<unsigned long long>& acted) {
    for (const json& j : jobs) {
      unsigned long long id = j.value("job_id", 0ULL);
      if (j.value("state", "") != "RUNNING" || !acted.insert(id).second) continue;
      std::string prefix = list + ": deadline " + FormatSlurmDuration(*o_.deadline) +
                           " passed: job " + std::to_string(id) + " (on " + j.value("nodes", "") +
                           ") ";
      std::string sid = std::to_string(id);
      if (j.value("requeue", true)) {
        Result<json> r = api_.Post("/api/v1/jobs/" + sid + "/requeue", json::object());
        if (r.ok()) {
          report_["batches"][batch_]["requeued"].push_back(id);
          Say(prefix + "requeued");
          continue;
        }
        // It ended meanwhile (not running): nothing to do. It may not be requeued (its owner
        // changed it): cancel it. Anything else: say so, and go on waiting.
        const std::string& why = r.status().message();
        if (why.find("not running") != std::string::npos) continue;
        if (why.find("may not be requeued") == std::string::npos) {
          Say(prefix + "could not be requeued: " + why);
          continue;
        }
      }
      Result<json> r = api_.Post("/api/v1/jobs/" + sid + "/cancel", {{"signal", 0}});
      if (r.ok()) {
        report_["batches"][batch_]["cancelled"].push_back(id);
        Say(prefix + "cancelled: it may not be requeued");
      } else {
        Say(prefix + "could not be cancelled: " + r.status().message());
      }
    }
  }

  // Runs --exec through /bin/sh -c with LOCKSTEP_NODES and LOCKSTEP_NODE_COUNT. The command
  // ignores SIGINT (Ctrl-C at the terminal must not break an update half-way); a second Ctrl-C
  // or SIGTERM sends it SIGTERM.
  int Exec(const Batch& b) {
    const std::string list = Names(b, false);
    Say(list + ": exec: " + o_.exec);
    std::vector<std::string> env;
    for (const auto& [k, v] : Environment())
      if (k.rfind("LOCKSTEP_NODE", 0) != 0 && k.rfind("LOCKSTEP_BATCH", 0) != 0)
        env.push_back(k + "=" + v);
    env.push_back("LOCKSTEP_NODES=" + list);
    env.push_back("LOCKSTEP_NODE_COUNT=" + std::to_string(b.size()));
    env.push_back("LOCKSTEP_BATCH=" + std::to_string(batch_ + 1));
    env.push_back("LOCKSTEP_BATCH_COUNT=" + std::to_string(batches_.size()));
    std::vector<char*> envp;
    for (std::string& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    std::string command = o_.exec;
    char* argv[] = {const_cast<char*>("sh"), const_cast<char*>("-c"), command.data(), nullptr};
    std::fflush(stdout);
    std::fflush(stderr);
    pid_t pid = ::fork();
    if (pid < 0) return Error("cannot start --exec: fork failed");
    if (pid == 0) {
      ::signal(SIGINT, SIG_IGN);
      ::signal(SIGQUIT, SIG_IGN);
      ::signal(SIGTERM, SIG_DFL);
      ::execve("/bin/sh", argv, envp.data());
      ::_exit(127);
    }
    int status = 0, seen = g_signals;
    bool told = false;
    while (::waitpid(pid, &status, 0) < 0) {
      if (errno != EINTR) return Error("waiting for --exec failed");
      if (g_signals != seen && !told) {
        told = true;
        Say(g_signals >= 2 ? list + ": ending --exec (SIGTERM)"
                           : list + ": interrupted: --exec goes on to its end (again to end it)");
      }
      if (g_signals >= 2) ::kill(pid, SIGTERM);
      seen = g_signals;
    }
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    report_["batches"][batch_]["exec_exit_code"] = code;
    if (code != 0) {
      SetBatchState("failed");
      return Error("--exec failed on " + list + " (exit " + std::to_string(code) + "): stopped; " +
                   list + " left drained");
    }
    Say(list + ": exec done");
    return 0;
  }

  // Names of the batch's nodes: all of them, or only those an operator holds.
  static std::string Names(const Batch& b, bool held_only) {
    std::vector<std::string> names;
    for (const NodeBefore& n : b)
      if (!held_only || n.held) names.push_back(n.name);
    return CompressHostlist(names);
  }

  void SetBatchState(const char* state) { report_["batches"][batch_]["state"] = state; }

  void Say(const std::string& line) {
    std::fprintf(out_, "%s\n", line.c_str());
    std::fflush(out_);
  }

  int Error(const std::string& message) {
    std::fprintf(stderr, "lockstep drain: error: %s\n", message.c_str());
    return 1;
  }

  int InterruptCode() const { return 128 + (g_last_signal ? g_last_signal : SIGINT); }

  // The last lines: what is left drained by this command (and how to resume it), what an
  // operator holds; the --json report.
  int Finish(const std::string& result, int rc) {
    json& state = report_["batches"][batch_]["state"];
    bool mid_batch = state == "draining" || state == "exec";
    if (mid_batch && result != "done") state = result;
    if (result == "interrupted") {
      const char* where = mid_batch ? "in" : state == "pending" ? "before" : "after";
      Say("lockstep drain: interrupted (" +
          std::string(g_last_signal == SIGTERM ? "SIGTERM" : "SIGINT") + "): stopped " + where +
          " batch " + std::to_string(batch_ + 1) + " of " + std::to_string(batches_.size()) + " (" +
          Names(batches_[batch_], false) + ")");
    }
    std::vector<std::string> left(drained_.begin(), drained_.end()), held;
    for (const NodeBefore& n : nodes_)
      if (n.held) held.push_back(n.name);
    if (!left.empty())
      Say("lockstep drain: left drained: " + CompressHostlist(left) + " (`lockstep resume " +
          CompressHostlist(left) + "` resumes them" +
          (result == "done" ? ")" : "; the same drain command again takes them back)"));
    if (!held.empty())
      Say("lockstep drain: not resumed: " + CompressHostlist(held) +
          " (drained or down by an operator before this command)");
    if (result == "done" && o_.resume)
      Say("lockstep drain: done: " + CompressHostlist(o_.nodes) + " maintained and resumed");
    report_["result"] = result;
    report_["left_drained"] = CompressHostlist(left);
    report_["operator_held"] = CompressHostlist(held);
    if (o_.json) std::printf("%s\n", report_.dump(2).c_str());
    return rc;
  }

  // Polls lockstepd until the reservation is in force (its own clock decides).
  int WaitForWindow() {
    bool said = false;
    while (!Interrupted()) {
      Result<json> all = api_.Get("/api/v1/reservations");
      if (!all.ok()) return Fail("lockstep drain", all.status());
      const json* found = nullptr;
      for (const json& r : (*all)["reservations"])
        if (r.value("name", "") == o_.reservation) found = &r;
      if (!found) return Fail("lockstep drain", "reservation " + o_.reservation + " is gone");
      if (found->value("state", "") == "ACTIVE") {
        Say("lockstep drain: reservation " + o_.reservation + " is in force");
        return 0;
      }
      if (!said) {
        const Time start = found->value("start_time", Time{0});
        Say("lockstep drain: waiting for reservation " + o_.reservation + " to start (in " +
            FormatSlurmDuration(std::max<Time>(0, start - (*all).value("now", start))) + ")");
        said = true;
      }
      Nap(o_.interval_s);
    }
    return InterruptCode();
  }

  client::ApiClient& api_;
  RollingDrainOptions o_;
  std::vector<NodeBefore> nodes_;
  std::vector<Batch> batches_;
  std::size_t batch_ = 0;          // the batch being worked on
  std::string reason_;             // "rolling maintenance: TEXT"
  std::set<std::string> drained_;  // drained by this command and not yet resumed
  std::FILE* out_ = stdout;        // progress lines (stderr with --json)
  json report_;
};

}  // namespace

Result<std::vector<std::string>> ReservationNodes(client::ApiClient& api, const std::string& name) {
  Result<json> all = api.Get("/api/v1/reservations");
  if (!all.ok()) return all.status();
  for (const json& r : (*all)["reservations"])
    if (r.value("name", "") == name) return r.value("node_names", std::vector<std::string>{});
  return NotFound("no reservation " + name);
}

int RunRollingDrain(client::ApiClient& api, RollingDrainOptions options,
                    std::vector<NodeBefore> nodes) {
  RollingDrain drain(api, std::move(options), std::move(nodes));
  return drain.Run();
}

}  // namespace lockstep::cli
