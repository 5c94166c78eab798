# verl-ppo developer commands. `make demo` and `make test` are the two fresh-machine commands.
# Every target runs Python from the project's virtual environment, which setup creates under the
# tool cache (lab/venv.py); the system python3 only creates it.
PYTHON ?= $(shell python3 -m lab.venv python)
# The Helm of lint, check, demo-render and package: $HELM, else helm on PATH, else the project's pinned Helm 4
# in the tool cache, which `make helm` builds (generator/helm.py's lookup, so `generator check` finds the same).
HELM ?= $(shell python3 -m generator.helm)

.PHONY: help setup setup-fast setup-demo test-fast venv helm values schema docs dashboards contract check lint demo demo-render demo-down package test mutate bench-submit bench-logs bench-scale gpu-wheels gpu-smoke gpu-bench gpu-grpo gpu-ladder gpu-lora gpu-two-node
.DEFAULT_GOAL := help
# GPU node type of `make demo` (a file under values/).
SHAPE ?= seed-2gpu
# What `make demo` needs of setup (lab/scripts/setup.sh's step ids): the venv, the Helm of `generator check` and
# the install, the CRDs, the local cluster; the real node's parts only where it runs one here (the seed's shape,
# root, a writable memory cgroup: lab/localcluster/machine.py). Kueue, the Prometheus operator, Prometheus,
# redis, checkov, Helm 3, helm-unittest, veRL's config, vLLM's metrics, the OCI registry and ct are the tests' alone.
DEMO_STEPS = venv helm4 schemas cluster-files etcd kubernetes kwok kuberay-operator
DEMO_REAL_NODE_STEPS = realnode-debs coredns kube-router crictl images

help:  ## list the targets (the two fresh-machine ones: demo, test)
	@grep -E '^[a-z][-a-z]*:.*## ' $(MAKEFILE_LIST) | sed -E 's/^([-a-z]+):.*## (.*)$$/  make \1\t\2/' | expand -t 24

setup:  ## create the project venv (requirements.txt, requirements-test.txt), build Helm 3 and 4, helm-unittest and the local cluster, fetch schemas (cached)
	bash lab/scripts/setup.sh

venv:  ## only the project venv: the generator's runtime (requirements.txt) and the tests' packages (requirements-test.txt); cached
	python3 -m lab.venv ensure >/dev/null

helm:  ## only a Helm for lint, check, demo-render and package: none where HELM or a helm on PATH runs, else the pinned Helm 4
	@[ -x "$(HELM)" ] || bash lab/scripts/setup.sh helm4

values: venv  ## (maintainers) regenerate values/ from the catalog and the sizing rules
	$(PYTHON) -m generator render

schema: venv  ## (maintainers) regenerate every chart's values.schema.json from schemas/
	$(PYTHON) -m generator schema

docs: venv  ## (maintainers) regenerate every chart's README.md from its values.yaml comments
	$(PYTHON) -m generator docs

contract: schema docs  ## (maintainers) everything generated from schemas/ and the values files

dashboards: venv  ## (maintainers) regenerate the Grafana dashboards (observability/dashboards/): Ray's from the pinned Ray, the rollout one
	$(PYTHON) -m lab.dashboards

