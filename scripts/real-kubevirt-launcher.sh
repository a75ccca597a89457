#!/usr/bin/env bash
# The do-nothing virt-launcher image the real suite's KubeVirt node side runs (docs/real-cluster-tests.md,
# "KubeVirt"): the node's own registry.k8s.io/pause:3.10 plus one layer of symlinks, so the commands
# virt-controller puts in a launcher pod (/usr/bin/virt-launcher-monitor, …) start the pause process, which
# holds the pod until it is deleted. No guest runs and no memory is copied. Imported into the realk8s kit's
# containerd; virt-controller runs with --launcher-image set to the name printed on stdout.
# Usage: scripts/real-kubevirt-launcher.sh [image name]   (env: CONTAINERD_SOCK, CTR)
set -euo pipefail
name=${1:-drainer.test/kubevirt-emulated-launcher:pause-3.10}
base=registry.k8s.io/pause:3.10
sock=${CONTAINERD_SOCK:-/tmp/realk8s-kit/containerd/state/containerd.sock}
c8d() { "${CTR:-ctr}" -a "$sock" -n k8s.io "$@"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

c8d images export --platform linux/amd64 "$tmp/base.tar" "$base"
mkdir "$tmp/oci" "$tmp/layer"
tar -xf "$tmp/base.tar" -C "$tmp/oci"
blob() { echo "$tmp/oci/blobs/sha256/${1#sha256:}"; }
# the one manifest for linux/amd64 (an index may list several)
manifest=$(jq -r '.manifests[0].digest' "$tmp/oci/index.json")
if jq -e '.manifests' "$(blob "$manifest")" >/dev/null; then
  manifest=$(jq -r '[.manifests[] | select(.platform.architecture == "amd64")][0].digest' "$(blob "$manifest")")
fi
config=$(jq -r '.config.digest' "$(blob "$manifest")")
entry=$(jq -r '.config.Entrypoint[0]' "$(blob "$config")")

# every command virt-controller v1.5–v1.9 renders into a launcher pod without disks
mkdir -p "$tmp/layer/usr/bin"
for b in virt-launcher-monitor virt-launcher virt-tail virt-probe container-disk; do
  ln -s "$entry" "$tmp/layer/usr/bin/$b"
done
tar -C "$tmp/layer" --owner=0 --group=0 --numeric-owner --mtime=@0 --sort=name -cf "$tmp/layer.tar" usr
put() { # file → its digest, stored as a blob
  local d
  d=sha256:$(sha256sum "$1" | cut -d' ' -f1)
  cp "$1" "$(blob "$d")"
  echo "$d"
}
size() { stat -c %s "$1"; }
layer=$(put "$tmp/layer.tar")
jq --arg d "$layer" '.rootfs.diff_ids += [$d]' "$(blob "$config")" >"$tmp/config.json"
newconfig=$(put "$tmp/config.json")
jq --arg c "$newconfig" --argjson cs "$(size "$tmp/config.json")" --arg l "$layer" \
  --argjson ls "$(size "$tmp/layer.tar")" \
  '.config.digest = $c | .config.size = $cs
   | .layers += [{mediaType: "application/vnd.oci.image.layer.v1.tar", digest: $l, size: $ls}]' \
  "$(blob "$manifest")" >"$tmp/manifest.json"
newmanifest=$(put "$tmp/manifest.json")
jq -n --arg m "$newmanifest" --argjson s "$(size "$tmp/manifest.json")" --arg n "$name" \
  --arg mt "$(jq -r '.mediaType // "application/vnd.oci.image.manifest.v1+json"' "$tmp/manifest.json")" \
  '{schemaVersion: 2, manifests: [{mediaType: $mt, digest: $m, size: $s,
     annotations: {"io.containerd.image.name": $n, "org.opencontainers.image.ref.name": ($n | sub(".*:"; ""))}}]}' \
  >"$tmp/oci/index.json"
tar -C "$tmp/oci" -cf "$tmp/out.tar" .
c8d images import "$tmp/out.tar" >&2
echo "$name"
