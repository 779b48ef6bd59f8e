"""The feed-forward network without its ReLU: two linear maps that collapse into one.

exercise: feed_forward_and_embeddings/feed_forward
caught by: shape (B, T, d_model); equals the course's FFN with the same weights
message mentions: forgot the ReLU; np.maximum
breaks: feed_forward: value
"""


def feed_forward(x, w1, b1, w2, b2):
    return (x @ w1.T + b1) @ w2.T + b2  # the mistake: no max(0, .) on the hidden layer
