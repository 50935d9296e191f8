// Kubernetes Events (core/v1) about pods and PodGroups, as kube-scheduler posts them: what
// `kubectl describe pod` shows under "Events".
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "backend/kubernetes/client/kube_client.h"
#include "common/clock.h"
#include "common/status.h"

namespace lockstep::kube {

// Stateless apart from the client (not owned; must outlive it). Thread-safe.
class GangEvents {
 public:
  // `clock` stamps the Events (must outlive this).
  GangEvents(KubeClient* client, std::string component, const lockstep::Clock& clock = SystemClock())
      : client_(client), component_(component), clock_(clock) {}

  // POSTs an Event in the object's namespace whose involvedObject is `object` (a Pod or a
  // PodGroup as the apiserver returned it). `type` is "Normal" or "Warning".
  Status Post(const nlohmann::json& object, const std::string& type, const std::string& reason,
              const std::string& message);

 private:
  KubeClient* const client_;
  const std::string component_;
  const lockstep::Clock& clock_;
};

// The Event object Post() sends, at `now_rfc3339` ("2024-05-01T10:00:00Z").
nlohmann::json EventObject(const nlohmann::json& object, const std::string& type,
                           const std::string& reason, const std::string& message,
                           const std::string& component, const std::string& now_rfc3339);

}  // namespace lockstep::kube
