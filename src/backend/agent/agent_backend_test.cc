// lockstepd's side of the agents, against a sink that records what it is told.
#include "backend/agent/agent_backend.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <future>
#include <memory>

#include "common/base64.h"
#include "common/wait_for.h"

namespace lockstep::agent {
namespace {

using nlohmann::json;

class RecordingSink : public backend::EventSink {
 public:
  void NodesReported(std::vector<backend::NodeReport> nodes, bool complete) override {
    for (auto& n : nodes) reports.push_back(std::move(n));
  }
  void RunsAlive(std::vector<std::string> nodes, std::vector<backend::RunId> a) override {
    alive_nodes = std::move(nodes);
    alive = std::move(a);
  }
  void RunExited(backend::RunId run, backend::ExitStatus status) override {
    exits.push_back({run, status});
  }
  void LaunchFailed(backend::RunId, std::string) override {}
  void StepNodeExited(JobId, std::int32_t, std::string node, backend::ExitStatus) override {
    step_exits.push_back(node);
  }
  void StepOutput(std::vector<backend::OutputChunk> c) override {
    for (auto& x : c) chunks.push_back(std::move(x));
  }
  void NodeHealth(backend::NodeHealthReport r) override { health.push_back(std::move(r)); }
  void JobHookFailed(backend::JobHookFailure f) override { hook_failures.push_back(std::move(f)); }
  std::vector<backend::NodeReport> reports;
  std::vector<std::string> alive_nodes;
  std::vector<backend::RunId> alive;
  std::vector<std::pair<backend::RunId, backend::ExitStatus>> exits;
  std::vector<std::string> step_exits;
  std::vector<backend::OutputChunk> chunks;
  std::vector<backend::NodeHealthReport> health;
  std::vector<backend::JobHookFailure> hook_failures;
};

class AgentBackendTest : public ::testing::Test {
 protected:
  AgentBackendTest() {
    AgentBackendOptions o;
    o.nodes = {"n1", "n2", "n3"};
    o.node_timeout = 30;
    o.clock = &clock_;
    o.check_period = std::chrono::hours(1);  // the test calls CheckAgents itself
    agents_ = std::make_unique<AgentBackend>(sink_, o);
  }
  static json Registration(const std::string& agent, std::vector<std::string> nodes,
                           json running = json::array()) {
    json n = json::array();
    for (const std::string& name : nodes) n.push_back({{"name", name}});
    return {{"agent", agent}, {"address", "10.0.0.7"}, {"nodes", n}, {"running", running}};
  }
  static backend::LaunchOrder Order(JobId job, std::vector<std::string> nodes) {
    backend::LaunchOrder o;
    o.job = job;
    o.run = 0;
    for (const std::string& n : nodes) o.nodes.push_back({n, 1, 100, 0});
    o.script = "#!/bin/sh\n";
    o.stdout_path = "/tmp/out";
    o.stderr_path = "/tmp/out";
    return o;
  }

  // A poll whose answer the test reads from the future it returns.
  std::future<json> PollAsync(const std::string& agent, std::chrono::milliseconds wait) {
    auto answer = std::make_shared<std::promise<json>>();
    std::future<json> f = answer->get_future();
    agents_->Poll(agent, wait, [answer](json body) { answer->set_value(std::move(body)); });
    return f;
  }
  // A poll that does not wait (answered before Poll returns).
  json PollNow(const std::string& agent) {
    std::future<json> f = PollAsync(agent, std::chrono::milliseconds(0));
    EXPECT_TRUE(Answered(f)) << "a poll without a wait is answered at once";
    return f.get();
  }
  static bool Answered(const std::future<json>& f) {
    return f.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
  }

