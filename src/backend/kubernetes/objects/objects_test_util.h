// Objects as a v1.20 apiserver returns them (GET /api/v1/nodes/<name>, /api/v1/pods), trimmed of
// fields the mapping never reads (images, managedFields), for the tests of this folder.
#pragma once

#include <nlohmann/json.hpp>

namespace lockstep::kube::testing {

// An 8 x A100-80GB node of a DGX-like cluster, Ready, in zone us-east-1a, rack r07.
inline nlohmann::json GpuNode() {
  return nlohmann::json::parse(R"({
  "kind": "Node",
  "apiVersion": "v1",
  "metadata": {
    "name": "gpu-a-07",
    "uid": "6a1d2c0e-3f4b-4c1a-9e2d-5b7f8a9c0d1e",
    "resourceVersion": "4823917",
    "creationTimestamp": "2024-03-02T10:11:12Z",
    "labels": {
      "beta.kubernetes.io/arch": "amd64",
      "beta.kubernetes.io/os": "linux",
      "kubernetes.io/arch": "amd64",
      "kubernetes.io/hostname": "gpu-a-07",
      "kubernetes.io/os": "linux",
      "node.kubernetes.io/instance-type": "p4de.24xlarge",
      "topology.kubernetes.io/region": "us-east-1",
      "topology.kubernetes.io/zone": "us-east-1a",
      "topology.lockstep.dev/rack": "r07",
      "nvidia.com/gpu.clique": "7b3c1f9e-aa01-4c2d-8e11-000000000001.1",
      "nvidia.com/gpu.count": "8",
      "nvidia.com/gpu.family": "ampere",
      "nvidia.com/gpu.memory": "81920",
      "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB",
      "nvidia.com/mig.strategy": "mixed",
      "feature.lockstep.dev/ib": "true",
      "feature.lockstep.dev/nvme": "false"
    },
    "annotations": {
      "node.alpha.kubernetes.io/ttl": "0",
      "volumes.kubernetes.io/controller-managed-attach-detach": "true"
    }
  },
  "spec": {
    "podCIDR": "10.244.7.0/24",
    "podCIDRs": ["10.244.7.0/24"],
    "providerID": "aws:///us-east-1a/i-0abc1234def567890"
  },
  "status": {
    "capacity": {
      "cpu": "96",
      "ephemeral-storage": "479151816Ki",
      "hugepages-1Gi": "0",
      "hugepages-2Mi": "0",
      "memory": "1176621896Ki",
      "nvidia.com/gpu": "8",
      "pods": "110"
    },
    "allocatable": {
      "cpu": "95690m",
      "ephemeral-storage": "441586359206",
      "hugepages-1Gi": "0",
      "hugepages-2Mi": "0",
      "memory": "1175470920Ki",
      "nvidia.com/gpu": "8",
      "pods": "110"
    },
    "conditions": [
      {"type": "MemoryPressure", "status": "False", "lastHeartbeatTime": "2024-05-01T12:00:00Z",
       "lastTransitionTime": "2024-03-02T10:11:12Z", "reason": "KubeletHasSufficientMemory",
       "message": "kubelet has sufficient memory available"},
      {"type": "DiskPressure", "status": "False", "lastHeartbeatTime": "2024-05-01T12:00:00Z",
       "lastTransitionTime": "2024-03-02T10:11:12Z", "reason": "KubeletHasNoDiskPressure",
       "message": "kubelet has no disk pressure"},
      {"type": "PIDPressure", "status": "False", "lastHeartbeatTime": "2024-05-01T12:00:00Z",
       "lastTransitionTime": "2024-03-02T10:11:12Z", "reason": "KubeletHasSufficientPID",
       "message": "kubelet has sufficient PID available"},
      {"type": "Ready", "status": "True", "lastHeartbeatTime": "2024-05-01T12:00:00Z",
       "lastTransitionTime": "2024-03-02T10:12:40Z", "reason": "KubeletReady",
       "message": "kubelet is posting ready status"}
    ],
    "addresses": [
      {"type": "InternalIP", "address": "10.0.7.21"},
      {"type": "Hostname", "address": "gpu-a-07"}
    ],
    "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
    "nodeInfo": {
      "machineID": "ec2a1b2c3d4e5f60718293a4b5c6d7e8",
      "systemUUID": "ec2a1b2c-3d4e-5f60-7182-93a4b5c6d7e8",
      "bootID": "1f2e3d4c-5b6a-7980-a1b2-c3d4e5f60718",
      "kernelVersion": "5.10.215-203.850.amzn2.x86_64",
      "osImage": "Amazon Linux 2",
      "containerRuntimeVersion": "containerd://1.4.13",
      "kubeletVersion": "v1.20.15",
      "kubeProxyVersion": "v1.20.15",
      "operatingSystem": "linux",
      "architecture": "amd64"
    }
  }
})");
}

