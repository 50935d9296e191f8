#!/bin/sh
# Makes lockstepd's webhook certificate and registers the webhook (admission-webhook.yaml):
#   deploy/kubernetes/admission-certs.sh [DAYS]
# A CA of its own (kept in a temporary directory only while this runs), a serving certificate
# for lockstepd-webhook.lockstep.svc signed by it in the Secret lockstepd-webhook-tls, and the CA as the
# webhook's caBundle. Run it again to renew both.
set -eu
days=${1:-365}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
openssl req -x509 -newkey rsa:2048 -nodes -days "$days" -subj /CN=lockstep-webhook-ca \
  -keyout "$work/ca.key" -out "$work/ca.crt" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj /CN=lockstepd-webhook.lockstep.svc \
  -keyout "$work/tls.key" -out "$work/tls.csr" 2>/dev/null
printf 'subjectAltName=DNS:lockstepd-webhook.lockstep.svc,DNS:lockstepd-webhook.lockstep.svc.cluster.local\n' > "$work/ext"
openssl x509 -req -in "$work/tls.csr" -CA "$work/ca.crt" -CAkey "$work/ca.key" -CAcreateserial \
  -days "$days" -extfile "$work/ext" -out "$work/tls.crt" 2>/dev/null
kubectl -n lockstep delete secret lockstepd-webhook-tls --ignore-not-found
kubectl -n lockstep create secret tls lockstepd-webhook-tls --cert="$work/tls.crt" --key="$work/tls.key"
bundle=$(base64 -w0 < "$work/ca.crt")
sed "s|caBundle: CA_BUNDLE|caBundle: $bundle|" "$here/admission-webhook.yaml" | kubectl apply -f -
echo "webhook registered; label the namespaces to judge: kubectl label namespace NS lockstep.dev/admission=enforce"
