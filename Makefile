# verl-ppo developer commands. `make demo` and `make test` are the two fresh-machine commands.
# Every target runs Python from the project's virtual environment, which setup creates under the
# tool cache (tools/venv.py); the system python3 only creates it.
PYTHON ?= $(shell python3 -m tools.venv python)
HELM_CACHE ?= $(or $(VERL_PPO_CACHE),$(HOME)/.cache/verl-ppo)
HELM ?= $(HELM_CACHE)/bin/helm4

.PHONY: help setup venv values schema docs dashboards contract check lint demo demo-render demo-down package test mutate bench-submit bench-logs bench-scale gpu-wheels gpu-smoke gpu-bench gpu-two-node
.DEFAULT_GOAL := help
# GPU node type of `make demo` (a file under values/).
SHAPE ?= seed-2gpu

help:  ## list the targets (the two fresh-machine ones: demo, test)
	@grep -E '^[a-z][-a-z]*:.*## ' $(MAKEFILE_LIST) | sed -E 's/^([-a-z]+):.*## (.*)$$/  make \1\t\2/' | expand -t 24

setup:  ## create the project venv with requirements.txt, build Helm 3 and 4 and the local cluster, fetch schemas (cached)
	bash scripts/setup.sh

venv:  ## only the project venv with requirements.txt (what the generator targets need; cached)
	python3 -m tools.venv ensure >/dev/null

values: venv  ## (maintainers) regenerate values/ from the catalog and the sizing rules
	$(PYTHON) -m generator render

schema: venv  ## (maintainers) regenerate every chart's values.schema.json from schemas/
	$(PYTHON) -m generator schema

docs: venv  ## (maintainers) regenerate every chart's README.md from its values.yaml comments
	$(PYTHON) -m generator docs

contract: schema docs  ## (maintainers) everything generated from schemas/ and the values files

dashboards: venv  ## (maintainers) regenerate Ray's Grafana dashboards (observability/dashboards/) from the pinned Ray
	$(PYTHON) -m generator dashboards

check: venv  ## validate every values file
	$(PYTHON) -m generator check values/*.yaml

lint: setup  ## helm lint --strict the umbrella chart
	$(HELM) lint --strict charts/verl-ppo

demo: setup  ## the main job: a local cluster with nodes of $(SHAPE), the release installed, its RayCluster ready
	$(PYTHON) -m generator check values/*.yaml
	@$(PYTHON) -m tools.localcluster demo --values values/$(SHAPE).yaml || { \
		echo "demo: no local cluster here (see the message above and build/localcluster/logs);" \
			"showing what the release would create instead."; \
		$(MAKE) --no-print-directory demo-render; }

demo-render: venv  ## without a cluster: render the release of values/$(SHAPE).yaml and summarize it
	@# As on a cluster that serves the Prometheus operator's API, so the PodMonitors show too.
	$(HELM) template verl-ppo charts/verl-ppo --namespace default -f values/$(SHAPE).yaml \
		--api-versions monitoring.coreos.com/v1/PodMonitor | $(PYTHON) -m generator summarize

demo-down:  ## stop every process `make demo` started
	$(PYTHON) -m tools.localcluster down

package: venv  ## the chart's release package in build/charts/, values/ inside (docs/releasing.md); SIGN_KEY=... KEYRING=secring.gpg signs it
	$(PYTHON) -m tools.release.package --helm $(HELM) $(if $(SIGN_KEY),--sign-key "$(SIGN_KEY)" --keyring "$(KEYRING)")

# TIER picks one test tier (a pytest marker: setup, generator, chart, release, verl, ray, observability, cluster, pods, gpu).
TIER ?=
# Parallel test workers (pytest-xdist; tests/support/tiers.py and workers.py say how work is shared). The
# default, 2: the real node's tier (the fault matrix: about 30 min, mostly waiting on pods and Ray) on one
# worker, everything else on the other. WORKERS=0 runs everything in this one process (about 59 min);
# under 5 workers on 2 cores two timing-bound Ray fault tests failed.
WORKERS ?= 2
# The 30 slowest tests close the report, so a CI log's tail says where the time went.
test: setup  ## all tests (TIER=chart: one tier; WORKERS=0: in one process)
	$(PYTHON) -m pytest tests -n $(WORKERS) --durations=30 $(if $(TIER),-m $(TIER))

# Options of tools/mutate, e.g. MUTATE_ARGS="--only generator/sizing.py" or "--sample 40".
MUTATE_ARGS ?=

mutate: setup  ## mutation testing (cosmic-ray, chart template mutants): share of mutants killed per module; slow, not in `make test`
	$(PYTHON) -m pip install -q --disable-pip-version-check -r requirements-mutate.txt
	$(PYTHON) -m tools.mutate $(MUTATE_ARGS)

bench-submit: setup  ## print the submitter's overhead from a ready cluster to a submitted Ray job (target < 2 s)
	$(PYTHON) -m benchmarks.submit_overhead

bench-scale: setup  ## seconds from `helm install` to every Ray pod bound on 64, 256 and 1,024 fake 8-GPU nodes, where the time went, `generator render`/`check` seconds and the release's size (heavy)
	$(PYTHON) -m benchmarks.cluster_scale

bench-logs: setup  ## the submitter's CPU and peak memory following a 1 GB Ray job log, before (whole log per poll) and after (log tail)
	$(PYTHON) -m benchmarks.log_follow

# GPU proof (docs/gpu-proof.md): never part of `make test` or CI. gpu-wheels runs where PyPI and Helm are;
# gpu-smoke and gpu-bench run on an NVIDIA GPU machine with Python 3.12 and torch, with .gpu/ copied there.
# VLLM=1: veRL 0.9.1 with the chart's vLLM rollout (wheels in parts, carried one part a command).
GPU_COUNTS ?= 1 2
# Ray nodes the GPUs are split over (2: a head and a worker raylet on one machine, as the seed's two pods).
GPU_NODES ?= 1 2
VLLM ?=
GPU_MODE_PREFIX = $(if $(VLLM),vllm-)

gpu-wheels: setup  ## (where PyPI is) carry-ready wheels (VLLM=1: vLLM's, in parts) and the chart's rendered runs into .gpu/
	PYTHON=$(PYTHON) GPU_PROFILE=$(if $(VLLM),vllm,hf) bash gpu/wheels.sh
	HELM=$(HELM) $(PYTHON) gpu/render_jobs.py --gpus $(GPU_COUNTS) --nodes $(GPU_NODES)

gpu-smoke:  ## (GPU machine) a few PPO steps of the rendered H200 command through a local Ray head
	bash gpu/run.sh $(GPU_MODE_PREFIX)smoke

gpu-bench:  ## (GPU machine) generated H200 profile vs the seed's parameters on a Qwen2.5-0.5B-shaped model
	bash gpu/run.sh $(GPU_MODE_PREFIX)bench

gpu-two-node:  ## (two-GPU machine) the seed's command on 2 Ray nodes of 1 GPU, then on 1 node of 2 GPUs
	bash gpu/run.sh $(GPU_MODE_PREFIX)two-node