// A pod of another scheduler (default-scheduler), Running on gpu-a-07 with an init container.
inline nlohmann::json ForeignPod() {
  return nlohmann::json::parse(R"({
  "kind": "Pod",
  "apiVersion": "v1",
  "metadata": {
    "name": "inference-7d9f8b6c5-x2kqp",
    "generateName": "inference-7d9f8b6c5-",
    "namespace": "serving",
    "uid": "0f9e8d7c-6b5a-4938-8271-605f4e3d2c1b",
    "resourceVersion": "4825001",
    "creationTimestamp": "2024-05-01T11:00:00Z",
    "labels": {"app": "inference", "pod-template-hash": "7d9f8b6c5"},
    "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
      "name": "inference-7d9f8b6c5", "uid": "aa11bb22-cc33-dd44-ee55-ff6677889900",
      "controller": true, "blockOwnerDeletion": true}]
  },
  "spec": {
    "volumes": [{"name": "default-token-8xk2p", "secret": {"secretName": "default-token-8xk2p",
      "defaultMode": 420}}],
    "initContainers": [{
      "name": "fetch-model",
      "image": "busybox:1.36",
      "command": ["sh", "-c", "cp -r /src /models"],
      "resources": {"limits": {"cpu": "4", "memory": "8Gi"},
                    "requests": {"cpu": "4", "memory": "8Gi"}},
      "terminationMessagePath": "/dev/termination-log",
      "terminationMessagePolicy": "File",
      "imagePullPolicy": "IfNotPresent"
    }],
    "containers": [{
      "name": "server",
      "image": "nvcr.io/nvidia/tritonserver:24.03-py3",
      "resources": {"limits": {"cpu": "2", "memory": "16Gi", "nvidia.com/gpu": "2"},
                    "requests": {"cpu": "1500m", "memory": "12Gi", "nvidia.com/gpu": "2"}},
      "terminationMessagePath": "/dev/termination-log",
      "terminationMessagePolicy": "File",
      "imagePullPolicy": "IfNotPresent"
    }, {
      "name": "metrics",
      "image": "prom/statsd-exporter:v0.26.0",
      "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
      "terminationMessagePath": "/dev/termination-log",
      "terminationMessagePolicy": "File",
      "imagePullPolicy": "IfNotPresent"
    }],
    "restartPolicy": "Always",
    "terminationGracePeriodSeconds": 30,
    "dnsPolicy": "ClusterFirst",
    "serviceAccountName": "default",
    "serviceAccount": "default",
    "nodeName": "gpu-a-07",
    "securityContext": {},
    "schedulerName": "default-scheduler",
    "tolerations": [
      {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
       "tolerationSeconds": 300},
      {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
       "tolerationSeconds": 300}
    ],
    "priority": 0,
    "enableServiceLinks": true,
    "preemptionPolicy": "PreemptLowerPriority"
  },
  "status": {
    "phase": "Running",
    "conditions": [
      {"type": "Initialized", "status": "True", "lastProbeTime": null,
       "lastTransitionTime": "2024-05-01T11:00:20Z"},
      {"type": "Ready", "status": "True", "lastProbeTime": null,
       "lastTransitionTime": "2024-05-01T11:00:40Z"},
      {"type": "ContainersReady", "status": "True", "lastProbeTime": null,
       "lastTransitionTime": "2024-05-01T11:00:40Z"},
      {"type": "PodScheduled", "status": "True", "lastProbeTime": null,
       "lastTransitionTime": "2024-05-01T11:00:00Z"}
    ],
    "hostIP": "10.0.7.21",
    "podIP": "10.244.7.33",
    "podIPs": [{"ip": "10.244.7.33"}],
    "startTime": "2024-05-01T11:00:00Z",
    "qosClass": "Burstable"
  }
})");
}

