// Rolling node maintenance (`lockstep drain --rolling`, docs/commands.md): drain a batch of
// nodes, wait for its jobs to end (or a deadline, then requeue or cancel them), run the
// operator's --exec once for the batch, resume it, go on with the next batch. Built on
// lockstepd's REST API only (node state, jobs with their nodes, requeue, cancel), so it works
// with any backend. Single-threaded; the caller owns the ApiClient.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "client/api_client.h"
#include "common/status.h"
#include "common/types.h"

namespace lockstep::cli {

// The reason prefix that marks a drain as this command's own: a node drained with it (say, by
// an earlier run that was interrupted) is taken back and resumed; any other drain is not ours.
inline constexpr const char* kRollingReasonPrefix = "rolling maintenance";

// What `lockstep drain --rolling` was asked; defaults as documented in docs/commands.md.
struct RollingDrainOptions {
  std::vector<std::string> nodes;   // expanded, duplicates dropped, in the order given
  int batch = 1;                    // nodes drained at a time (--batch, --max-unavailable)
  std::optional<Seconds> deadline;  // after it, jobs left on the batch are requeued or cancelled
  std::string exec;                 // run once per batch through /bin/sh -c; empty: none
  std::string reason;               // the operator's text
  bool resume = true;
  bool dry_run = false;
  bool json = false;
  double interval_s = 1.0;  // how often lockstepd is polled
  // --reservation NAME: the maintenance waits for this reservation's window (its nodes take no
  // job that would run into it) and works in it; empty: starts at once.
  std::string reservation;
};

// --reservation NAME: the reservation's nodes, in the cluster's order; NotFound when lockstepd
// has no such reservation.
Result<std::vector<std::string>> ReservationNodes(client::ApiClient& api, const std::string& name);

// What lockstepd says of one node before anything changes.
struct NodeBefore {
  std::string name;
  std::string state;   // sinfo's long state, without the "*" of a node that does not respond
  std::string reason;  // the operator's reason, if drained or down
  // Drained or down by someone else, for another reason: maintained with its batch, never
  // drained again (its reason stays) and never resumed.
  bool held = false;
};

// Expands NODES (several words are joined as one hostlist), dropping duplicates, in order.
Result<std::vector<std::string>> ExpandNodes(const std::vector<std::string>& words);

// Reads every named node from lockstepd. An unknown name is a NotFound naming all unknown ones,
// so that nothing changes before every name was checked.
Result<std::vector<NodeBefore>> ReadNodes(client::ApiClient& api,
                                          const std::vector<std::string>& names);

// POST /api/v1/nodes/{node}/state: DRAIN, RESUME or DOWN with a reason.
Status SetNodeState(client::ApiClient& api, const std::string& node, const std::string& state,
                    const std::string& reason);

// Runs the maintenance of `nodes` (from ReadNodes, in order) and prints its progress; returns
// the process exit code: 0 done, 1 a failure (an --exec that failed, an API error), 128+N when
// signal N (SIGINT, SIGTERM) stopped it. Installs handlers for SIGINT and SIGTERM.
int RunRollingDrain(client::ApiClient& api, RollingDrainOptions options,
                    std::vector<NodeBefore> nodes);

}  // namespace lockstep::cli
