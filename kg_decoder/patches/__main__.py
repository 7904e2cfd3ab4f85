"""Print every patch's upstream fingerprints as they are now: ``python -m kg_decoder.patches``."""

from . import every_upstream, fingerprint, resolve

for upstream in every_upstream():
    signature, digest = fingerprint(resolve(upstream.target))
    print(f'    Upstream("{upstream.patch}", "{upstream.target}",\n             {signature!r},\n'
          f'             "{digest}"),')