// A worker pod of a PyTorchJob that names lockstep as its scheduler, in PodGroup "bert-large",
// Pending and unbound.
inline nlohmann::json GangPod(const std::string& name) {
  nlohmann::json pod = nlohmann::json::parse(R"({
  "kind": "Pod",
  "apiVersion": "v1",
  "metadata": {
    "name": "bert-large-worker-0",
    "namespace": "research",
    "uid": "5e4d3c2b-1a09-4f8e-9d7c-6b5a49382716",
    "resourceVersion": "4830112",
    "creationTimestamp": "2024-05-01T12:01:00Z",
    "labels": {
      "training.kubeflow.org/job-name": "bert-large",
      "training.kubeflow.org/operator-name": "pytorchjob-controller",
      "training.kubeflow.org/replica-type": "worker",
      "scheduling.x-k8s.io/pod-group": "bert-large",
      "lockstep.dev/queue": "gpu"
    },
    "ownerReferences": [{"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
      "name": "bert-large", "uid": "c0ffee00-1111-2222-3333-444455556666", "controller": true,
      "blockOwnerDeletion": true}]
  },
  "spec": {
    "containers": [{
      "name": "pytorch",
      "image": "pytorch/pytorch:2.2.0-cuda12.1-cudnn8-runtime",
      "command": ["torchrun", "train.py"],
      "ports": [{"name": "pytorchjob-port", "containerPort": 23456, "protocol": "TCP"}],
      "env": [{"name": "MASTER_PORT", "value": "23456"}],
      "resources": {"limits": {"cpu": "30", "memory": "200Gi", "nvidia.com/gpu": "4"},
                    "requests": {"cpu": "30", "memory": "200Gi", "nvidia.com/gpu": "4"}},
      "terminationMessagePath": "/dev/termination-log",
      "terminationMessagePolicy": "File",
      "imagePullPolicy": "IfNotPresent"
    }],
    "restartPolicy": "OnFailure",
    "terminationGracePeriodSeconds": 30,
    "dnsPolicy": "ClusterFirst",
    "serviceAccountName": "default",
    "serviceAccount": "default",
    "securityContext": {},
    "schedulerName": "lockstep",
    "priorityClassName": "research-high",
    "priority": 100000,
    "enableServiceLinks": true,
    "preemptionPolicy": "PreemptLowerPriority"
  },
  "status": {"phase": "Pending", "qosClass": "Guaranteed"}
})");
  pod["metadata"]["name"] = name;
  return pod;
}

// The coscheduling PodGroup of GangPod (scheduler-plugins, scheduling.x-k8s.io/v1alpha1).
inline nlohmann::json PodGroup(int min_member) {
  nlohmann::json g = nlohmann::json::parse(R"({
  "apiVersion": "scheduling.x-k8s.io/v1alpha1",
  "kind": "PodGroup",
  "metadata": {"name": "bert-large", "namespace": "research", "uid": "9a8b7c6d-5e4f-3a2b-1c0d-ffeeddccbbaa",
               "resourceVersion": "4830100", "generation": 1,
               "creationTimestamp": "2024-05-01T12:00:58Z"},
  "spec": {"minMember": 2, "scheduleTimeoutSeconds": 600},
  "status": {"phase": "Pending", "scheduled": 0, "running": 0}
})");
  g["spec"]["minMember"] = min_member;
  return g;
}

}  // namespace lockstep::kube::testing
