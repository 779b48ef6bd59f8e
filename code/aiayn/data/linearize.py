"""Trees as token sequences and back: the output side of parsing as translation (§6.3).

Vinyals et al. (2015), "Grammar as a Foreign Language", turned a parse tree into a sequence
by walking it depth-first and writing labelled brackets. The paper's own code (tensor2tensor's
``wsj_parsing.py``) writes the same walk with each word's part-of-speech tag in its place:

    (S (NP (DT the) (NN dog)) (VP (VBD barked)) (. .))  ->  (S (NP DT NN )NP (VP VBD )VP . )S

So the sequence keeps every constituent with its label and, through the tags, where each word
falls; it drops the words, which the encoder reads. Vinyals et al. wrote ``XX`` for every tag
instead (``tags=False``): tags are not scored, and it helped their LSTM by about 1 F1 point.
``to_tree`` puts the words back under the tags.

A decoder is free to write any sequence, so ``to_tree(..., repair=True)`` makes a tree of any:
a closing bracket closes the innermost open constituent, whatever its label, and one with
nothing open is dropped; constituents still open at the end are closed; a tag beyond the
sentence's words is dropped; words that got no tag are attached at the top, after the rest
(tagged ``XX``); a constituent with no words is dropped; and if that leaves more than one
piece at the top, a ``TOP`` node, which EVALB ignores, holds them. Special tokens such as
``<unk>`` are dropped. The repair never adds a scored bracket; it only decides how the
brackets that the model did write are read.
"""

from dataclasses import dataclass

from nltk import Tree

WORD = "XX"
TOP = "TOP"


def linearize(tree: Tree, tags: bool = True) -> list[str]:
    """Depth-first labelled brackets; every word becomes its tag (or ``XX`` without ``tags``)."""
    if _is_preterminal(tree):
        return [tree.label() if tags else WORD]
    tokens = ["(" + tree.label()]
    for child in tree:
        if not isinstance(child, Tree):
            raise ValueError(f"tree has a word {child!r} directly under {tree.label()!r}: every "
                             "word needs a part-of-speech tag above it")
        tokens += linearize(child, tags)
    return tokens + [")" + tree.label()]


def _is_preterminal(tree: Tree) -> bool:
    return len(tree) == 1 and not isinstance(tree[0], Tree)


def is_bracket(token: str) -> bool:
    return len(token) > 1 and token[0] in "()"


def retag(tree: Tree, tags) -> Tree:
    """A copy of ``tree`` with its words' tags replaced by ``tags``, in order."""
    tree, tags = tree.copy(deep=True), list(tags)
    positions = tree.treepositions("leaves")
    if len(tags) != len(positions):
        raise ValueError(f"got {len(tags)} tags for {len(positions)} words")
    for tag, position in zip(tags, positions):
        tree[position[:-1]].set_label(tag)
    return tree


@dataclass(frozen=True)
class Reading:
    """What ``to_tree`` made of a sequence: the tree and every repair it needed."""

    tree: Tree
    repairs: tuple[str, ...]  # empty for a well-formed sequence


def to_tree(tokens, words, repair: bool = False) -> Reading:
    """The tree that ``tokens`` describe over ``words``: each tag token takes the next word.
    Without ``repair`` a malformed sequence raises ValueError."""
    tokens, words = list(tokens), list(words)
    repairs = []

    def problem(message):
        if not repair:
            raise ValueError(f"malformed sequence: {message} in {' '.join(tokens)!r}")
        repairs.append(message)

    top, stack, used = [], [], 0  # finished top-level pieces; open constituents; words placed
    for i, token in enumerate(tokens):
        if not is_bracket(token):
            if token.startswith("<") and token.endswith(">"):
                problem(f"special token {token} at {i}")
            elif used == len(words):
                problem(f"tag {token} at {i} beyond the {len(words)} words")
            else:
                (stack[-1][1] if stack else top).append(Tree(token, [words[used]]))
                used += 1
        elif token[0] == "(":
            stack.append((token[1:], []))
        elif not stack:
            problem(f"{token} at {i} closes nothing")
        else:
            label, children = stack.pop()
            if token[1:] != label:
                problem(f"{token} at {i} closes ({label}")
            _attach(stack, top, label, children, problem)
    while stack:
        label, children = stack.pop()
        problem(f"({label} never closed")
        _attach(stack, top, label, children, problem)
    if used < len(words):
        problem(f"{len(words) - used} of {len(words)} words got no tag")
        top += [Tree(WORD, [word]) for word in words[used:]]
    if len(top) == 1 and not _is_preterminal(top[0]):
        return Reading(top[0], tuple(repairs))
    if tokens or words:
        problem(f"{len(top)} pieces at the top instead of one constituent")
    return Reading(Tree(TOP, top), tuple(repairs))


def _attach(stack, top, label, children, problem) -> None:
    if not children:
        problem(f"({label} holds no word")
        return
    (stack[-1][1] if stack else top).append(Tree(label, children))
