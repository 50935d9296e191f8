// The PMI-2 server against a client speaking its wire protocol over the task's end (as Slurm's
// libpmi2 does), with the fence's gather played by the test.
#include "backend/agent/pmi2_server.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <condition_variable>
#include <mutex>

namespace lockstep::agent {
namespace {

// Reads one message with its 6-character length header.
std::string ReadMessage(int fd) {
  std::string header(6, '\0');
  if (::recv(fd, header.data(), 6, MSG_WAITALL) != 6) return "";
  std::string body(std::stoul(header), '\0');
  if (::recv(fd, body.data(), body.size(), MSG_WAITALL) != static_cast<ssize_t>(body.size()))
    return "";
  return body;
}

std::map<std::string, std::string> Ask(int fd, const std::vector<std::pair<std::string, std::string>>& fields) {
  const std::string m = Pmi2Message(fields);
  EXPECT_EQ(::send(fd, m.data(), m.size(), 0), static_cast<ssize_t>(m.size()));
  return ParsePmi2Command(ReadMessage(fd));
}

TEST(Pmi2Wire, EscapedSemicolonsAndTheLengthHeaderRoundTrip) {
  const std::string m = Pmi2Message({{"cmd", "kvs-put"}, {"key", "a"}, {"value", "x;y"}});
  EXPECT_EQ(m, "29    cmd=kvs-put;key=a;value=x;;y;");
  EXPECT_EQ(ParsePmi2Command(m.substr(6)),
            (std::map<std::string, std::string>{{"cmd", "kvs-put"}, {"key", "a"}, {"value", "x;y"}}));
}

TEST(Pmi2Wire, ProcessMappingGroupsHostsOfEqualSize) {
  MpiStepLayout l;
  l.nodes = {{"n1", "a", {0, 1}}, {"n2", "b", {2, 3}}, {"n3", "c", {4}}};
  EXPECT_EQ(Pmi2ProcessMapping(l), "(vector,(0,2,2),(2,1,1))");
  l.nodes = {{"n1", "a", {0, 1}}, {"n2", "a", {2, 3}}};  // one agent: one host
  EXPECT_EQ(Pmi2ProcessMapping(l), "(vector,(0,1,4))");
}

TEST(Pmi2Server, PutsAreReadAfterTheFenceGatheredFromEveryNode) {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::string> parts;
  Pmi2ServerOptions o;
  o.local_nodes = {"n1"};
  o.send_contribution = [&](std::uint64_t job, std::int32_t step, std::uint64_t fence,
                            std::vector<std::string> nodes, std::string data) {
    EXPECT_EQ(job, 5u);
    EXPECT_EQ(step, 1);
    EXPECT_EQ(fence, 0u);
    EXPECT_EQ(nodes, std::vector<std::string>{"n1"});
    std::lock_guard<std::mutex> lock(mu);
    parts.push_back(std::move(data));
    cv.notify_all();
  };
  Result<std::unique_ptr<Pmi2Server>> server = Pmi2Server::Start(std::move(o));
  ASSERT_TRUE(server.ok());
  MpiStepLayout l;
  l.job = 5;
  l.step = 1;
  l.nodes = {{"n1", "a", {0}}, {"n2", "b", {1}}};
  Result<std::map<int, Pmi2TaskLink>> links = (*server)->AddTasks(l, "n1", {0});
  ASSERT_TRUE(links.ok());
  Pmi2TaskLink& link = links->at(0);
  EXPECT_EQ(link.env.at("PMI_FD"), std::to_string(link.task_end.get()));
  EXPECT_EQ(link.env.at("PMI_SIZE"), "2");
  const int fd = link.task_end.get();
  const std::string init = "cmd=init pmi_version=2 pmi_subversion=0\n";
  ASSERT_EQ(::send(fd, init.data(), init.size(), 0), static_cast<ssize_t>(init.size()));
  char line[128] = {};
  ASSERT_GT(::recv(fd, line, sizeof line - 1, 0), 0);
  EXPECT_STREQ(line, "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0\n");
  auto full = Ask(fd, {{"cmd", "fullinit"}, {"pmirank", "0"}, {"threaded", "FALSE"}});
  EXPECT_EQ(full["rc"], "0");
  EXPECT_EQ(full["rank"], "0");
  EXPECT_EQ(full["size"], "2");
  EXPECT_EQ(Ask(fd, {{"cmd", "kvs-put"}, {"key", "mine"}, {"value", "a;b"}})["rc"], "0");
  // Not readable before the fence.
  EXPECT_EQ(Ask(fd, {{"cmd", "kvs-get"}, {"key", "mine"}})["found"], "FALSE");
  const std::string fence = Pmi2Message({{"cmd", "kvs-fence"}});
  ASSERT_EQ(::send(fd, fence.data(), fence.size(), 0), static_cast<ssize_t>(fence.size()));
  {
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(10), [&] { return !parts.empty(); }));
  }
  // The other node's part, as lockstepd would concatenate them.
  std::string theirs;
  const std::string key = "theirs", value = "v2";
  for (const std::string* s : {&key, &value}) {
    const auto n = static_cast<std::uint32_t>(s->size());
    theirs.append(reinterpret_cast<const char*>(&n), sizeof n);
    theirs += *s;
  }
  (*server)->FenceDone(5, 1, 0, parts.front() + theirs, true);
  EXPECT_EQ(ParsePmi2Command(ReadMessage(fd))["cmd"], "kvs-fence-response");
  auto mine = Ask(fd, {{"cmd", "kvs-get"}, {"key", "mine"}});
  EXPECT_EQ(mine["found"], "TRUE");
  EXPECT_EQ(mine["value"], "a;b");
  EXPECT_EQ(Ask(fd, {{"cmd", "kvs-get"}, {"key", "theirs"}})["value"], "v2");
  EXPECT_EQ(Ask(fd, {{"cmd", "info-getjobattr"}, {"key", "PMI_process_mapping"}})["value"],
            "(vector,(0,2,1))");
  EXPECT_EQ(Ask(fd, {{"cmd", "spawn"}})["rc"], "-1");
  EXPECT_EQ(Ask(fd, {{"cmd", "finalize"}})["rc"], "0");
}

}  // namespace
}  // namespace lockstep::agent
