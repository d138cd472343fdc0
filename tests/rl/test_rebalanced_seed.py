"""The run's seed decides the rows of each step under transformers' batch_rebalance sampler, which
otherwise draws with its own fixed seed (two seeds of the quick demo trained the same weights)."""
from types import SimpleNamespace

from transformers.trainer_pt_utils import BatchRebalanceSampler

from rl.run import seed_rebalanced_batches


def _trainer(seed, data_seed=None):
    make = lambda *args, **kwargs: BatchRebalanceSampler(  # noqa: E731 (what transformers builds)
        lengths=list(range(10, 74)), effective_batch_size=8, dp_size=1, grad_accum=4)
    trainer = SimpleNamespace(_get_train_sampler=make, args=SimpleNamespace(seed=seed, data_seed=data_seed))
    seed_rebalanced_batches(trainer)
    return trainer


def _steps(trainer):
    return [sorted(b) for b in trainer._get_train_sampler()]


def test_each_seed_draws_its_own_rows_and_the_same_seed_the_same():
    assert _trainer(1)._get_train_sampler().seed == 1
    assert _trainer(0, data_seed=7)._get_train_sampler().seed == 7
    assert _steps(_trainer(0)) == _steps(_trainer(0))
    assert _steps(_trainer(0))[:4] != _steps(_trainer(1))[:4]
    # a sampler of another kind is left as it is
    other = SimpleNamespace(_get_train_sampler=lambda *a: "random", args=SimpleNamespace(seed=3, data_seed=None))
    seed_rebalanced_batches(other)
    assert other._get_train_sampler() == "random"
