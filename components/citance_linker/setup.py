"""The first-party citance_linker component (CL-SciSumm Task 1A), a scholarly_nlp plugin."""

from setuptools import find_packages, setup

setup(
    name="scholarly-nlp-citance-linker",
    version="0.1.0",
    description="Citance linking for scholarly_nlp: BM25 with a position prior, reranked by a cross-encoder.",
    license="MIT",
    python_requires=">=3.11",
    packages=find_packages(include=["scholarly_citance_linker", "scholarly_citance_linker.*"]),
    install_requires=["scholarly-nlp>=0.1,<0.2", "spacy>=3.8.18,<3.9", "thinc>=8.3.14,<8.4", "numpy>=2.4,<3",
                      "bm25s>=0.3.16,<0.4"],
    entry_points={
        "scholarly_nlp": ["citance_linker = scholarly_citance_linker.plugin"],
        # Declared directly too (as spacy-transformers does), so spacy.load finds it either way.
        "spacy_factories": ["citance_linker = scholarly_citance_linker.factory:make_citance_linker"],
    },
)
