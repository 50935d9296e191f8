#include "backend/agent/pmix_server.h"

#include <pmix.h>
#include <pmix_server.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <mutex>

#include "backend/agent/pmix_info.h"

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

int MpiStepLayout::size() const {
  int n = 0;
  for (const auto& node : nodes) n += static_cast<int>(node.ranks.size());
  return n;
}

std::string MpiStepLayout::nspace() const {
  return "lockstep." + std::to_string(job) + "." + std::to_string(step);
}

namespace {

// Waits for a PMIx operation's callback (called on the library's thread).
struct OpWait {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  pmix_status_t status = PMIX_SUCCESS;
  static void Done(pmix_status_t status, void* cbdata) {
    auto* w = static_cast<OpWait*>(cbdata);
    std::lock_guard<std::mutex> lock(w->mu);
    w->status = status;
    w->done = true;
    w->cv.notify_all();
  }
  // `started`: what the call returned. PMIX_OPERATION_SUCCEEDED: done, no callback comes.
  pmix_status_t Wait(pmix_status_t started) {
    if (started == PMIX_OPERATION_SUCCEEDED) return PMIX_SUCCESS;
    if (started != PMIX_SUCCESS) return started;
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [this] { return done; });
    return status;
  }
};

Status PmixError(const std::string& what, pmix_status_t status) {
  return Internal(what + ": " + PMIx_Error_string(status));
}

}  // namespace

struct PmixServer::Impl {
  struct PendingFence {
    pmix_modex_cbfunc_t cbfunc = nullptr;
    void* cbdata = nullptr;
  };
  struct Step {
    MpiStepLayout layout;
    std::vector<std::string> local_nodes;  // the step's nodes this agent serves
    std::set<std::string> running;         // those of them whose tasks run
    std::set<int> clients;                 // the ranks registered here
    std::uint64_t next_fence = 0;
    std::map<std::uint64_t, PendingFence> pending;
  };

  PmixServerOptions options;
  std::mutex registering;  // held through a registration or deregistration
  mutable std::mutex mu;
  std::map<std::string, Step> steps;  // by namespace; guarded by mu

  Status RegisterNamespace(const MpiStepLayout& layout);
  Status RegisterClients(const MpiStepLayout& layout, const std::vector<int>& ranks);
  pmix_status_t Fence(const pmix_proc_t procs[], size_t nprocs, char* data, size_t ndata,
                      pmix_modex_cbfunc_t cbfunc, void* cbdata);
  // Fails the step's pending fences and deregisters its namespace; not under `mu`.
  static void Deregister(const std::string& nspace, Step step);
};

namespace {

// The library calls back without a context of its own: one server per process.
PmixServer::Impl* g_server = nullptr;

pmix_status_t FenceNb(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t*, size_t,
                      char* data, size_t ndata, pmix_modex_cbfunc_t cbfunc, void* cbdata) {
  if (g_server == nullptr) return PMIX_ERR_INIT;
  return g_server->Fence(procs, nprocs, data, ndata, cbfunc, cbdata);
}

pmix_status_t ClientConnected(const pmix_proc_t*, void*, pmix_op_cbfunc_t, void*) {
  return PMIX_OPERATION_SUCCEEDED;
}

pmix_status_t ClientFinalized(const pmix_proc_t*, void*, pmix_op_cbfunc_t, void*) {
  return PMIX_OPERATION_SUCCEEDED;
}

// PMIx_Abort: the task exits with an error after it, which ends the step as any failed task does.
pmix_status_t Abort(const pmix_proc_t*, void*, int, const char*, pmix_proc_t*, size_t,
                    pmix_op_cbfunc_t, void*) {
  return PMIX_OPERATION_SUCCEEDED;
}

}  // namespace

