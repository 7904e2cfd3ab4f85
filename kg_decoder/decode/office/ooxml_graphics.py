"""What Office graphic frames show as text: a chart as the table of its data (title, series by
categories with the values the file caches, chart type), after the texts it draws, each an element
that a document placed on its rendering finds where it is drawn (title, axis titles, legend, category
labels, data labels); and a SmartArt diagram as its nodes' text in the diagram's order. Shared by
DOCX, PPTX and XLSX (and the legacy formats through their conversion; a sheet's charts without their
drawn texts: a sheet is not placed on a rendering).

The values are the strings the chart part caches (``c:v``), as written: the file's numbers, not a
rendering's rounding of them.
"""

from __future__ import annotations

import html as html_lib
from typing import Callable, Optional

from ...model import Element
from .ooxml_package import CHART_URI, DIAGRAM_URI, R, Package, local, paragraph_texts

C = "http://schemas.openxmlformats.org/drawingml/2006/chart"
DGM = "http://schemas.openxmlformats.org/drawingml/2006/diagram"
_TEXT_POINTS = {None, "node", "asst"}  # SmartArt points that hold a node's text (others: transitions, layout)


def c(name: str) -> str:
    return f"{{{C}}}{name}"


def graphic_elements(package: Package, data, relationships: dict[str, str],
                     cells: Optional[CellReader] = None, drawn_texts: bool = False) -> list[Element]:
    """The elements of a drawing's ``a:graphicData``: its chart (as a table) or its SmartArt nodes;
    ``relationships`` those of the part the drawing is in. ``drawn_texts``: a chart's texts as a
    renderer draws them come first, each an element (:func:`chart_texts`), for a document placed on
    its rendering."""
    if data.get("uri") == CHART_URI:
        reference = next((child for child in data if local(child) == "chart"), None)
        target = relationships.get(reference.get(f"{{{R}}}id")) if reference is not None else None
        chart = chart_element(package, target, cells) if target else None
        texts = chart_texts(package, target) if target and chart is not None and drawn_texts else []
        return texts + [chart] if chart is not None else []
    if data.get("uri") == DIAGRAM_URI:
        ids = next((child for child in data if local(child) == "relIds"), None)
        target = relationships.get(ids.get(f"{{{R}}}dm")) if ids is not None else None
        return smartart_elements(package, target) if target else []
    return []


# ---------------------------------------------------------------- charts


# Reads the cells a chart's data reference names (``Sheet1!$B$2:$B$5``): point index -> value.
CellReader = Callable[[str], dict[int, str]]


def chart_element(package: Package, part: str, cells: Optional[CellReader] = None) -> Optional[Element]:
    """The chart of a chart part as a Table element (``html`` its data, ``properties`` its type and
    title), or None when the part holds no chart with data or title. ``cells`` reads the values of a
    reference the part caches none for (a workbook's own charts, as some writers leave them)."""
    root = package.xml(part)
    chart = root.find(c("chart")) if root is not None else None
    if chart is None:
        return None
    plot = chart.find(c("plotArea"))
    kinds, series = [], []
    for group in (plot if plot is not None else ()):
        name = local(group)
        if not name.endswith("Chart"):
            continue
        kind = name[:-len("Chart")]
        direction = group.find(c("barDir"))
        if kind.startswith("bar") and direction is not None and direction.get("val") == "col":
            kind = kind.replace("bar", "column", 1)
        if kind not in kinds:
            kinds.append(kind)
        series += [_series(ser, cells) for ser in group.findall(c("ser"))]
    title = _title(chart, series)
    axes = {}  # the first title of each kind of axis
    for axis in (plot if plot is not None else ()):
        kind = {"catAx": "category", "dateAx": "category", "valAx": "value"}.get(local(axis))
        if kind and not axes.get(kind):
            axes[kind] = _rich_text(axis.find(c("title")))
    category_title, value_title = axes.get("category", ""), axes.get("value", "")
    rows = _rows(series, category_title)
    if not rows and not title:
        return None
    caption = " — ".join(t for t in (title, value_title) if t)
    html = _table_html(caption, rows)
    text = " ".join([caption] * bool(caption) + [cell for row in rows for cell in row if cell])
    properties = {"chartType": "+".join(kinds) or "chart"}
    if title:
        properties["chartTitle"] = title
    return Element(0, "Table", text, html=html, properties=properties)


CHART_TEXT = "ChartText"  # the category of a text a chart draws (its part: Element.properties["chartPart"])


