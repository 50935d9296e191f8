#include "engine/model.h"

namespace lockstep::engine {

const char* PendingReasonName(PendingReason r) {
  switch (r) {
    case PendingReason::kNone:
      return "None";
    case PendingReason::kPriority:
      return "Priority";
    case PendingReason::kResources:
      return "Resources";
    case PendingReason::kDependency:
      return "Dependency";
    case PendingReason::kDependencyNeverSatisfied:
      return "DependencyNeverSatisfied";
    case PendingReason::kBeginTime:
      return "BeginTime";
    case PendingReason::kJobHeldUser:
      return "JobHeldUser";
    case PendingReason::kJobHeldAdmin:
      return "JobHeldAdmin";
    case PendingReason::kPartitionTimeLimit:
      return "PartitionTimeLimit";
    case PendingReason::kPartitionNodeLimit:
      return "PartitionNodeLimit";
    case PendingReason::kPartitionConfig:
      return "PartitionConfig";
    case PendingReason::kReqNodeNotAvail:
      return "ReqNodeNotAvail";
    case PendingReason::kQOSMaxWallDurationPerJobLimit:
      return "QOSMaxWallDurationPerJobLimit";
    case PendingReason::kQOSMaxGRESPerUser:
      return "QOSMaxGRESPerUser";
    case PendingReason::kQOSMaxCpuPerUserLimit:
      return "QOSMaxCpuPerUserLimit";
    case PendingReason::kQOSMaxMemoryPerUser:
      return "QOSMaxMemoryPerUser";
    case PendingReason::kQOSMaxNodePerUserLimit:
      return "QOSMaxNodePerUserLimit";
    case PendingReason::kQOSGrpGRES:
      return "QOSGrpGRES";
    case PendingReason::kQOSGrpCpuLimit:
      return "QOSGrpCpuLimit";
    case PendingReason::kQOSGrpMemLimit:
      return "QOSGrpMemLimit";
    case PendingReason::kQOSGrpNodeLimit:
      return "QOSGrpNodeLimit";
    case PendingReason::kAssocGrpGRES:
      return "AssocGrpGRES";
    case PendingReason::kAssocGrpCpuLimit:
      return "AssocGrpCpuLimit";
    case PendingReason::kAssocGrpMemLimit:
      return "AssocGrpMemLimit";
    case PendingReason::kAssocGrpNodeLimit:
      return "AssocGrpNodeLimit";
    case PendingReason::kJobArrayTaskLimit:
      return "JobArrayTaskLimit";
    case PendingReason::kReservationSearchLimit:
      return "ReservationSearchLimit";
    case PendingReason::kQOSGrpJobsLimit:
      return "QOSGrpJobsLimit";
    case PendingReason::kQOSMaxJobsPerUserLimit:
      return "QOSMaxJobsPerUserLimit";
    case PendingReason::kQOSMaxJobsPerAccountLimit:
      return "QOSMaxJobsPerAccountLimit";
    case PendingReason::kAssocGrpJobsLimit:
      return "AssocGrpJobsLimit";
    case PendingReason::kAssocMaxJobsLimit:
      return "AssocMaxJobsLimit";
    case PendingReason::kBadConstraints:
      return "BadConstraints";
  }
  return "Unknown";
}

}  // namespace lockstep::engine
