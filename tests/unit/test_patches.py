"""The patches of other libraries' internals (``kg_decoder.patches``): each upstream object a patch
replaces, wraps or mirrors is as the patch was written against (its signature and the sha256 of its
source), so an upgrade says which patch to read again; and each patch is in effect once installed."""

from __future__ import annotations

import ast
import importlib.metadata
from pathlib import Path

import pytest

from kg_decoder.patches import LIBRARIES, Upstream, every_upstream, fingerprint, resolve

_DISTRIBUTIONS = {"pdfminer": "pdfminer.six", "unstructured": "unstructured", "pdfplumber": "pdfplumber",
                  "docx": "python-docx", "pptx": "python-pptx", "pypdfium2": "pypdfium2"}


def _version(target: str) -> str:
    distribution = _DISTRIBUTIONS.get(target.split(".")[0].split(":")[0], target.split(".")[0])
    try:
        return f"{distribution} {importlib.metadata.version(distribution)}"
    except importlib.metadata.PackageNotFoundError:
        return distribution


@pytest.mark.parametrize("upstream", every_upstream(), ids=lambda upstream: f"{upstream.patch}-{upstream.target}")
def test_each_patched_target_is_as_the_patch_was_written_against(upstream: Upstream):
    signature, digest = fingerprint(resolve(upstream.target))
    where = f"patch {upstream.patch} (kg_decoder/patches/) depends on {upstream.target}, which {_version(upstream.target)}"
    assert signature == upstream.signature, f"{where} declares otherwise now: {signature}"
    assert digest == upstream.source_sha256, (
        f"{where} has changed (sha256 {digest}): read the change, then record it "
        "(python -m kg_decoder.patches prints the values)")


def test_every_patch_module_records_its_upstream_objects():
    for library in LIBRARIES:
        upstream = importlib.import_module(f"kg_decoder.patches.{library}").UPSTREAM
        assert upstream and all(isinstance(item, Upstream) for item in upstream), library
    targets = [upstream.target for upstream in every_upstream()]
    assert len(targets) == len(set(targets))


