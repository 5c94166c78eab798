"""The lab: what builds, runs and measures verl-ppo (setup, local cluster, images, mutation testing,
release tooling, GPU proof, benchmarks). The product (charts/, generator/) never imports it."""
