"""The first-party figure_embedder component (figure embeddings, Kuzi & Zhai), a scholarly_nlp plugin."""

from setuptools import find_packages, setup

setup(
    name="scholarly-nlp-figure-embedder",
    version="0.1.0",
    description="Figure embeddings for scholarly_nlp: caption/context text and the figure image, "
                "trained with weak supervision from papers and citations.",
    license="MIT",
    python_requires=">=3.11",
    packages=find_packages(include=["scholarly_figure_embedder", "scholarly_figure_embedder.*"]),
    install_requires=["scholarly-nlp>=0.1,<0.2", "spacy>=3.8.18,<3.9", "thinc>=8.3.14,<8.4", "numpy>=2.4,<3",
                      "torch==2.13.0", "Pillow>=13,<14", "scikit-learn>=1.9,<2", "click>=8.4,<9"],
    entry_points={
        "scholarly_nlp": ["figure_embedder = scholarly_figure_embedder.plugin"],
        # Declared directly too (as the figure ranker does), so spacy.load finds them either way.
        "spacy_factories": ["figure_embedder = scholarly_figure_embedder.factory:make_figure_embedder"],
        "spacy_architectures": [
            "scholarly_figure_embedder.FigureEmbedder.v1 = scholarly_figure_embedder.model:build_figure_embedder",
        ],
    },
)
