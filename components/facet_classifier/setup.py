"""The first-party facet_classifier component (CL-SciSumm Task 1B citance facets), a scholarly_nlp plugin."""

from setuptools import find_packages, setup

setup(
    name="scholarly-nlp-facet-classifier",
    version="0.1.0",
    description="Citance facet classification for scholarly_nlp (CL-SciSumm Task 1B): why is a paper cited "
                "(Aim, Hypothesis, Implication, Method, Results), multi-label; and the abstract sentence role "
                "tagger (CSAbstruct roles) on the shared transformer.",
    license="MIT",
    python_requires=">=3.11",
    packages=find_packages(include=["scholarly_facet_classifier", "scholarly_facet_classifier.*"]),
    install_requires=["scholarly-nlp>=0.1.2,<0.2", "spacy>=3.8.18,<3.9", "thinc>=8.3.14,<8.4", "numpy>=2.4,<3",
                      "scikit-learn>=1.9,<2", "spacy-transformers>=1.4.0,<1.5"],
    entry_points={
        "scholarly_nlp": ["facet_classifier = scholarly_facet_classifier.plugin"],
        # Declared directly too (as the figure ranker does), so spacy.load finds them either way.
        "spacy_factories": [
            "citance_facet_classifier = scholarly_facet_classifier.factory:make_citance_facet_classifier",
            "sentence_role_tagger = scholarly_facet_classifier.role_tagger:make_sentence_role_tagger",
        ],
        "spacy_architectures": [
            "scholarly_facet_classifier.TfidfLinear.v1 = scholarly_facet_classifier.models:TfidfLinear",
            "scholarly_facets.TfidfLinear.v1 = scholarly_facet_classifier.models:TfidfLinear",  # old name (before issue 16), kept so saved pipelines and configs load
            "scholarly_facet_classifier.TransformerClassifier.v1 = scholarly_facet_classifier.models:TransformerClassifier",
            "scholarly_facets.TransformerClassifier.v1 = scholarly_facet_classifier.models:TransformerClassifier",  # old name (before issue 16), kept so saved pipelines and configs load
            "scholarly_facet_classifier.SentenceRoleTagger.v1 = scholarly_facet_classifier.role_model:SentenceRoleTagger",
            "scholarly_facet_classifier.AbstractRoleEncoder.v1 = scholarly_facet_classifier.role_encoder:AbstractRoleEncoder",
            "scholarly_facets.SentenceRoleTagger.v1 = scholarly_facet_classifier.role_model:SentenceRoleTagger",  # old name (before issue 16), kept so saved pipelines and configs load
        ],
        "spacy_callbacks": [
            "scholarly_facet_classifier.init_frozen_transformer.v1 = scholarly_facet_classifier.role_tagger:init_frozen_transformer",
            "scholarly_facets.init_frozen_transformer.v1 = scholarly_facet_classifier.role_tagger:init_frozen_transformer",  # old name (before issue 16), kept so saved pipelines and configs load
        ],
    },
)