check: venv helm  ## validate every values file
	$(PYTHON) -m generator check values/*.yaml

lint: venv helm  ## helm lint --strict the umbrella chart; ruff over the Python of generator, lab and tests (pyproject.toml)
	$(HELM) lint --strict charts/verl-ppo
	$(PYTHON) -m ruff check

setup-demo:  ## only what `make demo` needs of setup (cached); prints the estimated time of what it builds first
	@if python3 -m lab.localcluster.machine values/$(SHAPE).yaml; then \
		bash lab/scripts/setup.sh $(DEMO_STEPS) $(DEMO_REAL_NODE_STEPS); \
	else bash lab/scripts/setup.sh $(DEMO_STEPS); fi

demo: setup-demo  ## the main job: a local cluster with nodes of $(SHAPE), the release installed, its RayCluster ready
	$(PYTHON) -m generator check values/*.yaml
	@$(PYTHON) -m lab.localcluster demo --values values/$(SHAPE).yaml || { \
		echo "demo: no local cluster here (see the message above and build/localcluster/logs);" \
			"showing what the release would create instead."; \
		$(MAKE) --no-print-directory demo-render; }

demo-render: venv helm  ## without a cluster: render the release of values/$(SHAPE).yaml and summarize it
	@# As on a cluster that serves the Prometheus operator's API, so the PodMonitors show too.
	$(HELM) template verl-ppo charts/verl-ppo --namespace default -f values/$(SHAPE).yaml \
		--api-versions monitoring.coreos.com/v1/PodMonitor | $(PYTHON) -m generator summarize

demo-down:  ## stop every process `make demo` started
	$(PYTHON) -m lab.localcluster down

package: venv helm  ## the chart's release package in build/charts/, values/ inside (docs/releasing.md); SIGN_KEY=... KEYRING=secring.gpg signs it
	$(PYTHON) -m lab.release.package --helm $(HELM) $(if $(SIGN_KEY),--sign-key "$(SIGN_KEY)" --keyring "$(KEYRING)")

# TIER picks one test tier, a pytest marker: setup, generator, chart, release, verl, ray, observability, cluster, pods,
# gpu. A tier is a folder, tests/<tier>/ (the product's tests) and tests/lab/<tier>/ (the lab's own), whose conftest.py
# marks its tests: a new test file joins a tier by where it is written.
TIER ?=
# Parallel test workers (pytest-xdist; tests/support/tiers.py and workers.py say how work is shared, by folder). The
# default, 2: the real node's tier (the fault matrix: about 30 min, mostly waiting on pods and Ray) on one
# worker, everything else on the other. WORKERS=0 runs everything in this one process; under 5 workers
# on 2 cores two timing-bound Ray fault tests failed.
WORKERS ?= 2
# The fast lane's tiers: no cluster, no Ray (lint, ct lint, every values file and ci scenario templated and
# validated strictly, the chart's helm-unittest suites, generator, chart, bad input, veRL's config, release, the
# submitter's decisions on a head's answers).
FAST_TIERS = generator or chart or verl or release or submitter
# What the fast lane needs of setup (lab/scripts/setup.sh's step ids): no Kubernetes, no images.
FAST_STEPS = venv helm3 helm4 helm-unittest schemas verl-config verl-source vllm-metrics sglang-metrics checkov registry ct
PYTEST = $(PYTHON) -m pytest tests -n $(WORKERS) --durations=30

setup-fast:  ## only what `make test-fast` needs of setup (cached)
	bash lab/scripts/setup.sh $(FAST_STEPS)

test-fast: setup-fast  ## the fast lane: no cluster, no Ray (warm: a few minutes on 2 cores)
	$(PYTEST) -m "$(FAST_TIERS)"

# The 30 slowest tests close each lane's report, so a CI log's tail says where the time went. The demo's
# cluster (`make demo`) holds the machine's one real node, which the pods tier needs: it is stopped first.
test: setup  ## all tests: the fast lane, then (if it passed) the rest (TIER=chart: one tier; WORKERS=0: in one process)
ifeq ($(TIER),)
	$(MAKE) --no-print-directory test-fast
	@$(PYTHON) -m lab.localcluster down
	$(PYTEST) -m "not ($(FAST_TIERS))"
else
	$(PYTEST) -m $(TIER)
endif

# Options of lab/mutate, e.g. MUTATE_ARGS="--only generator/sizing.py" or "--sample 40".
MUTATE_ARGS ?=

mutate: setup  ## mutation testing (cosmic-ray, chart template mutants): share of mutants killed per module; slow, not in `make test`
	$(PYTHON) -m pip install -q --disable-pip-version-check -r lab/mutate/requirements.txt
	$(PYTHON) -m lab.mutate $(MUTATE_ARGS)

bench-submit: setup  ## print the submitter's overhead from a ready cluster to a submitted Ray job (target < 2 s)
	$(PYTHON) -m lab.benchmarks.submit_overhead

bench-scale: setup  ## seconds from `helm install` to every Ray pod bound on 64, 256 and 1,024 fake 8-GPU nodes, where the time went, `generator render`/`check` seconds and the release's size (heavy)
	$(PYTHON) -m lab.benchmarks.cluster_scale

bench-logs: setup  ## the submitter's CPU and peak memory following a 1 GB Ray job log, before (whole log per poll) and after (log tail)
	$(PYTHON) -m lab.benchmarks.log_follow

# GPU proof (docs/gpu-proof.md): never part of `make test` or CI. gpu-wheels runs where PyPI and Helm are;
# gpu-smoke and gpu-bench run on an NVIDIA GPU machine with Python 3.12 and torch, with .gpu/ copied there.
# VLLM=1: veRL 0.9.1 with the chart's vLLM rollout (wheels in parts, carried one part a command).
GPU_COUNTS ?= 1 2
# Ray nodes the GPUs are split over (2: a head and a worker raylet on one machine, as the seed's two pods).
GPU_NODES ?= 1 2
VLLM ?=
GPU_MODE_PREFIX = $(if $(VLLM),vllm-)

gpu-wheels: setup  ## (where PyPI is) carry-ready wheels (VLLM=1: vLLM's, in parts) and the chart's rendered runs into .gpu/
	PYTHON=$(PYTHON) GPU_PROFILE=$(if $(VLLM),vllm,hf) bash lab/gpu/wheels.sh
	HELM=$(HELM) $(PYTHON) lab/gpu/render_jobs.py --gpus $(GPU_COUNTS) --nodes $(GPU_NODES)

# One veRL 0.9.1 run of the 0.5B shape fills most of a 10-minute command: GPU_RUNS=vllm-seed, then
# GPU_RUNS=vllm-generated (and again, alternating); lab/gpu/report.py puts the results together.
GPU_RUNS ?=
GPU_TIMEOUT ?= 540
# vLLM's own time for the first run's rollout batch, before the runs (lab/gpu/generation_floor.py); GPU_FLOOR= skips it.
GPU_FLOOR ?= --floor

gpu-smoke:  ## (GPU machine) a few PPO steps of the rendered H200 command through a local Ray head
	bash lab/gpu/run.sh $(GPU_MODE_PREFIX)smoke

gpu-bench:  ## (GPU machine) generated H200 profile vs the seed's parameters on a Qwen2.5-0.5B-shaped model (GPU_RUNS=one of them)
	bash lab/gpu/run.sh $(GPU_MODE_PREFIX)bench --timeout $(GPU_TIMEOUT) --drop-checkpoints $(if $(VLLM),$(GPU_FLOOR)) $(if $(GPU_RUNS),--runs $(GPU_RUNS))

gpu-grpo:  ## (GPU machine, VLLM=1) the chart's GRPO render (n=5) of the H200 profile, 0.5B shape: 3 steps and a checkpoint
	bash lab/gpu/run.sh vllm-grpo --timeout $(GPU_TIMEOUT)

gpu-ladder:  ## (GPU machine) the ladder of sizes: 1.5B and 3B shapes, generated profile for one H200 vs the seed's (VLLM=1)
	bash lab/gpu/run.sh vllm-ladder --timeout $(GPU_TIMEOUT) --drop-checkpoints $(GPU_FLOOR) $(if $(GPU_RUNS),--runs $(GPU_RUNS))

gpu-lora:  ## (GPU machine, VLLM=1) GRPO with LoRA rank 32 at the 7B shape for one H200, adapter checked (GPU_RUNS=vllm-7b-grpo-full: no LoRA)
	bash lab/gpu/run.sh vllm-lora-7b --timeout $(GPU_TIMEOUT) $(if $(GPU_RUNS),--runs $(GPU_RUNS))

gpu-two-node:  ## (two-GPU machine) the seed's command on 2 Ray nodes of 1 GPU, then on 1 node of 2 (VLLM=1: then separate_async, rollout pool on 1 GPU)
	bash lab/gpu/run.sh $(GPU_MODE_PREFIX)two-node $(if $(GPU_RUNS),--runs $(GPU_RUNS))
