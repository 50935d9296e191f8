#include "backend/agent/pmi2_server.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>

#include "common/log.h"

namespace lockstep::agent {

namespace {

// The namespace of a step (MpiStepLayout::nspace) from its ids alone.
std::string StepNamespace(std::uint64_t job, std::int32_t step) {
  MpiStepLayout layout;
  layout.job = job;
  layout.step = step;
  return layout.nspace();
}

}  // namespace

std::map<std::string, std::string> ParsePmi2Command(const std::string& body) {
  std::map<std::string, std::string> fields;
  std::string key, value;
  bool in_value = false;
  for (std::size_t i = 0; i < body.size(); ++i) {
    const char c = body[i];
    if (c == ';' && i + 1 < body.size() && body[i + 1] == ';') {  // an escaped ';'
      (in_value ? value : key) += ';';
      ++i;
    } else if (c == ';') {
      if (!key.empty()) fields[key] = value;
      key.clear(), value.clear();
      in_value = false;
    } else if (c == '=' && !in_value) {
      in_value = true;
    } else {
      (in_value ? value : key) += c;
    }
  }
  if (!key.empty()) fields[key] = value;
  return fields;
}

std::string Pmi2Message(const std::vector<std::pair<std::string, std::string>>& fields) {
  std::string body;
  for (const auto& [key, value] : fields) {
    body += key + "=";
    for (char c : value) body += c == ';' ? std::string(";;") : std::string(1, c);
    body += ";";
  }
  char header[8];
  std::snprintf(header, sizeof header, "%-6zu", body.size());
  return std::string(header, 6) + body;
}

std::string Pmi2ProcessMapping(const MpiStepLayout& layout) {
  const std::vector<MpiHost> hosts = MpiHostsOf(layout, {});
  std::string out = "(vector";
  for (std::size_t i = 0; i < hosts.size();) {
    std::size_t j = i;
    while (j < hosts.size() && hosts[j].ranks.size() == hosts[i].ranks.size()) ++j;
    out += ",(" + std::to_string(i) + "," + std::to_string(j - i) + "," +
           std::to_string(hosts[i].ranks.size()) + ")";
    i = j;
  }
  return out + ")";
}

namespace {

// A fence's part: each put as [key length][key][value length][value], lengths 4 bytes each,
// so that parts concatenated still read back one by one.
void AppendEntry(std::string& out, const std::string& key, const std::string& value) {
  for (const std::string* s : {&key, &value}) {
    const auto n = static_cast<std::uint32_t>(s->size());
    out.append(reinterpret_cast<const char*>(&n), sizeof n);
    out += *s;
  }
}

bool ReadEntries(const std::string& data, std::map<std::string, std::string>& into) {
  std::size_t at = 0;
  while (at < data.size()) {
    std::string parts[2];
    for (std::string& s : parts) {
      std::uint32_t n = 0;
      if (data.size() - at < sizeof n) return false;
      std::memcpy(&n, data.data() + at, sizeof n);
      at += sizeof n;
      if (data.size() - at < n) return false;
      s = data.substr(at, n);
      at += n;
    }
    into[parts[0]] = parts[1];
  }
  return true;
}

}  // namespace

struct Pmi2Server::Impl {
  struct Conn {
    std::string nspace;
    int rank = 0;
    UniqueFd fd;
    std::string in;
    bool greeted = false;  // the PMI-1 style "cmd=init" line came
    bool fencing = false;  // waits for its fence's end
  };
  struct Step {
    MpiStepLayout layout;
    std::set<std::string> running;  // its local nodes whose tasks run
    int local_tasks = 0;
    std::map<std::string, std::string> kvs;         // every task's puts, as of the last fence
    std::map<std::string, std::string> puts;        // this agent's tasks' puts since then
    std::map<std::string, std::string> node_attrs;  // this host's
    int fencing = 0;
    std::uint64_t next_fence = 0;
  };

  Pmi2ServerOptions options;
  std::mutex mu;
  std::map<std::string, Step> steps;              // by namespace; guarded by mu
  std::map<int, std::unique_ptr<Conn>> conns;     // by the server's descriptor; guarded by mu
  UniqueFd wake_read, wake_write;
  bool stopping = false;  // guarded by mu
  std::thread thread;

