// Where a Kubernetes API server is and how to authenticate to it: a kubeconfig file (as kubectl
// reads it) or the in-cluster service account of a pod. Values only; no I/O after loading.
#pragma once

#include <map>
#include <string>

#include "common/status.h"

namespace lockstep::kube {

// One resolved context: the cluster, the user's credentials and the default namespace. File
// references (certificate-authority, client-certificate, client-key, tokenFile) are read at load
// time, so the struct holds PEM text and the token itself. A plain value; copy freely.
struct KubeConfig {
  std::string server;  // "https://host:port", possibly with a path prefix
  std::string ca_pem;  // empty: use the system's trust store
  bool insecure_skip_tls_verify = false;
  std::string tls_server_name;  // overrides the name checked in the server's certificate
  std::string token;            // bearer token; empty when none
  std::string token_file;       // where the token was read from (re-read on 401; may be empty)
  std::string client_cert_pem;  // client certificate (PEM), with client_key_pem
  std::string client_key_pem;
  std::string namespace_ = "default";
  std::string context;  // the context's name ("in-cluster" for the service account)
  std::string source;   // the file it came from, for messages
};

// Reads a kubeconfig. `context` empty selects current-context. Relative file paths are resolved
// against the kubeconfig's directory, as kubectl does. Errors name the file and the field, e.g.
// "/root/.kube/config: users[admin].user.client-key: cannot read /x/y.key: No such file".
Result<KubeConfig> LoadKubeConfigFile(const std::string& path, const std::string& context = "");

// The same from YAML text; `path` is used in messages and to resolve relative paths.
Result<KubeConfig> ParseKubeConfig(const std::string& yaml_text, const std::string& path,
                                   const std::string& context = "");

// Where in-cluster configuration comes from; every field has the pod's default, overridable in
// tests.
struct InClusterOptions {
  std::string service_account_dir = "/var/run/secrets/kubernetes.io/serviceaccount";
  // Environment, as read by LoadInClusterConfig(): KUBERNETES_SERVICE_HOST, _PORT.
  std::map<std::string, std::string> env;
};

// The options of a real pod: the default directory and this process's environment.
InClusterOptions InClusterOptionsFromEnvironment();

// Reads the service account's token, ca.crt and namespace; the server is
// https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT (IPv6 hosts get brackets).
Result<KubeConfig> LoadInClusterConfig(const InClusterOptions& options);

// kubectl's order: $KUBECONFIG (its first file) if set, else in-cluster if
// KUBERNETES_SERVICE_HOST is set, else ~/.kube/config.
Result<KubeConfig> LoadDefaultConfig();

// Decodes standard base64 (whitespace ignored); used for the *-data fields.
Result<std::string> DecodeBase64(const std::string& text);

}  // namespace lockstep::kube
