"""What one step of a veRL 0.9.1 run does on one GPU, for the settings the sizing decides: its rows, and each
phase's micro batches (the rollout's decode steps) as veRL splits them. The plan's memory (generator/plan.py)
and seconds (generator/plantime.py) both count from this."""

from __future__ import annotations

import math
from dataclasses import dataclass

from generator.algorithms import Algorithm
from generator.catalog import GpuShape, ModelProfile
from generator.runshape import RunShape, Sizing
from generator.verlversions import by_version

# The veRL whose source the memory model follows (and whose runs measured it).
MODELLED_VERL = "0.9.1"
# The Sizing field each of ppo-job's critic budgets is rendered from (generator/templates/shape-values.yaml.j2), by
# the value's name under ppo-job.critic as files/verl-versions.yaml's criticUpdateBudget names it.
CRITIC_BUDGET_FIELDS = {"ppoMaxTokenLenPerGpu": "train_token_budget", "forwardMaxTokenLenPerGpu": "critic_token_budget"}

# The phases veRL times (timing_s), in the order a step runs them.
PHASE_ORDER = ("gen", "update_weights", "old_log_prob", "ref", "values", "adv", "update_critic", "update_actor")


@dataclass(frozen=True)
class PlanInputs:
    """A run to plan: the node type, the model, the algorithm, the settings sized for it, the GPUs FSDP shards
    over and the mean row's prompt and response tokens (the full length unless a measured run says otherwise). The
    sizing plans its candidates without an algorithm (the run says whether there is a critic and a reference)."""

    shape: GpuShape
    model: ModelProfile
    algorithm: Algorithm | None
    run: RunShape
    sizing: Sizing
    gpus: int
    row_tokens: float
    fill_budgets: bool = False  # the sizing's check: every budgeted micro batch full, whatever the batch and rows

    @property
    def rows(self) -> int:
        """Samples a step: prompts x n."""
        return self.sizing.train_batch_size * self.run.responses_per_prompt

    @property
    def params_per_gpu(self) -> float:
        return self.model.params_billion * 1e9 / self.gpus


def uses_reference(algorithm: Algorithm) -> bool:
    """veRL 0.9.1 builds the reference model only for a KL term in the reward or the loss (trainer/ppo/utils.py
    need_reference_policy); PPO's `kl_ctrl.kl_coef` alone (files/algorithms.yaml `kl: coef`) builds none."""
    return algorithm.kl in ("loss", "reward")


# Below this many tokens a micro batch of a 0.5B model takes as long as one of this many: kernel launches bound it,
# not the model's work. Measured on one H200 (lab/gpu/profile/model_bench.py, docs/sizing.md "Where the time goes"):
# without checkpointing 107 ms at 2,128 and at 8,512 tokens, 185 ms at 17,024 (10.9 us a token, 35% MFU); time in
# proportion to tokens above 9,800 meets all three. With checkpointing: CHECKPOINTING_LAUNCHES below.
LAUNCH_FLOOR_TOKENS_0_5B = 9_800
LAUNCH_FLOOR_PARAMS_BILLION = 0.494  # Qwen2.5-0.5B's, the model it was measured on


def launch_floor_tokens(params_billion: float) -> float:
    """The launch floor of a model: its token costs work in proportion to its parameters while a micro batch
    launches about as many kernels, so the floor falls as the parameters grow (unmeasured beyond 0.5B)."""
    return LAUNCH_FLOOR_TOKENS_0_5B * LAUNCH_FLOOR_PARAMS_BILLION / params_billion


# A training micro batch's FLOPs a parameter and token: the forward's 2, the backward's input gradients' 2 and the
# weight gradients' 2, which a LoRA update skips for its frozen base (the adapters' own work is under 1% at rank 32).
# Gradient checkpointing runs the forward again (2 more) and launches its kernels twice, so twice the launch floor.
# Measured on one H200 (model_bench, 0.5B): with checkpointing 192-234 ms at 2,128, 8,512 and 17,024 tokens against
# 107, 107 and 185 without; this model gives 214, 214 and 247. A LoRA update against a whole model's is not measured
# on one model: held out, the 7B LoRA run's update planned from 3B's whole-model one fell from +121% to +47% by it
# (docs/sizing.md "plan-held-out").
FORWARD_FLOPS, INPUT_GRADIENT_FLOPS, WEIGHT_GRADIENT_FLOPS = 2, 2, 2
CHECKPOINTING_LAUNCHES = 2
TRAINING_PHASES = ("update_critic", "update_actor")