Result<std::unique_ptr<PmixServer>> PmixServer::Start(PmixServerOptions options) {
  if (g_server != nullptr) return FailedPrecondition("a PMIx server already runs in this process");
  // 0755 and ours: tasks of every user read the rendezvous files; nobody else writes here.
  if (::mkdir(options.tmpdir.c_str(), 0755) != 0 && errno != EEXIST)
    return IoError("cannot create " + options.tmpdir + ": " + std::strerror(errno));
  struct stat st {};
  if (::lstat(options.tmpdir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) ||
      st.st_uid != ::geteuid())
    return FailedPrecondition(options.tmpdir + " is not a directory of the agent's own");
  if (::chmod(options.tmpdir.c_str(), 0755) != 0)
    return IoError("cannot chmod " + options.tmpdir + ": " + std::strerror(errno));
  auto impl = std::make_unique<Impl>();
  impl->options = std::move(options);
  static pmix_server_module_t module{};
  module.client_connected = ClientConnected;
  module.client_finalized = ClientFinalized;
  module.abort = Abort;
  module.fence_nb = FenceNb;
  InfoList info;
  info.String(PMIX_SERVER_TMPDIR, impl->options.tmpdir);
  info.String(PMIX_SYSTEM_TMPDIR, impl->options.tmpdir);
  info.Bool(PMIX_SERVER_REMOTE_CONNECTIONS, false);
  info.String(PMIX_TCP_IF_INCLUDE, "lo");
  info.String(PMIX_GDS_MODULE, "hash");
  g_server = impl.get();
  const pmix_status_t rc = PMIx_server_init(&module, info.data(), info.size());
  if (rc != PMIX_SUCCESS) {
    g_server = nullptr;
    return PmixError("PMIx_server_init", rc);
  }
  return std::unique_ptr<PmixServer>(new PmixServer(std::move(impl)));
}

PmixServer::PmixServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

PmixServer::~PmixServer() {
  std::map<std::string, Impl::Step> steps;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    steps.swap(impl_->steps);
  }
  for (auto& [nspace, step] : steps) Impl::Deregister(nspace, std::move(step));
  (void)PMIx_server_finalize();
  g_server = nullptr;
}

Result<std::map<int, std::map<std::string, std::string>>> PmixServer::AddTasks(
    const MpiStepLayout& layout, const std::string& node, const std::vector<int>& ranks) {
  // Registrations one at a time, and never under `mu`: the library's thread, which completes
  // them, may be waiting for `mu` in a fence.
  std::lock_guard<std::mutex> registering(impl_->registering);
  const std::string nspace = layout.nspace();
  bool known = false;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    known = impl_->steps.count(nspace) > 0;
  }
  if (!known) {
    Impl::Step step;
    step.layout = layout;
    for (const MpiNode& n : layout.nodes)
      if (impl_->options.local_nodes.count(n.node)) step.local_nodes.push_back(n.node);
    LOCKSTEP_RETURN_IF_ERROR(impl_->RegisterNamespace(step.layout));
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->steps.emplace(nspace, std::move(step));
  }
  std::vector<int> fresh;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    Impl::Step& step = impl_->steps.at(nspace);
    step.running.insert(node);
    for (int rank : ranks)
      if (step.clients.insert(rank).second) fresh.push_back(rank);
  }
  LOCKSTEP_RETURN_IF_ERROR(impl_->RegisterClients(layout, fresh));
  std::map<int, std::map<std::string, std::string>> envs;
  for (int rank : ranks) {
    pmix_proc_t proc;
    PMIX_PROC_LOAD(&proc, nspace.c_str(), static_cast<pmix_rank_t>(rank));
    char** env = nullptr;
    const pmix_status_t rc = PMIx_server_setup_fork(&proc, &env);
    if (rc != PMIX_SUCCESS) return PmixError("PMIx_server_setup_fork", rc);
    for (char** e = env; e != nullptr && *e != nullptr; ++e) {
      const std::string kv = *e;
      const std::size_t eq = kv.find('=');
      if (eq != std::string::npos) envs[rank][kv.substr(0, eq)] = kv.substr(eq + 1);
      std::free(*e);
    }
    std::free(env);
    // Tasks read the step's values from the server over their connection, not from its
    // shared-memory stores: files of the agent's, which tasks of other users cannot lock.
    envs[rank]["PMIX_GDS_MODULE"] = "hash";
    envs[rank].erase("PMIX_DSTORE_21_BASE_PATH");
    envs[rank].erase("PMIX_DSTORE_ESH_BASE_PATH");
  }
  return envs;
}

Status PmixServer::Impl::RegisterNamespace(const MpiStepLayout& layout) {
  Result<InfoList> info = NamespaceInfo(layout, options.local_nodes);
  if (!info.ok()) return info.status();
  int local = 0;
  for (const MpiNode& n : layout.nodes)
    if (options.local_nodes.count(n.node)) local += static_cast<int>(n.ranks.size());
  OpWait wait;
  const std::string nspace = layout.nspace();
  const pmix_status_t rc = wait.Wait(PMIx_server_register_nspace(
      nspace.c_str(), local, info->data(), info->size(), OpWait::Done, &wait));
  if (rc != PMIX_SUCCESS) return PmixError("PMIx_server_register_nspace " + nspace, rc);
  return Status::Ok();
}

