# verl-ppo developer commands. `make demo` and `make test` are the two fresh-machine commands.
PYTHON ?= python3
HELM_CACHE ?= $(or $(VERL_PPO_CACHE),$(HOME)/.cache/verl-ppo)
HELM ?= $(HELM_CACHE)/bin/helm4

.PHONY: help setup values schema globals docs dashboards contract check lint demo demo-render demo-down test bench-submit gpu-wheels gpu-smoke gpu-bench
.DEFAULT_GOAL := help
# GPU node type of `make demo` (a file under values/).
SHAPE ?= seed-2gpu

help:  ## list the targets (the two fresh-machine ones: demo, test)
	@grep -E '^[a-z][-a-z]*:.*## ' $(MAKEFILE_LIST) | sed -E 's/^([-a-z]+):.*## (.*)$$/  make \1\t\2/' | expand -t 24

setup:  ## install Python packages, build Helm 3 and 4, fetch schemas (cached)
	bash scripts/setup.sh

values:  ## (maintainers) regenerate values/ from the catalog and the sizing rules
	$(PYTHON) -m generator render

schema:  ## (maintainers) regenerate every chart's values.schema.json from schemas/
	$(PYTHON) -m generator schema

globals:  ## (maintainers) copy the umbrella's global defaults into each subchart's values.yaml
	$(PYTHON) -m generator globals

docs:  ## (maintainers) regenerate every chart's README.md from its values.yaml comments
	$(PYTHON) -m generator docs

contract: schema globals docs  ## (maintainers) everything generated from schemas/ and the values files

dashboards:  ## (maintainers) regenerate Ray's Grafana dashboards (observability/dashboards/) from the pinned Ray
	$(PYTHON) -m generator dashboards

check:  ## validate every values file
	$(PYTHON) -m generator check values/*.yaml

lint: setup  ## helm lint --strict the umbrella chart
	$(HELM) lint --strict charts/verl-ppo

demo: setup  ## the main job: a local cluster with nodes of $(SHAPE), the release installed, its RayCluster ready
	$(PYTHON) -m generator check values/*.yaml
	@$(PYTHON) -m tools.localcluster demo --values values/$(SHAPE).yaml || { \
		echo "demo: no local cluster here (see the message above and build/localcluster/logs);" \
			"showing what the release would create instead."; \
		$(MAKE) --no-print-directory demo-render; }

demo-render:  ## without a cluster: render the release of values/$(SHAPE).yaml and summarize it
	@# As on a cluster that serves the Prometheus operator's API, so the PodMonitors show too.
	$(HELM) template verl-ppo charts/verl-ppo --namespace default -f values/$(SHAPE).yaml \
		--api-versions monitoring.coreos.com/v1/PodMonitor | $(PYTHON) -m generator summarize

demo-down:  ## stop every process `make demo` started
	$(PYTHON) -m tools.localcluster down

# TIER picks one test tier (a pytest marker: generator, chart, verl, ray, observability, cluster, pods, gpu).
TIER ?=
test: setup  ## all tests (TIER=chart: one tier)
	$(PYTHON) -m pytest tests $(if $(TIER),-m $(TIER))

bench-submit: setup  ## print the submitter's overhead from a ready cluster to a submitted Ray job (target < 2 s)
	$(PYTHON) -m benchmarks.submit_overhead

# GPU proof (docs/gpu-proof.md): never part of `make test` or CI. gpu-wheels runs where PyPI and Helm are;
# gpu-smoke and gpu-bench run on an NVIDIA GPU machine with Python 3.12 and torch, with .gpu/ copied there.
GPU_COUNTS ?= 1 2

gpu-wheels: setup  ## (where PyPI is) carry-ready wheels and the chart's rendered runs into .gpu/
	bash gpu/wheels.sh
	HELM=$(HELM) $(PYTHON) gpu/render_jobs.py --gpus $(GPU_COUNTS)

gpu-smoke:  ## (GPU machine) a few PPO steps of the rendered H200 command through a local Ray head
	bash gpu/run.sh smoke

gpu-bench:  ## (GPU machine) generated H200 profile vs the seed's parameters on a Qwen2.5-0.5B-shaped model
	bash gpu/run.sh bench