  void Wake() { [[maybe_unused]] ssize_t n = ::write(wake_write.get(), "x", 1); }
  void Loop();
  // Reads what came on `fd`; false when the task closed it. Requires mu.
  bool ReadLocked(Conn& c);
  void HandleLocked(Conn& c, const std::string& body);
  void Reply(Conn& c, const std::vector<std::pair<std::string, std::string>>& fields) {
    const std::string m = Pmi2Message(fields);
    // A blocking socket: tasks read their answers at once (each waits for it).
    for (std::size_t off = 0; off < m.size();) {
      const ssize_t n = ::send(c.fd.get(), m.data() + off, m.size() - off, MSG_NOSIGNAL);
      if (n <= 0) return;
      off += static_cast<std::size_t>(n);
    }
  }
};

Result<std::unique_ptr<Pmi2Server>> Pmi2Server::Start(Pmi2ServerOptions options) {
  auto impl = std::make_unique<Impl>();
  impl->options = std::move(options);
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0)
    return IoError(std::string("PMI-2 server: pipe: ") + std::strerror(errno));
  impl->wake_read.Reset(fds[0]);
  impl->wake_write.Reset(fds[1]);
  Impl* raw = impl.get();
  impl->thread = std::thread([raw] { raw->Loop(); });
  return std::unique_ptr<Pmi2Server>(new Pmi2Server(std::move(impl)));
}

Pmi2Server::Pmi2Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Pmi2Server::~Pmi2Server() {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->stopping = true;
  }
  impl_->Wake();
  impl_->thread.join();
}

Result<std::map<int, Pmi2TaskLink>> Pmi2Server::AddTasks(const MpiStepLayout& layout,
                                                         const std::string& node,
                                                         const std::vector<int>& ranks) {
  std::map<int, Pmi2TaskLink> links;
  const std::string nspace = layout.nspace();
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    auto [it, fresh] = impl_->steps.try_emplace(nspace);
    Impl::Step& step = it->second;
    if (fresh) {
      step.layout = layout;
      for (const MpiNode& n : layout.nodes)
        if (impl_->options.local_nodes.count(n.node))
          step.local_tasks += static_cast<int>(n.ranks.size());
    }
    step.running.insert(node);
    for (int rank : ranks) {
      int pair[2];
      if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
        return IoError(std::string("PMI-2 server: socketpair: ") + std::strerror(errno));
      auto conn = std::make_unique<Impl::Conn>();
      conn->nspace = nspace;
      conn->rank = rank;
      conn->fd.Reset(pair[0]);
      Pmi2TaskLink& link = links[rank];
      link.task_end.Reset(pair[1]);
      link.env = {{"PMI_FD", std::to_string(pair[1])},
                  {"PMI_RANK", std::to_string(rank)},
                  {"PMI_SIZE", std::to_string(layout.size())},
                  {"PMI_JOBID", std::to_string(layout.job) + "." + std::to_string(layout.step)},
                  {"PMI_SPAWNED", "0"}};
      impl_->conns[pair[0]] = std::move(conn);
    }
  }
  impl_->Wake();  // poll the new connections
  return links;
}

void Pmi2Server::NodeEnded(std::uint64_t job, std::int32_t step, const std::string& node) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  const std::string nspace = StepNamespace(job, step);
  auto it = impl_->steps.find(nspace);
  if (it == impl_->steps.end()) return;
  it->second.running.erase(node);
  if (!it->second.running.empty()) return;
  impl_->steps.erase(it);
  std::erase_if(impl_->conns, [&](const auto& c) { return c.second->nspace == nspace; });
  impl_->Wake();
}

void Pmi2Server::FenceDone(std::uint64_t job, std::int32_t step_id, std::uint64_t fence,
                           std::string data, bool ok) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  const std::string nspace = StepNamespace(job, step_id);
  auto it = impl_->steps.find(nspace);
  if (it == impl_->steps.end() || it->second.fencing == 0 || it->second.next_fence != fence + 1)
    return;  // not ours, or answered already (an agent of two nodes gets it once per agent)
  Impl::Step& step = it->second;
  ok = ok && ReadEntries(data, step.kvs);
  step.fencing = 0;
  for (auto& [fd, conn] : impl_->conns)
    if (conn->nspace == nspace && conn->fencing) {
      conn->fencing = false;
      if (ok)
        impl_->Reply(*conn, {{"cmd", "kvs-fence-response"}, {"rc", "0"}});
      else
        impl_->Reply(*conn, {{"cmd", "kvs-fence-response"}, {"rc", "-1"},
                             {"errmsg", "a node of the step ended during the fence"}});
    }
}

void Pmi2Server::Impl::Loop() {
  while (true) {
    std::vector<pollfd> fds = {{wake_read.get(), POLLIN, 0}};
    {
      std::lock_guard<std::mutex> lock(mu);
      if (stopping) return;
      for (const auto& [fd, conn] : conns) fds.push_back({fd, POLLIN, 0});
    }
    if (::poll(fds.data(), fds.size(), -1) < 0 && errno != EINTR) return;
    char drain[64];
    while (::read(wake_read.get(), drain, sizeof drain) > 0) {
    }
    std::lock_guard<std::mutex> lock(mu);
    for (std::size_t i = 1; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      auto it = conns.find(fds[i].fd);
      if (it == conns.end()) continue;  // gone meanwhile
      if (!ReadLocked(*it->second)) conns.erase(it);
    }
  }
}

