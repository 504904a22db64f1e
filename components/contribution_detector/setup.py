"""The first-party contribution_detector component (issue #6, detection), a scholarly_nlp plugin."""

from setuptools import find_packages, setup

setup(
    name="scholarly-nlp-contribution-detector",
    version="0.1.0",
    description="Contribution-sentence detection for scholarly_nlp: n-gram, embedding and fine-tuned sequence scorers of introduction sentences, stacked under boosted trees.",
    license="MIT",
    python_requires=">=3.11",
    packages=find_packages(include=["scholarly_contribution_detector", "scholarly_contribution_detector.*"]),
    # the introduction tagger fine-tunes the backbone through LoRA (peft, which scholarly-nlp also requires)
    install_requires=["scholarly-nlp>=0.1.2,<0.2", "spacy>=3.8.18,<3.9", "thinc>=8.3.14,<8.4", "numpy>=2.4,<3",
                      "peft>=0.17.1,<0.18"],
    entry_points={
        "scholarly_nlp": ["contribution_detector = scholarly_contribution_detector.plugin"],
        # Declared directly too (as spacy-transformers does), so spacy.load finds it either way.
        "spacy_factories": ["contribution_detector = scholarly_contribution_detector.factory:make_contribution_detector"],
        "spacy_readers": ["scholarly_contribution_detector.NCGCorpus.v1 = scholarly_contribution_detector.ncg_docs:create_ncg_corpus"],
        "spacy_architectures": [
            "scholarly_contribution_detector.IntroductionTagger.v1 = scholarly_contribution_detector.tagger:IntroductionTagger",
        ],
    },
)
