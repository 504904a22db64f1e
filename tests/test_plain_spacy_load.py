"""Every component works through plain spaCy with the scholarly_nlp plugins disabled (issue 13,
item 8): spaCy's ``spacy_factories`` entry point finds the factory, and the pipe installs its
own ``._`` attributes (its ComponentSpec), so nothing depends on the pluggy hooks having run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

COMPONENTS = {
    "figure_ranker": "figure_ranker",
    "figure_embedder": "figure_embedder",
    "citance_linker": "citance_linker",
    "citance_facet_classifier": "facet_classifier",
    "sentence_role_tagger": "facet_classifier",
    "contribution_detector": "contribution_detector",
    "contribution_linker": "contribution_linker",
    "aspect_embedder": "aspect_embedder",
}


@pytest.mark.parametrize("name", sorted(COMPONENTS))
def test_a_component_loads_with_plain_spacy_and_the_plugins_disabled(name):
    pytest.importorskip(f"scholarly_{COMPONENTS[name]}")
    env = dict(os.environ, SCHOLARLY_NLP_DISABLE_PLUGINS=",".join(sorted(set(COMPONENTS.values()))))
    env.pop("SCHOLARLY_NLP_PLUGINS", None)
    code = (
        "import json, sys, importlib\n"
        "import spacy\n"
        "from spacy.tokens import Doc\n"
        "nlp = spacy.blank('en')\n"
        "pipe = nlp.add_pipe(sys.argv[1])\n"
        "spec = importlib.import_module(type(pipe).__module__).SPEC\n"
        "import scholarly_nlp\n"
        "loaded = sorted(n for n, r in scholarly_nlp.get_registry().plugins.items() if r.status == 'loaded')\n"
        "print(json.dumps({'spec': spec.name, 'loaded': loaded, 'missing': [k for k in spec.extensions\n"
        "    if k.startswith('doc._.') and not Doc.has_extension(k.split('._.', 1)[1])]}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code, name], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["spec"] == name
    assert not set(result["loaded"]) & set(COMPONENTS.values())  # the component's plugin did not run
    assert result["missing"] == []