  ManualClock clock_;
  RecordingSink sink_;
  std::unique_ptr<AgentBackend> agents_;
};

TEST_F(AgentBackendTest, BadBodiesAreRefusedNamingTheFieldAndChangeNothing) {
  Status s = agents_->Register({{"agent", 7}, {"nodes", json::array()}});
  EXPECT_EQ(s.message(), "register: 'agent' must be a string");
  s = agents_->Register(Registration("a", {"n1"}, json::array({{{"job_id", "x"}}})));
  EXPECT_EQ(s.message(), "register: running[0]: 'job_id' must be an integer");
  s = agents_->Register(Registration("a", {"n1"}, json::array({{{"job_id", -5}}})));
  EXPECT_EQ(s.message(), "register: running[0]: 'job_id' must be from 1 to 9223372036854775807");
  s = agents_->Register(Registration("a", {"n9"}));
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_TRUE(sink_.reports.empty()) << "nothing was reported";
  s = agents_->Events({{"events", {{{"type", "exited"}, {"job_id", 1}, {"signal", 9999}}}}});
  EXPECT_EQ(s.message(), "events[0]: 'signal' must be from 0 to 255");
  s = agents_->Output({{"chunks", {{{"job_id", 1}, {"step_id", 0}, {"data", "%%%"}}}}});
  EXPECT_EQ(s.message(), "output: chunks[0]: 'data' is not base64");
  EXPECT_TRUE(sink_.exits.empty() && sink_.chunks.empty());
}

TEST_F(AgentBackendTest, RegistrationReportsTheNodesAndWhatStillRunsThere) {
  json running = json::array({{{"job_id", 4}, {"run", 2}, {"step", "batch"}, {"node", "n1"}}});
  ASSERT_TRUE(agents_->Register(Registration("a", {"n1", "n2"}, running)).ok());
  ASSERT_EQ(sink_.reports.size(), 2u);
  EXPECT_TRUE(sink_.reports[0].ready);
  EXPECT_FALSE(sink_.reports[0].resources) << "agents' nodes are as configured";
  EXPECT_EQ(sink_.reports[0].address, "10.0.0.7");
  EXPECT_EQ(sink_.alive_nodes, (std::vector<std::string>{"n1", "n2"}));
  ASSERT_EQ(sink_.alive.size(), 1u);
  EXPECT_EQ(sink_.alive[0], (backend::RunId{4, 2}));
  // The adopted run can be ended.
  ASSERT_TRUE(agents_->Terminate({4, 2}, 5).ok());
  json polled = PollNow("a");
  ASSERT_EQ(polled["commands"].size(), 1u);
  EXPECT_EQ(polled["commands"][0]["type"], "terminate");
  EXPECT_EQ(polled["commands"][0]["grace_s"], 5);
}

TEST_F(AgentBackendTest, ACommandAnswersOnlyThePollOfTheAgentItIsFor) {
  ASSERT_TRUE(agents_->Register(Registration("a", {"n1"})).ok());
  ASSERT_TRUE(agents_->Register(Registration("b", {"n2"})).ok());
  std::future<json> a_poll = PollAsync("a", std::chrono::seconds(30));
  // The waiter is called without the backend's lock: it may call the backend again.
  auto b_answer = std::make_shared<std::promise<json>>();
  std::future<json> b_poll = b_answer->get_future();
  agents_->Poll("b", std::chrono::seconds(30), [this, b_answer](json body) {
    json again = PollNow("a");
    EXPECT_TRUE(again["commands"].empty());
    b_answer->set_value(std::move(body));
  });
  EXPECT_FALSE(Answered(b_poll));
  ASSERT_TRUE(agents_->Launch(Order(9, {"n2"})).ok());
  ASSERT_TRUE(Answered(b_poll)) << "answered by its command, before Launch returned";
  json b = b_poll.get();
  ASSERT_EQ(b["commands"].size(), 1u);
  EXPECT_EQ(b["commands"][0]["type"], "launch");
  EXPECT_EQ(b["commands"][0]["node"], "n2");
  // a's poll was answered (empty) by the newer poll of a inside b's waiter.
  ASSERT_TRUE(Answered(a_poll));
  EXPECT_TRUE(a_poll.get()["commands"].empty());
  // No agent serves n3: the launch is refused, and the controller requeues it.
  EXPECT_EQ(agents_->Launch(Order(10, {"n3"})).code(), StatusCode::kUnavailable);
}

TEST_F(AgentBackendTest, CommandsQueuedTogetherAnswerOnePollTogether) {
  json running = json::array({{{"job_id", 4}, {"run", 0}, {"step", "batch"}, {"node", "n1"}},
                              {{"job_id", 4}, {"run", 0}, {"step", "batch"}, {"node", "n2"}}});
  ASSERT_TRUE(agents_->Register(Registration("a", {"n1", "n2"}, running)).ok());
  std::future<json> poll = PollAsync("a", std::chrono::seconds(30));
  ASSERT_TRUE(agents_->Terminate({4, 0}, 5).ok());
  ASSERT_TRUE(Answered(poll));
  EXPECT_EQ(poll.get()["commands"].size(), 2u) << "one terminate per node, in one answer";
}

TEST_F(AgentBackendTest, APollWithoutCommandsIsAnsweredEmptyWhenItsWaitEnds) {
  ASSERT_TRUE(agents_->Register(Registration("a", {"n1"})).ok());
  // The watchdog checks agents once an hour here: only the poll's own deadline answers it.
  std::future<json> poll = PollAsync("a", std::chrono::milliseconds(20));
  json answer = poll.get();
  EXPECT_TRUE(answer["commands"].empty());
  EXPECT_FALSE(answer.contains("register"));
  // A command queued afterwards waits for the next poll.
  ASSERT_TRUE(agents_->Launch(Order(9, {"n1"})).ok());
  EXPECT_EQ(PollNow("a")["commands"].size(), 1u);
}

TEST_F(AgentBackendTest, ANewerPollAnswersTheOlderAtOnceWithNoCommands) {
  ASSERT_TRUE(agents_->Register(Registration("a", {"n1"})).ok());
  std::future<json> older = PollAsync("a", std::chrono::seconds(30));
  std::future<json> newer = PollAsync("a", std::chrono::seconds(30));
  ASSERT_TRUE(Answered(older));
  EXPECT_TRUE(older.get()["commands"].empty());
  EXPECT_FALSE(Answered(newer));
  ASSERT_TRUE(agents_->Launch(Order(9, {"n1"})).ok());
  ASSERT_TRUE(Answered(newer));
  EXPECT_EQ(newer.get()["commands"].size(), 1u) << "the command went to the newer poll only";
}

TEST_F(AgentBackendTest, PollsStillWaitingAreAnsweredWhenTheBackendGoes) {
  ASSERT_TRUE(agents_->Register(Registration("a", {"n1"})).ok());
  std::future<json> poll = PollAsync("a", std::chrono::seconds(30));
  agents_.reset();
  ASSERT_TRUE(Answered(poll));
  EXPECT_TRUE(poll.get()["commands"].empty());
}

TEST_F(AgentBackendTest, ASilentAgentsNodesGoDownAndItMustRegisterAgain) {
  ASSERT_TRUE(agents_->Register(Registration("a", {"n1"})).ok());
  sink_.reports.clear();
  clock_.Advance(std::chrono::seconds(29));
  agents_->CheckAgents();
  EXPECT_TRUE(sink_.reports.empty());
  clock_.Advance(std::chrono::seconds(2));
  agents_->CheckAgents();
  ASSERT_EQ(sink_.reports.size(), 1u);
  EXPECT_FALSE(sink_.reports[0].ready);
  EXPECT_EQ(sink_.reports[0].down_reason, "not responding");
  EXPECT_EQ(PollNow("a")["register"], true);
}

TEST_F(AgentBackendTest, AWaitingPollOfAnAgentDeclaredLostIsToldToRegister) {
  ASSERT_TRUE(agents_->Register(Registration("a", {"n1"})).ok());
  std::future<json> poll = PollAsync("a", std::chrono::seconds(30));
  clock_.Advance(std::chrono::seconds(31));
  agents_->CheckAgents();
  ASSERT_TRUE(Answered(poll));
  EXPECT_EQ(poll.get()["register"], true);
}

TEST_F(AgentBackendTest, EventsBecomeRunEndsAndStepEnds) {
  ASSERT_TRUE(agents_->Events({{"events",
                                {{{"type", "exited"}, {"job_id", 3}, {"run", 1}, {"step", "batch"},
                                  {"exit_code", 2}, {"oom", true}},
                                 {{"type", "exited"}, {"job_id", 3}, {"run", 1}, {"step", "step"},
                                  {"step_id", 0}, {"node", "n2"}}}}})
                  .ok());
  ASSERT_EQ(sink_.exits.size(), 1u);
  EXPECT_EQ(sink_.exits[0].first, (backend::RunId{3, 1}));
  EXPECT_EQ(sink_.exits[0].second.exit_code, 2);
  EXPECT_TRUE(sink_.exits[0].second.oom);
  EXPECT_EQ(sink_.step_exits, (std::vector<std::string>{"n2"}));
}

// Health reports: decoded whole, only for the agent's own nodes; registration sends the checks'
// settings.
TEST_F(AgentBackendTest, HealthReportsReachTheSinkForTheAgentsOwnNodesOnly) {
  ASSERT_TRUE(agents_->Register(Registration("a", {"n1"})).ok());
  ASSERT_TRUE(agents_->Register(Registration("b", {"n2"})).ok());
  json report = {{"node", "n1"},
                 {"full_round", false},
                 {"gpus", {{{"index", 3}, {"uuid", "GPU-3"}, {"serial", "165"}}}},
                 {"findings", {{{"check", "xid"}, {"gpu", 3}, {"value", 79}}}}};
  ASSERT_TRUE(agents_->Health({{"agent", "a"}, {"reports", {report}}}).ok());
  ASSERT_EQ(sink_.health.size(), 1u);
  EXPECT_EQ(sink_.health[0].node, "n1");
  EXPECT_FALSE(sink_.health[0].full_round);
  EXPECT_EQ(sink_.health[0].gpus[0].serial, "165");
  EXPECT_EQ(sink_.health[0].findings[0].value, 79);
  Status other = agents_->Health({{"agent", "b"}, {"reports", {report}}});
  EXPECT_EQ(other.code(), StatusCode::kPermissionDenied) << "b does not serve n1";
  json bad = report;
  bad["findings"][0]["check"] = "fan";
  Status unknown = agents_->Health({{"agent", "a"}, {"reports", {bad}}});
  EXPECT_NE(unknown.message().find("reports[0].findings[0]: unknown check 'fan'"),
            std::string::npos)
      << unknown.message();
  bad = report;
  bad["findings"][0]["gpu"] = 64;
  EXPECT_FALSE(agents_->Health({{"agent", "a"}, {"reports", {bad}}}).ok());
  EXPECT_EQ(sink_.health.size(), 1u) << "a refused body changes nothing";
}

// Which limits each node holds jobs to, as the agent's launcher found its cgroups.
TEST_F(AgentBackendTest, RegistrationSaysWhichLimitsEachNodeEnforces) {
  json reg = Registration("a", {"n1", "n2"});
  reg["nodes"][0]["enforces"] = {{"memory", false}, {"cpus", true}};
  ASSERT_TRUE(agents_->Register(reg).ok());
  ASSERT_EQ(sink_.reports.size(), 2u);
  EXPECT_FALSE(sink_.reports[0].enforces_memory);
  EXPECT_TRUE(sink_.reports[0].enforces_cpus);
  EXPECT_TRUE(sink_.reports[1].enforces_memory) << "an agent that does not say: as before";
  reg["nodes"][0]["enforces"] = {{"memory", "no"}};
  EXPECT_EQ(agents_->Register(reg).message(),
            "register: nodes[0]: 'enforces' must be {\"memory\": bool, \"cpus\": bool}");
}

// Two checkers of one node (the health-only and mounts-only DaemonSets on Kubernetes) beside the
// agent that launches there: each may report the node's health, the launching agent still gets
// its commands, and a silent checker downs nothing.
TEST_F(AgentBackendTest, CheckersOfANodeReportBesideItsLaunchingAgentAndDownNothing) {
  ASSERT_TRUE(agents_->Register(Registration("launcher", {"n1"})).ok());
  sink_.reports.clear();
  for (const char* checker : {"health:n1", "storage:n1"}) {
    json reg = Registration(checker, {"n1"});
    reg["launches"] = false;
    ASSERT_TRUE(agents_->Register(reg).ok());
  }
  EXPECT_TRUE(sink_.reports.empty()) << "a checker's registration reports no node";
  json scoped = {{"node", "n1"}, {"checks", {"storage"}}, {"findings", json::array()}};
  for (const char* agent : {"health:n1", "storage:n1", "launcher"})
    EXPECT_TRUE(agents_->Health({{"agent", agent}, {"reports", {scoped}}}).ok()) << agent;
  ASSERT_EQ(sink_.health.size(), 3u);
  EXPECT_EQ(sink_.health[0].checks, (std::vector<std::string>{"storage"}));
  // Launches still go to the node's launching agent.
  ASSERT_TRUE(agents_->Launch(Order(5, {"n1"})).ok());
  EXPECT_EQ(PollNow("launcher")["commands"][0]["type"], "launch");
  EXPECT_EQ(PollNow("storage:n1").value("commands", json::array()).size(), 0u);
  // The checkers fall silent: their node keeps running.
  clock_.Advance(std::chrono::seconds(20));
  (void)PollNow("launcher");
  clock_.Advance(std::chrono::seconds(20));
  agents_->CheckAgents();
  EXPECT_TRUE(sink_.reports.empty()) << "no node went down";
  EXPECT_EQ(PollNow("storage:n1")["register"], true) << "it must register again";
  // A checker speaks for its own nodes only; an unknown check in the scope is refused.
  json other = scoped;
  other["node"] = "n2";
  EXPECT_EQ(agents_->Health({{"agent", "health:n1"}, {"reports", {other}}}).code(),
            StatusCode::kPermissionDenied);
  json bad = scoped;
  bad["checks"] = {"fan"};
  EXPECT_EQ(agents_->Health({{"agent", "launcher"}, {"reports", {bad}}}).message(),
            "health: reports[0]: 'checks' has \"fan\", which is not a check");
  json reg = Registration("c", {"n3"});
  reg["launches"] = "no";
  EXPECT_EQ(agents_->Register(reg).message(), "register: 'launches' must be a boolean");
}

// sbcast: one command per agent naming its nodes of the job, each node's outcome from the
// agent's events; a node without an agent, or silent past the timeout, fails by name.
TEST_F(AgentBackendTest, BroadcastWaitsForEveryNodeAndSaysEachOnesOutcome) {
  ASSERT_TRUE(agents_->Register(Registration("a", {"n1", "n2"})).ok());
  backend::BroadcastOrder order;
  order.run = {7, 0};
  order.nodes = {"n1", "n2", "n3"};  // n3: no agent
  order.uid = 1000, order.gid = 1000;
  order.path = "/tmp/x";
  order.data = std::string(3u << 20, 'x');
  order.timeout = std::chrono::seconds(20);
  auto results = std::async(std::launch::async, [&] { return agents_->Broadcast(order); });
  json command;
  ASSERT_TRUE(lockstep::testing::WaitFor([&] {
    json polled = PollNow("a");
    if (polled["commands"].empty()) return false;
    command = polled["commands"][0];
    return true;
  }, std::chrono::seconds(10)));
  EXPECT_EQ(command["type"], "bcast");
  EXPECT_EQ(command["nodes"], json::array({"n1", "n2"}));
  EXPECT_EQ(command["path"], "/tmp/x");
  EXPECT_EQ(command["uid"], 1000);
  const std::uint64_t id = command["bcast_id"];
  auto done = [&](const std::string& agent, const std::string& node, const std::string& error) {
    return agents_->Events({{"agent", agent},
                            {"events", {{{"type", "bcast_done"}, {"bcast_id", id},
                                         {"node", node}, {"error", error}}}}});
  };
  ASSERT_TRUE(done("a", "n1", "").ok());
  ASSERT_TRUE(done("b", "n2", "forged").ok());  // not n2's agent: dropped
  EXPECT_EQ(results.wait_for(std::chrono::milliseconds(50)), std::future_status::timeout)
      << "n2 has not answered yet";
  ASSERT_TRUE(done("a", "n2", "File exists").ok());
  Result<std::vector<backend::BroadcastResult>> r = results.get();
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 3u);
  EXPECT_EQ((*r)[0].node, "n1");
  EXPECT_EQ((*r)[0].error, "");
  EXPECT_EQ((*r)[1].error, "File exists");
  EXPECT_EQ((*r)[2].node, "n3");
  EXPECT_EQ((*r)[2].error, "no agent serves this node");
  EXPECT_TRUE(sink_.step_exits.empty() && sink_.exits.empty()) << "no job event came of it";
}

TEST_F(AgentBackendTest, APollCarriesAtMostAFewPiecesTheRestWaits) {
  ASSERT_TRUE(agents_->Register(Registration("a", {"n1"})).ok());
  backend::BroadcastOrder order;
  order.run = {7, 0};
  order.nodes = {"n1"};
  order.path = "/tmp/x";
  order.data = std::string(2u << 20, 'y');  // 2.7 MiB in base64
  order.timeout = std::chrono::milliseconds(1);  // nobody answers: each fails by itself
  std::vector<std::future<Result<std::vector<backend::BroadcastResult>>>> sent;
  for (int i = 0; i < 3; ++i)
    sent.push_back(std::async(std::launch::async, [&] { return agents_->Broadcast(order); }));
  std::size_t pieces = 0, polls = 0;
  ASSERT_TRUE(lockstep::testing::WaitFor([&] {
    json polled = PollNow("a");
    EXPECT_LE(polled["commands"].size(), 1u) << "two pieces would pass 4 MiB of data";
    pieces += polled["commands"].size();
    polls += polled["commands"].empty() ? 0 : 1;
    return pieces == 3;
  }, std::chrono::seconds(10)));
  EXPECT_EQ(polls, 3u);
  for (auto& f : sent) {
    Result<std::vector<backend::BroadcastResult>> r = f.get();
    ASSERT_TRUE(r.ok());
    EXPECT_EQ((*r)[0].error, "the node did not answer within 5 s");
  }
}

}  // namespace
}  // namespace lockstep::agent