bool Pmi2Server::Impl::ReadLocked(Conn& c) {
  char buf[4096];
  const ssize_t n = ::recv(c.fd.get(), buf, sizeof buf, MSG_DONTWAIT);
  if (n == 0) return false;
  if (n < 0) return errno == EAGAIN || errno == EINTR;
  c.in.append(buf, static_cast<std::size_t>(n));
  while (true) {
    if (!c.greeted) {  // PMI-1's framing: one line
      const std::size_t eol = c.in.find('\n');
      if (eol == std::string::npos) return c.in.size() < 1024;
      const std::string line = c.in.substr(0, eol);
      c.in.erase(0, eol + 1);
      if (line.rfind("cmd=init", 0) != 0) return false;
      const std::string answer = "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0\n";
      if (::send(c.fd.get(), answer.data(), answer.size(), MSG_NOSIGNAL) < 0) return false;
      c.greeted = true;
      continue;
    }
    if (c.in.size() < 6) return true;
    const long length = std::strtol(c.in.substr(0, 6).c_str(), nullptr, 10);
    if (length <= 0 || length > 1 << 20) return false;  // not PMI-2: drop the connection
    if (c.in.size() < 6 + static_cast<std::size_t>(length)) return true;
    const std::string body = c.in.substr(6, static_cast<std::size_t>(length));
    c.in.erase(0, 6 + static_cast<std::size_t>(length));
    HandleLocked(c, body);
  }
}

void Pmi2Server::Impl::HandleLocked(Conn& c, const std::string& body) {
  std::map<std::string, std::string> f = ParsePmi2Command(body);
  const std::string cmd = f["cmd"];
  auto step_it = steps.find(c.nspace);
  if (step_it == steps.end()) return;
  Step& step = step_it->second;
  const std::string jobid = std::to_string(step.layout.job) + "." + std::to_string(step.layout.step);
  const auto found = [](const std::map<std::string, std::string>& m, const std::string& key)
      -> std::vector<std::pair<std::string, std::string>> {
    auto it = m.find(key);
    if (it == m.end()) return {{"rc", "0"}, {"found", "FALSE"}};
    return {{"rc", "0"}, {"found", "TRUE"}, {"value", it->second}};
  };
  std::vector<std::pair<std::string, std::string>> answer = {{"cmd", cmd + "-response"}};
  if (cmd == "fullinit") {
    answer.insert(answer.end(), {{"rc", "0"},
                                 {"pmi-version", "2"},
                                 {"pmi-subversion", "0"},
                                 {"rank", std::to_string(c.rank)},
                                 {"size", std::to_string(step.layout.size())},
                                 {"appnum", "0"},
                                 {"debugged", "FALSE"},
                                 {"pmiverbose", "FALSE"}});
  } else if (cmd == "job-getid") {
    answer.insert(answer.end(), {{"rc", "0"}, {"jobid", jobid}});
  } else if (cmd == "kvs-put") {
    step.puts[f["key"]] = f["value"];
    answer.push_back({"rc", "0"});
  } else if (cmd == "kvs-get") {
    auto more = found(step.kvs, f["key"]);
    answer.insert(answer.end(), more.begin(), more.end());
  } else if (cmd == "kvs-fence") {
    c.fencing = true;
    if (++step.fencing < step.local_tasks) return;  // answered when the fence ends
    std::string part;
    for (const auto& [key, value] : step.puts) AppendEntry(part, key, value);
    step.puts.clear();
    std::vector<std::string> nodes;
    for (const MpiNode& n : step.layout.nodes)
      if (options.local_nodes.count(n.node)) nodes.push_back(n.node);
    options.send_contribution(step.layout.job, step.layout.step, step.next_fence++,
                              std::move(nodes), std::move(part));
    return;
  } else if (cmd == "info-getjobattr") {
    std::map<std::string, std::string> attrs = {
        {"PMI_process_mapping", Pmi2ProcessMapping(step.layout)}};
    auto more = found(attrs, f["key"]);
    answer.insert(answer.end(), more.begin(), more.end());
  } else if (cmd == "info-putnodeattr") {
    step.node_attrs[f["key"]] = f["value"];
    answer.push_back({"rc", "0"});
  } else if (cmd == "info-getnodeattr") {
    auto more = found(step.node_attrs, f["key"]);
    answer.insert(answer.end(), more.begin(), more.end());
  } else if (cmd == "finalize") {
    answer.push_back({"rc", "0"});
  } else if (cmd == "abort") {
    log::Warning("step {} rank {} called PMI2_Abort: {}", jobid, c.rank, f["msg"]);
    return;  // the task exits; its step ends as a failed task's does
  } else {
    answer.insert(answer.end(), {{"rc", "-1"}, {"errmsg", "not supported by lockstep's PMI-2 server"}});
  }
  Reply(c, answer);
}

}  // namespace lockstep::agent
