#!/usr/bin/env bash
# Set up kg-decoder on a fresh Debian machine: system tools, a virtualenv in .venv,
# the package with its test extras. Safe to run again: it installs only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

# poppler-utils: PDF rendering for OCR; tesseract: OCR (English, Hebrew, Arabic, Chinese, Portuguese);
# libmagic1: format detection;
# LibreOffice (writer, calc, impress): DOC and PPT, Office pages drawn for the trace view; DejaVu fonts: text in generated test images;
# Nanum fonts: Hangul for the Korean test PDF (tests/support/drawn_pdfs.py) and for Korean Office pages LibreOffice draws;
# Chromium and its driver: the browser test of the web app (Debian's own build, no download);
# gcc and libc6-dev: the C reader of PDF characters (decode/pdf/pdfium_chars.c);
# strace: the test that a decode opens no Internet socket in any of its processes, native code included;
# bubblewrap: LibreOffice laid out in namespaces of its own, no network and none of the machine's files.
SYSTEM_PACKAGES=(poppler-utils tesseract-ocr tesseract-ocr-eng tesseract-ocr-heb tesseract-ocr-ara
                 tesseract-ocr-chi-sim tesseract-ocr-por libmagic1 libreoffice-writer-nogui libreoffice-calc-nogui
                 libreoffice-impress-nogui fonts-dejavu-core fonts-nanum chromium chromium-driver gcc libc6-dev strace bubblewrap)
missing=()
for package in "${SYSTEM_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "setup: installing system packages: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

PYTHON="${PYTHON:-python3}"
"$PYTHON" -c 'import sys; assert sys.version_info >= (3, 11), "kg-decoder needs Python 3.11+"'
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
# unstructured[all-docs] brings torch; pip takes it from the machine's local wheel cache where there is one.
.venv/bin/python -m pip install -q -e '.[test]'
# The C reader of a PDF page's characters (kg_decoder/decode/pdf/pdfium_chars.c): about 30 times
# faster than ctypes; without a C compiler the characters are read through ctypes, the same numbers.
.venv/bin/python -c 'from kg_decoder.decode.pdf.pdfium_chars import build; build()'
echo "setup: ready ($(.venv/bin/kg-decoder --version))"
