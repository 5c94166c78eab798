"""verl-ppo generator: sizes values files per GPU node type and checks any values file."""
