"""Data parallelism with PyTorch's own ``torch.distributed`` (one process per device).

Launch any training entry point with ``torchrun --nproc_per_node=N ...``: torchrun sets
RANK, WORLD_SIZE and LOCAL_RANK, ``init_from_env`` joins the process group, and the Trainer
wraps the model in ``DistributedDataParallel``. Every process reads the same global batches
(same seed, same order) and trains on its share of the rows (``shard``); DDP averages the
gradients, and the loss is scaled so that the average is the gradient of the mean loss over
the whole global batch: N processes take the same steps as one process would.
"""

import os

import torch
import torch.distributed as dist

from ..data.batch import Batch


def init_from_env(device: str = "cpu") -> tuple[int, int]:
    """Joins the process group when launched by torchrun; returns (rank, world_size)."""
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    if world_size > 1 and not dist.is_initialized():
        # NCCL between GPUs, gloo between CPU processes.
        dist.init_process_group(backend="nccl" if str(device).startswith("cuda") else "gloo")
    return rank_and_size()


def rank_and_size() -> tuple[int, int]:
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


def local_device(device: str) -> str:
    """One GPU per process: cuda -> cuda:LOCAL_RANK under torchrun."""
    if str(device) == "cuda" and "LOCAL_RANK" in os.environ:
        return f"cuda:{int(os.environ['LOCAL_RANK'])}"
    return str(device)


def shard(batch: Batch, rank: int, world_size: int) -> Batch:
    """This process's rows of a global batch: rows rank, rank + N, rank + 2N, ..."""
    if world_size == 1:
        return batch
    if batch.src.shape[0] < world_size:
        raise ValueError(f"a batch of {batch.src.shape[0]} sentence pairs cannot be split over "
                         f"{world_size} processes; raise max_tokens")
    return Batch(batch.src[rank::world_size], batch.tgt[rank::world_size])


def all_reduce_sum(value: torch.Tensor) -> torch.Tensor:
    if rank_and_size()[1] > 1:
        dist.all_reduce(value, op=dist.ReduceOp.SUM)
    return value


def barrier() -> None:
    if rank_and_size()[1] > 1:
        dist.barrier()
