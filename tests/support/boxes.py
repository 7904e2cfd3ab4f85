"""Comparing boxes in tests: the union of boxes, and whether one box is where another is within a
share of the page's size."""

from __future__ import annotations


def union(boxes):
    return (min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes))


def within(got, want, page_size, share=0.02):
    """Each edge of ``got`` within ``share`` of the page's width (left, right) or height (top, bottom)."""
    width, height = page_size
    return all(abs(g - w) <= share * size for g, w, size in zip(got, want, (width, height, width, height)))
