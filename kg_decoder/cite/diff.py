"""Two versions of a document aligned element by element on their text.

Pure: lists of :class:`DiffSide` in reading order in, :class:`DiffEntry` out. An element whose
text (whitespace folded) is found in the longest common run of both sequences is kept, or moved
when its page differs; one found elsewhere is moved; what is left is paired by similarity within
each stretch that changed (changed, with its character edits), and the rest is removed or added.
"""

from __future__ import annotations

import bisect
import re
from difflib import SequenceMatcher
from typing import Optional, Sequence

from rapidfuzz.distance import Indel

from ..model import DiffCounts, DiffEntry, DiffOp, DiffSide

_SPACE = re.compile(r"\s+")
SIMILAR = 0.5  # two elements this alike (difflib's ratio) are one element changed, not one removed and one added
_MAX_PAIRING = 200_000  # element pairs compared in one changed stretch, at most (a quadratic step)


def folded(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def align(old: Sequence[DiffSide], new: Sequence[DiffSide], with_edits: bool = True) -> list[DiffEntry]:
    """The diff of ``old`` and ``new``, in the new version's order with removed elements where they were;
    a changed element's character edits only ``with_edits`` (carrying facts does not read them).

    >>> a = [DiffSide("a1", "Intro"), DiffSide("a2", "Revenue was 12 M."), DiffSide("a3", "Bye")]
    >>> b = [DiffSide("b1", "Intro"), DiffSide("b2", "Revenue was 14 M."), DiffSide("b3", "New")]
    >>> [(e.op.value, e.edits) for e in align(a, b)]
    [('kept', []), ('changed', [('replace', '2', '4')]), ('added', []), ('removed', [])]
    """
    old_keys = [folded(side.text) for side in old]
    new_keys = [folded(side.text) for side in new]
    matched_old: dict[int, tuple[int, DiffOp]] = {}
    in_order = common_in_order(old_keys, new_keys)
    for i, j in in_order:
        matched_old[i] = (j, _place_op(old[i], new[j]))
    # Same text elsewhere: moved (each text paired in order of appearance).
    unmatched_new: dict[str, list[int]] = {}
    kept_new = {m for m, _ in matched_old.values()}
    for j, key in enumerate(new_keys):
        if key and j not in kept_new:
            unmatched_new.setdefault(key, []).append(j)
    for i, key in enumerate(old_keys):
        if i not in matched_old and unmatched_new.get(key):
            matched_old[i] = (unmatched_new[key].pop(0), DiffOp.MOVED)
    taken_new = {j for j, _ in matched_old.values()}
    # What is left: paired by similarity inside each stretch between matched elements.
    for i_range, j_range in _stretches(in_order, len(old), len(new)):
        lone_old = [i for i in i_range if i not in matched_old]
        lone_new = [j for j in j_range if j not in taken_new]
        for i, j in _pairs_by_similarity(lone_old, lone_new, old_keys, new_keys):
            matched_old[i] = (j, DiffOp.CHANGED)
            taken_new.add(j)
    return _ordered(old, new, matched_old, old_keys, new_keys, with_edits)


def common_in_order(a: Sequence[str], b: Sequence[str]) -> list[tuple[int, int]]:
    """Pairs of equal items kept in order in both (a patience diff: the items unique in both anchor the
    alignment, the longest run of them in order wins, the stretches between are aligned the same way,
    and difflib's matching blocks where no item is unique).

    >>> common_in_order(["q", "a", "b", "s", "o", "r"], ["q", "x", "o", "n", "r", "s"])
    [(0, 0), (4, 2), (5, 4)]
    """
    pairs: list[tuple[int, int]] = []
    stack = [(0, len(a), 0, len(b))]
    while stack:
        a_lo, a_hi, b_lo, b_hi = stack.pop()
        while a_lo < a_hi and b_lo < b_hi and a[a_lo] == b[b_lo]:  # the same start
            pairs.append((a_lo, b_lo))
            a_lo, b_lo = a_lo + 1, b_lo + 1
        while a_lo < a_hi and b_lo < b_hi and a[a_hi - 1] == b[b_hi - 1]:  # the same end
            a_hi, b_hi = a_hi - 1, b_hi - 1
            pairs.append((a_hi, b_hi))
        if a_lo >= a_hi or b_lo >= b_hi:
            continue
        anchors = _unique_in_order(a, b, a_lo, a_hi, b_lo, b_hi)
        if not anchors:
            matcher = SequenceMatcher(None, a[a_lo:a_hi], b[b_lo:b_hi], autojunk=False)
            pairs.extend((a_lo + m.a + k, b_lo + m.b + k) for m in matcher.get_matching_blocks() for k in range(m.size))
            continue
        previous = (a_lo - 1, b_lo - 1)
        for i, j in anchors + [(a_hi, b_hi)]:
            if i - previous[0] > 1 and j - previous[1] > 1:
                stack.append((previous[0] + 1, i, previous[1] + 1, j))
            previous = (i, j)
        pairs.extend(anchors)
    return sorted(pairs)


def _unique_in_order(a, b, a_lo, a_hi, b_lo, b_hi) -> list[tuple[int, int]]:
    """The items that occur once in each range, the longest run of them in the same order."""
    seen_a: dict[str, list[int]] = {}
    for i in range(a_lo, a_hi):
        if a[i]:
            seen_a.setdefault(a[i], []).append(i)
    seen_b: dict[str, list[int]] = {}
    for j in range(b_lo, b_hi):
        if b[j] in seen_a:
            seen_b.setdefault(b[j], []).append(j)
    candidates = sorted((seen_a[key][0], js[0]) for key, js in seen_b.items()
                        if len(js) == 1 and len(seen_a[key]) == 1)
    # The longest increasing run of j (patience sorting, O(n log n)).
    tails: list[int] = []
    tail_index: list[int] = []
    back: list[int] = []
    for index, (_, j) in enumerate(candidates):
        position = bisect.bisect_left(tails, j)
        if position == len(tails):
            tails.append(j)
            tail_index.append(index)
        else:
            tails[position] = j
            tail_index[position] = index
        back.append(tail_index[position - 1] if position else -1)
    run, index = [], tail_index[-1] if tail_index else -1
    while index >= 0:
        run.append(candidates[index])
        index = back[index]
    return run[::-1]


def _place_op(old: DiffSide, new: DiffSide) -> DiffOp:
    return DiffOp.KEPT if old.page_number == new.page_number else DiffOp.MOVED


def _stretches(in_order: list[tuple[int, int]], n_old: int, n_new: int):
    """Runs of old and new positions between consecutive elements kept in order (the anchors)."""
    previous = (-1, -1)
    for i, j in in_order + [(n_old, n_new)]:
        if i - previous[0] > 1 or j - previous[1] > 1:
            yield range(previous[0] + 1, i), range(previous[1] + 1, j)
        previous = (i, j)


def _pairs_by_similarity(lone_old: list[int], lone_new: list[int], old_keys: list[str], new_keys: list[str]):
    """Greedy pairs, most alike first, each at least :data:`SIMILAR` alike."""
    if not lone_old or not lone_new:
        return []
    if len(lone_old) * len(lone_new) > _MAX_PAIRING:  # too many to compare: pair in order instead
        candidates = list(zip(lone_old, lone_new))
    else:
        candidates = [(i, j) for i in lone_old for j in lone_new]
    scored = []
    for i, j in candidates:
        a, b = old_keys[i], new_keys[j]
        if not a or not b or min(len(a), len(b)) < SIMILAR * max(len(a), len(b)):
            continue  # the ratio cannot reach SIMILAR
        ratio = similarity(a, b, at_least=SIMILAR)
        if ratio >= SIMILAR:
            scored.append((-ratio, abs(i - j), i, j))
    scored.sort()
    used_old, used_new, pairs = set(), set(), []
    for _, _, i, j in scored:
        if i not in used_old and j not in used_new:
            used_old.add(i)
            used_new.add(j)
            pairs.append((i, j))
    return pairs


def _common_ends(a: str, b: str) -> tuple[int, int]:
    """The lengths of the start and of the end both texts share (not overlapping)."""
    most = min(len(a), len(b))
    start = 0
    while start < most and a[start] == b[start]:
        start += 1
    end = 0
    while end < most - start and a[-1 - end] == b[-1 - end]:
        end += 1
    return start, end


def similarity(a: str, b: str, at_least: float = 0.0) -> float:
    """How alike two texts are: twice their longest common subsequence over their lengths together
    (difflib's ratio where its matching blocks find that subsequence), computed in C++ by rapidfuzz:
    a long paragraph with a word edited costs little; 0 when less alike than ``at_least`` (found sooner).

    >>> similarity("Revenue was 12 M.", "Revenue was 14 M.")
    0.9411764705882353
    """
    if not a and not b:
        return 1.0
    return Indel.normalized_similarity(a, b, score_cutoff=at_least)


def character_edits(old: str, new: str, limit: int = 50) -> list[tuple[str, str, str]]:
    """The edits from ``old`` to ``new``: (operation, old text, new text), at most ``limit``.

    >>> character_edits("Revenue was 12 M in 2024.", "Revenue was 14 M in 2025.")
    [('replace', '2', '4'), ('replace', '4', '5')]
    """
    start, end = _common_ends(old, new)
    old, new = old[start:len(old) - end], new[start:len(new) - end]
    matcher = SequenceMatcher(None, old, new, autojunk=False)
    return [(tag, old[i1:i2], new[j1:j2]) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"][:limit]


def _ordered(old: Sequence[DiffSide], new: Sequence[DiffSide], matched: dict[int, tuple[int, DiffOp]],
             old_keys: list[str], new_keys: list[str], with_edits: bool) -> list[DiffEntry]:
    by_new = {j: i for i, (j, _) in matched.items()}
    entries: list[DiffEntry] = []
    pending_removed = sorted(i for i in range(len(old)) if i not in matched)
    for j, side in enumerate(new):
        i = by_new.get(j)
        if i is not None:
            while pending_removed and pending_removed[0] < i:  # removed elements where they were
                entries.append(DiffEntry(DiffOp.REMOVED, old=old[pending_removed.pop(0)]))
            op = matched[i][1]
            edits = character_edits(old_keys[i], new_keys[j]) if op is DiffOp.CHANGED and with_edits else []
            entries.append(DiffEntry(op, old=old[i], new=side, edits=edits))
        else:
            entries.append(DiffEntry(DiffOp.ADDED, new=side))
    entries.extend(DiffEntry(DiffOp.REMOVED, old=old[i]) for i in pending_removed)
    return entries


def count(entries: Sequence[DiffEntry]) -> DiffCounts:
    counts = DiffCounts()
    for entry in entries:
        counts.add(entry.op)
    return counts


def aligned_new(entries: Sequence[DiffEntry]) -> dict[str, Optional[DiffEntry]]:
    """Each old element's entry, by the old element's IRI."""
    return {entry.old.element: entry for entry in entries if entry.old is not None}


__all__ = ["align", "aligned_new", "character_edits", "count", "folded", "similarity"]