def chart_texts(package: Package, part: str) -> list[Element]:
    """The texts a chart draws, each an element (category :data:`CHART_TEXT`, ``properties["chartPart"]``
    ``title``, ``axisTitle``, ``series`` (a legend's entry), ``category`` (an axis label) or
    ``dataLabel``): what a renderer shows of it, so that each can be found where it is drawn; a text
    drawn twice is one element. Series names only in a legend (a pie's legend names its categories),
    category labels only on a category axis not deleted (a scatter's x values are numbers on a value
    axis), values only where the chart shows data labels (in Office's General format, as drawn)."""
    root = package.xml(part)
    chart = root.find(c("chart")) if root is not None else None
    if chart is None:
        return []
    plot = chart.find(c("plotArea"))
    groups = [group for group in (plot if plot is not None else ()) if local(group).endswith("Chart")]
    series = [(group, ser, _series(ser, None)) for group in groups for ser in group.findall(c("ser"))]
    texts: list[tuple[str, str]] = [("title", _title(chart, [s for _, _, s in series]))]
    category_axis_shown = False
    for axis in (plot if plot is not None else ()):
        if local(axis) in ("catAx", "dateAx", "valAx", "serAx"):
            texts.append(("axisTitle", _rich_text(axis.find(c("title")))))
            if local(axis) in ("catAx", "dateAx") and not _on(axis.find(c("delete"))):
                category_axis_shown = True
    pies = bool(groups) and all(local(group) in _PIES for group in groups)  # their legend names categories
    if chart.find(c("legend")) is not None and not pies:
        texts += [("series", found["name"]) for _, _, found in series]
    if category_axis_shown or pies and chart.find(c("legend")) is not None:
        shared = next((found["categories"] for _, _, found in series if found["categories"]), {})
        texts += [("category", label) for _, label in sorted(shared.items())]
    for group, ser, found in series:
        labels = ser.find(c("dLbls"))
        labels = labels if labels is not None else group.find(c("dLbls"))
        if labels is not None and _on(labels.find(c("showVal"))) and not _on(labels.find(c("delete"))):
            general = _general_format(labels, ser.find(f"{c('val')}/{c('numRef')}/{c('numCache')}"))
            texts += [("dataLabel", _as_general(value) if general else value)
                      for _, value in sorted(found["values"].items())]
    seen: set[str] = set()  # a text drawn twice (a lone series' name as title and in the legend) is one
    elements = []
    for kind, text in texts:
        if text and text.strip() and text.strip() not in seen:
            seen.add(text.strip())
            elements.append(Element(0, CHART_TEXT, text.strip(), properties={"chartPart": kind}))
    return elements


_PIES = {"pieChart", "pie3DChart", "doughnutChart", "ofPieChart"}


def _general_format(labels, values) -> bool:
    """Whether data labels show their values in Office's General number format: their own format, or
    (linked to the source, or none stated) the values' cached one."""
    stated = labels.find(c("numFmt"))
    if stated is not None and stated.get("sourceLinked") not in ("1", "true"):
        return stated.get("formatCode", "General") == "General"
    code = values.find(c("formatCode")) if values is not None else None
    return code is None or (code.text or "General") == "General"


def _as_general(value: str) -> str:
    """A cached number as Office's General format shows it: ``9.0`` as ``9``, ``12.50`` as ``12.5``.

    >>> _as_general("9.0"), _as_general("12.50"), _as_general("n/a"), _as_general("0.1")
    ('9', '12.5', 'n/a', '0.1')
    """
    try:
        number = float(value)
    except ValueError:
        return value
    return f"{number:.10g}" if abs(number) < 1e11 else value


def _on(flag) -> bool:
    """Whether a boolean chart setting (``<c:showVal val="1"/>``) is on; a setting without ``val`` is on."""
    return flag is not None and flag.get("val", "1") in ("1", "true")


def _series(ser, cells: Optional[CellReader]) -> dict:
    """A series: its name, its categories (or x values) and its values (or y values), by point index."""
    name = _cached_text(ser.find(c("tx")))
    if not name and cells is not None and ser.find(f"{c('tx')}/{c('strRef')}/{c('f')}") is not None:
        name = " ".join(cells(ser.find(f"{c('tx')}/{c('strRef')}/{c('f')}").text or "").values())
    return {"name": name,
            "categories": _points(ser.find(c("cat")) if ser.find(c("cat")) is not None else ser.find(c("xVal")), cells),
            "values": _points(ser.find(c("val")) if ser.find(c("val")) is not None else ser.find(c("yVal")), cells),
            "sizes": _points(ser.find(c("bubbleSize")), cells)}


def _points(holder, cells: Optional[CellReader] = None) -> dict[int, str]:
    """Point index -> cached value of a data reference or literal (multi-level categories joined,
    outer level first); the referenced cells' values where nothing is cached and ``cells`` can read them."""
    if holder is None:
        return {}
    reference = holder.find(".//" + c("f"))
    if cells is not None and reference is not None and reference.text and holder.find(".//" + c("pt")) is None:
        return cells(reference.text)
    levels = holder.findall(".//" + c("lvl"))
    if levels:
        found: dict[int, str] = {}
        for level in reversed(levels):  # the outer level is listed last
            for index, value in _cached_points(level).items():
                found[index] = f"{found[index]} / {value}" if index in found else value
        return found
    return _cached_points(holder)