Status PmixServer::Impl::RegisterClients(const MpiStepLayout& layout,
                                         const std::vector<int>& ranks) {
  const std::string nspace = layout.nspace();
  for (int rank : ranks) {
    pmix_proc_t proc;
    PMIX_PROC_LOAD(&proc, nspace.c_str(), static_cast<pmix_rank_t>(rank));
    OpWait wait;
    // The library refuses a connection for this rank from any other uid or gid.
    const pmix_status_t rc = wait.Wait(PMIx_server_register_client(
        &proc, layout.uid, layout.gid, nullptr, OpWait::Done, &wait));
    if (rc != PMIX_SUCCESS)
      return PmixError("PMIx_server_register_client " + nspace + " rank " + std::to_string(rank),
                       rc);
  }
  return Status::Ok();
}

pmix_status_t PmixServer::Impl::Fence(const pmix_proc_t procs[], size_t nprocs, char* data,
                                      size_t ndata, pmix_modex_cbfunc_t cbfunc, void* cbdata) {
  if (nprocs == 0) return PMIX_ERR_BAD_PARAM;
  std::vector<std::string> nodes;
  std::uint64_t fence = 0;
  MpiStepLayout layout;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = steps.find(procs[0].nspace);
    if (it == steps.end()) return PMIX_ERR_NOT_FOUND;
    Step& step = it->second;
    // Only fences of the whole step: every node takes part, so the gather knows its members.
    const bool whole = nprocs == 1 && procs[0].rank == PMIX_RANK_WILDCARD;
    if (!whole && static_cast<int>(nprocs) != step.layout.size()) return PMIX_ERR_NOT_SUPPORTED;
    for (size_t i = 0; i < nprocs; ++i)
      if (!PMIX_CHECK_NSPACE(procs[i].nspace, procs[0].nspace)) return PMIX_ERR_NOT_SUPPORTED;
    fence = step.next_fence++;
    step.pending[fence] = {cbfunc, cbdata};
    nodes = step.local_nodes;
    layout = step.layout;
  }
  options.send_contribution(layout.job, layout.step, fence, std::move(nodes),
                            std::string(data == nullptr ? "" : data, ndata));
  return PMIX_SUCCESS;
}

namespace {

// The gathered data, kept until the library has read it.
void ReleaseData(void* cbdata) {
  delete static_cast<std::string*>(cbdata);
}

}  // namespace

void PmixServer::FenceDone(std::uint64_t job, std::int32_t step, std::uint64_t fence,
                           std::string data, bool ok) {
  Impl::PendingFence pending;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    auto it = impl_->steps.find(StepNamespace(job, step));
    if (it == impl_->steps.end()) return;
    auto p = it->second.pending.find(fence);
    if (p == it->second.pending.end()) return;  // answered already (an agent of two nodes)
    pending = p->second;
    it->second.pending.erase(p);
  }
  if (!ok) {
    pending.cbfunc(PMIX_ERR_TIMEOUT, nullptr, 0, pending.cbdata, nullptr, nullptr);
    return;
  }
  auto* kept = new std::string(std::move(data));
  pending.cbfunc(PMIX_SUCCESS, kept->data(), kept->size(), pending.cbdata, ReleaseData, kept);
}

void PmixServer::NodeEnded(std::uint64_t job, std::int32_t step, const std::string& node) {
  std::lock_guard<std::mutex> registering(impl_->registering);
  const std::string nspace = StepNamespace(job, step);
  Impl::Step ended;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    auto it = impl_->steps.find(nspace);
    if (it == impl_->steps.end()) return;
    it->second.running.erase(node);
    if (!it->second.running.empty()) return;
    ended = std::move(it->second);
    impl_->steps.erase(it);
  }
  Impl::Deregister(nspace, std::move(ended));
}

void PmixServer::Impl::Deregister(const std::string& nspace, Step step) {
  // Fences still waiting fail: their tasks are gone or going.
  for (auto& [fence, pending] : step.pending)
    pending.cbfunc(PMIX_ERR_TIMEOUT, nullptr, 0, pending.cbdata, nullptr, nullptr);
  OpWait wait;
  PMIx_server_deregister_nspace(nspace.c_str(), OpWait::Done, &wait);
  (void)wait.Wait(PMIX_SUCCESS);
}

std::size_t PmixServer::StepsForTest() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->steps.size();
}

}  // namespace lockstep::agent
