#!/usr/bin/env bash
# Builds the tools of the chart's release tests (tests/release/test_release_*.py) from their Go modules:
# the CNCF distribution registry (github.com/distribution/distribution/v3) that the tests push the
# packaged chart to, and chart-testing's `ct` (github.com/helm/chart-testing/v3) with its Chart.yaml
# schema. Cached under $VERL_PPO_CACHE like the other builds. setup.sh sources this file for its
# steps (lab/scripts/steps.sh); run alone, it runs them.
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# The registry's own main also links the Azure, GCS and S3 storage drivers, whose SDKs would more
# than double the build; the tests store blobs on the filesystem only.
registry_ready() { [ -x "$bin/registry-$DISTRIBUTION_VERSION" ]; }
build_registry() {
  local dir="$cache/build/registry-$DISTRIBUTION_VERSION" module=github.com/distribution/distribution/v3
  wrapper_module "$dir" "$module" "$DISTRIBUTION_VERSION"
  cat > "$dir/main.go" <<'GO'
package main

import (
	"github.com/distribution/distribution/v3/registry"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/filesystem"
)

func main() { _ = registry.RootCmd.Execute() }
GO
  (cd "$dir" && GOFLAGS=-mod=mod go mod tidy && nice go build -p "$jobs" -trimpath \
    -ldflags "-s -w -X $module/version.version=$DISTRIBUTION_VERSION" -o "$bin/registry-$DISTRIBUTION_VERSION" .)
}

# `go install github.com/helm/chart-testing/v3/ct@VERSION` is refused by the module proxy (its
# version list is forbidden); a wrapper module requiring the version builds the same package.
ct_files="$cache/chart-testing-$CHART_TESTING_VERSION"
ct_ready() { [ -x "$bin/ct-$CHART_TESTING_VERSION" ] && [ -f "$ct_files/chart_schema.yaml" ]; }
build_ct() {
  local dir="$cache/build/chart-testing-$CHART_TESTING_VERSION" module=github.com/helm/chart-testing/v3
  wrapper_module "$dir" "$module" "$CHART_TESTING_VERSION"
  printf '//go:build tools\n\npackage tools\n\nimport _ "%s/ct"\n' "$module" > "$dir/tools.go"
  (cd "$dir" && GOFLAGS=-mod=mod go mod tidy && nice go build -p "$jobs" -trimpath \
    -ldflags "-s -w -X $module/ct/cmd.Version=$CHART_TESTING_VERSION" -o "$bin/ct-$CHART_TESTING_VERSION" "$module/ct")
  # The Chart.yaml schema `ct lint` validates against, as the pinned release ships it.
  mkdir -p "$ct_files"
  install -m 0644 "$(module_dir "$module" "$CHART_TESTING_VERSION")/etc/chart_schema.yaml" "$ct_files/"
}

add_step registry "CNCF distribution registry $DISTRIBUTION_VERSION (OCI, for the release tests)" registry_ready build_registry
add_step ct "chart-testing ct $CHART_TESTING_VERSION" ct_ready build_ct

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  run_steps
  echo "build-release-tools: ready under $bin"
fi
