"""The first-party aspect_embedder component (issue #4), a scholarly_nlp plugin."""

from setuptools import find_packages, setup

setup(
    name="scholarly-nlp-aspect-embedder",
    version="0.1.0",
    description="Per-aspect paper embeddings (title, background, method, result) for scholarly_nlp: attention "
                "pooling over the shared transformer's token vectors grouped by sentence role.",
    license="MIT",
    python_requires=">=3.11",
    packages=find_packages(include=["scholarly_aspect_embedder", "scholarly_aspect_embedder.*"]),
    install_requires=["scholarly-nlp>=0.1,<0.2", "spacy>=3.8.18,<3.9", "thinc>=8.3.14,<8.4",
                      "spacy-transformers>=1.4.0,<1.5", "torch==2.13.0", "numpy>=2.4,<3"],
    entry_points={
        "scholarly_nlp": ["aspect_embedder = scholarly_aspect_embedder.plugin"],
        # Declared directly too (as spacy-transformers does), so spacy.load finds it either way.
        "spacy_factories": ["aspect_embedder = scholarly_aspect_embedder.factory:make_aspect_embedder"],
        "spacy_architectures": [
            "scholarly_aspect_embedder.AttentionAspectPooler.v1 = scholarly_aspect_embedder.model:AttentionAspectPooler",
            "scholarly_aspects.AttentionAspectPooler.v1 = scholarly_aspect_embedder.model:AttentionAspectPooler",  # old name (before issue 16), kept so saved pipelines and configs load
        ],
    },
)
