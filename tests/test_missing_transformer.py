"""Components that listen to the shared transformer say so when it is missing (issue 13, item 7)."""

from __future__ import annotations

import pytest

import scholarly_nlp

from conftest import shared


@pytest.mark.parametrize("name, package", [("sentence_role_tagger", "scholarly_facet_classifier"),
                                           ("aspect_embedder", "scholarly_aspect_embedder")])
def test_a_listener_without_a_transformer_pipe_gets_an_error_that_says_so(name, package):
    pytest.importorskip(package)
    nlp = scholarly_nlp.blank()
    pipe = nlp.add_pipe(name)
    doc = scholarly_nlp.read(shared("tei", "acl", "D14-1003.tei.xml"), nlp=nlp)
    with pytest.raises(ValueError, match=rf"{name} reads the shared transformer's output .* no transformer pipe ran "
                                         r"before it: add one first, e.g. nlp.add_pipe\('scholarly_transformer'"):
        pipe(doc)
