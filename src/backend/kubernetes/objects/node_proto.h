// Nodes from Kubernetes' protobuf encoding (client/proto_codec.h) in their JSON form, for the
// node informers: a Node's status.images (every image its kubelet holds) is often most of its
// JSON, and nothing in lockstep reads it.
//
// The JSON holds the fields k8s_core.proto declares, as the apiserver's JSON has them, except
// that empty values ("", false, empty lists and maps) are left out where the JSON would carry
// them:
//   metadata: all but managedFields;
//   spec: podCIDR(s), providerID, externalID, unschedulable, taints;
//   status: capacity, allocatable, phase, conditions, addresses (not daemonEndpoints, nodeInfo,
//     images, volumesInUse, volumesAttached, config).
//
//   InformerOptions io;
//   io.protobuf = &NodeJsonFromProto;
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "common/status.h"

namespace lockstep::kube {

// A core/v1 Node message (the raw bytes of its envelope) in JSON form, without apiVersion and
// kind. InvalidArgument when it does not parse, or when its name, namespace, uid,
// resourceVersion or labels are not UTF-8; other strings that are not UTF-8 come with U+FFFD in
// place of each bad byte, as in the apiserver's JSON (proto_json.h).
Result<nlohmann::json> NodeJsonFromProto(std::string_view message);

}  // namespace lockstep::kube
