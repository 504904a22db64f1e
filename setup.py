"""Packaging of the scholarly_nlp core distribution (``pip install -e .``)."""

from pathlib import Path

from setuptools import find_packages, setup

HERE = Path(__file__).parent

setup(
    name="scholarly-nlp",
    version="0.1.2",
    description="Scientific papers as spaCy Docs: GROBID/PDF ingestion, figures, citances, sections, pluggable components.",
    long_description=(HERE / "README.md").read_text(encoding="utf-8") if (HERE / "README.md").exists() else "",
    long_description_content_type="text/markdown",
    license="MIT",
    python_requires=">=3.11",
    packages=find_packages(include=["scholarly_nlp", "scholarly_nlp.*"]),
    package_data={"scholarly_nlp": ["schema/*.json"]},
    install_requires=[
        "spacy>=3.8.18,<3.9",
        "thinc>=8.3.14,<8.4",
        "spacy-transformers>=1.4.0,<1.5",
        "transformers>=4.53.2,<4.53.3",
        "torch==2.13.0",
        "pluggy>=1.6,<2",
        "lxml>=6.1,<7",
        "pypdfium2>=5.15,<6",
        "pdfplumber>=0.11.10,<0.12",
        # the PDF reader reads font encodings with pdfminer's object parser
        "pdfminer.six>=20260107,<20270000",
        "Pillow>=13,<14",
        "numpy>=2.4,<3",
        "click>=8.4,<9",
        "grobid-client-python>=0.2.1,<0.3",
        "requests>=2.34,<3",
        "weasel>=1.0.1,<2",
        "bm25s>=0.3.16,<0.4",
        # LoRA adapters: fine-tuned encoders ship as adapters over the installed backbone
        "peft>=0.17.1,<0.18",
        "accelerate>=1.15,<2",
    ],
    extras_require={"test": ["pytest>=8.4,<10", "pypdf>=7.1,<8", "jsonschema>=4.26,<5"]},
    entry_points={
        "console_scripts": ["scholarly-nlp = scholarly_nlp.cli:main"],
        "scholarly_nlp": ["builtin = scholarly_nlp.builtin_plugin"],
        # spaCy imports every spacy_factories entry point when it builds a Language: this is
        # the bridge that loads the pluggy plugins (see scholarly_nlp/spacy_bridge.py).
        "spacy_factories": ["scholarly_nlp = scholarly_nlp.spacy_bridge:PLUGINS_LOADED"],
        "spacy_architectures": [
            "scholarly_nlp.CrossEncoder.v1 = scholarly_nlp.ml.cross_encoder:CrossEncoder",
            "scholarly_nlp.BiEncoderScorer.v1 = scholarly_nlp.ml.bi_encoder_scorer:BiEncoderScorer",
            "scholarly_nlp.BoostedTrees.v1 = scholarly_nlp.ml.boosted_trees:BoostedTrees",
            "scholarly_nlp.LogisticRegression.v1 = scholarly_nlp.ml.logistic:LogisticRegression",
            "scholarly_nlp.TransformerModel.v1 = scholarly_nlp.ml.abstract_spans:create_transformer_model",
        ],
        "spacy_span_getters": [
            "scholarly_nlp.title_abstract_spans.v1 = scholarly_nlp.ml.abstract_spans:configure_title_abstract_spans",
        ],
        "spacy_readers": [
            "scholarly_nlp.PaperCorpus.v1 = scholarly_nlp.training:create_paper_corpus",
            "scholarly_nlp.CSAbstructCorpus.v1 = scholarly_nlp.readers.corpora:create_csabstruct_corpus",
            "scholarly_nlp.CLSciSummCorpus.v1 = scholarly_nlp.readers.corpora:create_clscisumm_corpus",
            "scholarly_nlp.PaperFiles.v1 = scholarly_nlp.readers.corpora:create_paper_files_corpus",
        ],
    },
)
