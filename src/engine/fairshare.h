// Fair Tree fair share (Slurm's default since 19.05): siblings are ranked by Level Fairshare
// (normalised shares over normalised usage), the account tree is walked depth first in that
// order, and each user association's factor is its rank over the number of associations, so
// every user under a better-served account ranks below every user under a worse-served one.
#pragma once

#include <vector>

#include "engine/model.h"

namespace lockstep::engine {

// The fair-share factor in [0, 1] of every association, indexed like Snapshot::associations.
std::vector<double> FairTreeFactors(const std::vector<Account>& accounts,
                                    const std::vector<Association>& associations);

// Usage decayed by a half-life: what `usage` is worth `elapsed` seconds later.
double DecayUsage(double usage, Seconds elapsed, Seconds half_life);

}  // namespace lockstep::engine
