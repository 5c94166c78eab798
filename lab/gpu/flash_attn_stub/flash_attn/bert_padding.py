"""Names veRL 0.3 imports from flash_attn.bert_padding; calling one means remove-padding was enabled."""

from einops import rearrange  # noqa: F401  (veRL imports it from here)


def _needs_flash_attn(*_args, **_kwargs):
    raise RuntimeError("flash-attn is not installed here: run without actor_rollout_ref.model.use_remove_padding")


index_first_axis = pad_input = unpad_input = _needs_flash_attn
