"""A 'valid' convolution, without padding: k - 1 positions shorter than the input.

exercise: why_self_attention/convolution
caught by: shape (B, T, d_out); equals the course's Convolution, k = 3
message mentions: keeps the length T; pad (k-1)/2 * D zeros
breaks: convolution: same-length
"""


def convolution(x, weight, bias, dilation=1):
    k = weight.shape[2]
    T = x.shape[1] - (k - 1) * dilation  # the mistake: no zeros beyond the ends
    return bias + sum(x[:, j * dilation:j * dilation + T] @ weight[:, :, j].T for j in range(k))
