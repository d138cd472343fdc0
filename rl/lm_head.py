"""Score only the positions that have a label through the LM head, on CPU too.

TRL's fused LM head (`trl.trainer.utils.add_fused_lm_head`, used by SFT and GRPO) projects only
the positions whose next-token label is not -100 on GPUs, but every position elsewhere: on
Neuron the number of labelled positions would change the tile shapes of every batch and force a
recompilation. On a CPU nothing is compiled, and every position costs the same matrix product
through the vocabulary: for SmolLM2-135M (49,152 tokens) and a completion of 10 tokens after a
300-token prompt, scoring every position is most of what the LM head does and a step took twice
as long as scoring the completion alone. The choice is one call, `_use_triton(device)`, read
through the module `trl.trainer.utils`; `score_labelled_positions_only` makes it true on CPU
there alone (the kernels themselves keep choosing their plain-torch tiles on CPU), so the loss,
the log-probabilities and the gradients are those of the positions that have labels, as before.
"""
from __future__ import annotations

import functools


def score_labelled_positions_only() -> bool:
    """Patch TRL's choice for CPU tensors; returns whether the patch is in place (False when
    this TRL has no such choice, so nothing changed)."""
    try:
        import trl.trainer.utils as trl_utils
    except ImportError:
        return False
    original = getattr(trl_utils, "_use_triton", None)
    if original is None:
        return False
    if getattr(original, "_tomrl_patched", False):
        return True

    @functools.wraps(original)
    def compact_on_cpu(device) -> bool:
        return device.type == "cpu" or original(device)

    compact_on_cpu._tomrl_patched = True
    trl_utils._use_triton = compact_on_cpu
    return True
