"""The generation floor: vLLM's own time for one rollout batch of a rendered run, without veRL or Ray.

The same model, the same prompts (the run's train file through the model's chat template, as veRL renders
them), the same number of samples (train batch x rollout.n), the same response length and the rollout
settings the run renders (memory fraction, eager or CUDA graphs, batched tokens), through `vllm.LLM` in this
process. Every response runs to the full length (ignore_eos), so the floor does at least the rollout's work:
veRL's `timing_s/gen` over this floor is the rollout's overhead (issue 34's target: 1.3 or less).

`--engine async` takes the batch through vLLM's asynchronous engine as veRL 0.9.1's rollout server does (one
request a sample, prefix caching, the model's whole context, sleep mode, a log-prob for each sampled token),
alternately with vLLM's default output (every request's whole output so far after every decode step, what
veRL asks for) and with its final output only: what the server's own settings cost against the floor.

Usage: python3 lab/gpu/generation_floor.py RUN_FOLDER OUT_JSON [--repeats N] [--engine offline|async]
(RUN_FOLDER: a folder lab/gpu/render_jobs.py wrote; the run's inputs prepared by lab/gpu/proof.py)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
import uuid
from pathlib import Path

from render_jobs import overrides

# vLLM's sampler uses FlashInfer's when it imports; the GPU machine has none (docs/gpu-proof.md).
os.environ.setdefault("VLLM_USE_FLASHINFER_SAMPLER", "0")


# veRL 0.9.1's rollout defaults (verl/trainer/config/rollout/rollout.yaml) where a run renders no value.
VERL_ROLLOUT_DEFAULTS = {"gpu_memory_utilization": "0.5", "enforce_eager": "false", "tensor_model_parallel_size": "2",
                         "max_num_batched_tokens": "8192", "max_num_seqs": "256", "enable_chunked_prefill": "true"}


def rollout_settings(settings: dict[str, str]) -> dict:
    """vllm.LLM's arguments for the rollout a run renders (veRL passes the same names on)."""
    value = {key: settings.get(f"actor_rollout_ref.rollout.{key}", default)
             for key, default in VERL_ROLLOUT_DEFAULTS.items()}
    return {"gpu_memory_utilization": float(value["gpu_memory_utilization"]),
            "enforce_eager": value["enforce_eager"].lower() == "true",
            "tensor_parallel_size": int(value["tensor_model_parallel_size"]),
            "max_num_batched_tokens": int(value["max_num_batched_tokens"]),
            "max_num_seqs": int(value["max_num_seqs"]),
            "enable_chunked_prefill": value["enable_chunked_prefill"].lower() == "true",
            "max_model_len": int(settings["data.max_prompt_length"]) + int(settings["data.max_response_length"])}


def prompts(train_file: str, model_path: str, rows: int) -> list[list[int]]:
    import pyarrow.parquet as parquet
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_path)
    table = parquet.read_table(train_file, columns=["prompt"]).slice(0, rows).to_pylist()
    texts = [tokenizer.apply_chat_template(row["prompt"], add_generation_prompt=True, tokenize=False) for row in table]
    return [tokenizer(text, add_special_tokens=False)["input_ids"] for text in texts]


def model_context(model_path: str) -> int:
    """The context veRL's server gives vLLM when the run sets no rollout.max_model_len: the model's own."""
    return json.loads((Path(model_path) / "config.json").read_text())["max_position_embeddings"]


