"""The first-party figure_ranker component (central-figure ranking), a scholarly_nlp plugin."""

from setuptools import find_packages, setup

setup(
    name="scholarly-nlp-figure-ranker",
    version="0.1.0",
    description="Central-figure ranking for scholarly_nlp: a cross-encoder trained self-supervised from figure mentions.",
    license="MIT",
    python_requires=">=3.11",
    packages=find_packages(include=["scholarly_figure_ranker", "scholarly_figure_ranker.*"]),
    install_requires=["scholarly-nlp>=0.1,<0.2", "spacy>=3.8.18,<3.9", "thinc>=8.3.14,<8.4", "numpy>=2.4,<3",
                      "scikit-learn>=1.9,<2"],
    entry_points={
        "scholarly_nlp": ["figure_ranker = scholarly_figure_ranker.plugin"],
        # Declared directly too (as spacy-transformers does), so spacy.load finds it either way.
        "spacy_factories": ["figure_ranker = scholarly_figure_ranker.factory:make_figure_ranker"],
    },
)