def test_importing_the_patches_imports_no_patched_library():
    import subprocess
    import sys

    code = ("import sys, kg_decoder, kg_decoder.patches as p; p.every_upstream(); "
            "print(sorted(m for m in ('unstructured', 'pdfminer', 'pdfplumber', 'docx', 'pptx', 'pypdfium2', "
            "'spacy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_pdfminer_patches_are_in_effect_once_installed():
    from pdfminer import pdfinterp
    from pdfminer.converter import PDFLayoutAnalyzer
    from pdfminer.pdffont import PDFSimpleFont, PDFType1Font

    from kg_decoder.patches import pdfminer as patches

    patches.install_all()
    patches.install_all()  # once per process: a second call changes nothing
    replaced = {"pdfminer.pdfinterp:PDFContentParser": pdfinterp.PDFContentParser,
                "pdfminer.converter:PDFLayoutAnalyzer.render_string_horizontal":
                    PDFLayoutAnalyzer.render_string_horizontal,
                "pdfminer.pdffont:PDFType1Font.__init__": PDFType1Font.__init__,
                "pdfminer.pdffont:PDFSimpleFont.to_unichr": PDFSimpleFont.to_unichr}
    for target, current in replaced.items():
        assert current is not resolve(target) and current.__module__ == "kg_decoder.patches.pdfminer", target
    assert patches.pdfminer_own()["parser"] is resolve("pdfminer.pdfinterp:PDFContentParser")


def test_unstructured_patches_are_in_effect_once_installed():
    import unstructured.nlp.tokenize as tokenize
    import unstructured.partition.pdf as unstructured_pdf

    from kg_decoder.decode import offline
    from kg_decoder.decode.pdf import text_types
    from kg_decoder.patches import unstructured as patches

    offline.install_offline_spacy_model()
    assert tokenize._load_spacy_model.__module__ == "kg_decoder.patches.unstructured"
    assert tokenize._load_spacy_model is not resolve("unstructured.nlp.tokenize:_load_spacy_model")
    with pytest.raises(RuntimeError, match="offline"):
        tokenize._install_spacy_model()

    text_types.install()
    reading = object()
    text_types._read["a text read in a batch"] = reading
    try:
        assert tokenize._process("a text read in a batch") is reading
    finally:
        text_types._read.pop("a text read in a batch")
    assert tokenize._process is not resolve("unstructured.nlp.tokenize:_process")

    own = patches.pdfminer_pages_generator()
    assert own is unstructured_pdf.open_pdfminer_pages_generator

    def replacement(*args, **kwargs):
        return own(*args, **kwargs)

    with patches.pdfminer_pages_replaced(replacement):
        assert unstructured_pdf.open_pdfminer_pages_generator is replacement
    assert unstructured_pdf.open_pdfminer_pages_generator is own


def test_a_sheets_tables_are_found_as_unstructured_finds_them():
    import pandas as pd

    from kg_decoder.patches.unstructured import sheet_core_tables

    frame = pd.DataFrame([["a", "b", "", ""], ["1", "2", "", ""], ["", "", "", ""], ["", "", "x", "y"],
                          ["", "", "3", "4"]])
    cores = list(sheet_core_tables(frame.replace("", None)))
    assert [(core.index[0], core.columns[0]) for core in cores] == [(0, 0), (3, 2)]


def test_oxml_patches_are_in_effect_once_installed():
    import docx
    from docx.oxml.document import CT_Body
    from docx.oxml.xmlchemy import BaseOxmlElement as DocxElement
    from pptx.oxml.xmlchemy import BaseOxmlElement as PptxElement

    from kg_decoder.patches import oxml

    oxml.install_compiled_lookups()
    try:
        for target, current in {"docx.oxml.xmlchemy:BaseOxmlElement.xpath": DocxElement.xpath,
                                "pptx.oxml.xmlchemy:BaseOxmlElement.xpath": PptxElement.xpath,
                                "docx.oxml.document:CT_Body.inner_content_elements":
                                    CT_Body.inner_content_elements}.items():
            assert current is not resolve(target), target
        document = docx.Document()
        document.add_paragraph("one")
        document.add_table(rows=1, cols=1)
        document.add_paragraph("two")
        body = document.element.body
        assert [element.tag.rsplit("}")[1] for element in body.inner_content_elements] == ["p", "tbl", "p"]
    finally:
        oxml.uninstall_compiled_lookups()
    assert DocxElement.xpath is resolve("docx.oxml.xmlchemy:BaseOxmlElement.xpath")
    oxml.install_compiled_lookups()  # as the OOXML backend leaves them


def test_a_pypdfium2_page_hands_every_step_the_same_text_page(tmp_path):
    import pypdfium2
    from fixtures import make_pdf

    from kg_decoder.patches.pypdfium2 import sharing_its_text_page

    make_pdf(tmp_path / "a.pdf")
    pdf = pypdfium2.PdfDocument(str(tmp_path / "a.pdf"))
    try:
        page = sharing_its_text_page(pdf[0])
        assert page.get_textpage() is page.get_textpage()
        assert "KGSENTPDFONE" in page.get_textpage().get_text_bounded()
        other = pdf[0]
        assert other.get_textpage() is not other.get_textpage()  # pypdfium2's own: a text page a call
    finally:
        pdf.close()


def _patching_statements(tree: ast.Module) -> list[str]:
    """Assignments (and setattr/delattr) to an attribute of a module or class imported from another
    library, or to a private attribute of an object the module does not own. A setting in capitals
    (PIL's ``Image.MAX_IMAGE_PIXELS``) is configuration, not a patch."""
    imported: set[str] = set()
    own: set[str] = {"self", "cls"}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            own.add(node.name)
        elif isinstance(node, ast.Assign):
            own.update(name.id for target in node.targets for name in ast.walk(target) if isinstance(name, ast.Name))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                (own if alias.name.split(".")[0] == "kg_decoder" else imported).add(
                    alias.asname or alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom):
            foreign = node.level == 0 and node.module.split(".")[0] != "kg_decoder"
            (imported if foreign else own).update(alias.asname or alias.name for alias in node.names)

    def patching(target: ast.expr) -> bool:
        if not isinstance(target, ast.Attribute) or target.attr.isupper():
            return False
        root = target.value
        while isinstance(root, ast.Attribute):
            root = root.value
        if not isinstance(root, ast.Name):
            return False
        return root.id in imported or (target.attr.startswith("_") and not target.attr.startswith("__")
                                       and root.id not in own and target.value is root)

    found = []
    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = [item for target in node.targets for item in ast.walk(target)
                       if isinstance(item, ast.Attribute) and isinstance(item.ctx, ast.Store)]
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("setattr", "delattr"):
            targets = [ast.Attribute(value=node.args[0], attr=node.args[1].value, ctx=ast.Store())] \
                if len(node.args) > 1 and isinstance(node.args[1], ast.Constant) else []
        found += [(node.lineno, ast.unparse(target)) for target in targets if patching(target)]
    return [f"line {line}: {target}" for line, target in sorted(found)]


def test_no_module_outside_the_patches_patches_another_library():
    package = Path(__file__).resolve().parents[2] / "kg_decoder"
    patches = package / "patches"
    found = {str(path.relative_to(package)): statements for path in sorted(package.rglob("*.py"))
             if patches not in path.parents
             and (statements := _patching_statements(ast.parse(path.read_text(encoding="utf-8"))))}
    assert found == {}, f"patch other libraries in kg_decoder/patches/ only: {found}"


def test_the_patch_guard_finds_the_patches_it_guards_against():
    tree = ast.parse("import unstructured.nlp.tokenize as tokenize\nfrom pdfminer.layout import LTPage\n"
                     "from PIL import Image\n"
                     "def f(page, plumber_page):\n    tokenize._process = len\n    LTPage.analyze = len\n"
                     "    setattr(LTPage, 'analyze', len)\n    plumber_page._objects = {}\n"
                     "    Image.MAX_IMAGE_PIXELS = 1\n    self_made = page\n")
    assert _patching_statements(tree) == ["line 5: tokenize._process", "line 6: LTPage.analyze",
                                          "line 7: LTPage.analyze", "line 8: plumber_page._objects"]