def training_flops(checkpointing: bool, lora: bool) -> int:
    """FLOPs a parameter and token of a training micro batch (6 for a whole model without checkpointing)."""
    return (FORWARD_FLOPS * (2 if checkpointing else 1) + INPUT_GRADIENT_FLOPS
            + (0 if lora else WEIGHT_GRADIENT_FLOPS))


def micro_batch_cost(tokens: float, params_billion: float, checkpointing: bool = False, lora: bool = False) -> float:
    """A micro batch's seconds up to one factor: its parameters times its tokens, counted at no fewer tokens than the
    model's launch floor; a training one at its FLOPs against a whole model's without checkpointing (a forward-only
    pass is compared with forward-only passes alone), under checkpointing at twice the launches."""
    floor = launch_floor_tokens(params_billion) * (CHECKPOINTING_LAUNCHES if checkpointing else 1)
    work = training_flops(checkpointing, lora) / training_flops(False, False)
    return params_billion * max(tokens * work, floor)


@dataclass(frozen=True)
class Work:
    """What a phase does on one GPU: `count` micro batches of `size` tokens each; the rollout: `count` decode steps of
    `size` rows a replica. A decode step below the measured rows takes the measured time, a micro batch below its
    model's launch floor the floor's (both launch-bound there: launch_floor_tokens, docs/sizing.md "Where the time
    goes"); above, time grows with the size."""

    count: float
    size: float
    floor: bool = True  # False: time is linear in size (the weights' hand-over, the advantage)


def split(rows: float, row_tokens: float, budget: int, fixed_rows: int) -> Work:
    """Micro batches of rows: with a token budget veRL splits them into ceil(tokens / budget) micro batches of
    balanced tokens (utils/seqlen_balancing.py rearrange_micro_batches); else into micro batches of fixed rows."""
    if budget:
        total = rows * row_tokens
        count = math.ceil(total / budget)
        return Work(count, max(row_tokens, total / count))
    per = min(fixed_rows, rows)
    return Work(math.ceil(rows / per), per * row_tokens)


def critic_update_budget(sizing: Sizing) -> int:
    """The budget the critic's update packs by in the modelled veRL (its facts' criticUpdateBudget): 0.9.1's default
    trainer packs it by the values pass's budget, not by critic.ppo_max_token_len_per_gpu."""
    return getattr(sizing, CRITIC_BUDGET_FIELDS[by_version()[MODELLED_VERL].critic_update_budget])


def phase_work(inputs: PlanInputs) -> dict[str, Work]:
    """Each phase's work on one GPU in one step (PPO's one epoch: every mini batch once)."""
    sizing, run = inputs.sizing, inputs.run
    rows_per_gpu = inputs.rows / inputs.gpus
    mini_rows_per_gpu = sizing.ppo_mini_batch_size * run.responses_per_prompt / inputs.gpus
    mini_batches = sizing.train_batch_size // sizing.ppo_mini_batch_size

    def filled(work: Work, budget: int) -> Work:
        return Work(work.count, budget) if budget and inputs.fill_budgets else work

    def forward(fixed_rows: int, budget: int) -> Work:
        return filled(split(rows_per_gpu, inputs.row_tokens, budget, fixed_rows), budget)

    def train(fixed_rows: int, budget: int) -> Work:
        one = split(mini_rows_per_gpu, inputs.row_tokens, budget, fixed_rows)
        return filled(Work(one.count * mini_batches, one.size), budget)

    replicas = max(1, inputs.gpus // sizing.tensor_parallel)
    work = {"gen": Work(run.max_response_length, inputs.rows / replicas),
            "update_weights": Work(1, inputs.model.params_billion, floor=False),
            "old_log_prob": forward(sizing.log_prob_micro_batch, sizing.forward_token_budget),
            "ref": forward(sizing.ref_log_prob_micro_batch, sizing.forward_token_budget),
            # veRL's critic forward takes its micro batch from the training one (forward_micro_batch_size_per_gpu).
            "values": forward(sizing.critic_micro_batch, sizing.critic_token_budget),
            "adv": Work(1, inputs.rows, floor=False),
            "update_critic": train(sizing.critic_micro_batch, critic_update_budget(sizing)),
            "update_actor": train(sizing.micro_batch, sizing.train_token_budget)}
    if not run.reference:
        del work["ref"]
    if not run.critic:
        del work["values"], work["update_critic"]
    return work
