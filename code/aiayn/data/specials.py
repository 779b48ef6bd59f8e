"""Special token ids shared by every vocabulary in the course (copy task and Multi30k alike)."""

PAD_ID, BOS_ID, EOS_ID, UNK_ID = 0, 1, 2, 3
SPECIAL_TOKENS = ["<pad>", "<s>", "</s>", "<unk>"]  # index = id
