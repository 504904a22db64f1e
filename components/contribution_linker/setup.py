"""The first-party contribution_linker component (issue #6), a scholarly_nlp plugin."""

from setuptools import find_packages, setup

setup(
    name="scholarly-nlp-contribution-linker",
    version="0.1.0",
    description="Contribution linking for scholarly_nlp: introduction contribution sentences to the body "
                "paragraphs that explain them (bi-encoder + BM25).",
    license="MIT",
    python_requires=">=3.11",
    packages=find_packages(include=["scholarly_contribution_linker", "scholarly_contribution_linker.*"]),
    install_requires=["scholarly-nlp>=0.1,<0.2", "spacy>=3.8.18,<3.9", "thinc>=8.3.14,<8.4", "numpy>=2.4,<3",
                      "bm25s>=0.3.16,<0.4"],
    entry_points={
        "scholarly_nlp": ["contribution_linker = scholarly_contribution_linker.plugin"],
        # Declared directly too (as spacy-transformers does), so spacy.load finds it either way.
        "spacy_factories": ["contribution_linker = scholarly_contribution_linker.factory:make_contribution_linker"],
    },
)
