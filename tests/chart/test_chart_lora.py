"""docs/algorithms.md's LoRA commands against the chart's renders: the checkpoint the merger reads is where the release
of values/examples/lora-7b.yaml writes its checkpoints, and the resume command renders the adapter the merger writes
as veRL's lora_adapter_path, in a checkpoint directory of its own."""

import json
import re
import shlex

from support import helm as helm_cli
from support.tools import ROOT

DOC = ROOT / "docs" / "algorithms.md"


def doc_block(marker: str) -> list[str]:
    """The shell words of the ```bash block after `<!-- marker`, its continuation lines joined."""
    text = DOC.read_text()
    block = re.search(rf"<!-- {marker}\b.*?-->\n```bash\n(.*?)```", text, re.S)
    assert block, f"docs/algorithms.md has no {marker} block"
    return shlex.split(block.group(1).replace("\\\n", " "), comments=True)


def option(words: list[str], name: str) -> str:
    return words[words.index(name) + 1]


def overrides(helm, release: str, *args: str) -> dict[str, str]:
    result = helm_cli.template(helm, *args, release=release)
    assert result.returncode == 0, result.output
    job = next(d for d in result.documents() if d["kind"] == "ConfigMap" and "job.json" in d["data"])
    words = shlex.split(json.loads(job["data"]["job.json"])["entrypoint"])
    return dict(word.split("=", 1) for word in words[3:])


def test_the_merge_reads_the_checkpoint_the_example_writes(helm):
    merge = doc_block("lora-merge")
    first = overrides(helm, "verl-ppo", "-f", str(ROOT / "values/seed-2gpu.yaml"),
                      "-f", str(ROOT / "values/examples/lora-7b.yaml"))
    assert option(merge, "--local_dir") == f"{first['trainer.default_local_dir']}/global_step_3/actor"
    assert first["actor_rollout_ref.model.lora_rank"] == "32"


def test_the_resume_command_renders_the_merged_adapter_as_veRLs_adapter_path(helm):
    merge, resume = doc_block("lora-merge"), doc_block("lora-resume")
    install = resume.index("install")
    release, args = resume[install + 1], [word for word in resume[install + 3:]]
    args = [str(ROOT / word) if word.startswith("values/") else word for word in args]
    rendered = overrides(helm, release, *args)
    adapter = f"{option(merge, '--target_dir')}/lora_adapter"
    assert rendered["actor_rollout_ref.model.lora_adapter_path"] == adapter
    assert rendered["actor_rollout_ref.model.lora_rank"] == "32"
    # A checkpoint directory of its own: resume_mode=auto does not take the first run's shards.
    assert not adapter.startswith(rendered["trainer.default_local_dir"] + "/")


def test_the_lora_example_trains_on_fsdp2_and_a_run_without_lora_chooses_its_engine(helm):
    """veRL 0.9.1's default engine (FSDP1) synced an empty adapter to vLLM on the GPU (docs/sizing.md, the 7B LoRA
    run): with LoRA the chart sets FSDP2; without it the engine stays the user's to choose in extraArgs."""
    lora = overrides(helm, "verl-ppo", "-f", str(ROOT / "values/h200-141g-x8.yaml"),
                     "-f", str(ROOT / "values/examples/lora-7b.yaml"))
    assert lora["actor_rollout_ref.actor.strategy"] == "fsdp2"
    chosen = overrides(helm, "verl-ppo", "-f", str(ROOT / "values/h200-141g-x8.yaml"),
                       "--set-json", 'ppo-job.extraArgs=["actor_rollout_ref.actor.strategy=fsdp2"]')
    assert chosen["actor_rollout_ref.actor.strategy"] == "fsdp2"
    default = overrides(helm, "verl-ppo", "-f", str(ROOT / "values/h200-141g-x8.yaml"))
    assert "actor_rollout_ref.actor.strategy" not in default
