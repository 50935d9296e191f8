// Test-only: YAML manifests (deploy/kubernetes/) applied to an apiserver as `kubectl apply` would,
// and CustomResourceDefinitions waited for until they are served.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cctype>
#include <chrono>
#include <string>
#include <vector>

#include "backend/kubernetes/client/api_error.h"
#include "backend/kubernetes/client/kube_client.h"
#include "common/wait_for.h"

namespace lockstep::kube::testing {

// YAML to JSON as the apiserver reads it: plain scalars that look like numbers, booleans or null
// become those; quoted scalars stay strings.
inline Json YamlToJson(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map: {
      Json o = Json::object();
      for (const auto& kv : n) o[kv.first.as<std::string>()] = YamlToJson(kv.second);
      return o;
    }
    case YAML::NodeType::Sequence: {
      Json a = Json::array();
      for (const auto& v : n) a.push_back(YamlToJson(v));
      return a;
    }
    case YAML::NodeType::Scalar: {
      const std::string s = n.Scalar();
      if (n.Tag() == "!") return s;  // quoted
      if (s == "true" || s == "false") return s == "true";
      if (s == "null" || s == "~") return nullptr;
      if (!s.empty() && (std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '-')) {
        size_t used = 0;
        try {
          const long long v = std::stoll(s, &used);
          if (used == s.size()) return v;
        } catch (const std::exception&) {
        }
      }
      return s;
    }
    default:
      return nullptr;
  }
}

// Every document of a YAML file.
inline std::vector<Json> LoadManifest(const std::string& file) {
  std::vector<Json> out;
  for (const YAML::Node& doc : YAML::LoadAllFromFile(file)) {
    if (doc.IsNull()) continue;
    out.push_back(YamlToJson(doc));
  }
  return out;
}

// The collection path of an object: /api/v1 for the core group, else /apis/GROUP/VERSION; the
// resource is the kind in lower case plus "s" (true of every kind in deploy/).
inline std::string CollectionPath(const Json& obj) {
  const std::string api_version = obj.at("apiVersion");
  std::string kind = obj.at("kind");
  for (char& c : kind) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const bool cluster_scoped = kind == "namespace" || kind == "clusterrole" ||
                              kind == "clusterrolebinding" || kind == "customresourcedefinition";
  std::string path = api_version == "v1" ? "/api/v1" : "/apis/" + api_version;
  if (!cluster_scoped) path += "/namespaces/" + obj["metadata"].value("namespace", "default");
  return path + "/" + kind + "s";
}

// kubectl apply, roughly: create, or replace what exists (keeping its resourceVersion).
inline Result<Json> Apply(KubeClient& client, const Json& obj) {
  const std::string collection = CollectionPath(obj);
  Result<Json> created = client.Create(collection, obj);
  if (created.ok() || !IsAlreadyExists(created.status())) return created;
  const std::string path = collection + "/" + obj["metadata"]["name"].get<std::string>();
  Result<Json> existing = client.Get(path);
  if (!existing.ok()) return existing.status();
  Json replaced = obj;
  replaced["metadata"]["resourceVersion"] = (*existing)["metadata"]["resourceVersion"];
  if (existing->contains("spec") && (*existing)["spec"].contains("clusterIP")) {
    replaced["spec"]["clusterIP"] = (*existing)["spec"]["clusterIP"];  // immutable
  }
  return client.Update(path, replaced);
}

// Waits until CRD `name` (e.g. "podgroups.scheduling.x-k8s.io") has condition Established and
// `list_path`, a collection of its resource, answers; false after `timeout`.
inline bool WaitForCrdEstablished(KubeClient& client, const std::string& name,
                                  const std::string& list_path, std::chrono::milliseconds timeout) {
  const std::string path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/" + name;
  auto established = [&] {
    Result<Json> crd = client.Get(path);
    if (!crd.ok()) return false;
    for (const Json& c : crd->value("status", Json::object()).value("conditions", Json::array()))
      if (c.value("type", "") == "Established" && c.value("status", "") == "True") return true;
    return false;
  };
  return lockstep::testing::WaitFor([&] { return established() && client.List(list_path).ok(); },
                                    timeout, std::chrono::milliseconds(100));
}

}  // namespace lockstep::kube::testing