namespace lockstep::agent {
namespace {

// An MPI step on n1, n2 (agent "a") and n3 (agent "b"): 2 ranks on each node.
backend::StepLaunch MpiStep() {
  backend::StepLaunch s;
  s.job = 9;
  s.step = 0;
  s.mpi = "pmix";
  int rank = 0;
  for (const char* node : {"n1", "n2", "n3"})
    for (int k = 0; k < 2; ++k) {
      backend::StepTask t;
      t.argv = {"a.out"};
      t.rank = rank++;
      s.tasks_by_node[node].push_back(t);
    }
  return s;
}

json GatherEvent(const std::string& agent, std::uint64_t fence, std::vector<std::string> nodes,
                 const std::string& data) {
  return {{"agent", agent},
          {"events", json::array({GatherPartEvent({9, 0, fence, std::move(nodes), data})})}};
}

std::vector<json> CommandsOfType(const json& polled, const std::string& type) {
  std::vector<json> out;
  for (const json& c : polled["commands"])
    if (c["type"] == type) out.push_back(c);
  return out;
}

TEST_F(AgentBackendTest, MpiStepsCarryTheirLayoutAndFencesGatherEveryNodesPart) {
  ASSERT_TRUE(agents_->Register(Registration("a", {"n1", "n2"})).ok());
  ASSERT_TRUE(agents_->Register(Registration("b", {"n3"})).ok());
  ASSERT_TRUE(agents_->LaunchStep(MpiStep()).ok());
  // Each node's launch names the whole layout: nodes in rank order, each with its agent.
  std::vector<json> launches = CommandsOfType(PollNow("a"), "launch");
  ASSERT_EQ(launches.size(), 2u);
  EXPECT_EQ(launches[0]["mpi"], "pmix");
  EXPECT_EQ(launches[0]["mpi_layout"],
            json::parse(R"([{"node":"n1","agent":"a","ranks":[0,1]},
                            {"node":"n2","agent":"a","ranks":[2,3]},
                            {"node":"n3","agent":"b","ranks":[4,5]}])"));
  ASSERT_EQ(CommandsOfType(PollNow("b"), "launch").size(), 1u);

  // Agent a's part covers its two nodes; nothing goes down until b's comes.
  ASSERT_TRUE(agents_->Events(GatherEvent("a", 0, {"n1", "n2"}, "AA")).ok());
  EXPECT_TRUE(PollNow("a")["commands"].empty());
  // An agent may not send a part for a node it does not serve: refused, the fence still waits.
  ASSERT_TRUE(agents_->Events(GatherEvent("a", 0, {"n3"}, "XX")).ok());
  EXPECT_TRUE(PollNow("b")["commands"].empty());
  ASSERT_TRUE(agents_->Events(GatherEvent("b", 0, {"n3"}, "B")).ok());
  // Each agent gets the whole once (not once per node it serves).
  for (const char* agent : {"a", "b"}) {
    std::vector<json> done = CommandsOfType(PollNow(agent), "gather_done");
    ASSERT_EQ(done.size(), 1u) << agent;
    EXPECT_EQ(done[0]["fence"], 0);
    EXPECT_EQ(done[0]["ok"], true);
    Result<std::string> data = Base64Decode(done[0]["data"].get<std::string>());
    ASSERT_TRUE(data.ok());
    EXPECT_EQ(*data, "AAB") << agent;
  }

  // A node's tasks end while a fence gathers: it fails on every agent of the step.
  ASSERT_TRUE(agents_->Events(GatherEvent("b", 1, {"n3"}, "B")).ok());
  ASSERT_TRUE(agents_->Events({{"agent", "a"},
                               {"events", json::array({{{"type", "exited"},
                                                        {"job_id", 9},
                                                        {"step", "step"},
                                                        {"step_id", 0},
                                                        {"node", "n1"},
                                                        {"exit_code", 1}}})}})
                  .ok());
  for (const char* agent : {"a", "b"}) {
    std::vector<json> done = CommandsOfType(PollNow(agent), "gather_done");
    ASSERT_EQ(done.size(), 1u) << agent;
    EXPECT_EQ(done[0]["fence"], 1);
    EXPECT_EQ(done[0]["ok"], false);
  }
}

TEST(StepGathers, APartTwiceOrForANodeOutsideTheStepIsRefused) {
  StepGathers g;
  const std::set<std::string> members = {"n1", "n2"};
  EXPECT_FALSE(g.Add({1, 0, 0, {"n9"}, "x"}, members).ok());
  Result<std::optional<std::string>> first = g.Add({1, 0, 0, {"n1"}, "x"}, members);
  ASSERT_TRUE(first.ok());
  EXPECT_FALSE(first->has_value());
  EXPECT_FALSE(g.Add({1, 0, 0, {"n1"}, "y"}, members).ok());
  // Fences of one step, and steps, gather apart.
  ASSERT_TRUE(g.Add({1, 0, 1, {"n2"}, "z"}, members).ok());
  ASSERT_TRUE(g.Add({1, 1, 0, {"n2"}, "w"}, members).ok());
  EXPECT_EQ(g.pending(), 3u);
  Result<std::optional<std::string>> done = g.Add({1, 0, 0, {"n2"}, "2"}, members);
  ASSERT_TRUE(done.ok());
  ASSERT_TRUE(done->has_value());
  EXPECT_EQ(**done, "x2");
  EXPECT_EQ(g.Drop(1, 0), std::vector<std::uint64_t>{1});
  EXPECT_EQ(g.pending(), 1u);
}

}  // namespace
}  // namespace lockstep::agent
