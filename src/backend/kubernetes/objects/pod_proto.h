// Pods from Kubernetes' protobuf encoding (client/proto_codec.h) in their JSON form, for the
// informers that watch many pods (the gang scheduler's): the apiserver encodes protobuf about
// twice as fast as JSON, in less than half the bytes, and lockstep decodes it faster too.
//
// The JSON holds the fields k8s_core.proto declares, as the apiserver's JSON has them, except
// that empty values ("", 0, false, empty lists and maps) are left out where the JSON would
// carry them:
//   metadata: all but managedFields;
//   spec: containers and initContainers (name, image, command, args, workingDir, ports, env
//     without valueFrom, resources, restartPolicy, imagePullPolicy, terminationMessage*), nodeName,
//     schedulerName, nodeSelector, affinity.nodeAffinity, tolerations, priority,
//     priorityClassName, preemptionPolicy, overhead, restartPolicy, the grace and deadline
//     seconds, dnsPolicy, serviceAccount(Name), hostNetwork, hostname, subdomain,
//     runtimeClassName, enableServiceLinks;
//   status: all but ephemeralContainerStatuses.
// Readers of other fields (volumes, probes, podAffinity...) must watch in JSON.
//
//   InformerOptions io;
//   io.protobuf = &PodJsonFromProto;  // or &SchedulingPodJsonFromProto
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "common/status.h"

namespace lockstep::kube {

// A core/v1 Pod message (the raw bytes of its envelope) in JSON form, without apiVersion and
// kind. InvalidArgument when it does not parse, or when its name, namespace, uid,
// resourceVersion, labels or spec.nodeName are not UTF-8; other strings that are not UTF-8 come
// with U+FFFD in place of each bad byte, as in the apiserver's JSON (proto_json.h).
Result<nlohmann::json> PodJsonFromProto(std::string_view message);

// The same for a scheduler's table of pods, which keeps what placing and following pods read:
// an unbound pod's containers and initContainers hold only their name, resources and
// restartPolicy (a first list decodes every pending pod, and its image, command and env are
// most of it); a pod bound to a node (spec.nodeName set, which is for good) comes without
// containers, initContainers, nodeSelector, affinity, tolerations and overhead. Every Binding
// brings an update of its pod, and a bound pod is then some tens of JSON values instead of a
// hundred or more; its life (status, deletion, labels) is all there.
Result<nlohmann::json> SchedulingPodJsonFromProto(std::string_view message);

}  // namespace lockstep::kube