def async_floor(engine: dict, model_path: str, token_ids: list[list[int]], samples_per_prompt: int,
                response_length: int, repeats: int) -> dict:
    """The batch through AsyncLLM as veRL 0.9.1's vLLMHttpServer builds it, one request a sample, with veRL's
    sampling (a log-prob for each token) and each output kind; seconds of each repeat by kind."""
    from vllm.engine.arg_utils import AsyncEngineArgs
    from vllm.inputs import TokensPrompt
    from vllm.sampling_params import RequestOutputKind, SamplingParams
    from vllm.v1.engine.async_llm import AsyncLLM

    arguments = AsyncEngineArgs(model=model_path, dtype="bfloat16", seed=42, enable_prefix_caching=True,
                                enable_sleep_mode=True, logprobs_mode="processed_logprobs", disable_log_stats=True,
                                compilation_config={"cudagraph_mode": "FULL_AND_PIECEWISE"},
                                **{**engine, "max_model_len": model_context(model_path)})
    kinds = {"every_step": RequestOutputKind.CUMULATIVE, "final_only": RequestOutputKind.FINAL_ONLY}

    async def batch(kind: RequestOutputKind, llm) -> tuple[float, int]:
        async def one(ids: list[int]) -> int:
            params = SamplingParams(temperature=1.0, top_p=1.0, top_k=-1, repetition_penalty=1.0, logprobs=0,
                                    max_tokens=response_length, ignore_eos=True, output_kind=kind)
            final = None
            async for output in llm.generate(TokensPrompt(prompt_token_ids=ids), params, request_id=uuid.uuid4().hex):
                final = output
            return len(final.outputs[0].token_ids)

        start = time.perf_counter()
        counts = await asyncio.gather(*(one(ids) for ids in token_ids for _ in range(samples_per_prompt)))
        return round(time.perf_counter() - start, 3), sum(counts)

    async def measure() -> dict:
        start = time.perf_counter()
        llm = AsyncLLM.from_engine_args(arguments)
        startup = round(time.perf_counter() - start, 1)
        seconds: dict[str, list[float]] = {name: [] for name in kinds}
        generated = 0
        try:
            for _ in range(repeats):
                for name, kind in kinds.items():
                    elapsed, generated = await batch(kind, llm)
                    seconds[name].append(elapsed)
        finally:
            llm.shutdown()
        return {"startup_s": startup, "generated_tokens": generated, "seconds": seconds,
                "best_s": {name: min(values) for name, values in seconds.items()}}

    return asyncio.run(measure())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_folder", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--engine", choices=["offline", "async"], default="offline")
    args = parser.parse_args()
    spec = json.loads((args.run_folder / "job.json").read_text())
    settings = overrides(spec["entrypoint"])
    batch = int(settings["data.train_batch_size"])
    samples_per_prompt = int(settings.get("actor_rollout_ref.rollout.n", 1))
    response_length = int(settings["data.max_response_length"])
    model_path = settings["actor_rollout_ref.model.path"]
    token_ids = prompts(settings["data.train_files"], model_path, batch)

    engine = rollout_settings(settings)
    if args.engine == "async":
        result = {"model_path": model_path, "engine": "async", "settings": engine, "prompts": len(token_ids),
                  "samples_per_prompt": samples_per_prompt, "response_length": response_length,
                  **async_floor({k: v for k, v in engine.items() if k != "max_model_len"}, model_path, token_ids,
                                samples_per_prompt, response_length, args.repeats)}
        args.out.write_text(json.dumps(result, indent=2) + "\n")
        print(f"generation floor (async engine): {json.dumps(result)}", flush=True)
        return 0

    from vllm import LLM, SamplingParams
    from vllm.inputs import TokensPrompt

    start = time.perf_counter()
    llm = LLM(model=model_path, dtype="bfloat16", seed=0, **engine)
    startup = time.perf_counter() - start
    sampling = SamplingParams(n=samples_per_prompt, temperature=1.0, max_tokens=response_length, ignore_eos=True)
    requests = [TokensPrompt(prompt_token_ids=ids) for ids in token_ids]
    seconds, generated = [], 0
    for _ in range(args.repeats):
        start = time.perf_counter()
        outputs = llm.generate(requests, sampling, use_tqdm=False)
        seconds.append(round(time.perf_counter() - start, 3))
        generated = sum(len(sample.token_ids) for output in outputs for sample in output.outputs)
    result = {"model_path": model_path, "engine": engine, "prompts": len(requests),
              "samples_per_prompt": samples_per_prompt,
              "prompt_tokens_mean": round(sum(map(len, token_ids)) / len(token_ids), 1),
              "response_length": response_length, "generated_tokens": generated, "startup_s": round(startup, 1),
              "seconds": seconds, "floor_s": min(seconds),
              "tokens_per_second": round(generated / min(seconds), 1)}
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"generation floor: {json.dumps(result)}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
