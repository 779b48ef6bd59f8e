"""Exercise: rotary position embeddings, RoPE (Su et al., 2021), in NumPy.

The paper adds a table of sinusoids to the embeddings (§3.5). RoPE adds nothing: it turns
the queries and keys of each head by their positions, inside attention. The vector at
position m is cut into pairs of neighbouring features (x_2i, x_2i+1), and pair i turns by
the angle m * theta_i, with the paper's frequencies theta_i = 10000^(-2i/d_k).

Check your work:  python -m aiayn.grading rotary_positions/rotate
"""

import numpy as np


def rotate(x: np.ndarray, start: int = 0) -> np.ndarray:
    """The queries (or the keys) of a head, x of shape (..., T, d_k), turned by their positions.

    x[..., t, :] stands at position m = start + t: a decoder with a cache rotates only its new
    positions, so its first new vector stands at position ``start``, not 0. Pair i of it turns
    by the angle m * theta_i, i = 0 .. d_k/2 - 1:

        out_2i   = x_2i cos(m theta_i) - x_2i+1 sin(m theta_i)
        out_2i+1 = x_2i sin(m theta_i) + x_2i+1 cos(m theta_i)

    d_k is even; start >= 0. np.cos and np.sin work on whole arrays, and x[..., 0::2],
    x[..., 1::2] are the first and the second feature of every pair.

    Promises (the grader checks each one):
      - shape: returns an array of the shape of x, (..., T, d_k), whatever the leading axes:
        none, (B,) or (B, H).
      - dtype: keeps the dtype of x (float32 in, float32 out).
      - value: pair (2i, 2i+1) of the vector at position m = start + t is turned by the angle
        m * theta_i, theta_i = 10000^(-2i/d_k), as written above.
      - lengths: every pair keeps its length: (out_2i, out_2i+1) has the norm of
        (x_2i, x_2i+1).
      - position-0: with start = 0 the vector at position 0 comes back unchanged.
      - relative: a query turned to position m and a key turned to position n have a dot
        product that depends on m - n only, not on where the pair stands.
      - start: rotate(x[..., s:, :], start=s) equals rotate(x)[..., s:, :]: an offset is the
        same as slicing a longer sequence.
      - input-unchanged: x is not modified in place.
      - own: the rotation is written here: nothing from the course's rotary module
        (aiayn.np.rotary, aiayn.pt.rotary), which your code is compared with.
    """
    raise NotImplementedError
