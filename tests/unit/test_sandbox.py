"""Which installation folder the confinement binds beside the system's: LibreOffice's, and no other."""

import os
import stat

from kg_decoder.decode.sandbox import _install_folder


def _program(path):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def test_a_libreoffice_installation_outside_the_system_folders_is_bound(tmp_path):
    soffice = _program(tmp_path / "opt" / "libreoffice7.6" / "program" / "soffice")
    assert _install_folder(soffice) == str(tmp_path / "opt" / "libreoffice7.6")
    link = tmp_path / "bin" / "soffice"  # a link on the PATH to the installation's binary
    link.parent.mkdir()
    os.symlink(soffice, link)
    assert _install_folder(str(link)) == str(tmp_path / "opt" / "libreoffice7.6")


def test_no_other_program_nor_a_folder_that_holds_more_is_bound(tmp_path):
    assert _install_folder(_program(tmp_path / "tools" / "bin" / "soffice")) is None  # not an installation's layout
    assert _install_folder(_program(tmp_path / "opt" / "other" / "program" / "convert")) is None
    assert _install_folder("/program/soffice") is None  # would bind the root
    assert _install_folder("/home/someone/program/soffice") is None  # would bind a home folder
    assert _install_folder("/usr/lib/libreoffice/program/soffice") is None  # the system's: bound already


def test_unconfined_a_cleaned_format_is_laid_out_only_as_a_zip_package(monkeypatch):
    """Where no bubblewrap confines LibreOffice, an RTF (whose fields read this machine's files) named
    .docx is not given to it: it reads the bytes, not the name, and the cleaning covers packages only."""
    import io
    import zipfile

    from kg_decoder.decode.office import backend as office

    monkeypatch.delenv(office.UNCONFINED_VARIABLE, raising=False)
    monkeypatch.setattr(office, "confinement", lambda: None)
    rtf = rb'{\rtf1 {\field{\*\fldinst INCLUDETEXT "/etc/hostname"}}}'
    assert office.laid_out_bytes(rtf, "docx") is None
    package = io.BytesIO()
    with zipfile.ZipFile(package, "w") as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
    assert office.laid_out_bytes(package.getvalue(), "docx") == package.getvalue()
    assert office.laid_out_bytes(package.getvalue(), "doc") is None  # not cleaned: refused unconfined
    assert office.laid_out_bytes(rtf + package.getvalue(), "docx") is None  # a ZIP appended: still RTF to it
    other = io.BytesIO()
    with zipfile.ZipFile(other, "w") as archive:
        archive.writestr("readme.txt", "no package")
    assert office.laid_out_bytes(other.getvalue(), "docx") is None
    monkeypatch.setattr(office, "confinement", lambda: "bwrap")  # confined: read as LibreOffice finds it
    assert office.laid_out_bytes(rtf, "docx") == rtf
