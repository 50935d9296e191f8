// What the web view and sshare read of the scheduler's policy: the QoS list and the fair-share
// tree (docs/observability.md, "Fair share and QoS"), from the cluster the engine is given.
#include <cmath>

#include "controller/controller.h"
#include "controller/fair_share_tree.h"

namespace lockstep::controller {
namespace {

nlohmann::json SecondsOrNull(Seconds s) {
  return s >= kUnlimited ? nlohmann::json(nullptr) : nlohmann::json(s);
}

// A TRES limit as sacctmgr prints it: "cpu=64,mem=512000M,node=4,gres/gpu=16"; "" unlimited.
std::string TresText(const engine::TresLimit& t) {
  std::string out;
  auto add = [&](const char* name, std::int64_t v, const char* unit) {
    if (v >= kUnlimited) return;
    if (!out.empty()) out += ',';
    out += std::string(name) + "=" + std::to_string(v) + unit;
  };
  add("cpu", t.cpus, "");
  add("mem", t.mem_mb, "M");
  add("node", t.nodes, "");
  add("gres/gpu", t.gpus, "");
  return out;
}

const char* PreemptModeName(engine::PreemptMode m) {
  switch (m) {
    case engine::PreemptMode::kOff: return "OFF";
    case engine::PreemptMode::kCancel: return "CANCEL";
    case engine::PreemptMode::kRequeue: return "REQUEUE";
  }
  return "OFF";
}

nlohmann::json NumberOrNull(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

}  // namespace

nlohmann::json Controller::ListQos() const {
  HeldLock lock(*this);
  const std::vector<engine::Qos>& all = cluster_.base.qos;
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t i = 0; i < all.size(); ++i) {
    const engine::Qos& q = all[i];
    nlohmann::json preempt = nlohmann::json::array();
    for (std::uint32_t p : q.preempts)
      if (p < all.size()) preempt.push_back(all[p].name);
    out.push_back({{"name", q.name},
                   {"default", i == cluster_.default_qos},
                   {"priority", q.priority},
                   {"max_wall", SecondsOrNull(q.max_wall)},
                   {"max_tres_per_user", TresText(q.max_tres_per_user)},
                   {"grp_tres", TresText(q.grp_tres)},
                   {"preempt", std::move(preempt)},
                   {"preempt_mode", PreemptModeName(q.preempt_mode)},
                   {"grace_time", q.grace_time}});
  }
  return {{"qos", std::move(out)}};
}

nlohmann::json Controller::Shares() const {
  std::vector<ShareRow> rows;
  std::uint32_t weight = 0;
  {
    HeldLock lock(*this);
    rows = FairShareTree(cluster_.base.accounts, cluster_.base.associations, cluster_.users);
    weight = cluster_.policy.weights.fairshare;
  }
  nlohmann::json out = nlohmann::json::array();
  for (const ShareRow& r : rows) {
    nlohmann::json j = {{"account", r.account},
                        {"user", r.user},
                        {"parent", r.parent},
                        {"depth", r.depth},
                        {"raw_shares", r.raw_shares},
                        {"norm_shares", r.norm_shares},
                        {"raw_usage", r.raw_usage},
                        {"norm_usage", r.norm_usage},
                        {"effective_usage", r.effective_usage},
                        {"level_fs", NumberOrNull(r.level_fs)},
                        {"fairshare", r.fairshare >= 0 ? nlohmann::json(r.fairshare)
                                                       : nlohmann::json(nullptr)}};
    out.push_back(std::move(j));
  }
  return {{"shares", std::move(out)}, {"fairshare_weight", weight}};
}

}  // namespace lockstep::controller
