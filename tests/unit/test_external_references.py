"""Office packages cleaned of their references outside them before LibreOffice reads them."""

from __future__ import annotations

import io
import zipfile

from lxml import etree

from kg_decoder.decode.office.external_references import INERT_TARGET, without_external_references
from linked_office import hostile_office_files, write_secrets

XLINK_HREF = "{http://www.w3.org/1999/xlink}href"
RELATIONSHIP = "{http://schemas.openxmlformats.org/package/2006/relationships}Relationship"


def references(package: bytes) -> list[tuple[str, str]]:
    """Every (kind, target) a package names: OOXML relationships (their type's last word, " external"
    added for an external target) and ODF links (the linking element's name, " external" added for a
    target outside the package: a URL or a path up from its folder)."""
    archive = zipfile.ZipFile(io.BytesIO(package))
    names = archive.namelist()
    odf = "mimetype" in names and archive.read("mimetype").startswith(b"application/vnd.oasis.opendocument")
    found = []
    for name in names:
        if name.endswith(".rels"):
            for relationship in etree.fromstring(archive.read(name)).iter(RELATIONSHIP):
                external = " external" if relationship.get("TargetMode") == "External" else ""
                found.append((relationship.get("Type").rsplit("/", 1)[-1] + external, relationship.get("Target")))
        elif odf and name.endswith(".xml"):
            for element in etree.fromstring(archive.read(name)).iter():
                if isinstance(element.tag, str) and element.get(XLINK_HREF) is not None:
                    target = element.get(XLINK_HREF)
                    external = " external" if "://" in target or target.startswith(("..", "/")) else ""
                    found.append((etree.QName(element).localname + external, target))
    return found


def outside(reference: tuple[str, str]) -> bool:
    return reference[0].endswith(" external")


def test_every_reference_outside_a_package_is_made_inert(tmp_path):
    """Hyperlinks too: the copy is only laid out, and a relationship's type binds nothing."""
    secrets = write_secrets(tmp_path / "secrets")
    for name, package in hostile_office_files("http://127.0.0.1:9", secrets).items():
        if "include" in name:  # a field's instruction, not a reference of the package: LibreOffice's confinement
            continue
        before, after = references(package), references(without_external_references(package))
        assert any(map(outside, before)), name  # each file does link outside itself
        assert [r for r in after if outside(r)] == [], name
        if name.endswith((".docx", ".pptx", ".xlsx")):  # the same relationships, the outside ones inert
            assert len(after) == len(before), name
            assert {target for (kind, target) in after if (kind, target) not in before} == {INERT_TARGET}
        zipfile.ZipFile(io.BytesIO(without_external_references(package))).testzip()


def test_a_package_that_cannot_be_cleaned_is_not_laid_out(tmp_path):
    """A part that will not parse, or a damaged member: None (LibreOffice gets no copy to follow)."""
    package = hostile_office_files("http://127.0.0.1:9", write_secrets(tmp_path / "s"))["picture-url.docx"]
    broken = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(package)) as source, zipfile.ZipFile(broken, "w") as target:
        for info in source.infolist():
            data = source.read(info.filename)
            target.writestr(info, data[:len(data) // 2] if info.filename == "word/_rels/document.xml.rels" else data)
    assert without_external_references(broken.getvalue()) is None
    damaged = bytearray(package)
    member = zipfile.ZipFile(io.BytesIO(package)).getinfo("word/_rels/document.xml.rels")
    at = member.header_offset + 30 + len(member.filename) + 4  # into its deflated bytes
    damaged[at:at + 16] = b"\xff" * 16
    assert without_external_references(bytes(damaged)) is None


def test_an_odf_link_to_a_path_outside_the_package_is_dropped(tmp_path):
    secrets = write_secrets(tmp_path / "secrets")
    package = hostile_office_files("http://127.0.0.1:9", secrets)["picture-relative.odt"]
    assert ("image external", "../secrets/secret.png") in references(package)
    cleaned = without_external_references(package)
    assert [kind for kind, _ in references(cleaned)] == []
    archive = zipfile.ZipFile(io.BytesIO(cleaned))
    assert archive.namelist()[0] == "mimetype" and archive.getinfo("mimetype").compress_type == zipfile.ZIP_STORED


def test_packages_that_link_nothing_outside_are_left_as_they_are(corpus_dir):
    for name in ("handbook-1p.docx", "fake-power-point.pptx", "fake.odt", "stanley-cups.xlsx", "fake-doc.rtf",
                 "README.md"):
        data = (corpus_dir / name).read_bytes()
        assert without_external_references(data) is data, name
