"""Data for training: special token ids, batches, the synthetic copy task, Multi30k, subwords."""
