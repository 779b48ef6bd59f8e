"""Training as in §5 of the paper, and the command-line tools.

``schedule``    the learning rate of §5.3 (pure function and LambdaLR)
``loss``        label-smoothed cross-entropy over non-padding tokens (§5.4)
``trainer``     Trainer (and TrainConfig, from ``train_config``): Adam, schedule, bf16 + fused
                attention on CUDA, progress, checkpoints, exact resume, data parallelism
``distributed`` torchrun / DistributedDataParallel helpers: each process its share of a batch
``checkpoint``  atomic save, weights_only load, averaging of the last checkpoints (§6.1)
``configs``     named runs: multi30k-cpu, multi30k-gpu, multi30k-tiny
``translate``   sentences -> translations (beam search or greedy), corpus BLEU
``cli``         aiayn-train, aiayn-translate
"""