def _cached_points(holder) -> dict[int, str]:
    found = {}
    for point in holder.iter(c("pt")):
        value = point.find(c("v"))
        try:
            index = int(point.get("idx", ""))
        except ValueError:
            continue
        if value is not None and value.text is not None:
            found[index] = value.text.strip()
    return found


def _cached_text(holder) -> str:
    if holder is None:
        return ""
    direct = holder.find(c("v"))
    if direct is not None and direct.text:
        return direct.text.strip()
    return " ".join(v for _, v in sorted(_cached_points(holder).items()))


def _rich_text(title) -> str:
    """A chart or axis title's text: its rich text, or the text it refers to."""
    if title is None:
        return ""
    holder = title.find(c("tx"))
    if holder is None:
        return ""
    rich = holder.find(c("rich"))
    if rich is not None:
        return " ".join(paragraph_texts(rich))
    return _cached_text(holder.find(c("strRef")))


def _title(chart, series: list[dict]) -> str:
    """The chart's title; a title element without text shows the name of a lone series (as Office draws it)."""
    title = chart.find(c("title"))
    if title is None:
        return ""
    text = _rich_text(title)
    deleted = chart.find(c("autoTitleDeleted"))
    if not text and len(series) == 1 and (deleted is None or deleted.get("val") not in ("1", "true")):
        text = series[0]["name"]
    return text


def _rows(series: list[dict], category_title: str) -> list[list[str]]:
    """The chart's data as rows: a header (categories' title, series names), then a row per category
    with each series' value there. Series whose categories differ (scatter series with x values of
    their own) are listed point by point instead: series, x, y."""
    series = [s for s in series if s["values"] or s["categories"]]
    if not series:
        return []
    shared = next((s["categories"] for s in series if s["categories"]), {})
    if all(not s["categories"] or s["categories"] == shared for s in series):
        indices = sorted(set(shared) | {i for s in series for i in s["values"]})
        sized = [s for s in series if s["sizes"]]
        header = [category_title] + [s["name"] or f"Series {k + 1}" for k, s in enumerate(series)] + \
                 [f"{s['name'] or 'Series'} size" for s in sized]
        return [header] + [[shared.get(i, "")] + [s["values"].get(i, "") for s in series]
                           + [s["sizes"].get(i, "") for s in sized] for i in indices]
    rows = [["Series", category_title or "x", "y"]]
    for k, s in enumerate(series):
        for i in sorted(set(s["categories"]) | set(s["values"])):
            rows.append([s["name"] or f"Series {k + 1}", s["categories"].get(i, ""), s["values"].get(i, "")])
    return rows


def _table_html(caption: str, rows: list[list[str]]) -> str:
    parts = ["<table>"]
    if caption:
        parts.append(f"<caption>{html_lib.escape(caption)}</caption>")
    for r, row in enumerate(rows):
        cells = "".join(f"<th>{html_lib.escape(cell)}</th>" if r == 0 or k == 0 else f"<td>{html_lib.escape(cell)}</td>"
                        for k, cell in enumerate(row))
        parts.append(f"<tr>{cells}</tr>")
    parts.append("</table>")
    return "".join(parts)


# ---------------------------------------------------------------- SmartArt


def smartart_elements(package: Package, data_part: str) -> list[Element]:
    """The text of a SmartArt diagram's nodes, each an element (category ``SmartArt``, its depth in the
    diagram's tree), in the diagram's order: from the document point down its parent-of connections
    by their source order; nodes no connection reaches follow in the order the part lists them."""
    root = package.xml(data_part)
    if root is None:
        return []
    points = {}
    order = []
    for point in root.iter(f"{{{DGM}}}pt"):
        identifier = point.get("modelId")
        if identifier is not None:
            points[identifier] = point
            order.append(identifier)
    children: dict[str, list[tuple[int, str]]] = {}
    for link in root.iter(f"{{{DGM}}}cxn"):
        if link.get("type") in (None, "parOf"):
            try:
                rank = int(link.get("srcOrd", "0"))
            except ValueError:
                rank = 0
            children.setdefault(link.get("srcId"), []).append((rank, link.get("destId")))
    visited: list[tuple[str, int]] = []
    seen: set[str] = set()
    stack = [(identifier, -1) for identifier in order if points[identifier].get("type") == "doc"][:1]
    while stack:
        identifier, depth = stack.pop()
        if identifier in seen or identifier not in points:
            continue
        seen.add(identifier)
        visited.append((identifier, depth))
        for _, child in sorted(children.get(identifier, []), reverse=True):
            stack.append((child, depth + 1))
    visited += [(identifier, 0) for identifier in order if identifier not in seen]
    elements = []
    for identifier, depth in visited:
        point = points[identifier]
        if point.get("type") not in _TEXT_POINTS:
            continue
        body = point.find(f"{{{DGM}}}t")
        text = "\n".join(paragraph_texts(body)) if body is not None else ""
        if text.strip():
            elements.append(Element(0, "SmartArt", text, depth=max(depth, 0)))
    return elements


__all__ = ["CHART_TEXT", "chart_element", "chart_texts", "smartart_elements"]
